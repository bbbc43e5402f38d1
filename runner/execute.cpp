// The run loop: one schedule of a scenario variant on a copy of the
// prototype world, step by step, with the model's events watched and crash
// states judged after each step (Simulation::execute).
#include "runner/runner.hpp"

#include "checkers/event_watch.hpp"
#include "model/events.hpp"
#include "model/info.hpp"
#include "runner/judge.hpp"
#include "runner/scripted.hpp"
#include "runner/workload.hpp"
#include "sim/assert.hpp"
#include "sim/scheduler.hpp"
#include "sim/stop.hpp"

namespace runner {

namespace {

/// What a failing SIM_ASSERT prints about the run in progress: the scenario,
/// the variant, the seed or strategy, the step and the schedule so far (the
/// choice list a repro file records), read only when an assertion fails.
class RunAssertContext final : public sim::AssertContext {
public:
    RunAssertContext(const loader::Scenario& scenario, const loader::Variant& variant,
                     const std::string& label, const sim::Scheduler& scheduler)
        : scenario_(scenario), variant_(variant), label_(label), scheduler_(scheduler) {}

    void describe(std::FILE* out) const override {
        std::fprintf(out, "%s, variant %s, %s, step %llu, schedule (choices):", scenario_.path.c_str(),
                     variant_.name.c_str(), label_.c_str(),
                     static_cast<unsigned long long>(scheduler_.steps()));
        for (const std::uint32_t choice : scheduler_.choices()) std::fprintf(out, " %u", choice);
    }

private:
    const loader::Scenario& scenario_;
    const loader::Variant& variant_;
    const std::string& label_;
    const sim::Scheduler& scheduler_;
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

/// The world's hashes for a search that remembers visited states
/// (sim/fingerprint.hpp): the model's resources, the disk's, and the
/// oracle with the workload's shared counters under the oracle's resource,
/// which every operation touches; outside every footprint, the freeze level
/// the event watches keep; apart, the steps since an operation completed
/// (the liveness window), which the search compares as a budget.
class WorldHasher final : public sim::ResourceHasher {
public:
    WorldHasher(model::FileSystem& fs, const Workload& workload, const RunState& run,
                const ProgressWatch& progress, const sim::Scheduler& scheduler)
        : fs_(fs), workload_(workload), run_(run), progress_(progress), scheduler_(scheduler) {}

