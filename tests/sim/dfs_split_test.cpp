// The split search (DfsTree::split: --jobs and --shard on dfs) and the
// search-size estimator (knuth_probe) on small synthetic task sets: the units
// of a split sum to the unsplit search's counts, and the estimate is exact on
// a tree whose every path has the same shape.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "sim/dfs.hpp"
#include "sim/scheduler.hpp"
#include "sim/yield_point.hpp"

namespace {

const sim::YieldPoint split_own_a =
    sim::register_yield_point("test.dfs_split_test.own_a", "task a's own data", {"test.dfs_split_test.a"});
const sim::YieldPoint split_own_b =
    sim::register_yield_point("test.dfs_split_test.own_b", "task b's own data", {"test.dfs_split_test.b"});
const sim::YieldPoint split_shared = sim::register_yield_point(
    "test.dfs_split_test.shared", "data every task touches", {"test.dfs_split_test.shared"});

/// A task set: `tasks` tasks of `yields` yield points each; task 0 and the
/// last touch their own data unless `dependent`, the others the shared data.
struct TaskSet {
    int tasks = 2;
    int yields = 1;
    bool dependent = false;
};

struct Tally {
    std::uint64_t runs = 0;
    std::uint64_t abandoned = 0;
    std::uint64_t fresh_steps = 0;  // stands for the crash states: one per fresh step
    std::uint64_t steps = 0;
    sim::DfsStats stats;
    auto operator==(const Tally& other) const -> bool {
        return runs == other.runs && abandoned == other.abandoned && fresh_steps == other.fresh_steps &&
               steps == other.steps &&
               stats.schedules == other.stats.schedules && stats.pruned_sleep == other.stats.pruned_sleep &&
               stats.pruned_bound == other.stats.pruned_bound && stats.abandoned == other.stats.abandoned;
    }
};

/// One run of the task set under `tree`'s strategy.
auto run_once(const TaskSet& set, sim::DfsTree& tree) -> sim::ProbeRun {
    sim::Scheduler scheduler({.steps_max = 1000}, nullptr);
    for (int task = 0; task < set.tasks; task++) {
        const sim::YieldPoint* point = &split_shared;
        if (!set.dependent && task == 0) point = &split_own_a;
        if (!set.dependent && task == set.tasks - 1) point = &split_own_b;
        scheduler.spawn("t" + std::to_string(task), [point, &set] {
            for (int i = 0; i < set.yields; i++) sim::yield(*point);
        });
    }
    sim::DfsStrategy strategy(tree);
    sim::ProbeRun counted;
    while (scheduler.step(strategy) != sim::StepOutcome::finished) {
        strategy.after_step(scheduler);
        if (strategy.abandoned()) break;
        if (strategy.fresh()) counted.crash_states++;
    }
    counted.steps = scheduler.steps();
    return counted;
}

/// The whole search, or with `depth` set the units `claim` gives it.
auto search(const TaskSet& set, std::uint32_t preemptions, bool sleep_sets, std::size_t depth = 0,
            const std::function<bool(std::uint64_t)>& claim = {}) -> Tally {
    sim::DfsTree tree(preemptions, sleep_sets);
    if (depth != 0) tree.split(depth, claim);
    Tally tally;
    do {
        const bool owned = tree.owned();
        const sim::ProbeRun counted = run_once(set, tree);
        if (owned) {
            tally.runs++;
            tally.fresh_steps += counted.crash_states;
            tally.steps += counted.steps;
        }
        REQUIRE(tally.runs < 100000);
    } while (tree.backtrack());
    tally.stats = tree.take_stats();
    tally.abandoned = tally.stats.abandoned;
    return tally;
}

auto sum(Tally a, const Tally& b) -> Tally {
    a.runs += b.runs;
    a.abandoned += b.abandoned;
    a.fresh_steps += b.fresh_steps;
    a.steps += b.steps;
    a.stats += b.stats;
    return a;
}

}  // namespace

