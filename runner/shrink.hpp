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

namespace scenarios {

/// The default of ShrinkOptions::schedules_total: an ext4 violation
/// (scenarios/jbd2/relogged-buffer-checkpoint.json, before-2-3) ran about
/// 100 schedules/s when this was chosen, so shrinking it ended in about half
/// a minute (4.7 s since the jbd2 mount copies no metadata block). A small
/// scenario runs thousands a second and may shrink further with more:
/// `--shrink-budget` (tests/runner/repro_test.cpp's took 248,007 to finish
/// before removals were tried tasks first at the story's preemptions; it
/// now finishes in about 0.1 s). Raised from 3,000 to 10,000 when the
/// reductions stopped taking a daemon's first sleep as commuting with the
/// timers (sim/scheduler.cpp add_timer): the trees grew, and the btrfs race
/// found by dfs:2 needs about 5,500 schedules to shrink to its minimum; the
/// jbd2 shrink above took 0.26 s of its 3,000 then.
inline constexpr std::uint64_t shrink_schedules_total_default = 10000;

struct ShrinkOptions {
    std::uint32_t preemptions_max = 3;          // the search tries 0..this
    std::uint64_t schedules_per_search = 50000;  // cap of each search
    /// Every schedule shrinking runs (the bounded searches and each replay
    /// of a fewer-writes crash state), summed: shrinking stops when it is
    /// spent, and the repro is as shrunk as the budget allowed (issue 14).
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

}  // namespace scenarios
