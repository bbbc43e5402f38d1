// The nondeterminism the kernel has. Two small synthetic
// models, each with a bug only the new choices expose:
//  - a journal that takes a write for done once a write submitted after it
//    completed (it assumes in-order completion), then FLUSHes and calls both
//    durable: a real device may complete the later write first, and the
//    FLUSH then covers only what had completed (model/disk/block_device.cpp);
//  - a task whose two steps must not see a daemon's timer fire in between
//    (the transaction kthread committing in the middle of a fast fsync).
// With the bounds at 0 (the engine before) no strategy can find either bug;
// with a bound of 1, random, PCT and DFS all do. Also: DFS with and without
// sleep sets agree at bounds 0..2, replays are byte for byte, runs are
// deterministic, and the bounds are never exceeded.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/disk/block_device.hpp"
#include "sim/dfs.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "sim/sync.hpp"
#include "sim/trace.hpp"
#include "sim/yield_point.hpp"

namespace {

const sim::YieldPoint step_one =
    sim::register_yield_point("test.kernel_nondeterminism.step_one", "first half of an operation");
const sim::YieldPoint step_two =
    sim::register_yield_point("test.kernel_nondeterminism.step_two", "second half of an operation");

enum class Model : std::uint8_t { journal, daemon_race };

struct RunResult {
    bool violated = false;
    bool abandoned = false;
    std::vector<std::uint32_t> choices;
    std::uint32_t io_reorders = 0;
    std::uint32_t daemon_wakeups = 0;
    std::uint64_t trace_hash = 0;
    std::string trace;
};

/// One run of a synthetic model under `strategy` with the given bounds.
auto run_model(Model model, sim::Strategy& strategy, std::uint32_t io_reorders,
               std::uint32_t daemon_wakeups, bool trace_on = false) -> RunResult {
    RunResult result;
    sim::Trace trace(trace_on);
    {
        model::disk::BlockDevice device{64, *model::disk::find_profile("nvme")};
        sim::Scheduler scheduler({.timers_race_tasks = true,
                                  .steps_max = 10000,
                                  .io_reorders = io_reorders,
                                  .daemon_wakeups = daemon_wakeups},
                                 &trace);
        bool in_middle = false;
        if (model == Model::journal) {
            scheduler.spawn("journal", [&] {
                sim::yield(step_one);
                // The data block, then the commit block; the bug: waiting
                // only for the later one.
                device.submit_write(0, 1, model::disk::Content::data(0, 0, 1), false, "data", {});
                sim::Completion commit("commit block");
                device.submit_write(1, 1, model::disk::Content::meta(7), false, "log",
                                    [&commit] { commit.complete(); });
                commit.wait();
                device.flush_and_wait();
                sim::yield(step_two);
                // Both are durable, the journal believes: a crash now keeps
                // only what is.
                const model::disk::Image image =
                    device.crash_image(std::vector<bool>(device.pending().size(), false));
                if (image.read(0) != model::disk::Content::data(0, 0, 1)) result.violated = true;
            });
            scheduler.spawn("reader", [&] {
                sim::yield(step_one);
                sim::yield(step_two);
            });
        } else {
            scheduler.spawn("fsyncer", [&] {
                sim::yield(step_one);
                in_middle = true;
                sim::yield(step_two);
                in_middle = false;
            });
            scheduler.spawn_daemon("kthread", [&] {
                for (;;) {
                    scheduler.sleep(30 * sim::seconds);
                    if (in_middle) result.violated = true;
                }
            });
        }
        for (;;) {
            const sim::StepOutcome outcome = scheduler.step(strategy);
            if (outcome == sim::StepOutcome::finished) break;
            REQUIRE(outcome != sim::StepOutcome::deadlock);
            CHECK(scheduler.io_reorders_used() <= io_reorders);
            CHECK(scheduler.daemon_wakeups_used() <= daemon_wakeups);
            strategy.after_step(scheduler);
            if (strategy.abandoned()) {
                result.abandoned = true;
                break;
            }
        }
        result.choices = scheduler.choices();
        result.io_reorders = scheduler.io_reorders_used();
        result.daemon_wakeups = scheduler.daemon_wakeups_used();
    }
    result.trace_hash = trace.hash();
    result.trace = trace.full();
    return result;
}

auto random_finds(Model model, std::uint32_t bound, std::uint64_t seeds) -> std::optional<std::uint64_t> {
    for (std::uint64_t seed = 0; seed < seeds; seed++) {
        sim::RandomStrategy strategy{sim::Prng(seed)};
        if (run_model(model, strategy, bound, bound).violated) return seed;
    }
    return std::nullopt;
}

auto pct_finds(Model model, std::uint32_t bound, std::uint64_t seeds) -> std::optional<std::uint64_t> {
    for (std::uint64_t seed = 0; seed < seeds; seed++) {
        sim::PctStrategy strategy{sim::Prng(seed), 3, 12};
        if (run_model(model, strategy, bound, bound).violated) return seed;
    }
    return std::nullopt;
}

struct DfsResult {
    bool found = false;
    bool complete = false;
    std::uint64_t schedules = 0;
};

auto dfs(Model model, std::uint32_t preemptions, std::uint32_t bound, bool sleep_sets) -> DfsResult {
    sim::DfsTree tree(preemptions, sleep_sets);
    DfsResult result;
    bool more = true;
    while (more && result.schedules < 100000) {
        sim::DfsStrategy strategy(tree);
        const RunResult run = run_model(model, strategy, bound, bound);
        result.schedules++;
        if (run.violated) {
            result.found = true;
            break;
        }
        more = tree.backtrack();
    }
    result.complete = !more;
    return result;
}

}  // namespace