TEST_CASE("dfs split: the units of any split depth and shard count sum to the unsplit search") {
    for (const TaskSet set :
         {TaskSet{2, 2, false}, TaskSet{2, 3, true}, TaskSet{3, 1, false}, TaskSet{3, 2, false}}) {
        for (std::uint32_t preemptions : {0U, 1U, 2U}) {
            for (bool sleep_sets : {true, false}) {
                const Tally whole = search(set, preemptions, sleep_sets);
                CHECK(whole.stats.schedules == whole.runs);
                for (std::size_t depth : {1U, 2U, 3U, 6U, 40U}) {
                    for (std::uint64_t shards : {1U, 2U, 3U}) {
                        CAPTURE(set.tasks);
                        CAPTURE(set.yields);
                        CAPTURE(preemptions);
                        CAPTURE(sleep_sets);
                        CAPTURE(depth);
                        CAPTURE(shards);
                        Tally merged;
                        for (std::uint64_t shard = 0; shard < shards; shard++) {
                            merged = sum(merged,
                                         search(set, preemptions, sleep_sets, depth,
                                                [=](std::uint64_t unit) { return unit % shards == shard; }));
                        }
                        CHECK(merged == whole);
                    }
                }
            }
        }
    }
}

TEST_CASE("dfs split: a tree that claims nothing runs each unit only to the split depth") {
    const TaskSet set{3, 2, false};
    const Tally whole = search(set, 2, true);
    const Tally none = search(set, 2, true, 2, [](std::uint64_t) { return false; });
    CHECK(none.runs == 0);
    CHECK(none.stats.schedules == 0);
    CHECK(none.stats.pruned_sleep == 0);
    // Every unit is entered once; there are fewer units than schedules.
    sim::DfsTree tree(2, true);
    std::uint64_t units = 0;
    tree.split(2, [&](std::uint64_t) {
        units++;
        return false;
    });
    do run_once(set, tree);
    while (tree.backtrack());
    CHECK(units > 1);
    CHECK(units < whole.runs);
}

TEST_CASE("dfs estimate: exact where every path has the same shape" * doctest::test_suite("campaign")) {
    // 3 tasks of 2 steps (one yield each), every step conflicting: at P = 0
    // each path branches 3, 1, 2, 1 (a switch costs one preemption until the
    // running task ends): 6 schedules whatever the draws.
    const TaskSet set{3, 1, true};
    for (bool sleep_sets : {true, false}) {
        const Tally whole = search(set, 0, sleep_sets);
        REQUIRE(whole.runs == 6);
        for (std::uint64_t seed : {1U, 2U, 3U, 99U}) {
            CAPTURE(sleep_sets);
            CAPTURE(seed);
            sim::Prng prng(seed);
            const sim::ProbeWalk walk = sim::knuth_probe(
                0, sleep_sets, prng, [&](sim::DfsTree& tree) { return run_once(set, tree); });
            CHECK(walk.schedules == 6.0);
            CHECK(walk.crash_states == static_cast<double>(whole.fresh_steps));
            CHECK(walk.steps == static_cast<double>(whole.steps));
            // Units at split depth 0, 1, 2, ...: 1, 3, 3, 6, 6.
            REQUIRE(walk.units.size() == 5);
            CHECK(walk.units[1] == 3.0);
            CHECK(walk.units[3] == 6.0);
        }
    }
}

TEST_CASE("dfs estimate: the mean over walks approaches the count where paths differ" *
          doctest::test_suite("campaign")) {
    // Two tasks of 4 steps, independent, sleep sets on, P = 2: paths differ in
    // shape, so a walk is off, but the estimator is unbiased.
    const TaskSet set{2, 3, false};
    const Tally whole = search(set, 2, true);
    sim::Prng prng(7);
    double schedules = 0;
    constexpr int walks = 400;
    for (int i = 0; i < walks; i++) {
        schedules += sim::knuth_probe(2, true, prng, [&](sim::DfsTree& tree) {
                         return run_once(set, tree);
                     }).schedules;
    }
    const double mean = schedules / walks;
    CHECK(mean > 0.7 * static_cast<double>(whole.runs));
    CHECK(mean < 1.3 * static_cast<double>(whole.runs));
}

