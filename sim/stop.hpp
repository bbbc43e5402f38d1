#pragma once
// The stop request of SIGINT and SIGTERM: cli/crashsim.cpp's signal handler
// sets it (through runner::request_stop), and every long phase polls it:
// campaigns between schedules, a run every 65536 steps, the loader while it
// reads, parses and expands a file. A lock-free atomic, so that setting it is
// async-signal-safe. Here, at the bottom of the layering, so that every
// folder can poll it.
#include <atomic>

namespace sim {

inline std::atomic<bool> stop_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free);

inline void request_stop() { stop_flag.store(true, std::memory_order_relaxed); }
inline auto stop_requested() -> bool { return stop_flag.load(std::memory_order_relaxed); }
/// For tests only: a process that was asked to stop stays stopped.
inline void clear_stop() { stop_flag.store(false, std::memory_order_relaxed); }

}  // namespace sim
