// Progress and the step bound: a long workload whose operations
// keep completing is not a livelock; a run in which none completes for
// explore.progress_steps steps is a liveness violation with no crash record,
// which fuzz (random and dfs) reports, shrinks and writes as a repro that
// replays; a run cut by explore.steps is "not explored past step N", a bound
// and not a violation.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "loader/scenario.hpp"
#include "report/console.hpp"
#include "runner/campaign.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "runner/shrink.hpp"
#include "tests/support.hpp"

namespace {

using Json = nlohmann::ordered_json;

// The toy model of the tests: each pwrite goes to the device and waits.
auto toy_scenario(const std::string& explore) -> std::string {
    return R"({
  "name": "toy/long", "model": "toy",
  "device": {"block_size": 4096, "blocks": 1024, "profile": "nvme"},
  "setup": [{"op": "touch", "file": "A"}, {"op": "fdatasync", "file": "A"}],
  "tasks": [{"name": "app", "ops": [{"op": "pwrite", "file": "A", "offset": 0, "length": 4096}]}],
  "crash": {"unflushed": "none"},
  "checkers": ["fsync_durability", "fs_consistency"],)" +
           explore + R"(
  "variants": [{"name": "flush", "config": {"fdatasync": "flush"}, "expect": "holds"}]
})";
}

/// The scenario with its one task's one operation repeated `count` times.
auto repeated(const std::string& text, std::size_t count) -> loader::Scenario {
    loader::Scenario scenario = loader::parse_scenario(text, "toy-long.json");
    REQUIRE(scenario.tasks.size() == 1);
    const loader::Op op = scenario.tasks[0].ops.front();
    scenario.tasks[0].ops.assign(count, op);
    return scenario;
}

constexpr const char* btrfs_path = "scenarios/btrfs/fast-fsync-vs-page-release.json";

/// The btrfs race with a liveness bound of 3 steps: its fsync takes more,
/// so every schedule fails liveness (the path a livelock takes).
auto btrfs_impatient() -> std::string {
    Json document = Json::parse(loader::read_text_file(btrfs_path));
    document["explore"]["progress_steps"] = 3;
    return document.dump(2);
}

}  // namespace

