#pragma once
// The discrete-event scheduler: tasks are fibers, only one runs at a time,
// and a Strategy picks which runnable task (or the next timer) goes next at
// every step. A step is one stretch of a fiber from one yield point to the
// next, or one timer firing. Every real decision (more than one candidate) is
// recorded, so a run is its choice list.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <vector>

#include "sim/assert.hpp"
#include "sim/fiber.hpp"
#include "sim/fingerprint.hpp"
#include "sim/prng.hpp"
#include "sim/resource.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"
#include "sim/yield_point.hpp"

namespace sim {

using TaskId = std::uint32_t;
inline constexpr TaskId no_task = ~TaskId{0};

enum class TaskState : std::uint8_t { runnable, blocked, finished };

/// What picking a candidate spends of the run's exploration bounds.
enum class Charge : std::uint8_t {
    none,          // a task, or the next timer in time order
    io_reorder,    // a device completion (or the next sleep) ahead of an earlier timer
    daemon_wakeup, // a daemon's timer while tasks can run, or ahead of time order
    io_error,      // a listed device completion that fails: the device returns EIO
};

/// Something the strategy may pick: a runnable task, or a timer. The next
/// timer in time order (device completions and sleeps) may overtake runnable
/// tasks; within the run's bounds (Scheduler::Options), so may every other
/// in-flight device completion and every daemon's timer.
struct Candidate {
    TaskId task;                   // no_task for a timer
    Charge charge = Charge::none;
    std::uint64_t timer = 0;       // a timer's id (Scheduler::Timer::id: its identity across schedules)
    [[nodiscard]] auto is_timer() const -> bool { return task == no_task; }
    /// Stable identity across schedules sharing a prefix (DFS sleep sets):
    /// the task id, or the timer's id with the top bit set.
    [[nodiscard]] auto key() const -> std::uint64_t {
        if (charge == Charge::io_error) return (std::uint64_t{3} << 62) | timer;  // its twin's own key
        return is_timer() ? (std::uint64_t{1} << 63) | timer : task;
    }
};
inline constexpr std::uint64_t no_candidate_key = ~std::uint64_t{0};

class Scheduler;

/// The costs of sim::CacheLine accesses (a machine profile's line_*_ns).
struct CacheLineCosts {
    Duration hit = 0;
    Duration miss = 0;
    Duration miss_remote = 0;
};

/// Counts of one cache line's accesses (performance runs).
struct CacheLineCounts {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t remote_misses = 0;
    Duration waited = 0;  // summed time accesses waited in the line's FIFO
};

/// A single-owner shared resource: one cache line that one CPU owns at a
/// time (an atomic_t such as xfs's m_active_trans). An
/// access by the CPU that owns it costs a hit; any other CPU waits for the
/// accesses before it, in FIFO order, then pulls the line over at a miss's
/// cost (more from another socket) and owns it. The accessing task holds
/// its CPU throughout (an atomic read-modify-write stalls the CPU). Costs
/// time only in performance runs (Options::cpu_costs), like sim::cpu.
class CacheLine {
public:
    explicit CacheLine(const char* name) : name_(name) {}
    void access();
    [[nodiscard]] auto counts() const -> const CacheLineCounts& { return counts_; }
    [[nodiscard]] auto owner() const -> std::uint32_t { return owner_; }
    static constexpr std::uint32_t no_owner = ~std::uint32_t{0};

private:
    friend class Scheduler;
    const char* name_;
    std::uint32_t owner_ = no_owner;  // the CPU that owns the line
    bool busy_ = false;               // an access is in progress
    std::vector<TaskId> waiters_;
    CacheLineCounts counts_;
};

/// A task step that changed a resource its footprint does not name
/// (Scheduler::check_footprints): where it started and ended, and the
/// resource's name.
struct FootprintOmission {
    std::string task;
    std::string from;  // its start point, or "its start"
    std::string to;    // its end point, or "(blocked on ...)", "(finished)"
    std::string resource;
    auto operator==(const FootprintOmission&) const -> bool = default;
};

/// Policy: which candidate runs next (Relacy-style plug-in).
class Strategy {
public:
    virtual ~Strategy() = default;
    /// Called when there are at least two candidates, or at every step when
    /// wants_every_step() (the scripted strategy must see single candidates).
    virtual auto choose(const Scheduler& scheduler, std::span<const Candidate> candidates)
        -> std::size_t = 0;
    [[nodiscard]] virtual auto wants_every_step() const -> bool { return false; }
    /// Called by the driver after every step.
    virtual void after_step(const Scheduler& scheduler) { static_cast<void>(scheduler); }
    /// True when the strategy gave up on this run (an exhaustive search whose
    /// every remaining choice is redundant).
    [[nodiscard]] virtual auto abandoned() const -> bool { return false; }
    /// False while the run retraces states an earlier run already checked.
    [[nodiscard]] virtual auto fresh() const -> bool { return true; }
    /// The strategy cuts runs at states it has explored: the run must give
    /// the scheduler a ResourceHasher (Scheduler::remember_reads).
    [[nodiscard]] virtual auto remembers_states() const -> bool { return false; }
    /// With remembers_states: the key needs each task's history of reads
    /// (Scheduler::remember_reads).
    [[nodiscard]] virtual auto needs_read_histories() const -> bool { return false; }
    /// The run must check every task step's footprint against the resources
    /// it changed (Scheduler::check_footprints) and hand the strategy what
    /// it found at the run's end (see_omissions).
    [[nodiscard]] virtual auto checks_footprints() const -> bool { return false; }
    /// With checks_footprints: resources the check takes out of every
    /// step's footprint (a mutation its tests must see caught).
    [[nodiscard]] virtual auto footprint_left_out() const -> Footprint { return {}; }
    virtual void see_omissions(std::span<const FootprintOmission> omissions, std::uint64_t steps_checked) {
        static_cast<void>(omissions);
        static_cast<void>(steps_checked);
    }
    /// The run just ended at the step bound (explore.steps): not explored past it.
    virtual void see_step_bound() {}
};

enum class StepOutcome : std::uint8_t {
    ran_task,     // a task ran to a yield point, blocked or finished
    fired_timer,  // a timer fired (chosen, or because nothing else could run)
    finished,     // every task finished and no timer is pending
    deadlock,     // unfinished tasks, none runnable, no timer pending
};

/// Where a cancelled task's unwinding ends: the buffer start_fiber's
/// __builtin_setjmp filled (frame pointer, resume address, stack pointer).
struct CancelPoint {
    void* jump[5] = {};
};

class Scheduler {
public:
    struct Options {
        /// Timers compete with runnable tasks (exploration). When false they
        /// fire only when no task can run (performance in virtual time).
        bool timers_race_tasks = true;
        std::uint64_t steps_max = 100000;
        /// The run's seed: every stream the engine draws from (CPU jitter)
        /// is forked from it by name, never from a constant of its own.
        std::uint64_t seed = 0;
        /// Model CPU costs (sim::cpu) take virtual time: performance runs.
        /// Off, they cost nothing and add no step, so exploration is unchanged.
        bool cpu_costs = false;
        /// CPUs shared by every task's sim::cpu (0: each task has its own).
        /// A task that finds them all busy waits FIFO for one; lock waits,
        /// I/O waits and sleeps hold none.
        std::uint32_t cpus = 0;
        /// CPUs with identity: CPU c sits on socket
        /// c / cores_per_socket (0: every CPU on one socket). With cpus 0 a
        /// task's CPU is numbered by its task id.
        std::uint32_t cores_per_socket = 0;
        /// What one access to a shared cache line (sim::CacheLine) costs:
        /// a hit when this CPU owns the line, a miss when a CPU of the same
        /// socket owned it, a remote miss from another socket.
        CacheLineCosts line{};
        /// I/O completion order: per run, how many times
        /// a device completion may fire ahead of an earlier timer (a real
        /// device completes in-flight requests in any order; the nominal
        /// latencies only give one). 0: time order only.
        std::uint32_t io_reorders = 0;
        /// Per run, how many times a daemon's timer (the transaction kthread's
        /// sleep) may fire while tasks can run. 0: daemons wake only when no
        /// task can run and their timer is the next one.
        std::uint32_t daemon_wakeups = 0;
        /// Write I/O errors (faults.write_errors): per run, how many
        /// listed device completions of failable writes (io_after's
        /// `failable`) may instead complete with an error, each a twin
        /// candidate of its completion. 0: none, and no twin is listed.
        std::uint32_t io_errors = 0;
    };

