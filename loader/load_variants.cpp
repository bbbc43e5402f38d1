// Reads the checkers, the fuzz budgets and the variants: each variant's
// configuration (checked to fit the device), machine profile, must_reach
// points and expectation (holds, violates a checker, measure, faults).
#include <algorithm>
#include <string>

#include "checkers/checker.hpp"
#include "loader/json_reader.hpp"
#include "loader/loader_impl.hpp"
#include "loader/scenario.hpp"
#include "model/filesystem.hpp"
#include "model/info.hpp"
#include "model/registry.hpp"
#include "sim/strategy.hpp"

namespace loader {

void Loader::read_checkers(const Json& value) {
    check_array(value, "$.checkers");
    if (value.empty()) fail("$.checkers", "a non-empty array", "an empty array");
    for (std::size_t index = 0; index < value.size(); index++) {
        const auto checker_path = index_path("$.checkers", index);
        auto checker =
            read_choice(value[index], checker_path, checkers::scenario_checker_names(), "the checkers ");
        if (contains(scenario_.checkers, checker)) {
            fail(checker_path, "a checker not listed before", json_quoted(checker));
        }
        scenario_.checkers.push_back(std::move(checker));
    }
}

auto Loader::read_budget(const Json& value, const std::string& json_path) const -> FuzzBudget {
    check_keys(value, json_path, {"strategies", "schedules", "dfs_schedules", "seed", "states"},
               {"strategies", "schedules"});
    FuzzBudget budget;
    const auto& strategies = value.at("strategies");
    const auto strategies_path = json_path + ".strategies";
    check_array(strategies, strategies_path);
    if (strategies.empty()) fail(strategies_path, "a non-empty array", "an empty array");
    for (std::size_t index = 0; index < strategies.size(); index++) {
        const auto strategy_path = index_path(strategies_path, index);
        const sim::StrategySpec strategy = read_strategy(strategies[index], strategy_path);
        const bool listed =
            std::any_of(budget.strategies.begin(), budget.strategies.end(),
                        [&](const sim::StrategySpec& s) { return s.text() == strategy.text(); });
        if (listed) fail(strategy_path, "a strategy not listed before", json_quoted(strategy.text()));
        budget.strategies.push_back(strategy);
    }
    budget.schedules = read_positive(value.at("schedules"), json_path + ".schedules");
    if (value.contains("dfs_schedules")) {
        budget.dfs_schedules = read_positive(value.at("dfs_schedules"), json_path + ".dfs_schedules");
        const bool dfs =
            std::any_of(budget.strategies.begin(), budget.strategies.end(),
                        [](const sim::StrategySpec& s) { return s.kind == sim::StrategySpec::Kind::dfs; });
        if (!dfs) fail(json_path + ".dfs_schedules", "a dfs strategy in strategies to cap", "none");
    }
    if (value.contains("seed")) budget.seed = read_unsigned(value.at("seed"), json_path + ".seed");
    if (value.contains("states")) {
        budget.states = read_states(value.at("states"), json_path + ".states", budget);
    }
    return budget;
}

auto Loader::read_states(const Json& value, const std::string& json_path, const FuzzBudget& budget) const
    -> sim::VisitedKey {
    const std::string key = read_choice(value, json_path, {"none", "locals", "reads"}, "");
    const bool dfs =
        std::any_of(budget.strategies.begin(), budget.strategies.end(),
                    [](const sim::StrategySpec& s) { return s.kind == sim::StrategySpec::Kind::dfs; });
    if (key != "none" && !dfs) fail(json_path, "a dfs strategy in strategies to remember states for", "none");
    if (key == "locals") return sim::VisitedKey::locals;
    return key == "reads" ? sim::VisitedKey::reads : sim::VisitedKey::none;
}

// Only canonical spellings ("pct:3", not "pct:03"), since strategies are printed back in
// repro files and compared as strings; sim::parse_strategy is the one definition.
auto Loader::read_strategy(const Json& value, const std::string& json_path) const -> sim::StrategySpec {
    const std::string expected = std::string("one of ") + sim::strategy_spellings;
    if (!value.is_string()) fail(json_path, expected, type_name(value));
    auto strategy = value.get<std::string>();
    sim::StrategySpec spec;
    if (!sim::parse_strategy(strategy, spec)) fail(json_path, expected, json_quoted(strategy));
    return spec;
}

void Loader::read_variants(const Json& value) {
    check_array(value, "$.variants");
    if (value.empty()) fail("$.variants", "a non-empty array", "an empty array");
    for (std::size_t index = 0; index < value.size(); index++) {
        const auto variant_path = index_path("$.variants", index);
        scenario_.variants.push_back(read_variant(value[index], variant_path));
    }
}

auto Loader::read_variant(const Json& value, const std::string& json_path) const -> Variant {
    check_keys(value, json_path, {"name", "config", "expect", "must_reach", "machine"}, {"name", "expect"});
    Variant variant;
    const auto name_path = json_path + ".name";
    variant.name = read_name(value.at("name"), name_path);
    if (scenario_.find_variant(variant.name) != nullptr) {
        fail(name_path, "a variant name not used before", json_quoted(variant.name));
    }
    variant.config = config_base_;
    if (value.contains("config")) {
        for (auto& [knob, knob_value] : read_config(value.at("config"), json_path + ".config")) {
            variant.config[knob] = knob_value;
        }
    }
    // Every knob gets a value, so that later code never consults the model's defaults.
    for (const auto& knob : model_->knobs) {
        variant.config.try_emplace(knob.name, knob.default_value);
    }
    check_layout(value, json_path, variant.config);
    if (value.contains("machine")) {
        variant.machine = read_string(value.at("machine"), json_path + ".machine");
        if (scenario_.machines.count(variant.machine) == 0) {
            Names names;
            for (const auto& [name, profile] : scenario_.machines) names.push_back(name);
            fail(json_path + ".machine",
                 names.empty() ? "no machine (the scenario declares no machines)"
                               : "a machine profile: " + join(names),
                 json_quoted(variant.machine));
        }
    }
    variant.expect = read_expectation(value.at("expect"), json_path + ".expect");
    variant.must_reach = value.contains("must_reach")
                             ? read_must_reach(value.at("must_reach"), json_path + ".must_reach", must_reach_)
                             : must_reach_;
    return variant;
}

// A variant's configuration must fit the device (model::LayoutError): the
// knob is named where it was set, the variant's config or the scenario's.
void Loader::check_layout(const Json& variant, const std::string& json_path,
                          const model::Config& config) const {
    model::Geometry geometry{};
    geometry.block_size = scenario_.device.block_size;
    geometry.blocks = scenario_.device.blocks;
    geometry.profile = scenario_.device.profile;
    const auto error = model::layout_error(scenario_.model, config, geometry);
    if (!error) return;
    const bool in_variant = variant.contains("config") && variant.at("config").contains(error->knob);
    const std::string where = in_variant                              ? json_path + ".config." + error->knob
                              : config_base_.count(error->knob) != 0 ? "$.config." + error->knob
                                                                      : json_path + ".config";
    fail(where, error->expected, error->got);
}

auto Loader::read_expectation(const Json& value, const std::string& json_path) const
    -> Expectation {
    Expectation expect;
    expect.fuzz = fuzz_default_;
    if (value.is_string() && value.get<std::string>() == "holds") return expect;
    if (value.is_string() && value.get<std::string>() == "measure") {
        expect.kind = Expectation::Kind::measure;
        return expect;
    }
    if (!value.is_object()) {
        fail(json_path, "\"holds\", \"measure\" or an object",
             value.is_string() ? json_quoted(value.get<std::string>()) : type_name(value));
    }
    check_keys(value, json_path, {"violates", "holds", "fuzz", "faults"}, {});
    const bool violates = value.contains("violates");
    const bool holds = value.contains("holds");
    if (violates && holds) fail(json_path, "exactly one of the keys violates, holds", "both");
    if (!violates && !holds) {
        fail(json_path, "one of the keys violates, holds",
             value.empty() ? "an empty object" : "neither");
    }
    if (violates) {
        expect.kind = Expectation::Kind::violates;
        Names violable = scenario_.checkers;
        if (!scenario_.crash.mount_may_fail) violable.push_back("mount");  // always on
        if (scenario_.faults.budget > 0) violable.push_back("fault_outcome");  // on with faults
        expect.checker = read_choice(value.at("violates"), json_path + ".violates", violable,
                                     "the scenario's checkers ");
    } else if (value.at("holds") != true) {
        const auto& given = value.at("holds");
        fail(json_path + ".holds", "true", given.is_boolean() ? "false" : type_name(given));
    }
    if (value.contains("fuzz")) expect.fuzz = read_budget(value.at("fuzz"), json_path + ".fuzz");
    if (value.contains("faults")) read_fault_expectation(value.at("faults"), json_path + ".faults", expect);
    return expect;
}

/// expect.faults: {"detected": true, "survived": true}, either or both, on a
/// scenario whose faults a crash may inject.
void Loader::read_fault_expectation(const Json& value, const std::string& json_path,
                                    Expectation& expect) const {
    if (scenario_.faults.budget == 0) {
        fail(json_path, "a scenario with a fault budget ($.faults.budget)", "a scenario without faults");
    }
    check_keys(value, json_path, {"detected", "survived"}, {});
    if (value.empty()) fail(json_path, "one of the keys detected, survived", "an empty object");
    const auto read_true = [&](const char* key, bool& into) {
        if (!value.contains(key)) return;
        const Json& given = value.at(key);
        if (given != true)
            fail(json_path + "." + key, "true", given.is_boolean() ? "false" : type_name(given));
        into = true;
    };
    read_true("detected", expect.faults_detected);
    read_true("survived", expect.faults_survived);
}

}  // namespace loader
