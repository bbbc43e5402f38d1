#include "runner/runner.hpp"

#include "runner/campaign.hpp"
#include "runner/verdict_memo.hpp"

#include <algorithm>

#include "checkers/event_watch.hpp"
#include "model/events.hpp"
#include "model/info.hpp"
#include "model/key_words.hpp"

#include "sim/assert.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"

namespace scenarios {

auto schedule_seed(std::uint64_t seed, std::uint64_t index) -> std::uint64_t {
    std::uint64_t state = seed ^ (index * 0xD1B54A32D192ED03ULL);
    return sim::splitmix64(state);
}

namespace {

constexpr std::uint64_t pct_probe_schedules = 32;
// The probe's own campaign seed, fixed on purpose: PCT's bound is a property of
// the scenario (and its bounds), the same for every schedule of every campaign,
// so schedule i of a campaign does not depend on which schedules ran before it.
constexpr std::uint64_t pct_probe_seed = 0x9c7;

// A task may be preempted between two system calls; yielding here also keeps
// every stretch between yield points inside one operation (or the start of a
// task and its first operation), which is what yield points' footprint
// declarations cover.
const sim::YieldPoint op_begin = sim::register_yield_point(
    "workload.op_begin", "a task is about to issue its next operation", {"oracle"});

auto oracle_resource() -> sim::Footprint {
    static const sim::Footprint footprint = sim::resource("oracle");
    return footprint;
}

/// The workload: runs a task's operations against the model and tells the
/// oracle what was done and acknowledged. It lives outside the model.
struct Workload {
    const Scenario& scenario;
    model::FileSystem& fs;
    checkers::Oracle& oracle;
    std::vector<bool>& created;
    std::uint64_t fsyncs = 0;
    std::uint64_t completed = 0;  // operations completed: what progress is
    const model::ModelInfo* info = model::find_model(scenario.model);
    PerfOutcome* perf = nullptr;  // set for performance runs

    [[nodiscard]] auto op_info(const Op& op) const -> const model::OpInfo& {
        const model::OpInfo* found = model::find_op(*info, op.name);
        SIM_ASSERT(found != nullptr && "operation validated by the loader");
        return *found;
    }
    [[nodiscard]] auto effect_of(const Op& op) const -> model::OracleEffect { return op_info(op).effect; }
    [[nodiscard]] auto is_create(const Op& op) const -> bool { return op_info(op).creates_file; }

    /// Runs a task's operations; between two of them the task yields (a task
    /// start is already a step boundary).
    void run_all(const std::vector<Op>& ops) {
        for (std::size_t i = 0; i < ops.size(); i++) {
            if (i > 0) sim::yield(op_begin);
            run(ops[i]);
            completed++;
        }
    }

    /// A task's operations: its list, or those it generates as it runs.
    void run_task(const Task& task) {
        if (task.generated) {
            run_generated(*task.generated);
        } else {
            run_all(task.ops);
        }
    }

    // GeneratedOps: tasks that reached the unlink phase, and where they wait
    // for the others.
    std::size_t phase_arrivals = 0;
    sim::WaitQueue phase_wait{"workload.phase", oracle_resource()};

    /// Creates the task's files, then (GeneratedOps::unlink) waits for every
    /// generated task to have created its own and unlinks them; each
    /// operation made when it runs, none stored.
    void run_generated(const GeneratedOps& generated) {
        Op op;
        op.json_path = generated.json_path;
        op.user_cpu_ns = generated.user_cpu_ns;
        const auto run_phase = [&](const std::string& name, bool first_phase) {
            op.name = name;
            for (std::uint64_t i = 0; i < generated.files; i++) {
                if (i > 0 || !first_phase) sim::yield(op_begin);
                op.file_index = static_cast<std::uint32_t>(generated.first_file + i);
                op.file = scenario.files[op.file_index];
                run(op);
                completed++;
            }
        };
        run_phase(generated.create_op, true);
        if (!generated.unlink) return;
        const std::size_t generators = generated.phase_tasks;
        if (++phase_arrivals == generators) {
            if (perf != nullptr) perf->create_phase_ns = sim::now();
            phase_wait.wake_all();
        }
        while (phase_arrivals < generators) phase_wait.wait();
        run_phase(generated.unlink_op, false);
    }

    /// The model runs `call`. An error returned to the task, on a scenario
    /// with write errors, may be a writeback error reported to it: the
    /// oracle is told (Oracle::error_reported; over-telling only promises less).
    auto execute(const model::OpCall& call) -> model::OpResult {
        const model::OpResult result = fs.execute(call);
        // A short write returns a count, not an error: nothing was reported.
        if (result == model::OpResult::failed && scenario.faults.write_errors) oracle.error_reported(call.file);
        return result;
    }

    /// The model's call for `op` (the loader validated its fields).
    [[nodiscard]] auto make_call(const Op& op) const -> model::OpCall {
        model::OpCall call;
        call.name = op.name;
        call.op = model::op_id(*info, op_info(op));
        call.file = op.file_index != Op::no_file_index ? op.file_index
                    : op.file.empty()                  ? 0
                                                       : scenario.file_id(op.file);
        call.offset = op.offset;
        call.length = op.length;
        call.has_range = op.has_offset || op.has_length;
        if (op.has_offset && !op.has_length) call.length = ~std::uint64_t{0} - op.offset;
        call.flags = &op.flags;
        return call;
    }

    /// Runs one operation, telling the oracle what it promises by what the
    /// operation means (its OracleEffect), not by its name.
    void run(const Op& op) {
        // The task's own time before the call (fs_mark's per-file overhead).
        sim::cpu(static_cast<sim::Duration>(op.user_cpu_ns));
        model::OpCall call = make_call(op);
        auto& scheduler = sim::current_scheduler();
        scheduler.touch(oracle_resource());
        switch (effect_of(op)) {
            case model::OracleEffect::write_data:
                run_write(op, call);
                break;
            case model::OracleEffect::zero_range:
            case model::OracleEffect::punch_hole:
                run_zero(op, call);
                break;
            case model::OracleEffect::set_size:
                run_set_size(op, call);
                break;
            case model::OracleEffect::extend_size:
                run_extend_size(op, call);
                break;
            case model::OracleEffect::fsync_file:
                run_fsync(op, call, scheduler);
                break;
            case model::OracleEffect::sync_all:
                run_sync_all(call, scheduler);
                break;
            case model::OracleEffect::remove_file:
                // Told before the call: the unlink may be durable before it returns.
                oracle.remove_file(call.file);
                if (execute(call) == model::OpResult::ok) {
                    created[call.file] = false;
                    if (perf != nullptr) perf->unlinks++;
                }
                break;
            case model::OracleEffect::none: {
                const bool ok = execute(call) == model::OpResult::ok;
                if (ok && is_create(op)) created[call.file] = true;
                if (ok && is_create(op) && perf != nullptr) perf->creates++;
                break;
            }
        }
        scheduler.touch(oracle_resource());
    }

    [[nodiscard]] auto first_block(const Op& op) const -> std::uint64_t { return op.offset / scenario.device.block_size; }
    [[nodiscard]] auto end_block(const Op& op) const -> std::uint64_t {
        // The block holding the last byte (equal for block multiples; ext4's
        // byte-granular writes dirty their partial last block).
        return (op.offset + op.length + scenario.device.block_size - 1) / scenario.device.block_size;
    }

    void run_write(const Op& op, model::OpCall& call) {
        call.version = oracle.begin_write();
        const std::size_t size_id = oracle.begin_size(call.file, false, op.offset + op.length);
        const model::OpResult result = execute(call);
        if (result == model::OpResult::failed) return;
        // A short write (ENOSPC partway) promises only the bytes it copied.
        const std::uint64_t length = result == model::OpResult::short_write ? call.copied : op.length;
        const std::uint32_t block_size = scenario.device.block_size;
        oracle.end_size(call.file, size_id, op.offset + length);
        oracle.end_write(call.file, first_block(op), (op.offset + length + block_size - 1) / block_size,
                         call.version, op.offset + length);
        if (perf != nullptr) {
            perf->bytes_written += length;
            perf->writes++;
        }
    }

    /// A hole punch never changes the size; a zero range raises it unless keep_size.
    void run_zero(const Op& op, model::OpCall& call) {
        const auto keep_size = op.flags.find("keep_size");
        const bool extends = effect_of(op) == model::OracleEffect::zero_range &&
                             (keep_size == op.flags.end() || !keep_size->second);
        call.version = oracle.begin_zero(call.file, first_block(op), end_block(op));
        const std::size_t size_id = extends ? oracle.begin_size(call.file, false, op.offset + op.length) : 0;
        if (execute(call) != model::OpResult::ok) return;
        if (extends) oracle.end_size(call.file, size_id);
        oracle.end_zero(call.file, first_block(op), end_block(op), call.version, extends ? op.offset + op.length : 0);
    }

    /// truncate: the size becomes `length`; what lay past it reads zeros.
    void run_set_size(const Op& op, model::OpCall& call) {
        const std::uint32_t block_size = scenario.device.block_size;
        call.version = oracle.begin_truncate(call.file, op.length, block_size);
        const std::size_t size_id = oracle.begin_size(call.file, true, op.length);
        if (execute(call) != model::OpResult::ok) return;
        oracle.end_size(call.file, size_id);
        oracle.end_truncate(call.file, op.length, block_size);
    }