    Scheduler(Options options, Trace* trace);
    Scheduler(const Scheduler&) = delete;
    auto operator=(const Scheduler&) -> Scheduler& = delete;
    ~Scheduler();

    /// Adds a task; it becomes runnable at once. `arguments` hashes what the
    /// body captured that decides what it does (sim::hash_of(ordered_id)):
    /// until the task runs and declares its live locals, it is all a
    /// visited-state key knows of the task beside its name.
    auto spawn(std::string name, std::function<void()> body, std::uint64_t arguments = 0) -> TaskId;
    /// Adds a kernel thread (kswapd, the transaction kthread): it runs like
    /// any task, but neither it nor its sleeps keep the run going, so a run
    /// finishes when every other task has finished and their timers fired.
    ///
    /// When it starts: `races`, its start is a choice among the tasks' steps,
    /// so the phase of its timer relative to the tasks is arbitrary (the btrfs
    /// transaction kthread commits a transaction only once it is
    /// commit_interval old, so that phase decides what a wake-up does);
    /// `asleep`, settle_daemons() runs it first, for a daemon whose work does
    /// not depend on that phase (the xfs log worker), where the start racing
    /// the tasks would only add schedules that differ in nothing.
    enum class DaemonStart : std::uint8_t { races, asleep };
    auto spawn_daemon(std::string name, std::function<void()> body, DaemonStart start = DaemonStart::races)
        -> TaskId;
    /// Runs each `asleep` daemon that has not run yet until it first blocks,
    /// sleeps or yields, with no choice. Called once, after the model's
    /// start_daemons().
    void settle_daemons();

