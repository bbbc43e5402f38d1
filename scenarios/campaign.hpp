#pragma once
// Fuzz campaigns and the CI gate's per-variant verdicts, on top of Simulation.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenarios/runner.hpp"

namespace scenarios {

struct FuzzRequest {
    sim::StrategySpec strategy;
    std::uint64_t seed = 0;
    std::uint64_t schedules = 10000;  // dfs: the most schedules it may take
    bool stop_at_first = true;
    bool sleep_sets = true;  // dfs: partial-order reduction on
};

struct FuzzReport {
    std::uint64_t schedules = 0;  // run
    std::uint64_t crash_states = 0;
    std::uint64_t steps = 0;
    bool found = false;
    std::uint64_t index = 0;          // of the failing schedule
    std::uint64_t schedule_seed = 0;  // its seed
    RunOutcome failing;               // traced re-run of the failing schedule
    bool complete = false;            // dfs: every schedule within the bound was run
    sim::DfsStats dfs;                // dfs: pruning figures
};

/// Runs schedules `0 .. schedules-1` of a campaign; schedule i uses
/// schedule_seed(seed, i), so any slice of a campaign is reproducible alone.
/// A dfs request runs the bounded exhaustive search instead.
auto fuzz(Simulation& simulation, const FuzzRequest& request) -> FuzzReport;
auto explore_exhaustively(Simulation& simulation, const FuzzRequest& request) -> FuzzReport;

/// One row of `crashsim check`.
struct CheckRow {
    std::string scenario;
    std::string variant;
    std::string expectation;  // "violates fsync_durability", "holds"
    bool met = false;
    std::string detail;  // why, in one line
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    double seconds = 0;
};

/// Checks one variant against its expectation. `clock` returns seconds (the
/// library reads no wall clock itself).
auto check_variant(const Scenario& scenario, const Variant& variant,
                   const std::function<double()>& clock) -> CheckRow;

}  // namespace scenarios
