// The engine: scheduler (fibers, yield points, blocking, timers, deadlock),
// blocking primitives, strategies, PRNG streams and the yield-point registry.
#include "sim/scheduler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/prng.hpp"
#include "sim/strategy.hpp"
#include "sim/sync.hpp"
#include "sim/trace.hpp"
#include "sim/yield_point.hpp"

namespace {

// Registered at static initialisation, before any scheduler sizes its hit
// counters; the names are unique to this file.
const sim::YieldPoint point_a =
    sim::register_yield_point("test.scheduler_test.a", "first test point");
const sim::YieldPoint point_b =
    sim::register_yield_point("test.scheduler_test.b", "second test point");
const sim::YieldPoint point_c =
    sim::register_yield_point("test.scheduler_test.c", "third test point");

constexpr std::uint64_t steps_bound = 100000;

/// "t3": names tasks and log entries.
auto numbered(const char* prefix, int number) -> std::string {
    std::string out(prefix);
    out += std::to_string(number);
    return out;
}

/// Steps until every task finished or a deadlock; fails the test past the bound.
auto run_to_end(sim::Scheduler& scheduler, sim::Strategy& strategy) -> sim::StepOutcome {
    for (std::uint64_t i = 0; i < steps_bound; i++) {
        const sim::StepOutcome outcome = scheduler.step(strategy);
        if (outcome == sim::StepOutcome::finished || outcome == sim::StepOutcome::deadlock) {
            return outcome;
        }
    }
    FAIL("the run did not end within the step bound");
    return sim::StepOutcome::deadlock;
}

/// Runs one chosen task for one step.
void run_task(sim::Scheduler& scheduler, sim::TaskId task) {
    REQUIRE(scheduler.task_state(task) == sim::TaskState::runnable);
    CHECK(scheduler.execute(sim::Candidate{task}) == sim::StepOutcome::ran_task);
}

auto candidate_tasks(sim::Scheduler& scheduler) -> std::vector<sim::TaskId> {
    std::vector<sim::TaskId> out;
    for (const sim::Candidate& candidate : scheduler.candidates()) out.push_back(candidate.task);
    return out;
}

/// Picks a candidate other than the task that ran last whenever it can: the
/// most switching-happy schedule.
class SwitchingStrategy final : public sim::Strategy {
public:
    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        for (std::size_t i = 0; i < candidates.size(); i++) {
            if (candidates[i].task != scheduler.last_ran()) return i;
        }
        return 0;
    }
};

/// Delegates to another strategy and checks, at every decision, that the
/// candidates are exactly the runnable tasks (plus possibly the timer).
class AuditingStrategy final : public sim::Strategy {
public:
    explicit AuditingStrategy(sim::Strategy& inner) : inner_(inner) {}
    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        std::set<sim::TaskId> listed;
        for (const sim::Candidate& candidate : candidates) {
            if (candidate.is_timer()) continue;
            if (scheduler.task_state(candidate.task) != sim::TaskState::runnable) {
                not_runnable_listed++;
            }
            listed.insert(candidate.task);
        }
        for (sim::TaskId task = 0; task < scheduler.task_count(); task++) {
            if (scheduler.task_state(task) == sim::TaskState::runnable && !listed.contains(task)) {
                runnable_missing++;
            }
        }
        decisions++;
        return inner_.choose(scheduler, candidates);
    }
    std::uint64_t decisions = 0;
    std::uint64_t not_runnable_listed = 0;
    std::uint64_t runnable_missing = 0;

private:
    sim::Strategy& inner_;
};

/// Three tasks contending for a mutex, sleeping while they hold it, waiting
/// on a completion and writing story notes: enough decisions for strategies
/// to differ, and every kind of trace line.
struct Workload {
    sim::Mutex mutex{"workload.mutex"};
    sim::Completion started{"workload.started"};
    std::vector<std::string> log;