    /// fallocate without keep_size raises the size to max(size, offset + length).
    void run_extend_size(const Op& op, const model::OpCall& call) {
        const auto keep_size = op.flags.find("keep_size");
        const bool extends = keep_size == op.flags.end() || !keep_size->second;
        const std::size_t size_id = extends ? oracle.begin_size(call.file, false, op.offset + op.length) : 0;
        if (execute(call) == model::OpResult::ok && extends) oracle.end_size(call.file, size_id);
    }

    void run_fsync(const Op& op, const model::OpCall& call, sim::Scheduler& scheduler) {
        const sim::Instant began = scheduler.now();
        if (perf != nullptr) {
            // No crash is checked in a performance run: no promise
            // (it would copy the file's contents at every fsync).
            if (execute(call) == model::OpResult::ok) {
                perf->fsyncs++;
                perf->fsync_latencies_ns.push_back(scheduler.now() - began);
            }
            return;
        }
        const std::size_t id =
            oracle.begin_fsync(call.file, scheduler.steps(), "fsync #" + std::to_string(++fsyncs) + " of " + op.file);
        if (execute(call) == model::OpResult::ok) oracle.end_fsync(id, scheduler.steps());
    }

    /// sync(2) promises every file that exists when it starts.
    void run_sync_all(const model::OpCall& call, sim::Scheduler& scheduler) {
        std::vector<std::size_t> ids;
        for (std::uint32_t file = 0; file < created.size(); file++) {
            if (!created[file]) continue;
            ids.push_back(oracle.begin_fsync(file, scheduler.steps(), "sync of " + scenario.files[file]));
        }
        if (execute(call) == model::OpResult::ok) {
            for (std::size_t id : ids) oracle.end_fsync(id, scheduler.steps());
        }
    }
};

auto schedule_error(const ScheduleStep& step, const Scenario& scenario, const std::string& variant,
                    const std::string& got) -> InputError {
    return InputError(scenario.path + ": " + step.json_path + ": expected task " + step.task +
                      (step.until.empty() ? " to run to its end" : " to reach " + step.until) +
                      " (variant " + variant + "), got " + got);
}

}  // namespace

/// Follows the scenario's schedule: each step binds to the first unfinished
/// task of that name and runs it (firing timers while it waits for I/O) until
/// it reaches the step's yield point or ends.
class ScriptedStrategy final : public sim::Strategy {
public:
    ScriptedStrategy(const Scenario& scenario, std::string variant)
        : scenario_(scenario), variant_(std::move(variant)) {}

    [[nodiscard]] auto wants_every_step() const -> bool override { return true; }
    [[nodiscard]] auto at_crash() const -> bool {
        return position_ < scenario_.schedule.size() &&
               scenario_.schedule[position_].kind == ScheduleStep::Kind::crash;
    }
    [[nodiscard]] auto crash_step() const -> const ScheduleStep& { return scenario_.schedule[position_]; }
    [[nodiscard]] auto exhausted() const -> bool { return position_ >= scenario_.schedule.size(); }

    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        if (exhausted() || at_crash()) return 0;
        const ScheduleStep& step = scenario_.schedule[position_];
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

    /// After each step: has the current schedule step reached its end?
    void after_step(const sim::Scheduler& scheduler) override {
        if (exhausted() || at_crash() || bound_ == sim::no_task) return;
        const ScheduleStep& step = scenario_.schedule[position_];
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

    /// The run ended (every task finished) while steps remain.
    void check_done() const {
        if (exhausted() || at_crash()) return;
        const ScheduleStep& step = scenario_.schedule[position_];
        throw schedule_error(step, scenario_, variant_, "every task already ended");
    }

private:
    void bind(const sim::Scheduler& scheduler, const ScheduleStep& step) {
        for (sim::TaskId task = 0; task < scheduler.task_count(); task++) {
            if (scheduler.task_name(task) == step.task &&
                scheduler.task_state(task) != sim::TaskState::finished) {
                bound_ = task;
                return;
            }
        }
    }
    void advance() {
        position_++;
        bound_ = sim::no_task;
        reached_ = 0;
    }

    const Scenario& scenario_;
    std::string variant_;
    std::size_t position_ = 0;
    sim::TaskId bound_ = sim::no_task;
    std::uint32_t reached_ = 0;
    std::uint64_t last_seen_step_ = ~std::uint64_t{0};
};

Simulation::Simulation(const Scenario& scenario, const Variant& variant)
    : scenario_(scenario), variant_(variant), bounds_(scenario.explore), verdicts_(std::make_unique<VerdictMemo>()) {
    model::Geometry geometry{scenario.device.block_size, scenario.device.blocks,
                             scenario.device.profile, scenario.machine.page_cache_bytes,
                             scenario.machine.reclaim_batch_bytes};
    if (scenario.device.write_latency_ns) geometry.write_latency = static_cast<sim::Duration>(*scenario.device.write_latency_ns);
    if (scenario.device.flush_latency_ns) geometry.flush_latency = static_cast<sim::Duration>(*scenario.device.flush_latency_ns);
    geometry.bandwidth = scenario.device.bandwidth;
    geometry.costs_ns = scenario.costs_of(variant);
    prototype_ = model::make_filesystem(scenario.model, variant.config, geometry, scenario.files);
    prototype_oracle_ = std::make_unique<checkers::Oracle>(scenario.files.size());
    prototype_created_.assign(scenario.files.size(), false);
    for (const auto& name : scenario.checkers) checkers_.push_back(checkers::make_checker(name));
    if (!scenario.crash.mount_may_fail) checkers_.push_back(checkers::make_checker("mount"));
    if (scenario.faults.budget > 0) checkers_.push_back(checkers::make_checker("fault_outcome"));
    // The set-up runs once, tasks in order, no crash; every later run starts
    // from a copy of the quiescent result.
    {
        sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = setup_steps_max}, nullptr);
        Workload workload{scenario_, *prototype_, *prototype_oracle_, prototype_created_};
        scheduler.spawn("setup", [&] {
            workload.run_all(scenario_.setup);
        });
        sim::FirstStrategy first;
        sim::StepOutcome outcome;
        while ((outcome = scheduler.step(first)) != sim::StepOutcome::finished) {
            if (outcome == sim::StepOutcome::deadlock) {
                throw InputError(scenario_.path + ": $.setup: expected the set-up to complete, got a deadlock: " +
                                 scheduler.describe_blocked());
            }
        }
    }
    // Device faults from the tasks on: the set-up's writes are
    // the quiescent start every run copies.
    prototype_->device().set_faults({scenario.faults.budget, scenario.faults.torn_writes, scenario.device.lying_cache,
                                     scenario.faults.misdirected_writes, scenario.faults.latent_errors,
                                     scenario.faults.write_errors});
}

auto Simulation::decisions_estimate() -> std::uint64_t {
    // PCT draws its change points among the decisions a schedule takes: use
    // the most that a few random schedules (fixed seeds) took.
    if (decisions_estimated_) return decisions_estimate_;
    for (std::uint64_t probe = 0; probe < pct_probe_schedules; probe++) {
        sim::RandomStrategy random(sim::Prng(schedule_seed(pct_probe_seed, probe)));
        run_label_ = "pct's probe, random seed " + std::to_string(schedule_seed(pct_probe_seed, probe));
        // The probe counts decisions only: no power cut inside recovery.
        ExploreBounds probe_bounds = bounds_;
        probe_bounds.recovery_crashes = 0;
        const RunOutcome outcome = execute(random, CrashPlan{CrashPlan::Kind::scripted, {}},
                                           sim::Prng(0), sim::Prng(0), false, nullptr, probe_bounds);
        decisions_estimate_ = std::max<std::uint64_t>(decisions_estimate_, outcome.choices.size());
    }
    decisions_estimated_ = true;
    return decisions_estimate_;
}

Simulation::~Simulation() = default;

auto Simulation::crash_states_distinct() const -> std::optional<std::uint64_t> {
    // Empty: no crash state was memoized (none judged, or the memo is not
    // used for this scenario: device faults, a lying cache), so nothing to say.
    if (!verdict_memo_ || verdicts_->dropped() || verdicts_->counted() == 0) return std::nullopt;
    return verdicts_->counted();
}

void Simulation::count_reached(const RunOutcome& outcome) {
    for (const std::uint64_t id : outcome.memo_reached) verdicts_->mark_counted(id);
}

auto Simulation::checker_names() const -> std::vector<std::string> {
    std::vector<std::string> names;
    for (const auto& checker : checkers_) names.emplace_back(checker->name());
    return names;
}

auto Simulation::run_scripted(bool trace, std::uint64_t seed) -> RunOutcome {
    ScriptedStrategy script(scenario_, variant_.name);
    run_label_ = "scripted schedule, seed " + std::to_string(seed);
    // A scripted schedule names its own order: no charged timer choices but
    // a daemon's own wake-up, one per step that names a model task (the xfs
    // log worker, xfs-sync), taken only while that step runs.
    const auto daemon_steps = static_cast<std::uint32_t>(
        std::ranges::count_if(scenario_.schedule, [this](const ScheduleStep& step) {
            return step.kind == ScheduleStep::Kind::run &&
                   std::ranges::none_of(scenario_.tasks,
                                        [&](const Task& task) { return task.name == step.task; });
        }));
    return execute(
        script, CrashPlan{CrashPlan::Kind::scripted, {}}, sim::Prng(seed).fork("crash"),
        sim::Prng(seed).fork("recovery_crash"), trace, scenario_.schedule.empty() ? nullptr : &script,
        ExploreBounds{0, daemon_steps, scenario_.explore.steps, scenario_.explore.progress_steps, 0});
}

