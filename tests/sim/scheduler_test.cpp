// The scheduler: fibers, yield points, blocking, candidates, deadlock and
// teardown, virtual time and timers, daemons and CPUs (sim/scheduler.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/prng.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "sim/sync.hpp"
#include "sim/trace.hpp"
#include "sim/yield_point.hpp"
#include "tests/sim/engine_support.hpp"

using namespace engine_test;

namespace {

/// Picks the last candidate: a timer whenever one is offered, and of the
/// timers the last listed (the charged ones come after the free one).
class LastStrategy final : public sim::Strategy {
public:
    auto choose(const sim::Scheduler& /*scheduler*/, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        return candidates.size() - 1;
    }
};

}  // namespace

// ---- Scheduler: yield points, blocking, candidates ----

TEST_CASE("scheduler: tasks interleave only at yield points") {
    std::vector<std::string> log;
    sim::Scheduler scheduler({}, nullptr);
    for (const char* name : {"a", "b"}) {
        scheduler.spawn(name, [&log, name = std::string(name)] {
            log.push_back(name + "1");
            log.push_back(name + "2");
            sim::yield(point_a);
            log.push_back(name + "3");
            log.push_back(name + "4");
        });
    }
    SwitchingStrategy switching;
    CHECK(run_to_end(scheduler, switching) == sim::StepOutcome::finished);
    // Switching at every decision still cannot split a stretch between two
    // yield points.
    CHECK(log == std::vector<std::string>{"a1", "a2", "b1", "b2", "a3", "a4", "b3", "b4"});
}

TEST_CASE("scheduler: under random schedules a stretch between yield points is never split") {
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        std::vector<int> log;
        sim::Scheduler scheduler({}, nullptr);
        for (int id = 0; id < 3; id++) {
            scheduler.spawn(numbered("t", id), [&log, id] {
                for (int round = 0; round < 4; round++) {
                    log.push_back(id);
                    log.push_back(id);
                    sim::yield(point_a);
                }
            });
        }
        sim::RandomStrategy random{sim::Prng(seed)};
        REQUIRE(run_to_end(scheduler, random) == sim::StepOutcome::finished);
        REQUIRE(log.size() == 24);
        for (std::size_t i = 0; i < log.size(); i += 2) CHECK(log[i] == log[i + 1]);
    }
}

TEST_CASE("scheduler: a blocked task is never a candidate until woken") {
    sim::Scheduler scheduler({}, nullptr);
    const sim::TaskId sleeper =
        scheduler.spawn("sleeper", [&scheduler] { scheduler.block("test.wait"); });
    sim::TaskId waker = sim::no_task;
    waker = scheduler.spawn("waker", [&scheduler, sleeper] {
        sim::yield(point_a);
        scheduler.wake(sleeper);
    });
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{sleeper, waker});
    run_task(scheduler, sleeper);
    CHECK(scheduler.task_state(sleeper) == sim::TaskState::blocked);
    CHECK(std::string(scheduler.blocked_on(sleeper)) == "test.wait");
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{waker});
    run_task(scheduler, waker);
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{waker});
    run_task(scheduler, waker);
    CHECK(scheduler.task_state(waker) == sim::TaskState::finished);
    CHECK(scheduler.task_state(sleeper) == sim::TaskState::runnable);
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{sleeper});
    run_task(scheduler, sleeper);
    CHECK(candidate_tasks(scheduler).empty());
    sim::FirstStrategy first;
    CHECK(scheduler.step(first) == sim::StepOutcome::finished);
    CHECK(scheduler.all_finished());
}

TEST_CASE("scheduler: candidates are exactly the runnable tasks at every random decision") {
    for (std::uint64_t seed = 1; seed <= 20; seed++) {
        sim::RandomStrategy random{sim::Prng(seed)};
        AuditingStrategy audit(random);
        const RunRecord record = run_workload(audit);
        CHECK(record.outcome == sim::StepOutcome::finished);
        CHECK(audit.decisions > 0);
        CHECK(audit.not_runnable_listed == 0);
        CHECK(audit.runnable_missing == 0);
    }
}

