// The checksum tree as leaves with their own locks, machine.scale,
// the device's figures in the scenario, perf --vary and the seed's figures
// beside the model's ("btrfs: fix race between page release and a fast fsync", patch 3/3).
// Paths are relative to the source root.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <algorithm>
#include <string>
#include <vector>

#include "model/btrfs/btrfs.hpp"
#include "report/perf.hpp"
#include "report/plot.hpp"
#include "loader/scenario.hpp"
#include "tests/support.hpp"

namespace {

auto error_of(const std::function<void()>& action) -> std::string {
    return test_support::input_error_of(action);
}

// Four jobs of 64 KiB sequential writes, fsynced, through an 8 MiB page cache.
auto pressure(const std::string& machine = R"("cpus": 8, "page_cache": 8388608, "reclaim_batch": 1048576)",
              const std::string& extra = "", const std::string& size = "18874368") -> std::string {
    return R"({"name": "inline/vary", "model": "btrfs",
      "device": {"block_size": 4096, "blocks": 200000, "profile": "vm-nvme"},
      "machine": {)" + machine + R"(},
      "workload": {"fio": {"jobs": 4, "rw": "write", "bs": 65536, "size": )" + size + R"(, "fsync": 1}},
      "checkers": ["fsync_durability"],)" + extra + R"(
      "perf": {"metric": "throughput", "ratios": [{"numerator": "after", "denominator": "before", "min": 1,
                                                   "max": 100}]},
      "variants": [{"name": "before", "config": {"release_extent_maps": "before-fix"}, "expect": "measure"},
                   {"name": "after", "config": {"release_extent_maps": "fix-3"}, "expect": "measure"}]})";
}

