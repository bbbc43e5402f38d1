// dfs with --jobs and --shard: the same counts, violations
// and verdict for any J and N at one split depth, on bundled scenarios and the
// toy model, with and without visited states; and the estimate within a
// stated factor on one. With
// dpor a split search reduces only below the split depth (sim/dfs.hpp), so
// its counts are those of the split at that depth with one job and one
// shard; without dpor they are the unsplit search's. Either way the
// violations are the unsplit search's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loader/scenario.hpp"
#include "report/console.hpp"
#include "report/report.hpp"
#include "runner/campaign.hpp"
#include "tests/support.hpp"

namespace {

struct Figures {
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    std::uint64_t steps = 0;
    std::vector<std::string> violations;  // checker: message, in order
    bool complete = false;
    std::optional<std::uint64_t> distinct;  // one job, one shard: distinct crash states without a violation
    std::uint64_t dropped = 0;  // states not remembered: the visited-state table at its bound
};

/// The search with J jobs and N shards (each shard a result, merged).
auto split_search(const loader::Scenario& scenario, const std::string& variant, const std::string& strategy,
                  std::uint32_t jobs, std::uint32_t shards, std::size_t depth, bool dpor = true,
                  sim::VisitedKey states = sim::VisitedKey::none,
                  std::uint64_t max_memory_mib = runner::visited_memory_default_mib) -> Figures {
    Figures merged;
    merged.complete = true;
    std::vector<runner::CampaignResult> results;
    for (std::uint32_t shard = 0; shard < shards; shard++) {
        runner::Simulation simulation(scenario, *scenario.find_variant(variant));
        runner::FuzzRequest request;
        request.strategy = test_support::spec_of(strategy);
        request.schedules = 10'000'000;
        request.stop_at_first = false;
        request.jobs = jobs;
        request.shard_index = shard;
        request.shard_count = shards;
        request.split_depth = depth;
        request.dpor = dpor;
        request.states = states;
        request.max_memory_mib = max_memory_mib;
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        merged.distinct = report.crash_states_distinct;
        results.push_back(runner::campaign_result(report, request, scenario, 0, variant));
        merged.schedules += report.schedules;
        merged.crash_states += report.crash_states;
        merged.steps += report.steps;
        merged.dropped += report.dfs.dropped;
        merged.complete = merged.complete && report.complete;
    }
    const runner::CampaignResult result =
        runner::merge_results(results, std::vector<std::string>(shards, "result.json"));
    CHECK(result.schedules_run == merged.schedules);
    CHECK(result.dfs->complete == merged.complete);
    for (const auto& found : result.violations) {
        merged.violations.push_back(found.violation.checker + ": " + found.violation.message);
    }
    return merged;
}

/// The violations, sorted (a split search finds them in another order).
auto sorted(std::vector<std::string> violations) -> std::vector<std::string> {
    std::sort(violations.begin(), violations.end());
    violations.erase(std::unique(violations.begin(), violations.end()), violations.end());
    return violations;
}

/// With a depth, the same counts for any J and N; with none (chosen from
/// the estimate, for J or N), dpor's counts depend on J and N through it.
void same_for_any_split(const std::string& path, const std::string& variant, const std::string& strategy,
                        std::size_t depth, bool dpor = true) {
    const loader::Scenario scenario = loader::load_scenario(path);
    const Figures unsplit = split_search(scenario, variant, strategy, 1, 1, 0, dpor);
    const Figures whole =
        depth == 0 || !dpor ? unsplit : split_search(scenario, variant, strategy, 1, 1, depth, dpor);
    CHECK(unsplit.complete);
    CHECK(sorted(whole.violations) == sorted(unsplit.violations));
    for (std::uint32_t jobs : {1U, 2U, 3U}) {
        for (std::uint32_t shards : {1U, 2U, 3U}) {
            if (jobs == 1 && shards == 1) continue;
            CAPTURE(path);
            CAPTURE(strategy);
            CAPTURE(jobs);
            CAPTURE(shards);
            CAPTURE(dpor);
            const Figures split = split_search(scenario, variant, strategy, jobs, shards, depth, dpor);
            CHECK(sorted(split.violations) == sorted(unsplit.violations));
            if (depth == 0 && dpor) {
                CHECK(split.complete);
                continue;
            }
            CHECK(split.schedules == whole.schedules);
            CHECK(split.crash_states == whole.crash_states);
            CHECK(split.steps == whole.steps);
            CHECK(split.violations == whole.violations);
            CHECK(split.complete == whole.complete);
        }
    }
}

}  // namespace

