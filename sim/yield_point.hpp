#pragma once
// Named yield points. A fiber gives up the CPU only at one of these, and every
// yield point is also a crash point, so one name serves both. Names follow
// `layer.mechanism.step` (btrfs.fsync.after_full_sync_check). Points register
// themselves at static initialisation; `crashsim list` prints the registry.
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "sim/resource.hpp"

namespace sim {

struct YieldPoint {
    std::string_view name;
    std::string_view about;
    std::uint32_t id;
    /// What the code on either side of this point touches, up to the previous
    /// and the next yield point of the same operation (tasks also yield at
    /// every operation's start, so no stretch spans two operations). A point
    /// that declares nothing touches everything.
    Footprint touches;
    /// Whether `touches` covers the code before it back to the task's previous
    /// point: false for a point between operations (workload.op_begin), which
    /// names only its own; then what the operation's start covered
    /// (sim::cover) reaches the step that ends there.
    bool covers_before = true;
};

/// Registers a yield point; call it to initialise a namespace-scope
/// `inline const YieldPoint`. Names must be unique. `touches` names the
/// resources (sim::resource) the code around it uses besides locks, wait
/// queues, the disk and the oracle, which report themselves.
auto register_yield_point(std::string_view name, std::string_view about,
                          std::initializer_list<std::string_view> touches = {}, bool covers_before = true)
    -> YieldPoint;

/// Every registered point, sorted by name.
auto yield_points() -> std::vector<YieldPoint>;
auto find_yield_point(std::string_view name) -> const YieldPoint*;
auto yield_point_count() -> std::uint32_t;
auto yield_point_by_id(std::uint32_t id) -> const YieldPoint&;

}  // namespace sim