TEST_CASE("scheduler: a task that yields records its point and counts a hit") {
    sim::Scheduler scheduler({}, nullptr);
    for (std::uint64_t hits : scheduler.hits()) CHECK(hits == 0);
    const sim::TaskId task = scheduler.spawn("yielder", [] {
        sim::yield(point_a);
        sim::yield(point_a);
        sim::yield(point_b);
        sim::yield(point_a);
    });
    CHECK(scheduler.last_point(task) == nullptr);
    run_task(scheduler, task);
    REQUIRE(scheduler.last_point(task) != nullptr);
    CHECK(scheduler.last_point(task)->name == "test.scheduler_test.a");
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    REQUIRE(scheduler.hits().size() == sim::yield_point_count());
    CHECK(scheduler.hits()[point_a.id] == 3);
    CHECK(scheduler.hits()[point_b.id] == 1);
    CHECK(scheduler.hits()[point_c.id] == 0);
    CHECK(scheduler.steps() == 5);
}

TEST_CASE("scheduler: an exception in a task surfaces from the step that ran it") {
    sim::Scheduler scheduler({}, nullptr);
    const sim::TaskId task = scheduler.spawn("thrower", [] {
        sim::yield(point_a);
        throw std::runtime_error("model failure");
    });
    run_task(scheduler, task);
    CHECK_THROWS_WITH_AS(scheduler.execute(sim::Candidate{task}), "model failure",
                         std::runtime_error);
}

// ---- Deadlock and teardown ----

TEST_CASE(
    "scheduler: two tasks locking two mutexes in opposite order deadlock, and both are named") {
    sim::Mutex first_mutex("mutex.a");
    sim::Mutex second_mutex("mutex.b");
    sim::Scheduler scheduler({}, nullptr);
    const sim::TaskId left = scheduler.spawn("left", [&] {
        first_mutex.lock();
        sim::yield(point_a);
        second_mutex.lock();
        second_mutex.unlock();
        first_mutex.unlock();
    });
    const sim::TaskId right = scheduler.spawn("right", [&] {
        second_mutex.lock();
        sim::yield(point_a);
        first_mutex.lock();
        first_mutex.unlock();
        second_mutex.unlock();
    });
    SwitchingStrategy switching;
    CHECK(run_to_end(scheduler, switching) == sim::StepOutcome::deadlock);
    CHECK(scheduler.task_state(left) == sim::TaskState::blocked);
    CHECK(scheduler.task_state(right) == sim::TaskState::blocked);
    CHECK_FALSE(scheduler.all_finished());
    const std::string report = scheduler.describe_blocked();
    CHECK(report.find("left blocked on mutex.b") != std::string::npos);
    CHECK(report.find("right blocked on mutex.a") != std::string::npos);
    // A deadlock is stable: stepping again reports it again.
    CHECK(scheduler.step(switching) == sim::StepOutcome::deadlock);
}

TEST_CASE("scheduler: opposite lock order completes when one task runs to the end first") {
    sim::Mutex first_mutex("mutex.a");
    sim::Mutex second_mutex("mutex.b");
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("left", [&] {
        first_mutex.lock();
        sim::yield(point_a);
        second_mutex.lock();
        second_mutex.unlock();
        first_mutex.unlock();
    });
    scheduler.spawn("right", [&] {
        second_mutex.lock();
        sim::yield(point_a);
        first_mutex.lock();
        first_mutex.unlock();
        second_mutex.unlock();
    });
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    CHECK(scheduler.describe_blocked().empty());
}

TEST_CASE(
    "scheduler: a sleeping task with no timer left would be a deadlock, with the timer it is not") {
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("sleeper", [&scheduler] { scheduler.sleep(5 * sim::microseconds); });
    sim::FirstStrategy first;
    CHECK(scheduler.step(first) == sim::StepOutcome::ran_task);
    CHECK(scheduler.has_timers());
    CHECK(scheduler.step(first) == sim::StepOutcome::fired_timer);
    CHECK(scheduler.step(first) == sim::StepOutcome::ran_task);
    CHECK(scheduler.step(first) == sim::StepOutcome::finished);
    CHECK(scheduler.now() == 5 * sim::microseconds);
}

