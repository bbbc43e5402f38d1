// Freeze and the log worker ("xfs: remove the m_active_trans counter"): delayed work's cancel
// semantics, the sb_writers levels, the event channel, the freeze_quiescence watch on its own, and
// the scenario's three variants through the runner (the violation found while the run goes on,
// replayed from its schedule alone).
#include <doctest/doctest.h>

#include "tests/model/world.hpp"
#include "tests/support.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/event_watch.hpp"
#include "loader/scenario.hpp"
#include "model/delayed_work.hpp"
#include "model/events.hpp"
#include "model/freeze.hpp"
#include "model/xfs/points.hpp"
#include "runner/runner.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "sim/sync.hpp"

namespace {

using test_support::check_in_order;
using test_support::has_checker;
using test_support::spec_of;

constexpr const char* freeze_scenario = "scenarios/xfs/freeze-vs-log-worker.json";

/// Steps `scheduler` with the first candidate until every task finished.
void settle(sim::Scheduler& scheduler) {
    sim::FirstStrategy first;
    for (int i = 0; i < 100'000; i++) {
        const sim::StepOutcome outcome = scheduler.step(first);
        if (outcome == sim::StepOutcome::finished) return;
        REQUIRE_MESSAGE(outcome != sim::StepOutcome::deadlock, scheduler.describe_blocked());
    }
    FAIL("did not settle");
}

auto transaction(model::EventKind kind, std::uint64_t id, const std::string& task) -> model::Event {
    model::Event event = model::transaction_event(kind, id, "xfs_sync_sb", true, true);
    event.task_name = task;
    return event;
}
auto level(model::FreezeLevel to, const std::string& task) -> model::Event {
    model::Event event = model::freeze_level_event(to);
    event.task_name = task;
    return event;
}

}  // namespace

TEST_CASE("delayed work: cancel_delayed_work_sync waits for the running instance, which cannot re-arm") {
    sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = 100'000}, nullptr);
    model::DelayedWork work("test.l_work", 30 * sim::seconds);
    int runs = 0;
    sim::Instant cancel_returned = 0;
    scheduler.spawn_daemon("worker", [&] {
        work.run([&] {
            runs++;
            if (runs > 1) return;
            // Still running at 31 s: waits for a model timer (as the log
            // worker waits for its log write), not a daemon's own sleep.
            sim::Completion io("test.io");
            sim::current_scheduler().after(2 * sim::seconds, [&io] { io.complete(); });
            io.wait();
            CHECK_FALSE(work.queue());  // the cancel holds the pending bit: the re-arm fails
        });
    });
    scheduler.spawn("canceller", [&] {
        CHECK(work.queue());
        CHECK_FALSE(work.queue());  // already pending
        sim::current_scheduler().sleep(31 * sim::seconds);
        CHECK(work.running());
        work.cancel_sync();
        cancel_returned = sim::now();
        CHECK_FALSE(work.running());
        CHECK_FALSE(work.pending());
        sim::current_scheduler().sleep(100 * sim::seconds);
        CHECK(runs == 1);  // cancelled: no timer ran it again
        CHECK(work.queue());  // thaw re-arms it
        sim::current_scheduler().sleep(31 * sim::seconds);
        CHECK(runs == 2);
    });
    settle(scheduler);
    CHECK(cancel_returned == 32 * sim::seconds);  // when the running instance returned
}

TEST_CASE("delayed work: a cancel while the timer runs makes the timer do nothing") {
    sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = 100'000}, nullptr);
    model::DelayedWork work("test.l_work", 30 * sim::seconds);
    int runs = 0;
    scheduler.spawn_daemon("worker", [&] { work.run([&] { runs++; }); });
    scheduler.spawn("canceller", [&] {
        work.queue();
        sim::current_scheduler().sleep(10 * sim::seconds);
        work.cancel_sync();  // nothing running: returns at once
        CHECK(sim::now() == 10 * sim::seconds);
        sim::current_scheduler().sleep(60 * sim::seconds);
    });
    settle(scheduler);
    CHECK(runs == 0);
}

