// Bounded exhaustive search (sim/dfs) on small synthetic task sets whose
// schedule counts are known in closed form, with and without sleep sets.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>

#include "sim/dfs.hpp"
#include "sim/scheduler.hpp"
#include "sim/yield_point.hpp"

namespace {

// Each task touches its own resource (independent) or all touch one (dependent).
const sim::YieldPoint own_a =
    sim::register_yield_point("test.dfs_test.own_a", "task a's own data", {"test.dfs_test.a"});
const sim::YieldPoint own_b =
    sim::register_yield_point("test.dfs_test.own_b", "task b's own data", {"test.dfs_test.b"});
const sim::YieldPoint shared =
    sim::register_yield_point("test.dfs_test.shared", "data both tasks touch", {"test.dfs_test.shared"});

/// Runs one schedule of `tree`'s search to its end; true when the search
/// abandoned it (every choice asleep).
auto run_schedule(sim::Scheduler& scheduler, sim::DfsTree& tree) -> bool {
    sim::DfsStrategy strategy(tree);
    while (scheduler.step(strategy) != sim::StepOutcome::finished) {
        strategy.after_step(scheduler);
        if (strategy.abandoned()) return true;
    }
    return false;
}

struct Counts {
    std::uint64_t complete = 0;   // schedules run to the end
    std::uint64_t abandoned = 0;  // cut where every choice was asleep
};

/// Two tasks of `yields` yield points each (so yields + 1 steps each: one to
/// each point, one from the last to the end), every schedule within the bound.
auto explore(int yields, bool dependent, std::uint32_t preemptions, bool sleep_sets) -> Counts {
    sim::DfsTree tree(preemptions, sleep_sets);
    Counts counts;
    do {
        sim::Scheduler scheduler({.steps_max = 1000}, nullptr);
        for (int task = 0; task < 2; task++) {
            const sim::YieldPoint& point = dependent ? shared : (task == 0 ? own_a : own_b);
            scheduler.spawn(task == 0 ? "a" : "b", [&point, yields] {
                for (int i = 0; i < yields; i++) sim::yield(point);
            });
        }
        const bool abandoned = run_schedule(scheduler, tree);
        (abandoned ? counts.abandoned : counts.complete)++;
        REQUIRE(counts.complete + counts.abandoned < 100000);
    } while (tree.backtrack());
    return counts;
}

/// The instants at which a daemon's first step ran (it reads the clock to
/// set its sleep's due time), over every schedule the search explored: a
/// task's first step adds a device completion due 20 ns on, which may fire
/// before or after the daemon's first step.
auto first_sleep_instants(std::uint32_t preemptions, bool sleep_sets, bool dpor) -> std::set<sim::Instant> {
    sim::DfsTree tree(preemptions, sleep_sets, dpor);
    std::set<sim::Instant> instants;
    std::uint64_t schedules = 0;
    do {
        sim::Scheduler scheduler({.steps_max = 1000}, nullptr);
        sim::Instant slept_at = ~sim::Instant{0};
        scheduler.spawn("a", [&scheduler] {
            scheduler.io_after(20, [] {});
            sim::yield(own_a);
        });
        scheduler.spawn_daemon("d", [&scheduler, &slept_at] {
            slept_at = sim::now();
            for (;;) scheduler.sleep(30'000'000'000);
        });
        const bool abandoned = run_schedule(scheduler, tree);
        if (!abandoned) instants.insert(slept_at);
        REQUIRE(++schedules < 10000);
    } while (tree.backtrack());
    return instants;
}

}  // namespace

/// Interleavings of two tasks of m steps each with at most P preemptions
/// (CHESS): a schedule of r blocks switches r - 1 times, and exactly one of
/// those switches is free (when the first task to finish ends its last block),
/// so it takes r - 2 preemptions. Schedules of r blocks: 2 C(m-1, j-1)^2 for
/// r = 2j, 2 C(m-1, j) C(m-1, j-1) for r = 2j + 1.
auto closed_form(std::uint64_t m, std::uint32_t preemptions) -> std::uint64_t {
    auto choose = [](std::uint64_t n, std::uint64_t k) -> std::uint64_t {
        if (k > n) return 0;
        std::uint64_t result = 1;
        for (std::uint64_t i = 1; i <= k; i++) result = result * (n - k + i) / i;
        return result;
    };
    std::uint64_t total = 0;
    for (std::uint64_t r = 2; r <= 2 * m && r - 2 <= preemptions; r++) {
        const std::uint64_t j = r / 2;
        total += r % 2 == 0 ? 2 * choose(m - 1, j - 1) * choose(m - 1, j - 1)
                            : 2 * choose(m - 1, j) * choose(m - 1, j - 1);
    }
    return total;
}

TEST_CASE("dfs: without sleep sets, two tasks take every interleaving within the bound") {
    CHECK(closed_form(2, 8) == 6);   // C(4, 2)
    CHECK(closed_form(3, 8) == 20);  // C(6, 3)
    for (int yields : {1, 2, 3}) {
        for (bool dependent : {false, true}) {
            for (std::uint32_t preemptions : {0U, 1U, 2U, 8U}) {
                CAPTURE(yields);
                CAPTURE(dependent);
                CAPTURE(preemptions);
                const Counts counts = explore(yields, dependent, preemptions, false);
                CHECK(counts.complete == closed_form(yields + 1, preemptions));
                CHECK(counts.abandoned == 0);
            }
        }
    }
    // Known figures: 2 x 3 steps: 2, 6, 14 and all 20 at P = 0, 1, 2, 8.
    CHECK(explore(2, false, 0, false).complete == 2);
    CHECK(explore(2, false, 1, false).complete == 6);
    CHECK(explore(2, false, 2, false).complete == 14);
}

TEST_CASE("dfs: sleep sets prune nothing where every step conflicts") {
    for (int yields : {1, 2, 3}) {
        for (std::uint32_t preemptions : {0U, 1U, 2U, 8U}) {
            CAPTURE(yields);
            CAPTURE(preemptions);
            const Counts counts = explore(yields, true, preemptions, true);
            CHECK(counts.complete == closed_form(yields + 1, preemptions));
        }
    }
}

TEST_CASE("dfs: sleep sets prune reorderings of independent steps, and stop growing with the bound") {
    // Regression figures of this engine (a single equivalence class, but the
    // bound-edge rule of Coons et al. keeps a few more): fewer than the
    // interleavings, and the same for every bound from 1 up.
    struct Expected {
        int yields;
        std::uint32_t preemptions;
        std::uint64_t complete;
    };
    for (const Expected& expected :
         {Expected{1, 0, 2}, Expected{1, 1, 3}, Expected{1, 2, 3}, Expected{1, 8, 3}, Expected{2, 0, 2},
          Expected{2, 1, 4}, Expected{2, 2, 4}, Expected{2, 8, 4}}) {
        CAPTURE(expected.yields);
        CAPTURE(expected.preemptions);
        const Counts counts = explore(expected.yields, false, expected.preemptions, true);
        CHECK(counts.complete == expected.complete);
        CHECK(counts.complete <= closed_form(expected.yields + 1, expected.preemptions));
    }
    // Unbounded, 20 interleavings of 2 x 3 independent steps come down to 4.
    CHECK(explore(2, false, 8, false).complete == 20);
    CHECK(explore(2, false, 8, true).complete == 4);
}

namespace {

/// What a search saw of two timers due at one instant: the order their
/// callbacks ran in, over every schedule it explored.
auto tie_outcomes(std::uint32_t preemptions, bool sleep_sets, bool dpor) -> std::set<std::string> {
    sim::DfsTree tree(preemptions, sleep_sets, dpor);
    std::set<std::string> outcomes;
    std::uint64_t schedules = 0;
    do {
        // Timers fire only once no task can run, so both are in the queue
        // when the first fires.
        sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = 1000}, nullptr);
        std::string fired;
        // Each task's second step adds a timer due 10 ns on: the two tasks'
        // steps touch nothing in common, so every reduction takes them as
        // commuting (and after them, with both tasks still to run, a
        // schedule whose every choice is asleep is cut).
        for (int task = 0; task < 2; task++) {
            const std::string name = task == 0 ? "a" : "b";
            const sim::YieldPoint& point = task == 0 ? own_a : own_b;
            scheduler.spawn(name, [&scheduler, &fired, &point, name] {
                sim::yield(point);
                scheduler.after(10, [&fired, name] { fired += name; });
                sim::yield(point);
                sim::yield(point);
            });
        }
        const bool abandoned = run_schedule(scheduler, tree);
        if (!abandoned) outcomes.insert(fired);
        REQUIRE(++schedules < 10000);
    } while (tree.backtrack());
    return outcomes;
}

}  // namespace

