// The device's fault model: torn writes at sector granularity,
// a write cache that lies about FLUSH, and what the checksums of btrfs and
// xfs make of them, on the bundled scenarios in scenarios/faults/.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/model/world.hpp"
#include "tests/support.hpp"
#include "loader/scenario.hpp"
#include "model/disk/block_device.hpp"
#include "report/report.hpp"
#include "runner/campaign.hpp"
#include "runner/runner.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "tests/model/disk/device_support.hpp"

namespace {

using model::disk::BlockDevice;
using model::disk::Content;
using model::disk::TornWrite;

using test_support::nvme;
using test_support::run_on;

auto random_spec() -> sim::StrategySpec {
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy("random", spec));
    return spec;
}

/// The first `seeds` random schedules of a bundled scenario's first variant.
struct Campaign {
    std::uint64_t violations = 0, injected = 0, detected = 0, survived = 0;
    std::string stories;  // every violating or fault-detecting story
    std::vector<runner::RunOutcome> violating;
};

auto campaign(const char* path, std::uint64_t seeds) -> Campaign {
    const loader::Scenario scenario = loader::load_scenario(path);
    runner::Simulation simulation(scenario, scenario.variants.front());
    Campaign result;
    for (std::uint64_t seed = 0; seed < seeds; seed++) {
        runner::RunOutcome outcome = simulation.run_strategy(random_spec(), seed, true);
        result.injected += outcome.faults.injected;
        result.detected += outcome.faults.detected;
        result.survived += outcome.faults.survived;
        if (outcome.violated()) {
            result.violations++;
            result.stories += outcome.trace;
            result.violating.push_back(std::move(outcome));
        }
    }
    return result;
}

}  // namespace

TEST_CASE("faults: a torn write keeps its first sectors and is told by block and sector") {
    BlockDevice device{64, nvme()};
    device.set_faults({1, true, false});
    run_on(device, [](BlockDevice& d) { d.write_and_wait(8, 2, Content::meta(5), false, "meta"); });
    REQUIRE(device.pending().size() == 1);
    CHECK(device.tear_points(0) == 15);  // 16 sectors, torn after 1..15 of them
    const std::vector<bool> lost{false};
    const model::disk::Image image = device.crash_image(lost, {TornWrite{0, 12}});
    CHECK(image.read(8) == Content::meta(5));  // the first block whole
    const Content torn = image.read(9);
    CHECK(torn.torn());
    CHECK(torn.sectors == 4);
    CHECK(image.read(10) == Content::stale(10));
    CHECK(device.describe_tear(TornWrite{0, 12}) ==
          "torn write of block 9: sectors 0-3 new, 4-7 old (meta, in the cache, block 2 of 2)");
    CHECK(torn.describe({}, 4096) == "sectors 0-3 of metadata object #5, 4-7 old (a torn write)");
}

TEST_CASE("faults: off, nothing tears; a data write over data never tears (no promise to survive it)") {
    BlockDevice device{64, nvme()};
    run_on(device, [](BlockDevice& d) { d.write_and_wait(8, 1, Content::meta(5), false, "meta"); });
    CHECK(device.tear_points(0) == 0);
    device.set_faults({1, true, false});
    CHECK(device.tear_points(0) == 7);
    device.format(20, 1, Content::data(0, 0, 1));
    run_on(device, [](BlockDevice& d) {
        d.write_and_wait(20, 1, Content::data(0, 0, 2), false, "data");
        d.write_and_wait(30, 1, Content::data(0, 1, 2), false, "data");
    });
    REQUIRE(device.pending().size() == 3);
    CHECK(device.tear_points(1) == 0);  // over block 20's data: an overwrite in place
    CHECK(device.tear_points(2) == 7);  // a fresh block
    // One sector per block: nothing to tear.
    BlockDevice small{64, nvme(), 512};
    small.set_faults({1, true, false});
    run_on(small, [](BlockDevice& d) { d.write_and_wait(3, 1, Content::meta(1), false, "meta"); });
    CHECK(small.tear_points(0) == 0);
}

TEST_CASE("faults: a lying cache acknowledges FLUSH and keeps the writes volatile") {
    BlockDevice honest{64, nvme()};
    BlockDevice liar{64, nvme()};
    liar.set_faults({0, false, true});
    for (BlockDevice* device : {&honest, &liar}) {
        run_on(*device, [](BlockDevice& d) {
            d.write_and_wait(8, 1, Content::data(0, 0, 1), false, "data");
            d.flush_and_wait();
        });
    }
    CHECK(honest.pending().empty());
    REQUIRE(liar.pending().size() == 1);
    const std::vector<bool> lost{false};
    CHECK(liar.crash_image(lost).read(8) == Content::stale(8));
    const std::vector<std::string> lies = liar.lies_exposed(lost, {});
    REQUIRE(lies.size() == 1);
    CHECK(lies.front() == "FLUSH #1 was acknowledged, yet data@8 that it covered was lost at the power cut");
    CHECK(liar.lies_exposed({true}, {}).empty());
}

