#include "runner/runner.hpp"

#include "runner/scripted.hpp"
#include "runner/verdict_memo.hpp"
#include "runner/workload.hpp"

#include <algorithm>

#include "model/info.hpp"
#include "sim/scheduler.hpp"
#include "sim/stop.hpp"

namespace runner {

auto schedule_seed(std::uint64_t seed, std::uint64_t index) -> std::uint64_t {
    std::uint64_t state = seed ^ (index * 0xD1B54A32D192ED03ULL);
    return sim::splitmix64(state);
}

auto workload_counters(const model::FileSystem& before, const model::FileSystem& after,
                       const std::string& model) -> std::map<std::string, std::uint64_t> {
    const model::ModelInfo* info = model::find_model(model);
    const auto set_up = before.counters();
    std::map<std::string, std::uint64_t> result;
    for (const auto& [name, value] : after.counters()) {
        const model::CounterInfo* counter = info == nullptr ? nullptr : model::find_counter(*info, name);
        const auto it = set_up.find(name);
        const bool maximum = counter != nullptr && counter->kind == model::CounterKind::maximum;
        result[name] = maximum || it == set_up.end() ? value : value - it->second;
    }
    return result;
}

namespace {

constexpr std::uint64_t pct_probe_schedules = 32;
// The probe's own campaign seed, fixed on purpose: PCT's bound is a property of
// the scenario (and its bounds), the same for every schedule of every campaign,
// so schedule i of a campaign does not depend on which schedules ran before it.
constexpr std::uint64_t pct_probe_seed = 0x9c7;

}  // namespace

Simulation::Simulation(const loader::Scenario& scenario, const loader::Variant& variant)
    : scenario_(scenario), variant_(variant), bounds_(scenario.explore),
      verdicts_(std::make_unique<VerdictMemo>()) {
    model::Geometry geometry{scenario.device.block_size, scenario.device.blocks,
                             scenario.device.profile, scenario.machine.page_cache_bytes,
                             scenario.machine.reclaim_batch_bytes};
    if (scenario.device.write_latency_ns)
        geometry.write_latency = static_cast<sim::Duration>(*scenario.device.write_latency_ns);
    if (scenario.device.flush_latency_ns)
        geometry.flush_latency = static_cast<sim::Duration>(*scenario.device.flush_latency_ns);
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
                throw loader::InputError(scenario_.path +
                                         ": $.setup: expected the set-up to complete, got a deadlock: " +
                                         scheduler.describe_blocked());
            }
        }
    }
    // Device faults from the tasks on: the set-up's writes are
    // the quiescent start every run copies.
    prototype_->device().set_faults({scenario.faults.budget, scenario.faults.torn_writes,
                                     scenario.device.lying_cache, scenario.faults.misdirected_writes,
                                     scenario.faults.latent_errors, scenario.faults.write_errors});
    // Every run's copy starts with the hashes a search remembering states keeps.
    prototype_->keep_state_hashes();
}

auto Simulation::decisions_estimate() -> std::uint64_t {
    // PCT draws its change points among the decisions a schedule takes: use
    // the most that a few random schedules (fixed seeds) took.
    if (decisions_estimated_) return decisions_estimate_;
    for (std::uint64_t probe = 0; probe < pct_probe_schedules; probe++) {
        sim::RandomStrategy random(sim::Prng(schedule_seed(pct_probe_seed, probe)));
        run_label_ = "pct's probe, random seed " + std::to_string(schedule_seed(pct_probe_seed, probe));
        // The probe counts decisions only: no power cut inside recovery.
        loader::ExploreBounds probe_bounds = bounds_;
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
        std::ranges::count_if(scenario_.schedule, [this](const loader::ScheduleStep& step) {
            return step.kind == loader::ScheduleStep::Kind::run &&
                   std::ranges::none_of(scenario_.tasks,
                                        [&](const loader::Task& task) { return task.name == step.task; });
        }));
    return execute(
        script, CrashPlan{CrashPlan::Kind::scripted, {}}, sim::Prng(seed).fork("crash"),
        sim::Prng(seed).fork("recovery_crash"), trace, scenario_.schedule.empty() ? nullptr : &script,
        loader::ExploreBounds{0, daemon_steps, scenario_.explore.steps, scenario_.explore.progress_steps, 0});
}

auto Simulation::run_strategy(const sim::StrategySpec& spec, std::uint64_t seed, bool trace,
                              bool interruptible) -> RunOutcome {
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
    fs->reset_maxima();
    checkers::Oracle oracle = *prototype_oracle_;
    std::vector<bool> created = prototype_created_;
    {
        constexpr std::uint64_t steps_max = perf_steps_max;
        const loader::Machine& machine = scenario_.machine_of(variant_);
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
        for (const loader::Task& task : scenario_.tasks) {
            scheduler.spawn(task.name, [&workload, &task] { workload.run_task(task); });
        }
        sim::FirstStrategy first;
        for (;;) {
            if (scheduler.steps() + 1 >= steps_max) {
                outcome.problem = "still running after " + std::to_string(steps_max) + " steps";
                break;
            }
            if (scheduler.steps() % 65536 == 0 && sim::stop_requested()) {
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
    outcome.counters = workload_counters(*prototype_, *fs, scenario_.model);
    std::sort(outcome.fsync_latencies_ns.begin(), outcome.fsync_latencies_ns.end());
    return outcome;
}

auto Simulation::run_dfs(sim::DfsTree& tree, bool trace, std::uint64_t crash_states_max) -> RunOutcome {
    sim::DfsStrategy strategy(tree);
    run_label_ = "dfs";
    list_memo_reached_ = true;
    RunOutcome outcome = execute(strategy, CrashPlan{CrashPlan::Kind::exhaustive, {}}, sim::Prng(0),
                                 sim::Prng(0), trace, nullptr, bounds_, crash_states_max, true);
    list_memo_reached_ = false;
    return outcome;
}

auto Simulation::count_dfs(sim::DfsTree& tree) -> RunOutcome {
    sim::DfsStrategy strategy(tree);
    run_label_ = "dfs estimate";
    return execute(strategy, CrashPlan{CrashPlan::Kind::count, {}}, sim::Prng(0), sim::Prng(0), false,
                   nullptr, bounds_, 0, true);
}

auto Simulation::replay(const std::vector<std::uint32_t>& choices, const std::optional<CrashRecord>& crash,
                        bool trace) -> RunOutcome {
    sim::ReplayStrategy strategy(choices);
    run_label_ = "replay of a recorded schedule";
    const CrashPlan plan =
        crash ? CrashPlan{CrashPlan::Kind::at_step, *crash} : CrashPlan{CrashPlan::Kind::none, {}};
    return execute(strategy, plan, sim::Prng(0), sim::Prng(0), trace, nullptr, bounds_);
}

}  // namespace runner