    // ---- Called from inside a fiber (model code). ----
    void yield(const YieldPoint& point) {
        SIM_ASSERT(current_ != no_task);
        Task& task = *tasks_[current_];
        task.last_point = &point;
        if (!point.covers_before) step_footprint_ |= task.uncovered;
        task.uncovered = Footprint{};
        task.through = Footprint{};
        hits_[point.id]++;
        leave_for_scheduler(task);
    }
    /// Blocks the current task until wake(); `what` names the wait for
    /// deadlock reports and traces.
    void block(const char* what);
    void wake(TaskId task);
    /// A FIFO resource's handoff (a mutex, a CPU, a cache line): wakes the
    /// first waiter, which now holds it, and returns it; no_task when nobody
    /// waits (the resource is free). Wait lists are vectors, not deques: a
    /// few waiters at most, and an empty one allocates nothing when the
    /// world that holds it is copied for a run.
    auto hand_over(std::vector<TaskId>& waiters) -> TaskId;
    void sleep(Duration duration);
    /// A daemon's idle sleep in its kthread loop, as schedule_timeout there
    /// followed by kthread_should_stop(): true when the run ends during the
    /// sleep (~Scheduler, as kthread_stop at unmount), and the daemon's body
    /// must then return at once. The sleep is ended by that return instead
    /// of an unwind of the task's stack, so the caller holds nothing on its
    /// stack whose destructor matters (no lock guard, no owned memory).
    [[nodiscard]] auto kthread_sleep(Duration duration) -> bool;
    /// sim::cpu's jittered busy time, on one of the CPUs.
    void compute(Duration nominal);
    /// One access to a cache line on the current task's CPU (CacheLine).
    void line_access(CacheLine& line);
    /// The CPU the current task runs on or last ran on (its task id when
    /// Options::cpus is 0; no_cpu before it first computed).
    [[nodiscard]] auto current_cpu() const -> std::uint32_t;
    /// The socket of a CPU (Options::cores_per_socket).
    [[nodiscard]] auto socket_of(std::uint32_t cpu) const -> std::uint32_t {
        return options_.cores_per_socket == 0 ? 0 : cpu / options_.cores_per_socket;
    }
    static constexpr std::uint32_t no_cpu = ~std::uint32_t{0};
    void note(std::string text);
    /// An I/O request entering or leaving the device, for traces.
    void io_event(bool submitted, std::uint64_t id, std::string text);
    /// Adds resources to the running step's footprint.
    void touch(Footprint footprint) { step_footprint_ |= footprint; }
    /// What the running task's code from here to its next yield point
    /// touches, where that stretch starts after a point whose declaration
    /// does not cover it (an operation's start, a daemon's wake-up): it
    /// reaches each step of the stretch that ends at a wait, at the task's
    /// end or at a point that does not cover the code before it
    /// (YieldPoint::covers_before); a step that ends at a point that does is
    /// covered by that point's declaration.
    void cover(Footprint footprint) {
        if (current_ == no_task) {
            step_footprint_ |= footprint;
            return;
        }
        tasks_[current_]->uncovered = footprint;
    }