TEST_CASE("dfs split campaign: btrfs race at dfs:1, same counts and verdicts for J and N in 1..3" *
          doctest::test_suite("campaign")) {
    same_for_any_split("scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1", "dfs:1", 4);
    // A variant that fails: every violation found, the same ones.
    same_for_any_split("scenarios/btrfs/fast-fsync-vs-page-release.json", "before-fix", "dfs:1", 3);
    // Without dpor, the unsplit search's very counts.
    same_for_any_split("scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1", "dfs:1", 4, false);
}

TEST_CASE("dfs split campaign: the depth chosen from the estimate gives the same verdicts (btrfs dfs:2)" *
          doctest::test_suite("campaign")) {
    same_for_any_split("scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1", "dfs:2", 0);
}

TEST_CASE("dfs estimate: within a factor of 4 of the btrfs race's dfs:1 search (seed 0, 256 walks)" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    runner::Simulation simulation(scenario, *scenario.find_variant("fix-1"));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("dfs:1");
    request.schedules = 1'000'000;  // complete (16,972 schedules)
    request.dpor = false;  // the estimate is the unreduced search's (an upper bound on dpor's)
    const runner::SearchEstimate estimate = runner::estimate_search(simulation, request);
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    REQUIRE(report.complete);
    CHECK(estimate.schedules > static_cast<double>(report.schedules) / 4);
    CHECK(estimate.schedules < static_cast<double>(report.schedules) * 4);
    CHECK(estimate.crash_states > static_cast<double>(report.crash_states) / 4);
    CHECK(estimate.crash_states < static_cast<double>(report.crash_states) * 4);
    // Seeded: the same estimate again, and the search it ran beside unchanged.
    const runner::SearchEstimate again = runner::estimate_search(simulation, request);
    CHECK(again.schedules == estimate.schedules);
    CHECK(runner::fuzz(simulation, request).schedules == report.schedules);
}

TEST_CASE("dfs estimate: a run cap stops the walks after two at least, the same way every time" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("dfs:2");
    const runner::SearchEstimate whole = runner::estimate_search(simulation, request);
    CHECK(whole.walks == runner::estimate_walks_default);
    CHECK(whole.walks_asked == runner::estimate_walks_default);
    request.estimate_runs = runner::estimate_first_line_runs;
    const runner::SearchEstimate capped = runner::estimate_search(simulation, request);
    CHECK(capped.walks >= 2);
    CHECK(capped.walks < whole.walks);
    CHECK(capped.walks_asked == runner::estimate_walks_default);
    CHECK(capped.schedules_error > 0);
    // Walks stop once their runs reach the cap, not before.
    CHECK(capped.runs >= runner::estimate_first_line_runs);
    const runner::SearchEstimate again = runner::estimate_search(simulation, request);
    CHECK(again.walks == capped.walks);
    CHECK(again.runs == capped.runs);
    CHECK(again.schedules == capped.schedules);
    // A cap of one run still takes two walks (a standard error needs two).
    request.estimate_runs = 1;
    CHECK(runner::estimate_search(simulation, request).walks == 2);
}