namespace {
/// Records that its destructor ran, and whether the scheduler was still
/// reachable from it (model destructors may look for it).
struct UnwindWitness {
    bool* unwound;
    bool* saw_scheduler;
    const sim::Scheduler* expected;
    ~UnwindWitness() {
        *unwound = true;
        *saw_scheduler = sim::has_current_scheduler() && &sim::current_scheduler() == expected;
    }
};
}  // namespace

TEST_CASE(
    "scheduler: destroying a scheduler with suspended and blocked tasks unwinds their stacks") {
    bool unwound[4] = {false, false, false, false};
    bool saw_scheduler[4] = {false, false, false, false};
    sim::Mutex mutex("test.mutex");
    sim::Completion never("test.never");
    {
        sim::Scheduler scheduler({}, nullptr);
        const sim::Scheduler* self = &scheduler;
        scheduler.spawn("yielder", [&, self] {
            UnwindWitness witness{&unwound[0], &saw_scheduler[0], self};
            mutex.lock();
            sim::yield(point_a);
            mutex.unlock();
        });
        scheduler.spawn("lock_waiter", [&, self] {
            UnwindWitness witness{&unwound[1], &saw_scheduler[1], self};
            mutex.lock();
            mutex.unlock();
        });
        scheduler.spawn("sleeper", [&, self] {
            UnwindWitness witness{&unwound[2], &saw_scheduler[2], self};
            sim::current_scheduler().sleep(1 * sim::seconds);
        });
        scheduler.spawn("never_started", [&, self] {
            UnwindWitness witness{&unwound[3], &saw_scheduler[3], self};
        });
        for (sim::TaskId task = 0; task < 3; task++) run_task(scheduler, task);
        CHECK(scheduler.task_state(1) == sim::TaskState::blocked);
        CHECK(scheduler.task_state(2) == sim::TaskState::blocked);
    }
    for (int i = 0; i < 3; i++) {
        CAPTURE(i);
        CHECK(unwound[i]);
        CHECK(saw_scheduler[i]);
    }
    // A task that never ran has no frame to unwind.
    CHECK_FALSE(unwound[3]);
    CHECK_FALSE(sim::has_current_scheduler());
}

// ~Scheduler ends a suspended task by an exception thrown where it left
// (TaskCancelled, not a std::exception): the code after its suspension never
// runs, and a model's catch of std::exception does not stop the unwind.
TEST_CASE("scheduler: ending a suspended task runs none of its code past the suspension") {
    bool unwound = false;
    bool saw_scheduler = false;
    bool resumed = false;
    bool caught = false;
    {
        sim::Scheduler scheduler({}, nullptr);
        const sim::Scheduler* self = &scheduler;
        scheduler.spawn("yielder", [&, self] {
            UnwindWitness witness{&unwound, &saw_scheduler, self};
            try {
                sim::yield(point_a);
                resumed = true;
            } catch (const std::exception&) {
                caught = true;
            }
        });
        run_task(scheduler, 0);
        CHECK(scheduler.task_state(0) == sim::TaskState::runnable);
    }
    CHECK(unwound);
    CHECK(saw_scheduler);
    CHECK_FALSE(resumed);
    CHECK_FALSE(caught);
}

TEST_CASE("scheduler: ending a run while a lower task waits for a mutex a higher one holds") {
    // ~Scheduler ends tasks in id order: the waiter first, still queued on
    // the mutex; the holder's unwinding then unlocks it and hands it over to
    // the ended waiter, which must stay ended (it asserted "blocked" before).
    bool holder_unwound = false;
    bool saw_scheduler = false;
    {
        // Declared first, so it outlives the scheduler whose end unwinds its holder.
        sim::Mutex mutex("test.scheduler_test.mutex");
        sim::Scheduler scheduler({}, nullptr);
        const sim::Scheduler* self = &scheduler;
        scheduler.spawn("waiter", [&] {
            sim::yield(point_a);  // lets the holder take the mutex first
            const sim::MutexGuard guard(mutex);
        });
        scheduler.spawn("holder", [&, self] {
            const sim::MutexGuard guard(mutex);
            UnwindWitness witness{&holder_unwound, &saw_scheduler, self};
            sim::yield(point_a);
        });
        run_task(scheduler, 0);  // waiter: to point_a
        run_task(scheduler, 1);  // holder: takes the mutex, to point_a
        run_task(scheduler, 0);  // waiter: blocks on the mutex
        CHECK(scheduler.task_state(0) == sim::TaskState::blocked);
        CHECK(mutex.holder() == 1);
    }
    CHECK(holder_unwound);
    CHECK(saw_scheduler);
}

