#include "runner/campaign.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "runner/repro.hpp"
#include "sim/assert.hpp"
#include "sim/stop.hpp"

namespace scenarios {
namespace {

/// Schedules run between two checks of the stop flag and progress reports.
constexpr std::uint64_t batch_per_job = 256;

struct ScheduleResult {
    std::uint64_t crash_states = 0;
    std::uint64_t recovery_crash_states = 0;
    std::uint64_t steps = 0;
    bool violated = false;
    bool reordered = false;
    bool woke = false;
    bool cut = false;  // by the step bound (explore.steps)
    checkers::Violation first;
    std::vector<std::uint64_t> judged;
    std::vector<std::uint64_t> hits;
    bool verified = false;       // run again twice (verify_schedule)
    std::string nondeterminism;  // what differed, if anything
};

/// What a campaign keeps of one schedule's run.
auto summarize(const RunOutcome& outcome) -> ScheduleResult {
    ScheduleResult result;
    result.crash_states = outcome.crash_states;
    result.recovery_crash_states = outcome.recovery_crash_states;
    result.steps = outcome.steps;
    result.violated = outcome.violated();
    result.reordered = outcome.io_reorders > 0;
    result.woke = outcome.daemon_wakeups > 0;
    result.cut = outcome.cut_at_step != 0;
    if (result.violated) result.first = outcome.violations.front();
    result.judged = outcome.judged;
    result.hits = outcome.hits;
    return result;
}

/// The figures a run of a schedule must repeat; "" when `again` repeats
/// `first`. Crash states and verdicts are compared only when both runs
/// evaluated crash states the same way (not for a dfs schedule replayed).
auto differences(const RunOutcome& first, const RunOutcome& again, const char* first_name,
                 const char* again_name, bool same_crash_plan) -> std::string {
    auto differ = [&](const std::string& figure, std::uint64_t a, std::uint64_t b) -> std::string {
        return figure + ": " + std::to_string(a) + " in the " + first_name + " run, " + std::to_string(b) +
               " in the " + again_name + " run";
    };
    if (first.steps != again.steps) return differ("steps", first.steps, again.steps);
    if (first.choices != again.choices) return "the choices made differ";
    if (same_crash_plan) {
        if (first.crash_states != again.crash_states) {
            return differ("crash states", first.crash_states, again.crash_states);
        }
        if (first.violated() != again.violated()) return "one run violated a checker and the other did not";
    }
    return "";
}

/// --verify-determinism (issue 14; FoundationDB's simulator does the same):
/// the schedule runs twice more, traced, and both traces must be byte for
/// byte the same and follow the campaign's own (untraced) run. `rerun` runs
/// it once with a trace. "" when they agree, else what differed.
auto verify_schedule(const RunOutcome& untraced, const std::function<RunOutcome()>& rerun, bool same_crash_plan)
    -> std::string {
    const RunOutcome first = rerun();
    const RunOutcome second = rerun();
    if (first.trace_hash != second.trace_hash) {
        return "two traced runs wrote different traces (hashes " + hex(first.trace_hash) + " and " +
               hex(second.trace_hash) + ")";
    }
    const std::string traced = differences(first, second, "first traced", "second traced", true);
    if (!traced.empty()) return traced;
    return differences(untraced, first, "campaign's", "traced", same_crash_plan);
}

/// Adds one schedule to the campaign's counts (dfs and random/pct alike).
void tally(FuzzReport& report, const ScheduleResult& result) {
    report.schedules++;
    if (result.verified) report.verified++;
    report.crash_states += result.crash_states;
    report.recovery_crash_states += result.recovery_crash_states;
    report.steps += result.steps;
    if (result.reordered) report.schedules_reordering++;
    if (result.woke) report.schedules_waking++;
    if (result.cut) report.schedules_cut++;
    add_counts(report.judged, result.judged);
    add_counts(report.hits, result.hits);
}

/// An empty report that names what the campaign explores with.
auto start_report(const Simulation& simulation) -> FuzzReport {
    FuzzReport report;
    report.bounds = simulation.bounds();
    report.checker_names = simulation.checker_names();
    return report;
}

}  // namespace

void request_stop() { sim::request_stop(); }
auto stop_requested() -> bool { return sim::stop_requested(); }
void clear_stop_request() { sim::clear_stop(); }

auto explore_exhaustively(Simulation& simulation, const FuzzRequest& request) -> FuzzReport {
    FuzzReport report = start_report(simulation);
    sim::DfsTree tree(request.strategy.preemptions, request.sleep_sets);
    bool more = true;
    while (more && report.schedules < request.schedules) {
        if (stop_requested()) {
            report.interrupted = true;
            break;
        }
        RunOutcome outcome = simulation.run_dfs(tree, false);
        ScheduleResult result = summarize(outcome);
        // A dfs run evaluates crash states only past its fresh branch point,
        // so a replay of its choices compares steps and choices; a run the
        // search abandoned has no whole choice list to replay.
        if (request.verify_every != 0 && report.schedules % request.verify_every == 0 && !outcome.abandoned) {
            result.verified = true;
            try {
                result.nondeterminism = verify_schedule(
                    outcome, [&] { return simulation.replay(outcome.choices, std::nullopt, true); }, false);
            } catch (const sim::ReplayDiverged& diverged) {
                result.nondeterminism = std::string("the replay of its choices diverged: ") + diverged.what();
            }
            if (!result.nondeterminism.empty()) {
                report.nondeterministic.push_back({report.schedules, 0, result.nondeterminism});
            }
        }
        tally(report, result);
        if (outcome.violated()) {
            report.violations.push_back({report.schedules - 1, 0, outcome.violations.front()});
        }
        if (outcome.violated() && !report.found) {
            report.found = true;
            report.index = report.schedules - 1;
            // Replayed with a trace for the story: the choices and the crash
            // (none for a liveness or deadlock violation) are the whole run.
            report.failing = simulation.replay(outcome.choices, outcome.crash, true);
            SIM_ASSERT(report.failing.violated());
            if (request.stop_at_first) break;
        }
        if (request.progress && report.schedules % batch_per_job == 0) {
            request.progress({report.schedules, request.schedules, report.crash_states,
                              report.violations.size()});
        }
        more = tree.backtrack();
    }
    report.complete = !more;
    report.dfs = tree.stats();
    return report;
}

namespace {

/// One world per job beyond the first: copies of a world share its immutable
/// metadata objects, whose reference counts would bounce between cores.
auto extra_worlds(const Simulation& simulation, std::uint32_t jobs) -> std::vector<std::unique_ptr<Simulation>> {
    std::vector<std::unique_ptr<Simulation>> extra;
    for (std::uint32_t job = 1; job < jobs; job++) {
        extra.push_back(std::make_unique<Simulation>(simulation.scenario(), simulation.variant()));
        extra.back()->set_bounds(simulation.bounds());
    }
    return extra;
}

/// A shard's schedules k (index index_of(k)) split into batches run by the jobs.
struct ShardRun {
    const FuzzRequest& request;
    Simulation& simulation;
    std::vector<std::unique_ptr<Simulation>> extra;
    std::vector<ScheduleResult> results;