TEST_CASE(
    "dfs estimate: on a tree thousands of decisions deep the first line's walks stop at the cap and say so" *
    doctest::test_suite("campaign")) {
    // btrfs/log-commit-jiffy-sleep at dfs:2: a schedule is 11,949 steps and
    // 233,934 crash states. The first line's walks ran on for 16,441 runs
    // (62 s) and printed "inf schedules", "-nan crash states"; its timing
    // ran the whole first schedule (40 s).
    const loader::Scenario scenario = loader::load_scenario("scenarios/btrfs/log-commit-jiffy-sleep.json");
    runner::Simulation simulation(scenario, *scenario.find_variant("jiffy-sleep"));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("dfs:2");
    request.estimate_runs = runner::estimate_first_line_runs;
    const runner::SearchEstimate estimate =
        runner::estimate_search(simulation, request, [] { return 0.0; });
    CHECK(estimate.walks == 2);
    CHECK(estimate.walks_stopped == 2);
    CHECK(estimate.stopped_depth > 0);
    CHECK(estimate.runs <= 2 * (runner::estimate_first_line_runs + 8));
    CHECK(std::isfinite(estimate.schedules));
    CHECK(std::isfinite(estimate.crash_states));
    CHECK(std::isfinite(estimate.steps));
    CHECK(estimate.schedules > 1e6);
    const std::string line = report::estimate_text(estimate, request);
    CAPTURE(line);
    CHECK(line.find("more than about") != std::string::npos);
    CHECK(line.find("2 of the walks stopped before a schedule's end") != std::string::npos);
    CHECK(line.find("standard error") == std::string::npos);
    CHECK(line.find("inf") == std::string::npos);
    CHECK(line.find("nan") == std::string::npos);
    // The result file carries the stop, and reads back.
    runner::CampaignResult result =
        runner::campaign_result(runner::FuzzReport{}, request, scenario, 0, "jiffy-sleep");
    result.estimate = estimate;
    const std::string text = report::campaign_result_text(result);
    CHECK(text.find("\"walks_stopped\": 2") != std::string::npos);
    const runner::CampaignResult read = report::parse_campaign_result(text, "result.json");
    REQUIRE(read.estimate.has_value());
    CHECK(read.estimate->walks_stopped == 2);
    CHECK(read.estimate->stopped_depth == estimate.stopped_depth);
}

TEST_CASE("dfs and random: a campaign's run stops between steps at its crash-state cap or a stop "
          "request, and says it was cut" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario = loader::load_scenario("scenarios/btrfs/log-commit-jiffy-sleep.json");
    runner::Simulation simulation(scenario, *scenario.find_variant("jiffy-sleep"));
    {
        sim::DfsTree tree(2, true);
        const runner::RunOutcome outcome = simulation.run_dfs(tree, false, 100);
        CHECK(outcome.interrupted);
        CHECK(outcome.crash_states >= 100);
        CHECK(outcome.steps < 11949);
    }
    runner::RunOutcome outcome;
    runner::RunOutcome campaign_run;
    runner::RunOutcome replay;
    {
        const test_support::StopRequested stopped;
        sim::DfsTree tree(2, true);
        outcome = simulation.run_dfs(tree, false);
        // A campaign's random run likewise; a replay (not interruptible) runs on.
        const sim::StrategySpec random = test_support::spec_of("random");
        campaign_run = simulation.run_strategy(random, 7, false, true);
        replay = simulation.run_strategy(random, 7, false);
    }
    CHECK(outcome.interrupted);
    CHECK(outcome.steps == 256);
    CHECK_FALSE(outcome.violated());
    CHECK(campaign_run.interrupted);
    CHECK(campaign_run.steps == 256);
    CHECK_FALSE(replay.interrupted);
    CHECK(replay.steps > 256);
}

