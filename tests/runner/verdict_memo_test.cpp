// The verdict memo (issue 13; RunState in runner/runner.cpp): a crash state
// judged earlier in the same run, with the same image, oracle revision and
// freeze level, reuses that verdict instead of mounting again; so does a
// mount inside one crash state's recovery crashes whose image that crash
// state judged already. It must change
// nothing a search reports: the same schedules, crash states (each still
// counted), recovery crash states, judged counts and violations as the same
// search with the memo off.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "runner/campaign.hpp"
#include "tests/support.hpp"

namespace {

constexpr const char* race = "scenarios/btrfs/fast-fsync-vs-page-release.json";

auto search(scenarios::Simulation& simulation, std::uint32_t preemptions, bool memo, std::uint64_t cap)
    -> scenarios::FuzzReport {
    simulation.set_verdict_memo(memo);
    scenarios::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = preemptions;
    request.schedules = cap;
    request.stop_at_first = false;
    return scenarios::fuzz(simulation, request);
}

/// Every figure and finding of two searches, compared exactly.
void same_search(const scenarios::FuzzReport& with, const scenarios::FuzzReport& without) {
    CHECK(with.complete == without.complete);
    CHECK(with.schedules == without.schedules);
    CHECK(with.crash_states == without.crash_states);
    CHECK(with.recovery_crash_states == without.recovery_crash_states);
    CHECK(with.steps == without.steps);
    CHECK(with.judged == without.judged);
    CHECK(with.found == without.found);
    CHECK(with.index == without.index);
    REQUIRE(with.violations.size() == without.violations.size());
    for (std::size_t i = 0; i < with.violations.size(); i++) {
        CHECK(with.violations[i].index == without.violations[i].index);
        CHECK(with.violations[i].violation.checker == without.violations[i].violation.checker);
        CHECK(with.violations[i].violation.message == without.violations[i].violation.message);
    }
    CHECK(with.failing.trace_hash == without.failing.trace_hash);
}

/// Runs a whole dfs by hand: crash states evaluated and those reused.
struct Walk {
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    std::uint64_t reused = 0;
    std::uint64_t mounts_reused = 0;
};
auto walk(scenarios::Simulation& simulation, std::uint32_t preemptions) -> Walk {
    sim::DfsTree tree(preemptions, true);
    Walk out;
    do {
        const scenarios::RunOutcome outcome = simulation.run_dfs(tree, false);
        out.schedules++;
        out.crash_states += outcome.crash_states;
        out.reused += outcome.crash_states_reused;
        out.mounts_reused += outcome.mounts_reused;
        CHECK(outcome.crash_states_reused <= outcome.crash_states);
    } while (tree.backtrack());
    return out;
}

}  // namespace

TEST_CASE("verdict memo: the btrfs race's fix-1 at dfs:1 reports the same with and without it, and it is used") {
    const scenarios::Scenario scenario = scenarios::load_scenario(race);
    scenarios::Simulation simulation(scenario, *scenario.find_variant("fix-1"));
    const scenarios::FuzzReport with = search(simulation, 1, true, 100'000);
    const scenarios::FuzzReport without = search(simulation, 1, false, 100'000);
    REQUIRE(with.complete);
    CHECK_FALSE(with.found);
    same_search(with, without);
    // Reuse happens (a kept subset at one step recurs at the next when only
    // a write was added), and only with the memo on.
    simulation.set_verdict_memo(true);
    const Walk on = walk(simulation, 1);
    simulation.set_verdict_memo(false);
    const Walk off = walk(simulation, 1);
    CHECK(on.schedules == with.schedules);
    CHECK(on.crash_states == with.crash_states);
    CHECK(off.crash_states == on.crash_states);
    CHECK(on.reused > 0);
    CHECK(off.reused == 0);
    // A cut inside recovery that keeps none of its writes mounts the image
    // recovery started from (the race's scenario explores one such cut).
    CHECK(on.mounts_reused > 0);
    CHECK(off.mounts_reused == 0);
}

TEST_CASE("verdict memo: the btrfs race's before-fix at dfs:1 finds the same violations at the same schedules") {
    const scenarios::Scenario scenario = scenarios::load_scenario(race);
    scenarios::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    const scenarios::FuzzReport with = search(simulation, 1, true, 100'000);
    const scenarios::FuzzReport without = search(simulation, 1, false, 100'000);
    REQUIRE(with.found);
    CHECK(with.violations.size() > 1);
    same_search(with, without);
}

// Slow: the quick loop skips it (`crashsim_tests -tse=slow`), tools/test runs it.
TEST_CASE("verdict memo: every bundled scenario reports the same with and without it, bounds 0-2" *
          doctest::test_suite("slow")) {
    constexpr std::uint64_t cap = 300;  // schedules per search: the ext4 scenarios run ~100 a second
    std::uint64_t compared = 0;
    for (const std::string& path : test_support::bundled_scenarios()) {
        const scenarios::Scenario scenario = scenarios::load_scenario(path);
        if (scenario.perf) continue;  // a workload far past a dfs
        for (const auto& variant : scenario.variants) {
            for (std::uint32_t preemptions = 0; preemptions <= 2; preemptions++) {
                CAPTURE(path);
                CAPTURE(variant.name);
                CAPTURE(preemptions);
                scenarios::Simulation simulation(scenario, variant);
                const scenarios::FuzzReport with = search(simulation, preemptions, true, cap);
                same_search(with, search(simulation, preemptions, false, cap));
                compared++;
                if (!with.complete) break;  // capped: a higher bound only repeats the first 300
            }
        }
    }
    MESSAGE("compared " << compared << " searches");
    CHECK(compared > 0);
}