    /// What the running task's code from here to its next yield point
    /// touches, where the point there may declare less (a helper that many
    /// operations call, such as jbd2's wait for log space): it reaches every
    /// step of the stretch, this one, those after its waits, and the one
    /// that ends at the point.
    void touch_to_next_point(Footprint footprint) {
        step_footprint_ |= footprint;
        if (current_ != no_task) tasks_[current_]->through |= footprint;
    }

    // ---- Timers, from anywhere. ----
    // Each returns the timer's id (Timer::id), which a model that keeps the
    // timer's purpose as state hashes with it: the callback is not hashed.
    auto at(Instant when, std::function<void()> callback) -> std::uint64_t;
    auto after(Duration delay, std::function<void()> callback) -> std::uint64_t {
        return at(now_ + delay, std::move(callback));
    }
    /// A device completion: like after(), but within Options::io_reorders it
    /// may fire ahead of earlier timers (model/disk/block_device.cpp).
    auto io_after(Duration delay, std::function<void()> callback, bool failable = false) -> std::uint64_t;
    /// Inside a device completion's callback: whether the strategy picked
    /// its failing twin (Charge::io_error), so the request ends with EIO.
    [[nodiscard]] auto io_failing() const -> bool { return io_failing_; }

    // ---- Driving. ----
    /// One step: collect candidates, let the strategy choose, run it.
    auto step(Strategy& strategy) -> StepOutcome;
    /// The candidates of the next step, in a stable order: tasks by id, the
    /// next timer, then the charged timers by (time, id).
    auto candidates() -> std::span<const Candidate> {
        if (timers_listed_ == 0 && timers_.empty()) return candidates_;  // the common case, inline
        return list_candidates();
    }
    /// Runs the given candidate (as step() does after choosing).
    auto execute(Candidate candidate) -> StepOutcome;

