// PRNG streams (sim/prng.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "sim/prng.hpp"
#include "tests/sim/engine_support.hpp"

using engine_test::numbered;

TEST_CASE("prng: the same seed gives the same sequence, another seed another") {
    sim::Prng first(42);
    sim::Prng second(42);
    sim::Prng other(43);
    bool differs = false;
    for (int i = 0; i < 100; i++) {
        const std::uint64_t value = first.next();
        CHECK(value == second.next());
        if (value != other.next()) differs = true;
    }
    CHECK(differs);
}

TEST_CASE("prng: drawing from one fork leaves another fork's sequence unchanged") {
    const sim::Prng root(2024);
    sim::Prng reference = root.fork("device");
    std::vector<std::uint64_t> expected;
    for (int i = 0; i < 20; i++) expected.push_back(reference.next());

    sim::Prng scheduling = root.fork("schedule");
    sim::Prng device = root.fork("device");
    for (int i = 0; i < 1000; i++) scheduling.next();
    std::vector<std::uint64_t> drawn;
    for (int i = 0; i < 20; i++) drawn.push_back(device.next());
    CHECK(drawn == expected);
    // Forks with different names are different streams.
    sim::Prng again_scheduling = root.fork("schedule");
    sim::Prng again_device = root.fork("device");
    CHECK(again_scheduling.next() != again_device.next());
}

TEST_CASE("prng: fork does not advance the parent stream") {
    sim::Prng forked(7);
    sim::Prng untouched(7);
    for (int i = 0; i < 5; i++) static_cast<void>(forked.fork(numbered("x", i)));
    for (int i = 0; i < 10; i++) CHECK(forked.next() == untouched.next());
}

TEST_CASE("prng: below(bound) stays in [0, bound) and reaches every value of a small bound") {
    sim::Prng prng(11);
    for (std::uint64_t bound : {1ULL, 2ULL, 3ULL, 7ULL, 1000ULL, (1ULL << 63) + 1, ~0ULL}) {
        for (int i = 0; i < 2000; i++) CHECK(prng.below(bound) < bound);
    }
    for (int i = 0; i < 100; i++) CHECK(prng.below(1) == 0);
    std::set<std::uint64_t> seen;
    for (int i = 0; i < 600; i++) seen.insert(prng.below(6));
    CHECK(seen.size() == 6);
}

TEST_CASE("prng: chance of 0/n is never and n/n is always") {
    sim::Prng prng(3);
    int hits = 0;
    for (int i = 0; i < 1000; i++) {
        CHECK_FALSE(prng.chance(sim::Ratio{0, 5}));
        CHECK(prng.chance(sim::Ratio{5, 5}));
        if (prng.chance(sim::Ratio{1, 2})) hits++;
    }
    CHECK(hits > 350);
    CHECK(hits < 650);
}
