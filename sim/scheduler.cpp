#include "sim/scheduler.hpp"

#include <unwind.h>

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <cstdlib>

#include "sim/assert.hpp"

namespace sim {
namespace detail {
constinit thread_local Scheduler* this_thread_scheduler = nullptr;
}  // namespace detail
using detail::this_thread_scheduler;

namespace {
/// The virtual clock and the timer queue, as a step of `task` that adds a
/// timer touches them (Scheduler::add_timer). Timer steps touch everything,
/// so any bit orders such a step with them; one bit per task (ids modulo 8,
/// tasks that share one are merely ordered more than they need) keeps two
/// tasks' additions commuting, as they do: ties go by adder, and no task
/// step moves the clock (fix-1 dfs:2: 111,185 schedules, against 168,195
/// with one bit for all).
auto clock_footprint(TaskId task) -> Footprint {
    static const Footprint footprints[8] = {
        resource("sim.clock.0"), resource("sim.clock.1"), resource("sim.clock.2"), resource("sim.clock.3"),
        resource("sim.clock.4"), resource("sim.clock.5"), resource("sim.clock.6"), resource("sim.clock.7")};
    return footprints[task % 8];
}
}  // namespace

auto self_reported() -> Footprint {
    static const Footprint footprint = [] {
        Footprint bits = resource("sim.cpu_jitter") | resource("disk") | resource("oracle");
        for (TaskId task = 0; task < 8; task++) bits |= clock_footprint(task);
        return bits;
    }();
    return footprint;
}

Scheduler::Scheduler(Options options, Trace* trace)
    : options_(options), trace_(trace), tracing_(trace != nullptr && trace->enabled()),
      hits_(yield_point_count(), 0) {
    cpu_jitter_ = Prng(options_.seed).fork("cpu");
    cpu_holder_.assign(options_.cpus, no_task);
    outer_ = this_thread_scheduler;
    this_thread_scheduler = this;
    candidates_.reserve(16);
    choices_.reserve(64);
}

Scheduler::~Scheduler() {
    // A suspended task is ended by resuming it with `cancelled` set: its
    // switch back (leave_for_scheduler) unwinds its stack (cancel), running
    // model destructors that may look for the current scheduler, up to
    // where the fiber starts (start_fiber), so the fiber returns normally.
    // The unwinding task is "current" while its destructors run, so a lock
    // guard on its stack releases the lock as its holder. A daemon in
    // kthread_sleep instead sees its sleep end with the stop and returns
    // from its body: no exception, no unwind search (the btrfs transaction
    // kthread ends most runs asleep).
    for (auto& task : tasks_) {
        if (!task->fiber) continue;
        current_ = task->id;
        task->cancelled = true;
        {
            const OnTaskStack on_task_stack{*task};
            task->fiber = std::move(task->fiber).resume();
        }
        // A destructor on the task's stack that switched back to the
        // scheduler would leave it suspended; none does.
        SIM_ASSERT(!task->fiber);
        current_ = no_task;
    }
    this_thread_scheduler = outer_;
}

auto Scheduler::spawn_daemon(std::string name, std::function<void()> body, DaemonStart start) -> TaskId {
    const TaskId id = spawn(std::move(name), std::move(body));
    tasks_[id]->daemon = true;
    tasks_[id]->starts_asleep = start == DaemonStart::asleep;
    unfinished_--;
    daemons_++;
    return id;
}

auto Scheduler::spawn(std::string name, std::function<void()> body, std::uint64_t arguments) -> TaskId {
    const auto id = static_cast<TaskId>(tasks_.size());
    auto task = std::make_unique<Task>();
    task->id = id;
    task->name = std::move(name);
    task->body = std::move(body);
    task->arguments = arguments;
    task->waiting_since = now_;
    tasks_.push_back(std::move(task));
    unfinished_++;
    mark_runnable(id);
    return id;
}

// The fiber is made when the task first runs, so a task that never ran has
// no stack to unwind when the scheduler goes.
void Scheduler::start_fiber(Task& task) {
    Task* raw = &task;
    task.started = true;
    task.fiber = Fiber(std::allocator_arg, PooledStack{&StackPool::local(), &task.stack},
                       [this, raw](Fiber&& caller) -> Fiber {
                           asan::finish_switch(nullptr, &raw->caller_stack);
                           raw->caller = std::move(caller);
                           // ~Scheduler ended the task (cancel): its stack
                           // is unwound up to here, no run goes on to count it.
                           Task* volatile self = raw;
                           if (__builtin_setjmp(raw->cancel_point.jump) != 0) return leave_ended(*self);
                           try {
                               raw->body();
                               // kthread_sleep's stop: the body returned.
                               if (raw->cancelled) return leave_ended(*raw);
                           } catch (const boost::context::detail::forced_unwind&) {
                               asan::start_switch(nullptr, raw->caller_stack);
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
                           asan::start_switch(nullptr, raw->caller_stack);
                           return std::move(raw->caller);
                       });
}

namespace {

/// _Unwind_ForcedUnwind's stop function: called for each frame before its
/// cleanups run, with the context's CFA still that of the frame it called
/// (its stack pointer at the call). At start_fiber's frame, whose stack
/// pointer __builtin_setjmp saved (the buffer's third word, as glibc's
/// cancellation compares its jmp_buf's), it jumps there instead.
auto stop_at_fiber_start(int /*version*/, _Unwind_Action actions, _Unwind_Exception_Class /*kind*/,
                         _Unwind_Exception* /*exception*/, _Unwind_Context* context, void* argument)
    -> _Unwind_Reason_Code {
    auto* point = static_cast<CancelPoint*>(argument);
    const auto stack_pointer = reinterpret_cast<std::uintptr_t>(point->jump[2]);
    if ((actions & _UA_END_OF_STACK) != 0 || _Unwind_GetCFA(context) >= stack_pointer) {
        __builtin_longjmp(point->jump, 1);
    }
    return _URC_NO_REASON;
}

}  // namespace

void Scheduler::cancel(Task& task) {
    // A forced unwind runs only the cleanup phase: each frame's destructors,
    // no search for a handler first (a thrown exception walks the stack
    // twice), and nothing on a task's stack catches it (start_fiber's frame,
    // whose catch (...) would, is never reached: the stop function jumps).
    thread_local _Unwind_Exception exception{};
    exception.exception_class = 0x4352534843414e43ULL;  // "CRSHCANC"
    exception.exception_cleanup = nullptr;
    _Unwind_ForcedUnwind(&exception, stop_at_fiber_start, &task.cancel_point);
    SIM_ASSERT(false && "a forced unwind returns only when it cannot start");
    std::abort();
}

auto Scheduler::leave_ended(Task& task) -> Fiber {
    task.state = TaskState::finished;
    asan::start_switch(nullptr, task.caller_stack);
    return std::move(task.caller);
}

void Scheduler::switch_to_scheduler() { leave_for_scheduler(*tasks_[current_]); }

void Scheduler::block(const char* what) {
    SIM_ASSERT(current_ != no_task);
    Task& task = *tasks_[current_];
    task.state = TaskState::blocked;
    task.blocked_on = what;
    task.blocked_on_hash = hash_name(what);
    mark_not_runnable(task.id);
    switch_to_scheduler();
    SIM_ASSERT(task.state == TaskState::runnable || task.stoppable);
}

void Scheduler::wake(TaskId id) {
    SIM_ASSERT(id < tasks_.size());
    Task& task = *tasks_[id];
    // ~Scheduler: a task it already ended may still be queued on a lock or a
    // wait queue that a later task's unwinding releases (a lower task waiting
    // for a mutex a higher one holds when a run stops); it stays ended.
    if (task.cancelled) return;
    SIM_ASSERT(task.state == TaskState::blocked);
    task.state = TaskState::runnable;
    task.blocked_on = "";
    task.blocked_on_hash = hash_name("");
    task.waiting_since = now_;
    mark_runnable(id);
}

void Scheduler::mark_runnable(TaskId id) {
    // Sorted by id; listed timers (no_task, the largest id) stay last.
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
    block_for(duration, tasks_[current_]->daemon ? TimerKind::daemon : TimerKind::sleep, "sleep");
}

auto Scheduler::kthread_sleep(Duration duration) -> bool {
    Task& task = *tasks_[current_];
    SIM_ASSERT(task.daemon);
    task.stoppable = true;
    block_for(duration, TimerKind::daemon, "sleep");
    task.stoppable = false;
    return task.cancelled;
}

void Scheduler::block_for(Duration duration, TimerKind kind, const char* what) {
    const TaskId self = current_;
    add_timer(now_ + duration, kind, self, [this, self] { wake(self); });
    block(what);
}

void Scheduler::compute(Duration nominal) {
    // One stream for every task: two tasks' draws do not commute.
    static const Footprint jitter = resource("sim.cpu_jitter");
    step_footprint_ |= jitter;
    const Duration busy = nominal / 2 + cpu_jitter_.below(nominal + 1);
    if (options_.cpus == 0) {
        // Busy, not idle: a daemon computing (kjournald2's checkpoint scan)
        // keeps the run going, so its timer is a sleep's, not a daemon's
        // wake-up (which the deadlock test would not wait for).
        block_for(busy, TimerKind::sleep, "cpu busy");
        return;
    }
    acquire_cpu();
    // Busy time on a CPU others may be queued for keeps the run going even
    // for a daemon (kswapd): a daemon's sleep kind would let the deadlock
    // test see tasks waiting for a CPU and no live timer.
    block_for(busy, TimerKind::sleep, "cpu busy");
    release_cpu();
}

void Scheduler::acquire_cpu() {
    Task& task = *tasks_[current_];
    // The last CPU if free (the kernel's select_task_rq_fair prefers
    // prev_cpu), else the lowest-numbered free one: deterministic.
    std::uint32_t cpu = task.cpu;
    if (cpu >= options_.cpus || cpu_holder_[cpu] != no_task) {
        cpu = static_cast<std::uint32_t>(std::find(cpu_holder_.begin(), cpu_holder_.end(), no_task) -
                                         cpu_holder_.begin());
    }
    if (cpu < options_.cpus) {
        task.cpu = cpu;
        cpu_holder_[cpu] = task.id;
        return;
    }
    cpu_waiters_.push_back(current_);
    block("cpu");  // woken with a CPU handed over (release_cpu set task.cpu)
}

void Scheduler::release_cpu() {
    Task& task = *tasks_[current_];
    SIM_ASSERT(task.cpu < cpu_holder_.size() && cpu_holder_[task.cpu] == task.id);
    const TaskId next = hand_over(cpu_waiters_);
    if (next != no_task) tasks_[next]->cpu = task.cpu;
    cpu_holder_[task.cpu] = next;
}

auto Scheduler::hand_over(std::vector<TaskId>& waiters) -> TaskId {
    if (waiters.empty()) return no_task;
    const TaskId next = waiters.front();
    waiters.erase(waiters.begin());
    wake(next);
    return next;
}

auto Scheduler::current_cpu() const -> std::uint32_t {
    SIM_ASSERT(current_ != no_task);
    return options_.cpus == 0 ? current_ : tasks_[current_]->cpu;
}

void Scheduler::line_access(CacheLine& line) {
    if (!options_.cpu_costs) return;
    if (options_.cpus != 0) acquire_cpu();  // the atomic runs on a CPU, which it stalls
    const std::uint32_t cpu = current_cpu();
    const Instant arrived = now_;
    if (line.busy_) {
        line.waiters_.push_back(current_);
        block(line.name_);  // woken with the line handed over (busy_ stays)
    } else {
        line.busy_ = true;
    }
    line.counts_.waited += now_ - arrived;
    Duration cost = options_.line.hit;
    if (line.owner_ == cpu) {
        line.counts_.hits++;
    } else if (line.owner_ == CacheLine::no_owner || socket_of(line.owner_) == socket_of(cpu)) {
        line.counts_.misses++;
        cost = options_.line.miss;
    } else {
        line.counts_.remote_misses++;
        cost = options_.line.miss_remote;
    }
    if (cost > 0) block_for(cost, TimerKind::sleep, line.name_);
    line.owner_ = cpu;
    line.busy_ = hand_over(line.waiters_) != no_task;  // a woken waiter owns the access
    if (options_.cpus != 0) release_cpu();
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

auto Scheduler::at(Instant when, std::function<void()> callback) -> std::uint64_t {
    return add_timer(when, TimerKind::sleep, no_task, std::move(callback));
}

auto Scheduler::io_after(Duration delay, std::function<void()> callback, bool failable) -> std::uint64_t {
    return add_timer(now_ + delay, TimerKind::io, no_task, std::move(callback), failable);
}

auto Scheduler::add_timer(Instant when, TimerKind kind, TaskId owner, std::function<void()> callback,
                          bool failable) -> std::uint64_t {
    SIM_ASSERT(when >= now_);
    // A task step that adds a timer read the clock (its due time) and changed
    // what the next timer is: it does not commute with a timer step, which
    // moves the clock and takes timers (those touch everything, so any bit
    // orders them). Without it a daemon's first step, its first sleep and
    // nothing else, had an empty footprint and commuted even with them: the
    // reductions lost the states where it ran after an I/O completion
    // (btrfs/kthread-commit-in-fast-fsync: 11 of the unreduced search's 23
    // distinct crash states at dfs:0, 36 of 87 at dfs:1).
    if (current_ != no_task) step_footprint_ |= clock_footprint(current_);
    const std::uint64_t id = next_timer_id();
    timers_.push_back(Timer{when, id, kind, owner, std::move(callback), failable});
    std::push_heap(timers_.begin(), timers_.end(), std::greater<>{});
    if (kind != TimerKind::daemon) live_timers_++;
    return id;
}

auto Scheduler::next_timer_id() -> std::uint64_t {
    std::uint64_t& added = current_ == no_task ? engine_timers_added_ : tasks_[current_]->timers_added;
    const std::uint64_t slot = current_ == no_task ? 0 : std::uint64_t{current_} + 1;
    // The id must leave Candidate::key()'s two top bits free.
    SIM_ASSERT(added < (std::uint64_t{1} << timer_count_bits) &&
               slot < (std::uint64_t{1} << (62 - timer_count_bits)));
    return (slot << timer_count_bits) | added++;
}

auto Scheduler::all_finished() const -> bool { return unfinished_ == 0; }

auto Scheduler::fires_before_tasks(const Timer& timer, std::size_t tasks) const -> bool {
    if (timer.kind != TimerKind::sleep || timer.when <= now_ || tasks == 0) return true;
    Instant oldest = now_;
    for (std::size_t i = 0; i < tasks; i++)
        oldest = std::min(oldest, tasks_[candidates_[i].task]->waiting_since);
    return timer.when <= oldest + sched_latency;
}

auto Scheduler::list_candidates() -> std::span<const Candidate> {
    list_timers();
    if (io_errors_used_ < options_.io_errors) list_io_errors();
    return candidates_;
}

void Scheduler::list_io_errors() {
    // Only the completion listed free of charge, the next timer in time
    // order: a reordered completion's twin would spend two budgets.
    const std::size_t tasks = runnable_count();
    for (std::size_t i = tasks; i < candidates_.size(); i++) {
        const Candidate& candidate = candidates_[i];
        if (candidate.charge != Charge::none || !timers_.front().failable) continue;
        SIM_ASSERT(candidate.timer == timers_.front().id);
        candidates_.push_back(Candidate{no_task, Charge::io_error, candidate.timer});
        break;
    }
    timers_listed_ = candidates_.size() - tasks;
}

void Scheduler::list_timers() {
    candidates_.resize(runnable_count());
    timers_listed_ = 0;
    if (timers_.empty()) return;
    const std::size_t tasks = candidates_.size();
    const Timer& next = timers_.front();
    // The next timer in time order, free of charge. A daemon's wake-up
    // (kthread sleep) overtakes runnable work only as a charged choice below:
    // unbounded, a strategy could fire it forever and starve every task.
    const bool next_listed =
        tasks == 0 || (options_.timers_race_tasks && !next.daemon() && fires_before_tasks(next, tasks));
    if (next_listed) candidates_.push_back(Candidate{no_task, Charge::none, next.id});
    timers_listed_ = candidates_.size() - tasks;
    if (!options_.timers_race_tasks) return;
    const bool reorders_left = io_reorders_used_ < options_.io_reorders;
    const bool wakeups_left = daemon_wakeups_used_ < options_.daemon_wakeups && unfinished_ > 0;
    if (!reorders_left && !wakeups_left) return;
    // Charged: every other in-flight device completion and the earliest
    // sleep (the device completing late: sleeps keep their time order among
    // themselves), each one I/O reordering; every daemon's timer not listed,
    // one daemon wake-up.
    charged_scratch_.clear();
    const Timer* first_sleep = nullptr;
    for (const Timer& timer : timers_) {
        // The earliest sleep overall, listed or not: no later sleep overtakes it.
        if (timer.kind == TimerKind::sleep && (first_sleep == nullptr || *first_sleep > timer))
            first_sleep = &timer;
        if (next_listed && timer.id == next.id) continue;
        if (timer.kind == TimerKind::io && reorders_left) charged_scratch_.push_back(&timer);
        if (timer.kind == TimerKind::daemon && wakeups_left) charged_scratch_.push_back(&timer);
    }
    if (first_sleep != nullptr && reorders_left && !(next_listed && first_sleep->id == next.id) &&
        fires_before_tasks(*first_sleep, tasks)) {
        charged_scratch_.push_back(first_sleep);
    }
    std::sort(charged_scratch_.begin(), charged_scratch_.end(),
              [](const Timer* a, const Timer* b) { return *b > *a; });
    for (const Timer* timer : charged_scratch_) {
        candidates_.push_back(Candidate{no_task, timer->daemon() ? Charge::daemon_wakeup : Charge::io_reorder,
                                        timer->id});
    }
    timers_listed_ = candidates_.size() - tasks;
}

void Scheduler::fire_timer(const Candidate& candidate) {
    // Copy out before removing: the callback may add timers.
    Timer timer = take_timer(candidate);
    if (!timer.daemon()) live_timers_--;
    last_daemon_woken_ = timer.daemon() ? timer.owner : no_task;
    switch (candidate.charge) {
        case Charge::none:
            break;
        case Charge::io_reorder:
            SIM_ASSERT(io_reorders_used_ < options_.io_reorders);
            io_reorders_used_++;
            break;
        case Charge::daemon_wakeup:
            SIM_ASSERT(daemon_wakeups_used_ < options_.daemon_wakeups);
            daemon_wakeups_used_++;
            break;
        case Charge::io_error:
            SIM_ASSERT(io_errors_used_ < options_.io_errors && timer.failable);
            io_errors_used_++;
            break;
    }
    if (tracing_ && candidate.charge != Charge::none) {
        trace_->add({TraceLine::Kind::note, steps_, std::max(now_, timer.when), "engine",
                     charged_timer_text(candidate, timer)});
    }
    // A timer fired ahead of earlier ones moves time to its own instant; the
    // earlier ones then fire late, at the new now (time never goes back).
    now_ = std::max(now_, timer.when);
    io_failing_ = candidate.charge == Charge::io_error;
    timer.callback();
    io_failing_ = false;
}

auto Scheduler::timer_owner(std::uint64_t timer_id) const -> TaskId {
    for (const Timer& timer : timers_) {
        if (timer.id == timer_id) return timer.owner;
    }
    return no_task;
}

auto Scheduler::take_timer(const Candidate& candidate) -> Timer {
    // An uncharged timer candidate is the next timer (Candidate{no_task}
    // names it too).
    SIM_ASSERT(!timers_.empty());
    auto it = candidate.charge == Charge::none
                  ? timers_.begin()
                  : std::find_if(timers_.begin(), timers_.end(),
                                 [&](const Timer& t) { return t.id == candidate.timer; });
    SIM_ASSERT(it != timers_.end());
    if (it == timers_.begin()) {
        std::pop_heap(timers_.begin(), timers_.end(), std::greater<>{});
        it = timers_.end() - 1;
    }
    Timer timer = std::move(*it);
    if (it + 1 != timers_.end()) {
        *it = std::move(timers_.back());
        timers_.pop_back();
        std::make_heap(timers_.begin(), timers_.end(), std::greater<>{});
    } else {
        timers_.pop_back();
    }
    return timer;
}

auto Scheduler::charged_timer_text(const Candidate& candidate, const Timer& timer) const -> std::string {
    std::size_t earlier = 0;
    for (const Timer& other : timers_) earlier += other > timer ? 0 : 1;
    if (candidate.charge == Charge::io_error) {
        return "a device completion fails: the device returns EIO for the write (write error " +
               std::to_string(io_errors_used_) + " of at most " + std::to_string(options_.io_errors) + ")";
    }
    if (candidate.charge == Charge::io_reorder) {
        return std::string(timer.kind == TimerKind::io ? "a device completion" : "a sleep") +
               " fires ahead of " + std::to_string(earlier) + " earlier timer(s) (I/O reordering " +
               std::to_string(io_reorders_used_) + " of at most " + std::to_string(options_.io_reorders) +
               ")";
    }
    return tasks_[timer.owner]->name + "'s timer fires " +
           (runnable_count() == 0 ? "ahead of " + std::to_string(earlier) + " earlier timer(s)"
                                  : std::string("while tasks can run")) +
           " (daemon wake-up " + std::to_string(daemon_wakeups_used_) + " of at most " +
           std::to_string(options_.daemon_wakeups) + ")";
}

auto Scheduler::execute(Candidate candidate) -> StepOutcome {
    SIM_ASSERT(steps_ < options_.steps_max);
    steps_++;
    last_ran_ = candidate.task;
    if (candidate.is_timer()) {
        step_footprint_ = footprint_all;
        fire_timer(candidate);
        if (failure_) std::rethrow_exception(failure_);
        return StepOutcome::fired_timer;
    }
    Task& task = *tasks_[candidate.task];
    SIM_ASSERT(task.state == TaskState::runnable);
    const YieldPoint* start = task.last_point;
    step_footprint_ = start != nullptr ? start->touches : Footprint{};
    step_footprint_ |= task.through;  // a stretch touch_to_next_point named, resumed after a wait
    const bool histories = before_ != nullptr && hasher_ != nullptr && !reads_lost_;
    if (histories) {
        before_->bits.fill(0);
        if (!hasher_->hash_resources(*before_)) reads_lost_ = true;
    }
    const bool checking = footprint_hasher_ != nullptr && hash_before_footprint_check();
    current_ = task.id;
    if (!task.started) start_fiber(task);
    {
        const OnTaskStack on_task_stack{task};
        task.fiber = std::move(task.fiber).resume();
    }
    current_ = no_task;
    if (failure_) std::rethrow_exception(failure_);
    if (task.state == TaskState::runnable) {
        step_footprint_ |= task.last_point->touches;
        task.waiting_since = now_;
    } else {
        step_footprint_ |= task.uncovered;  // a wait or the task's end: cover()'s reaches it
        // A first step that blocked or ended before any yield point, with
        // nothing reported: no point declares its code, so it touches
        // everything (yield_point.hpp), as an undeclared point does.
        if (start == nullptr && step_footprint_.empty()) step_footprint_ = footprint_all;
    }
    if (histories && !reads_lost_) record_reads(task, start, *before_);
    if (checking) compare_footprint(task, start);
    if (tracing_) {
        std::string where = task.state == TaskState::finished ? "(finished)"
                            : task.state == TaskState::blocked
                                ? std::string("(blocked on ") + task.blocked_on + ")"
                                : std::string(task.last_point->name);
        trace_->add({TraceLine::Kind::step, steps_, now_, task.name, std::move(where)});
    }
    return StepOutcome::ran_task;
}

auto Scheduler::hash_before_footprint_check() -> bool {
    footprint_before_->bits.fill(0);
    return footprint_hasher_->hash_resources(*footprint_before_);
}

void Scheduler::compare_footprint(const Task& task, const YieldPoint* start) {
    footprint_after_->bits.fill(0);
    if (!footprint_hasher_->hash_resources(*footprint_after_)) return;
    footprint_steps_++;
    const Footprint named = step_footprint_.without(footprint_left_out_) | footprint_hasher_->commuting();
    for (std::size_t bit = 0; bit < footprint_bits; bit++) {
        if (footprint_before_->bits[bit] == footprint_after_->bits[bit] || named.has(bit)) continue;
        const std::vector<std::string> names = resource_names();
        FootprintOmission omission{
            task.name, start == nullptr ? std::string("its start") : std::string(start->name),
            task.state == TaskState::finished  ? std::string("(finished)")
            : task.state == TaskState::blocked ? std::string("(blocked on ") + task.blocked_on + ")"
                                               : std::string(task.last_point->name),
            bit < names.size() ? names[bit] : "bit " + std::to_string(bit)};
        if (std::find(omissions_.begin(), omissions_.end(), omission) == omissions_.end()) {
            omissions_.push_back(std::move(omission));
        }
    }
}

void Scheduler::record_reads(Task& task, const YieldPoint* start, const ResourceHashes& before) {
    StateHash hash(task.reads);
    hash.add(start == nullptr ? ~std::uint64_t{0} : start->id);
    hash.add(static_cast<std::uint64_t>(now_));
    step_footprint_.for_each_bit([&](std::size_t bit) {
        hash.add(bit);
        hash.add(before.bits[bit]);
    });
    task.reads = hash.value();
}

void Scheduler::hash_task(TaskId id, StateHash& out, std::string_view omit) const {
    const Task& task = *tasks_[id];
    out.add(static_cast<std::uint64_t>(task.state));
    out.add(task.last_point == nullptr ? ~std::uint64_t{0} : task.last_point->id);
    out.add(task.blocked_on_hash);
    out.add(task.started ? 1 : 0);
    out.add(task.cpu);
    out.add(task.reads);
    out.add(task.arguments);
    // How long a runnable task has waited bounds which sleeps may end first
    // (fires_before_tasks).
    out.add(task.state == TaskState::runnable ? static_cast<std::uint64_t>(now_ - task.waiting_since) : 0);
    out.add(task.frames.size());
    for (const LiveFrame* frame : task.frames) frame->hash_into(out, omit);
}

void Scheduler::hash_engine(StateHash& out) const {
    // Not the clock itself: every time a state remembers (a timer's due
    // time, a task's wait, a transaction's start) is hashed relative to now,
    // so two states that differ only by when they were reached merge (the
    // engine and the models do not read the clock but as a difference; a
    // model that reads its phase, btrfs's tick-aligned jiffy, hashes it).
    out.add(reads_lost_ ? 1 : 0);
    // The queue in (time, id) order: the heap's layout depends on the order
    // of insertion, the state does not.
    std::vector<const Timer*> timers;
    timers.reserve(timers_.size());
    for (const Timer& timer : timers_) timers.push_back(&timer);
    std::sort(timers.begin(), timers.end(), [](const Timer* a, const Timer* b) { return *b > *a; });
    for (const Timer* timer : timers) {
        // A timer already due fires at now (fire_timer: time never goes
        // back), after the ones due before it: by how much it is late
        // decides nothing, its place in the order (hashed in order) does.
        constexpr std::uint64_t late = ~std::uint64_t{0};
        out.add(timer->when < now_ ? late : static_cast<std::uint64_t>(timer->when - now_));
        out.add(timer->id);
        out.add(static_cast<std::uint64_t>(timer->kind));
        out.add(timer->owner);
        out.add(timer->failable ? 1 : 0);
    }
    out.add(engine_timers_added_);
    for (const TaskId holder : cpu_holder_) out.add(holder);
    for (const TaskId waiter : cpu_waiters_) out.add(waiter);
}

void Scheduler::hash_state(StateHash& out) const {
    for (TaskId task = 0; task < tasks_.size(); task++) hash_task(task, out);
    hash_engine(out);
}

void Scheduler::settle_daemons() {
    // By index: a daemon's first run may spawn more tasks.
    for (std::size_t i = 0; i < tasks_.size(); i++) {
        const Task& task = *tasks_[i];
        if (task.starts_asleep && !task.started && task.state == TaskState::runnable)
            execute(Candidate{task.id});
    }
}

auto Scheduler::step(Strategy& strategy) -> StepOutcome {
    // Only daemons left (running, blocked or asleep): the run is over.
    if (daemons_ > 0 && unfinished_ == 0 && live_timers_ == 0) return StepOutcome::finished;
    auto options = candidates();
    if (options.empty()) return unfinished_ == 0 ? StepOutcome::finished : StepOutcome::deadlock;
    // Every task blocked and only daemons' sleeps pending: no event a task
    // waits for can come (a daemon would only loop), so it is a deadlock.
    if (unfinished_ > 0 && live_timers_ == 0 && runnable_count() == 0) {
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