TEST_CASE("faults scenario: a torn btrfs superblock write is detected, never silently wrong") {
    const Campaign result = campaign("scenarios/faults/btrfs-torn-superblock.json", 60);
    CHECK(result.violations == 0);
    CHECK(result.injected > 0);
    CHECK(result.detected > 0);
    CHECK(result.survived > 0);
    CHECK(result.injected >= result.detected + result.survived);
}

TEST_CASE("faults scenario: a torn xfs data write after fsync is survived") {
    const Campaign result = campaign("scenarios/faults/xfs-torn-data-after-fsync.json", 60);
    CHECK(result.violations == 0);
    CHECK(result.injected > 0);
    CHECK(result.survived > 0);
}

TEST_CASE("faults scenario: a lying cache breaks fsync_durability, and the device is blamed") {
    const Campaign result = campaign("scenarios/faults/xfs-lying-cache.json", 40);
    REQUIRE(result.violations > 0);
    for (const auto& outcome : result.violating) {
        CHECK(outcome.violations.front().checker == "fsync_durability");
        CHECK(outcome.violations.front().message.find("the device lied, not the file system: FLUSH #") !=
              std::string::npos);
    }
    CHECK(result.stories.find("the write cache lied: FLUSH #") != std::string::npos);
}

TEST_CASE("faults: a crash with a torn write replays byte for byte") {
    // Torn writes and a lying cache together: a violation whose crash tore
    // a write; its replay from the recorded choices, keep list and tears.
    loader::Scenario scenario = loader::load_scenario("scenarios/faults/btrfs-torn-superblock.json");
    scenario.device.lying_cache = true;
    runner::Simulation simulation(scenario, scenario.variants.front());
    bool replayed = false;
    for (std::uint64_t seed = 0; seed < 400 && !replayed; seed++) {
        const runner::RunOutcome outcome = simulation.run_strategy(random_spec(), seed, true);
        if (!outcome.violated() || !outcome.crash || outcome.crash->torn.empty()) continue;
        const runner::RunOutcome again = simulation.replay(outcome.choices, outcome.crash, true);
        CHECK(again.trace_hash == outcome.trace_hash);
        CHECK(again.trace.find("torn write of block") != std::string::npos);
        // A tear the fault model could not have made diverges, with the field named.
        runner::CrashRecord edited = *outcome.crash;
        edited.torn.front().sectors = 1000;
        CHECK_THROWS_AS(simulation.replay(outcome.choices, edited, false), sim::ReplayDiverged);
        replayed = true;
    }
    CHECK(replayed);
}

namespace {

/// The image a crash keeping everything leaves, with block `block` torn
/// after `sectors` sectors (what the fault model's crash_image writes).
auto torn_image(const model::FileSystem& fs, std::uint64_t block, std::uint16_t sectors)
    -> model::disk::Image {
    const auto& device = const_cast<model::FileSystem&>(fs).device();
    sim::RangeMap<model::disk::DurableBlock> blocks =
        device.crash_image(std::vector<bool>(device.pending().size(), true)).blocks();
    model::disk::DurableBlock torn = *blocks.find(block);
    torn.content.sectors = sectors;
    blocks.assign(block, block + 1, torn);
    return model::disk::Image(std::move(blocks));
}

/// The newest metadata block other than block 0 (the last log write).
auto newest_meta_block(const model::FileSystem& fs) -> std::uint64_t {
    const auto& device = const_cast<model::FileSystem&>(fs).device();
    const model::disk::Image image = device.crash_image(std::vector<bool>(device.pending().size(), true));
    std::uint64_t newest = 0, at = 0;
    image.blocks().for_each(
        [&](std::uint64_t start, std::uint64_t end, const model::disk::DurableBlock& block) {
            if (block.content.kind != model::disk::ContentKind::meta || start == 0 || end - start != 1)
                return;
            if (block.sequence > newest) newest = block.sequence, at = start;
        });
    REQUIRE(at != 0);
    return at;
}


}  // namespace