    void spawn(sim::Scheduler& scheduler) {
        scheduler.after(3 * sim::microseconds, [this] { log.push_back("timer"); });
        for (int id = 0; id < 3; id++) {
            scheduler.spawn(numbered("worker", id), [this, id, &scheduler] {
                if (id == 0) {
                    started.complete();
                } else {
                    started.wait();
                }
                for (int round = 0; round < 3; round++) {
                    sim::yield(point_a);
                    mutex.lock();
                    log.push_back(numbered("w", id) + numbered("r", round));
                    SIM_NOTE("worker " + std::to_string(id) + " holds the mutex");
                    sim::yield(point_b);
                    scheduler.sleep(static_cast<sim::Duration>(id + 1) * sim::microseconds);
                    mutex.unlock();
                    sim::yield(point_c);
                }
            });
        }
    }
};

struct RunRecord {
    std::vector<std::uint32_t> choices;
    std::uint64_t trace_hash;
    std::vector<std::string> log;
    sim::StepOutcome outcome;
};

auto run_workload(sim::Strategy& strategy) -> RunRecord {
    sim::Trace trace(true);
    Workload workload;
    sim::Scheduler scheduler({}, &trace);
    workload.spawn(scheduler);
    const sim::StepOutcome outcome = run_to_end(scheduler, strategy);
    return {scheduler.choices(), trace.hash(), workload.log, outcome};
}

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

// ---- Blocking primitives ----

TEST_CASE("mutex: unlock hands the lock to the first waiter, not back to the unlocker") {
    std::vector<sim::TaskId> acquired;
    sim::Mutex mutex("test.mutex");
    sim::Scheduler scheduler({}, nullptr);
    auto body = [&](int rounds) {
        return [&, rounds] {
            for (int round = 0; round < rounds; round++) {
                mutex.lock();
                acquired.push_back(scheduler.current());
                sim::yield(point_a);
                mutex.unlock();
            }
        };
    };
    const sim::TaskId first_task = scheduler.spawn("first", body(2));
    const sim::TaskId second = scheduler.spawn("second", body(1));
    const sim::TaskId third = scheduler.spawn("third", body(1));
    run_task(scheduler, first_task);  // takes the lock, yields holding it
    run_task(scheduler, second);      // queues
    run_task(scheduler, third);       // queues behind second
    CHECK(mutex.holder() == first_task);
    CHECK(scheduler.task_state(second) == sim::TaskState::blocked);
    CHECK(scheduler.task_state(third) == sim::TaskState::blocked);
    // Unlocks (handing to `second` at once) and asks again: it must queue
    // behind `third`.
    run_task(scheduler, first_task);
    CHECK(mutex.holder() == second);
    CHECK(scheduler.task_state(first_task) == sim::TaskState::blocked);
    CHECK(std::string(scheduler.blocked_on(first_task)) == "test.mutex");
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    CHECK(acquired == std::vector<sim::TaskId>{first_task, second, third, first_task});
    CHECK_FALSE(mutex.held());
}

TEST_CASE("mutex: a guard of a task destroyed while it waits with the lock dropped releases nothing") {
    // jbd2_log_do_checkpoint's shape: under a guard, drop the lock, wait,
    // take it again. A run that ends while the task waits destroys it there.
    sim::Mutex mutex("test.mutex");
    sim::WaitQueue never("test.never");
    bool retaken = false;
    {
        sim::Scheduler scheduler({}, nullptr);
        const sim::TaskId task = scheduler.spawn("checkpointer", [&] {
            const sim::MutexGuard guard(mutex);
            mutex.unlock();
            never.wait();
            mutex.lock();
            retaken = true;
        });
        run_task(scheduler, task);
        CHECK(scheduler.task_state(task) == sim::TaskState::blocked);
        CHECK_FALSE(mutex.held());
    }  // destroyed here: the guard's unwinding must not unlock a lock it does not hold
    CHECK_FALSE(retaken);
    CHECK_FALSE(mutex.held());
}

