#include "runner/repro.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

namespace runner {

namespace {
constexpr int repro_format = 1;
}  // namespace

void write_repro(const Repro& repro, const std::string& path) {
    nlohmann::ordered_json json;
    json["crashsim_repro"] = repro_format;
    json["scenario_path"] = repro.scenario_path;
    json["variant"] = repro.variant;
    json["strategy"] = repro.strategy;
    json["seed"] = repro.seed;
    json["schedule_index"] = repro.schedule_index;
    json["schedule_seed"] = repro.schedule_seed;
    json["choices"] = repro.choices;
    json["explore"] = explore_json(repro.bounds);
    if (repro.crash) {
        std::string keep;
        for (bool kept : repro.crash->keep) keep += kept ? '1' : '0';
        json["crash"] = {{"step", repro.crash->step}, {"after", repro.crash->after}, {"keep", keep}};
        // Power cuts inside recovery, outermost first.
        if (!repro.crash->recovery.empty()) {
            nlohmann::json cuts = nlohmann::json::array();
            for (const RecoveryCut& cut : repro.crash->recovery) {
                std::string cut_keep;
                for (bool kept : cut.keep) cut_keep += kept ? '1' : '0';
                cuts.push_back({{"requests", cut.requests}, {"after", cut.after}, {"keep", cut_keep}});
            }
            json["crash"]["recovery"] = cuts;
        }
        // Device faults the crash injected.
        if (!repro.crash->torn.empty()) {
            loader::Json torn = loader::Json::array();
            for (const auto& tear : repro.crash->torn)
                torn.push_back({{"write", tear.write}, {"sectors", tear.sectors}});
            json["crash"]["torn"] = torn;
        }
        if (!repro.crash->misdirected.empty()) {
            loader::Json misdirected = loader::Json::array();
            for (const auto& m : repro.crash->misdirected)
                misdirected.push_back({{"write", m.write}, {"victim", m.victim}});
            json["crash"]["misdirected"] = misdirected;
        }
        if (!repro.crash->unreadable.empty()) json["crash"]["unreadable"] = repro.crash->unreadable;
    }
    json["violation"] = {{"checker", repro.checker}, {"message", repro.message}};
    json["trace_hash"] = hex(repro.trace_hash);
    if (!repro.shrink_log.empty()) json["shrunk"] = repro.shrink_log;
    json["scenario"] = repro.scenario_text;
    write_text_file_atomically(path, json.dump(2) + "\n");
}

auto explore_json(const loader::ExploreBounds& bounds) -> nlohmann::json {
    return {{"io_reorders", bounds.io_reorders},
            {"daemon_wakeups", bounds.daemon_wakeups},
            {"steps", bounds.steps},
            {"progress_steps", bounds.progress_steps},
            {"recovery_crashes", bounds.recovery_crashes},
            {"daemons_settled", bounds.daemons_settled}};
}

auto read_explore_json(const loader::Json& file, const loader::JsonReader& in) -> loader::ExploreBounds {
    loader::ExploreBounds bounds{0, 0};
    // Files written before recovery_crashes was a bound explored none, and
    // before daemons_settled had every daemon's start race the tasks.
    bounds.recovery_crashes = 0;
    bounds.daemons_settled = false;
    if (!file.contains("explore")) return bounds;
    const loader::Json& explore = file.at("explore");
    // steps and progress_steps: absent in files written before they were bounds.
    in.check_keys(explore, "$.explore",
                  {"io_reorders", "daemon_wakeups", "steps", "progress_steps", "recovery_crashes",
                   "daemons_settled"},
                  {"io_reorders", "daemon_wakeups"});
    if (explore.contains("recovery_crashes")) {
        bounds.recovery_crashes = static_cast<std::uint32_t>(in.read_unsigned_in(
            explore.at("recovery_crashes"), "$.explore.recovery_crashes", 0, loader::recovery_crashes_max));
    }
    bounds.io_reorders = static_cast<std::uint32_t>(in.read_unsigned_in(
        explore.at("io_reorders"), "$.explore.io_reorders", 0, loader::explore_bound_max));
    bounds.daemon_wakeups = static_cast<std::uint32_t>(in.read_unsigned_in(
        explore.at("daemon_wakeups"), "$.explore.daemon_wakeups", 0, loader::explore_bound_max));
    if (explore.contains("daemons_settled")) {
        bounds.daemons_settled = in.read_bool(explore.at("daemons_settled"), "$.explore.daemons_settled");
    }
    if (explore.contains("steps")) {
        bounds.steps =
            in.read_unsigned_in(explore.at("steps"), "$.explore.steps", 1, loader::explore_steps_max);
    }
    if (explore.contains("progress_steps")) {
        bounds.progress_steps = in.read_unsigned_in(explore.at("progress_steps"), "$.explore.progress_steps",
                                                    1, loader::explore_steps_max);
    }
    return bounds;
}

auto read_hex64(const loader::Json& value, const std::string& json_path, const loader::JsonReader& in)
    -> std::uint64_t {
    const std::string expected = "16 hex digits";
    if (!value.is_string()) in.fail(json_path, expected, loader::type_name(value));
    const auto text = value.get<std::string>();
    const bool hex_digits = text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
                                return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                            });
    if (!hex_digits) in.fail(json_path, expected, loader::json_quoted(text));
    return std::stoull(text, nullptr, 16);
}