auto Simulation::run_strategy(const sim::StrategySpec& spec, std::uint64_t seed, bool trace, bool interruptible)
    -> RunOutcome {
    const sim::Prng root(seed);
    run_label_ = spec.text() + " seed " + std::to_string(seed);
    if (spec.kind == sim::StrategySpec::Kind::random) {
        sim::RandomStrategy strategy(root.fork("schedule"));
        return execute(strategy, CrashPlan{}, root.fork("crash"), root.fork("recovery_crash"), trace, nullptr,
                       bounds_, 0, interruptible);
    }
    sim::PctStrategy strategy(root.fork("schedule"), spec.depth, decisions_estimate());
    return execute(strategy, CrashPlan{}, root.fork("crash"), root.fork("recovery_crash"), trace, nullptr,
                   bounds_, 0, interruptible);
}

auto Simulation::run_perf(std::uint64_t seed) -> PerfOutcome {
    PerfOutcome outcome;
    std::unique_ptr<model::FileSystem> fs = prototype_->clone();
    checkers::Oracle oracle = *prototype_oracle_;
    std::vector<bool> created = prototype_created_;
    {
        constexpr std::uint64_t steps_max = perf_steps_max;
        const Machine& machine = scenario_.machine_of(variant_);
        sim::Scheduler scheduler({.timers_race_tasks = false,
                                  .steps_max = steps_max,
                                  .seed = seed,
                                  .cpu_costs = true,
                                  .cpus = machine.cpus,
                                  .cores_per_socket = machine.cores_per_socket,
                                  .line = {.hit = machine.line_hit_ns,
                                           .miss = machine.line_miss_ns,
                                           .miss_remote = machine.line_miss_remote_ns}},
                                 nullptr);
        fs->device().seed(seed);
        fs->start_daemons();
        scheduler.settle_daemons();
        Workload workload{scenario_, *fs, oracle, created};
        workload.perf = &outcome;
        for (const Task& task : scenario_.tasks) {
            scheduler.spawn(task.name, [&workload, &task] { workload.run_task(task); });
        }
        sim::FirstStrategy first;
        for (;;) {
            if (scheduler.steps() + 1 >= steps_max) {
                outcome.problem = "still running after " + std::to_string(steps_max) + " steps";
                break;
            }
            if (scheduler.steps() % 65536 == 0 && stop_requested()) {
                outcome.interrupted = true;
                break;
            }
            const sim::StepOutcome step = scheduler.step(first);
            if (step == sim::StepOutcome::finished) break;
            if (step == sim::StepOutcome::deadlock) {
                outcome.problem = "deadlock: " + scheduler.describe_blocked();
                break;
            }
        }
        outcome.elapsed_ns = scheduler.now();
    }
    const auto before = prototype_->counters();
    for (const auto& [name, value] : fs->counters()) {
        const auto it = before.find(name);
        outcome.counters[name] = value - (it == before.end() ? 0 : it->second);
    }
    std::sort(outcome.fsync_latencies_ns.begin(), outcome.fsync_latencies_ns.end());
    return outcome;
}

auto Simulation::run_dfs(sim::DfsTree& tree, bool trace, std::uint64_t crash_states_max) -> RunOutcome {
    sim::DfsStrategy strategy(tree);
    run_label_ = "dfs";
    list_memo_reached_ = true;
    RunOutcome outcome = execute(strategy, CrashPlan{CrashPlan::Kind::exhaustive, {}}, sim::Prng(0), sim::Prng(0),
                                 trace, nullptr, bounds_, crash_states_max, true);
    list_memo_reached_ = false;
    return outcome;
}

auto Simulation::count_dfs(sim::DfsTree& tree) -> RunOutcome {
    sim::DfsStrategy strategy(tree);
    run_label_ = "dfs estimate";
    return execute(strategy, CrashPlan{CrashPlan::Kind::count, {}}, sim::Prng(0), sim::Prng(0), false, nullptr,
                   bounds_, 0, true);
}

auto Simulation::replay(const std::vector<std::uint32_t>& choices, const std::optional<CrashRecord>& crash,
                        bool trace) -> RunOutcome {
    sim::ReplayStrategy strategy(choices);
    run_label_ = "replay of a recorded schedule";
    const CrashPlan plan = crash ? CrashPlan{CrashPlan::Kind::at_step, *crash} : CrashPlan{CrashPlan::Kind::none, {}};
    return execute(strategy, plan, sim::Prng(0), sim::Prng(0), trace, nullptr, bounds_);
}

}  // namespace scenarios

namespace scenarios {
namespace {

auto draw_keep(UnflushedPolicy policy, std::size_t count, sim::Prng& prng) -> std::vector<bool> {
    std::vector<bool> keep(count, false);
    switch (policy) {
        case UnflushedPolicy::none:
            break;
        case UnflushedPolicy::all:
            keep.assign(count, true);
            break;
        case UnflushedPolicy::any_subset:
            for (std::size_t i = 0; i < count; i++) keep[i] = prng.boolean();
            break;
        case UnflushedPolicy::prefix: {
            const auto kept = prng.below(count + 1);
            for (std::size_t i = 0; i < kept; i++) keep[i] = true;
            break;
        }
    }
    return keep;
}

/// How many subsets every_keep lists, without listing them (dfs estimates).
auto keep_count(UnflushedPolicy policy, std::size_t count) -> std::uint64_t {
    switch (policy) {
        case UnflushedPolicy::none:
        case UnflushedPolicy::all:
            return 1;
        case UnflushedPolicy::prefix:
            return count + 1;
        case UnflushedPolicy::any_subset:
            return count <= subset_writes_max ? std::uint64_t{1} << count : 2 + 2 * std::uint64_t{count};
    }
    return 1;
}

/// Every subset the policy allows (bounded, see subset_writes_max).
auto every_keep(UnflushedPolicy policy, std::size_t count) -> std::vector<std::vector<bool>> {
    std::vector<std::vector<bool>> all;
    switch (policy) {
        case UnflushedPolicy::none:
            all.emplace_back(count, false);
            break;
        case UnflushedPolicy::all:
            all.emplace_back(count, true);
            break;
        case UnflushedPolicy::prefix:
            for (std::size_t kept = 0; kept <= count; kept++) {
                std::vector<bool> keep(count, false);
                for (std::size_t i = 0; i < kept; i++) keep[i] = true;
                all.push_back(std::move(keep));
            }
            break;
        case UnflushedPolicy::any_subset:
            if (count <= subset_writes_max) {
                for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << count); mask++) {
                    std::vector<bool> keep(count);
                    for (std::size_t i = 0; i < count; i++) keep[i] = ((mask >> i) & 1) != 0;
                    all.push_back(std::move(keep));
                }
            } else {
                all.emplace_back(count, false);
                all.emplace_back(count, true);
                for (std::size_t i = 0; i < count; i++) {
                    std::vector<bool> only(count, false);
                    only[i] = true;
                    all.push_back(only);
                    std::vector<bool> all_but(count, true);
                    all_but[i] = false;
                    all.push_back(all_but);
                }
            }
            break;
    }
    return all;
}

using model::disk::MisdirectedWrite;
using model::disk::TornWrite;

/// The device faults of one crash state, each on a different
/// write the cut loses, at most faults.budget in all.
struct CrashFaults {
    std::vector<TornWrite> torn;
    std::vector<MisdirectedWrite> misdirected;
    /// Blocks whose read returns EIO at the first mount (latent sector
    /// errors; at most one: the mount stops at the first, so a second
    /// would never be read).
    std::vector<std::uint64_t> unreadable;
    [[nodiscard]] auto size() const -> std::size_t { return torn.size() + misdirected.size() + unreadable.size(); }
};

/// Fault sets every_faults lists at most, per kept subset; past it a crash
/// state's faults are not explored, and the run says so.
constexpr std::size_t tear_sets_max = 4096;

/// The ways the fault model may damage lost write `i`: tear it after 1..n
/// sectors (options 0..n-1), then land it on each victim in turn.
auto fault_options(const model::disk::BlockDevice& device, std::size_t i) -> std::uint64_t {
    return device.tear_points(i) + device.misdirect_victims(i).size();
}

/// Option `option` of fault_options for write `i`, added to `faults`.
void add_fault(const model::disk::BlockDevice& device, std::size_t i, std::uint64_t option, CrashFaults& faults) {
    const std::uint64_t tears = device.tear_points(i);
    if (option < tears) {
        faults.torn.push_back({i, option + 1});
    } else {
        faults.misdirected.push_back({i, device.misdirect_victims(i)[option - tears]});
    }
}

/// The writes `keep` loses that the fault model may tear or misdirect.
auto fault_candidates(const model::disk::BlockDevice& device, const std::vector<bool>& keep)
    -> std::vector<std::size_t> {
    std::vector<std::size_t> candidates;
    if (device.faults().budget == 0) return candidates;
    for (std::size_t i = 0; i < keep.size(); i++) {
        if (!keep[i] && fault_options(device, i) > 0) candidates.push_back(i);
    }
    return candidates;
}