TEST_CASE(
    "faults model: a torn btrfs superblock fails btrfs_check_super_csum; a torn root its tree checksum") {
    test_support::ModelWorld world("btrfs", {{"release_extent_maps", "fix-3"}},
                                   model::Geometry{4096, 4096, "nvme"}, {"I"});
    world.run({test_support::op_call(world, "create", 0),
               test_support::op_call(world, "write", 0, 0, 4096, 1),
               test_support::op_call(world, "fsync", 0)});
    const model::RecoveredState whole = world.crash(true);
    REQUIRE(whole.mounted);
    const model::RecoveredState super = world.fs->recover(torn_image(*world.fs, 0, 3));
    CHECK_FALSE(super.mounted);
    CHECK(super.mount_error.find(
              "superblock checksum mismatch at block 0 (open_ctree: btrfs_check_super_csum)") == 0);
    CHECK(super.checksum_failed == std::vector<std::uint64_t>{0});
    CHECK(super.consistency_errors.empty());  // an error the user sees, not a broken invariant
    const std::uint64_t log = newest_meta_block(*world.fs);
    const model::RecoveredState root = world.fs->recover(torn_image(*world.fs, log, 5));
    CHECK_FALSE(root.mounted);
    CHECK(root.mount_error.find("checksum verify failed") != std::string::npos);
    CHECK(root.checksum_failed == std::vector<std::uint64_t>{log});
}

TEST_CASE("faults model: a torn xfs log record at the head fails its CRC and recovery stops before it") {
    test_support::ModelWorld world("xfs", {{"delalloc_convert", "unwritten"}},
                                   model::Geometry{4096, 1024, "nvme"}, {"I"});
    world.run({test_support::op_call(world, "create", 0),
               test_support::op_call(world, "write", 0, 0, 4096, 1),
               test_support::op_call(world, "fsync", 0)});
    const std::uint64_t record = newest_meta_block(*world.fs);
    const model::RecoveredState state = world.fs->recover(torn_image(*world.fs, record, 2));
    CHECK(state.mounted);
    CHECK(state.checksum_failed == std::vector<std::uint64_t>{record});
    CHECK(test_support::has_note(
        state, "fails its CRC (xlog_cksum in xlog_recover_process): a torn write at the head"));
    // The record lost was the fsync's: what it logged is gone, nothing is wrong.
    CHECK(state.consistency_errors.empty());
    const model::RecoveredState home = world.fs->recover(torn_image(*world.fs, 0, 1));
    CHECK_FALSE(home.mounted);
    CHECK(home.mount_error.find("(xfs_sb_read_verify)") != std::string::npos);
}

TEST_CASE("faults in check and merge: a row counts its faults, expect.faults judges them, shards add up") {
    const auto no_clock = [] { return 0.0; };
    loader::Scenario scenario = loader::load_scenario("scenarios/faults/xfs-torn-data-after-fsync.json");
    loader::Variant variant = scenario.variants.front();
    REQUIRE(variant.expect.faults_survived);
    const runner::CheckRow row = runner::check_variant(scenario, variant, no_clock);
    REQUIRE(row.faults.has_value());
    CHECK(row.met);
    CHECK(row.faults->injected > 0);
    CHECK(row.faults->survived == row.faults->injected);  // xfs: data has no checksum to detect it
    // Asking that one be detected, on a scenario where none can be, fails the row and says why.
    variant.expect.faults_detected = true;
    const runner::CheckRow detected = runner::check_variant(scenario, variant, no_clock);
    CHECK_FALSE(detected.met);
    CHECK(detected.detail.starts_with("faults: none of the " + std::to_string(row.faults->injected) +
                                      " device faults injected in " + std::to_string(row.schedules) +
                                      " schedules was detected (expect.faults.detected) (at most 1 I/O"));
    // Two random shards' result files carry their counts; merge adds them.
    std::vector<runner::CampaignResult> results;
    runner::FaultCounts total;
    for (std::uint32_t shard = 0; shard < 2; shard++) {
        runner::Simulation simulation(scenario, variant);
        runner::FuzzRequest request;
        request.strategy = test_support::spec_of("random");
        request.schedules = 40;
        request.shard_index = shard;
        request.shard_count = 2;
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        total += report.faults;
        results.push_back(runner::campaign_result(report, request, scenario, 0, variant.name));
        REQUIRE(results.back().faults.has_value());
        const auto text = report::campaign_result_text(results.back());
        const auto again = report::parse_campaign_result(text, "result.json");
        REQUIRE(again.faults.has_value());
        CHECK(again.faults->survived == report.faults.survived);
    }
    const runner::CampaignResult merged = runner::merge_results(results, {"a.json", "b.json"});
    REQUIRE(merged.faults.has_value());
    CHECK(total.injected > 0);
    CHECK(merged.faults->injected == total.injected);
    CHECK(merged.faults->survived == total.survived);
    CHECK(merged.faults->detected == total.detected);
}