TEST_CASE(
    "scheduler: a first step that blocks before any yield point touches everything, unless it reports") {
    sim::WaitQueue queue("test.scheduler_test.first_step_queue");  // outlives the scheduler
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("raw", [&scheduler] { scheduler.block("raw"); });
    scheduler.spawn("queued", [&queue] { queue.wait(); });
    scheduler.spawn("sleeper", [&scheduler] { scheduler.sleep(10); });
    scheduler.spawn("other_sleeper", [&scheduler] { scheduler.sleep(10); });
    run_task(scheduler, 0);  // no yield point declares its code, nothing reported
    CHECK(scheduler.last_footprint() == sim::footprint_all);
    run_task(scheduler, 1);  // the wait queue reports itself
    CHECK(scheduler.last_footprint() == sim::resource("test.scheduler_test.first_step_queue"));
    // A sleep reads the clock and adds a timer: its own task's clock bit,
    // which orders it with timer steps (everything) and not with another
    // task's sleep.
    run_task(scheduler, 2);
    const sim::Footprint sleeper = scheduler.last_footprint();
    run_task(scheduler, 3);
    CHECK_FALSE(sleeper.empty());
    CHECK(sleeper != sim::footprint_all);
    CHECK(sim::independent(sleeper, scheduler.last_footprint()));
    CHECK_FALSE(sim::independent(sleeper, sim::footprint_all));
}

namespace {
const sim::YieldPoint declared = sim::register_yield_point(
    "test.scheduler_test.cover_declared", "declares one resource", {"test.scheduler_test.declared"});
const sim::YieldPoint between = sim::register_yield_point(
    "test.scheduler_test.cover_between", "between operations: covers only itself",
    {"test.scheduler_test.between"}, false);
}  // namespace

TEST_CASE("scheduler: cover reaches the steps of its stretch that end at a wait or an uncovering point") {
    // An operation's start covers the stretch no yield point declares
    // (runner/workload.cpp, FileSystem::op_footprint): a step of it that
    // waits, or that ends at workload.op_begin, touches what it covers; a
    // step that reaches a point whose declaration covers the code before it
    // does not.
    const sim::Footprint covered = sim::resource("test.scheduler_test.covered");
    sim::WaitQueue queue("test.scheduler_test.cover_queue");  // outlives the scheduler
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("op", [&] {
        sim::yield(declared);
        sim::cover(covered);
        queue.wait();
        sim::yield(declared);
        sim::cover(covered);
        sim::yield(between);
        sim::yield(declared);
    });
    scheduler.spawn("waker", [&] { queue.wake_all(); });
    run_task(scheduler, 0);  // to the first point
    run_task(scheduler, 0);  // covers, then waits
    CHECK(scheduler.last_footprint().meets(covered));
    run_task(scheduler, 1);  // wakes it
    run_task(scheduler, 0);  // after the wait, to a point that covers the code before it
    CHECK_FALSE(scheduler.last_footprint().meets(covered));
    run_task(scheduler, 0);  // covers, to a point that covers only itself
    CHECK(scheduler.last_footprint().meets(covered));
    run_task(scheduler, 0);  // past it: the cover ended there
    CHECK_FALSE(scheduler.last_footprint().meets(covered));
}

namespace {
/// Two values, each a resource of its own, for check_footprints.
class TwoValues final : public sim::ResourceHasher {
public:
    std::uint64_t declared_value = 0;
    std::uint64_t other_value = 0;
    auto hash_resources(sim::ResourceHashes& out) -> bool override {
        out.add(sim::resource("test.scheduler_test.declared"), declared_value);
        out.add(sim::resource("test.scheduler_test.other"), other_value);
        return true;
    }
    auto hash_outside(sim::StateHash& /*out*/) -> bool override { return true; }
};
}  // namespace