auto write_temp(const std::string& name, const std::string& text) -> std::string {
    const std::string path = "build/" + name;
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST_CASE("checksum tree: a 16 KiB leaf holds 182 items of one 64 KiB extent's sums, then splits") {
    model::btrfs::CsumTree tree(16384, "csum_root.lock");
    CHECK(tree.leaf_data_bytes == 16283);
    CHECK(tree.node_fanout == 493);
    // Extents with a gap between them never extend each other's item.
    for (std::uint64_t i = 0; i < 182; i++) tree.insert(i * 32, 16);
    CHECK(tree.leaves.size() == 1);
    CHECK(tree.leaves[0]->items.size() == 182);
    CHECK(tree.leaves[0]->used == 182 * (25 + 16 * 4));
    // The 183rd, past the last item: a new leaf starts at its key.
    tree.insert(182 * 32, 16);
    REQUIRE(tree.leaves.size() == 2);
    CHECK(tree.leaves[1]->first == 182 * 32);
    CHECK(tree.leaf_index(182 * 32 - 1) == 0);
    CHECK(tree.leaf_index(182 * 32) == 1);
    CHECK(tree.node_levels() == 1);
    // Inside a full leaf: it splits in half.
    tree.insert(5 * 32 + 20, 16);
    CHECK(tree.leaves.size() == 3);
    CHECK(tree.leaves[0]->items.size() + tree.leaves[1]->items.size() == 183);
}

TEST_CASE("checksum tree: contiguous sums extend one item up to MAX_CSUM_ITEMS") {
    model::btrfs::CsumTree tree(16384, "csum_root.lock");
    for (std::uint64_t i = 0; i < 300; i++) tree.insert(i * 16, 16);
    // (16283 - 2 * 25) / 4 - 1 = 4057 sums in one item at most.
    REQUIRE(!tree.leaves[0]->items.empty());
    CHECK(tree.leaves[0]->items.begin()->second == 4048);  // 253 extents of 16; the next would pass 4057
    CHECK(tree.leaves.size() == 2);
    // A 4 KiB nodesize holds a quarter as much per leaf.
    model::btrfs::CsumTree small(4096, "csum_root.lock");
    CHECK(small.leaf_data_bytes == 3995);
    CHECK(small.node_fanout == 121);
    for (std::uint64_t i = 0; i < 45; i++) small.insert(i * 32, 16);
    CHECK(small.leaves.size() == 2);  // 44 items of 89 bytes fit
}

TEST_CASE("checksum tree: a workload's inserts build leaves of the derived size; full fsyncs look them up") {
    const auto scenario = loader::parse_scenario(pressure(), "inline.json");
    const auto report = runner::measure(scenario);
    for (const auto& row : report.rows) {
        // 72 MiB of 64 KiB extents: 11.4 MiB per full leaf of one item per
        // extent, up to 15.9 MiB where they complete in disk order and extend
        // one item; leaves split inside are half full. The counter is what the
        // run added to the set-up's tree, which starts with one (empty) leaf:
        // 72 / 15.9 needs 5 leaves, 4 added.
        CHECK(row.outcome.counters.at("checksum_leaves") >= 4);
        CHECK(row.outcome.counters.at("checksum_leaves") <= 13);
    }
    CHECK(report.rows[0].outcome.counters.at("checksum_lookups") >
          4 * report.rows[1].outcome.counters.at("checksum_lookups"));
    // Lookups, inserts and log inserts meet at leaves: some find one locked.
    CHECK(report.rows[0].outcome.counters.at("checksum_leaf_waits") > 0);
    CHECK(report.rows[0].outcome.counters.at("log_tree_lock_waits") > 0);
}

TEST_CASE("machine.scale: memory and fio sizes are divided, kswapd's pass stays the memory's 0.1 %") {
    const auto scenario = loader::parse_scenario(
        pressure(R"("scale": 32, "cpus": 8, "page_cache": 268435456)", "", "603979776"), "inline.json");
    CHECK(scenario.machine.scale == 32);
    CHECK(scenario.machine.page_cache_bytes == 8388608);
    CHECK(scenario.fio->size == 18874368);
    CHECK(scenario.machine.reclaim_batch_bytes == 268435456 / 4096 / 1000 * 4096);
    const auto unscaled =
        loader::parse_scenario(pressure(R"("cpus": 8, "page_cache": 268435456)"), "inline.json");
    CHECK(unscaled.machine.reclaim_batch_bytes == scenario.machine.reclaim_batch_bytes);
    CHECK(error_of([] {
              loader::parse_scenario(pressure(R"("scale": 32, "page_cache": 268435456)", "", "18874401"),
                                     "x.json");
          }) == "x.json: $.workload.fio.size: expected a multiple of machine.scale (32), got 18874401");
    CHECK(error_of([] {
              loader::parse_scenario(pressure(R"("scale": 0, "page_cache": 268435456)"), "x.json");
          }) == "x.json: $.machine.scale: expected an unsigned integer from 1 to 1024, got 0");
    CHECK(error_of([] {
              loader::parse_scenario(pressure(R"("scale": 3, "page_cache": 268435456)"), "x.json");
          }) == "x.json: $.machine.page_cache: expected a multiple of machine.scale (3), got 268435456");
}

TEST_CASE("release-full-sync-cost: states the seed's sizes and scales them by 1/32") {
    const auto scenario = loader::load_scenario("scenarios/btrfs/release-full-sync-cost.json");
    CHECK(scenario.machine.scale == 32);
    CHECK(scenario.machine.page_cache_bytes == 512ull << 20);
    CHECK(scenario.machine.reclaim_batch_bytes ==
          (16ull << 30) / 4096 / 1000 * 4096);  // 0.1 % of the seed's 16 GiB, not scaled
    CHECK(scenario.sweep_points.front().fio->size == 1ull << 30);
    REQUIRE(scenario.perf);
    CHECK(scenario.perf->seed_source.starts_with("btrfs: do not set the full sync flag on the inode"));
    REQUIRE(scenario.perf->seed_points.size() == 7);
    CHECK(scenario.perf->seed_points[3].point == std::optional<std::uint64_t>{8});
    CHECK(scenario.perf->seed_points[3].values.at("before") == doctest::Approx(76.1));
    CHECK(scenario.perf->seed_points[3].values.at("after") == doctest::Approx(133));
}

TEST_CASE("device: a scenario's own latencies and bandwidth override the profile's") {
    const std::string text = pressure(R"("cpus": 8, "page_cache": 8388608)");
    std::string fast = text;
    const std::string profile = R"("profile": "vm-nvme")";
    fast.replace(fast.find(profile), profile.size(),
                 R"("profile": "vm-nvme", "write_latency_us": 30, "flush_latency_us": 60, "bandwidth": 0)");
    const auto scenario = loader::parse_scenario(fast, "inline.json");
    CHECK(scenario.device.write_latency_ns == std::optional<std::uint64_t>{30000});
    CHECK(scenario.device.flush_latency_ns == std::optional<std::uint64_t>{60000});
    CHECK(scenario.device.bandwidth == std::optional<std::uint64_t>{0});
    const auto slow = runner::measure(loader::parse_scenario(text, "inline.json"));
    const auto quick = runner::measure(scenario);
    CHECK(quick.rows[1].throughput_mib_s > 2 * slow.rows[1].throughput_mib_s);
    std::string bad = text;
    bad.replace(bad.find(profile), profile.size(), R"("profile": "vm-nvme", "write_latency_us": 0)");
    CHECK(error_of([&] { loader::parse_scenario(bad, "x.json"); }) ==
          "x.json: $.device.write_latency_us: expected an unsigned integer from 1 to 1000000, got 0");
}

TEST_CASE("perf.seed: the seed's figures are loaded with their source and drawn beside the model's") {
    const std::string sweep = R"(
      "sweep": {"parameter": "jobs", "points": [{"jobs": 1, "size": 37748736}, {"jobs": 2}]},)";
    std::string text = pressure("\"cpus\": 8, \"page_cache\": 8388608", sweep);
    const std::string seed =
        R"("seed": {"source": "seeds/x.txt", "points": [{"jobs": 1, "before": 29.1, "after": 29.3}, )"
        R"({"jobs": 2, "after": 39.9}]}, )";
    text.insert(text.find(R"("metric")"), seed);
    const auto scenario = loader::parse_scenario(text, "inline.json");
    REQUIRE(scenario.perf);
    CHECK(scenario.perf->seed_source == "seeds/x.txt");
    REQUIRE(scenario.perf->seed_points.size() == 2);
    runner::PerfReport report;
    report.parameter = "jobs";
    CHECK(report::plot_seed_data(scenario, report) ==
          "# jobs before after (seed: seeds/x.txt)\n1 29.1000 29.3000\n2 ? 39.9000\n");
    const std::string script = report::plot_script(scenario, report, "d.txt", "out.svg", "seed.txt");
    CHECK(script.find("\"seed.txt\" using 1:2 with linespoints dashtype 2 pointtype 6 linecolor 1 title "
                      "\"before (seed)\"") != std::string::npos);
    CHECK(script.find("\"seed.txt\" using 1:3 with linespoints dashtype 2 pointtype 6 linecolor 2 title "
                      "\"after (seed)\"") != std::string::npos);
    CHECK(script.find("set datafile missing \"?\"") != std::string::npos);
    // Without declared figures there is nothing to draw.
    const auto plain =
        loader::parse_scenario(pressure("\"cpus\": 8, \"page_cache\": 8388608", sweep), "inline.json");
    CHECK(report::plot_seed_data(plain, report).empty());
    CHECK(report::plot_script(plain, report, "d.txt", "out.svg").find("(seed)") == std::string::npos);

    const auto bad = [&](const std::string& replacement) {
        std::string broken = text;
        broken.replace(broken.find(seed), seed.size(), replacement);
        return error_of([&] { loader::parse_scenario(broken, "x.json"); });
    };
    CHECK(bad(R"("seed": {"source": "", "points": [{"jobs": 1, "after": 1}]}, )") ==
          "x.json: $.perf.seed.source: expected a non-empty string, got \"\"");
    CHECK(bad(R"("seed": {"source": "s", "points": [{"jobs": 4, "after": 1}]}, )") ==
          "x.json: $.perf.seed.points[0].jobs: expected one of the sweep's values of jobs, got 4");
    CHECK(bad(R"("seed": {"source": "s", "points": [{"jobs": 1, "later": 1}]}, )") ==
          "x.json: $.perf.seed.points[0].later: expected one of the keys jobs, before, after, got an unknown "
          "key");
    CHECK(bad(R"("seed": {"source": "s", "points": [{"after": 1}]}, )") ==
          "x.json: $.perf.seed.points[0].jobs: expected a required key, got nothing");
    CHECK(bad(R"("seed": {"source": "s", "points": [{"jobs": 1, "after": 0}]}, )") ==
          "x.json: $.perf.seed.points[0].after: expected a positive number, got 0");
    CHECK(bad(R"("seed": {"source": "s", "points": []}, )") ==
          "x.json: $.perf.seed.points: expected a non-empty array, got an empty array");
}