auto read_format(const loader::Json& file, const char* key, int format, const loader::JsonReader& in)
    -> void {
    const std::string json_path = std::string("$.") + key;
    if (!file.is_object()) in.fail("$", "an object", loader::type_name(file));
    if (!file.contains(key)) in.fail(json_path, std::to_string(format), "nothing");
    const loader::Json& given = file.at(key);
    if (!given.is_number_unsigned() || given.get<std::uint64_t>() != static_cast<std::uint64_t>(format)) {
        in.fail(json_path, std::to_string(format), given.dump());
    }
}

namespace {

auto read_keep(const loader::Json& value, const std::string& json_path, const loader::JsonReader& in)
    -> std::vector<bool> {
    std::vector<bool> keep;
    for (char c : in.read_string(value, json_path)) {
        if (c != '0' && c != '1')
            in.fail(json_path, "a string of 0 and 1", loader::json_quoted(std::string(1, c)));
        keep.push_back(c == '1');
    }
    return keep;
}

/// Torn writes: at most the largest fault budget; whether each
/// fits its crash is the replay's to say (ReplayDiverged).
/// The most a torn write's `write` index and `sectors` count may be in a
/// repro; whether they fit the crash is the replay's to say.
constexpr std::uint64_t torn_field_max = 1'000'000;
/// The most a misdirected write's victim block may be: the loader's bound
/// on device.blocks.
constexpr std::uint64_t victim_block_max = std::uint64_t{1} << 32;

auto read_torn(const loader::Json& value, const loader::JsonReader& in)
    -> std::vector<model::disk::TornWrite> {
    in.check_array(value, "$.crash.torn");
    if (value.size() > loader::fault_budget_max) {
        in.fail("$.crash.torn", "at most " + std::to_string(loader::fault_budget_max) + " torn writes",
                std::to_string(value.size()));
    }
    std::vector<model::disk::TornWrite> torn;
    for (std::size_t i = 0; i < value.size(); i++) {
        const std::string at = loader::index_path("$.crash.torn", i);
        in.check_keys(value[i], at, {"write", "sectors"}, {"write", "sectors"});
        model::disk::TornWrite tear;
        tear.write = in.read_unsigned_in(value[i].at("write"), at + ".write", 0, torn_field_max);
        tear.sectors = in.read_unsigned_in(value[i].at("sectors"), at + ".sectors", 1, torn_field_max);
        torn.push_back(tear);
    }
    return torn;
}

/// Misdirected writes, bounded as torn writes are; whether each
/// fits its crash is the replay's to say.
auto read_misdirected(const loader::Json& value, const loader::JsonReader& in)
    -> std::vector<model::disk::MisdirectedWrite> {
    in.check_array(value, "$.crash.misdirected");
    if (value.size() > loader::fault_budget_max) {
        in.fail("$.crash.misdirected",
                "at most " + std::to_string(loader::fault_budget_max) + " misdirected writes",
                std::to_string(value.size()));
    }
    std::vector<model::disk::MisdirectedWrite> misdirected;
    for (std::size_t i = 0; i < value.size(); i++) {
        const std::string at = loader::index_path("$.crash.misdirected", i);
        in.check_keys(value[i], at, {"write", "victim"}, {"write", "victim"});
        model::disk::MisdirectedWrite m;
        m.write = in.read_unsigned_in(value[i].at("write"), at + ".write", 0, torn_field_max);
        m.victim = in.read_unsigned_in(value[i].at("victim"), at + ".victim", 0, victim_block_max);
        misdirected.push_back(m);
    }
    return misdirected;
}

/// Latent sector errors: unreadable block numbers; whether they
/// fit the crash is the replay's to say.
auto read_unreadable(const loader::Json& value, const loader::JsonReader& in) -> std::vector<std::uint64_t> {
    in.check_array(value, "$.crash.unreadable");
    if (value.size() > loader::fault_budget_max) {
        in.fail("$.crash.unreadable",
                "at most " + std::to_string(loader::fault_budget_max) + " unreadable blocks",
                std::to_string(value.size()));
    }
    std::vector<std::uint64_t> blocks;
    for (std::size_t i = 0; i < value.size(); i++) {
        blocks.push_back(
            in.read_unsigned_in(value[i], loader::index_path("$.crash.unreadable", i), 0, victim_block_max));
    }
    return blocks;
}

void read_crash(const loader::Json& crash, const loader::JsonReader& in, Repro& repro) {
    in.check_keys(crash, "$.crash",
                  {"step", "after", "keep", "recovery", "torn", "misdirected", "unreadable"},
                  {"step", "after", "keep"});
    CrashRecord record;
    record.step = in.read_unsigned(crash.at("step"), "$.crash.step");
    record.after = in.read_string(crash.at("after"), "$.crash.after");
    record.keep = read_keep(crash.at("keep"), "$.crash.keep", in);
    if (crash.contains("recovery")) {
        const loader::Json& cuts = crash.at("recovery");
        in.check_array(cuts, "$.crash.recovery");
        if (cuts.size() > loader::recovery_crashes_max) {
            in.fail("$.crash.recovery", "at most " + std::to_string(loader::recovery_crashes_max) + " cuts",
                    std::to_string(cuts.size()));
        }
        for (std::size_t i = 0; i < cuts.size(); i++) {
            const std::string at = loader::index_path("$.crash.recovery", i);
            in.check_keys(cuts[i], at, {"requests", "after", "keep"}, {"requests", "after", "keep"});
            RecoveryCut cut;
            cut.requests = in.read_unsigned_in(cuts[i].at("requests"), at + ".requests", 1, 1'000'000);
            cut.after = in.read_string(cuts[i].at("after"), at + ".after");
            cut.keep = read_keep(cuts[i].at("keep"), at + ".keep", in);
            record.recovery.push_back(std::move(cut));
        }
    }
    if (crash.contains("torn")) record.torn = read_torn(crash.at("torn"), in);
    if (crash.contains("misdirected")) record.misdirected = read_misdirected(crash.at("misdirected"), in);
    if (crash.contains("unreadable")) record.unreadable = read_unreadable(crash.at("unreadable"), in);
    repro.crash = std::move(record);
}

auto read_string_array(const loader::Json& value, const std::string& json_path, const loader::JsonReader& in)
    -> std::vector<std::string> {
    in.check_array(value, json_path);
    std::vector<std::string> strings;
    for (std::size_t i = 0; i < value.size(); i++)
        strings.push_back(in.read_string(value[i], loader::index_path(json_path, i)));
    return strings;
}

}  // namespace