TEST_CASE("mutex: at most one holder under random schedules") {
    for (std::uint64_t seed = 1; seed <= 20; seed++) {
        sim::Mutex mutex("test.mutex");
        int inside = 0;
        int inside_max = 0;
        sim::Scheduler scheduler({}, nullptr);
        for (int id = 0; id < 4; id++) {
            scheduler.spawn(numbered("t", id), [&] {
                for (int round = 0; round < 3; round++) {
                    sim::MutexGuard guard(mutex);
                    inside++;
                    inside_max = std::max(inside_max, inside);
                    sim::yield(point_a);
                    inside--;
                }
            });
        }
        sim::RandomStrategy random{sim::Prng(seed)};
        CHECK(run_to_end(scheduler, random) == sim::StepOutcome::finished);
        CHECK(inside_max == 1);
    }
}

TEST_CASE(
    "rwlock: readers share, a writer excludes readers, and a waiting writer blocks later readers") {
    sim::RwLock lock("test.rwlock");
    sim::Scheduler scheduler({}, nullptr);
    auto reader = [&] {
        lock.lock_shared();
        sim::yield(point_a);
        lock.unlock_shared();
    };
    auto writer = [&] {
        lock.lock();
        sim::yield(point_b);
        lock.unlock();
    };
    const sim::TaskId reader_one = scheduler.spawn("reader1", reader);
    const sim::TaskId reader_two = scheduler.spawn("reader2", reader);
    const sim::TaskId writer_task = scheduler.spawn("writer", writer);
    const sim::TaskId reader_late = scheduler.spawn("reader3", reader);
    run_task(scheduler, reader_one);
    run_task(scheduler, reader_two);
    CHECK(lock.readers() == 2);
    run_task(scheduler, writer_task);
    CHECK(scheduler.task_state(writer_task) == sim::TaskState::blocked);
    CHECK_FALSE(lock.write_held());
    run_task(scheduler, reader_late);
    CHECK(scheduler.task_state(reader_late) == sim::TaskState::blocked);
    CHECK(lock.readers() == 2);
    run_task(scheduler, reader_one);  // releases
    CHECK(scheduler.task_state(writer_task) == sim::TaskState::blocked);
    run_task(scheduler, reader_two);  // last reader out: the writer gets it
    CHECK(lock.write_held());
    CHECK(lock.readers() == 0);
    CHECK(scheduler.task_state(writer_task) == sim::TaskState::runnable);
    run_task(scheduler, writer_task);  // runs to its yield, holding the lock
    CHECK(scheduler.task_state(reader_late) == sim::TaskState::blocked);
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{writer_task});
    run_task(scheduler, writer_task);  // unlocks: the late reader gets in
    CHECK_FALSE(lock.write_held());
    CHECK(lock.readers() == 1);
    CHECK(scheduler.task_state(reader_late) == sim::TaskState::runnable);
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    CHECK(lock.readers() == 0);
}

TEST_CASE("rwlock: no reader ever sees a writer inside under random schedules") {
    for (std::uint64_t seed = 1; seed <= 20; seed++) {
        sim::RwLock lock("test.rwlock");
        int readers_inside = 0;
        int writers_inside = 0;
        int violations = 0;
        int readers_together_max = 0;
        sim::Scheduler scheduler({}, nullptr);
        for (int id = 0; id < 5; id++) {
            const bool is_writer = id % 2 == 1;
            scheduler.spawn(numbered("t", id), [&, is_writer] {
                for (int round = 0; round < 3; round++) {
                    if (is_writer) {
                        lock.lock();
                        writers_inside++;
                        if (writers_inside != 1 || readers_inside != 0) violations++;
                        sim::yield(point_a);
                        writers_inside--;
                        lock.unlock();
                    } else {
                        lock.lock_shared();
                        readers_inside++;
                        readers_together_max = std::max(readers_together_max, readers_inside);
                        if (writers_inside != 0) violations++;
                        sim::yield(point_b);
                        readers_inside--;
                        lock.unlock_shared();
                    }
                    sim::yield(point_c);
                }
            });
        }
        sim::RandomStrategy random{sim::Prng(seed)};
        CHECK(run_to_end(scheduler, random) == sim::StepOutcome::finished);
        CHECK(violations == 0);
        CHECK(readers_together_max >= 1);
    }
}

