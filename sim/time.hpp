#pragma once
#include <cstdint>

namespace sim {
/// Virtual time in nanoseconds since the start of a run. No wall clock is read
/// below cli/crashsim.cpp.
using Instant = std::uint64_t;
using Duration = std::uint64_t;

inline constexpr Duration nanoseconds = 1;
inline constexpr Duration microseconds = 1000;
inline constexpr Duration milliseconds = 1000 * microseconds;
inline constexpr Duration seconds = 1000 * milliseconds;

/// The longest a runnable task waits for a CPU: CFS's scheduling period,
/// sysctl_sched_latency (kernel/sched/fair.c: 6 ms * (1 + ilog2(CPUs)), the
/// CPUs capped at 8), 24 ms. Steps take no virtual time, so a task's sleep
/// that ends later than this after another task became runnable would mean
/// that task never ran meanwhile: the scheduler does not offer it (a sleep
/// polling in a loop cannot starve a runnable task for ever).
inline constexpr Duration sched_latency = 24 * milliseconds;
}  // namespace sim