/// Random and PCT's faults: how many (up to the budget), which writes, and
/// for each which option, from the run's fault stream (none drawn without a
/// budget, so runs without faults draw as before; without misdirected
/// writes the draws are the torn writes' own).
auto draw_faults(const model::disk::BlockDevice& device, const std::vector<bool>& keep, sim::Prng& prng)
    -> CrashFaults {
    std::vector<std::size_t> candidates = fault_candidates(device, keep);
    CrashFaults faults;
    if (candidates.empty()) return faults;
    const std::uint64_t count = prng.below(std::min<std::uint64_t>(device.faults().budget, candidates.size()) + 1);
    for (std::uint64_t k = 0; k < count; k++) {
        const std::size_t pick = prng.below(candidates.size());
        const std::size_t write = candidates[pick];
        candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
        add_fault(device, write, prng.below(fault_options(device, write)), faults);
    }
    std::sort(faults.torn.begin(), faults.torn.end(), [](const TornWrite& a, const TornWrite& b) { return a.write < b.write; });
    std::sort(faults.misdirected.begin(), faults.misdirected.end(),
              [](const MisdirectedWrite& a, const MisdirectedWrite& b) { return a.write < b.write; });
    return faults;
}

/// DFS's faults: none, then every set of up to budget faults on distinct
/// lost writes, each write at every option, in order (at most
/// tear_sets_max; `capped` says when the rest was not listed).
auto every_faults(const model::disk::BlockDevice& device, const std::vector<bool>& keep, bool& capped)
    -> std::vector<CrashFaults> {
    const std::vector<std::size_t> candidates = fault_candidates(device, keep);
    std::vector<CrashFaults> all{{}};
    CrashFaults current;
    const auto extend = [&](auto& self, std::size_t from) -> void {
        if (current.size() >= device.faults().budget) return;
        for (std::size_t c = from; c < candidates.size(); c++) {
            for (std::uint64_t option = 0; option < fault_options(device, candidates[c]); option++) {
                if (all.size() >= tear_sets_max) {
                    capped = true;
                    return;
                }
                const CrashFaults before = current;
                add_fault(device, candidates[c], option, current);
                all.push_back(current);
                self(self, c + 1);
                current = before;
            }
        }
    };
    extend(extend, 0);
    return all;
}

/// A replayed crash's tears must be ones the fault model could have made.
void check_tears(const model::disk::BlockDevice& device, const std::vector<bool>& keep,
                 const std::vector<TornWrite>& torn) {
    const auto diverged = [](const std::string& expected, const std::string& got) {
        throw sim::ReplayDiverged("$.crash.torn", expected, got);
    };
    if (torn.size() > device.faults().budget) {
        diverged("at most " + std::to_string(device.faults().budget) + " torn write(s) (faults.budget)",
                 std::to_string(torn.size()));
    }
    for (std::size_t i = 0; i < torn.size(); i++) {
        const TornWrite& tear = torn[i];
        const std::string at = "torn write " + std::to_string(i) + " of write " + std::to_string(tear.write);
        if (i > 0 && tear.write <= torn[i - 1].write) diverged("torn writes in increasing write order", at);
        if (tear.write >= keep.size() || keep[tear.write] || device.tear_points(tear.write) == 0) {
            diverged("a torn write of one of the unflushed writes the crash loses that the fault model tears", at);
        }
        if (tear.sectors == 0 || tear.sectors > device.tear_points(tear.write)) {
            diverged("sectors from 1 to " + std::to_string(device.tear_points(tear.write)) + " for " + at,
                     std::to_string(tear.sectors));
        }
    }
}

/// A replayed crash's latent sector errors must be ones the fault model
/// offers: at most one, within the budget, on a block the mount reads
/// through a checked path (`reads`).
void check_unreadable(const model::disk::BlockDevice& device, const CrashFaults& faults,
                      const std::vector<std::uint64_t>& reads) {
    const auto diverged = [](const std::string& expected, const std::string& got) {
        throw sim::ReplayDiverged("$.crash.unreadable", expected, got);
    };
    if (faults.unreadable.empty()) return;
    if (!device.faults().latent_errors || faults.unreadable.size() > 1 || faults.size() > device.faults().budget) {
        diverged("at most one latent sector error within faults.budget, on a scenario with faults.latent_errors",
                 std::to_string(faults.unreadable.size()) + " unreadable block(s)");
    }
    if (std::find(reads.begin(), reads.end(), faults.unreadable.front()) == reads.end()) {
        diverged("a block the mount reads through a checked path (" + std::to_string(reads.size()) + " of them)",
                 "block " + std::to_string(faults.unreadable.front()));
    }
}

/// A replayed crash's misdirected writes must be ones the fault model could
/// have made, on writes no tear took, within the budget with the tears.
void check_misdirected(const model::disk::BlockDevice& device, const std::vector<bool>& keep,
                       const CrashFaults& faults) {
    const auto diverged = [](const std::string& expected, const std::string& got) {
        throw sim::ReplayDiverged("$.crash.misdirected", expected, got);
    };
    if (faults.size() > device.faults().budget) {
        diverged("at most " + std::to_string(device.faults().budget) + " faults, torn and misdirected (faults.budget)",
                 std::to_string(faults.size()));
    }
    for (std::size_t i = 0; i < faults.misdirected.size(); i++) {
        const MisdirectedWrite& misdirect = faults.misdirected[i];
        const std::string at = "misdirected write " + std::to_string(i) + " of write " + std::to_string(misdirect.write);
        if (i > 0 && misdirect.write <= faults.misdirected[i - 1].write) {
            diverged("misdirected writes in increasing write order", at);
        }
        const bool torn = std::any_of(faults.torn.begin(), faults.torn.end(),
                                      [&](const TornWrite& t) { return t.write == misdirect.write; });
        if (misdirect.write >= keep.size() || keep[misdirect.write] || torn) {
            diverged("a misdirected write of one of the unflushed writes the crash loses, not torn", at);
        }
        const std::vector<std::uint64_t> victims = device.misdirect_victims(misdirect.write);
        if (std::find(victims.begin(), victims.end(), misdirect.victim) == victims.end()) {
            diverged("a victim block the fault model offers for " + at + " (" + std::to_string(victims.size()) +
                         " offered)",
                     "block " + std::to_string(misdirect.victim));
        }
    }
}

auto describe_position(const sim::Scheduler& scheduler) -> std::string {
    const sim::TaskId task = scheduler.last_ran();
    if (task == sim::no_task && scheduler.last_daemon_woken() != sim::no_task) {
        return scheduler.task_name(scheduler.last_daemon_woken()) + "'s timer";
    }
    if (task == sim::no_task) return "a device completion";
    const std::string& name = scheduler.task_name(task);
    if (scheduler.task_state(task) == sim::TaskState::finished) return name + " returned";
    if (scheduler.task_state(task) == sim::TaskState::blocked) {
        return name + " blocked on " + scheduler.blocked_on(task);
    }
    return name + " at " + std::string(scheduler.last_point(task)->name);
}

/// What a failing SIM_ASSERT prints about the run in progress: the scenario,
/// the variant, the seed or strategy, the step and the schedule so far (the
/// choice list a repro file records), read only when an assertion fails.
class RunAssertContext final : public sim::AssertContext {
public:
    RunAssertContext(const Scenario& scenario, const Variant& variant, const std::string& label,
                     const sim::Scheduler& scheduler)
        : scenario_(scenario), variant_(variant), label_(label), scheduler_(scheduler) {}

    void describe(std::FILE* out) const override {
        std::fprintf(out, "%s, variant %s, %s, step %llu, schedule (choices):", scenario_.path.c_str(),
                     variant_.name.c_str(), label_.c_str(),
                     static_cast<unsigned long long>(scheduler_.steps()));
        for (const std::uint32_t choice : scheduler_.choices()) std::fprintf(out, " %u", choice);
    }

private:
    const Scenario& scenario_;
    const Variant& variant_;
    const std::string& label_;
    const sim::Scheduler& scheduler_;
};

auto describe_kept(const std::vector<model::disk::PendingWrite>& pending, const std::vector<bool>& keep,
                   const CrashFaults& faults) -> std::string {
    const std::vector<TornWrite>& torn = faults.torn;
    std::size_t kept = 0;
    std::string list;
    for (std::size_t i = 0; i < pending.size(); i++) {
        if (keep[i]) kept++;
        const bool tore = std::any_of(torn.begin(), torn.end(), [i](const TornWrite& t) { return t.write == i; });
        const bool landed = std::any_of(faults.misdirected.begin(), faults.misdirected.end(),
                                        [i](const MisdirectedWrite& m) { return m.write == i; });
        list += (list.empty() ? "" : ", ") + std::string(pending[i].what) + "@" +
                std::to_string(pending[i].block) + (pending[i].completed ? "" : " in flight") +
                (keep[i] ? " kept" : tore ? " torn" : landed ? " misdirected" : " lost");
    }
    std::string text = std::to_string(kept) + " of " + std::to_string(pending.size()) +
                       " unflushed write(s) kept";
    if (!list.empty()) text += " (" + list + ")";
    return text;
}

/// How the power cuts inside recovery are chosen (CrashPlan's kind).
enum class CutChoice : std::uint8_t {
    draw,      // one cut per level, drawn (random, PCT)
    every,     // every write of the recovery, every subset the policy allows (DFS)
    recorded,  // the repro's cuts (replay)
};