TEST_CASE("perf --vary: one run per value, each ratio per row, bad specs named") {
    const std::string path = write_temp("vary_test.json", pressure());
    const auto report = runner::measure_vary(path, "cpus=2,8");
    CHECK(report.json_path == "$.machine.cpus");
    REQUIRE(report.reports.size() == 2);
    // Two CPUs for four jobs and their completions cost throughput.
    CHECK(report.reports[0].rows[1].throughput_mib_s < report.reports[1].rows[1].throughput_mib_s);
    const std::string table = report::format_vary(report);
    CHECK(table.find("--vary cpus ($.machine.cpus), throughput ratios:\n") != std::string::npos);
    CHECK(table.find("after/before  verdict\n") != std::string::npos);
    CHECK(std::count(table.begin(), table.end(), '\n') == 4);
    // A knob: nodesize sets the checksum tree's leaves.
    const auto nodes = runner::measure_vary(path, "nodesize=4096,65536");
    CHECK(nodes.reports[0].rows[0].outcome.counters.at("checksum_leaves") >
          4 * nodes.reports[1].rows[0].outcome.counters.at("checksum_leaves"));

    const auto error = [&](const std::string& spec) {
        return error_of([&] { runner::measure_vary(path, spec); });
    };
    CHECK(error("cpus") ==
          "--vary: expected NAME=V1,V2,... (one parameter, its values separated by commas), got \"cpus\"");
    CHECK(error("cpus=1,,2") == "--vary: expected a value between every two commas, got \"cpus=1,,2\"");
    CHECK(error("cpus=2,2") == "--vary: expected values that differ, got \"2\" twice");
    CHECK(error("cpus=two") == "--vary: expected an unsigned integer for cpus, got \"two\"");
    CHECK(error("cpus=0") ==
          path + ": $.machine.cpus: expected an unsigned integer from 1 to 1024, got 0 (--vary cpus=0)");
    CHECK(error("nodesize=1000") == path +
                                        ": $.config.nodesize: expected one of 4096, 8192, 16384, 32768, "
                                        "65536, got \"1000\" (--vary nodesize=1000)");
    CHECK(error("release_extent_maps=fix-1") ==
          "--vary: expected a knob no variant sets (variant before sets release_extent_maps, so varying it "
          "would "
          "change nothing), got \"release_extent_maps\"");
    CHECK(error("colour=1")
              .rfind("--vary: expected a parameter name, one of reclaim_batch, page_cache, cpus,", 0) == 0);
    std::remove(path.c_str());
}

