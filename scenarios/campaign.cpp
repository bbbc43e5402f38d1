#include "scenarios/campaign.hpp"

#include "sim/assert.hpp"

namespace scenarios {

auto explore_exhaustively(Simulation& simulation, const FuzzRequest& request) -> FuzzReport {
    FuzzReport report;
    sim::DfsTree tree(request.strategy.preemptions, request.sleep_sets);
    bool more = true;
    while (more && report.schedules < request.schedules) {
        RunOutcome outcome = simulation.run_dfs(tree, false);
        report.schedules++;
        report.crash_states += outcome.crash_states;
        report.steps += outcome.steps;
        if (outcome.violated() && !report.found) {
            report.found = true;
            report.index = report.schedules - 1;
            // Replayed with a trace for the story: the choices and the crash
            // are the whole run.
            report.failing = simulation.replay(outcome.choices, *outcome.crash, true);
            SIM_ASSERT(report.failing.violated());
            if (request.stop_at_first) break;
        }
        more = tree.backtrack();
    }
    report.complete = !more;
    report.dfs = tree.stats();
    return report;
}

auto fuzz(Simulation& simulation, const FuzzRequest& request) -> FuzzReport {
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs) {
        return explore_exhaustively(simulation, request);
    }
    FuzzReport report;
    for (std::uint64_t index = 0; index < request.schedules; index++) {
        const std::uint64_t seed = schedule_seed(request.seed, index);
        RunOutcome outcome = simulation.run_strategy(request.strategy, seed, false);
        report.schedules++;
        report.crash_states += outcome.crash_states;
        report.steps += outcome.steps;
        if (!outcome.violated() || report.found) continue;
        report.found = true;
        report.index = index;
        report.schedule_seed = seed;
        // The same schedule again, traced, for the story and the trace hash.
        report.failing = simulation.run_strategy(request.strategy, seed, true);
        SIM_ASSERT(report.failing.violated());
        SIM_ASSERT(report.failing.choices == outcome.choices);
        if (request.stop_at_first) break;
    }
    return report;
}

namespace {

auto has_checker(const RunOutcome& outcome, const std::string& checker) -> bool {
    for (const auto& violation : outcome.violations) {
        if (violation.checker == checker) return true;
    }
    return false;
}

}  // namespace

auto check_variant(const Scenario& scenario, const Variant& variant,
                   const std::function<double()>& clock) -> CheckRow {
    const double started = clock();
    CheckRow row;
    row.scenario = scenario.name;
    row.variant = variant.name;
    const Expectation& expect = variant.expect;
    const bool violates = expect.kind == Expectation::Kind::violates;
    row.expectation = violates ? "violates " + expect.checker : "holds";
    Simulation simulation(scenario, variant);
    row.met = true;
    if (!scenario.schedule.empty()) {
        const RunOutcome scripted = simulation.run_scripted(false);
        row.schedules++;
        row.crash_states += scripted.crash_states;
        if (violates && !has_checker(scripted, expect.checker)) {
            row.met = false;
            row.detail = "the scripted schedule did not violate " + expect.checker;
        } else if (!violates && scripted.violated()) {
            row.met = false;
            row.detail = "the scripted schedule violated " + scripted.violations.front().checker +
                         ": " + scripted.violations.front().message;
        }
    }
    for (const std::string& text : expect.fuzz.strategies) {
        if (!row.met) break;
        FuzzRequest request;
        SIM_ASSERT(sim::parse_strategy(text, request.strategy));
        request.seed = expect.fuzz.seed;
        request.schedules = expect.fuzz.schedules;
        const FuzzReport report = fuzz(simulation, request);
        row.schedules += report.schedules;
        row.crash_states += report.crash_states;
        if (violates && !(report.found && has_checker(report.failing, expect.checker))) {
            row.met = false;
            row.detail = text + " did not find " + expect.checker + " in " +
                         std::to_string(report.schedules) + " schedules" +
                         (report.found ? " (found " + report.failing.violations.front().checker + ")" : "");
        } else if (!violates && request.strategy.kind == sim::StrategySpec::Kind::dfs &&
                   !report.complete) {
            row.met = false;
            row.detail = text + " did not complete within " + std::to_string(report.schedules) +
                         " schedules";
        } else if (!violates && report.found) {
            row.met = false;
            row.detail = text + " schedule " + std::to_string(report.index) + " violated " +
                         report.failing.violations.front().checker + ": " +
                         report.failing.violations.front().message;
        } else if (violates) {
            row.detail += (row.detail.empty() ? "" : "; ") + text + " found it at schedule " +
                          std::to_string(report.index);
        }
    }
    if (row.met && !violates) {
        row.detail = "no violation in " + std::to_string(row.schedules) + " schedules";
    }
    row.seconds = clock() - started;
    return row;
}

}  // namespace scenarios