TEST_CASE("completion: waiters block until complete, and a completed one does not block") {
    sim::Completion done("test.done");
    std::vector<std::string> log;
    sim::Scheduler scheduler({}, nullptr);
    const sim::TaskId waiter_one = scheduler.spawn("waiter1", [&] {
        done.wait();
        log.push_back("waiter1");
    });
    const sim::TaskId waiter_two = scheduler.spawn("waiter2", [&] {
        done.wait();
        log.push_back("waiter2");
    });
    const sim::TaskId completer = scheduler.spawn("completer", [&] {
        sim::yield(point_a);
        done.complete();
        done.wait();  // already done: must not block
        log.push_back("completer");
    });
    run_task(scheduler, waiter_one);
    run_task(scheduler, waiter_two);
    CHECK(std::string(scheduler.blocked_on(waiter_one)) == "test.done");
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{completer});
    run_task(scheduler, completer);
    CHECK_FALSE(done.done());
    run_task(scheduler, completer);
    CHECK(done.done());
    CHECK(scheduler.task_state(completer) == sim::TaskState::finished);
    CHECK(candidate_tasks(scheduler) == std::vector<sim::TaskId>{waiter_one, waiter_two});
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    CHECK(log == std::vector<std::string>{"completer", "waiter1", "waiter2"});
}

