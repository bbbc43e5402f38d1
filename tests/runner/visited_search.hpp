#pragma once
// A bounded dfs over one variant of a bundled scenario, for the visited-state
// tests of each model: the key it remembers states by, check mode, a
// key part left out, the schedule cap, whether the kernel's own
// nondeterminism (I/O reordering, daemon wake-ups, crashes in recovery) is
// the scenario's or off, and the liveness window.
#include <cstdint>
#include <string>

#include "loader/scenario.hpp"
#include "runner/campaign.hpp"

namespace test_support {

struct VisitedSearch {
    sim::VisitedKey states = sim::VisitedKey::none;
    bool check = false;
    std::string omit{};
    std::uint64_t schedules = 2'000'000;
    bool kernel_nondeterminism = true;
    bool io_reorders_only = false;  // with kernel_nondeterminism off: the scenario's I/O reorderings kept
    bool check_footprints = false;
    std::string footprint_left_out{};
    std::uint64_t progress_steps = 0;  // explore.progress_steps; 0: the scenario's
    std::uint64_t steps = 0;           // explore.steps; 0: the scenario's
};

inline auto search(const std::string& path, const std::string& variant, std::uint32_t preemptions,
                   const VisitedSearch& key) -> runner::FuzzReport {
    const loader::Scenario scenario = loader::load_scenario(path);
    runner::Simulation simulation(scenario, *scenario.find_variant(variant));
    if (!key.kernel_nondeterminism) {
        loader::ExploreBounds none = simulation.bounds();
        if (!key.io_reorders_only) none.io_reorders = 0;
        none.daemon_wakeups = 0;
        none.recovery_crashes = 0;
        simulation.set_bounds(none);
    }
    if (key.progress_steps != 0 || key.steps != 0) {
        loader::ExploreBounds bounds = simulation.bounds();
        if (key.progress_steps != 0) bounds.progress_steps = key.progress_steps;
        if (key.steps != 0) bounds.steps = key.steps;
        simulation.set_bounds(bounds);
    }
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = preemptions;
    request.schedules = key.schedules;
    request.states = key.states;
    request.check_fingerprints = key.check;
    request.fingerprint_omit = key.omit;
    request.check_footprints = key.check_footprints;
    request.footprint_left_out = key.footprint_left_out;
    return runner::fuzz(simulation, request);
}

}  // namespace test_support
