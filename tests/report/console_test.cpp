// The text of the command line, read without running it: the perf
// table and CSV, the progress line, fuzz and check summaries, repro assembly.
#include <doctest/doctest.h>

#include <string>

#include "loader/scenario.hpp"
#include "report/console.hpp"
#include "runner/repro.hpp"

namespace {

auto perf_scenario() -> loader::Scenario {
    return loader::parse_scenario(R"({"name": "inline/perf", "model": "btrfs",
      "device": {"block_size": 4096, "blocks": 4096, "profile": "ssd"},
      "workload": {"fio": {"jobs": 1, "rw": "randwrite", "bs": 4096, "size": 65536, "fsync": 1}},
      "checkers": ["fsync_durability"],
      "perf": {"metric": "throughput", "ratios": [{"numerator": "b", "denominator": "a", "min": 0,
                                                   "max": 10}]},
      "variants": [{"name": "a", "expect": "measure"}, {"name": "b", "expect": "measure"}]})",
                                     "inline.json");
}

auto row(const std::string& variant, double mib_s) -> runner::PerfRow {
    runner::PerfRow row;
    row.variant = variant;
    row.outcome.elapsed_ns = 1'500'000'000;
    row.outcome.writes = 10;
    row.outcome.fsyncs = 5;
    row.throughput_mib_s = mib_s;
    row.writes_per_s = 6.666;
    row.fsyncs_per_s = 3.333;
    row.fsync_p50_ms = 1.25;
    row.fsync_p99_ms = 2.5;
    row.fsync_max_ms = 3;
    return row;
}

}  // namespace

TEST_CASE("perf_table: the table, its CSV and the ratio verdicts of a small report") {
    const loader::Scenario scenario = perf_scenario();
    runner::PerfReport report;
    report.rows = {row("a", 1.5), row("b", 3)};
    runner::PerfRatioResult ratio;
    ratio.ratio = scenario.perf->ratios.front();
    ratio.value = 2;
    ratio.met = true;
    report.ratios = {ratio};
    const report::PerfTable table = report::perf_table(scenario, report);
    CHECK(table.table ==
          "variant             MiB/s   writes/s   fsyncs/s    p50 ms    p99 ms    max ms  virtual s\n"
          "a                    1.50          7          3     1.250     2.500     3.000      1.500\n"
          "b                    3.00          7          3     1.250     2.500     3.000      1.500\n");
    CHECK(table.csv ==
          "variant,mib_s,writes_s,fsyncs_s,fsync_p50_ms,fsync_p99_ms,fsync_max_ms,virtual_s\n"
          "a,1.5000,6.67,3.33,1.2500,2.5000,3.0000,1.500000\n"
          "b,3.0000,6.67,3.33,1.2500,2.5000,3.0000,1.500000\n");
    CHECK(table.ratios == "ratio b / a (throughput): 2.00, expected 0.00..10.00: ok\n");
    CHECK(table.operations == 30);
    CHECK(table.met);
    report.ratios.front().met = false;
    const report::PerfTable failed = report::perf_table(scenario, report);
    CHECK_FALSE(failed.met);
    CHECK(failed.ratios.find("OUT OF RANGE") != std::string::npos);
}

TEST_CASE("perf_table: a sweep starts each row and CSV line with the swept value") {
    const loader::Scenario scenario = perf_scenario();
    runner::PerfReport report;
    report.parameter = "jobs";
    report.rows = {row("a", 1)};
    report.rows.front().point = 4;
    const report::PerfTable table = report::perf_table(scenario, report);
    CHECK(table.table.rfind("    jobs variant", 0) == 0);
    CHECK(table.table.find("\n       4 a ") != std::string::npos);
    CHECK(table.csv.rfind("jobs,variant,", 0) == 0);
    CHECK(table.csv.find("\n4,a,1.0000,") != std::string::npos);
}

TEST_CASE("progress_text: rate and time left from the schedules run so far") {
    runner::FuzzProgress progress{100, 300, 1234, 2};
    CHECK(report::progress_text(progress, 2.0) ==
          "  100 schedules, 50/s, 1234 crash states, 2 violations, 2.0 s elapsed, ~4 s left   ");
    progress.schedules = 300;
    CHECK(report::progress_text(progress, 3.0).find("~0 s left") != std::string::npos);
}