    // ---- Inspection. ----
    [[nodiscard]] auto now() const -> Instant { return now_; }
    [[nodiscard]] auto current() const -> TaskId { return current_; }
    /// The task the last step ran (no_task when it fired a timer).
    [[nodiscard]] auto last_ran() const -> TaskId { return last_ran_; }
    /// The daemon whose sleep the last step's timer ended (no_task otherwise).
    [[nodiscard]] auto last_daemon_woken() const -> TaskId { return last_daemon_woken_; }
    /// The task a pending timer wakes (a sleep's or a daemon's), no_task for
    /// a device completion or an id no pending timer has.
    [[nodiscard]] auto timer_owner(std::uint64_t timer_id) const -> TaskId;
    /// What the last step touched: its own reports plus the declarations of
    /// the yield points it started and ended at (everything, for a timer).
    [[nodiscard]] auto last_footprint() const -> Footprint { return step_footprint_; }
    [[nodiscard]] auto steps() const -> std::uint64_t { return steps_; }
    [[nodiscard]] auto task_count() const -> std::size_t { return tasks_.size(); }
    [[nodiscard]] auto task_name(TaskId task) const -> const std::string& { return tasks_[task]->name; }
    [[nodiscard]] auto task_state(TaskId task) const -> TaskState { return tasks_[task]->state; }
    /// A kernel thread (spawn_daemon).
    [[nodiscard]] auto task_is_daemon(TaskId task) const -> bool { return tasks_[task]->daemon; }
    [[nodiscard]] auto blocked_on(TaskId task) const -> const char* { return tasks_[task]->blocked_on; }
    /// Whether the running task's stack is being unwound because the
    /// scheduler ended it (~Scheduler).
    [[nodiscard]] auto cancelling() const -> bool {
        return current_ != no_task && tasks_[current_]->cancelled;
    }
    /// The yield point where the task last stopped (nullptr before its first yield).
    [[nodiscard]] auto last_point(TaskId task) const -> const YieldPoint* { return tasks_[task]->last_point; }
    [[nodiscard]] auto has_timers() const -> bool { return !timers_.empty(); }
    /// Charged choices taken so far this run (see Options).
    [[nodiscard]] auto io_reorders_used() const -> std::uint32_t { return io_reorders_used_; }
    [[nodiscard]] auto daemon_wakeups_used() const -> std::uint32_t { return daemon_wakeups_used_; }
    [[nodiscard]] auto io_errors_used() const -> std::uint32_t { return io_errors_used_; }
    [[nodiscard]] auto choices() const -> const std::vector<std::uint32_t>& { return choices_; }
    [[nodiscard]] auto hits() const -> const std::vector<std::uint64_t>& { return hits_; }
    [[nodiscard]] auto tracing() const -> bool { return tracing_; }
    [[nodiscard]] auto all_finished() const -> bool;
    /// "flusher blocked on em_tree.lock; ..." for deadlock reports.
    [[nodiscard]] auto describe_blocked() const -> std::string;
    [[nodiscard]] auto options() const -> const Options& { return options_; }