    [[nodiscard]] auto index_of(std::uint64_t k) const -> std::uint64_t {
        return request.shard_index + k * request.shard_count;
    }

    /// Runs schedules [begin, end) of the shard into `results`.
    void run_batch(std::uint64_t begin, std::uint64_t end) {
        results.assign(end - begin, ScheduleResult{});
        std::atomic<std::uint64_t> next{begin};
        auto worker = [&](Simulation& mine_simulation) {
            for (std::uint64_t k = next++; k < end; k = next++) {
                const std::uint64_t seed = schedule_seed(request.seed, index_of(k));
                const RunOutcome outcome = mine_simulation.run_strategy(request.strategy, seed, false);
                ScheduleResult& result = results[k - begin];
                result = summarize(outcome);
                if (request.verify_every != 0 && index_of(k) % request.verify_every == 0) {
                    result.verified = true;
                    result.nondeterminism = verify_schedule(
                        outcome, [&] { return mine_simulation.run_strategy(request.strategy, seed, true); }, true);
                }
            }
        };
        if (request.jobs == 1) {
            worker(simulation);
            return;
        }
        std::vector<std::thread> threads;
        for (auto& job : extra) threads.emplace_back(worker, std::ref(*job));
        worker(simulation);
        for (auto& thread : threads) thread.join();
    }