/// "0 of 1 unflushed recovery write(s) kept (meta@12 lost)".
auto describe_recovery_kept(const std::vector<model::disk::PendingWrite>& pending, const std::vector<bool>& keep)
    -> std::string {
    std::size_t kept = 0;
    std::string list;
    for (std::size_t i = 0; i < pending.size(); i++) {
        if (keep[i]) kept++;
        list += (list.empty() ? "" : ", ") + std::string(pending[i].what) + "@" + std::to_string(pending[i].block) +
                (keep[i] ? " kept" : " lost");
    }
    std::string text =
        std::to_string(kept) + " of " + std::to_string(pending.size()) + " unflushed recovery write(s) kept";
    if (!list.empty()) text += " (" + list + ")";
    return text;
}

/// A crash image as words, a key of the mounts of one crash state
/// (RunState::mounts_judged): every segment, DurableBlock::sequence kept
/// though recovery reads only content, object ids as they are (one run's).
auto image_words(const model::disk::Image& image) -> model::KeyWords {
    model::KeyWords words;
    words.reserve(9 * image.blocks().segment_count());
    image.blocks().for_each([&](std::uint64_t start, std::uint64_t end, const model::disk::DurableBlock& block) {
        words.insert(words.end(), {start, end, block.sequence});
        model::encode_content(words, block.content);
    });
    return words;
}

/// One run's world and the crash states evaluated on it (Simulation::execute).
struct RunState {
    RunOutcome& outcome;
    sim::Trace& trace;
    sim::Scheduler& scheduler;
    model::FileSystem& fs;
    checkers::Oracle& oracle;
    const std::vector<std::unique_ptr<checkers::Checker>>& checkers;
    const checkers::CheckContext& context;
    UnflushedPolicy policy;
    std::uint32_t recovery_crashes = 0;  // ExploreBounds::recovery_crashes
    sim::Prng recovery_prng;             // CutChoice::draw's stream
    sim::Prng fault_prng;                // draw_faults's stream
    std::uint64_t seen_disk = 0;
    std::uint64_t seen_oracle = 0;
    /// The story of the crash state being judged, written to the trace when
    /// it is narrated or violated.
    std::vector<sim::TraceLine> story{};
    /// The cuts inside recovery that led to the mount being judged.
    std::vector<RecoveryCut> cuts{};
    /// The crash state's device faults, and what became of each (told after
    /// the first mount's story).
    CrashFaults faults{};
    std::vector<std::string> fault_lines{};
    bool tears_capped_told = false;
    /// The freeze level the run's events last set: the level at a cut.
    model::FreezeLevel frozen = model::FreezeLevel::unfrozen;
    model::FreezeLevel seen_frozen = model::FreezeLevel::unfrozen;
    /// Crash states judged by this Simulation's runs without a violation
    /// (memo_key); used where nothing else reaches the outcome: no story
    /// asked for, no device fault, no lying cache, every cut inside recovery
    /// enumerated.
    bool memo = false;
    VerdictMemo* verdicts = nullptr;
    /// Lists the memo entries the run reaches (RunOutcome::memo_reached):
    /// only a dfs run's, which a search counts.
    bool list_reached = false;
    /// The oracle's canonical id at oracle_revision (Oracle::encode is
    /// redone only when the oracle changed).
    std::uint64_t oracle_revision = ~std::uint64_t{0};
    std::uint64_t oracle_id = model::ContentTable::none;
    model::KeyWords memo_words{};  // memo_key's key, reused: a key allocates nothing once warm
    KeyObjects key_objects{};      // memo_key's scratch
    std::uint64_t memo_hits = 0;
    std::uint64_t mounts_reused = 0;
    /// The mounts of the crash state being evaluated, by image: what their
    /// judge added to RunOutcome::judged (none violated). A power cut inside
    /// recovery that keeps none of its writes leaves the image it recovered,
    /// and recover() gives what recover_with_writes() did (model/filesystem.hpp);
    /// the oracle, freeze level and tears are those of the same crash state,
    /// and the ids of recovery's own objects stay until forget_recovery().
    std::map<model::KeyWords, std::vector<std::uint64_t>> mounts_judged{};