TEST_CASE("io order: with no reordering no strategy can break a journal that assumes in-order completion") {
    for (Model model : {Model::journal, Model::daemon_race}) {
        CAPTURE(static_cast<int>(model));
        CHECK_FALSE(random_finds(model, 0, 2000).has_value());
        CHECK_FALSE(pct_finds(model, 0, 2000).has_value());
        for (std::uint32_t preemptions = 0; preemptions <= 4; preemptions++) {
            const DfsResult result = dfs(model, preemptions, 0, true);
            CHECK_FALSE(result.found);
            CHECK(result.complete);
        }
    }
}

TEST_CASE("io order: one reordering lets random, pct and dfs find the journal's bug") {
    CHECK(random_finds(Model::journal, 1, 2000).has_value());
    CHECK(pct_finds(Model::journal, 1, 2000).has_value());
    // Without a preemption: the journal waits on the device, so the
    // reordering is a free context switch.
    const DfsResult result = dfs(Model::journal, 0, 1, true);
    CHECK(result.found);
}

TEST_CASE("daemon wake-ups: one wake-up lets random, pct and dfs fire a daemon's timer between two steps") {
    CHECK(random_finds(Model::daemon_race, 1, 2000).has_value());
    CHECK(pct_finds(Model::daemon_race, 1, 2000).has_value());
    // Firing the timer while the task can run is a preemption too.
    CHECK_FALSE(dfs(Model::daemon_race, 0, 1, true).found);
    CHECK(dfs(Model::daemon_race, 1, 1, true).found);
}

TEST_CASE("io order: dfs with and without sleep sets gives the same verdicts at bounds 0 to 2") {
    for (Model model : {Model::journal, Model::daemon_race}) {
        for (std::uint32_t bound = 0; bound <= 2; bound++) {
            for (std::uint32_t preemptions = 0; preemptions <= 2; preemptions++) {
                CAPTURE(static_cast<int>(model));
                CAPTURE(bound);
                CAPTURE(preemptions);
                const DfsResult unpruned = dfs(model, preemptions, bound, false);
                const DfsResult pruned = dfs(model, preemptions, bound, true);
                CHECK(pruned.found == unpruned.found);
                if (!unpruned.found) {
                    CHECK(unpruned.complete);
                    CHECK(pruned.complete);
                    CHECK(pruned.schedules <= unpruned.schedules);
                }
            }
        }
    }
}