TEST_CASE("scheduler: check_footprints names a step that changed a resource its footprint leaves out") {
    // The step from `declared` to `declared` may change the declared value;
    // the one that also changes the other value, which no point names and
    // no lock reports, is an omission, named by its task, points and resource.
    TwoValues values;
    sim::Scheduler scheduler({}, nullptr);
    scheduler.check_footprints(&values);
    scheduler.spawn("writer", [&] {
        sim::yield(declared);
        values.declared_value++;
        sim::yield(declared);
        values.other_value++;
        sim::yield(declared);
        values.other_value++;
        sim::current_scheduler().touch(sim::resource("test.scheduler_test.other"));
    });
    for (int i = 0; i < 4; i++) run_task(scheduler, 0);
    CHECK(scheduler.footprint_steps_checked() == 4);
    REQUIRE(scheduler.footprint_omissions().size() == 1);
    const sim::FootprintOmission& omission = scheduler.footprint_omissions().front();
    CHECK(omission.task == "writer");
    CHECK(omission.from == "test.scheduler_test.cover_declared");
    CHECK(omission.to == "test.scheduler_test.cover_declared");
    CHECK(omission.resource == "test.scheduler_test.other");
}

TEST_CASE("scheduler: a nested scheduler restores the outer one when destroyed") {
    sim::Scheduler outer({}, nullptr);
    CHECK(&sim::current_scheduler() == &outer);
    {
        sim::Scheduler inner({}, nullptr);
        CHECK(&sim::current_scheduler() == &inner);
    }
    CHECK(&sim::current_scheduler() == &outer);
}

// ---- Virtual time and timers ----

TEST_CASE("timers: fire in (time, sequence) order and advance now()") {
    std::vector<std::string> fired;
    std::vector<sim::Instant> times;
    sim::Scheduler scheduler({}, nullptr);
    auto record = [&](std::string name) {
        return [&, name] {
            fired.push_back(name);
            times.push_back(scheduler.now());
        };
    };
    scheduler.at(30, record("c"));
    scheduler.at(10, record("a1"));
    scheduler.at(20, [&] {
        record("b1")();
        // A timer added for the current instant goes after those already queued.
        scheduler.at(scheduler.now(), record("b3"));
    });
    scheduler.at(20, record("b2"));
    scheduler.at(10, record("a2"));
    CHECK(scheduler.now() == 0);
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    CHECK(fired == std::vector<std::string>{"a1", "a2", "b1", "b2", "b3", "c"});
    CHECK(times == std::vector<sim::Instant>{10, 10, 20, 20, 20, 30});
    CHECK(scheduler.now() == 30);
    CHECK_FALSE(scheduler.has_timers());
    CHECK(scheduler.last_ran() == sim::no_task);
}

TEST_CASE("timers: sleep wakes the task at now() plus the duration") {
    sim::Instant woke_at = 0;
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("sleeper", [&] {
        sim::current_scheduler().sleep(7 * sim::milliseconds);
        woke_at = sim::now();
        sim::current_scheduler().sleep(3 * sim::milliseconds);
    });
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    CHECK(woke_at == 7 * sim::milliseconds);
    CHECK(scheduler.now() == 10 * sim::milliseconds);
}

TEST_CASE("timers: with timers_race_tasks the timer is a candidate, listed after the tasks") {
    sim::Scheduler scheduler({.timers_race_tasks = true}, nullptr);
    scheduler.spawn("task", [] { sim::yield(point_a); });
    scheduler.after(1, [] {});
    const auto candidates = candidate_tasks(scheduler);
    CHECK(candidates == std::vector<sim::TaskId>{0, sim::no_task});
}

