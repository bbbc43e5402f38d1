// sim::VisitTable: the visited-state table's fixed-size entries, found in
// the order remembered, within a bound in bytes; and Visit::covers, the
// rule a revisit is cut by.
#include "sim/visit_table.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

auto visit(std::uint64_t key, std::uint32_t steps) -> sim::Visit {
    sim::Visit made;
    made.key = key;
    made.steps = steps;
    return made;
}

/// The steps of every visit of `key`, in the order the table finds them.
auto steps_of(const sim::VisitTable& table, std::uint64_t key) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> found;
    const sim::Visit* none = table.find(key, [&](const sim::Visit& each) {
        found.push_back(each.steps);
        return false;
    });
    CHECK(none == nullptr);
    return found;
}

}  // namespace

TEST_CASE("visit table: a key's visits are found in the order remembered, across growth") {
    // Few keys, many visits of each: long runs of one key, some wrapping
    // around the slots' end, which growth must place again in order.
    for (const std::uint64_t keys : {8U, 61U, 257U}) {
        CAPTURE(keys);
        sim::VisitTable table;
        std::vector<std::vector<std::uint32_t>> expected(keys);
        for (std::uint32_t i = 0; i < 5000; i++) {
            const std::uint64_t key = (i * 7919U) % keys;
            REQUIRE(table.insert(visit(key, i), 0));
            expected[key].push_back(i);
        }
        CHECK(table.size() == 5000);
        for (std::uint64_t key = 0; key < keys; key++) {
            CAPTURE(key);
            CHECK(steps_of(table, key) == expected[key]);
        }
    }
    sim::VisitTable table;
    std::vector<std::vector<std::uint32_t>> expected(8);
    for (std::uint32_t i = 0; i < 5000; i++) {
        REQUIRE(table.insert(visit((i * 7919U) % 8, i), 0));
        expected[(i * 7919U) % 8].push_back(i);
    }
    CHECK(steps_of(table, 8).empty());
    // The first visit the pick accepts, not the first of the key.
    const sim::Visit* found = table.find(3, [](const sim::Visit& each) { return each.steps > 100; });
    REQUIRE(found != nullptr);
    CHECK(found->steps == expected[3][static_cast<std::size_t>(
                              std::find_if(expected[3].begin(), expected[3].end(),
                                           [](std::uint32_t s) { return s > 100; }) -
                              expected[3].begin())]);
    CHECK(found->ordinal == found->steps);
}

TEST_CASE("visit table: a copy finds what the table found, and a later visit of either stays its own") {
    sim::VisitTable table;
    for (std::uint32_t i = 0; i < 100; i++) REQUIRE(table.insert(visit(i % 7, i), 0));
    sim::VisitTable copy(table);
    REQUIRE(copy.insert(visit(3, 1000), 0));
    REQUIRE(table.insert(visit(3, 2000), 0));
    CHECK(steps_of(copy, 3).back() == 1000);
    CHECK(steps_of(table, 3).back() == 2000);
    CHECK(steps_of(copy, 5) == steps_of(table, 5));
    sim::VisitTable moved(std::move(copy));
    CHECK(moved.size() == 101);
    CHECK(steps_of(moved, 3).back() == 1000);
    copy = moved;
    CHECK(steps_of(copy, 3) == steps_of(moved, 3));
}

TEST_CASE("visit table: a full table at its bound keeps what it has and remembers nothing more") {
    sim::VisitTable table;
    const std::uint64_t limit = 1024 * sizeof(sim::Visit);  // 1,024 slots, not their double
    std::uint64_t kept = 0;
    for (std::uint32_t i = 0; i < 2000; i++) {
        if (table.insert(visit(i * 0x9E3779B97F4A7C15ULL, i), limit)) kept++;
    }
    CHECK(kept == 768);  // three quarters of the slots
    CHECK(table.size() == 768);
    CHECK(table.bytes() <= limit);
    CHECK(steps_of(table, 767 * 0x9E3779B97F4A7C15ULL) == std::vector<std::uint32_t>{767});
    CHECK(steps_of(table, 768 * 0x9E3779B97F4A7C15ULL).empty());
    table.clear();
    CHECK(table.size() == 0);
    CHECK(steps_of(table, 0).empty());
}

TEST_CASE("visit table: a first visit covers a revisit with no less budget spent and a larger sleep set") {
    sim::Visit first = visit(1, 10);
    first.preemptions = 1;
    first.charges = {1, 0, 0};
    first.without_progress = 5;
    first.sleep = 0b0101;
    sim::Visit revisit = first;
    CHECK(first.covers(revisit));
    revisit.sleep = 0b1101;
    CHECK(first.covers(revisit));
    revisit.sleep = 0b0100;  // task 0 asleep at the first visit, awake now
    CHECK_FALSE(first.covers(revisit));
    revisit = first;
    revisit.preemptions = 0;
    CHECK_FALSE(first.covers(revisit));
    revisit = first;
    revisit.steps = 9;
    CHECK_FALSE(first.covers(revisit));
    revisit = first;
    revisit.charges = {0, 0, 0};
    CHECK_FALSE(first.covers(revisit));
    revisit = first;
    revisit.without_progress = 6;  // more of the liveness window spent
    CHECK_FALSE(first.covers(revisit));
    revisit = first;
    revisit.preemptions = 2;
    revisit.charges = {1, 1, 0};
    revisit.steps = 12;
    revisit.without_progress = 3;
    CHECK(first.covers(revisit));
    first.covers_none = true;
    CHECK_FALSE(first.covers(revisit));
}