TEST_CASE(
    "dfs estimate: a walk stops at its run cap or past probe_weight_max, with finite figures below the "
    "search's" *
    doctest::test_suite("campaign")) {
    // Units 1, 3, 3, 6, 6 (above): a walk capped at two runs takes the root's
    // run and one at depth 1, then stops there, counting its 3 paths.
    const TaskSet set{3, 1, true};
    const Tally whole = search(set, 0, false);
    for (std::uint64_t seed : {1U, 2U, 3U}) {
        CAPTURE(seed);
        sim::Prng prng(seed);
        const sim::ProbeWalk walk =
            sim::knuth_probe(0, false, prng, [&](sim::DfsTree& tree) { return run_once(set, tree); }, 2);
        CHECK(walk.stopped);
        CHECK(walk.depth == 1);
        CHECK(walk.schedules == 3.0);
        CHECK(walk.crash_states <= static_cast<double>(whole.fresh_steps));
        CHECK(walk.steps < static_cast<double>(whole.steps));
        const sim::ProbeWalk probe =
            sim::stratified_probe(0, false, prng, [&](sim::DfsTree& tree) { return run_once(set, tree); }, 2);
        CHECK(probe.stopped);
        CHECK(probe.schedules < 6.0);
    }
    // Two dependent tasks of 80 steps with no bound: about 160 decisions of
    // two branches each, a product of 2^160 that a whole walk would carry
    // (a deeper one overflows to infinity and printed "inf schedules").
    const TaskSet deep{2, 80, true};
    sim::Prng prng(5);
    const sim::ProbeWalk walk = sim::knuth_probe(sim::unbounded, false, prng,
                                                 [&](sim::DfsTree& tree) { return run_once(deep, tree); });
    CHECK(walk.stopped);
    CHECK(walk.schedules > sim::probe_weight_max);
    CHECK(walk.schedules <= 2 * sim::probe_weight_max);
    CHECK(std::isfinite(walk.crash_states));
    CHECK(std::isfinite(walk.steps));
    CHECK(walk.depth < 160);
    // A whole walk where the product stays below: not stopped.
    sim::Prng again(5);
    CHECK_FALSE(sim::knuth_probe(sim::unbounded, false, again, [&](sim::DfsTree& tree) {
                    return run_once(TaskSet{2, 20, true}, tree);
                }).stopped);
}

TEST_CASE("dfs stratified estimate: exact where paths have one shape, unbiased where they differ") {
    // Two independent tasks of one step, P = 0, no sleep sets: every path has
    // the same shape, so one probe is exact, as a Knuth walk is.
    const TaskSet same{3, 1, false};
    const Tally exact = search(same, 0, false);
    sim::Prng prng(3);
    const sim::ProbeWalk probe =
        sim::stratified_probe(0, false, prng, [&](sim::DfsTree& tree) { return run_once(same, tree); });
    CHECK(probe.schedules == static_cast<double>(exact.runs));
    CHECK(probe.crash_states == static_cast<double>(exact.fresh_steps));
    // Paths that differ (sleep sets on, P = 2): a probe keeps one node per
    // stratum (the tasks' positions), so its mean approaches the count with
    // far fewer probes than Knuth's walks need (400 above).
    const TaskSet differ{2, 3, false};
    const Tally whole = search(differ, 2, true);
    double schedules = 0;
    constexpr int probes = 20;
    for (int i = 0; i < probes; i++) {
        schedules += sim::stratified_probe(2, true, prng, [&](sim::DfsTree& tree) {
                         return run_once(differ, tree);
                     }).schedules;
    }
    const double mean = schedules / probes;
    CHECK(mean > 0.8 * static_cast<double>(whole.runs));
    CHECK(mean < 1.2 * static_cast<double>(whole.runs));
}