    /// A story line; dropped unformatted where no trace keeps it (a disabled
    /// sim::Trace drops every line it is given).
    void tell(const char* who, std::string text) {
        if (!trace.enabled()) return;
        story.push_back({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), who, std::move(text)});
    }

    /// Every checker on one mount's result; true on a violation.
    auto judge(model::RecoveredState& state, std::vector<checkers::Violation>& found) -> bool {
        // The crash's faults and the run's write errors so far.
        state.faults_injected = static_cast<std::uint32_t>(faults.size() + fs.device().counters().write_errors);
        checkers::CheckContext at_cut = context;
        at_cut.frozen = frozen;
        for (std::size_t i = 0; i < checkers.size(); i++) {
            checkers[i]->check(oracle, state, at_cut, found);
            if (checkers[i]->at_stake(oracle, state, at_cut)) outcome.judged[i]++;
        }
        if (cuts.empty()) {
            const model::disk::BlockDevice& device = fs.device();
            for (const TornWrite& tear : faults.torn) {
                const model::disk::PendingWrite& write = device.pending()[tear.write];
                fault_lines.push_back(fault_outcome(device.describe_tear(tear), write.block, write.count, state, found));
            }
            for (const MisdirectedWrite& misdirect : faults.misdirected) {
                fault_lines.push_back(fault_outcome(device.describe_misdirect(misdirect), misdirect.victim, 1, state, found));
            }
            for (const std::uint64_t block : faults.unreadable) {
                fault_lines.push_back(fault_outcome(describe_unreadable(block), block, 1, state, found));
            }
            if (device.counters().write_errors > 0) fault_lines.push_back(write_error_outcome(found));
        }
        return !found.empty();
    }

    /// What became of the run's write errors so far
    /// (faults.write_errors), counted together: detected once an error was
    /// returned to the application (an fsync's EIO), else survived when
    /// every checker holds (nothing promised what the failed writes held).
    auto write_error_outcome(const std::vector<checkers::Violation>& found) -> std::string {
        const std::uint64_t errors = fs.device().counters().write_errors;
        outcome.faults.injected += errors;
        const std::string what = std::to_string(errors) + " data write(s) completed with EIO before the cut: ";
        if (!found.empty()) return what + "not survived: " + found.front().checker + " is violated";
        if (oracle.errors_reported() > 0) {
            outcome.faults.detected += errors;
            return what + "detected: the application was told (" + std::to_string(oracle.errors_reported()) +
                   " operation(s) returned EIO), and no later fsync promised the lost writes";
        }
        outcome.faults.survived += errors;
        return what + "survived: no error reported yet, and no checker is violated (nothing promised them)";
    }

    static auto describe_unreadable(std::uint64_t block) -> std::string {
        return "latent sector error: the media of block " + std::to_string(block) + " is unreadable, its reads return EIO";
    }

    /// The crash image of `keep` and `injected`, its unreadable blocks set.
    auto faulted_image(const std::vector<bool>& keep, const CrashFaults& injected) const -> model::disk::Image {
        model::disk::Image image = fs.device().crash_image(keep, injected.torn, injected.misdirected);
        image.set_unreadable(injected.unreadable);
        return image;
    }

    /// The blocks the first mount of that image reads through a checked
    /// path (Image::read_checked), in read order: where a latent sector
    /// error is offered (none without faults.latent_errors). A mount
    /// without them, its result discarded.
    auto checked_reads(const std::vector<bool>& keep, const CrashFaults& injected) const -> std::vector<std::uint64_t> {
        if (!fs.device().faults().latent_errors || injected.size() >= fs.device().faults().budget) return {};
        const model::disk::Image image = faulted_image(keep, injected);
        (void)fs.recover(image);
        return image.checked_reads();
    }

    /// Random and PCT's faults for one crash state: the writes' (draw_faults),
    /// then no latent sector error or one on a block the mount reads.
    auto draw_crash_faults(const std::vector<bool>& keep) -> CrashFaults {
        CrashFaults drawn = draw_faults(fs.device(), keep, fault_prng);
        const std::vector<std::uint64_t> reads = checked_reads(keep, drawn);
        if (reads.empty()) return drawn;
        const std::uint64_t pick = fault_prng.below(reads.size() + 1);
        if (pick > 0) drawn.unreadable.push_back(reads[pick - 1]);
        return drawn;
    }

    /// What became of one fault on the first mount: `described`
    /// by the device, its damage in blocks [first, first + count) (a torn
    /// write's own blocks, a misdirected write's victim).
    auto fault_outcome(const std::string& described, std::uint64_t first, std::uint64_t count,
                       const model::RecoveredState& state, const std::vector<checkers::Violation>& found) -> std::string {
        const auto in_write = [&](std::uint64_t block) { return block >= first && block < first + count; };
        const bool caught = std::any_of(state.checksum_failed.begin(), state.checksum_failed.end(), in_write);
        outcome.faults.injected++;
        const std::string what = described + ": ";
        if (!state.mounted && caught) {
            outcome.faults.detected++;
            return what + "detected: the mount refuses it with an error the user sees (" + state.mount_error + ")";
        }
        if (!found.empty()) return what + "not survived: " + found.front().checker + " is violated";
        if (!state.mounted) return what + "not judged: the mount failed for another reason";
        if (const std::string read = torn_read(state); !read.empty()) {
            outcome.faults.detected++;
            return what + "detected: " + read;
        }
        outcome.faults.survived++;
        return what + (caught ? "survived: its checksum failed and recovery went on without it"
                              : "survived: recovery holds every checker");
    }

    /// A torn block a file maps on a model that verifies data checksums.
    auto torn_read(const model::RecoveredState& state) const -> std::string {
        if (!state.data_checksums) return "";
        for (std::size_t file = 0; file < state.files.size(); file++) {
            std::string text;
            state.files[file].blocks.for_each([&](std::uint64_t start, std::uint64_t, const model::disk::Content& content) {
                if (!text.empty() || !content.faulty()) return;
                text = "a read of " + context.file_names[file] + " at " + std::to_string(start * context.block_size) +
                       " fails its data checksum (btrfs_check_data_csum): EIO";
            });
            if (!text.empty()) return text;
        }
        return "";
    }

    /// A lying cache: the lost writes it had called durable, told,
    /// and each violation attributed to the device.
    void blame_lies(const std::vector<bool>& keep, std::vector<checkers::Violation>& found) {
        const model::disk::BlockDevice& device = fs.device();
        if (!device.faults().lying_cache) return;
        const std::vector<std::string> lies = device.lies_exposed(keep, faults.torn);
        for (const auto& lie : lies) tell("device", "the write cache lied: " + lie);
        if (lies.empty()) return;
        const std::string more = lies.size() > 1 ? " (and " + std::to_string(lies.size() - 1) + " more)" : "";
        for (auto& violation : found) {
            violation.message += "; the device lied, not the file system: " + lies.front() + more;
        }
    }

    /// Recovery and every checker on one crash state, then (within the
    /// recovery_crashes bound) power cuts inside that recovery and a mount
    /// again; true on a violation.
    auto evaluate(const std::vector<bool>& keep, const CrashFaults& injected, bool narrate, CutChoice choice,
                  const std::vector<RecoveryCut>& recorded = {}) -> bool {
        model::disk::BlockDevice& device = fs.device();
        SIM_ASSERT(keep.size() == device.pending().size());
        story.clear();
        cuts.clear();
        faults = injected;
        fault_lines.clear();
        outcome.crash_states++;
        std::vector<checkers::Violation> found;
        const std::uint32_t levels = choice == CutChoice::recorded ? static_cast<std::uint32_t>(recorded.size())
                                                                   : recovery_crashes;
        const model::disk::Image image = faulted_image(keep, faults);
        // No memo where the device has a fault model: a fault's outcome is
        // counted per state (fault_outcome), and latent errors change the mount.
        // Nor in a traced run (a story, --verify-determinism's reruns): it
        // judges every crash state itself, so a rerun repeats the work.
        const bool memoized = memo && !narrate && !trace.enabled() && choice == CutChoice::every &&
                              device.faults().budget == 0 && !device.faults().lying_cache &&
                              device.counters().write_errors == 0;
        const bool keyed = memoized && memo_key(image);
        if (keyed && reuse_verdict(memo_words)) return false;
        const Verdict before{outcome.judged, outcome.recovery_crash_states};
        mount_and_judge(image, levels, "mount", choice, recorded, found);
        if (keyed && found.empty()) keep_verdict(memo_words, before);
        fs.forget_recovery();
        mounts_judged.clear();  // recovery's object ids are free again
        for (auto& line : fault_lines) tell("fault_outcome", std::move(line));
        blame_lies(keep, found);
        if (narrate || !found.empty()) {
            // Told only now: most crash states are never narrated.
            trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "power",
                       "power cut after step " + std::to_string(scheduler.steps()) + " (" +
                           describe_position(scheduler) + "): " + describe_kept(device.pending(), keep, faults)});
            for (const TornWrite& tear : faults.torn) {
                trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                           device.describe_tear(tear)});
            }
            for (const MisdirectedWrite& misdirect : faults.misdirected) {
                trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                           device.describe_misdirect(misdirect)});
            }
            for (const std::uint64_t block : faults.unreadable) {
                trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                           describe_unreadable(block)});
            }
            for (auto& line : story) trace.add(std::move(line));
        }
        story.clear();
        if (found.empty()) return false;
        outcome.violations = std::move(found);
        outcome.crash = CrashRecord{scheduler.steps(), describe_position(scheduler), keep, cuts, faults.torn,
                                    faults.misdirected, faults.unreadable};
        return true;
    }

    /// Sets memo_words to the key of a crash state in the verdict memo across
    /// schedules; false where it cannot be formed (a model without a metadata
    /// index, a full content table). What a verdict depends on:
    /// - recovery (FileSystem::recover, recover_with_writes) reads the image
    ///   and the metadata objects its blocks name, besides geometry fixed at
    ///   mkfs (FileSystem::metadata_index says which models qualify). The
    ///   key holds every segment's content but DurableBlock::sequence (no
    ///   model reads it; MountDevice only orders recovery's writes after
    ///   every block of the image), segment boundaries kept as they are.
    ///   An object id is a per-run name: the key holds its position among
    ///   the ids the image names, first seen first, and after the segments
    ///   each named object's canonical id (its content, MetadataStore::
    ///   canonical) and the positions of the ids it holds (btrfs's
    ///   Superblock names its trees). Recovery compares ids only for
    ///   equality (read_meta's "parent transid verify failed") and follows
    ///   them, so equal keys mean images alike up to renaming the objects.
    ///   Recovery's own objects (mark_recovery) are never in a key: it is
    ///   made before the mount, from the run's image.
    /// - the checkers read the recovered state, the oracle by content
    ///   (Oracle::encode: interned, its id cached per revision) and the
    ///   check context, of which only the freeze level changes between runs.
    /// - the cuts inside recovery (CutChoice::every) come from the image,
    ///   the policy and the recovery_crashes bound, which set_bounds may
    ///   change between runs: both in the key. No prng is drawn.
    /// - judge()'s faults_injected: no fault, no write error (evaluate's
    ///   condition for the memo).
    auto memo_key(const model::disk::Image& image) -> bool {
        const model::MetadataIndex* index = fs.metadata_index();
        if (index == nullptr || verdicts == nullptr) return false;
        if (oracle.revision() != oracle_revision) {
            model::KeyWords words;
            oracle.encode(words);
            oracle_id = verdicts->oracles.intern(std::move(words));
            oracle_revision = oracle.revision();
        }
        if (oracle_id == model::ContentTable::none) return false;
        memo_words.assign({oracle_id, static_cast<std::uint64_t>(frozen), recovery_crashes,
                           static_cast<std::uint64_t>(policy)});
        return image_key(image, *index, memo_words, key_objects);
    }

    void list(std::uint64_t id) {
        if (list_reached && (outcome.memo_reached.empty() || outcome.memo_reached.back() != id)) {
            outcome.memo_reached.push_back(id);
        }
    }

    /// A crash state judged before by this Simulation: its counts again, no mount.
    auto reuse_verdict(const model::KeyWords& key) -> bool {
        const Verdict* verdict = verdicts->find(key);
        if (verdict == nullptr) return false;
        for (std::size_t i = 0; i < outcome.judged.size(); i++) outcome.judged[i] += verdict->judged[i];
        outcome.recovery_crash_states += verdict->recovery_crash_states;
        memo_hits++;
        list(verdict->id);
        story.clear();
        return true;
    }

    /// Keeps what judging the crash state `key` added since `before`.
    void keep_verdict(const model::KeyWords& key, const Verdict& before) {
        Verdict added{outcome.judged, outcome.recovery_crash_states - before.recovery_crash_states};
        for (std::size_t i = 0; i < added.judged.size(); i++) added.judged[i] -= before.judged[i];
        list(verdicts->keep(key, std::move(added)));
    }

    /// A mount of this crash state judged before (mounts_judged): its counts again.
    auto reuse_mount(const model::KeyWords& key) -> bool {
        const auto it = mounts_judged.find(key);
        if (it == mounts_judged.end()) return false;
        for (std::size_t i = 0; i < outcome.judged.size(); i++) outcome.judged[i] += it->second[i];
        mounts_reused++;
        return true;
    }

    void keep_mount(model::KeyWords key, const std::vector<std::uint64_t>& before) {
        std::vector<std::uint64_t> added = outcome.judged;
        for (std::size_t i = 0; i < added.size(); i++) added[i] -= before[i];
        mounts_judged.emplace(std::move(key), std::move(added));
    }

    /// Every tear set of one kept subset (DFS), saying once when capped.
    auto evaluate_every_tear(const std::vector<bool>& keep) -> bool {
        bool capped = false;
        for (const auto& set : every_faults(fs.device(), keep, capped)) {
            if (evaluate(keep, set, false, CutChoice::every)) return true;
            for (const std::uint64_t block : checked_reads(keep, set)) {
                CrashFaults unreadable = set;
                unreadable.unreadable.push_back(block);
                if (evaluate(keep, unreadable, false, CutChoice::every)) return true;
            }
        }
        if (capped && !tears_capped_told) {
            tears_capped_told = true;
            trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                       "not explored: fault sets (torn and misdirected writes) past the first " + std::to_string(tear_sets_max) +
                           " of a crash state (faults.budget; a bound, no claim about the rest)"});
        }
        return false;
    }

    /// Mounts `image`, judges the result and, with `levels` left, cuts the
    /// power inside that mount's recovery and recurses; true on a
    /// violation, with `cuts` the path to it.
    auto mount_and_judge(const model::disk::Image& image, std::uint32_t levels, const char* who, CutChoice choice,
                         const std::vector<RecoveryCut>& recorded, std::vector<checkers::Violation>& found)
        -> bool {
        // No story is kept without a trace, so a mount judged before tells nothing new.
        const bool reusable = memo && choice == CutChoice::every && !trace.enabled();
        model::KeyWords key = reusable ? image_words(image) : model::KeyWords{};
        if (reusable && levels == 0 && reuse_mount(key)) return false;
        const std::vector<std::uint64_t> before = reusable ? outcome.judged : std::vector<std::uint64_t>{};
        model::Recovery recovery =
            levels == 0 ? model::Recovery{fs.recover(image), {}} : fs.recover_with_writes(image);
        const bool violated = judge(recovery.state, found);
        for (auto& note : recovery.state.notes) tell(who, std::move(note));
        if (violated) return true;
        if (reusable) keep_mount(std::move(key), before);
        if (levels == 0) return false;
        // Cut after each write (a cut right after a FLUSH keeps what the cut
        // after the write before it keeps when it keeps everything).
        std::vector<std::size_t> writes;
        for (std::size_t i = 0; i < recovery.requests.size(); i++) {
            if (recovery.requests[i].kind == model::disk::MountRequest::Kind::write) writes.push_back(i + 1);
        }
        if (choice == CutChoice::recorded) {
            const RecoveryCut& cut = recorded[cuts.size()];
            if (cut.requests == 0 || cut.requests > recovery.requests.size()) {
                throw sim::ReplayDiverged("$.crash.recovery",
                                          "a cut after one of the " + std::to_string(recovery.requests.size()) +
                                              " request(s) the recovery issues",
                                          "a cut after request " + std::to_string(cut.requests));
            }
            return cut_and_mount(issued_device(image, recovery, cut.requests), recovery, cut.requests, &cut.keep,
                                 levels, choice, recorded, found);
        }
        if (writes.empty()) return false;  // recovery wrote nothing: nothing to cut
        if (choice == CutChoice::draw) {
            const std::size_t issued = writes[recovery_prng.below(writes.size())];
            return cut_and_mount(issued_device(image, recovery, issued), recovery, issued, nullptr, levels, choice,
                                 recorded, found);
        }
        for (const std::size_t issued : writes) {
            const model::disk::MountDevice device = issued_device(image, recovery, issued);
            for (const auto& keep : every_keep(policy, device.pending().size())) {
                const std::size_t told = story.size();
                if (cut_and_mount(device, recovery, issued, &keep, levels, choice, recorded, found)) return true;
                story.resize(told);
            }
        }
        return false;
    }

    /// The device under a mount of `image` once it issued the first `issued` requests of `recovery`.
    static auto issued_device(const model::disk::Image& image, const model::Recovery& recovery, std::size_t issued)
        -> model::disk::MountDevice {
        model::disk::MountDevice device(image);
        for (std::size_t i = 0; i < issued; i++) device.issue(recovery.requests[i]);
        return device;
    }

    /// The power cut on `device`, after `issued` requests of `recovery`
    /// (keeping `keep`, or a subset drawn by the policy), then the next mount.
    auto cut_and_mount(const model::disk::MountDevice& device, const model::Recovery& recovery, std::size_t issued,
                       const std::vector<bool>* keep, std::uint32_t levels, CutChoice choice,
                       const std::vector<RecoveryCut>& recorded, std::vector<checkers::Violation>& found) -> bool {
        const std::vector<bool> kept =
            keep != nullptr ? *keep : draw_keep(policy, device.pending().size(), recovery_prng);
        if (kept.size() != device.pending().size()) {
            throw sim::ReplayDiverged("$.crash.recovery",
                                      "one flag per recovery write unflushed after request " + std::to_string(issued) +
                                          " (" + std::to_string(device.pending().size()) + ")",
                                      std::to_string(kept.size()) + " flags");
        }
        const std::string& after = recovery.requests[issued - 1].description;
        if (trace.enabled()) {
            tell("power", "power cut during log replay after request " + std::to_string(issued) + " of " +
                              std::to_string(recovery.requests.size()) + ", " + after + ": " +
                              describe_recovery_kept(device.pending(), kept));
        }
        outcome.recovery_crash_states++;
        cuts.push_back({issued, after, kept});
        static const char* const mounts[] = {"mount", "mount 2", "mount 3", "mount 4", "mount 5",
                                             "mount 6", "mount 7", "mount 8", "mount 9", "mount 10"};
        const std::size_t depth = std::min(cuts.size(), std::size(mounts) - 1);
        if (mount_and_judge(device.crash_image(kept), levels - 1, mounts[depth], choice, recorded, found)) {
            return true;
        }
        cuts.pop_back();
        return false;
    }

    /// The crash states `exhaustive` evaluates after one step (dfs estimates).
    auto count_states(UnflushedPolicy policy, std::size_t pending) const -> std::uint64_t {
        if (fs.device().faults().budget == 0) return keep_count(policy, pending);
        std::uint64_t states = 0;
        bool capped = false;
        for (const auto& keep : every_keep(policy, pending)) states += every_faults(fs.device(), keep, capped).size();
        return states;
    }

    /// Has the disk, what the oracle was promised or the freeze level (which
    /// frozen_image judges by) changed since last seen?
    auto changed() const -> bool {
        return fs.device().epoch() != seen_disk || oracle.epoch() != seen_oracle || frozen != seen_frozen;
    }
    void see() {
        seen_disk = fs.device().epoch();
        seen_oracle = oracle.epoch();
        seen_frozen = frozen;
    }

    /// The crash states the plan takes after one step; true: the run stops.
    auto crash_after_step(const CrashPlan& plan, const sim::Strategy& strategy, UnflushedPolicy policy,
                          sim::Prng& crash_prng) -> bool {
        // The disk and the promises only move forward.
        SIM_ASSERT(fs.device().epoch() >= seen_disk && oracle.epoch() >= seen_oracle);
        const std::size_t pending = fs.device().pending().size();
        bool stop = false;
        switch (plan.kind) {
            case CrashPlan::Kind::exhaustive:
                if (strategy.fresh() && changed()) {
                    for (const auto& keep : every_keep(policy, pending)) {
                        if ((stop = evaluate_every_tear(keep))) break;
                    }
                }
                see();
                break;
            case CrashPlan::Kind::count:
                // Where `exhaustive` evaluates, as many as it evaluates.
                if (strategy.fresh() && changed()) outcome.crash_states += count_states(policy, pending);
                see();
                break;
            case CrashPlan::Kind::every_state:
                if (changed()) {
                    see();
                    const std::vector<bool> keep = draw_keep(policy, pending, crash_prng);
                    stop = evaluate(keep, draw_crash_faults(keep), false, CutChoice::draw);
                }
                break;
            case CrashPlan::Kind::at_step:
                if (scheduler.steps() == plan.recorded.step) {
                    if (plan.recorded.keep.size() != pending) {
                        // A keep list that does not fit its step (either may have been edited).
                        throw sim::ReplayDiverged("$.crash.keep",
                                                  "one flag per write unflushed at crash step " +
                                                      std::to_string(plan.recorded.step) + " (" +
                                                      std::to_string(pending) + ")",
                                                  std::to_string(plan.recorded.keep.size()) + " flags");
                    }
                    CrashFaults recorded{plan.recorded.torn, plan.recorded.misdirected, {}};
                    check_tears(fs.device(), plan.recorded.keep, plan.recorded.torn);
                    check_misdirected(fs.device(), plan.recorded.keep, recorded);
                    check_unreadable(fs.device(), {recorded.torn, recorded.misdirected, plan.recorded.unreadable},
                                     checked_reads(plan.recorded.keep, recorded));
                    recorded.unreadable = plan.recorded.unreadable;
                    evaluate(plan.recorded.keep, recorded, true, CutChoice::recorded, plan.recorded.recovery);
                    stop = true;
                }
                break;
            case CrashPlan::Kind::scripted:
            case CrashPlan::Kind::none:
                break;
        }
        return stop;
    }
};

