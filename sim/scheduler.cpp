#include "sim/scheduler.hpp"

#include <algorithm>
#include <boost/context/fiber.hpp>

#include "sim/assert.hpp"

namespace sim {
namespace detail {
thread_local Scheduler* this_thread_scheduler = nullptr;
}  // namespace detail
using detail::this_thread_scheduler;

Scheduler::Scheduler(Options options, Trace* trace)
    : options_(options), trace_(trace), tracing_(trace != nullptr && trace->enabled()),
      hits_(yield_point_count(), 0) {
    outer_ = this_thread_scheduler;
    this_thread_scheduler = this;
    candidates_.reserve(16);
    choices_.reserve(64);
}

Scheduler::~Scheduler() {
    // Destroying a suspended fiber unwinds its stack (forced_unwind), which
    // may run model destructors that look for the current scheduler.
    // The unwinding task is "current" while its destructors run, so a lock
    // guard on its stack releases the lock as its holder.
    for (auto& task : tasks_) {
        if (!task->fiber) continue;
        current_ = task->id;
        task->fiber = Fiber{};
        current_ = no_task;
    }
    this_thread_scheduler = outer_;
}

auto Scheduler::spawn_daemon(std::string name, std::function<void()> body) -> TaskId {
    const TaskId id = spawn(std::move(name), std::move(body));
    tasks_[id]->daemon = true;
    unfinished_--;
    daemons_++;
    return id;
}

auto Scheduler::spawn(std::string name, std::function<void()> body) -> TaskId {
    const auto id = static_cast<TaskId>(tasks_.size());
    auto task = std::make_unique<Task>();
    task->id = id;
    task->name = std::move(name);
    task->body = std::move(body);
    Task* raw = task.get();
    task->fiber = Fiber(std::allocator_arg, PooledStack{&StackPool::local()},
                        [this, raw](Fiber&& caller) -> Fiber {
                            raw->caller = std::move(caller);
                            try {
                                raw->body();
                            } catch (const boost::context::detail::forced_unwind&) {
                                throw;
                            } catch (...) {
                                failure_ = std::current_exception();
                            }
                            raw->state = TaskState::finished;
                            if (raw->daemon) {
                                daemons_--;
                            } else {
                                unfinished_--;
                            }
                            mark_not_runnable(raw->id);
                            return std::move(raw->caller);
                        });
    tasks_.push_back(std::move(task));
    unfinished_++;
    mark_runnable(id);
    return id;
}

void Scheduler::switch_to_scheduler() {
    Task& task = *tasks_[current_];
    task.caller = std::move(task.caller).resume();
}

void Scheduler::block(const char* what) {
    SIM_ASSERT(current_ != no_task);
    Task& task = *tasks_[current_];
    task.state = TaskState::blocked;
    task.blocked_on = what;
    mark_not_runnable(task.id);
    switch_to_scheduler();
    SIM_ASSERT(task.state == TaskState::runnable);
}

void Scheduler::wake(TaskId id) {
    SIM_ASSERT(id < tasks_.size());
    Task& task = *tasks_[id];
    SIM_ASSERT(task.state == TaskState::blocked);
    task.state = TaskState::runnable;
    task.blocked_on = "";
    mark_runnable(id);
}

void Scheduler::mark_runnable(TaskId id) {
    // Sorted by id; the timer (no_task, the largest id) stays last.
    auto it = std::lower_bound(candidates_.begin(), candidates_.end(), id,
                               [](const Candidate& c, TaskId task) { return c.task < task; });
    SIM_ASSERT(it == candidates_.end() || it->task != id);
    candidates_.insert(it, Candidate{id});
}

void Scheduler::mark_not_runnable(TaskId id) {
    auto it = std::lower_bound(candidates_.begin(), candidates_.end(), id,
                               [](const Candidate& c, TaskId task) { return c.task < task; });
    SIM_ASSERT(it != candidates_.end() && it->task == id);
    candidates_.erase(it);
}

void Scheduler::sleep(Duration duration) {
    const TaskId self = current_;
    add_timer(now_ + duration, tasks_[self]->daemon, [this, self] { wake(self); });
    block("sleep");
}

void Scheduler::compute(Duration nominal) {
    const Duration busy = nominal / 2 + cpu_jitter_.below(nominal + 1);
    if (options_.cpus == 0) {
        sleep(busy);
        return;
    }
    if (cpus_busy_ < options_.cpus) {
        cpus_busy_++;
    } else {
        cpu_waiters_.push_back(current_);
        block("cpu");  // woken with a CPU handed over
    }
    sleep(busy);
    if (cpu_waiters_.empty()) {
        cpus_busy_--;
    } else {
        const TaskId next = cpu_waiters_.front();
        cpu_waiters_.pop_front();
        wake(next);
    }
}

void Scheduler::note(std::string text) {
    if (!tracing()) return;
    const std::string& task = current_ == no_task ? std::string("device") : tasks_[current_]->name;
    trace_->add({TraceLine::Kind::note, steps_, now_, task, std::move(text)});
}

void Scheduler::io_event(bool submitted, std::uint64_t id, std::string text) {
    if (!tracing()) return;
    const std::string task = current_ == no_task ? std::string("device") : tasks_[current_]->name;
    trace_->add({submitted ? TraceLine::Kind::io_submit : TraceLine::Kind::io_complete, steps_,
                 now_, task, std::move(text), id});
}

void Scheduler::at(Instant when, std::function<void()> callback) { add_timer(when, false, std::move(callback)); }

void Scheduler::add_timer(Instant when, bool daemon, std::function<void()> callback) {
    SIM_ASSERT(when >= now_);
    timers_.push(Timer{when, timer_sequence_++, daemon, std::move(callback)});
    if (!daemon) live_timers_++;
}

auto Scheduler::all_finished() const -> bool { return unfinished_ == 0; }

void Scheduler::fire_next_timer() {
    // Copy out before popping: the callback may add timers.
    Timer timer = timers_.top();
    timers_.pop();
    if (!timer.daemon) live_timers_--;
    SIM_ASSERT(timer.when >= now_);
    now_ = timer.when;
    timer.callback();
}

auto Scheduler::execute(Candidate candidate) -> StepOutcome {
    SIM_ASSERT(steps_ < options_.steps_max);
    steps_++;
    last_ran_ = candidate.task;
    if (candidate.is_timer()) {
        step_footprint_ = footprint_all;
        fire_next_timer();
        if (failure_) std::rethrow_exception(failure_);
        return StepOutcome::fired_timer;
    }
    Task& task = *tasks_[candidate.task];
    SIM_ASSERT(task.state == TaskState::runnable);
    const YieldPoint* start = task.last_point;
    step_footprint_ = start != nullptr ? start->touches : 0;
    current_ = task.id;
    task.fiber = std::move(task.fiber).resume();
    current_ = no_task;
    if (failure_) std::rethrow_exception(failure_);
    if (task.state == TaskState::runnable) step_footprint_ |= task.last_point->touches;
    if (tracing_) {
        std::string where = task.state == TaskState::finished ? "(finished)"
                            : task.state == TaskState::blocked
                                ? std::string("(blocked on ") + task.blocked_on + ")"
                                : std::string(task.last_point->name);
        trace_->add({TraceLine::Kind::step, steps_, now_, task.name, std::move(where)});
    }
    return StepOutcome::ran_task;
}

auto Scheduler::step(Strategy& strategy) -> StepOutcome {
    // Only daemons left (running, blocked or asleep): the run is over.
    if (daemons_ > 0 && unfinished_ == 0 && live_timers_ == 0) return StepOutcome::finished;
    auto options = candidates();
    if (options.empty()) return unfinished_ == 0 ? StepOutcome::finished : StepOutcome::deadlock;
    // Every task blocked and only daemons' sleeps pending: no event a task
    // waits for can come (a daemon would only loop), so it is a deadlock.
    if (unfinished_ > 0 && live_timers_ == 0 && options.size() == 1 && options[0].is_timer()) {
        return StepOutcome::deadlock;
    }
    std::size_t index = 0;
    if (options.size() > 1) {
        index = strategy.choose(*this, options);
        SIM_ASSERT(index < options.size());
        choices_.push_back(static_cast<std::uint32_t>(index));
    } else if (strategy.wants_every_step()) {
        index = strategy.choose(*this, options);
        SIM_ASSERT(index == 0);
    }
    return execute(options[index]);
}

auto Scheduler::describe_blocked() const -> std::string {
    std::string out;
    for (const auto& task : tasks_) {
        if (task->state != TaskState::blocked) continue;
        if (!out.empty()) out += "; ";
        out += task->name + " blocked on " + task->blocked_on;
    }
    return out;
}

}  // namespace sim
