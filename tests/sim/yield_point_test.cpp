// The yield-point registry (sim/yield_point.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "sim/yield_point.hpp"
#include "tests/sim/engine_support.hpp"

using namespace engine_test;

TEST_CASE("yield points: registered points are found by name and by id, and listed sorted") {
    const sim::YieldPoint* found = sim::find_yield_point("test.scheduler_test.b");
    REQUIRE(found != nullptr);
    CHECK(found->id == point_b.id);
    CHECK(found->about == "second test point");
    CHECK(sim::find_yield_point("test.scheduler_test.no_such_point") == nullptr);
    CHECK(point_a.id != point_b.id);
    CHECK(point_b.id != point_c.id);
    CHECK(sim::yield_point_by_id(point_c.id).name == "test.scheduler_test.c");
    const std::vector<sim::YieldPoint> all = sim::yield_points();
    CHECK(all.size() == sim::yield_point_count());
    CHECK(std::is_sorted(all.begin(), all.end(),
                         [](const auto& a, const auto& b) { return a.name < b.name; }));
    std::set<std::uint32_t> ids;
    for (const auto& point : all) ids.insert(point.id);
    CHECK(ids.size() == all.size());
}