    /// Folds the batch in index order, so the outcome does not depend on the
    /// jobs; true when the campaign stops at this violation.
    auto fold_batch(FuzzReport& report, std::uint64_t begin, std::uint64_t end) const -> bool {
        for (std::uint64_t k = begin; k < end; k++) {
            const ScheduleResult& result = results[k - begin];
            tally(report, result);
            const std::uint64_t index = index_of(k);
            if (!result.nondeterminism.empty()) {
                report.nondeterministic.push_back({index, schedule_seed(request.seed, index), result.nondeterminism});
            }
            if (!result.violated) continue;
            report.violations.push_back({index, schedule_seed(request.seed, index), result.first});
            if (!report.found) {
                report.found = true;
                report.index = index;
                report.schedule_seed = schedule_seed(request.seed, index);
            }
            if (request.stop_at_first) return true;
        }
        return false;
    }
};

}  // namespace

auto fuzz(Simulation& simulation, const FuzzRequest& request) -> FuzzReport {
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs) {
        return explore_exhaustively(simulation, request);
    }
    SIM_ASSERT(request.jobs >= 1);
    SIM_ASSERT(request.shard_count >= 1 && request.shard_index < request.shard_count);
    FuzzReport report = start_report(simulation);
    // This shard's indices: shard_index, shard_index + shard_count, ...
    const std::uint64_t mine =
        request.schedules > request.shard_index
            ? (request.schedules - request.shard_index + request.shard_count - 1) / request.shard_count
            : 0;
    const std::uint64_t batch = batch_per_job * request.jobs;
    ShardRun run{request, simulation, extra_worlds(simulation, request.jobs), {}};
    for (std::uint64_t begin = 0; begin < mine; begin += batch) {
        if (stop_requested()) {
            report.interrupted = true;
            break;
        }
        const std::uint64_t end = std::min(mine, begin + batch);
        run.run_batch(begin, end);
        const bool stop = run.fold_batch(report, begin, end);
        if (request.progress) {
            request.progress({report.schedules, mine, report.crash_states, report.violations.size()});
        }
        if (stop) break;
    }
    if (report.found) {
        // The same schedule again, traced, for the story and the trace hash.
        report.failing = simulation.run_strategy(request.strategy, report.schedule_seed, true);
        SIM_ASSERT(report.failing.violated());
    }
    return report;
}

namespace {

/// Names the row's stake counts and coverage; fails a "holds" whose checker
/// never judged anything, and any variant that never reached a must_reach point.
void judge_coverage(CheckRow& row, const Simulation& simulation, const std::vector<std::uint64_t>& judged,
                    const std::vector<std::uint64_t>& hits, bool violates) {
    row.judged = judged_counts(simulation.checker_names(), judged);
    row.model = simulation.scenario().model;
    row.reached = reached_counts(row.model, hits);
    if (!row.met || row.interrupted) return;
    const std::vector<std::string> vacuous = never_judged(row.judged);
    if (!violates && !vacuous.empty()) {
        row.met = false;
        row.detail = "vacuous: " + join_names(vacuous) + " never judged a crash state with something at "
                     "stake in " + std::to_string(row.crash_states) + " crash states of " +
                     std::to_string(row.schedules) + " schedules (" + judged_text(row.judged) + ")";
        return;
    }
    const std::vector<std::string> missing = unreached(row.reached, simulation.variant().must_reach);
    if (!missing.empty()) {
        row.met = false;
        row.detail = "must_reach: never reached in " + std::to_string(row.schedules) + " schedules: " +
                     join_names(missing);
    }
}

auto has_checker(const RunOutcome& outcome, const std::string& checker) -> bool {
    return std::any_of(outcome.violations.begin(), outcome.violations.end(),
                       [&](const auto& violation) { return violation.checker == checker; });
}

}  // namespace