TEST_CASE("io order: a run that took a reordering replays byte for byte and is deterministic") {
    const std::optional<std::uint64_t> seed = random_finds(Model::journal, 1, 2000);
    REQUIRE(seed.has_value());
    sim::RandomStrategy first{sim::Prng(*seed)};
    const RunResult original = run_model(Model::journal, first, 1, 1, true);
    REQUIRE(original.violated);
    CHECK(original.io_reorders == 1);
    CHECK(original.trace.find("fires ahead of") != std::string::npos);
    sim::RandomStrategy again{sim::Prng(*seed)};
    const RunResult second = run_model(Model::journal, again, 1, 1, true);
    CHECK(second.trace == original.trace);
    sim::ReplayStrategy replay{original.choices};
    const RunResult replayed = run_model(Model::journal, replay, 1, 1, true);
    CHECK(replayed.violated);
    CHECK(replayed.trace_hash == original.trace_hash);
    CHECK(replayed.trace == original.trace);
}

TEST_CASE("io order: every in-flight completion is a candidate, and firing a later one moves time to it") {
    model::disk::BlockDevice device{64, *model::disk::find_profile("hdd")};
    sim::Scheduler scheduler({.io_reorders = 1}, nullptr);
    std::vector<int> completed;
    sim::Instant second_at = 0;
    scheduler.spawn("submitter", [&] {
        device.submit_write(0, 1, model::disk::Content::meta(1), false, "meta",
                            [&] { completed.push_back(1); });
        scheduler.sleep(1);  // the second request goes out later
        device.submit_write(1, 1, model::disk::Content::meta(2), false, "meta", [&] {
            completed.push_back(2);
            second_at = scheduler.now();
        });
    });
    sim::FirstStrategy first;
    REQUIRE(scheduler.step(first) == sim::StepOutcome::ran_task);  // submits the first, sleeps
    REQUIRE(scheduler.step(first) == sim::StepOutcome::fired_timer);  // the 1 ns sleep
    REQUIRE(scheduler.step(first) == sim::StepOutcome::ran_task);  // submits the second, ends
    const auto candidates = scheduler.candidates();
    REQUIRE(candidates.size() == 2);
    CHECK(candidates[0].charge == sim::Charge::none);
    CHECK(candidates[1].charge == sim::Charge::io_reorder);
    CHECK(candidates[1].timer > candidates[0].timer);
    const sim::Candidate later = candidates[1];
    CHECK(scheduler.execute(later) == sim::StepOutcome::fired_timer);
    CHECK(scheduler.io_reorders_used() == 1);
    CHECK(completed == std::vector<int>{2});
    CHECK(second_at == 1 + device.profile().write_latency);
    // The bound is spent: only the (now late) first completion is left, at the current time.
    const auto rest = scheduler.candidates();
    REQUIRE(rest.size() == 1);
    CHECK(rest[0].charge == sim::Charge::none);
    CHECK(scheduler.execute(rest[0]) == sim::StepOutcome::fired_timer);
    CHECK(completed == std::vector<int>{2, 1});
    CHECK(scheduler.now() == second_at);
}