TEST_CASE("fuzz_header and fuzz_summary: the lines a campaign ends with") {
    runner::FuzzRequest request;
    REQUIRE(sim::parse_strategy("random", request.strategy));
    request.seed = 7;
    request.jobs = 2;
    CHECK(report::fuzz_header("s", "v", request) ==
          "crashsim fuzz s: variant v, strategy random, seed 7, 2 jobs\n");
    runner::FuzzReport report;
    report.schedules = 10;
    report.crash_states = 40;
    report.steps = 100;
    report.bounds = {1, 0};
    const std::string text = report::fuzz_summary(report, request, 2.0);
    CHECK(text.rfind("schedules: 10, crash states checked: 40, steps: 100, 2.000 s, 5 schedules/s, "
                     "20 crash states/s\n", 0) == 0);
    CHECK(text.find("\nno violation in 10 schedules\n") != std::string::npos);
    report.interrupted = true;
    CHECK(report::fuzz_summary(report, request, 2.0).find("interrupted: explored 10 schedules") !=
          std::string::npos);
}

TEST_CASE("check_row_text: a failed row says why under it") {
    runner::CheckRow row;
    row.scenario = "s";
    row.variant = "v";
    row.expectation = "holds";
    row.met = false;
    row.detail = "why";
    row.schedules = 3;
    row.crash_states = 9;
    row.seconds = 0.5;
    const report::CheckTable table({});
    const std::string text = report::check_row_text(table, row);
    CHECK(text.find("FAILED") != std::string::npos);
    CHECK(text.find("      3             9    0.50 s\n    why\n") != std::string::npos);
    CHECK(report::check_header(table).rfind("scenario", 0) == 0);
}

TEST_CASE("list_text names every model, checker and device profile") {
    const std::string text = report::list_text();
    CHECK(text.rfind("models:\n  btrfs: ", 0) == 0);
    CHECK(text.find("\n  xfs: ") != std::string::npos);
    CHECK(text.find("\nchecker") != std::string::npos);
    CHECK(text.find("\ndevice profiles:\n") != std::string::npos);
}

TEST_CASE("make_repro and the file names: a campaign's failing schedule as a repro") {
    runner::FuzzRequest request;
    REQUIRE(sim::parse_strategy("pct:3", request.strategy));
    request.seed = 42;
    runner::FuzzReport report;
    report.found = true;
    report.index = 17;
    report.schedule_seed = 99;
    report.bounds = {2, 1};
    report.failing.choices = {1, 0, 2};
    report.failing.crash = runner::CrashRecord{12, "app returned", {true, false}};
    report.failing.violations.push_back({"fsync_durability", "", 0, "", "", "lost"});
    report.failing.trace_hash = 0xabc;
    const runner::Repro repro = runner::make_repro(report, request, "a/b.json", "{}", "fix");
    CHECK(repro.scenario_path == "a/b.json");
    CHECK(repro.scenario_text == "{}");
    CHECK(repro.variant == "fix");
    CHECK(repro.strategy == "pct:3");
    CHECK(repro.seed == 42);
    CHECK(repro.schedule_index == 17);
    CHECK(repro.schedule_seed == 99);
    CHECK(repro.choices == std::vector<std::uint32_t>{1, 0, 2});
    CHECK(repro.bounds.io_reorders == 2);
    CHECK(repro.bounds.daemon_wakeups == 1);
    REQUIRE(repro.crash.has_value());
    CHECK(repro.crash->step == 12);
    CHECK(repro.crash->keep == std::vector<bool>{true, false});
    CHECK(repro.checker == "fsync_durability");
    CHECK(repro.message == "lost");
    CHECK(repro.trace_hash == 0xabc);
    CHECK(runner::repro_file_name("btrfs/x y", "v", "pct:3", 42, 17) ==
          "repro-btrfs_x_y-v-pct_3-seed42-schedule17.json");
    // One name per failing schedule: shards sharing --out never overwrite each other.
    CHECK(runner::repro_file_name("s", "v", "random", 42, 0) !=
          runner::repro_file_name("s", "v", "random", 42, 1));
    // A dfs shard counts schedules within a unit: two shards' first failing
    // schedules (index 0 of units 3 and 4) get two names.
    CHECK(runner::repro_file_name("s", "v", "dfs:1", 0, 0, 3) ==
          "repro-s-v-dfs_1-seed0-unit3-schedule0.json");
    CHECK(runner::repro_file_name("s", "v", "dfs:1", 0, 0, 3) !=
          runner::repro_file_name("s", "v", "dfs:1", 0, 0, 4));
    request.shard_index = 1;
    request.shard_count = 3;
    CHECK(runner::result_file_name("s", "v", request) == "result-s-v-pct_3-seed42-shard1of3.json");
}