TEST_CASE("wait queue: wake_all wakes every waiter and only those waiting") {
    sim::WaitQueue queue("test.queue");
    bool ready = false;
    int passed = 0;
    sim::Scheduler scheduler({}, nullptr);
    for (int id = 0; id < 3; id++) {
        scheduler.spawn(numbered("w", id), [&] {
            while (!ready) queue.wait();
            passed++;
        });
    }
    const sim::TaskId waker = scheduler.spawn("waker", [&] {
        queue.wake_all();  // spurious: the waiters re-test and wait again
        sim::yield(point_a);
        ready = true;
        queue.wake_all();
    });
    for (sim::TaskId task = 0; task < 3; task++) run_task(scheduler, task);
    CHECK_FALSE(queue.empty());
    run_task(scheduler, waker);
    CHECK(queue.empty());
    for (sim::TaskId task = 0; task < 3; task++) run_task(scheduler, task);
    CHECK_FALSE(queue.empty());
    CHECK(passed == 0);
    sim::FirstStrategy first;
    CHECK(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    CHECK(passed == 3);
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
    /// Would pick the timer whenever it is offered.
    class LastStrategy final : public sim::Strategy {
    public:
        auto choose(const sim::Scheduler&, std::span<const sim::Candidate> candidates)
            -> std::size_t override {
            return candidates.size() - 1;
        }
    } last;
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

// ---- Strategies and determinism ----

TEST_CASE("determinism: the same random seed gives the same choices and the same trace") {
    for (std::uint64_t seed : {1ULL, 7ULL, 12345ULL}) {
        sim::RandomStrategy first_random{sim::Prng(seed)};
        sim::RandomStrategy second_random{sim::Prng(seed)};
        const RunRecord first_run = run_workload(first_random);
        const RunRecord second_run = run_workload(second_random);
        CHECK(first_run.outcome == sim::StepOutcome::finished);
        CHECK_FALSE(first_run.choices.empty());
        CHECK(first_run.choices == second_run.choices);
        CHECK(first_run.trace_hash == second_run.trace_hash);
        CHECK(first_run.log == second_run.log);
    }
}

TEST_CASE("determinism: different random seeds explore different schedules") {
    std::set<std::uint64_t> hashes;
    for (std::uint64_t seed = 1; seed <= 10; seed++) {
        sim::RandomStrategy random{sim::Prng(seed)};
        hashes.insert(run_workload(random).trace_hash);
    }
    CHECK(hashes.size() > 1);
}

TEST_CASE("determinism: the trace records steps, notes and virtual time") {
    sim::Trace trace(true);
    Workload workload;
    sim::Scheduler scheduler({}, &trace);
    workload.spawn(scheduler);
    sim::FirstStrategy first;
    REQUIRE(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    const std::string full = trace.full();
    CHECK(full.find("step") != std::string::npos);
    CHECK(full.find("test.scheduler_test.b") != std::string::npos);
    CHECK(full.find("(blocked on workload.mutex)") != std::string::npos);
    CHECK(full.find("(finished)") != std::string::npos);
    CHECK(trace.story().find("worker 2 holds the mutex") != std::string::npos);
    CHECK(trace.hash() == sim::hash_name(full));
    // A disabled trace records nothing, and notes are not even formatted.
    sim::Trace disabled(false);
    Workload quiet;
    sim::Scheduler quiet_scheduler({}, &disabled);
    quiet.spawn(quiet_scheduler);
    REQUIRE(run_to_end(quiet_scheduler, first) == sim::StepOutcome::finished);
    CHECK(disabled.lines().empty());
}

TEST_CASE("replay: replaying a random run's choices reproduces its trace") {
    for (std::uint64_t seed : {3ULL, 99ULL}) {
        sim::RandomStrategy random{sim::Prng(seed)};
        const RunRecord original = run_workload(random);
        REQUIRE_FALSE(original.choices.empty());
        sim::ReplayStrategy replay(original.choices);
        const RunRecord replayed = run_workload(replay);
        CHECK(replayed.choices == original.choices);
        CHECK(replayed.trace_hash == original.trace_hash);
        CHECK(replayed.log == original.log);
        CHECK(replay.consumed() == original.choices.size());
    }
}

TEST_CASE("replay: a choice beyond the candidates throws ReplayDiverged") {
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("a", [] { sim::yield(point_a); });
    scheduler.spawn("b", [] { sim::yield(point_a); });
    sim::ReplayStrategy replay({1, 2});
    CHECK(scheduler.step(replay) == sim::StepOutcome::ran_task);
    CHECK(scheduler.last_ran() == 1);
    CHECK_THROWS_AS(scheduler.step(replay), sim::ReplayDiverged);
}

TEST_CASE("replay: a run that asks for more choices than recorded throws ReplayDiverged") {
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("a", [] { sim::yield(point_a); });
    scheduler.spawn("b", [] { sim::yield(point_a); });
    sim::ReplayStrategy replay({1});
    CHECK(scheduler.step(replay) == sim::StepOutcome::ran_task);
    CHECK(scheduler.last_ran() == 1);
    CHECK(replay.consumed() == 1);
    CHECK_THROWS_AS(scheduler.step(replay), sim::ReplayDiverged);
}

namespace {
/// Wraps a strategy and counts decisions where the task chosen last time was
/// still a candidate but another was chosen: a preemption.
class PreemptionCounter final : public sim::Strategy {
public:
    explicit PreemptionCounter(sim::Strategy& inner) : inner_(inner) {}
    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        const std::size_t index = inner_.choose(scheduler, candidates);
        if (previous_ != no_choice) {
            const bool previous_listed = std::any_of(
                candidates.begin(), candidates.end(),
                [&](const sim::Candidate& candidate) { return candidate.task == previous_; });
            if (previous_listed && candidates[index].task != previous_) preemptions++;
        }
        previous_ = candidates[index].task;
        return index;
    }
    std::uint64_t preemptions = 0;

private:
    static constexpr sim::TaskId no_choice = sim::no_task - 1;
    sim::Strategy& inner_;
    sim::TaskId previous_ = no_choice;
};

/// Three tasks that only yield (no timers): every decision has all unfinished
/// tasks as candidates.
auto run_yielders(sim::Strategy& strategy, std::vector<sim::TaskId>& order) -> sim::StepOutcome {
    sim::Scheduler scheduler({}, nullptr);
    for (int id = 0; id < 3; id++) {
        scheduler.spawn(numbered("t", id), [] {
            for (int round = 0; round < 5; round++) sim::yield(point_a);
        });
    }
    for (std::uint64_t i = 0; i < steps_bound; i++) {
        const sim::StepOutcome outcome = scheduler.step(strategy);
        if (outcome != sim::StepOutcome::ran_task) return outcome;
        order.push_back(scheduler.last_ran());
    }
    return sim::StepOutcome::deadlock;
}
}  // namespace

TEST_CASE("pct: depth 1 never preempts a running task") {
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        CAPTURE(seed);
        sim::PctStrategy pct(sim::Prng(seed), 1, 18);
        PreemptionCounter counter(pct);
        std::vector<sim::TaskId> order;
        REQUIRE(run_yielders(counter, order) == sim::StepOutcome::finished);
        CHECK(counter.preemptions == 0);
        // Each task runs all of its stretches in one go.
        std::vector<sim::TaskId> blocks;
        for (sim::TaskId task : order) {
            if (blocks.empty() || blocks.back() != task) blocks.push_back(task);
        }
        CHECK(blocks.size() == 3);
    }
}

namespace {
/// Wraps a strategy and records, at every decision, that the chosen candidate
/// won over each other candidate; counts pairs decided both ways.
class PriorityOrderAudit final : public sim::Strategy {
public:
    explicit PriorityOrderAudit(sim::Strategy& inner) : inner_(inner) {}
    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        const std::size_t index = inner_.choose(scheduler, candidates);
        for (std::size_t i = 0; i < candidates.size(); i++) {
            if (i == index) continue;
            const auto won = std::make_pair(candidates[index].task, candidates[i].task);
            if (wins_.contains({won.second, won.first})) contradictions++;
            wins_.insert(won);
        }
        return index;
    }
    std::uint64_t contradictions = 0;

private:
    sim::Strategy& inner_;
    std::set<std::pair<sim::TaskId, sim::TaskId>> wins_;
};
}  // namespace