TEST_CASE("sb_writers: a level blocks new holders once frozen there and waits for those inside") {
    sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = 100'000}, nullptr);
    model::SbWriters sb;
    model::EventChannel channel;
    const model::EventChannelScope scope(channel);
    sim::Instant drained_at = 0;
    sim::Instant late_started_at = 0;
    sim::Instant write_holder_at = 0;
    scheduler.spawn("inside", [&] {
        sb.start(model::WriteLevel::fs);
        sim::current_scheduler().sleep(1 * sim::seconds);
        sb.end(model::WriteLevel::fs);
    });
    scheduler.spawn("freezer", [&] {
        sb.set_frozen(model::FreezeLevel::fs);
        sb.wait_write(model::WriteLevel::fs);
        drained_at = sim::now();
        sim::current_scheduler().sleep(5 * sim::seconds);
        sb.set_frozen(model::FreezeLevel::unfrozen);
        sb.unlock_all();
    });
    scheduler.spawn("late", [&] {
        sim::current_scheduler().sleep(2 * sim::seconds);
        sb.start(model::WriteLevel::write);  // WRITE not taken by this freezer: goes on
        write_holder_at = sim::now();
        sb.end(model::WriteLevel::write);
        sb.start(model::WriteLevel::fs);  // sb_start_intwrite: blocks until the thaw
        late_started_at = sim::now();
        sb.end(model::WriteLevel::fs);
    });
    settle(scheduler);
    CHECK(drained_at == 1 * sim::seconds);
    CHECK(write_holder_at == 2 * sim::seconds);
    CHECK(late_started_at == 6 * sim::seconds);
    const auto events = channel.take();
    REQUIRE(events.size() == 2);
    CHECK(events[0].kind == model::EventKind::freeze_level);
    CHECK(events[0].level == model::FreezeLevel::fs);
    CHECK(events[1].level == model::FreezeLevel::unfrozen);
}

TEST_CASE("event channel: emit does nothing without a channel; a scope collects in order and restores") {
    model::emit(model::drained_event());  // no channel: dropped
    model::EventChannel outer;
    {
        const model::EventChannelScope outer_scope(outer);
        model::emit(model::freeze_level_event(model::FreezeLevel::write));
        model::EventChannel inner;
        {
            const model::EventChannelScope inner_scope(inner);
            model::emit(model::drained_event());
        }
        CHECK(inner.take().size() == 1);
        model::emit(model::freeze_level_event(model::FreezeLevel::complete));
    }
    model::emit(model::drained_event());  // the scope is gone
    const auto events = outer.take();
    REQUIRE(events.size() == 2);
    CHECK(events[0].level == model::FreezeLevel::write);
    CHECK(events[1].level == model::FreezeLevel::complete);
    CHECK(outer.take().empty());
}

TEST_CASE("xfs: freeze emits the levels, the drain point and the freezer's own superblock transactions") {
    test_support::ModelWorld world("xfs", {{"active_trans", "counter"}}, model::Geometry{4096, 1024, "nvme"},
                                   {"I"});
    model::EventChannel channel;
    const model::EventChannelScope scope(channel);
    world.run({{.name = "create", .file = 0}, {.name = "freeze"}});
    std::vector<std::string> seen;
    for (const auto& event : channel.take()) {
        switch (event.kind) {
            case model::EventKind::freeze_level:
                seen.emplace_back(model::freeze_level_name(event.level));
                break;
            case model::EventKind::quiesce_drained: seen.emplace_back("drained"); break;
            case model::EventKind::trans_alloc:
                seen.push_back("alloc " + event.what + (event.no_writecount ? " no_writecount" : ""));
                break;
            case model::EventKind::trans_commit: seen.push_back("commit " + event.what); break;
            case model::EventKind::trans_cancel: seen.push_back("cancel " + event.what); break;
            case model::EventKind::trans_free: seen.push_back("free " + event.what); break;
        }
    }
    const std::vector<std::string> expected = {
        "alloc create", "commit create", "free create", "SB_FREEZE_WRITE", "SB_FREEZE_PAGEFAULT",
        "SB_FREEZE_FS", "drained",
        // Q4 xfs_log_sbcount, then Z3 xfs_fs_freeze's after the unmount record.
        "alloc xfs_sync_sb no_writecount", "commit xfs_sync_sb", "free xfs_sync_sb",
        "alloc xfs_sync_sb no_writecount", "commit xfs_sync_sb", "free xfs_sync_sb", "SB_FREEZE_COMPLETE"};
    CHECK(seen == expected);
    // The frozen image: the unmount record, then the final superblock transaction.
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    CHECK(test_support::has_note(state, "unmount record"));
    CHECK(state.files[0].exists);
    // What frozen_image judges: nothing but those two after the tail.
    REQUIRE(state.log_records.has_value());
    REQUIRE(state.log_records->size() == 2);
    CHECK(state.log_records->at(0).unmount);
    CHECK(state.log_records->at(1).transactions == 1);
    CHECK(state.log_records->at(1).superblock_only);
    CHECK(state.log_records->at(1).kinds == "xfs_sync_sb");
}

