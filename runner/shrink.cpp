#include "runner/shrink.hpp"

#include <nlohmann/json.hpp>
#include <optional>

#include "model/info.hpp"
#include "runner/campaign.hpp"
#include "sim/assert.hpp"

namespace scenarios {
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

/// A failing run of `text` within the options' bounds, fewest preemptions first.
struct Found {
    RunOutcome outcome;
    std::uint32_t preemptions;
};

auto search(const std::string& text, const std::string& path, const std::string& variant_name,
            const Target& target, const ShrinkOptions& options, const ExploreBounds& bounds)
    -> std::optional<Found> {
    Scenario scenario;
    try {
        scenario = parse_scenario(text, path);
    } catch (const InputError&) {
        return std::nullopt;  // the removal left a scenario that does not load
    }
    const Variant* variant = scenario.find_variant(variant_name);
    if (variant == nullptr) return std::nullopt;
    std::optional<Simulation> simulation;
    try {
        simulation.emplace(scenario, *variant);
        simulation->set_bounds(bounds);
    } catch (const InputError&) {
        return std::nullopt;  // the set-up no longer completes
    }
    for (std::uint32_t preemptions = 0; preemptions <= options.preemptions_max; preemptions++) {
        FuzzRequest request;
        request.strategy.kind = sim::StrategySpec::Kind::dfs;
        request.strategy.preemptions = preemptions;
        request.schedules = options.schedules_per_search;
        const FuzzReport report = explore_exhaustively(*simulation, request);
        if (report.found && target.matches(report.failing)) {
            return Found{report.failing, preemptions};
        }
        if (report.found) return std::nullopt;  // another failure comes first: not the same story
    }
    return std::nullopt;
}

/// Every (json pointer to an ops array, index) that may be removed.
auto removable_ops(const Json& document) -> std::vector<std::pair<std::string, std::size_t>> {
    std::vector<std::pair<std::string, std::size_t>> places;
    // The set-up's creates stay: later ops name their files.
    const model::ModelInfo* info = model::find_model(document.value("model", ""));
    const model::OpInfo* create = info == nullptr ? nullptr : model::op_creating(*info);
    if (document.contains("setup")) {
        for (std::size_t i = 0; i < document["setup"].size(); i++) {
            if (create != nullptr && document["setup"][i].value("op", "") == create->name) continue;
            places.emplace_back("/setup", i);
        }
    }
    for (std::size_t t = 0; t < document["tasks"].size(); t++) {
        for (std::size_t i = 0; i < document["tasks"][t]["ops"].size(); i++) {
            places.emplace_back("/tasks/" + std::to_string(t) + "/ops", i);
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
    std::string where = pointer == "/setup" ? "set-up" : "task " + document[Json::json_pointer(pointer.substr(0, pointer.size() - 4))]["name"].get<std::string>();
    return "removed " + where + " operation " + op.dump();
}

}  // namespace

auto shrink(const Repro& original, const ShrinkOptions& options) -> ShrinkResult {
    ShrinkResult result;
    result.repro = original;
    Json document = Json::parse(original.scenario_text);
    const Scenario scenario = parse_scenario(original.scenario_text, original.scenario_path);
    const Variant* variant = scenario.find_variant(original.variant);
    SIM_ASSERT(variant != nullptr);
    // The place the original run fails.
    Simulation simulation(scenario, *variant);
    simulation.set_bounds(original.bounds);
    const RunOutcome first = simulation.replay(original.choices, original.crash, false);
    SIM_ASSERT(first.violated());
    const auto& violation = first.violations.front();
    const Target target{violation.checker, violation.file, violation.offset};

    // Fewest operations: drop one at a time while the same failure is found.
    std::optional<Found> best = search(original.scenario_text, original.scenario_path,
                                       original.variant, target, options, original.bounds);
    for (bool removed = true; removed && best;) {
        removed = false;
        for (const auto& [pointer, index] : removable_ops(document)) {
            const Json reduced = without(document, pointer, index);
            auto found = search(reduced.dump(2), original.scenario_path, original.variant, target, options,
                                original.bounds);
            if (!found) continue;
            result.log.push_back(describe_op(document, pointer, index));
            document = reduced;
            best = std::move(found);
            removed = true;
            break;
        }
    }
    std::string text = original.scenario_text;
    RunOutcome outcome = first;
    if (best) {
        if (!result.log.empty() || !document.contains("schedule")) text = document.dump(2) + "\n";
        outcome = best->outcome;
        result.log.push_back("fewest preemptions: " + std::to_string(best->preemptions));
    } else {
        result.log.push_back("no schedule with at most " + std::to_string(options.preemptions_max) +
                             " preemptions fails the same way; kept the original schedule");
    }
    // Fewest kept unflushed writes.
    const Scenario shrunk_scenario = parse_scenario(text, original.scenario_path);
    Simulation shrunk(shrunk_scenario, *shrunk_scenario.find_variant(original.variant));
    shrunk.set_bounds(original.bounds);
    CrashRecord crash = *outcome.crash;
    for (std::size_t i = 0; i < crash.keep.size(); i++) {
        if (!crash.keep[i]) continue;
        CrashRecord fewer = crash;
        fewer.keep[i] = false;
        if (target.matches(shrunk.replay(outcome.choices, fewer, false))) {
            crash = fewer;
            result.log.push_back("dropped kept unflushed write " + std::to_string(i));
        }
    }
    result.outcome = shrunk.replay(outcome.choices, crash, true);
    SIM_ASSERT(target.matches(result.outcome));
    result.repro.scenario_text = text;
    result.repro.choices = result.outcome.choices;
    result.repro.crash = *result.outcome.crash;
    result.repro.message = result.outcome.violations.front().message;
    result.repro.trace_hash = result.outcome.trace_hash;
    result.repro.shrink_log = result.log;
    result.changed = result.repro.choices != original.choices || text != original.scenario_text ||
                     result.repro.crash.keep != original.crash.keep;
    return result;
}

}  // namespace scenarios
