// The blocking primitives: mutex, rwlock, completion and wait queue
// (sim/sync.hpp).
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