TEST_CASE("freeze_quiescence: a foreign transaction after the drain, or with log space while frozen") {
    SUBCASE("allocated after the drain point") {
        auto watch = checkers::make_watch("freeze_quiescence");
        REQUIRE(watch != nullptr);
        std::vector<checkers::Violation> found;
        watch->on_event(level(model::FreezeLevel::write, "freezer"), found);
        watch->on_event(model::drained_event(), found);
        watch->on_event(transaction(model::EventKind::trans_alloc, 7, "freezer"), found);  // its own
        watch->on_event(transaction(model::EventKind::trans_free, 7, "freezer"), found);
        CHECK(found.empty());
        watch->on_event(transaction(model::EventKind::trans_alloc, 8, "xfs-sync"), found);
        REQUIRE(found.size() == 1);
        CHECK(found[0].checker == "freeze_quiescence");
        CHECK(found[0].found ==
              "transaction #8 (xfs_sync_sb, task xfs-sync) is allocated after the drain point");
        CHECK(watch->at_stake() == 1);
    }
    SUBCASE("live at the drain point") {
        auto watch = checkers::make_watch("freeze_quiescence");
        std::vector<checkers::Violation> found;
        watch->on_event(level(model::FreezeLevel::write, "freezer"), found);
        watch->on_event(transaction(model::EventKind::trans_alloc, 3, "xfs-sync"), found);
        CHECK(found.empty());  // before the drain: nothing wrong yet
        watch->on_event(model::drained_event(), found);
        REQUIRE(found.size() == 1);
        CHECK(found[0].found == "transaction #3 (xfs_sync_sb, task xfs-sync) is live at the drain point");
    }
    SUBCASE("freed before the drain, then thawed: nothing") {
        auto watch = checkers::make_watch("freeze_quiescence");
        std::vector<checkers::Violation> found;
        watch->on_event(level(model::FreezeLevel::write, "freezer"), found);
        watch->on_event(transaction(model::EventKind::trans_alloc, 3, "xfs-sync"), found);
        watch->on_event(transaction(model::EventKind::trans_free, 3, "xfs-sync"), found);
        watch->on_event(model::drained_event(), found);
        watch->on_event(level(model::FreezeLevel::complete, "freezer"), found);
        watch->on_event(level(model::FreezeLevel::unfrozen, "thawer"), found);
        watch->on_event(transaction(model::EventKind::trans_alloc, 4, "xfs-sync"), found);
        CHECK(found.empty());
    }
    SUBCASE("log space while frozen") {
        auto watch = checkers::make_watch("freeze_quiescence");
        std::vector<checkers::Violation> found;
        watch->on_event(level(model::FreezeLevel::write, "freezer"), found);
        watch->on_event(model::drained_event(), found);
        watch->on_event(level(model::FreezeLevel::complete, "freezer"), found);
        watch->on_event(transaction(model::EventKind::trans_alloc, 9, "freezer"), found);
        REQUIRE(found.size() == 1);
        CHECK(found[0].found == "transaction #9 (xfs_sync_sb, task freezer) reserves log space while frozen");
    }
    CHECK(checkers::make_watch("fsync_durability") == nullptr);
}