TEST_CASE("liveness: a workload longer than 200,000 steps whose operations complete is not a livelock" *
          doctest::test_suite("campaign")) {
    // 200,000 steps was the old fixed limit, reported as "no progress".
    const loader::Scenario scenario = repeated(toy_scenario(""), 100'000);
    runner::Simulation simulation(scenario, scenario.variants.front());
    const runner::RunOutcome outcome = simulation.run_scripted(false);
    CHECK(outcome.steps > 200'000);
    CHECK(outcome.cut_at_step == 0);
    CHECK_MESSAGE(!outcome.violated(), outcome.violations.front().message);
}

TEST_CASE("liveness: a run cut by explore.steps is not explored past that step, and is no violation" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario = repeated(toy_scenario(R"("explore": {"steps": 50},)"), 1000);
    CHECK(scenario.explore.steps == 50);
    runner::Simulation simulation(scenario, scenario.variants.front());
    const runner::RunOutcome outcome = simulation.run_scripted(true);
    CHECK(outcome.cut_at_step == 50);
    CHECK(outcome.steps == 50);
    CHECK_FALSE(outcome.violated());
    CHECK(outcome.trace.find("not explored past step 50") != std::string::npos);
    CHECK(report::verdict_text(outcome).find("not explored past step 50: the run reached the step bound") !=
          std::string::npos);

    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("random");
    request.schedules = 20;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    CHECK_FALSE(report.found);
    CHECK(report.schedules_cut == 20);
    CHECK(report::fuzz_summary(report, request, 1.0).find("20 schedule(s) not explored past step 50") !=
          std::string::npos);

    const runner::CheckRow row =
        runner::check_variant(scenario, scenario.variants.front(), [] { return 0.0; });
    CHECK(row.schedules_cut == row.schedules);
    CHECK(row.detail.find("not explored past step 50 (the step bound explore.steps)") != std::string::npos);
}

TEST_CASE("liveness: explore.steps and explore.progress_steps are checked bounds" *
          doctest::test_suite("campaign")) {
    CHECK_THROWS_WITH_AS(
        loader::parse_scenario(toy_scenario(R"("explore": {"steps": 0},)"), "t.json"),
        doctest::Contains("$.explore.steps: expected an unsigned integer from 1 to 1000000000"),
        loader::InputError);
    CHECK_THROWS_WITH_AS(
        loader::parse_scenario(toy_scenario(R"("explore": {"progress_steps": 1000000001},)"), "t.json"),
        doctest::Contains("$.explore.progress_steps"), loader::InputError);
    const loader::Scenario defaults = loader::parse_scenario(toy_scenario(""), "t.json");
    CHECK(defaults.explore.steps == loader::explore_steps_default);
    CHECK(defaults.explore.progress_steps == loader::progress_steps_default);
}

TEST_CASE("liveness: no operation completing within explore.progress_steps is a violation without a crash" *
          doctest::test_suite("campaign")) {
    const std::string text = btrfs_impatient();
    const loader::Scenario scenario = loader::parse_scenario(text, btrfs_path);
    runner::Simulation simulation(scenario, *scenario.find_variant("fix-1"));
    // The first random schedule that goes 3 steps without completing an
    // operation (most do: a fast fsync takes more than 3 steps).
    runner::RunOutcome outcome;
    for (std::uint64_t seed = 0; seed < 64 && !outcome.violated(); seed++) {
        outcome = simulation.run_strategy(test_support::spec_of("random"), seed, true);
    }
    REQUIRE(outcome.violated());
    CHECK(outcome.violations.front().checker == "liveness");
    CHECK(outcome.violations.front().message.find("no progress: no operation completed in the last 3 steps "
                                                  "(explore.progress_steps bound)") != std::string::npos);
    CHECK_FALSE(outcome.crash.has_value());
    CHECK(outcome.cut_at_step == 0);
}

TEST_CASE("liveness: fuzz reports, shrinks and writes a liveness violation; replay and shrink reproduce it" *
          doctest::test_suite("campaign")) {
    const std::string text = btrfs_impatient();
    const loader::Scenario scenario = loader::parse_scenario(text, btrfs_path);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "crashsim-liveness-test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const char* strategy : {"random", "dfs:1"}) {
        CAPTURE(strategy);
        runner::Simulation simulation(scenario, *scenario.find_variant("fix-1"));
        runner::FuzzRequest request;
        request.strategy = test_support::spec_of(strategy);
        request.schedules = 10;
        // dfs replayed the failing run with the crash record it lacks: bad_alloc, exit 134.
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        REQUIRE(report.found);
        CHECK(report.failing.violations.front().checker == "liveness");
        const runner::Repro repro = runner::make_repro(report, request, btrfs_path, text, "fix-1");
        CHECK_FALSE(repro.crash.has_value());
        const std::string path =
            (dir / ("repro-" + std::string(strategy == std::string("random") ? "r" : "d") + ".json"))
                .string();
        runner::write_repro(repro, path);
        CHECK(loader::read_text_file(path).find("\"crash\"") == std::string::npos);
        const runner::LoadedRepro loaded = runner::load_repro(path);
        CHECK_FALSE(loaded.repro.crash.has_value());
        CHECK(loaded.replayed.violations.front().checker == "liveness");
        CHECK(loaded.replayed.trace_hash == repro.trace_hash);

        const runner::ShrinkResult shrunk =
            runner::shrink(loaded.repro, runner::ShrinkOptions{3, 50000, ~std::uint64_t{0}});
        CHECK_FALSE(shrunk.interrupted);
        CHECK(shrunk.outcome.violations.front().checker == "liveness");
        CHECK_FALSE(shrunk.repro.crash.has_value());
        runner::write_repro(shrunk.repro, path);
        CHECK(runner::load_repro(path).replayed.trace_hash == shrunk.repro.trace_hash);
    }
    std::filesystem::remove_all(dir);
}