    auto hash_resources(sim::ResourceHashes& out) -> bool override {
        if (!fs_.hash_resources(out)) return false;
        static const sim::Footprint disk = sim::resource("disk");
        sim::StateHash device;
        fs_.device().hash_into(device);
        out.add(disk, device.value());
        if (workload_.oracle.revision() != oracle_revision_) {
            std::vector<std::uint64_t> words;
            workload_.oracle.encode(words);
            oracle_hash_ = sim::hash_words(words);
            oracle_revision_ = workload_.oracle.revision();
        }
        sim::StateHash shared(oracle_hash_);
        for (const std::uint64_t word :
             {workload_.fsyncs, workload_.completed, std::uint64_t{workload_.phase_arrivals}}) {
            shared.add(word);
        }
        for (const bool created : workload_.created) shared.add_bool(created);
        out.add(oracle_resource(), shared.value());
        workload_.phase_wait.hash_into(out);
        return true;
    }
    void hash_fields(std::vector<sim::ResourceField>& out) override {
        static const sim::Footprint disk = sim::resource("disk");
        disk.for_each_bit([&](std::size_t bit) {
            fs_.device().hash_parts([&](const char* name, std::uint64_t value) {
                out.push_back({static_cast<std::uint32_t>(bit), name, value});
            });
        });
    }
    [[nodiscard]] auto commuting() const -> sim::Footprint override { return fs_.commuting_parts(); }
    auto hash_outside(sim::StateHash& out) -> bool override {
        out.add(static_cast<std::uint64_t>(run_.frozen));
        out.add(static_cast<std::uint64_t>(run_.seen_frozen));
        return true;
    }
    [[nodiscard]] auto steps_without_progress() const -> std::uint64_t override {
        return scheduler_.steps() - progress_.at_step;
    }

private:
    model::FileSystem& fs_;
    const Workload& workload_;
    const RunState& run_;
    const ProgressWatch& progress_;
    const sim::Scheduler& scheduler_;
    std::uint64_t oracle_revision_ = ~std::uint64_t{0};
    std::uint64_t oracle_hash_ = 0;
};

/// What the strategy asks of the world's hashes for one run: visited
/// states (Scheduler::remember_reads) and the footprint check, whose
/// findings it hands the strategy at the run's end.
class StateWatch {
public:
    StateWatch(sim::Strategy& strategy, sim::Scheduler& scheduler, WorldHasher& hasher)
        : strategy_(strategy), scheduler_(scheduler) {
        if (strategy.remembers_states()) scheduler.remember_reads(&hasher, strategy.needs_read_histories());
        if (strategy.checks_footprints()) scheduler.check_footprints(&hasher, strategy.footprint_left_out());
    }
    StateWatch(const StateWatch&) = delete;
    auto operator=(const StateWatch&) -> StateWatch& = delete;
    ~StateWatch() {
        if (strategy_.checks_footprints()) {
            strategy_.see_omissions(scheduler_.footprint_omissions(), scheduler_.footprint_steps_checked());
        }
    }

private:
    sim::Strategy& strategy_;
    sim::Scheduler& scheduler_;
};

/// One event watch per checker (nullptr for a checker that judges crash states only).
auto make_watches(const std::vector<std::unique_ptr<checkers::Checker>>& checkers)
    -> std::vector<std::unique_ptr<checkers::EventWatch>> {
    std::vector<std::unique_ptr<checkers::EventWatch>> watches;
    for (const auto& checker : checkers) watches.push_back(checkers::make_watch(checker->name()));
    return watches;
}

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
auto advance(sim::Scheduler& scheduler, sim::Strategy& strategy, RunOutcome& outcome,
             const loader::ExploreBounds& bounds, ProgressWatch& progress, sim::Trace& trace) -> bool {
    if (scheduler.steps() >= bounds.steps) {
        // A bound, not a finding: the run is not explored past this step.
        outcome.cut_at_step = bounds.steps;
        strategy.see_step_bound();
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
             "no progress: no operation completed in the last " + window +
                 " (explore.progress_steps bound), " + "steps " + std::to_string(progress.at_step + 1) +
                 " to " + std::to_string(scheduler.steps()) + "; still running: " + running});
        return false;
    }
    const std::uint64_t steps_before = scheduler.steps();
    const sim::StepOutcome step = scheduler.step(strategy);
    if (step == sim::StepOutcome::finished) return false;
    if (step == sim::StepOutcome::deadlock) {
        SIM_ASSERT(scheduler.steps() == steps_before);
        const std::string blocked = scheduler.describe_blocked();
        outcome.violations.push_back(
            {"deadlock", "", 0, "a task able to run", blocked, "deadlock: " + blocked});
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
auto watch_events(model::EventChannel& channel,
                  const std::vector<std::unique_ptr<checkers::EventWatch>>& watches, RunState& run) -> bool {
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
            run.trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(),
                           found.front().checker,
                           "violated while the run goes on, at step " + std::to_string(scheduler.steps()) +
                               ": " + found.front().message});
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
                                      " (the replayed run ends at step " +
                                      std::to_string(run.scheduler.steps()) + ")",
                                  std::to_string(plan.recorded.step));
    }
    // A run cut by the step bound claims nothing past it: no crash at its end.
    if (plan.kind != CrashPlan::Kind::scripted || !outcome.violations.empty() || outcome.cut_at_step != 0)
        return;
    loader::UnflushedPolicy policy = loader::UnflushedPolicy::none;
    if (script != nullptr && script->at_crash()) {
        policy = script->crash_step().unflushed;
    } else if (script != nullptr) {
        script->check_done();
    }
    const std::vector<bool> keep = draw_keep(policy, run.fs.device().pending().size(), crash_prng);
    run.evaluate(keep, run.draw_crash_faults(keep), true, CutChoice::draw);
}

