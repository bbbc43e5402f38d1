#include "runner/campaign.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "runner/hex.hpp"
#include "sim/assert.hpp"
#include "sim/stop.hpp"

namespace runner {
namespace {

/// What a crash sees (dpor's visible steps, sim/dfs.hpp): the disk, which
/// every submission touches (model/disk/block_device.cpp), and the oracle of
/// acknowledged operations (runner/runner.cpp).
auto crash_visible() -> sim::Footprint { return sim::resource("disk") | sim::resource("oracle"); }

/// Schedules run between two checks of the stop flag and progress reports.
constexpr std::uint64_t batch_per_job = 256;

struct ScheduleResult {
    std::uint64_t crash_states = 0;
    std::uint64_t crash_states_reused = 0;
    std::uint64_t recovery_crash_states = 0;
    FaultCounts faults;
    std::uint64_t steps = 0;
    bool violated = false;
    bool reordered = false;
    bool woke = false;
    bool cut = false;  // by the step bound (explore.steps)
    bool interrupted = false;  // not run, or cut by a stop request: not a schedule
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
    result.crash_states_reused = outcome.crash_states_reused;
    result.recovery_crash_states = outcome.recovery_crash_states;
    result.faults = outcome.faults;
    result.steps = outcome.steps;
    result.violated = outcome.violated();
    result.reordered = outcome.io_reorders > 0;
    result.woke = outcome.daemon_wakeups > 0;
    result.cut = outcome.cut_at_step != 0;
    result.interrupted = outcome.interrupted;
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

/// --verify-determinism (FoundationDB's simulator does the same):
/// the schedule runs twice more, traced, and both traces must be byte for
/// byte the same and follow the campaign's own (untraced) run. `rerun` runs
/// it once with a trace. "" when they agree, else what differed.
auto verify_schedule(const RunOutcome& untraced, const std::function<RunOutcome()>& rerun,
                     bool same_crash_plan) -> std::string {
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
    report.crash_states_reused += result.crash_states_reused;
    report.recovery_crash_states += result.recovery_crash_states;
    report.faults += result.faults;
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

namespace {

/// One world per job beyond the first: copies of a world share its immutable
/// metadata objects, whose reference counts would bounce between cores.
auto extra_worlds(const Simulation& simulation, std::uint32_t jobs)
    -> std::vector<std::unique_ptr<Simulation>> {
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
                ScheduleResult& result = results[k - begin];
                if (stop_requested()) {
                    result.interrupted = true;
                    continue;
                }
                const std::uint64_t seed = schedule_seed(request.seed, index_of(k));
                const RunOutcome outcome = mine_simulation.run_strategy(request.strategy, seed, false, true);
                result = summarize(outcome);
                if (result.interrupted) continue;
                if (request.verify_every != 0 && index_of(k) % request.verify_every == 0) {
                    result.verified = true;
                    result.nondeterminism = verify_schedule(
                        outcome, [&] { return mine_simulation.run_strategy(request.strategy, seed, true); },
                        true);
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
    /// jobs; true when the campaign stops at this violation, or at the first
    /// schedule a stop request kept from running to its end.
    auto fold_batch(FuzzReport& report, std::uint64_t begin, std::uint64_t end) const -> bool {
        for (std::uint64_t k = begin; k < end; k++) {
            const ScheduleResult& result = results[k - begin];
            if (result.interrupted) {
                report.interrupted = true;
                return true;
            }
            tally(report, result);
            const std::uint64_t index = index_of(k);
            if (!result.nondeterminism.empty()) {
                report.nondeterministic.push_back(
                    {index, schedule_seed(request.seed, index), result.nondeterminism});
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

namespace {

/// The schedules a dfs search may take: the request's cap; a shard's share
/// of it (the first cap % N shards one more), so the shards of a capped
/// campaign spend its one total.
auto dfs_budget(const FuzzRequest& request) -> std::uint64_t {
    const std::uint64_t count = request.shard_count;
    return request.schedules / count + (request.shard_index < request.schedules % count ? 1 : 0);
}

/// A dfs search, whole or split into units (sim/dfs.hpp) shared by
/// request.jobs workers, each with its own world and tree. Each unit's
/// figures are kept apart and folded in unit order, so counts, violations and
/// their indices do not depend on the jobs or on which worker ran a unit;
/// with shards, each shard's units sum with the others' (crashsim merge).
///
/// The cap (request.schedules) is the search's, not a job's: the schedules
/// are those of the unsplit search in its order, units 0, 1, ... each whole
/// until the cap, the last one cut there. A worker stops its unit once the
/// units before it have run as many as the cap leaves (a bound that only
/// falls as they run), and claims no unit past a spent cap; the fold takes
/// the units in order, and where a worker ran past the cut (the units before
/// it ended short of the bound it stopped at), runs that unit again alone
/// to the cut. A shard's cap is its share of the campaign's (dfs_budget).
class DfsSearch {
public:
    DfsSearch(Simulation& simulation, const FuzzRequest& request, std::size_t depth)
        : simulation_(simulation), request_(request), depth_(depth), budget_(dfs_budget(request)) {}
    auto run() -> FuzzReport;

private:
    struct Unit {
        FuzzReport part;  // indices within the unit
        std::vector<std::uint32_t> failing_choices;
        std::optional<CrashRecord> failing_crash;
        std::atomic<std::uint64_t> progress{0};  // part.schedules, for the other workers' bounds
        bool ended = false;    // every schedule of the unit was run
        bool bounded = false;  // stopped at the cap, with schedules of the unit left
    };
    auto claim(std::uint64_t unit, Unit*& slot) -> bool;
    auto earlier(std::uint64_t unit) -> std::uint64_t;
    auto spent(const Unit& unit, std::uint64_t number, std::uint64_t& bound) -> bool;
    void work(Simulation& world, bool caller);
    auto record(Unit& unit, const RunOutcome& outcome, Simulation& world) -> bool;
    auto rerun(std::uint64_t number, std::uint64_t cap) -> std::unique_ptr<Unit>;
    void report_progress();
    void add(FuzzReport& report, std::uint64_t number, Unit& unit, std::uint64_t offset);
    auto more_units_after(std::uint64_t number) const -> bool;
    auto fold() -> FuzzReport;

    Simulation& simulation_;
    const FuzzRequest& request_;
    std::size_t depth_;  // 0: not split
    std::uint64_t budget_;  // the schedules this search may take
    std::mutex mutex_;
    std::map<std::uint64_t, Unit> units_;  // claimed, by number
    std::atomic<std::uint64_t> stop_unit_{~std::uint64_t{0}};  // the lowest that stopped at a violation
    std::atomic<std::uint64_t> runs_{0};
    std::atomic<std::uint64_t> crash_states_{0};
    std::atomic<std::uint64_t> violations_{0};
    std::atomic<std::uint64_t> units_total_{0};  // set by a worker that walked the whole tree
    std::atomic<bool> interrupted_{false};
    std::atomic<bool> beyond_{false};  // a unit of this search lies past the spent cap
};

/// The schedules of the units claimed before `unit` so far: fewer than, or
/// as many as, they will have.
auto DfsSearch::earlier(std::uint64_t unit) -> std::uint64_t {
    std::uint64_t sum = 0;
    for (auto it = units_.begin(); it != units_.end() && it->first < unit; ++it)
        sum += it->second.progress.load();
    return sum;
}

auto DfsSearch::claim(std::uint64_t unit, Unit*& slot) -> bool {
    if (unit % request_.shard_count != request_.shard_index || unit > stop_unit_.load()) return false;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (earlier(unit) >= budget_) {
        beyond_ = true;  // and so is every unit after it
        return false;
    }
    const auto [it, inserted] = units_.try_emplace(unit);
    if (inserted) slot = &it->second;
    return inserted;
}

/// Whether `unit` (number `number`) has run all the cap leaves it, with the
/// units before it at what they ran so far; `bound` caches that figure,
/// read again every batch_per_job schedules and whenever the unit reaches it.
auto DfsSearch::spent(const Unit& unit, std::uint64_t number, std::uint64_t& bound) -> bool {
    const std::uint64_t schedules = unit.part.schedules;
    if (schedules < bound && schedules % batch_per_job != 0) return false;
    if (depth_ == 0) {
        bound = budget_;
    } else {
        const std::lock_guard<std::mutex> lock(mutex_);
        const std::uint64_t before = earlier(number);
        bound = before >= budget_ ? 0 : budget_ - before;
    }
    return schedules >= bound;
}

/// Adds one run to its unit; true when the search stops there.
auto DfsSearch::record(Unit& unit, const RunOutcome& outcome, Simulation& world) -> bool {
    FuzzReport& part = unit.part;
    ScheduleResult result = summarize(outcome);
    // A dfs run evaluates crash states only past its fresh branch point,
    // so a replay of its choices compares steps and choices; a run the
    // search abandoned has no whole choice list to replay. A run that ended
    // at a violation is replayed to the crash that showed it: past it, the
    // run would ask for choices the search never made.
    if (request_.verify_every != 0 && part.schedules % request_.verify_every == 0 && !outcome.abandoned) {
        result.verified = true;
        const std::optional<CrashRecord> crash = outcome.violated() ? outcome.crash : std::nullopt;
        try {
            result.nondeterminism = verify_schedule(
                outcome, [&] { return world.replay(outcome.choices, crash, true); }, false);
        } catch (const sim::ReplayDiverged& diverged) {
            result.nondeterminism = std::string("the replay of its choices diverged: ") + diverged.what();
        }
        if (!result.nondeterminism.empty())
            part.nondeterministic.push_back({part.schedules, 0, result.nondeterminism});
    }
    tally(part, result);
    unit.progress.store(part.schedules);
    world.count_reached(outcome);
    runs_++;
    crash_states_ += result.crash_states;
    if (!outcome.violated()) return false;
    violations_++;
    part.violations.push_back({part.schedules - 1, 0, outcome.violations.front()});
    if (!part.found) {
        part.found = true;
        part.index = part.schedules - 1;
        unit.failing_choices = outcome.choices;
        unit.failing_crash = outcome.crash;
    }
    return request_.stop_at_first;
}

void DfsSearch::report_progress() {
    if (request_.progress)
        request_.progress({runs_.load(), request_.schedules, crash_states_.load(), violations_.load()});
}

/// A search's tree: its bound, reductions and visited states.
auto search_tree(const FuzzRequest& request) -> sim::DfsTree {
    sim::DfsTree tree(request.strategy.preemptions, request.sleep_sets, request.dpor, crash_visible());
    tree.measure_visited(request.states);
    if (request.check_fingerprints) tree.check_fingerprints();
    if (request.check_footprints) {
        tree.check_footprints(request.footprint_left_out.empty() ? sim::Footprint{}
                                                                 : sim::resource(request.footprint_left_out));
    }
    tree.omit_from_key(request.fingerprint_omit);
    tree.limit_visited(request.max_memory_mib << 20);
    return tree;
}

/// One worker: the whole walk above the split depth, the units it claims below.
void DfsSearch::work(Simulation& world, bool caller) {
    sim::DfsTree tree = search_tree(request_);
    Unit* current = nullptr;
    if (depth_ == 0) {
        current = &units_[0];
    } else {
        tree.split(depth_, [this, &current](std::uint64_t unit) { return claim(unit, current); });
    }
    std::uint64_t bound = 0;
    for (bool more = true; more;) {
        if (stop_requested()) {
            interrupted_ = true;
            return;
        }
        const std::uint64_t number = tree.unit();
        if (number > stop_unit_.load()) return;  // a unit before it stopped the search
        const bool owned = tree.owned();
        if (!owned && beyond_.load()) return;  // every unit left to claim is past the cap
        Unit* unit = current;
        const RunOutcome outcome = world.run_dfs(tree, false);
        if (outcome.interrupted) {
            interrupted_ = true;  // not a schedule: the tree stays where it was
            return;
        }
        if (owned && record(*unit, outcome, world)) {
            unit->part.dfs += tree.take_stats();
            unit->part.mismatches = tree.mismatches();
            unit->part.omissions = tree.omissions();
            std::uint64_t lowest = stop_unit_.load();
            while (number < lowest && !stop_unit_.compare_exchange_weak(lowest, number)) {
            }
            return;
        }
        more = tree.backtrack();
        if (!owned) continue;
        unit->part.dfs += tree.take_stats();
        unit->part.mismatches = tree.mismatches();
        unit->part.omissions = tree.omissions();
        if (!more || tree.unit() != number) {
            unit->ended = true;
            bound = 0;  // read again for the next unit
        } else if (spent(*unit, number, bound)) {
            unit->bounded = true;  // and every unit after it is past the cap
            return;
        }
        if (caller && unit->part.schedules % batch_per_job == 0) report_progress();
    }
    units_total_ = tree.unit() + 1;
}

/// Unit `number` again, alone, to its first `cap` schedules: the fold's cut
/// where a worker ran past it.
auto DfsSearch::rerun(std::uint64_t number, std::uint64_t cap) -> std::unique_ptr<Unit> {
    SIM_ASSERT(depth_ != 0 && cap != 0);
    auto unit = std::make_unique<Unit>();
    sim::DfsTree tree = search_tree(request_);
    tree.split(depth_, [number](std::uint64_t u) { return u == number; });
    while (tree.unit() <= number) {
        const bool owned = tree.owned();
        const RunOutcome outcome = simulation_.run_dfs(tree, false);
        if (outcome.interrupted) {
            interrupted_ = true;
            break;
        }
        if (owned && record(*unit, outcome, simulation_)) {
            unit->part.dfs += tree.take_stats();
            break;
        }
        const bool more = tree.backtrack();
        if (owned) unit->part.dfs += tree.take_stats();
        if (owned && unit->part.schedules == cap) {
            unit->bounded = true;
            break;
        }
        if (!more) break;
    }
    return unit;
}

auto DfsSearch::run() -> FuzzReport {
    SIM_ASSERT(request_.jobs >= 1 && (depth_ != 0 || (request_.jobs == 1 && request_.shard_count == 1)));
    std::vector<std::unique_ptr<Simulation>> extra = extra_worlds(simulation_, request_.jobs);
    std::vector<std::thread> threads;
    for (auto& world : extra) threads.emplace_back([this, &world] { work(*world, false); });
    work(simulation_, true);
    for (auto& thread : threads) thread.join();
    return fold();
}

/// Adds unit `number`'s figures, its indices made the search's (a shard's
/// stay within their unit, which they name).
void DfsSearch::add(FuzzReport& report, std::uint64_t number, Unit& unit, std::uint64_t offset) {
    const bool sharded = request_.shard_count > 1;
    const FuzzReport& part = unit.part;
    report.schedules += part.schedules;
    report.crash_states += part.crash_states;
    report.crash_states_reused += part.crash_states_reused;
    report.recovery_crash_states += part.recovery_crash_states;
    report.faults += part.faults;
    report.steps += part.steps;
    report.schedules_reordering += part.schedules_reordering;
    report.schedules_waking += part.schedules_waking;
    report.schedules_cut += part.schedules_cut;
    report.verified += part.verified;
    add_counts(report.judged, part.judged);
    add_counts(report.hits, part.hits);
    report.dfs += part.dfs;
    report.mismatches.insert(report.mismatches.end(), part.mismatches.begin(), part.mismatches.end());
    for (const sim::FootprintOmission& omission : part.omissions) {
        if (std::find(report.omissions.begin(), report.omissions.end(), omission) == report.omissions.end()) {
            report.omissions.push_back(omission);
        }
    }
    for (FoundViolation found : part.violations) {
        if (sharded) found.unit = number;
        found.index += sharded ? 0 : offset;
        report.violations.push_back(found);
    }
    for (Nondeterminism failure : part.nondeterministic) {
        failure.index += sharded ? 0 : offset;
        report.nondeterministic.push_back(failure);
    }
    if (part.found && !report.found) {
        report.found = true;
        report.index = part.index + (sharded ? 0 : offset);
        if (sharded) report.unit = number;
        // Replayed with a trace for the story: the choices and the crash
        // (none for a liveness or deadlock violation) are the whole run.
        report.failing = simulation_.replay(unit.failing_choices, unit.failing_crash, true);
        SIM_ASSERT(report.failing.violated());
    }
}

/// Whether this search (this shard) has a unit after `number`.
auto DfsSearch::more_units_after(std::uint64_t number) const -> bool {
    if (beyond_.load()) return true;
    const std::uint64_t count = request_.shard_count;
    const std::uint64_t next = number + 1 + (request_.shard_index + count - (number + 1) % count) % count;
    return units_total_.load() == 0 || next < units_total_.load();
}

/// The units in order until the cap: the last one taken whole or cut.
auto DfsSearch::fold() -> FuzzReport {
    FuzzReport report = start_report(simulation_);
    std::uint64_t offset = 0;
    bool capped = false;
    std::unique_ptr<Unit> cut;
    std::uint64_t folded = 0;
    for (auto& [number, claimed] : units_) {
        if (number > stop_unit_.load()) break;
        if (offset == budget_) {
            capped = true;  // a unit past the cap
            break;
        }
        Unit* unit = &claimed;
        if (unit->part.schedules > budget_ - offset) {
            cut = rerun(number, budget_ - offset);
            unit = cut.get();
        }
        add(report, number, *unit, offset);
        if (request_.shard_count > 1) report.unit_schedules.emplace_back(number, unit->part.schedules);
        folded++;
        offset += unit->part.schedules;
        if (unit->bounded) {
            capped = true;
            break;
        }
    }
    if (!capped && offset == budget_ && !units_.empty())
        capped = more_units_after(std::prev(units_.end())->first);
    report.interrupted = interrupted_;
    report.complete = units_total_ != 0 && !interrupted_ && !capped && stop_unit_.load() == ~std::uint64_t{0};
    if (depth_ != 0) {
        report.split_depth = depth_;
        report.units = units_total_;
        report.units_explored = folded;  // those the counts are of (a worker may run one past the cap)
    }
    return report;
}

}  // namespace

namespace {

/// The Knuth walks (sim::knuth_probe) or stratified probes
/// (sim::stratified_probe) of a dfs estimate, means and spread.
void estimate_dfs(Simulation& simulation, const FuzzRequest& request, SearchEstimate& estimate) {
    sim::Prng prng = sim::Prng(request.seed).fork("dfs estimate");
    auto run = [&simulation](sim::DfsTree& tree) {
        const RunOutcome outcome = simulation.count_dfs(tree);
        return sim::ProbeRun{outcome.crash_states, outcome.steps, stop_requested()};
    };
    std::vector<std::vector<double>> units;
    double squares = 0;
    const std::uint64_t asked = estimate.walks;
    estimate.walks_asked = asked;
    estimate.stratified = request.estimate_stratified;
    std::uint64_t walk = 0;
    for (; walk < asked; walk++) {
        if (walk >= 2 && request.estimate_runs != 0 && estimate.runs >= request.estimate_runs) break;
        if (walk >= 1 && stop_requested()) break;
        const sim::ProbeWalk probe = (request.estimate_stratified ? sim::stratified_probe : sim::knuth_probe)(
            request.strategy.preemptions, request.sleep_sets, prng, run, request.estimate_runs);
        if (probe.stopped) {
            estimate.walks_stopped++;
            estimate.stopped_depth =
                estimate.walks_stopped == 1 ? probe.depth : std::min(estimate.stopped_depth, probe.depth);
        }
        estimate.schedules += probe.schedules;
        squares += probe.schedules * probe.schedules;
        estimate.crash_states += probe.crash_states;
        estimate.steps += probe.steps;
        estimate.runs += probe.runs;
        estimate.run_steps += probe.run_steps;
        units.push_back(probe.units);
    }
    estimate.walks = walk;
    const auto walks = static_cast<double>(estimate.walks);
    estimate.schedules /= walks;
    estimate.crash_states /= walks;
    estimate.steps /= walks;
    if (estimate.walks > 1) {
        const double variance =
            std::max(0.0, (squares - walks * estimate.schedules * estimate.schedules) / (walks - 1));
        estimate.schedules_error = std::sqrt(variance / walks);
    }
    // A walk that ended above depth d has as many units there as at its end.
    std::size_t deepest = 0;
    for (const auto& walk : units) deepest = std::max(deepest, walk.size());
    estimate.units.assign(deepest, 0.0);
    for (const auto& walk : units) {
        for (std::size_t d = 0; d < deepest; d++)
            estimate.units[d] += walk[std::min(d, walk.size() - 1)] / walks;
    }
}

/// Seconds per run (from the walks' runs, which judge nothing) and per crash
/// state (from the search's own first schedules, run apart): the rates a dfs
/// estimate's time is taken at.
void time_dfs(Simulation& simulation, const FuzzRequest& request, SearchEstimate& estimate,
              double walks_seconds, const std::function<double()>& clock) {
    estimate.seconds_per_run = estimate.runs == 0 ? 0 : walks_seconds / static_cast<double>(estimate.runs);
    constexpr std::uint64_t calibration_schedules = 16;
    // And at most this many crash states: the first schedule of
    // btrfs/log-commit-jiffy-sleep at dfs:2 has 233,934 and took 40 s.
    constexpr std::uint64_t calibration_crash_states = 4096;
    sim::DfsTree tree(request.strategy.preemptions, request.sleep_sets, request.dpor, crash_visible());
    std::uint64_t runs = 0;
    std::uint64_t crash_states = 0;
    const double started = clock();
    for (std::uint64_t i = 0; i < calibration_schedules; i++) {
        const RunOutcome outcome = simulation.run_dfs(tree, false, calibration_crash_states - crash_states);
        runs++;
        crash_states += outcome.crash_states;
        if (outcome.interrupted || outcome.violated() || !tree.backtrack()) break;
    }
    const double spent = clock() - started;
    if (crash_states != 0) {
        estimate.seconds_per_crash_state =
            std::max(0.0, spent - estimate.seconds_per_run * static_cast<double>(runs)) /
            static_cast<double>(crash_states);
    }
    estimate.seconds = estimate.seconds_per_run * estimate.schedules +
                       estimate.seconds_per_crash_state * estimate.crash_states;
}

/// random, pct: the first `walks` schedules of the shard, scaled to all of them.
void estimate_sampled(Simulation& simulation, const FuzzRequest& request, SearchEstimate& estimate,
                      const std::function<double()>& clock) {
    const std::uint64_t mine =
        request.schedules > request.shard_index
            ? (request.schedules - request.shard_index + request.shard_count - 1) / request.shard_count
            : 0;
    const std::uint64_t samples = std::min<std::uint64_t>(estimate.walks, mine);
    const double started = clock ? clock() : 0;
    double crash_states = 0;
    double steps = 0;
    for (std::uint64_t k = 0; k < samples; k++) {
        const std::uint64_t index = request.shard_index + k * request.shard_count;
        const RunOutcome outcome =
            simulation.run_strategy(request.strategy, schedule_seed(request.seed, index), false);
        crash_states += static_cast<double>(outcome.crash_states);
        steps += static_cast<double>(outcome.steps);
        estimate.runs++;
    }
    estimate.walks = samples;
    estimate.schedules = static_cast<double>(mine);
    const double scale = samples == 0 ? 0 : static_cast<double>(mine) / static_cast<double>(samples);
    estimate.crash_states = crash_states * scale;
    estimate.steps = steps * scale;
    if (clock) estimate.seconds = (clock() - started) * scale;
}

}  // namespace

auto estimate_search(Simulation& simulation, const FuzzRequest& request, const std::function<double()>& clock)
    -> SearchEstimate {
    SearchEstimate estimate;
    estimate.dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    estimate.walks = std::max<std::uint32_t>(request.estimate_walks, 1);
    estimate.seed = request.seed;
    const double started = clock ? clock() : 0;
    if (!estimate.dfs) {
        estimate_sampled(simulation, request, estimate, clock);
    } else {
        estimate_dfs(simulation, request, estimate);
        if (clock) {
            const double walked = clock() - started;
            time_dfs(simulation, request, estimate, walked, clock);
        }
    }
    if (clock) {
        estimate.timed = true;
        estimate.estimating_seconds = clock() - started;
    }
    return estimate;
}

auto split_depth_for(const SearchEstimate& estimate, double wanted) -> std::size_t {
    std::size_t best = 1;
    for (std::size_t d = 1; d < estimate.units.size(); d++) {
        if (estimate.units[d] >= wanted) return d;
        if (estimate.units[d] > estimate.units[best] + 0.5) best = d;
    }
    return best;
}

auto split_units_wanted(const FuzzRequest& request) -> double {
    // Shards must agree on the depth whatever --jobs each runs with.
    return 64.0 * (request.shard_count > 1 ? request.shard_count : request.jobs);
}

auto explore_exhaustively(Simulation& simulation, const FuzzRequest& request) -> FuzzReport {
    std::size_t depth = 0;
    if (request.jobs > 1 || request.shard_count > 1 || request.split_depth != 0) {
        depth = request.split_depth != 0
                    ? request.split_depth
                    : split_depth_for(estimate_search(simulation, request), split_units_wanted(request));
    }
    DfsSearch search(simulation, request, depth);
    FuzzReport report = search.run();
    if (request.jobs == 1 && request.shard_count == 1)
        report.crash_states_distinct = simulation.crash_states_distinct();
    return report;
}

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

/// expect.faults: at least one fault detected, or survived, over the row.
void judge_faults(CheckRow& row, const loader::Expectation& expect) {
    if (!row.met || row.interrupted || !row.faults) return;
    const auto fail = [&](const char* what, const char* key) {
        row.met = false;
        row.detail = std::string("faults: none of the ") + std::to_string(row.faults->injected) +
                     " device faults injected in " + std::to_string(row.schedules) + " schedules was " +
                     what + " (expect.faults." + key + ")";
    };
    if (expect.faults_detected && row.faults->detected == 0) return fail("detected", "detected");
    if (expect.faults_survived && row.faults->survived == 0) return fail("survived", "survived");
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
    const loader::Scenario& scenario = simulation.scenario();
    const loader::Expectation& expect = simulation.variant().expect;
    const RunOutcome scripted = simulation.run_scripted(!violates);
    row.schedules++;
    if (scripted.cut_at_step != 0) row.schedules_cut++;
    row.crash_states += scripted.crash_states;
    if (row.faults) *row.faults += scripted.faults;
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
void judge_attempt(CheckRow& row, const std::string& text, const FuzzRequest& request,
                   const FuzzReport& report, const loader::Expectation& expect, const std::string& command) {
    const bool violates = expect.kind == loader::Expectation::Kind::violates;
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
                     report.failing.violations.front().checker + ": " +
                     report.failing.violations.front().message;
        row.story = report.failing.story;
        row.command = command;
    } else if (violates) {
        row.detail += (row.detail.empty() ? "" : "; ") + text + " found it at schedule " +
                      std::to_string(report.index);
    }
}

/// A dfs search that remembers visited states (the budget's `states`). It
/// splits at a depth chosen for stateful_split_units whatever `jobs`, so its
/// counts are the same for every --jobs. Returns the flags that rerun it.
auto remember_states(Simulation& simulation, FuzzRequest& request, sim::VisitedKey key) -> std::string {
    request.states = key;
    request.split_depth = split_depth_for(estimate_search(simulation, request), stateful_split_units);
    return std::string(" --states ") + (key == sim::VisitedKey::locals ? "locals" : "reads") +
           " --split-depth " + std::to_string(request.split_depth);
}

/// A campaign of one of the expectation's strategies.
void check_strategy(CheckRow& row, Simulation& simulation, RowCounts& counts,
                    const sim::StrategySpec& strategy, std::uint32_t jobs,
                    const std::function<void(const FuzzProgress&)>& progress, std::uint64_t verify_every) {
    const loader::Expectation& expect = simulation.variant().expect;
    const std::string text = strategy.text();
    FuzzRequest request;
    request.strategy = strategy;
    request.seed = expect.fuzz.seed;
    request.schedules = expect.fuzz.schedules;
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs && expect.fuzz.dfs_schedules != 0) {
        request.schedules = expect.fuzz.dfs_schedules;
    }
    request.jobs = jobs;
    request.progress = progress;
    request.verify_every = verify_every;
    std::string flags;
    const bool dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    if (dfs && expect.fuzz.states != sim::VisitedKey::none) {
        flags = remember_states(simulation, request, expect.fuzz.states);
    }
    const FuzzReport report = fuzz(simulation, request);
    row.interrupted = row.interrupted || report.interrupted;
    row.verified += report.verified;
    row.nondeterministic += report.nondeterministic.size();
    row.schedules += report.schedules;
    row.schedules_cut += report.schedules_cut;
    row.crash_states += report.crash_states;
    if (row.faults) *row.faults += report.faults;
    add_counts(counts.judged, report.judged);
    add_counts(counts.hits, report.hits);
    row.attempts.push_back({text, report.schedules, report.crash_states, report.found, report.index,
                            report.found ? report.failing.violations.front().checker : "", report.complete,
                            report.dfs.pruned_sleep});
    const std::string command = "crashsim fuzz " + simulation.scenario().path + " --variant " +
                                simulation.variant().name + " --strategy " + text + " --seed " +
                                std::to_string(request.seed) + " --schedules " +
                                std::to_string(request.schedules) + flags;
    judge_attempt(row, text, request, report, expect, command);
    if (report.dfs.dropped != 0) {
        row.detail += (row.detail.empty() ? "" : "; ") + text + ": " + std::to_string(report.dfs.dropped) +
                      " visited state(s) not remembered (--max-memory), their revisits run again";
    }
    if (!report.nondeterministic.empty()) {
        const Nondeterminism& first = report.nondeterministic.front();
        row.met = false;
        row.detail = "nondeterminism (a crashsim defect): " + text + " schedule " +
                     std::to_string(first.index) + ": " + first.what;
        row.command = command + " --verify-determinism 1";
    }
}

}  // namespace

auto expectation_text(const loader::Expectation& expect) -> std::string {
    return expect.kind == loader::Expectation::Kind::violates ? "violates " + expect.checker : "holds";
}

auto check_variant(const loader::Scenario& scenario, const loader::Variant& variant,
                   const std::function<double()>& clock, std::uint32_t jobs,
                   const std::function<void(const FuzzProgress&)>& progress, std::uint64_t verify_every)
    -> CheckRow {
    const double started = clock();
    CheckRow row;
    row.scenario = scenario.name;
    row.scenario_path = scenario.path;
    row.variant = variant.name;
    const loader::Expectation& expect = variant.expect;
    const bool violates = expect.kind == loader::Expectation::Kind::violates;
    row.expectation = expectation_text(expect);
    Simulation simulation(scenario, variant);
    row.met = true;
    if (scenario.faults.budget > 0) row.faults = FaultCounts{};
    RowCounts counts;
    if (!scenario.schedule.empty()) check_scripted(row, simulation, counts, violates);
    for (const sim::StrategySpec& strategy : expect.fuzz.strategies) {
        if (!row.met || stop_requested()) break;
        check_strategy(row, simulation, counts, strategy, jobs, progress, verify_every);
    }
    judge_coverage(row, simulation, counts.judged, counts.hits, violates);
    judge_faults(row, expect);
    if (row.met && !violates) {
        row.detail = "no violation in " + std::to_string(row.schedules) + " schedules";
    }
    if (row.schedules_cut != 0) {
        row.detail += (row.detail.empty() ? "" : "; ") + std::to_string(row.schedules_cut) +
                      " schedule(s) not explored past step " + std::to_string(simulation.bounds().steps) +
                      " (the step bound explore.steps)";
    }
    // Never silent about what exploration did not try.
    if (!expect.fuzz.strategies.empty()) {
        row.bounds = simulation.bounds();
        row.detail += " (" + loader::describe_bounds(*row.bounds) + ")";
    }
    row.seconds = clock() - started;
    return row;
}

}  // namespace runner
