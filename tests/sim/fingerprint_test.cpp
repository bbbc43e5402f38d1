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
#include "sim/live.hpp"
#include "sim/scheduler.hpp"
#include "sim/yield_point.hpp"

namespace {

const sim::YieldPoint shared_read = sim::register_yield_point(
    "test.fingerprint.read", "a task read the shared value", {"test.fingerprint.shared"});

/// The world: one shared value, which two readers read twice each, one
/// writer sets twice and another once. Every step touches the value's
/// resource, so sleep sets prune no order; readers reading the same value
/// converge.
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
    auto hash_outside(sim::StateHash& out) -> bool override {
        // What the readers left behind when they ended.
        out.add(world_.a);
        out.add(world_.b);
        return hashes_;
    }

private:
    const World& world_;
    bool value_;
    bool hashes_;
};

struct Search {
    std::set<std::pair<std::uint64_t, std::uint64_t>> outcomes;  // (a, b) at the end of a schedule
    std::uint64_t schedules = 0;
    std::uint64_t cut = 0;
    std::uint64_t mismatches = 0;  // check mode's
    std::uint64_t states = 0;
    std::uint64_t dropped = 0;
    std::uint64_t collisions = 0;
    std::vector<sim::FingerprintMismatch> described;
};

/// How explore() keys and checks the states (the defaults: the value hashed,
/// the readers' sums declared live, no check mode).
struct Keying {
    bool hashes_value = true;
    bool hashes = true;
    bool declares_sum = true;
    bool check = false;
    std::uint64_t table_bytes = 0;  // DfsTree::limit_visited
    unsigned key_bits = 64;         // DfsTree::narrow_keys
};

/// Every schedule within `bound`, with `key`; the hasher hashes the value
/// unless `hashes_value` is false, and hashes nothing when `hashes` is false.
auto explore(sim::VisitedKey key, std::uint32_t bound, Keying keying = {}) -> Search {
    const bool hashes_value = keying.hashes_value;
    const bool hashes = keying.hashes;
    sim::DfsTree tree(bound, true);
    tree.measure_visited(key);
    if (keying.check) tree.check_fingerprints();
    tree.limit_visited(keying.table_bytes);
    tree.narrow_keys(keying.key_bits);
    Search search;
    do {
        World world;
        WorldHasher hasher(world, hashes_value, hashes);
        sim::Scheduler scheduler({.steps_max = 1000}, nullptr);
        const auto reader = [&world, &keying](std::uint64_t& result) {
            return [&world, &result, &keying] {
                // The reader's running sum is its local, declared live or
                // left out; it leaves the sum in the world when it ends. Its
                // two reads yield at one point: the round tells them apart.
                std::uint64_t sum = 0;
                const std::uint64_t none = 0;
                std::uint32_t round = 0;
                SIM_LIVE(round, keying.declares_sum ? sum : none);
                for (; round < 2; round++) {
                    sum = sum * 10 + world.value;
                    sim::yield(shared_read);
                }
                result = sum;
            };
        };
        scheduler.spawn("a", reader(world.a));
        scheduler.spawn("b", reader(world.b));
        scheduler.spawn("writer", [&world] {
            world.value = 1;
            sim::yield(shared_read);
            world.value = 2;
        });
        // A second writer: which one wrote last is in the value alone.
        scheduler.spawn("writer2", [&world] { world.value = 3; });
        sim::DfsStrategy strategy(tree);
        if (strategy.remembers_states()) scheduler.remember_reads(&hasher, strategy.needs_read_histories());
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
    search.mismatches = tree.stats().mismatches;
    search.states = tree.stats().states;
    search.dropped = tree.stats().dropped;
    search.collisions = tree.stats().collisions;
    search.described = tree.mismatches();
    return search;
}

}  // namespace