    // ---- Visited states (sim/fingerprint.hpp). ----
    /// From now on the world's state hashes through `hasher`; with
    /// `histories`, before each task step, it asks for every resource's hash
    /// and folds those of the resources the step touched into the task's
    /// history of reads (the key that needs no live locals).
    void remember_reads(ResourceHasher* hasher, bool histories = true) {
        hasher_ = hasher;
        if (histories && before_ == nullptr) before_ = std::make_unique<ResourceHashes>();
    }
    /// Pushes a frame of live locals on the running task (sim/live.hpp);
    /// the frames to pop it from, or nullptr outside a task.
    auto push_frame(const LiveFrame* frame) -> std::vector<const LiveFrame*>* {
        if (current_ == no_task) return nullptr;
        std::vector<const LiveFrame*>& frames = tasks_[current_]->frames;
        frames.push_back(frame);
        return &frames;
    }
    /// A task's part of a state: its state, last point, wait, history of
    /// reads and live locals (but the one named `omit`: a mutation, tests).
    void hash_task(TaskId task, StateHash& out, std::string_view omit = {}) const;
    /// The live locals `task` has declared, outermost first, for reports.
    [[nodiscard]] auto live_frames(TaskId task) const -> const std::vector<const LiveFrame*>& {
        return tasks_[task]->frames;
    }
    /// The engine's part of a state apart from the tasks: the timers
    /// (relative to now, with their ids and owners), the clock, the CPUs and
    /// the charged budgets spent.
    void hash_engine(StateHash& out) const;
    [[nodiscard]] auto resource_hasher() const -> ResourceHasher* { return hasher_; }
    /// Check mode for footprints (--check-footprints): from now on every task
    /// step hashes each resource through `hasher` before and after it runs,
    /// and a resource whose hash the step changed without its footprint
    /// naming it is an omission: a step that wrote it would commute, for
    /// sleep sets and dpor, with one that reads it (but for the hasher's
    /// commuting() resources). Reads leave no trace in a hash, so only
    /// writes are checked.
    /// `left_out`: resources taken out of every step's footprint for the
    /// comparison only (a mutation for tests).
    void check_footprints(ResourceHasher* hasher, Footprint left_out = {}) {
        footprint_hasher_ = hasher;
        footprint_left_out_ = left_out;
        if (footprint_before_ == nullptr) {
            footprint_before_ = std::make_unique<ResourceHashes>();
            footprint_after_ = std::make_unique<ResourceHashes>();
        }
    }
    /// What check_footprints found: each (start point, end, resource) once,
    /// in the order first seen.
    [[nodiscard]] auto footprint_omissions() const -> const std::vector<FootprintOmission>& {
        return omissions_;
    }
    /// Steps check_footprints compared (none when a hash failed).
    [[nodiscard]] auto footprint_steps_checked() const -> std::uint64_t { return footprint_steps_; }
    /// False once a hash failed in this run: no state of it may be remembered.
    [[nodiscard]] auto reads_known() const -> bool { return hasher_ != nullptr && !reads_lost_; }
    /// The engine's part of a state: every task's (hash_task), then the rest
    /// (hash_engine).
    void hash_state(StateHash& out) const;

private:
    struct Task {
        TaskId id;
        std::string name;
        bool daemon = false;
        bool starts_asleep = false;  // DaemonStart::asleep
        TaskState state = TaskState::runnable;
        const char* blocked_on = "";
        std::uint64_t blocked_on_hash = hash_name("");  // hash_name(blocked_on), for hash_task
        const YieldPoint* last_point = nullptr;
        std::function<void()> body;
        Fiber fiber;   // the suspended task; made when it first runs
        Fiber caller;  // the scheduler, while the task runs
        bool started = false;
        bool cancelled = false;    // ~Scheduler ends it: its next arrival unwinds it (cancel)
        CancelPoint cancel_point;  // where that unwinding stops (start_fiber)
        bool stoppable = false;    // in kthread_sleep: ~Scheduler ends it by a return instead
        StackBounds stack;         // the fiber's stack
        StackBounds caller_stack;  // the scheduler's stack, while the task runs
        void* fake_stack = nullptr;  // AddressSanitizer's, while suspended
        std::uint32_t cpu = no_cpu;  // the CPU it holds or last held (Options::cpus)
        Instant waiting_since = 0;   // runnable and not run since then (sched_latency)
        std::uint64_t timers_added = 0;  // by its own steps (next_timer_id)
        /// remember_reads: the hashes of what each of its steps touched, in
        /// order (a function of everything its locals can hold).
        std::uint64_t reads = 0;
        std::uint64_t arguments = 0;  // spawn's
        Footprint uncovered;          // cover()'s, until the next yield point
        Footprint through;            // touch_to_next_point()'s, until the next yield point
        /// The live locals of the functions it is in (sim/live.hpp), outermost first.
        std::vector<const LiveFrame*> frames;
    };
    /// Notes a task's arrival back on its own stack: on return from the switch
    /// and on the forced unwind that destroys a suspended task.
    struct Arrival {
        Task& task;
        explicit Arrival(Task& arriving) : task(arriving) {}
        Arrival(const Arrival&) = delete;
        auto operator=(const Arrival&) -> Arrival& = delete;
        ~Arrival() { asan::finish_switch(task.fake_stack, &task.caller_stack); }
    };
    /// Scheduler side of a switch onto a task's stack (to resume it, or to
    /// destroy its suspended fiber) and back, for the scope's length.
    class OnTaskStack {
    public:
        explicit OnTaskStack(const Task& task) { asan::start_switch(&fake_stack_, task.stack); }
        OnTaskStack(const OnTaskStack&) = delete;
        auto operator=(const OnTaskStack&) -> OnTaskStack& = delete;
        ~OnTaskStack() { asan::finish_switch(fake_stack_, nullptr); }