TEST_CASE(
    "dfs estimate: two stratified probes within 10% of the btrfs race's dfs:1 search, where Knuth's two "
    "walks are not" *
    doctest::test_suite("campaign")) {
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    runner::Simulation simulation(scenario, *scenario.find_variant("fix-1"));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("dfs:1");
    request.schedules = 1'000'000;  // complete (16,972 schedules)
    request.estimate_stratified = true;
    request.estimate_walks = runner::estimate_probes_default;
    const runner::SearchEstimate estimate = runner::estimate_search(simulation, request);
    CHECK(estimate.stratified);
    CHECK(estimate.walks == 2);
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    REQUIRE(report.complete);
    CHECK(estimate.schedules > 0.9 * static_cast<double>(report.schedules));
    CHECK(estimate.schedules < 1.1 * static_cast<double>(report.schedules));
    CHECK(estimate.crash_states > 0.9 * static_cast<double>(report.crash_states));
    CHECK(estimate.crash_states < 1.1 * static_cast<double>(report.crash_states));
    // Seeded: the same again.
    CHECK(runner::estimate_search(simulation, request).schedules == estimate.schedules);
    // Knuth's two walks with the same seed read far off (the figure in the README).
    request.estimate_stratified = false;
    const runner::SearchEstimate knuth = runner::estimate_search(simulation, request);
    CHECK(std::abs(knuth.schedules - static_cast<double>(report.schedules)) >
          std::abs(estimate.schedules - static_cast<double>(report.schedules)));
}

TEST_CASE("dfs split campaign: visited states give the same counts for any J and N at one depth" *
          doctest::test_suite("campaign")) {
    // A split search remembers states within a unit, so its counts are
    // those of one job and one shard at the same depth, and it reaches the
    // stateless search's distinct crash states and violations.
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    const auto locals = sim::VisitedKey::locals;
    for (const char* variant : {"fix-1", "before-fix"}) {
        CAPTURE(variant);
        const Figures stateless = split_search(scenario, variant, "dfs:1", 1, 1, 0, false);
        const Figures whole = split_search(scenario, variant, "dfs:1", 1, 1, 3, false, locals);
        CHECK(whole.complete);
        REQUIRE(whole.distinct.has_value());
        CHECK(whole.distinct == stateless.distinct);
        CHECK(sorted(whole.violations) == sorted(stateless.violations));
        for (const auto& [jobs, shards] : {std::pair{2U, 1U}, std::pair{1U, 3U}, std::pair{3U, 2U}}) {
            CAPTURE(jobs);
            CAPTURE(shards);
            const Figures split = split_search(scenario, variant, "dfs:1", jobs, shards, 3, false, locals);
            CHECK(split.schedules == whole.schedules);
            CHECK(split.crash_states == whole.crash_states);
            CHECK(split.steps == whole.steps);
            CHECK(split.violations == whole.violations);
            if (split.distinct) CHECK(split.distinct == whole.distinct);
        }
    }
}

TEST_CASE("dfs split campaign: a visited-state table at its memory bound gives the same counts for any J" *
          doctest::test_suite("campaign")) {
    // Each job's table is bounded alone and emptied per unit, so the states
    // it drops, and the runs that follow, do not depend on the jobs.
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    const auto locals = sim::VisitedKey::locals;
    const Figures whole = split_search(scenario, "fix-1", "dfs:4", 1, 1, 1, false, locals, 1);
    const Figures unbounded = split_search(scenario, "fix-1", "dfs:4", 1, 1, 1, false, locals);
    CHECK(whole.complete);
    CHECK(whole.dropped > 0);
    CHECK(unbounded.dropped == 0);
    CHECK(whole.schedules > unbounded.schedules);
    CHECK(whole.distinct == unbounded.distinct);
    for (const std::uint32_t jobs : {2U, 3U}) {
        CAPTURE(jobs);
        const Figures split = split_search(scenario, "fix-1", "dfs:4", jobs, 1, 1, false, locals, 1);
        CHECK(split.schedules == whole.schedules);
        CHECK(split.dropped == whole.dropped);
        CHECK(split.crash_states == whole.crash_states);
        CHECK(split.steps == whole.steps);
    }
}