TEST_CASE("perf --points: keeps only those sweep points, their ratios and seed figures") {
    auto scenario = loader::load_scenario("scenarios/btrfs/release-full-sync-cost.json");
    runner::keep_points(scenario, "64,1");
    CHECK(scenario.sweep_values == std::vector<std::uint64_t>{1, 64});
    REQUIRE(scenario.sweep_points.size() == 2);
    CHECK(scenario.sweep_points[1].fio->jobs == 64);
    REQUIRE(scenario.perf);
    CHECK(scenario.perf->ratios.size() == 2);
    CHECK(scenario.perf->seed_points.size() == 2);
    auto again = loader::load_scenario("scenarios/btrfs/release-full-sync-cost.json");
    CHECK(error_of([&] { runner::keep_points(again, "3"); }) ==
          "--points: expected one of the sweep's values of jobs (1, 2, 4, 8, 16, 32, 64), got 3");
    CHECK(error_of([&] { runner::keep_points(again, "1,x"); }) ==
          "--points: expected values of jobs separated by commas, got \"1,x\"");
    auto flat = loader::parse_scenario(pressure(), "flat.json");
    CHECK(error_of([&] { runner::keep_points(flat, "1"); }) ==
          "--points: expected a scenario with a sweep, got flat.json without one");
}