TEST_CASE("visited states: cutting revisits by reads or live locals reaches every outcome in fewer runs") {
    for (const std::uint32_t bound : {1U, 2U, 3U, sim::unbounded}) {
      for (const sim::VisitedKey key : {sim::VisitedKey::reads, sim::VisitedKey::locals}) {
        CAPTURE(bound);
        CAPTURE(static_cast<int>(key));
        const Search full = explore(sim::VisitedKey::none, bound);
        const Search cached = explore(key, bound);
        CHECK(cached.outcomes == full.outcomes);
        CHECK(full.outcomes.size() > 1);
        CHECK(cached.cut > 0);
        CHECK(cached.schedules < full.schedules);
      }
    }
}

TEST_CASE("visited states: the live-locals key needs every live local; check mode names the one left out") {
    const Search full = explore(sim::VisitedKey::none, sim::unbounded);
    const Search sound = explore(sim::VisitedKey::locals, sim::unbounded, {.check = true});
    CHECK(sound.mismatches == 0);
    CHECK(sound.outcomes == full.outcomes);
    // Check mode cuts nothing: it runs the whole search beside its merges.
    CHECK(sound.schedules == full.schedules);
    const Search blind = explore(sim::VisitedKey::locals, sim::unbounded, {.declares_sum = false});
    CHECK(blind.outcomes.size() < full.outcomes.size());
    const Search caught =
        explore(sim::VisitedKey::locals, sim::unbounded, {.declares_sum = false, .check = true});
    CHECK(caught.mismatches > 0);
    REQUIRE(!caught.described.empty());
    // The report names the task and the yield point whose step parted the runs.
    const std::string& what = caught.described.front().what;
    CHECK(what.find("test.fingerprint.read") != std::string::npos);
    CHECK((what.find("task a") != std::string::npos || what.find("task b") != std::string::npos));
}

TEST_CASE("visited states: check mode catches a resource whose hash leaves out its value") {
    const Search caught =
        explore(sim::VisitedKey::locals, sim::unbounded, {.hashes_value = false, .check = true});
    CHECK(caught.mismatches > 0);
}

TEST_CASE("visited states: a hash that leaves out what a task read merges states and loses outcomes") {
    const Search full = explore(sim::VisitedKey::none, sim::unbounded);
    const Search blind =
        explore(sim::VisitedKey::reads, sim::unbounded, {.hashes_value = false, .declares_sum = false});
    CHECK(blind.outcomes.size() < full.outcomes.size());
}

TEST_CASE("visited states: a world without hashes is never cut") {
    const Search full = explore(sim::VisitedKey::none, 2);
    const Search unhashed = explore(sim::VisitedKey::reads, 2, {.hashes = false});
    CHECK(unhashed.cut == 0);
    CHECK(unhashed.schedules == full.schedules);
    CHECK(unhashed.outcomes == full.outcomes);
}

TEST_CASE("visited states: a table at its memory bound remembers no more and loses no outcome") {
    const Search full = explore(sim::VisitedKey::none, sim::unbounded);
    const Search cached = explore(sim::VisitedKey::locals, sim::unbounded);
    const Search bounded = explore(sim::VisitedKey::locals, sim::unbounded, {.table_bytes = 2048});
    CHECK(cached.dropped == 0);
    CHECK(bounded.dropped > 0);
    CHECK(bounded.states < cached.states);
    CHECK(bounded.outcomes == full.outcomes);
    // Fewer states remembered, fewer runs cut: more runs than with the whole table, fewer than none.
    CHECK(bounded.schedules > cached.schedules);
    CHECK(bounded.schedules < full.schedules);
}