auto read_repro(const std::string& path) -> Repro {
    return parse_repro(loader::read_text_file(path, "repro file"), path);
}

auto parse_repro(const std::string& text, const std::string& path) -> Repro {
    loader::NumberTexts numbers;
    const loader::Json json = loader::parse_json(text, path, &numbers);
    const loader::JsonReader in(path, &numbers);
    read_format(json, "crashsim_repro", repro_format, in);
    in.check_keys(
        json, "$",
        {"crashsim_repro", "scenario_path", "variant", "strategy", "seed", "schedule_index", "schedule_seed",
         "choices", "explore", "crash", "violation", "trace_hash", "shrunk", "scenario"},
        // No crash: a liveness or deadlock violation.
        {"scenario_path", "variant", "strategy", "seed", "schedule_index", "schedule_seed", "choices",
         "violation", "trace_hash", "scenario"});
    Repro repro;
    repro.scenario_path = in.read_text(json.at("scenario_path"), "$.scenario_path");
    // The scenario's own text: a JSON file, so newlines and tabs are in it.
    if (!json.at("scenario").is_string())
        in.fail("$.scenario", "the scenario text", loader::type_name(json.at("scenario")));
    repro.scenario_text = json.at("scenario").get<std::string>();
    repro.variant = in.read_name(json.at("variant"), "$.variant");
    repro.strategy = in.read_name(json.at("strategy"), "$.strategy");
    repro.seed = in.read_unsigned(json.at("seed"), "$.seed");
    repro.schedule_index = in.read_unsigned(json.at("schedule_index"), "$.schedule_index");
    repro.schedule_seed = in.read_unsigned(json.at("schedule_seed"), "$.schedule_seed");
    const loader::Json& choices = json.at("choices");
    in.check_array(choices, "$.choices");
    for (std::size_t i = 0; i < choices.size(); i++) {
        repro.choices.push_back(static_cast<std::uint32_t>(in.read_unsigned_in(
            choices[i], loader::index_path("$.choices", i), 0, std::numeric_limits<std::uint32_t>::max())));
    }
    repro.bounds = read_explore_json(json, in);
    if (json.contains("crash")) read_crash(json.at("crash"), in, repro);
    const loader::Json& violation = json.at("violation");
    in.check_keys(violation, "$.violation", {"checker", "message"}, {"checker", "message"});
    repro.checker = in.read_name(violation.at("checker"), "$.violation.checker");
    if (!violation.at("message").is_string())
        in.fail("$.violation.message", "a string", loader::type_name(violation.at("message")));
    repro.message = violation.at("message").get<std::string>();
    if (json.contains("shrunk")) repro.shrink_log = read_string_array(json.at("shrunk"), "$.shrunk", in);
    repro.trace_hash = read_hex64(json.at("trace_hash"), "$.trace_hash", in);
    return repro;
}

