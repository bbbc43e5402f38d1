#include "runner/scripted.hpp"

#include "sim/scheduler.hpp"

namespace runner {

namespace {

auto schedule_error(const loader::ScheduleStep& step, const loader::Scenario& scenario,
                    const std::string& variant, const std::string& got) -> loader::InputError {
    return loader::InputError(scenario.path + ": " + step.json_path + ": expected task " + step.task +
                              (step.until.empty() ? " to run to its end" : " to reach " + step.until) +
                              " (variant " + variant + "), got " + got);
}

}  // namespace

auto ScriptedStrategy::choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
    -> std::size_t {
    if (exhausted() || at_crash()) return 0;
    const loader::ScheduleStep& step = scenario_.schedule[position_];
    if (bound_ == sim::no_task) bind(scheduler, step);
    for (std::size_t i = 0; i < candidates.size(); i++) {
        if (!candidates[i].is_timer() && candidates[i].task == bound_) return i;
    }
    // A daemon's step: its own timer fires (a daemon wake-up, the only
    // kind a script takes), so its next run begins.
    for (std::size_t i = 0; i < candidates.size(); i++) {
        if (candidates[i].charge == sim::Charge::daemon_wakeup &&
            scheduler.timer_owner(candidates[i].timer) == bound_) {
            return i;
        }
    }
    for (std::size_t i = 0; i < candidates.size(); i++) {
        if (candidates[i].is_timer() && candidates[i].charge != sim::Charge::daemon_wakeup) return i;
    }
    // The bound task waits for a kernel thread it woke (a commit that
    // kjournald2 runs): the kernel thread runs, as it would.
    if (bound_ != sim::no_task && scheduler.task_state(bound_) == sim::TaskState::blocked) {
        for (std::size_t i = 0; i < candidates.size(); i++) {
            if (!candidates[i].is_timer() && scheduler.task_is_daemon(candidates[i].task)) return i;
        }
    }
    if (bound_ == sim::no_task) throw schedule_error(step, scenario_, variant_, "no such task able to run");
    throw schedule_error(step, scenario_, variant_,
                         "it blocked on " + std::string(scheduler.blocked_on(bound_)));
}

void ScriptedStrategy::after_step(const sim::Scheduler& scheduler) {
    if (exhausted() || at_crash() || bound_ == sim::no_task) return;
    const loader::ScheduleStep& step = scenario_.schedule[position_];
    const bool finished = scheduler.task_state(bound_) == sim::TaskState::finished;
    if (!step.until.empty()) {
        const sim::YieldPoint* point = scheduler.last_point(bound_);
        // The task's own step ended at the point (not a timer that woke
        // it while its last point, from an earlier step, was that one).
        if (!finished && scheduler.task_state(bound_) == sim::TaskState::runnable &&
            scheduler.last_ran() == bound_ && point != nullptr && point->name == step.until &&
            last_seen_step_ != scheduler.steps()) {
            last_seen_step_ = scheduler.steps();
            if (++reached_ >= step.count) advance();
            return;
        }
        if (finished) throw schedule_error(step, scenario_, variant_, "the task ended first");
        return;
    }
    if (finished) advance();
}

void ScriptedStrategy::check_done() const {
    if (exhausted() || at_crash()) return;
    const loader::ScheduleStep& step = scenario_.schedule[position_];
    throw schedule_error(step, scenario_, variant_, "every task already ended");
}

void ScriptedStrategy::bind(const sim::Scheduler& scheduler, const loader::ScheduleStep& step) {
    for (sim::TaskId task = 0; task < scheduler.task_count(); task++) {
        if (scheduler.task_name(task) == step.task &&
            scheduler.task_state(task) != sim::TaskState::finished) {
            bound_ = task;
            return;
        }
    }
}

void ScriptedStrategy::advance() {
    position_++;
    bound_ = sim::no_task;
    reached_ = 0;
}
}  // namespace runner