TEST_CASE("visited states: check mode tells a collision of keys from a merge") {
    const Search full = explore(sim::VisitedKey::none, sim::unbounded);
    // Three-bit keys: most key hits are collisions, which cut outcomes away
    // when the key alone decides.
    const Search narrow = explore(sim::VisitedKey::locals, sim::unbounded, {.key_bits = 3});
    CHECK(narrow.outcomes.size() < full.outcomes.size());
    // Check mode compares the states' parts at a hit: collisions are counted,
    // neither followed nor reported as a key that leaves something out.
    const Search checked = explore(sim::VisitedKey::locals, sim::unbounded, {.check = true, .key_bits = 3});
    CHECK(checked.collisions > 0);
    CHECK(checked.mismatches == 0);
    CHECK(checked.outcomes == full.outcomes);
    const Search wide = explore(sim::VisitedKey::locals, sim::unbounded, {.check = true});
    CHECK(wide.collisions == 0);
}

namespace {

const sim::YieldPoint spin_check = sim::register_yield_point(
    "test.fingerprint.spin", "a spinner found the flag clear and goes round again",
    {"test.fingerprint.flag"});

/// The world of the liveness test: a flag a spinner waits for and a setter
/// sets; progress is a task ending (an operation completing).
class SpinHasher final : public sim::ResourceHasher {
public:
    SpinHasher(const bool& flag, const sim::Scheduler& scheduler, const std::uint64_t& progress_at)
        : flag_(flag), scheduler_(scheduler), progress_at_(progress_at) {}
    auto hash_resources(sim::ResourceHashes& out) -> bool override {
        static const sim::Footprint flag = sim::resource("test.fingerprint.flag");
        out.add(flag, flag_ ? 2 : 1);
        return true;
    }
    auto hash_outside(sim::StateHash& /*out*/) -> bool override { return true; }
    [[nodiscard]] auto steps_without_progress() const -> std::uint64_t override {
        return scheduler_.steps() - progress_at_;
    }

private:
    const bool& flag_;
    const sim::Scheduler& scheduler_;
    const std::uint64_t& progress_at_;
};

/// Every schedule within `bound` of a spinner and a setter; true when some
/// schedule goes `window` steps without a task ending (a livelock).
auto finds_livelock(std::uint32_t bound, sim::VisitedKey key, std::uint64_t window) -> bool {
    sim::DfsTree tree(bound, true);
    tree.measure_visited(key);
    bool found = false;
    do {
        bool flag = false;
        std::uint64_t progress_at = 0;
        sim::Scheduler scheduler({.steps_max = 1000}, nullptr);
        SpinHasher hasher(flag, scheduler, progress_at);
        scheduler.spawn("spinner", [&flag] {
            while (!flag) sim::yield(spin_check);
        });
        scheduler.spawn("setter", [&flag] {
            sim::yield(spin_check);
            flag = true;
        });
        sim::DfsStrategy strategy(tree);
        if (strategy.remembers_states()) scheduler.remember_reads(&hasher, strategy.needs_read_histories());
        std::size_t running = 2;
        while (scheduler.step(strategy) != sim::StepOutcome::finished) {
            std::size_t now_running = 0;
            for (sim::TaskId task = 0; task < 2; task++)
                now_running += scheduler.task_state(task) == sim::TaskState::finished ? 0 : 1;
            if (now_running != running) progress_at = scheduler.steps();
            running = now_running;
            strategy.after_step(scheduler);
            if (strategy.abandoned()) break;
            if (scheduler.steps() - progress_at >= window) {
                found = true;
                break;
            }
        }
        REQUIRE(tree.stats().schedules < 100000);
    } while (!found && tree.backtrack());
    return found;
}

}  // namespace

TEST_CASE("visited states: the liveness window is a budget: a spin that revisits its state livelocks") {
    // Within no preemption the spinner, never blocking, spins forever: its
    // every turn is the same state with more steps since a task ended. A
    // key that cut that revisit would never see the window run out.
    for (const sim::VisitedKey key : {sim::VisitedKey::none, sim::VisitedKey::locals}) {
        CAPTURE(static_cast<int>(key));
        CHECK(finds_livelock(0, key, 20));
        // One preemption lets the setter in; the spin then has turns to
        // spare only where the window is short.
        CHECK(finds_livelock(1, key, 20));
    }
}