/// What tells progress from its absence: operations completing.
struct ProgressWatch {
    const std::uint64_t& completed;  // Workload::completed
    std::uint64_t seen = 0;
    std::uint64_t at_step = 0;  // the step at which an operation last completed

    void after_step(const sim::Scheduler& scheduler) {
        if (completed == seen) return;
        seen = completed;
        at_step = scheduler.steps();
    }
};

/// Each unfinished task and where it is, for a liveness violation.
auto describe_running(const sim::Scheduler& scheduler) -> std::string {
    std::string out;
    for (sim::TaskId task = 0; task < scheduler.task_count(); task++) {
        const sim::TaskState state = scheduler.task_state(task);
        if (state == sim::TaskState::finished) continue;
        if (!out.empty()) out += "; ";
        out += scheduler.task_name(task);
        if (state == sim::TaskState::blocked) {
            out += std::string(" blocked on ") + scheduler.blocked_on(task);
        } else if (scheduler.last_point(task) != nullptr) {
            out += " at " + std::string(scheduler.last_point(task)->name);
        }
    }
    return out;
}

/// One engine step; false when the run ends there: every task finished, a
/// deadlock, no progress, the step bound, or the search cut it.
auto advance(sim::Scheduler& scheduler, sim::Strategy& strategy, RunOutcome& outcome, const ExploreBounds& bounds,
             ProgressWatch& progress, sim::Trace& trace) -> bool {
    if (scheduler.steps() >= bounds.steps) {
        // A bound, not a finding: the run is not explored past this step.
        outcome.cut_at_step = bounds.steps;
        trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "engine",
                   "not explored past step " + std::to_string(bounds.steps) +
                       ": the run reached the step bound (explore.steps); no claim about the rest of it"});
        return false;
    }
    if (scheduler.steps() - progress.at_step >= bounds.progress_steps) {
        const std::string running = describe_running(scheduler);
        const std::string window = std::to_string(bounds.progress_steps) + " steps";
        outcome.violations.push_back(
            {"liveness", "", 0, "an operation to complete within " + window + " (explore.progress_steps)",
             "none completed in steps " + std::to_string(progress.at_step + 1) + " to " +
                 std::to_string(scheduler.steps()),
             "no progress: no operation completed in the last " + window + " (explore.progress_steps bound), " +
                 "steps " + std::to_string(progress.at_step + 1) + " to " + std::to_string(scheduler.steps()) +
                 "; still running: " + running});
        return false;
    }
    const std::uint64_t steps_before = scheduler.steps();
    const sim::StepOutcome step = scheduler.step(strategy);
    if (step == sim::StepOutcome::finished) return false;
    if (step == sim::StepOutcome::deadlock) {
        SIM_ASSERT(scheduler.steps() == steps_before);
        const std::string blocked = scheduler.describe_blocked();
        outcome.violations.push_back({"deadlock", "", 0, "a task able to run", blocked, "deadlock: " + blocked});
        return false;
    }
    // One step per call; a choice only where there was more than one candidate.
    SIM_ASSERT(scheduler.steps() == steps_before + 1);
    SIM_ASSERT(scheduler.choices().size() <= scheduler.steps());
    progress.after_step(scheduler);
    strategy.after_step(scheduler);
    if (strategy.abandoned()) {
        outcome.abandoned = true;
        return false;
    }
    return true;
}

