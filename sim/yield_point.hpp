#pragma once
// Named yield points. A fiber gives up the CPU only at one of these, and every
// yield point is also a crash point, so one name serves both. Names follow
// `layer.mechanism.step` (btrfs.fsync.after_full_sync_check). Points register
// themselves at static initialisation; `crashsim list` prints the registry.
#include <cstdint>
#include <string_view>
#include <vector>

namespace sim {

struct YieldPoint {
    std::string_view name;
    std::string_view about;
    std::uint32_t id;
};

/// Registers a yield point; call it to initialise a namespace-scope
/// `inline const YieldPoint`. Names must be unique.
auto register_yield_point(std::string_view name, std::string_view about) -> YieldPoint;

/// Every registered point, sorted by name.
auto yield_points() -> std::vector<YieldPoint>;
auto find_yield_point(std::string_view name) -> const YieldPoint*;
auto yield_point_count() -> std::uint32_t;
auto yield_point_by_id(std::uint32_t id) -> const YieldPoint&;

}  // namespace sim
