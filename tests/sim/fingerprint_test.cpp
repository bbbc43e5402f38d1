// Visited states keyed by the hashes of what each task read
// (sim/fingerprint.hpp, sim::VisitedKey::reads): a search that cuts revisits
// reaches every outcome the full search reaches, in fewer schedules, and
// misses outcomes when a resource's hash leaves out what a task read.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <utility>

#include "sim/dfs.hpp"
#include "sim/fingerprint.hpp"
#include "sim/scheduler.hpp"
#include "sim/yield_point.hpp"

namespace {

const sim::YieldPoint shared_read = sim::register_yield_point(
    "test.fingerprint.read", "a task read the shared value", {"test.fingerprint.shared"});

/// The world: one shared value, which two readers read twice each and a
/// writer sets twice. Every step touches the value's resource, so sleep sets
/// prune no order; readers reading the same value converge.
struct World {
    std::uint64_t value = 0;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
};

class WorldHasher final : public sim::ResourceHasher {
public:
    WorldHasher(const World& world, bool hashes_value, bool hashes)
        : world_(world), value_(hashes_value), hashes_(hashes) {}
    auto hash_resources(sim::ResourceHashes& out) -> bool override {
        if (!hashes_) return false;
        static const sim::Footprint shared = sim::resource("test.fingerprint.shared");
        out.add(shared, value_ ? world_.value : 0);
        return true;
    }
    auto hash_outside(sim::StateHash&) -> bool override { return hashes_; }

private:
    const World& world_;
    bool value_;
    bool hashes_;
};

struct Search {
    std::set<std::pair<std::uint64_t, std::uint64_t>> outcomes;  // (a, b) at the end of a schedule
    std::uint64_t schedules = 0;
    std::uint64_t cut = 0;
};

/// Every schedule within `bound`, with `key`; the hasher hashes the value
/// unless `hashes_value` is false, and hashes nothing when `hashes` is false.
auto explore(sim::VisitedKey key, std::uint32_t bound, bool hashes_value = true, bool hashes = true)
    -> Search {
    sim::DfsTree tree(bound, true);
    tree.measure_visited(key);
    Search search;
    do {
        World world;
        WorldHasher hasher(world, hashes_value, hashes);
        sim::Scheduler scheduler({.steps_max = 1000}, nullptr);
        const auto reader = [&world](std::uint64_t& sum) {
            return [&world, &sum] {
                sum += world.value;
                sim::yield(shared_read);
                sum = sum * 10 + world.value;
                sim::yield(shared_read);
            };
        };
        scheduler.spawn("a", reader(world.a));
        scheduler.spawn("b", reader(world.b));
        scheduler.spawn("writer", [&world] {
            world.value = 1;
            sim::yield(shared_read);
            world.value = 2;
        });
        sim::DfsStrategy strategy(tree);
        if (strategy.remembers_states()) scheduler.remember_reads(&hasher);
        bool abandoned = false;
        while (scheduler.step(strategy) != sim::StepOutcome::finished) {
            strategy.after_step(scheduler);
            if ((abandoned = strategy.abandoned())) break;
        }
        if (!abandoned) search.outcomes.insert({world.a, world.b});
        REQUIRE(tree.stats().schedules < 100000);
    } while (tree.backtrack());
    search.schedules = tree.stats().schedules;
    search.cut = tree.stats().cut_visited;
    return search;
}

}  // namespace

TEST_CASE("visited states: cutting revisits by what tasks read reaches every outcome in fewer runs") {
    for (const std::uint32_t bound : {1U, 2U, 3U, sim::unbounded}) {
        CAPTURE(bound);
        const Search full = explore(sim::VisitedKey::none, bound);
        const Search cached = explore(sim::VisitedKey::reads, bound);
        CHECK(cached.outcomes == full.outcomes);
        CHECK(full.outcomes.size() > 1);
        CHECK(cached.cut > 0);
        // At bound 1 the cuts fall on last decisions: runs end sooner, none is saved.
        if (bound == 1) CHECK(cached.schedules == full.schedules);
        if (bound > 1) CHECK(cached.schedules < full.schedules);
    }
}

TEST_CASE("visited states: a hash that leaves out what a task read merges states and loses outcomes") {
    const Search full = explore(sim::VisitedKey::none, sim::unbounded);
    const Search blind = explore(sim::VisitedKey::reads, sim::unbounded, false);
    CHECK(blind.outcomes.size() < full.outcomes.size());
}

TEST_CASE("visited states: a world without hashes is never cut") {
    const Search full = explore(sim::VisitedKey::none, 2);
    const Search unhashed = explore(sim::VisitedKey::reads, 2, true, false);
    CHECK(unhashed.cut == 0);
    CHECK(unhashed.schedules == full.schedules);
    CHECK(unhashed.outcomes == full.outcomes);
}
