// sim::resource: the footprint registry has no silent cap.
#include "sim/resource.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

namespace {

auto bits_set(const sim::Footprint& footprint) -> std::size_t {
    std::size_t count = 0;
    footprint.for_each_bit([&](std::size_t) { count++; });
    return count;
}

}  // namespace

TEST_CASE("resource: a full registry refuses a new name, loudly, and still answers the names it has") {
    sim::ResourceRegistry registry(3);
    const sim::Footprint a = registry.bit("a");
    const sim::Footprint b = registry.bit("b");
    const sim::Footprint c = registry.bit("c");
    CHECK(a == sim::Footprint::bit(0));
    CHECK(b == sim::Footprint::bit(1));
    CHECK(c == sim::Footprint::bit(2));
    CHECK(registry.bit("b") == b);
    try {
        (void)registry.bit("d");
        FAIL("a fourth name fitted in three bits");
    } catch (const std::length_error& error) {
        const std::string what = error.what();
        CHECK(what.find("'d'") != std::string::npos);
        CHECK(what.find("footprint_words") != std::string::npos);
    }
    CHECK(registry.bit("c") == c);
    CHECK(registry.names() == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("resource: names past the 64th still get a bit of their own, not footprint_all") {
    // Before, the 64th name and every later one mapped to footprint_all: the
    // test binary, which registers every model's names and its own, ran its
    // jbd2 locks and wait queues (ext4.i_rwsem, j_wait_updates ...) and
    // dpor_test's mutex as touching everything.
    // At least one name of its own, and past the 64th whatever ran before.
    int filler = 0;
    do {
        const sim::Footprint footprint =
            sim::resource("test.resource_test.filler." + std::to_string(filler++));
        CHECK(bits_set(footprint) == 1);
    } while (sim::resource_names().size() <= 66);
    const auto names = sim::resource_names();
    for (std::size_t index = 0; index < names.size(); index++) {
        const sim::Footprint footprint = sim::resource(names[index]);
        CHECK(footprint == sim::Footprint::bit(index));
        CHECK(bits_set(footprint) == 1);
        CHECK(sim::independent(footprint, sim::resource(names[(index + 1) % names.size()])));
        CHECK_FALSE(sim::independent(footprint, sim::footprint_all));
    }
    CHECK(names.size() > 64);
}

TEST_CASE("resource: footprints meet by any word, and list their bits in order") {
    const sim::Footprint low = sim::Footprint::bit(3);
    const sim::Footprint high = sim::Footprint::bit(sim::footprint_bits - 1);
    const sim::Footprint both = low | high;
    CHECK(both.meets(high));
    CHECK(both.meets(low));
    CHECK_FALSE(low.meets(high));
    CHECK((both & high) == high);
    CHECK(sim::Footprint{}.empty());
    CHECK_FALSE(both.empty());
    CHECK(both.has(sim::footprint_bits - 1));
    CHECK_FALSE(both.has(4));
    std::vector<std::size_t> bits;
    both.for_each_bit([&](std::size_t bit) { bits.push_back(bit); });
    CHECK(bits == std::vector<std::size_t>{3, sim::footprint_bits - 1});
    CHECK(bits_set(sim::footprint_all) == sim::footprint_bits);
    // The bits below a count (dpor's race analysis walks only the taken ones).
    CHECK(sim::Footprint::first(0).empty());
    CHECK(sim::Footprint::first(1) == sim::Footprint::bit(0));
    CHECK(bits_set(sim::Footprint::first(64)) == 64);
    CHECK_FALSE(sim::Footprint::first(64).has(64));
    CHECK(sim::Footprint::first(65).has(64));
    CHECK(bits_set(sim::Footprint::first(100)) == 100);
    CHECK(sim::Footprint::first(sim::footprint_bits) == sim::footprint_all);
}