TEST_CASE("io order: a FLUSH still covers only what had completed when it was submitted") {
    model::disk::BlockDevice device{64, *model::disk::find_profile("nvme")};
    sim::Scheduler scheduler({.io_reorders = 2}, nullptr);
    scheduler.spawn("submitter", [&] {
        device.submit_write(0, 1, model::disk::Content::meta(1), false, "meta", {});
        device.submit_flush({});
    });
    sim::FirstStrategy first;
    REQUIRE(scheduler.step(first) == sim::StepOutcome::ran_task);
    // The flush completes first (a reordering): the write was still in flight.
    const auto candidates = scheduler.candidates();
    REQUIRE(candidates.size() == 2);
    CHECK(scheduler.execute(candidates[1]) == sim::StepOutcome::fired_timer);
    CHECK(scheduler.execute(scheduler.candidates()[0]) == sim::StepOutcome::fired_timer);
    REQUIRE(device.pending().size() == 1);
    CHECK(device.pending()[0].completed);
    const model::disk::Image image = device.crash_image({false});
    CHECK(image.read(0) != model::disk::Content::meta(1));
}

TEST_CASE("daemon wake-ups: a daemon's timer is a candidate while a task runs, and the bound is kept") {
    sim::Scheduler scheduler({.daemon_wakeups = 1}, nullptr);
    int wakeups = 0;
    scheduler.spawn("task", [] {
        for (int i = 0; i < 5; i++) sim::yield(step_one);
    });
    scheduler.spawn_daemon("kthread", [&] {
        for (;;) {
            sim::current_scheduler().sleep(30 * sim::seconds);
            wakeups++;
        }
    });
    REQUIRE(scheduler.execute(scheduler.candidates()[1]) == sim::StepOutcome::ran_task);  // kthread sleeps
    auto candidates = scheduler.candidates();
    REQUIRE(candidates.size() == 2);
    CHECK(candidates[1].charge == sim::Charge::daemon_wakeup);
    CHECK(scheduler.execute(candidates[1]) == sim::StepOutcome::fired_timer);
    CHECK(scheduler.now() == 30 * sim::seconds);
    CHECK(scheduler.daemon_wakeups_used() == 1);
    // The kthread is now a runnable task; once it sleeps again its timer is
    // no candidate while the task can run: the bound is spent.
    candidates = scheduler.candidates();
    REQUIRE(candidates.size() == 2);
    CHECK(scheduler.execute(candidates[1]) == sim::StepOutcome::ran_task);
    CHECK(wakeups == 1);
    candidates = scheduler.candidates();
    REQUIRE(candidates.size() == 1);
    CHECK_FALSE(candidates[0].is_timer());
}

TEST_CASE("io order: sleeps keep their time order; the next sleep may overtake an earlier completion") {
    model::disk::BlockDevice device{64, *model::disk::find_profile("hdd")};
    sim::Scheduler scheduler({.io_reorders = 2}, nullptr);
    std::vector<std::string> fired;
    scheduler.spawn("submitter", [&] {
        device.submit_write(0, 1, model::disk::Content::meta(1), false, "meta",
                            [&] { fired.push_back("write"); });
        scheduler.at(scheduler.now() + 10 * sim::milliseconds, [&] { fired.push_back("sleep 10 ms"); });
        scheduler.at(scheduler.now() + 20 * sim::milliseconds, [&] { fired.push_back("sleep 20 ms"); });
    });
    sim::FirstStrategy first;
    REQUIRE(scheduler.step(first) == sim::StepOutcome::ran_task);
    // The write (8 ms) is next; the 10 ms sleep may overtake it; the 20 ms one may not.
    auto candidates = scheduler.candidates();
    REQUIRE(candidates.size() == 2);
    CHECK(candidates[0].charge == sim::Charge::none);
    CHECK(candidates[1].charge == sim::Charge::io_reorder);
    REQUIRE(scheduler.execute(candidates[0]) == sim::StepOutcome::fired_timer);
    // Now the 10 ms sleep is next and listed free: the 20 ms sleep is no candidate.
    candidates = scheduler.candidates();
    REQUIRE(candidates.size() == 1);
    REQUIRE(scheduler.execute(candidates[0]) == sim::StepOutcome::fired_timer);
    CHECK(fired == std::vector<std::string>{"write", "sleep 10 ms"});
}