/// A knob value that names no real kernel opens the story.
void tell_hypothetical(const loader::Scenario& scenario, const loader::Variant& variant, sim::Trace& trace) {
    for (auto& note : model::hypothetical_notes(*model::find_model(scenario.model), variant.config)) {
        trace.add({sim::TraceLine::Kind::note, 0, 0, "config", std::move(note)});
    }
}

/// What one run's steps follow: the strategy, the crash plan, the script
/// (a scripted run's), the bounds and when a stop request is heard.
struct RunLoop {
    sim::Strategy& strategy;
    const CrashPlan& plan;
    ScriptedStrategy* script;
    const loader::ExploreBounds& bounds;
    std::uint64_t crash_states_max;
    bool interruptible;
};

/// The run's steps, each followed by its events and crash states, until the
/// run ends or is stopped; true when a violation or the crash plan stopped it.
auto run_steps(const RunLoop& loop, RunState& run, model::EventChannel& channel,
               const std::vector<std::unique_ptr<checkers::EventWatch>>& watches, ProgressWatch& progress,
               sim::Prng& crash_prng) -> bool {
    RunOutcome& outcome = run.outcome;
    const sim::Scheduler& scheduler = run.scheduler;
    bool stop = false;
    while (!stop) {
        if (loop.script != nullptr && loop.script->at_crash()) break;
        if (!advance(run.scheduler, loop.strategy, outcome, loop.bounds, progress, run.trace)) break;
        if ((stop = watch_events(channel, watches, run))) break;
        stop = run.crash_after_step(loop.plan, loop.strategy, run.policy, crash_prng);
        if (loop.interruptible && !stop &&
            ((loop.crash_states_max != 0 && outcome.crash_states >= loop.crash_states_max) ||
             (scheduler.steps() % 256 == 0 && sim::stop_requested()))) {
            outcome.interrupted = true;
            break;
        }
    }
    return stop;
}

/// After a run's last step: what its scheduler, memo and watches counted.
void record_run(const sim::Scheduler& scheduler, RunState& run,
                const std::vector<std::unique_ptr<checkers::EventWatch>>& watches) {
    RunOutcome& outcome = run.outcome;
    outcome.crash_states_reused = run.memo_hits;
    outcome.mounts_reused = run.mounts_reused;
    outcome.points_reused = run.points_reused;
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
                         sim::Prng recovery_prng, bool trace_on, ScriptedStrategy* script,
                         const loader::ExploreBounds& bounds, std::uint64_t crash_states_max,
                         bool interruptible) -> RunOutcome {
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
        const std::vector<std::unique_ptr<checkers::EventWatch>> watches = make_watches(checkers_);
        fs->start_daemons();
        if (bounds.daemons_settled) scheduler.settle_daemons();
        Workload workload{scenario_, *fs, oracle, created};
        for (const loader::Task& task : scenario_.tasks) {
            scheduler.spawn(task.name, [&workload, &task] { workload.run_task(task); });
        }
        RunState run{outcome, trace, scheduler, *fs, oracle, checkers_, context, scenario_.crash.unflushed,
                     bounds.recovery_crashes, recovery_prng, crash_prng.fork("faults")};
        run.memo = verdict_memo_;
        run.verdicts = verdicts_.get();
        run.list_reached = list_memo_reached_;
        ProgressWatch progress{workload.completed};
        WorldHasher hasher{*fs, workload, run, progress, scheduler};
        const StateWatch state_watch{strategy, scheduler, hasher};
        run.see();
        const RunLoop loop{strategy, plan, script, bounds, crash_states_max, interruptible};
        const bool stop = run_steps(loop, run, channel, watches, progress, crash_prng);
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

}  // namespace runner