namespace {

/// Counts over every run of a row, named at the end (judge_coverage).
struct RowCounts {
    std::vector<std::uint64_t> judged;
    std::vector<std::uint64_t> hits;
};

/// The scripted schedule, when the scenario has one.
void check_scripted(CheckRow& row, Simulation& simulation, RowCounts& counts, bool violates) {
    const Scenario& scenario = simulation.scenario();
    const Expectation& expect = simulation.variant().expect;
    const RunOutcome scripted = simulation.run_scripted(!violates);
    row.schedules++;
    if (scripted.cut_at_step != 0) row.schedules_cut++;
    row.crash_states += scripted.crash_states;
    add_counts(counts.judged, scripted.judged);
    add_counts(counts.hits, scripted.hits);
    if (violates && !has_checker(scripted, expect.checker)) {
        row.met = false;
        row.detail = "the scripted schedule did not violate " + expect.checker;
    } else if (!violates && scripted.violated()) {
        row.met = false;
        row.detail = "the scripted schedule violated " + scripted.violations.front().checker + ": " +
                     scripted.violations.front().message;
        row.story = scripted.story;
        row.command = "crashsim run " + scenario.path + " --variant " + simulation.variant().name;
    }
}

/// One strategy's campaign against the expectation.
void judge_attempt(CheckRow& row, const std::string& text, const FuzzRequest& request, const FuzzReport& report,
                   const Expectation& expect, const std::string& command) {
    const bool violates = expect.kind == Expectation::Kind::violates;
    if (report.interrupted) {
        row.met = false;
        row.detail = text + " was interrupted after " + std::to_string(report.schedules) + " schedules";
    } else if (violates && !(report.found && has_checker(report.failing, expect.checker))) {
        row.met = false;
        row.detail = text + " did not find " + expect.checker + " in " + std::to_string(report.schedules) +
                     " schedules" +
                     (report.found ? " (found " + report.failing.violations.front().checker + ")" : "");
        row.command = command;
    } else if (!violates && request.strategy.kind == sim::StrategySpec::Kind::dfs && !report.complete &&
               !report.found) {
        row.met = false;
        row.detail = text + " did not complete within " + std::to_string(report.schedules) + " schedules";
        row.command = command;
    } else if (!violates && report.found) {
        row.met = false;
        row.detail = text + " schedule " + std::to_string(report.index) + " violated " +
                     report.failing.violations.front().checker + ": " + report.failing.violations.front().message;
        row.story = report.failing.story;
        row.command = command;
    } else if (violates) {
        row.detail += (row.detail.empty() ? "" : "; ") + text + " found it at schedule " +
                      std::to_string(report.index);
    }
}

/// A campaign of one of the expectation's strategies.
void check_strategy(CheckRow& row, Simulation& simulation, RowCounts& counts, const std::string& text,
                    std::uint32_t jobs, const std::function<void(const FuzzProgress&)>& progress,
                    std::uint64_t verify_every) {
    const Expectation& expect = simulation.variant().expect;
    FuzzRequest request;
    SIM_ASSERT(sim::parse_strategy(text, request.strategy));
    request.seed = expect.fuzz.seed;
    request.schedules = expect.fuzz.schedules;
    request.jobs = jobs;
    request.progress = progress;
    request.verify_every = verify_every;
    const FuzzReport report = fuzz(simulation, request);
    row.interrupted = row.interrupted || report.interrupted;
    row.verified += report.verified;
    row.nondeterministic += report.nondeterministic.size();
    row.schedules += report.schedules;
    row.schedules_cut += report.schedules_cut;
    row.crash_states += report.crash_states;
    add_counts(counts.judged, report.judged);
    add_counts(counts.hits, report.hits);
    row.attempts.push_back({text, report.schedules, report.crash_states, report.found, report.index,
                            report.found ? report.failing.violations.front().checker : "", report.complete,
                            report.dfs.pruned_sleep});
    const std::string command = "crashsim fuzz " + simulation.scenario().path + " --variant " +
                                simulation.variant().name + " --strategy " + text + " --seed " +
                                std::to_string(request.seed) + " --schedules " + std::to_string(request.schedules);
    judge_attempt(row, text, request, report, expect, command);
    if (!report.nondeterministic.empty()) {
        const Nondeterminism& first = report.nondeterministic.front();
        row.met = false;
        row.detail = "nondeterminism (a crashsim defect): " + text + " schedule " + std::to_string(first.index) +
                     ": " + first.what;
        row.command = command + " --verify-determinism 1";
    }
}

}  // namespace

auto expectation_text(const Expectation& expect) -> std::string {
    return expect.kind == Expectation::Kind::violates ? "violates " + expect.checker : "holds";
}

auto check_variant(const Scenario& scenario, const Variant& variant,
                   const std::function<double()>& clock, std::uint32_t jobs,
                   const std::function<void(const FuzzProgress&)>& progress, std::uint64_t verify_every)
    -> CheckRow {
    const double started = clock();
    CheckRow row;
    row.scenario = scenario.name;
    row.scenario_path = scenario.path;
    row.variant = variant.name;
    const Expectation& expect = variant.expect;
    const bool violates = expect.kind == Expectation::Kind::violates;
    row.expectation = expectation_text(expect);
    Simulation simulation(scenario, variant);
    row.met = true;
    RowCounts counts;
    if (!scenario.schedule.empty()) check_scripted(row, simulation, counts, violates);
    for (const std::string& text : expect.fuzz.strategies) {
        if (!row.met || stop_requested()) break;
        check_strategy(row, simulation, counts, text, jobs, progress, verify_every);
    }
    judge_coverage(row, simulation, counts.judged, counts.hits, violates);
    if (row.met && !violates) {
        row.detail = "no violation in " + std::to_string(row.schedules) + " schedules";
    }
    if (row.schedules_cut != 0) {
        row.detail += (row.detail.empty() ? "" : "; ") + std::to_string(row.schedules_cut) +
                      " schedule(s) not explored past step " + std::to_string(simulation.bounds().steps) +
                      " (the step bound explore.steps)";
    }
    // Never silent about what exploration did not try (issue 9 section 3).
    if (!expect.fuzz.strategies.empty()) {
        row.bounds = simulation.bounds();
        row.detail += " (" + describe_bounds(*row.bounds) + ")";
    }
    row.seconds = clock() - started;
    return row;
}

}  // namespace scenarios
