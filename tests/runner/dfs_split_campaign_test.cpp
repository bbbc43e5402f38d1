// dfs with --jobs and --shard (issue 13 item 4): the same counts, violations
// and verdict as the unsplit search for any J and N, on bundled scenarios and
// the toy model; and the estimate (item 3) within a stated factor on one.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "loader/scenario.hpp"
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
};

/// The search with J jobs and N shards (each shard a result, merged).
auto split_search(const scenarios::Scenario& scenario, const std::string& variant, const std::string& strategy,
                  std::uint32_t jobs, std::uint32_t shards, std::size_t depth) -> Figures {
    Figures merged;
    merged.complete = true;
    std::vector<scenarios::CampaignResult> results;
    for (std::uint32_t shard = 0; shard < shards; shard++) {
        scenarios::Simulation simulation(scenario, *scenario.find_variant(variant));
        scenarios::FuzzRequest request;
        request.strategy = test_support::spec_of(strategy);
        request.schedules = 10'000'000;
        request.stop_at_first = false;
        request.jobs = jobs;
        request.shard_index = shard;
        request.shard_count = shards;
        request.split_depth = depth;
        const scenarios::FuzzReport report = scenarios::fuzz(simulation, request);
        results.push_back(scenarios::campaign_result(report, request, scenario, 0, variant));
        merged.schedules += report.schedules;
        merged.crash_states += report.crash_states;
        merged.steps += report.steps;
        merged.complete = merged.complete && report.complete;
    }
    const scenarios::CampaignResult result =
        scenarios::merge_results(results, std::vector<std::string>(shards, "result.json"));
    CHECK(result.schedules_run == merged.schedules);
    CHECK(result.dfs->complete == merged.complete);
    for (const auto& found : result.violations) {
        merged.violations.push_back(found.violation.checker + ": " + found.violation.message);
    }
    return merged;
}

void same_for_any_split(const std::string& path, const std::string& variant, const std::string& strategy,
                        std::size_t depth) {
    const scenarios::Scenario scenario = scenarios::load_scenario(path);
    const Figures whole = split_search(scenario, variant, strategy, 1, 1, 0);
    CHECK(whole.complete);
    for (std::uint32_t jobs : {1U, 2U, 3U}) {
        for (std::uint32_t shards : {1U, 2U, 3U}) {
            if (jobs == 1 && shards == 1) continue;
            CAPTURE(path);
            CAPTURE(strategy);
            CAPTURE(jobs);
            CAPTURE(shards);
            const Figures split = split_search(scenario, variant, strategy, jobs, shards, depth);
            CHECK(split.schedules == whole.schedules);
            CHECK(split.crash_states == whole.crash_states);
            CHECK(split.steps == whole.steps);
            CHECK(split.violations == whole.violations);
            CHECK(split.complete == whole.complete);
        }
    }
}

}  // namespace

TEST_CASE("dfs split campaign: btrfs race at dfs:1, same counts and verdicts for J and N in 1..3") {
    same_for_any_split("scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1", "dfs:1", 4);
    // A variant that fails: every violation found, the same ones.
    same_for_any_split("scenarios/btrfs/fast-fsync-vs-page-release.json", "before-fix", "dfs:1", 3);
}

TEST_CASE("dfs split campaign: the depth chosen from the estimate gives the same counts (btrfs dfs:2)") {
    same_for_any_split("scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1", "dfs:2", 0);
}

TEST_CASE("dfs estimate: within a factor of 4 of the btrfs race's dfs:1 search (seed 0, 256 walks)") {
    const scenarios::Scenario scenario =
        scenarios::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    scenarios::Simulation simulation(scenario, *scenario.find_variant("fix-1"));
    scenarios::FuzzRequest request;
    request.strategy = test_support::spec_of("dfs:1");
    const scenarios::SearchEstimate estimate = scenarios::estimate_search(simulation, request);
    const scenarios::FuzzReport report = scenarios::fuzz(simulation, request);
    REQUIRE(report.complete);
    CHECK(estimate.schedules > static_cast<double>(report.schedules) / 4);
    CHECK(estimate.schedules < static_cast<double>(report.schedules) * 4);
    CHECK(estimate.crash_states > static_cast<double>(report.crash_states) / 4);
    CHECK(estimate.crash_states < static_cast<double>(report.crash_states) * 4);
    // Seeded: the same estimate again, and the search it ran beside unchanged.
    const scenarios::SearchEstimate again = scenarios::estimate_search(simulation, request);
    CHECK(again.schedules == estimate.schedules);
    CHECK(scenarios::fuzz(simulation, request).schedules == report.schedules);
}