TEST_CASE("freeze vs log worker: cancel-last violates while the run goes on; replay finds it again") {
    const auto scenario = loader::load_scenario(freeze_scenario);
    const auto* variant = scenario.find_variant("cancel-last");
    REQUIRE(variant != nullptr);
    runner::Simulation simulation(scenario, *variant);
    std::uint64_t seed = 0;
    runner::RunOutcome found;
    for (; seed < 2000 && !found.violated(); seed++)
        found = simulation.run_strategy(spec_of("pct:3"), seed, true);
    REQUIRE(has_checker(found, "freeze_quiescence"));
    CHECK_FALSE(found.crash.has_value());  // found during the run, not in a crash state
    CHECK(found.violations.front().found.find("xfs_sync_sb, task xfs-sync") != std::string::npos);
    // The worker's first run found the set-up's items in the AIL and pushed
    // them; a later run passed L1 while writable; its transaction is live at
    // the drain point or allocated after it.
    check_in_order(found.story,
                   {"hypothetical setting, not a real kernel", "xfs_log_need_covered says no (the AIL holds",
                    "AIL push", "xfs_log_need_covered says yes", "SB_FREEZE_WRITE", "no counter to wait for",
                    "freeze_quiescence violated"});
    CHECK(found.story.find("xfs_log_worker: xfs_sync_sb allocates transaction") != std::string::npos);
    const runner::RunOutcome again = simulation.replay(found.choices, std::nullopt, true);
    REQUIRE(again.violated());
    CHECK(again.violations.front().message == found.violations.front().message);
    CHECK(again.trace_hash == found.trace_hash);
}

TEST_CASE("freeze vs log worker: cancel-first holds where the worker raced the freezer") {
    const auto scenario = loader::load_scenario(freeze_scenario);
    runner::Simulation simulation(scenario, *scenario.find_variant("cancel-first"));
    // Runs in which the worker passed xfs_log_need_covered before the freeze
    // began and committed its transaction after freeze_super reached FS:
    // the cancel at the drain point waited for it.
    std::uint64_t raced = 0;
    for (std::uint64_t seed = 0; seed < 400; seed++) {
        const auto outcome = simulation.run_strategy(spec_of("pct:3"), seed, true);
        CHECK_FALSE(outcome.violated());
        const auto& story = outcome.story;
        const auto passed = story.find("xfs_log_need_covered says yes");
        const auto frozen_fs = story.find("SB_FREEZE_FS");
        const auto committed = story.find("xfs_log_worker: xfs_sync_sb transaction");
        const auto drained = story.find("cancel_delayed_work_sync(l_work) returned");
        if (passed < frozen_fs && frozen_fs < committed && committed < drained &&
            drained != std::string::npos) {
            raced++;
        }
    }
    CHECK(raced > 0);
}

TEST_CASE("freeze vs log worker: counter slips through the window before the increment") {
    const auto scenario = loader::load_scenario(freeze_scenario);
    runner::Simulation simulation(scenario, *scenario.find_variant("counter"));
    runner::RunOutcome found;
    for (std::uint64_t seed = 0; seed < 2000 && !found.violated(); seed++) {
        found = simulation.run_strategy(spec_of("pct:3"), seed, true);
    }
    REQUIRE(has_checker(found, "freeze_quiescence"));
    // The worker passed L1 while writable, the freezer's poll saw 0 (no
    // increment yet), and the worker's transaction came after the drain.
    check_in_order(found.story, {"xfs_log_need_covered says yes", "SB_FREEZE_WRITE", "m_active_trans is 0",
                                 "xfs_log_worker: xfs_sync_sb allocates transaction", "freeze_quiescence"});
}

TEST_CASE("freeze vs log worker: v5.7's poll sleeps delay(100) while the worker runs, and never starves it") {
    // The plain loop "while (m_active_trans > 0) delay(100);": a 400 ms sleep
    // does not end ahead of a task runnable for longer than sim::sched_latency,
    // so under every strategy the worker it waits for finishes and the poll
    // then reads 0 (no liveness violation, however the strategy prefers).
    const auto scenario = loader::load_scenario(freeze_scenario);
    runner::Simulation simulation(scenario, *scenario.find_variant("counter"));
    std::uint64_t waited = 0;
    for (const char* strategy : {"random", "pct:2", "pct:3"}) {
        for (std::uint64_t seed = 0; seed < 300; seed++) {
            const auto outcome = simulation.run_strategy(spec_of(strategy), seed, true);
            for (const auto& violation : outcome.violations) CHECK(violation.checker == "freeze_quiescence");
            CHECK(outcome.cut_at_step == 0);  // never polling until the step bound
            const auto polled = outcome.story.find("xfs_quiesce_attr: m_active_trans 1, delay(100)");
            if (polled == std::string::npos) continue;
            waited++;
            // The worker's transaction is freed, then a later poll reads 0.
            CHECK(outcome.story.find("xfs_quiesce_attr: m_active_trans is 0", polled) != std::string::npos);
        }
    }
    CHECK(waited > 0);
}