TEST_CASE("pct: depth 1 with blocking and timers keeps one fixed priority order") {
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        CAPTURE(seed);
        sim::PctStrategy pct(sim::Prng(seed), 1, 40);
        PriorityOrderAudit audit(pct);
        const RunRecord record = run_workload(audit);
        CHECK(record.outcome == sim::StepOutcome::finished);
        CHECK(audit.contradictions == 0);
    }
}

TEST_CASE("pct: depth 3 changes the priority order on some seeds") {
    std::uint64_t schedules_with_change = 0;
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        sim::PctStrategy pct(sim::Prng(seed), 3, 40);
        PriorityOrderAudit audit(pct);
        CHECK(run_workload(audit).outcome == sim::StepOutcome::finished);
        if (audit.contradictions > 0) schedules_with_change++;
    }
    CHECK(schedules_with_change > 0);
}

TEST_CASE("pct: a larger depth does preempt on some seeds") {
    std::uint64_t schedules_with_preemption = 0;
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        sim::PctStrategy pct(sim::Prng(seed), 3, 18);
        PreemptionCounter counter(pct);
        std::vector<sim::TaskId> order;
        REQUIRE(run_yielders(counter, order) == sim::StepOutcome::finished);
        if (counter.preemptions > 0) schedules_with_preemption++;
    }
    CHECK(schedules_with_preemption > 0);
}

TEST_CASE("pct: the same seed gives the same schedule") {
    sim::PctStrategy first_pct(sim::Prng(5), 3, 40);
    sim::PctStrategy second_pct(sim::Prng(5), 3, 40);
    const RunRecord first_run = run_workload(first_pct);
    const RunRecord second_run = run_workload(second_pct);
    CHECK(first_run.choices == second_run.choices);
    CHECK(first_run.trace_hash == second_run.trace_hash);
}

