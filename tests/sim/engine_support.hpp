#pragma once
// What the engine's tests share: three yield points, a step bound, runs to
// the end, two strategies that audit or provoke switching, and a workload
// of three tasks that contend for a mutex, sleep, wait and write notes.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "sim/sync.hpp"
#include "sim/trace.hpp"
#include "sim/yield_point.hpp"

namespace engine_test {

// Registered at static initialisation, before any scheduler sizes its hit
// counters; the names are unique to the engine's tests.
inline const sim::YieldPoint point_a =
    sim::register_yield_point("test.scheduler_test.a", "first test point");
inline const sim::YieldPoint point_b =
    sim::register_yield_point("test.scheduler_test.b", "second test point");
inline const sim::YieldPoint point_c =
    sim::register_yield_point("test.scheduler_test.c", "third test point");

inline constexpr std::uint64_t steps_bound = 100000;

/// "t3": names tasks and log entries.
inline auto numbered(const char* prefix, int number) -> std::string {
    std::string out(prefix);
    out += std::to_string(number);
    return out;
}

/// Steps until every task finished or a deadlock; fails the test past the bound.
inline auto run_to_end(sim::Scheduler& scheduler, sim::Strategy& strategy) -> sim::StepOutcome {
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
inline void run_task(sim::Scheduler& scheduler, sim::TaskId task) {
    REQUIRE(scheduler.task_state(task) == sim::TaskState::runnable);
    CHECK(scheduler.execute(sim::Candidate{task}) == sim::StepOutcome::ran_task);
}

inline auto candidate_tasks(sim::Scheduler& scheduler) -> std::vector<sim::TaskId> {
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

inline auto run_workload(sim::Strategy& strategy) -> RunRecord {
    sim::Trace trace(true);
    Workload workload;
    sim::Scheduler scheduler({}, &trace);
    workload.spawn(scheduler);
    const sim::StepOutcome outcome = run_to_end(scheduler, strategy);
    return {scheduler.choices(), trace.hash(), workload.log, outcome};
}

/// Runs every step with the first strategy; returns how the run ended.
inline auto run_first(sim::Scheduler& scheduler) -> sim::StepOutcome {
    sim::FirstStrategy first;
    for (;;) {
        const auto outcome = scheduler.step(first);
        if (outcome == sim::StepOutcome::finished || outcome == sim::StepOutcome::deadlock) return outcome;
    }
}

}  // namespace engine_test