    private:
        void* fake_stack_ = nullptr;
    };
    /// Task side of a switch to the scheduler and back.
    static void leave_for_scheduler(Task& task) {
        asan::start_switch(&task.fake_stack, task.caller_stack);
        {
            const Arrival arrival{task};
            task.caller = std::move(task.caller).resume();
        }
        if (task.cancelled && !task.stoppable) cancel(task);
    }
    /// Unwinds the task's stack up to start_fiber's frame and jumps there.
    [[noreturn]] static void cancel(Task& task);
    void start_fiber(Task& task);
    /// The last switch of a task ~Scheduler ended (cancel or kthread_sleep).
    static auto leave_ended(Task& task) -> Fiber;
    enum class TimerKind : std::uint8_t {
        sleep,   // a task's sleep or CPU time, or a model timer (at/after)
        io,      // a device completion
        daemon,  // a daemon's sleep: does not keep the run going
    };
    /// A timer's id: who added it and how many that adder had added before.
    /// The adder is the task whose step added it (slot = its id + 1), or the
    /// engine (slot 0: a timer's callback, or the set-up before the first
    /// step). The id is also the tie-break between timers due at the same
    /// instant, so which of two fires first never depends on the order in
    /// which two tasks' steps ran: sleep sets and dpor take two task steps
    /// whose footprints do not meet as commuting, and a global count of
    /// additions made their order decide the tie (found by the timer
    /// footprint experiment; tests/sim/dfs_test.cpp). A task's own
    /// steps run in program order and timer steps touch everything, so an id
    /// is the same in every schedule of one class.
    static constexpr unsigned timer_count_bits = 40;
    [[nodiscard]] auto next_timer_id() -> std::uint64_t;
    struct Timer {
        Instant when;
        std::uint64_t id;
        TimerKind kind;
        TaskId owner;  // the sleeping task, or no_task
        std::function<void()> callback;
        bool failable = false;  // io: may complete with an error (Options::io_errors)
        auto operator>(const Timer& other) const -> bool {
            return when != other.when ? when > other.when : id > other.id;
        }
        [[nodiscard]] auto daemon() const -> bool { return kind == TimerKind::daemon; }
    };

    void switch_to_scheduler();
    auto list_candidates() -> std::span<const Candidate>;
    /// The tasks, the next timer and the charged timers (list_candidates'
    /// list before the failing twins).
    void list_timers();
    /// Appends the failing twin of every listed failable completion while
    /// Options::io_errors lasts.
    void list_io_errors();
    /// Whether `timer` may fire while `tasks` candidates are runnable: a
    /// sleep may not end later than sched_latency after the longest-waiting
    /// of them became runnable (sim/time.hpp).
    [[nodiscard]] auto fires_before_tasks(const Timer& timer, std::size_t tasks) const -> bool;
    void fire_timer(const Candidate& candidate);
    /// Removes the timer `candidate` names from the queue.
    auto take_timer(const Candidate& candidate) -> Timer;
    /// The trace note of a timer fired by a charged choice.
    [[nodiscard]] auto charged_timer_text(const Candidate& candidate, const Timer& timer) const
        -> std::string;
    auto add_timer(Instant when, TimerKind kind, TaskId owner, std::function<void()> callback,
                   bool failable = false) -> std::uint64_t;
    /// Blocks the current task until a timer of `kind` fires `duration` from now.
    void block_for(Duration duration, TimerKind kind, const char* what);