namespace {

auto sanitize(std::string text) -> std::string {
    for (char& c : text) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
    }
    return text;
}

}  // namespace

auto make_repro(const FuzzReport& report, const FuzzRequest& request, const std::string& scenario_path,
                const std::string& scenario_text, const std::string& variant) -> Repro {
    Repro repro;
    repro.scenario_path = scenario_path;
    repro.scenario_text = scenario_text;
    repro.variant = variant;
    repro.strategy = request.strategy.text();
    repro.seed = request.seed;
    repro.schedule_index = report.index;
    repro.schedule_seed = report.schedule_seed;
    repro.choices = report.failing.choices;
    repro.bounds = report.bounds;
    repro.crash = report.failing.crash;
    repro.checker = report.failing.violations.front().checker;
    repro.message = report.failing.violations.front().message;
    repro.trace_hash = report.failing.trace_hash;
    return repro;
}

auto repro_file_name(const std::string& scenario, const std::string& variant, const std::string& strategy,
                     std::uint64_t seed, std::uint64_t schedule_index, std::optional<std::uint64_t> unit)
    -> std::string {
    return "repro-" + sanitize(scenario) + "-" + sanitize(variant) + "-" + sanitize(strategy) + "-seed" +
           std::to_string(seed) + (unit ? "-unit" + std::to_string(*unit) : std::string()) + "-schedule" +
           std::to_string(schedule_index) + ".json";
}

auto result_file_name(const std::string& scenario, const std::string& variant, const FuzzRequest& request)
    -> std::string {
    return "result-" + sanitize(scenario) + "-" + sanitize(variant) + "-" +
           sanitize(request.strategy.text()) + "-seed" + std::to_string(request.seed) + "-shard" +
           std::to_string(request.shard_index) + "of" + std::to_string(request.shard_count) + ".json";
}

auto load_repro(const std::string& path) -> LoadedRepro {
    return load_repro_text(loader::read_text_file(path, "repro file"), path);
}

auto load_repro_text(const std::string& text, const std::string& path) -> LoadedRepro {
    LoadedRepro loaded;
    loaded.repro = parse_repro(text, path);
    const Repro& repro = loaded.repro;
    try {
        loaded.scenario = loader::parse_scenario(repro.scenario_text, repro.scenario_path);
    } catch (const loader::InputError& error) {
        throw loader::InputError(
            path + ": $.scenario: expected the scenario it was found with, got one that does not load (" +
            error.what() + ")");
    }
    const loader::Variant* variant = loaded.scenario.find_variant(repro.variant);
    if (variant == nullptr) {
        throw loader::InputError(path + ": $.variant: expected a variant of the embedded scenario, got \"" +
                                 repro.variant + "\"");
    }
    try {
        Simulation simulation(loaded.scenario, *variant);
        simulation.set_bounds(repro.bounds);
        loaded.replayed = simulation.replay(repro.choices, repro.crash, true);
    } catch (const sim::ReplayDiverged& diverged) {
        // The field the divergence blames: the choices, the crash step or its keep list.
        throw loader::InputError(path + ": " + diverged.field() + ": expected " + diverged.expected() +
                                 ", got " + diverged.what());
    }
    const RunOutcome& outcome = loaded.replayed;
    if (!outcome.violated()) {
        throw loader::InputError(path + ": $.violation: expected a replay that violates " + repro.checker +
                                 ", got a run that holds (the repro does not reproduce its violation)");
    }
    if (outcome.violations.front().checker != repro.checker) {
        throw loader::InputError(path + ": $.violation.checker: expected " +
                                 outcome.violations.front().checker + " (what the replay violates), got " +
                                 loader::json_quoted(repro.checker));
    }
    if (outcome.trace_hash != repro.trace_hash) {
        throw loader::InputError(
            path + ": $.trace_hash: expected " + hex(outcome.trace_hash) + " (the replay's), got " +
            loader::json_quoted(hex(repro.trace_hash)) +
            ": the replay does not reproduce the recorded run (the repro was edited, or written by "
            "another version of crashsim)");
    }
    return loaded;
}

}  // namespace runner