TEST_CASE("timers: with timers_race_tasks=false timers fire only when no task can run") {
    std::vector<std::string> log;
    sim::Scheduler scheduler({.timers_race_tasks = false}, nullptr);
    scheduler.at(0, [&] { log.push_back("timer"); });
    scheduler.spawn("task", [&] {
        for (int i = 0; i < 3; i++) {
            log.push_back("task");
            sim::yield(point_a);
        }
        sim::current_scheduler().sleep(1);
        log.push_back("task after sleep");
    });
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{0});
    LastStrategy last;  // would pick the timer whenever it is offered
    CHECK(run_to_end(scheduler, last) == sim::StepOutcome::finished);
    CHECK(log == std::vector<std::string>{"task", "task", "task", "timer", "task after sleep"});
    CHECK(scheduler.choices().empty());  // never more than one candidate
}

TEST_CASE("timers: with timers_race_tasks a timer may overtake a runnable task") {
    std::vector<std::string> log;
    sim::Scheduler scheduler({.timers_race_tasks = true}, nullptr);
    scheduler.at(0, [&] { log.push_back("timer"); });
    scheduler.spawn("task", [&] {
        log.push_back("task");
        sim::yield(point_a);
        log.push_back("task");
    });
    sim::ReplayStrategy timer_first({1});
    CHECK(run_to_end(scheduler, timer_first) == sim::StepOutcome::finished);
    CHECK(log == std::vector<std::string>{"timer", "task", "task"});
    CHECK(scheduler.choices() == std::vector<std::uint32_t>{1});
}

// ~Scheduler makes each unwinding task current while its destructors run, so a
// MutexGuard on its stack releases the lock as its holder.
TEST_CASE("scheduler: a task destroyed while holding a MutexGuard unwinds without crashing") {
    sim::Mutex mutex("test.mutex");
    bool unwound = false;
    bool saw_scheduler = false;
    {
        sim::Scheduler scheduler({}, nullptr);
        scheduler.spawn("holder", [&] {
            UnwindWitness witness{&unwound, &saw_scheduler, &scheduler};
            sim::MutexGuard guard(mutex);
            sim::yield(point_a);
        });
        run_task(scheduler, 0);
        CHECK(mutex.held());
    }
    CHECK(unwound);
    CHECK(saw_scheduler);
    CHECK_FALSE(mutex.held());
}


TEST_CASE("daemons: a run finishes when the other tasks have, though a daemon still sleeps") {
    sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = steps_bound}, nullptr);
    int daemon_rounds = 0;
    scheduler.spawn_daemon("kthread", [&] {
        for (;;) {
            sim::current_scheduler().sleep(10 * sim::milliseconds);
            daemon_rounds++;
        }
    });
    scheduler.spawn("app", [] { sim::current_scheduler().sleep(35 * sim::milliseconds); });
    CHECK(run_first(scheduler) == sim::StepOutcome::finished);
    // The daemon ran while the app slept (10, 20, 30 ms), and its next sleep
    // did not keep the run going to 40 ms.
    CHECK(daemon_rounds == 3);
    CHECK(scheduler.now() == 35 * sim::milliseconds);
}

TEST_CASE("daemons: a task blocked forever is still a deadlock, daemons or not") {
    sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = steps_bound}, nullptr);
    sim::WaitQueue never("test.never");
    scheduler.spawn_daemon("kthread", [&] { never.wait(); });
    scheduler.spawn("app", [&] { never.wait(); });
    CHECK(run_first(scheduler) == sim::StepOutcome::deadlock);
}

TEST_CASE("cpus: with fewer CPUs than busy tasks, computing takes turns in FIFO order") {
    auto finish_times = [](std::uint32_t cpus) {
        sim::Scheduler scheduler(
            {.timers_race_tasks = false, .steps_max = steps_bound, .cpu_costs = true, .cpus = cpus}, nullptr);
        std::vector<sim::Instant> done(4, 0);
        for (int i = 0; i < 4; i++) {
            scheduler.spawn(numbered("t", i), [&done, i] {
                sim::cpu(100 * sim::microseconds);
                done[static_cast<std::size_t>(i)] = sim::now();
            });
        }
        CHECK(run_first(scheduler) == sim::StepOutcome::finished);
        return done;
    };
    const auto unlimited = finish_times(0);
    const auto one = finish_times(1);
    const auto two = finish_times(2);
    // Each task computes 50..150 us: in parallel all end by 150 us; on one
    // CPU they end one after another, in spawn order; two CPUs lie between.
    for (auto when : unlimited) CHECK(when <= 150 * sim::microseconds);
    CHECK(std::is_sorted(one.begin(), one.end()));
    CHECK(one.back() >= 4 * 50 * sim::microseconds);
    CHECK(*std::max_element(two.begin(), two.end()) <= one.back());
    CHECK(*std::max_element(two.begin(), two.end()) >= *std::max_element(unlimited.begin(), unlimited.end()));
}

