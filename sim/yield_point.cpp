#include "sim/yield_point.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <utility>

#include "sim/assert.hpp"

namespace sim {
namespace {

// A deque keeps element addresses stable while points register.
auto registry() -> std::deque<YieldPoint>& {
    static std::deque<YieldPoint> points;
    return points;
}

}  // namespace

namespace detail {
void assert_fail(const char* condition, const char* file, int line) {
    std::fprintf(stderr, "crashsim internal bug: %s:%d: assertion failed: %s\n", file, line,
                 condition);
    // Cleared first: an assertion failing while the context describes itself
    // must not recurse.
    if (const AssertContext* context = std::exchange(assert_context, nullptr)) {
        std::fputs("crashsim internal bug: in ", stderr);
        context->describe(stderr);
        std::fputc('\n', stderr);
    }
    std::fflush(stderr);
    std::abort();
}
}  // namespace detail

auto register_yield_point(std::string_view name, std::string_view about,
                          std::initializer_list<std::string_view> touches, bool covers_before) -> YieldPoint {
    auto& points = registry();
    for (const auto& point : points) SIM_ASSERT(point.name != name);
    Footprint footprint = touches.size() == 0 ? footprint_all : Footprint{};
    for (std::string_view resource_name : touches) footprint |= resource(resource_name);
    const YieldPoint point{name, about, static_cast<std::uint32_t>(points.size()), footprint, covers_before};
    points.push_back(point);
    return point;
}

auto yield_points() -> std::vector<YieldPoint> {
    std::vector<YieldPoint> sorted(registry().begin(), registry().end());
    std::sort(sorted.begin(), sorted.end(),
              [](const YieldPoint& a, const YieldPoint& b) { return a.name < b.name; });
    return sorted;
}

auto find_yield_point(std::string_view name) -> const YieldPoint* {
    for (const auto& point : registry()) {
        if (point.name == name) return &point;
    }
    return nullptr;
}

auto yield_point_count() -> std::uint32_t {
    return static_cast<std::uint32_t>(registry().size());
}

auto yield_point_by_id(std::uint32_t id) -> const YieldPoint& {
    SIM_ASSERT(id < registry().size());
    return registry()[id];
}

}  // namespace sim
