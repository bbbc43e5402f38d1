// sim::RangeMap: an interval map whose values shift with the key.
#include "sim/range_map.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <ostream>
#include <tuple>
#include <utility>
#include <vector>

namespace {

/// A run of consecutive numbers with a colour: the value at key k of a
/// segment starting at s is {base + (k - s), colour}.
struct Run {
    std::uint64_t base;
    int colour;
    [[nodiscard]] auto shifted(std::uint64_t n) const -> Run { return {base + n, colour}; }
    auto operator==(const Run&) const -> bool = default;
};

auto operator<<(std::ostream& out, const Run& run) -> std::ostream& {
    return out << "{" << run.base << ", colour " << run.colour << "}";
}

using Map = sim::RangeMap<Run>;
using Piece = std::tuple<std::uint64_t, std::uint64_t, Run>;
using Hole = std::pair<std::uint64_t, std::uint64_t>;

auto segments(const Map& map) -> std::vector<Piece> {
    std::vector<Piece> out;
    map.for_each([&](std::uint64_t start, std::uint64_t end, const Run& value) {
        out.emplace_back(start, end, value);
    });
    return out;
}

auto pieces(const Map& map, std::uint64_t start, std::uint64_t end) -> std::vector<Piece> {
    std::vector<Piece> out;
    map.for_each(start, end, [&](std::uint64_t s, std::uint64_t e, const Run& value) {
        out.emplace_back(s, e, value);
    });
    return out;
}

auto holes(const Map& map, std::uint64_t start, std::uint64_t end) -> std::vector<Hole> {
    std::vector<Hole> out;
    map.for_each_hole(start, end,
                      [&](std::uint64_t s, std::uint64_t e) { out.emplace_back(s, e); });
    return out;
}

}  // namespace

TEST_CASE("range_map: an empty map finds nothing and is all hole") {
    const Map map;
    CHECK(map.empty());
    CHECK(map.segment_count() == 0);
    CHECK(map.end_key() == 0);
    CHECK_FALSE(map.find(0).has_value());
    CHECK(pieces(map, 0, 100).empty());
    CHECK(holes(map, 5, 9) == std::vector<Hole>{{5, 9}});
}

TEST_CASE(
    "range_map: find inside a segment returns the value shifted by the distance from its start") {
    Map map;
    map.assign(10, 20, Run{100, 1});
    CHECK(map.segment_count() == 1);
    CHECK(map.end_key() == 20);
    CHECK(map.find(10) == Run{100, 1});
    CHECK(map.find(15) == Run{105, 1});
    CHECK(map.find(19) == Run{109, 1});
    // [start, end): the end is outside, and so is anything before start.
    CHECK_FALSE(map.find(20).has_value());
    CHECK_FALSE(map.find(9).has_value());
}

TEST_CASE("range_map: assigning inside a segment splits it into three") {
    Map map;
    map.assign(0, 10, Run{0, 1});
    map.assign(3, 5, Run{500, 2});
    CHECK(segments(map) ==
          std::vector<Piece>{{0, 3, Run{0, 1}}, {3, 5, Run{500, 2}}, {5, 10, Run{5, 1}}});
    // The tail keeps the shifted value, so lookups are unchanged outside [3, 5).
    CHECK(map.find(7) == Run{7, 1});
    CHECK(map.find(4) == Run{501, 2});
}

TEST_CASE("range_map: assigning across segment boundaries replaces what it covers") {
    Map map;
    map.assign(0, 10, Run{0, 1});
    map.assign(10, 20, Run{0, 2});
    map.assign(20, 30, Run{0, 3});
    map.assign(5, 25, Run{1000, 4});
    CHECK(segments(map) ==
          std::vector<Piece>{{0, 5, Run{0, 1}}, {5, 25, Run{1000, 4}}, {25, 30, Run{5, 3}}});
}

TEST_CASE("range_map: erase in the middle leaves a hole and shifted tail") {
    Map map;
    map.assign(0, 10, Run{0, 1});
    map.erase(3, 6);
    CHECK(segments(map) == std::vector<Piece>{{0, 3, Run{0, 1}}, {6, 10, Run{6, 1}}});
    CHECK_FALSE(map.find(3).has_value());
    CHECK_FALSE(map.find(5).has_value());
    CHECK(map.find(6) == Run{6, 1});
    CHECK(holes(map, 0, 10) == std::vector<Hole>{{3, 6}});
}

TEST_CASE("range_map: erase across segments and of empty or unmapped ranges") {
    Map map;
    map.assign(0, 10, Run{0, 1});
    map.assign(20, 30, Run{0, 2});
    map.erase(5, 5);  // empty range: nothing
    CHECK(map.segment_count() == 2);
    map.erase(40, 50);  // unmapped: nothing
    map.erase(10, 20);  // exactly the hole: nothing
    CHECK(segments(map) == std::vector<Piece>{{0, 10, Run{0, 1}}, {20, 30, Run{0, 2}}});
    map.erase(8, 22);
    CHECK(segments(map) == std::vector<Piece>{{0, 8, Run{0, 1}}, {22, 30, Run{2, 2}}});
    map.erase(0, 100);
    CHECK(map.empty());
    CHECK(map.end_key() == 0);
}