TEST_CASE(
    "freeze vs log worker: after a set-up that logs, one worker run cannot cover (v5.7's covering test)") {
    // xfs_log_need_covered returns 0 while the AIL holds items: the set-up's
    // fsync left its inode in the AIL, so the first run pushes it and only a
    // second run may cover. With one daemon wake-up no schedule covers, so
    // counter finds nothing; with two, every covering run follows a push.
    auto scenario = loader::load_scenario(freeze_scenario);
    scenario.explore.daemon_wakeups = 1;
    runner::Simulation one_run(scenario, *scenario.find_variant("counter"));
    for (const char* strategy : {"random", "pct:2", "pct:3"}) {
        for (std::uint64_t seed = 0; seed < 300; seed++) {
            const auto outcome = one_run.run_strategy(spec_of(strategy), seed, true);
            CHECK_FALSE(outcome.violated());
            CHECK(outcome.story.find("xfs_log_need_covered says yes") == std::string::npos);
        }
    }
    scenario.explore.daemon_wakeups = 2;
    runner::Simulation two_runs(scenario, *scenario.find_variant("counter"));
    std::uint64_t covered = 0;
    for (std::uint64_t seed = 0; seed < 300; seed++) {
        const auto story = two_runs.run_strategy(spec_of("pct:3"), seed, true).story;
        const auto yes = story.find("xfs_log_need_covered says yes");
        if (yes == std::string::npos) continue;
        covered++;
        // An earlier run of the worker refused (the AIL or the CIL held
        // something) and its push drained the AIL.
        const auto refused = story.find("xfs_log_need_covered says no");
        CHECK(refused < yes);
        CHECK(story.find("xfs-sync  AIL push", refused) < yes);
    }
    CHECK(covered > 0);
}

TEST_CASE("xfs: a thaw that races a freeze waits for s_umount and thaws, or fails in freeze_super's window") {
    // freeze_super holds s_umount (down_write) from after the SB_FREEZE_WRITE
    // drain to SB_FREEZE_COMPLETE; thaw_super takes it too. A thaw there
    // waits and then thaws; a thaw while freeze_super waits for writers (it
    // dropped s_umount) finds SB_FREEZE_WRITE and fails with EINVAL.
    for (const bool in_window : {false, true}) {
        CAPTURE(in_window);
        test_support::ModelWorld world("xfs", {}, model::Geometry{4096, 1024, "nvme"}, {"I", "J"});
        world.run({{.name = "create", .file = 0}});
        const sim::TaskId freezer = world.spawn({{.name = "freeze"}});
        const auto* point = in_window ? &model::xfs::points::freeze_write : &model::xfs::points::freeze_fs;
        test_support::drive(world.scheduler, freezer, point, {});
        model::OpResult thawed = model::OpResult::ok;
        const sim::TaskId thawer =
            world.scheduler.spawn("thawer", [&] { thawed = world.execute({.name = "thaw"}); });
        test_support::drive(world.scheduler, thawer, nullptr, {freezer}, test_support::WhenStuck::stop);
        if (in_window) {
            CHECK(world.scheduler.task_state(thawer) == sim::TaskState::finished);
            CHECK(thawed == model::OpResult::failed);  // EINVAL: SB_FREEZE_WRITE, not frozen
        } else {
            CHECK(world.scheduler.task_state(thawer) == sim::TaskState::blocked);  // on s_umount
            CHECK(std::string(world.scheduler.blocked_on(thawer)).find("s_umount") != std::string::npos);
        }
        world.settle();
        CHECK(thawed == (in_window ? model::OpResult::failed : model::OpResult::ok));
        // Thawed: a writer goes on. After the failed thaw the file system
        // stays frozen and a create would wait for ever.
        if (!in_window) world.run({{.name = "create", .file = 1}});
    }
}