/// Every event the last step emitted (model/events.hpp), stamped with the
/// step and the task's name, to each watch in checker order; true on a
/// violation, which ends the run as a crash violation would (no crash: a
/// replay of the schedule finds it again).
auto watch_events(model::EventChannel& channel, const std::vector<std::unique_ptr<checkers::EventWatch>>& watches,
                  RunState& run) -> bool {
    const sim::Scheduler& scheduler = run.scheduler;
    std::vector<model::Event> events = channel.take();
    for (model::Event& event : events) {
        if (event.kind == model::EventKind::freeze_level) run.frozen = event.level;
        event.step = scheduler.steps();
        event.task_name = event.task == sim::no_task ? "device" : scheduler.task_name(event.task);
        for (const auto& watch : watches) {
            if (watch == nullptr) continue;
            std::vector<checkers::Violation> found;
            watch->on_event(event, found);
            if (found.empty()) continue;
            run.trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), found.front().checker,
                           "violated while the run goes on, at step " + std::to_string(scheduler.steps()) + ": " +
                               found.front().message});
            run.outcome.violations = std::move(found);
            return true;
        }
    }
    return false;
}

/// The crash at the end of a run: a replay that never reached its recorded
/// step diverged; a scripted run crashes at its crash step or at the end.
void finish_crash(const CrashPlan& plan, ScriptedStrategy* script, bool stopped, RunState& run,
                              sim::Prng& crash_prng) {
    RunOutcome& outcome = run.outcome;
    if (plan.kind == CrashPlan::Kind::at_step && !stopped && outcome.violations.empty()) {
        throw sim::ReplayDiverged("$.crash.step",
                                  "a step from 1 to " + std::to_string(run.scheduler.steps()) +
                                      " (the replayed run ends at step " + std::to_string(run.scheduler.steps()) + ")",
                                  std::to_string(plan.recorded.step));
    }
    // A run cut by the step bound claims nothing past it: no crash at its end.
    if (plan.kind != CrashPlan::Kind::scripted || !outcome.violations.empty() || outcome.cut_at_step != 0) return;
    UnflushedPolicy policy = UnflushedPolicy::none;
    if (script != nullptr && script->at_crash()) {
        policy = script->crash_step().unflushed;
    } else if (script != nullptr) {
        script->check_done();
    }
    const std::vector<bool> keep = draw_keep(policy, run.fs.device().pending().size(), crash_prng);
    run.evaluate(keep, run.draw_crash_faults(keep), true, CutChoice::draw);
}

/// A knob value that names no real kernel opens the story.
void tell_hypothetical(const Scenario& scenario, const Variant& variant, sim::Trace& trace) {
    for (auto& note : model::hypothetical_notes(*model::find_model(scenario.model), variant.config)) {
        trace.add({sim::TraceLine::Kind::note, 0, 0, "config", std::move(note)});
    }
}

/// After a run's last step: what its scheduler, memo and watches counted.
void record_run(const sim::Scheduler& scheduler, RunState& run,
                const std::vector<std::unique_ptr<checkers::EventWatch>>& watches) {
    RunOutcome& outcome = run.outcome;
    outcome.crash_states_reused = run.memo_hits;
    outcome.mounts_reused = run.mounts_reused;
    outcome.steps = scheduler.steps();
    outcome.choices = scheduler.choices();
    outcome.io_reorders = scheduler.io_reorders_used();
    outcome.daemon_wakeups = scheduler.daemon_wakeups_used();
    outcome.hits = scheduler.hits();
    for (std::size_t i = 0; i < watches.size(); i++) {
        if (watches[i] != nullptr) outcome.judged[i] += watches[i]->at_stake();
    }
}

}  // namespace

auto Simulation::execute(sim::Strategy& strategy, const CrashPlan& plan, sim::Prng crash_prng,
                         sim::Prng recovery_prng, bool trace_on, ScriptedStrategy* script, const ExploreBounds& bounds,
                         std::uint64_t crash_states_max, bool interruptible) -> RunOutcome {
    const bool searching = plan.kind == CrashPlan::Kind::exhaustive || plan.kind == CrashPlan::Kind::count;
    RunOutcome outcome;
    outcome.judged.assign(checkers_.size(), 0);
    sim::Trace trace(trace_on);
    std::unique_ptr<model::FileSystem> fs = prototype_->clone();
    checkers::Oracle oracle = *prototype_oracle_;
    std::vector<bool> created = prototype_created_;
    const checkers::CheckContext context{scenario_.files, scenario_.device.block_size};
    {
        sim::Scheduler scheduler({.timers_race_tasks = true,
                                  .steps_max = bounds.steps + 1,
                                  .io_reorders = bounds.io_reorders,
                                  .daemon_wakeups = bounds.daemon_wakeups,
                                  .io_errors = scenario_.faults.write_errors ? scenario_.faults.budget : 0},
                                 &trace);
        const RunAssertContext assert_context(scenario_, variant_, run_label_, scheduler);
        const sim::AssertContextScope assert_scope(assert_context);
        if (trace_on) tell_hypothetical(scenario_, variant_, trace);
        // Runtime invariants: the model's events, judged after every step.
        model::EventChannel channel;
        const model::EventChannelScope channel_scope(channel);
        std::vector<std::unique_ptr<checkers::EventWatch>> watches;
        for (const auto& checker : checkers_) watches.push_back(checkers::make_watch(checker->name()));
        fs->start_daemons();
        if (bounds.daemons_settled) scheduler.settle_daemons();
        Workload workload{scenario_, *fs, oracle, created};
        for (const Task& task : scenario_.tasks) {
            scheduler.spawn(task.name, [&workload, &task] { workload.run_task(task); });
        }
        RunState run{outcome, trace, scheduler, *fs, oracle, checkers_, context, scenario_.crash.unflushed,
                     bounds.recovery_crashes, recovery_prng, crash_prng.fork("faults")};
        run.memo = verdict_memo_;
        run.verdicts = verdicts_.get();
        run.list_reached = list_memo_reached_;
        ProgressWatch progress{workload.completed};
        run.see();
        bool stop = false;
        while (!stop) {
            if (script != nullptr && script->at_crash()) break;
            if (!advance(scheduler, strategy, outcome, bounds, progress, trace)) break;
            if ((stop = watch_events(channel, watches, run))) break;
            stop = run.crash_after_step(plan, strategy, scenario_.crash.unflushed, crash_prng);
            if (interruptible && !stop &&
                ((crash_states_max != 0 && outcome.crash_states >= crash_states_max) ||
                 (scheduler.steps() % 256 == 0 && stop_requested()))) {
                outcome.interrupted = true;
                break;
            }
        }
        finish_crash(plan, script, stop, run, crash_prng);
        record_run(scheduler, run, watches);
    }
    outcome.story = trace.story();
    outcome.trace = trace.full();
    outcome.lines = trace.lines();
    outcome.trace_hash = trace.hash();
    // A search's runs report no counters: nothing reads them there, and
    // building them was 6% of a btrfs dfs schedule.
    if (!searching || trace_on) outcome.counters = fs->counters();
    return outcome;
}

}  // namespace scenarios
