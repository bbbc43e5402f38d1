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
}  // namespace sim
