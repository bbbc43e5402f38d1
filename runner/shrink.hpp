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

struct ShrinkOptions {
    std::uint32_t preemptions_max = 3;          // the search tries 0..this
    std::uint64_t schedules_per_search = 50000;  // cap of each search
};

struct ShrinkResult {
    Repro repro;                    // the shrunk repro (trace hash of the shrunk run)
    RunOutcome outcome;             // the shrunk run, traced
    std::vector<std::string> log;   // what was removed, one line each; capped searches
    bool changed = false;
    /// Stopped by request_stop() (SIGINT, SIGTERM): the repro is as shrunk as
    /// it got, and its log says so.
    bool interrupted = false;
};

/// Shrinks `repro`; the result still fails the same checker at the same place.
/// `repro` must replay to its violation (load_repro checks a repro file).
auto shrink(const Repro& repro, const ShrinkOptions& options) -> ShrinkResult;

}  // namespace scenarios