TEST_CASE("daemons: a daemon's wake-up is no candidate while a task can run") {
    sim::Scheduler scheduler({.timers_race_tasks = true, .steps_max = steps_bound}, nullptr);
    scheduler.spawn_daemon("kthread", [] {
        for (;;) sim::current_scheduler().sleep(sim::milliseconds);
    });
    scheduler.spawn("app", [] {
        sim::yield(point_a);
        sim::yield(point_a);
    });
    scheduler.execute(sim::Candidate{0});  // the daemon goes to sleep
    // Only the app is offered, never the daemon's timer, until the app is done.
    CHECK(scheduler.candidates().size() == 1);
    CHECK_FALSE(scheduler.candidates()[0].is_timer());
    CHECK(run_first(scheduler) == sim::StepOutcome::finished);
    CHECK(scheduler.now() == 0);
}

// kthread_sleep is a daemon's sleep (its timer does not keep the run going)
// that ends, when the run ends during it, by returning true to the daemon's
// loop, which returns: no exception crosses the daemon's frames.
TEST_CASE("daemons: a daemon in kthread_sleep ends by returning when the run ends") {
    int woken = 0;
    bool stopped = false;
    bool caught = false;
    {
        sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = steps_bound}, nullptr);
        scheduler.spawn_daemon("kthread", [&] {
            try {
                for (;;) {
                    if (sim::current_scheduler().kthread_sleep(sim::milliseconds)) {
                        stopped = true;
                        return;
                    }
                    woken++;
                }
            } catch (...) {
                caught = true;
                throw;
            }
        });
        scheduler.spawn("app", [] { sim::current_scheduler().sleep(3 * sim::milliseconds / 2); });
        CHECK(run_first(scheduler) == sim::StepOutcome::finished);
        CHECK(woken == 1);
        CHECK_FALSE(stopped);
    }
    CHECK(stopped);
    CHECK_FALSE(caught);
    CHECK(woken == 1);
}

TEST_CASE("daemons: every task blocked with only daemons' sleeps pending is a deadlock") {
    sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = steps_bound}, nullptr);
    sim::WaitQueue never("test.never.daemon");
    scheduler.spawn_daemon("kthread", [] {
        for (;;) sim::current_scheduler().sleep(30 * sim::seconds);
    });
    scheduler.spawn("app", [&] { never.wait(); });
    CHECK(run_first(scheduler) == sim::StepOutcome::deadlock);
    CHECK(scheduler.now() == 0);
}

TEST_CASE("timers: a timer already due hashes by its place in the order, not by how late it is") {
    // Two device completions; the later one fires first (an I/O reordering),
    // so the earlier one is late by 30 - first.
    const auto engine_after_reorder = [](sim::Duration first) {
        sim::Scheduler scheduler({.timers_race_tasks = true, .io_reorders = 1}, nullptr);
        scheduler.io_after(first, [] {});
        scheduler.io_after(30, [] {});
        LastStrategy charged;  // the reordered completion, listed last
        CHECK(scheduler.step(charged) == sim::StepOutcome::fired_timer);
        CHECK(scheduler.now() == 30);
        sim::StateHash hash;
        scheduler.hash_engine(hash);
        return hash.value();
    };
    // Late by 20 or by 10: it fires at now, first, either way.
    CHECK(engine_after_reorder(10) == engine_after_reorder(20));
    // Due at now, not late: a timer added for now fires after it or before
    // it by id, so that state is another.
    CHECK(engine_after_reorder(10) != engine_after_reorder(30));
}
