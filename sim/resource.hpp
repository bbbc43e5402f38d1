#pragma once
// Footprints for partial-order reduction: which shared resources a step
// touches, as a bitmask. Two steps whose footprints do not intersect commute,
// so an exhaustive search need not run both orders. Locks, wait queues, the
// disk and the oracle add their bit when used; each yield point declares the
// rest of what the code next to it touches (see YieldPoint::touches).
#include <cstdint>
#include <string_view>

namespace sim {

using Footprint = std::uint64_t;
/// Touches everything: depends on every other step (timers, undeclared points).
inline constexpr Footprint footprint_all = ~Footprint{0};

/// The bit of a named resource; the same name gives the same bit. Past 63
/// names every further name maps to footprint_all (conservative, never unsound).
auto resource(std::string_view name) -> Footprint;

/// Steps with these footprints may be reordered without changing the outcome.
constexpr auto independent(Footprint a, Footprint b) -> bool { return (a & b) == 0; }

}  // namespace sim