TEST_CASE("range_map: adjacent segments that continue each other merge") {
    Map map;
    map.assign(0, 5, Run{100, 1});
    map.assign(5, 10, Run{105, 1});  // merges with the segment on its left
    CHECK(segments(map) == std::vector<Piece>{{0, 10, Run{100, 1}}});
    map.assign(20, 30, Run{120, 1});
    map.assign(15, 20, Run{115, 1});  // merges with the segment on its right
    CHECK(map.segment_count() == 2);
    map.assign(10, 15, Run{110, 1});  // fills the gap: merges on both sides
    CHECK(segments(map) == std::vector<Piece>{{0, 30, Run{100, 1}}});
}

TEST_CASE("range_map: adjacent segments that do not continue each other stay apart") {
    Map map;
    map.assign(0, 5, Run{100, 1});
    map.assign(5, 10, Run{106, 1});   // skips a number
    map.assign(10, 15, Run{111, 2});  // continues the number but not the colour
    map.assign(16, 20, Run{116, 2});  // continues the value but not adjacent
    CHECK(segments(map) == std::vector<Piece>{{0, 5, Run{100, 1}},
                                              {5, 10, Run{106, 1}},
                                              {10, 15, Run{111, 2}},
                                              {16, 20, Run{116, 2}}});
}

TEST_CASE("range_map: rewriting a split-off piece with its old value merges it back") {
    Map map;
    map.assign(0, 10, Run{0, 1});
    map.assign(3, 5, Run{900, 2});
    CHECK(map.segment_count() == 3);
    map.assign(3, 5, Run{3, 1});
    CHECK(segments(map) == std::vector<Piece>{{0, 10, Run{0, 1}}});
    map.erase(4, 6);
    map.assign(4, 6, Run{4, 1});
    CHECK(segments(map) == std::vector<Piece>{{0, 10, Run{0, 1}}});
}

TEST_CASE(
    "range_map: for_each over a range clips the first and last pieces and shifts their values") {
    Map map;
    map.assign(0, 10, Run{0, 1});
    map.assign(10, 20, Run{50, 2});
    map.assign(30, 40, Run{70, 3});
    CHECK(pieces(map, 5, 35) ==
          std::vector<Piece>{{5, 10, Run{5, 1}}, {10, 20, Run{50, 2}}, {30, 35, Run{70, 3}}});
    // A range inside one segment yields one clipped piece.
    CHECK(pieces(map, 12, 14) == std::vector<Piece>{{12, 14, Run{52, 2}}});
    // A range inside a hole yields nothing; a range ending at a start too.
    CHECK(pieces(map, 22, 28).empty());
    CHECK(pieces(map, 20, 30).empty());
    // Start exactly at a segment start, end exactly at a segment end.
    CHECK(pieces(map, 10, 20) == std::vector<Piece>{{10, 20, Run{50, 2}}});
}

TEST_CASE("range_map: for_each_hole reports the unmapped pieces of a range") {
    Map map;
    map.assign(10, 20, Run{0, 1});
    map.assign(30, 40, Run{0, 2});
    CHECK(holes(map, 0, 50) == std::vector<Hole>{{0, 10}, {20, 30}, {40, 50}});
    CHECK(holes(map, 15, 35) == std::vector<Hole>{{20, 30}});
    CHECK(holes(map, 12, 18).empty());
    CHECK(holes(map, 10, 40) == std::vector<Hole>{{20, 30}});
    CHECK(holes(map, 22, 25) == std::vector<Hole>{{22, 25}});
}

TEST_CASE("range_map: equality compares segments and values, clear empties") {
    Map first;
    Map second;
    first.assign(0, 10, Run{0, 1});
    second.assign(0, 4, Run{0, 1});
    second.assign(4, 10, Run{4, 1});  // merges: the same single segment
    CHECK(first == second);
    second.assign(9, 10, Run{0, 1});
    CHECK_FALSE(first == second);
    Map copy = first;
    copy.assign(3, 4, Run{3, 2});
    CHECK_FALSE(copy == first);
    CHECK(first.find(3) == Run{3, 1});  // a copy is independent
    first.clear();
    CHECK(first.empty());
    CHECK(first == Map{});
}

TEST_CASE("range_map: keys near the top of the 64-bit range work") {
    Map map;
    const std::uint64_t top = ~std::uint64_t{0};
    map.assign(top - 10, top, Run{0, 1});
    CHECK(map.find(top - 1) == Run{9, 1});
    CHECK_FALSE(map.find(top).has_value());
    map.erase(top - 5, top);
    CHECK(map.end_key() == top - 5);
    CHECK(holes(map, top - 12, top) == std::vector<Hole>{{top - 12, top - 10}, {top - 5, top}});
}
