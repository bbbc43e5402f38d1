#pragma once
// Shrinking a failing run to the smallest story that still fails the same
// checker at the same place (file and offset): fewest operations (each task
// and set-up operation removed in turn, the scenario searched again), then
// fewest preemptions (bounded exhaustive search from 0 up, whose first hit
// is also the earliest crash on its schedule), then fewest kept unflushed
// writes (each dropped in turn).
#include <string>
#include <vector>

#include "runner/repro.hpp"

namespace runner {

/// The default of ShrinkOptions::schedules_total: the btrfs race found by
/// dfs:2 needs about 5,500 schedules to shrink to its minimum, and an ext4
/// violation (scenarios/jbd2/relogged-buffer-checkpoint.json, before-2-3)
/// shrinks well within it. A small scenario runs thousands of schedules a
/// second and may shrink further with more: `--shrink-budget`. Removals try
/// tasks first at the story's preemptions (tests/runner/repro_test.cpp's
/// repro finishes in about 0.1 s).
inline constexpr std::uint64_t shrink_schedules_total_default = 10000;

struct ShrinkOptions {
    std::uint32_t preemptions_max = 3;          // the search tries 0..this
    std::uint64_t schedules_per_search = 50000;  // cap of each search
    /// Every schedule shrinking runs (the bounded searches and each replay
    /// of a fewer-writes crash state), summed: shrinking stops when it is
    /// spent, and the repro is as shrunk as the budget allowed.
    std::uint64_t schedules_total = shrink_schedules_total_default;
};

struct ShrinkResult {
    Repro repro;                    // the shrunk repro (trace hash of the shrunk run)
    RunOutcome outcome;             // the shrunk run, traced
    std::vector<std::string> log;   // what was removed, one line each; capped searches
    bool changed = false;
    /// Stopped by request_stop() (SIGINT, SIGTERM): the repro is as shrunk as
    /// it got, and its log says so.
    bool interrupted = false;
    /// Stopped on ShrinkOptions::schedules_total: the repro is shrunk as far
    /// as the budget allowed, not minimal, and its log says so.
    bool budget_spent = false;
    std::uint64_t schedules = 0;  // run while shrinking
};

/// Shrinks `repro`; the result still fails the same checker at the same place.
/// `repro` must replay to its violation (load_repro checks a repro file).
auto shrink(const Repro& repro, const ShrinkOptions& options) -> ShrinkResult;

}  // namespace runner
