// Dynamic partial-order reduction (sim/dfs.hpp) against the unreduced search
// (without --dpor: sleep sets only, which scenario_test.cpp checks against the
// unpruned search) on every variant of every bundled scenario at bounds 0,
// 1 and 2: the same verdict and the same kinds of violation (checkers). A search the unreduced side cannot
// finish within the cap is skipped and named in the test's output, and so are the performance scenarios
// (workloads of hundreds of operations).
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "runner/campaign.hpp"
#include "tests/support.hpp"

namespace {

// Searches the unreduced side cannot finish in this many schedules are
// skipped (and named), so the case stays within a couple of minutes in CI.
constexpr std::uint64_t schedules_cap = 1'000;

auto search(runner::Simulation& simulation, std::uint32_t preemptions, bool dpor, std::uint64_t cap)
    -> runner::FuzzReport {
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = preemptions;
    request.schedules = cap;
    request.stop_at_first = false;
    request.dpor = dpor;
    return runner::fuzz(simulation, request);
}

/// The checkers that reported (each violating schedule reports its first
/// violation, which depends on the order its crash states come in, so the
/// kinds are compared, and the messages shown where they differ).
auto kinds(const runner::FuzzReport& report, bool messages) -> std::set<std::string> {
    std::set<std::string> out;
    for (const auto& found : report.violations) {
        const checkers::Violation& v = found.violation;
        out.insert(messages ? v.checker + ": " + v.message : v.checker);
    }
    return out;
}

/// The distinct first messages with their step numbers masked: "returned at
/// step 29" names where the step fell, which independent steps before it
/// shift between equivalent schedules; the rest (files, offsets, writes,
/// transactions) must match. bench/dpor-soundness.sh compares the same.
auto masked(const runner::FuzzReport& report) -> std::set<std::string> {
    static const std::regex step_number("steps? [0-9]+( to [0-9]+)?");
    std::set<std::string> out;
    for (const auto& found : report.violations) {
        const checkers::Violation& v = found.violation;
        out.insert(v.checker + ": " + std::regex_replace(v.message, step_number, "step N"));
    }
    return out;
}

/// The dpor search of `variant` at `preemptions` against the unreduced one,
/// `full`, run on `simulation`: the same verdict, kinds of violation,
/// masked messages and distinct crash states. Notes where the first
/// messages differ, or where dpor took more schedules.
void compare_with_dpor(const std::string& path, const loader::Scenario& scenario,
                       const loader::Variant& variant, std::uint32_t preemptions,
                       const runner::Simulation& simulation, const runner::FuzzReport& full) {
    // Under a bound dpor runs without sleep sets, so it may take
    // more schedules than sleep sets alone (faults/btrfs-torn-superblock).
    // One Simulation each: its verdict memo counts the distinct
    // crash states its own search judged.
    runner::Simulation reducing(scenario, variant);
    const runner::FuzzReport reduced = search(reducing, preemptions, true, 10 * schedules_cap);
    CHECK(reduced.complete);
    CHECK(reduced.found == full.found);
    CHECK(kinds(reduced, false) == kinds(full, false));
    // xfs/freeze-vs-log-worker dfs:1 failed this before dpor gave
    // the tasks a violation leaves listed their next steps.
    CHECK(masked(reduced) == masked(full));
    // The same crash states, not only the same verdict: a class
    // dpor never takes can hide states that break nothing in this
    // variant (xfs/falloc-k-over-sized-file fix: dpor took no
    // daemon wake-up before runs whose tasks had all finished gave
    // their listed daemons and timers a next step).
    const auto states = simulation.crash_states_distinct();
    if (states) CHECK(reducing.crash_states_distinct().value_or(0) == *states);
    const std::set<std::string> messages = kinds(reduced, true);
    const std::set<std::string> all = kinds(full, true);
    if (messages != all) {
        MESSAGE(
            "first messages differ: "
            << path << " " << variant.name << " dfs:" << preemptions << ": " << messages.size()
            << " and " << all.size() << " distinct, "
            << std::string(std::includes(all.begin(), all.end(), messages.begin(), messages.end())
                               ? "a subset"
                               : "not a subset"));
    }
    if (reduced.schedules > full.schedules) {
        MESSAGE("dpor took more: " << path << " " << variant.name << " dfs:" << preemptions
                                   << ": " << reduced.schedules << " against " << full.schedules);
    }
}

}  // namespace

// Slow: the quick loop skips it (`crashsim_tests -tse=slow,campaign`), tools/test runs it (not under
// sanitizers).
TEST_CASE(
    "dpor: the same verdicts and violations as the unreduced search on every bundled scenario, bounds 0-2" *
    doctest::test_suite("campaign")) {
    std::uint64_t compared = 0;
    std::uint64_t compared_states = 0;  // searches whose distinct crash states were compared
    for (const std::string& path : test_support::bundled_scenarios()) {
        const loader::Scenario scenario = loader::load_scenario(path);
        if (scenario.perf) {
            MESSAGE("skipped: " << path << " (a performance scenario: its workload is far past a dfs)");
            continue;
        }
        for (const auto& variant : scenario.variants) {
            for (std::uint32_t preemptions = 0; preemptions <= 2; preemptions++) {
                CAPTURE(path);
                CAPTURE(variant.name);
                CAPTURE(preemptions);
                runner::Simulation simulation(scenario, variant);
                const runner::FuzzReport full = search(simulation, preemptions, false, schedules_cap);
                if (!full.complete) {
                    MESSAGE("skipped: " << path << " " << variant.name << " dfs:" << preemptions
                                        << " (the unreduced search passes " << schedules_cap
                                        << " schedules)");
                    break;
                }
                compare_with_dpor(path, scenario, variant, preemptions, simulation, full);
                if (simulation.crash_states_distinct()) compared_states++;
                compared++;
            }
        }
    }
    MESSAGE("compared " << compared << " searches, " << compared_states
                        << " of them by their distinct crash states");
    CHECK(compared > 0);
    CHECK(compared_states > 0);
}