    Options options_;
    Trace* trace_;
    bool tracing_;  // trace_ is there and enabled (fixed for the scheduler's life)
    std::vector<std::unique_ptr<Task>> tasks_;
    void mark_runnable(TaskId id);
    void mark_not_runnable(TaskId id);
    /// Runnable tasks sorted by id, then the timers listed by the last
    /// candidates() (task no_task, the largest id, so they stay last): the
    /// tasks are kept up to date on every state change, so a step does not
    /// scan every task.
    std::vector<Candidate> candidates_;
    std::size_t timers_listed_ = 0;
    [[nodiscard]] auto runnable_count() const -> std::size_t { return candidates_.size() - timers_listed_; }
    /// A min-heap on (when, id) (std::push_heap with std::greater), so
    /// the charged candidates can be listed without popping.
    std::vector<Timer> timers_;
    std::vector<const Timer*> charged_scratch_;
    std::uint64_t engine_timers_added_ = 0;  // outside any task's step (next_timer_id)
    std::uint32_t io_reorders_used_ = 0;
    std::uint32_t daemon_wakeups_used_ = 0;
    std::uint32_t io_errors_used_ = 0;
    bool io_failing_ = false;
    std::vector<std::uint32_t> choices_;
    std::vector<std::uint64_t> hits_;
    Instant now_ = 0;
    std::uint64_t steps_ = 0;
    TaskId current_ = no_task;
    TaskId last_ran_ = no_task;
    TaskId last_daemon_woken_ = no_task;
    Footprint step_footprint_;
    Prng cpu_jitter_;  // forked from options_.seed
    std::size_t unfinished_ = 0;     // tasks other than daemons
    std::size_t daemons_ = 0;
    std::size_t live_timers_ = 0;    // timers other than daemons' sleeps
    std::vector<TaskId> cpu_holder_;  // per CPU: the task on it, or no_task
    std::vector<TaskId> cpu_waiters_;
    /// Takes a CPU for the current task (waiting FIFO when all are busy):
    /// the one it last ran on if free, else the lowest-numbered free one.
    void acquire_cpu();
    /// Gives the current task's CPU to the first waiter, or frees it.
    void release_cpu();
    std::exception_ptr failure_;
    ResourceHasher* hasher_ = nullptr;  // remember_reads
    ResourceHasher* footprint_hasher_ = nullptr;  // check_footprints
    std::unique_ptr<ResourceHashes> footprint_before_;
    std::unique_ptr<ResourceHashes> footprint_after_;
    Footprint footprint_left_out_;
    std::vector<FootprintOmission> omissions_;
    std::uint64_t footprint_steps_ = 0;
    /// check_footprints' hashes before a step; false when one failed.
    auto hash_before_footprint_check() -> bool;
    /// check_footprints' comparison of the step `task` just ran from `start`.
    void compare_footprint(const Task& task, const YieldPoint* start);
    std::unique_ptr<ResourceHashes> before_;  // the hashes before the running step
    bool reads_lost_ = false;
    /// Folds the hashes `before` (taken before the step) of the bits the
    /// step touched into the task's reads.
    void record_reads(Task& task, const YieldPoint* start, const ResourceHashes& before);
    Scheduler* outer_ = nullptr;  // the scheduler this thread had before this one
};

namespace detail {
extern constinit thread_local Scheduler* this_thread_scheduler;
}  // namespace detail

/// The scheduler running on this thread (model code reaches it through the
/// free functions below, as loom's with_execution does).
inline auto current_scheduler() -> Scheduler& {
    SIM_ASSERT(detail::this_thread_scheduler != nullptr);
    return *detail::this_thread_scheduler;
}
inline auto has_current_scheduler() -> bool { return detail::this_thread_scheduler != nullptr; }

inline void yield(const YieldPoint& point) { current_scheduler().yield(point); }
inline void cover(Footprint footprint) { current_scheduler().cover(footprint); }
/// The resources the engine, the device and the runner report themselves
/// wherever they are touched: the tasks' clock bits, the CPU jitter stream,
/// the disk and the oracle. A stretch that may touch any model state
/// touches everything else.
auto self_reported() -> Footprint;
/// The calling task computes for about `duration` (each task has a CPU of its
/// own): 50% to 150% of it, drawn from the scheduler's own stream.
inline void cpu(Duration duration) {
    auto& scheduler = current_scheduler();
    if (scheduler.options().cpu_costs && duration > 0) scheduler.compute(duration);
}
inline void CacheLine::access() { current_scheduler().line_access(*this); }
inline auto now() -> Instant { return current_scheduler().now(); }
inline auto tracing() -> bool { return current_scheduler().tracing(); }
inline void note(std::string text) { current_scheduler().note(std::move(text)); }

}  // namespace sim

/// Writes a story note; the expression is not evaluated when tracing is off.
#define SIM_NOTE(expression)                                        \
    do {                                                            \
        if (::sim::tracing()) ::sim::note(expression);              \
    } while (false)
