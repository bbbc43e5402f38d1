#include "runner/shrink.hpp"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <functional>
#include <optional>

#include "loader/json_reader.hpp"
#include "model/info.hpp"
#include "runner/campaign.hpp"
#include "sim/assert.hpp"

namespace runner {
namespace {

using Json = nlohmann::ordered_json;

/// The failure a shrink must keep: checker, file and offset.
struct Target {
    std::string checker;
    std::string file;
    std::uint64_t offset;
    [[nodiscard]] auto matches(const RunOutcome& outcome) const -> bool {
        for (const auto& v : outcome.violations) {
            if (v.checker == checker && v.file == file && v.offset == offset) return true;
        }
        return false;
    }
};

/// The schedules shrinking may still run (ShrinkOptions::schedules_total).
struct Budget {
    std::uint64_t total;
    std::uint64_t spent = 0;
    [[nodiscard]] auto left() const -> std::uint64_t { return total - std::min(spent, total); }
};

/// The tries shrink_kept_writes makes on `crash` at most (one schedule
/// each): kept out of the operations' share of the budget, so that a spent
/// budget still leaves the crash state's cheap shrinking done.
auto kept_writes_tries(const std::optional<CrashRecord>& crash) -> std::uint64_t {
    if (!crash) return 0;
    std::uint64_t tries = crash->torn.size() + crash->misdirected.size() + crash->unreadable.size();
    tries += static_cast<std::uint64_t>(std::count(crash->keep.begin(), crash->keep.end(), true));
    for (const auto& cut : crash->recovery) {
        tries += static_cast<std::uint64_t>(std::count(cut.keep.begin(), cut.keep.end(), true));
    }
    return tries;
}

/// A failing run of `text` within the options' bounds, fewest preemptions first.
struct Found {
    RunOutcome outcome;
    std::uint32_t preemptions;
};

/// What one search over 0..preemptions_max preemptions came to.
struct Search {
    std::optional<Found> found;
    std::string other;  // another failure came first: "checker at P preemption(s)"
    /// Preemption bounds whose search stopped at the cap before it completed
    /// (a failure the same way may lie past it).
    std::vector<std::uint32_t> capped;
    bool interrupted = false;  // stopped by request_stop()
    bool budget_spent = false;  // stopped on the total budget before it completed
};

/// One bounded search's outcome folded into `result`; true when the search
/// over bounds ends here (found, another failure, interrupted, budget).
auto search_at(Simulation& simulation, std::uint32_t preemptions, const Target& target,
               const ShrinkOptions& options, Budget& budget, Search& result) -> bool {
    if (budget.left() == 0) {
        result.budget_spent = true;
        return true;
    }
    FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = preemptions;
    request.schedules = std::min(options.schedules_per_search, budget.left());
    const FuzzReport report = explore_exhaustively(simulation, request);
    budget.spent += report.schedules;
    if (report.interrupted) {
        result.interrupted = true;
        return true;
    }
    if (report.found && target.matches(report.failing)) {
        result.found = Found{report.failing, preemptions};
        return true;
    }
    if (report.found) {  // another failure comes first: not the same story
        result.other = report.failing.violations.front().checker + " at " + std::to_string(preemptions) +
                       " preemption(s)";
        return true;
    }
    if (!report.complete && request.schedules < options.schedules_per_search) {
        result.budget_spent = true;  // cut by the total budget, not the per-search cap
        return true;
    }
    if (!report.complete) result.capped.push_back(preemptions);
    return false;
}

/// The scenario `text` loaded for a search into `simulation`; false when it
/// no longer loads.
auto load_for_search(const std::string& text, const std::string& path, const std::string& variant_name,
                     const loader::ExploreBounds& bounds, std::optional<loader::Scenario>& scenario,
                     std::optional<Simulation>& simulation) -> bool {
    try {
        scenario = loader::parse_scenario(text, path);
    } catch (const loader::InputError&) {
        return false;  // the removal left a scenario that does not load
    }
    const loader::Variant* variant = scenario->find_variant(variant_name);
    if (variant == nullptr) return false;
    try {
        simulation.emplace(*scenario, *variant);
        simulation->set_bounds(bounds);
    } catch (const loader::InputError&) {
        return false;  // the set-up no longer completes
    }
    return true;
}

/// Searches 0..options.preemptions_max preemptions, fewest first. With
/// `within` (a removal, while the scenario already fails with that many):
/// one search at `within` first, whose tree holds every schedule with fewer
/// (sim/dfs.hpp: the sleep sets visit every state within the bound), so a
/// removal that loses the failure is known from one search in place of one
/// per bound up to preemptions_max; only a removal that still fails is
/// searched at fewer, for its fewest. A removal that fails only with more
/// preemptions than the story already has is not taken: it trades the
/// operation for a longer interleaving (and proving it does not fail cost
/// complete searches up to preemptions_max: 38,480 schedules at 2 for the
/// btrfs race without its set-up fsync, the whole shrink budget 13 times).
auto search(const std::string& text, const std::string& path, const std::string& variant_name,
            const Target& target, const ShrinkOptions& options, const loader::ExploreBounds& bounds,
            Budget& budget, std::optional<std::uint32_t> within = std::nullopt) -> Search {
    Search result;
    std::optional<loader::Scenario> scenario;
    std::optional<Simulation> simulation;
    if (!load_for_search(text, path, variant_name, bounds, scenario, simulation)) return result;
    if (within) {
        if (!search_at(*simulation, *within, target, options, budget, result) || !result.found) return result;
        Search fewer;
        for (std::uint32_t preemptions = 0; preemptions < *within; preemptions++) {
            if (search_at(*simulation, preemptions, target, options, budget, fewer)) break;
        }
        if (fewer.interrupted || fewer.budget_spent) return fewer;
        if (fewer.found) fewer.capped.clear();
        return fewer.found ? fewer : result;
    }
    for (std::uint32_t preemptions = 0; preemptions <= options.preemptions_max; preemptions++) {
        if (search_at(*simulation, preemptions, target, options, budget, result)) return result;
    }
    return result;
}

auto capped_text(const std::vector<std::uint32_t>& capped, std::uint64_t cap) -> std::string {
    std::string bounds;
    for (const std::uint32_t preemptions : capped)
        bounds += (bounds.empty() ? "" : ", ") + std::to_string(preemptions);
    return "the search" + std::string(capped.size() == 1 ? "" : "es") + " at " + bounds + " preemption(s) " +
           (capped.size() == 1 ? "was" : "were") + " capped at " + std::to_string(cap) +
           " schedules before completing";
}

/// Every (json pointer to an ops array, index) that may be removed: the
/// tasks' first, then the set-up's. A task's removal shrinks the
/// interleavings that every later search walks, and a removal that loses the
/// failure costs a complete search: the btrfs race's set-up fsync, tried
/// first, was kept at a cost of 4,098 schedules with four tasks, then 31,340
/// once the set-up sync had gone, where tried after the flusher's removal it
/// costs 652 (the whole shrink then fit its budget of 3,000; since timers
/// and the steps that add them no longer commute, about 5,500 of 10,000).
auto removable_ops(const Json& document) -> std::vector<std::pair<std::string, std::size_t>> {
    std::vector<std::pair<std::string, std::size_t>> places;
    // A generated workload ("workload": fio, fs_mark) and a task that
    // generates its ops have no op list to take ops from: they stay whole.
    const Json no_tasks = Json::array();
    const Json& tasks = document.contains("tasks") ? document["tasks"] : no_tasks;
    for (std::size_t t = 0; t < tasks.size(); t++) {
        if (!tasks[t].contains("ops")) continue;
        for (std::size_t i = 0; i < tasks[t]["ops"].size(); i++) {
            places.emplace_back("/tasks/" + std::to_string(t) + "/ops", i);
        }
    }
    // The set-up's creates stay: later ops name their files.
    const model::ModelInfo* info = model::find_model(document.value("model", ""));
    const model::OpInfo* create = info == nullptr ? nullptr : model::op_creating(*info);
    if (document.contains("setup")) {
        for (std::size_t i = 0; i < document["setup"].size(); i++) {
            if (create != nullptr && document["setup"][i].value("op", "") == create->name) continue;
            places.emplace_back("/setup", i);
        }
    }
    return places;
}

/// The document without one op; a task left without ops goes too. The
/// scripted schedule is dropped: a repro carries its own choices.
auto without(const Json& document, const std::string& pointer, std::size_t index) -> Json {
    Json reduced = document;
    reduced.erase("schedule");
    Json& ops = reduced[Json::json_pointer(pointer)];
    const std::string description = ops[index].dump();
    ops.erase(index);
    if (ops.empty() && pointer.starts_with("/tasks/")) {
        const std::size_t task = std::stoull(pointer.substr(7));
        reduced["tasks"].erase(task);
    }
    return reduced;
}

auto describe_op(const Json& document, const std::string& pointer, std::size_t index) -> std::string {
    const Json& op = document[Json::json_pointer(pointer)][index];
    const auto task_name = [&] {
        return document[Json::json_pointer(pointer.substr(0, pointer.size() - 4))]["name"].get<std::string>();
    };
    std::string where = pointer == "/setup" ? "set-up" : "task " + task_name();
    return "removed " + where + " operation " + op.dump();
}

/// The original run, replayed: the failure a shrink must keep is its first
/// violation.
auto replay_original(const Repro& original) -> RunOutcome {
    const loader::Scenario scenario = loader::parse_scenario(original.scenario_text, original.scenario_path);
    const loader::Variant* variant = scenario.find_variant(original.variant);
    SIM_ASSERT(variant != nullptr);
    Simulation simulation(scenario, *variant);
    simulation.set_bounds(original.bounds);
    const RunOutcome first = simulation.replay(original.choices, original.crash, false);
    SIM_ASSERT(first.violated());
    return first;
}

/// What removing operations came to.
struct OperationsShrunk {
    Json document;                           // the scenario with fewest operations
    Search initial;                          // the search of the original scenario
    std::optional<Found> best;               // the failing run of `document`
    std::vector<std::uint32_t> best_capped;  // below the best's preemptions
};

/// Fewest operations: drops one at a time while the same failure is found.
auto shrink_operations(const Repro& original, const Target& target, const ShrinkOptions& options,
                       Budget& budget, ShrinkResult& result) -> OperationsShrunk {
    OperationsShrunk shrunk;
    shrunk.document = Json::parse(original.scenario_text);
    shrunk.initial = search(original.scenario_text, original.scenario_path, original.variant, target, options,
                            original.bounds, budget);
    result.interrupted = shrunk.initial.interrupted;
    result.budget_spent = shrunk.initial.budget_spent;
    shrunk.best = shrunk.initial.found;
    shrunk.best_capped = shrunk.initial.capped;
    std::uint64_t removals_capped = 0;  // removals rejected by a capped search
    for (bool removed = true; removed && shrunk.best && !result.interrupted && !result.budget_spent;) {
        removed = false;
        for (const auto& [pointer, index] : removable_ops(shrunk.document)) {
            const Json reduced = without(shrunk.document, pointer, index);
            Search found = search(reduced.dump(2), original.scenario_path, original.variant, target, options,
                                  original.bounds, budget, shrunk.best->preemptions);
            if (found.interrupted || found.budget_spent) {
                result.interrupted = found.interrupted;
                result.budget_spent = found.budget_spent;
                break;
            }
            if (!found.found) {
                if (!found.capped.empty() && found.other.empty()) removals_capped++;
                continue;
            }
            result.log.push_back(describe_op(shrunk.document, pointer, index));
            shrunk.document = reduced;
            shrunk.best = std::move(found.found);
            shrunk.best_capped = found.capped;
            removed = true;
            break;
        }
    }
    if (removals_capped != 0) {
        result.log.push_back(std::to_string(removals_capped) +
                             " operation removal(s) rejected by a search capped at " +
                             std::to_string(options.schedules_per_search) +
                             " schedules: a smaller scenario may still fail the same way");
    }
    return shrunk;
}

/// The log line on preemptions: the fewest that fail the same way, or why the
/// original schedule stays (none when the search was interrupted: said once,
/// at the end).
auto preemptions_line(const OperationsShrunk& shrunk, const ShrinkOptions& options)
    -> std::optional<std::string> {
    const Search& initial = shrunk.initial;
    if (shrunk.best) {
        std::string line = "fewest preemptions: " + std::to_string(shrunk.best->preemptions);
        if (!shrunk.best_capped.empty()) {
            line += " (" + capped_text(shrunk.best_capped, options.schedules_per_search) +
                    ": fewer may fail the same way)";
        }
        return line;
    }
    if (initial.interrupted) return std::nullopt;
    if (initial.budget_spent) {
        return "the total shrink budget ran out before a bounded search failed the same way; kept the "
               "original schedule";
    }
    if (!initial.other.empty()) {
        return "a bounded search first fails another way (" + initial.other + "); kept the original schedule";
    }
    if (!initial.capped.empty()) {
        return "no schedule found with at most " + std::to_string(options.preemptions_max) +
               " preemptions that fails the same way, but " +
               capped_text(initial.capped, options.schedules_per_search) + "; kept the original schedule";
    }
    return "no schedule with at most " + std::to_string(options.preemptions_max) +
           " preemptions fails the same way; kept the original schedule";
}

/// Whether the run still fails the same way with the crash given.
using StillFails = std::function<bool(const CrashRecord&)>;

/// Fewer writes kept at the power cut, each dropped in turn.
void drop_kept_writes(std::optional<CrashRecord>& crash, const StillFails& still_fails,
                      ShrinkResult& result) {
    for (std::size_t i = 0; crash && i < crash->keep.size() && !result.budget_spent; i++) {
        if (!crash->keep[i]) continue;
        if (stop_requested()) {
            result.interrupted = true;
            break;
        }
        CrashRecord fewer = *crash;
        fewer.keep[i] = false;
        if (still_fails(fewer)) {
            crash = fewer;
            result.log.push_back("dropped kept unflushed write " + std::to_string(i));
        }
    }
}

/// Fewer device faults, each dropped in turn: a torn or a misdirected write
/// lost whole instead, a latent sector error a readable block.
void drop_device_faults(std::optional<CrashRecord>& crash, const StillFails& still_fails,
                        ShrinkResult& result) {
    // `faults` names the CrashRecord list.
    const auto drop_faults = [&](auto faults, const auto& describe) {
        for (std::size_t i = 0;
             crash && i < ((*crash).*faults).size() && !result.interrupted && !result.budget_spent;) {
            CrashRecord fewer = *crash;
            auto& list = fewer.*faults;
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
            if (still_fails(fewer)) {
                result.log.push_back("dropped " + describe(((*crash).*faults)[i]));
                crash = fewer;
            } else {
                i++;
            }
        }
    };
    drop_faults(&CrashRecord::torn, [](const auto& torn) {
        return "torn write of unflushed write " + std::to_string(torn.write);
    });
    drop_faults(&CrashRecord::misdirected, [](const auto& misdirected) {
        return "misdirected write of unflushed write " + std::to_string(misdirected.write);
    });
    drop_faults(&CrashRecord::unreadable,
                [](std::uint64_t block) { return "latent sector error of block " + std::to_string(block); });
}

/// Fewer writes kept at each power cut inside recovery, each dropped in turn.
void drop_recovery_writes(std::optional<CrashRecord>& crash, const StillFails& still_fails,
                          ShrinkResult& result) {
    for (std::size_t level = 0; crash && level < crash->recovery.size() && !result.interrupted; level++) {
        for (std::size_t i = 0; i < crash->recovery[level].keep.size() && !result.budget_spent; i++) {
            if (!crash->recovery[level].keep[i]) continue;
            if (stop_requested()) {
                result.interrupted = true;
                break;
            }
            CrashRecord fewer = *crash;
            fewer.recovery[level].keep[i] = false;
            if (still_fails(fewer)) {
                crash = fewer;
                result.log.push_back("dropped kept recovery write " + std::to_string(i) + " of power cut " +
                                     std::to_string(level + 1) + " inside recovery");
            }
        }
    }
}

/// Fewest kept unflushed writes (a liveness or deadlock violation has no
/// crash): each dropped in turn while the same failure is found. Leaves the
/// shrunk run, traced, in `result.outcome`.
void shrink_kept_writes(const std::string& text, const RunOutcome& outcome, const Repro& original,
                        const Target& target, Budget& budget, ShrinkResult& result) {
    const loader::Scenario shrunk_scenario = loader::parse_scenario(text, original.scenario_path);
    Simulation shrunk(shrunk_scenario, *shrunk_scenario.find_variant(original.variant));
    shrunk.set_bounds(original.bounds);
    std::optional<CrashRecord> crash = outcome.crash;
    // A crash whose recovery was cut: another kept subset may change what
    // the recovery writes, so that the recorded cut no longer fits
    // (ReplayDiverged); that subset is not taken.
    // Each try is one schedule of the total budget; a spent budget keeps
    // every fault and write still to try.
    const auto still_fails = [&](const CrashRecord& fewer) {
        if (budget.left() == 0) {
            result.budget_spent = true;
            return false;
        }
        budget.spent++;
        try {
            return target.matches(shrunk.replay(outcome.choices, fewer, false));
        } catch (const sim::ReplayDiverged&) {
            return false;
        }
    };
    drop_kept_writes(crash, still_fails, result);
    drop_device_faults(crash, still_fails, result);
    drop_recovery_writes(crash, still_fails, result);
    if (result.interrupted) {
        result.log.push_back("interrupted: shrinking stopped before it finished; this is as far as it got");
    } else if (result.budget_spent) {
        result.log.push_back(
            "budget: shrinking stopped on its total budget of " + std::to_string(budget.total) +
            " schedules (--shrink-budget); shrunk as far as the budget allowed, not minimal");
    }
    result.outcome = shrunk.replay(outcome.choices, crash, true);
    SIM_ASSERT(target.matches(result.outcome));
}

/// The shrunk repro: scenario `text` and the shrunk run of `result.outcome`.
void record_repro(const Repro& original, const std::string& text, ShrinkResult& result) {
    result.repro.scenario_text = text;
    result.repro.choices = result.outcome.choices;
    result.repro.crash = result.outcome.crash;
    result.repro.message = result.outcome.violations.front().message;
    result.repro.trace_hash = result.outcome.trace_hash;
    result.repro.shrink_log = result.log;
    result.changed =
        result.repro.choices != original.choices || text != original.scenario_text ||
        (result.repro.crash ? result.repro.crash->keep : std::vector<bool>{}) !=
            (original.crash ? original.crash->keep : std::vector<bool>{}) ||
        (result.repro.crash ? result.repro.crash->recovery : std::vector<RecoveryCut>{}) !=
            (original.crash ? original.crash->recovery : std::vector<RecoveryCut>{}) ||
        (result.repro.crash ? result.repro.crash->torn : std::vector<model::disk::TornWrite>{}) !=
            (original.crash ? original.crash->torn : std::vector<model::disk::TornWrite>{}) ||
        (result.repro.crash ? result.repro.crash->misdirected
                            : std::vector<model::disk::MisdirectedWrite>{}) !=
            (original.crash ? original.crash->misdirected : std::vector<model::disk::MisdirectedWrite>{}) ||
        (result.repro.crash ? result.repro.crash->unreadable : std::vector<std::uint64_t>{}) !=
            (original.crash ? original.crash->unreadable : std::vector<std::uint64_t>{});
}

}  // namespace

auto shrink(const Repro& original, const ShrinkOptions& options) -> ShrinkResult {
    // Every scenario text parsed here loaded once already; a stop is noticed
    // between runs and ends shrinking with what it reached.
    const loader::StopPollingPaused parsing_not_interrupted;
    ShrinkResult result;
    result.repro = original;
    const RunOutcome first = replay_original(original);
    const auto& violation = first.violations.front();
    const Target target{violation.checker, violation.file, violation.offset};
    // The operations' searches leave the kept writes' tries over (at most half).
    const std::uint64_t reserve = std::min(kept_writes_tries(first.crash), options.schedules_total / 2);
    Budget budget{options.schedules_total - reserve};
    const OperationsShrunk shrunk = shrink_operations(original, target, options, budget, result);
    budget.total = options.schedules_total;
    std::string text = original.scenario_text;
    RunOutcome outcome = first;
    if (shrunk.best) {
        if (!result.log.empty() || !shrunk.document.contains("schedule")) {
            text = shrunk.document.dump(2) + "\n";
        }
        outcome = shrunk.best->outcome;
    }
    if (auto line = preemptions_line(shrunk, options)) result.log.push_back(std::move(*line));
    shrink_kept_writes(text, outcome, original, target, budget, result);
    result.schedules = budget.spent;
    record_repro(original, text, result);
    return result;
}

}  // namespace runner