TEST_CASE("first strategy: always the lowest task id, timers last") {
    std::vector<sim::TaskId> order;
    sim::FirstStrategy first;
    REQUIRE(run_yielders(first, order) == sim::StepOutcome::finished);
    CHECK(order == std::vector<sim::TaskId>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
}

TEST_CASE("parse_strategy: accepts random and pct:1..16, rejects everything else") {
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy("random", spec));
    CHECK(spec.kind == sim::StrategySpec::Kind::random);
    CHECK(spec.text() == "random");
    REQUIRE(sim::parse_strategy("pct:3", spec));
    CHECK(spec.kind == sim::StrategySpec::Kind::pct);
    CHECK(spec.depth == 3);
    CHECK(spec.text() == "pct:3");
    REQUIRE(sim::parse_strategy("pct:16", spec));
    CHECK(spec.depth == 16);
    REQUIRE(sim::parse_strategy("pct:1", spec));
    CHECK(spec.depth == 1);
    const sim::StrategySpec before = spec;
    for (const char* bad : {"", "Random", "dfs", "pct", "pct:", "pct:0", "pct:17", "pct:x",
                            "pct:-1", "pct:1000", "pct 3", "pct:3 "}) {
        CAPTURE(bad);
        CHECK_FALSE(sim::parse_strategy(bad, spec));
        // A failed parse leaves the spec alone.
        CHECK(spec.kind == before.kind);
        CHECK(spec.depth == before.depth);
    }
}

// ---- PRNG ----

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

// ---- Yield point registry ----

TEST_CASE("yield points: registered points are found by name and by id, and listed sorted") {
    const sim::YieldPoint* found = sim::find_yield_point("test.scheduler_test.b");
    REQUIRE(found != nullptr);
    CHECK(found->id == point_b.id);
    CHECK(found->about == "second test point");
    CHECK(sim::find_yield_point("test.scheduler_test.no_such_point") == nullptr);
    CHECK(point_a.id != point_b.id);
    CHECK(point_b.id != point_c.id);
    CHECK(sim::yield_point_by_id(point_c.id).name == "test.scheduler_test.c");
    const std::vector<sim::YieldPoint> all = sim::yield_points();
    CHECK(all.size() == sim::yield_point_count());
    CHECK(std::is_sorted(all.begin(), all.end(),
                         [](const auto& a, const auto& b) { return a.name < b.name; }));
    std::set<std::uint32_t> ids;
    for (const auto& point : all) ids.insert(point.id);
    CHECK(ids.size() == all.size());
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

namespace {
/// Runs every step with the first strategy; returns how the run ended.
auto run_first(sim::Scheduler& scheduler) -> sim::StepOutcome {
    sim::FirstStrategy first;
    for (;;) {
        const auto outcome = scheduler.step(first);
        if (outcome == sim::StepOutcome::finished || outcome == sim::StepOutcome::deadlock) return outcome;
    }
}
}  // namespace

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

TEST_CASE("rwlock: with reader preference a waiting writer does not hold back new readers") {
    for (auto preference : {sim::RwLock::Preference::fifo, sim::RwLock::Preference::readers}) {
        sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = steps_bound}, nullptr);
        sim::RwLock lock("test.rwlock.preference", preference);
        std::vector<std::string> order;
        const auto reader1 = scheduler.spawn("reader1", [&] {
            lock.lock_shared();
            sim::yield(point_a);
            order.push_back("reader1 out");
            lock.unlock_shared();
        });
        const auto writer = scheduler.spawn("writer", [&] {
            lock.lock();
            order.push_back("writer in");
            lock.unlock();
        });
        const auto reader2 = scheduler.spawn("reader2", [&] {
            lock.lock_shared();
            order.push_back("reader2 in");
            lock.unlock_shared();
        });
        // reader1 holds the lock, the writer queues, then reader2 arrives.
        scheduler.execute(sim::Candidate{reader1});
        scheduler.execute(sim::Candidate{writer});
        CHECK(scheduler.task_state(writer) == sim::TaskState::blocked);
        scheduler.execute(sim::Candidate{reader2});
        CHECK(run_first(scheduler) == sim::StepOutcome::finished);
        if (preference == sim::RwLock::Preference::fifo) {
            CHECK(order == std::vector<std::string>{"reader1 out", "writer in", "reader2 in"});
        } else {
            CHECK(order == std::vector<std::string>{"reader2 in", "reader1 out", "writer in"});
        }
    }
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