TEST_CASE("dfs: two commuting steps that each add a timer due at one instant decide nothing by their order") {
    // With ties broken by the global order of additions, running a's step
    // first fired a's timer first and b's first fired b's: the unreduced
    // search saw both outcomes, sleep sets and dpor (one order of two
    // commuting steps) only one. Ties now go by adder and its own count.
    for (std::uint32_t preemptions : {0U, 1U, 2U, sim::unbounded}) {
        CAPTURE(preemptions);
        const std::set<std::string> every = tie_outcomes(preemptions, false, false);
        CHECK(every == std::set<std::string>{"ab"});
        CHECK(tie_outcomes(preemptions, true, false) == every);
        CHECK(tie_outcomes(preemptions, true, true) == every);
        CHECK(tie_outcomes(preemptions, false, true) == every);
    }
}

TEST_CASE("dfs: a daemon's first sleep does not commute with a device completion") {
    // The daemon's first step reads the clock and adds a timer, and reports
    // nothing else: with an empty footprint it commuted even with timer
    // steps, so the reductions ran it only before the completion and never
    // saw it sleep at 20 ns (btrfs's transaction kthread: 12 of the 23
    // distinct crash states of kthread-commit-in-fast-fsync at dfs:0 were
    // lost). Adding a timer now
    // touches the adding task's clock bit (Scheduler::add_timer).
    for (std::uint32_t preemptions : {0U, 1U, 2U, sim::unbounded}) {
        CAPTURE(preemptions);
        const std::set<sim::Instant> every = first_sleep_instants(preemptions, false, false);
        // ~0: the run ended (task a done, no live timer) before the daemon ran.
        // Overtaking a runnable task and then the daemon takes 2 preemptions.
        CHECK(every.count(0) == 1);
        CHECK(every.count(20) == (preemptions >= 2 ? 1 : 0));
        CHECK(first_sleep_instants(preemptions, true, false) == every);
        CHECK(first_sleep_instants(preemptions, true, true) == every);
    }
}
