#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "runner/repro.hpp"

namespace report {
namespace {

auto faults_json(const runner::FaultCounts& faults) -> loader::Json {
    return {{"injected", faults.injected}, {"survived", faults.survived}, {"detected", faults.detected}};
}



auto xml_escape(const std::string& text) -> std::string {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default:
                // XML 1.0 forbids most control characters.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
                    out += '?';
                } else {
                    out += c;
                }
        }
    }
    return out;
}

auto seconds_text(double seconds) -> std::string {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", seconds);
    return text;
}

/// The stake counts and yield-point coverage of a row, for the JUnit output.
auto junit_coverage_text(const runner::CheckRow& row) -> std::string {
    if (row.judged.empty() && row.reached.empty()) return "";
    return "\njudged (crash states with something at stake): " + runner::judged_text(row.judged) +
           "\nyield points: " + runner::coverage_text(row.reached) + "\n" + runner::hits_text(row.reached);
}

auto attempt_json(const runner::CheckAttempt& attempt) -> loader::Json {
    loader::Json json = {{"strategy", attempt.strategy}, {"schedules", attempt.schedules},
                         {"crash_states", attempt.crash_states}, {"found", attempt.found}};
    if (attempt.found) {
        json["index"] = attempt.index;
        json["checker"] = attempt.checker;
    }
    if (attempt.strategy.starts_with("dfs:")) {
        json["complete"] = attempt.complete;
        json["pruned_by_sleep_sets"] = attempt.pruned;
    }
    return json;
}

}  // namespace

void add_coverage_json(loader::Json& json, const runner::Counts& judged, const runner::Counts& reached) {
    loader::Json judged_json = loader::Json::object();
    for (const auto& [name, count] : judged) judged_json[name] = count;
    loader::Json hits = loader::Json::object();
    loader::Json never = loader::Json::array();
    std::uint64_t reached_count = 0;
    for (const auto& [name, count] : reached) {
        hits[name] = count;
        if (count == 0) {
            never.push_back(name);
        } else {
            reached_count++;
        }
    }
    json["judged"] = judged_json;
    json["coverage"] = {{"points", reached.size()}, {"reached", reached_count}, {"never_reached", never},
                        {"hits", hits}};
}

namespace {

/// Every model's yield points summed over the rows: {"coverage": {"btrfs": {...}}}.
void add_model_coverage_json(loader::Json& summary, const std::vector<runner::CheckRow>& rows) {
    std::vector<std::pair<std::string, runner::Counts>> reached;
    for (const auto& row : rows) reached.emplace_back(row.model, row.reached);
    loader::Json models = loader::Json::object();
    for (const auto& [model, counts] : runner::coverage_by_model(reached)) {
        loader::Json member = loader::Json::object();
        add_coverage_json(member, {}, counts);
        models[model] = member["coverage"];
    }
    summary["coverage"] = models;
}

}  // namespace

namespace {

/// A row an interrupted check never ran or cut short: skipped, not failed.
auto not_run(const runner::CheckRow& row) -> bool { return row.skipped || row.interrupted; }

/// The counts of a JUnit <testsuites> or <testsuite> element.
struct JunitCounts {
    std::size_t failures = 0;
    std::size_t errors = 0;  // rows that could not be checked: <error>, not <failure>
    std::size_t skipped = 0;
    double seconds = 0;  // the rows' own times, summed
};

auto junit_counts(const std::vector<const runner::CheckRow*>& rows) -> JunitCounts {
    JunitCounts counts;
    for (const runner::CheckRow* row : rows) {
        if (not_run(*row)) {
            counts.skipped++;
        } else if (!row->met) {
            (row->error ? counts.errors : counts.failures)++;
        }
        counts.seconds += row->seconds;
    }
    return counts;
}

/// A row of a scenario with a fault budget: its device fault
/// counts as <properties> (JUnit's per-testcase key/value pairs), also told
/// in <system-out>; nothing for a scenario without faults.
auto junit_fault_properties(const runner::CheckRow& row) -> std::string {
    if (!row.faults) return "";
    const runner::FaultCounts& faults = *row.faults;
    const auto property = [](const char* name, std::uint64_t value) {
        return "        <property name=\"" + std::string(name) + "\" value=\"" + std::to_string(value) +
               "\"/>\n";
    };
    return "      <properties>\n" + property("faults.injected", faults.injected) +
           property("faults.survived", faults.survived) + property("faults.detected", faults.detected) +
           property("faults.neither", faults.neither()) + "      </properties>\n";
}

/// One <testcase>: skipped, an error, a failure with its story and command,
/// or passed; its output says what was explored.
auto junit_testcase(const std::string& scenario, const runner::CheckRow& row) -> std::string {
    std::string xml = "    <testcase classname=\"" + xml_escape(scenario) + "\" name=\"" +
                      xml_escape(row.variant + ": " + row.expectation) + "\" file=\"" +
                      xml_escape(row.scenario_path) + "\" time=\"" + seconds_text(row.seconds) + "\">\n";
    if (not_run(row)) {
        xml += "      <skipped message=\"" + xml_escape(row.detail) + "\"/>\n";
    } else if (row.error) {
        xml += "      <error type=\"input\" message=\"" + xml_escape(row.detail) + "\">" +
               xml_escape(row.detail + "\n") + "</error>\n";
    } else if (!row.met) {
        std::string body = row.detail + "\n";
        if (!row.story.empty()) body += "\n" + row.story;
        if (!row.command.empty()) body += "\nreproduce with: " + row.command + "\n";
        xml += "      <failure type=\"expectation\" message=\"" + xml_escape(row.detail) + "\">" +
               xml_escape(body) + "</failure>\n";
    }
    xml += junit_fault_properties(row);
    xml += "      <system-out>" +
           xml_escape(row.detail + "; " + std::to_string(row.schedules) + " schedules, " +
                      std::to_string(row.crash_states) + " crash states" +
                      (row.faults ? "\n" + fault_counts_text(*row.faults) : std::string()) +
                      junit_coverage_text(row)) +
           "</system-out>\n";
    xml += "    </testcase>\n";
    return xml;
}

}  // namespace

void write_junit(const std::vector<runner::CheckRow>& rows, double seconds, const std::string& path) {
    std::map<std::string, std::vector<const runner::CheckRow*>> suites;  // by scenario, sorted
    std::vector<const runner::CheckRow*> all;
    for (const auto& row : rows) {
        suites[row.scenario].push_back(&row);
        all.push_back(&row);
    }
    const JunitCounts total = junit_counts(all);
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    xml += "<testsuites name=\"crashsim check" + std::string(total.skipped != 0 ? " (interrupted)" : "") +
           "\" tests=\"" + std::to_string(rows.size()) + "\" failures=\"" + std::to_string(total.failures) +
           "\" errors=\"" + std::to_string(total.errors) + "\" skipped=\"" + std::to_string(total.skipped) +
           "\" time=\"" + seconds_text(seconds) + "\">\n";
    for (const auto& [scenario, members] : suites) {
        const JunitCounts suite = junit_counts(members);
        xml += "  <testsuite name=\"" + xml_escape(scenario) + "\" tests=\"" +
               std::to_string(members.size()) + "\" failures=\"" + std::to_string(suite.failures) +
               "\" errors=\"" + std::to_string(suite.errors) + "\" skipped=\"" +
               std::to_string(suite.skipped) + "\" time=\"" + seconds_text(suite.seconds) + "\">\n";
        for (const runner::CheckRow* row : members) xml += junit_testcase(scenario, *row);
        xml += "  </testsuite>\n";
    }
    xml += "</testsuites>\n";
    runner::write_text_file_atomically(path, xml);
}

void write_check_json(const std::vector<runner::CheckRow>& rows, double seconds, const std::string& path) {
    loader::Json list = loader::Json::array();
    std::size_t met = 0;
    std::size_t skipped = 0;
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    std::size_t errors = 0;
    for (const auto& row : rows) {
        if (row.met) met++;
        if (not_run(row)) skipped++;
        if (row.error) errors++;
        schedules += row.schedules;
        crash_states += row.crash_states;
        loader::Json attempts = loader::Json::array();
        for (const auto& attempt : row.attempts) attempts.push_back(attempt_json(attempt));
        loader::Json json = {{"scenario", row.scenario}, {"file", row.scenario_path},
                             {"variant", row.variant}, {"expectation", row.expectation}, {"met", row.met},
                             {"detail", row.detail}, {"schedules", row.schedules},
                             {"crash_states", row.crash_states}, {"seconds", row.seconds},
                             {"attempts", attempts}};
        if (!row.command.empty()) json["reproduce"] = row.command;
        if (!row.story.empty()) json["story"] = row.story;
        if (row.interrupted) json["interrupted"] = true;
        if (row.skipped) json["skipped"] = true;
        if (row.schedules_cut != 0) json["schedules_cut_at_step_bound"] = row.schedules_cut;
        if (row.error) json["error"] = row.detail;  // not checked: the file or run failed on its input
        if (row.bounds) json["explore"] = runner::explore_json(*row.bounds);
        if (row.faults) json["faults"] = faults_json(*row.faults);
        if (!row.judged.empty() || !row.reached.empty()) add_coverage_json(json, row.judged, row.reached);
        list.push_back(std::move(json));
    }
    loader::Json report = {{"crashsim_check", 1},
                           {"summary",
                            {{"variants", rows.size()},
                             {"met", met},
                             {"failed", rows.size() - met - skipped - errors},
                             {"errors", errors},
                             {"skipped", skipped},
                             {"interrupted", skipped != 0},
                             {"schedules", schedules},
                             {"crash_states", crash_states},
                             {"seconds", seconds}}},
                           {"variants", list}};
    add_model_coverage_json(report["summary"], rows);
    runner::write_text_file_atomically(path, report.dump(2) + "\n");
}

namespace {

/// A shard's carries its split, which merge compares; a whole search's
/// (unsharded, or merged) does not: the split is how the jobs shared the
/// work, and the result is the same for any --jobs.
auto dfs_json(const runner::DfsResult& dfs, bool sharded) -> loader::Json {
    loader::Json json = {{"complete", dfs.complete},
                         {"pruned_by_sleep_sets", dfs.stats.pruned_sleep},
                         {"pruned_by_bound", dfs.stats.pruned_bound},
                         {"runs_cut_as_redundant", dfs.stats.abandoned}};
    if (sharded) {
        json["split_depth"] = dfs.split_depth;
        json["units"] = dfs.units;
        json["units_explored"] = dfs.units_explored;
        loader::Json units = loader::Json::array();
        for (const auto& [unit, schedules] : dfs.unit_schedules) units.push_back({unit, schedules});
        json["unit_schedules"] = units;
    }
    return json;
}

auto estimate_json(const runner::SearchEstimate& estimate) -> loader::Json {
    loader::Json json = {{"method", !estimate.dfs ? "sample" : estimate.stratified ? "stratified" : "knuth"},
                         {"walks", estimate.walks},
                         {"seed", estimate.seed},
                         {"schedules", estimate.schedules},
                         {"schedules_standard_error", estimate.schedules_error},
                         {"crash_states", estimate.crash_states},
                         {"steps", estimate.steps}};
    if (estimate.walks_stopped != 0) {
        json["walks_stopped"] = estimate.walks_stopped;
        json["stopped_depth"] = estimate.stopped_depth;
    }
    if (estimate.timed) {
        json["seconds"] = estimate.seconds;
        json["seconds_per_run"] = estimate.seconds_per_run;
        json["seconds_per_crash_state"] = estimate.seconds_per_crash_state;
        json["estimating_seconds"] = estimate.estimating_seconds;
    }
    return json;
}

}  // namespace

auto campaign_result_text(const runner::CampaignResult& result) -> std::string {
    loader::Json violations = loader::Json::array();
    for (const auto& found : result.violations) {
        loader::Json json = {{"index", found.index}, {"schedule_seed", found.schedule_seed},
                             {"checker", found.violation.checker}, {"file", found.violation.file},
                             {"offset", found.violation.offset}, {"message", found.violation.message}};
        if (found.unit) json["unit"] = *found.unit;
        violations.push_back(std::move(json));
    }
    const std::string hash = runner::hex(result.scenario_hash);
    loader::Json json = {{"crashsim_result", 1},
                               {"scenario", result.scenario},
                               {"scenario_hash", hash},
                               {"variant", result.variant},
                               {"strategy", result.strategy},
                               {"seed", result.seed},
                               {"schedules", result.schedules},
                               {"shard", {{"index", result.shard_index}, {"count", result.shard_count}}},
                               {"schedules_run", result.schedules_run},
                               {"crash_states", result.crash_states},
                               {"steps", result.steps},
                               {"interrupted", result.interrupted},
                               {"explore", runner::explore_json(result.bounds)},
                               {"violations", violations}};
    add_coverage_json(json, result.judged, result.reached);
    if (result.dfs) json["dfs"] = dfs_json(*result.dfs, result.shard_count > 1);
    if (result.faults) json["faults"] = faults_json(*result.faults);
    if (result.estimate) json["estimate"] = estimate_json(*result.estimate);
    return json.dump(2) + "\n";
}

void write_campaign_result(const runner::CampaignResult& result, const std::string& path) {
    runner::write_text_file_atomically(path, campaign_result_text(result));
}

namespace {

/// An optional object of unsigned counts, in the file's order.
auto read_counts(const loader::Json& json, const std::string& key, const std::string& where,
                 const loader::JsonReader& in) -> runner::Counts {
    runner::Counts counts;
    if (!json.contains(key)) return counts;
    const loader::Json& object = json.at(key);
    const std::string json_path = loader::key_path(where, key);
    if (!object.is_object()) in.fail(json_path, "an object", loader::type_name(object));
    for (const auto& [name, count] : object.items()) {
        counts.emplace_back(name, in.read_unsigned(count, loader::key_path(json_path, name)));
    }
    return counts;
}

auto read_found(const loader::Json& value, const std::string& where, const loader::JsonReader& in)
    -> runner::FoundViolation {
    in.check_keys(value, where, {"index", "schedule_seed", "checker", "file", "offset", "message", "unit"},
                  {"index", "schedule_seed", "checker", "file", "offset", "message"});
    runner::FoundViolation found{};
    found.index = in.read_unsigned(value.at("index"), where + ".index");
    found.schedule_seed = in.read_unsigned(value.at("schedule_seed"), where + ".schedule_seed");
    found.violation.checker = in.read_name(value.at("checker"), where + ".checker");
    found.violation.file = in.read_string(value.at("file"), where + ".file");
    found.violation.offset = in.read_unsigned(value.at("offset"), where + ".offset");
    if (!value.at("message").is_string())
        in.fail(where + ".message", "a string", loader::type_name(value.at("message")));
    found.violation.message = value.at("message").get<std::string>();
    if (value.contains("unit")) found.unit = in.read_unsigned(value.at("unit"), where + ".unit");
    return found;
}

auto read_dfs(const loader::Json& value, const loader::JsonReader& in) -> runner::DfsResult {
    const loader::Names required = {"complete", "pruned_by_sleep_sets", "pruned_by_bound",
                                    "runs_cut_as_redundant"};
    const loader::Names keys = {"complete", "split_depth", "units", "units_explored", "unit_schedules",
                                "pruned_by_sleep_sets", "pruned_by_bound", "runs_cut_as_redundant"};
    in.check_keys(value, "$.dfs", keys, required);
    runner::DfsResult dfs;
    dfs.complete = in.read_bool(value.at("complete"), "$.dfs.complete");
    // A shard's split (dfs_json); a whole search's result has none.
    const auto optional = [&](const char* key) -> std::uint64_t {
        return value.contains(key) ? in.read_unsigned(value.at(key), std::string("$.dfs.") + key) : 0;
    };
    dfs.split_depth = optional("split_depth");
    dfs.units = optional("units");
    dfs.units_explored = optional("units_explored");
    if (value.contains("unit_schedules")) {
        const loader::Json& units = value.at("unit_schedules");
        in.check_array(units, "$.dfs.unit_schedules");
        for (std::size_t i = 0; i < units.size(); i++) {
            const std::string where = "$.dfs.unit_schedules[" + std::to_string(i) + "]";
            if (!units[i].is_array() || units[i].size() != 2) {
                in.fail(where, "a [unit, schedules] pair", loader::type_name(units[i]));
            }
            dfs.unit_schedules.emplace_back(in.read_unsigned(units[i][0], where + "[0]"),
                                            in.read_unsigned(units[i][1], where + "[1]"));
        }
    }
    dfs.stats.pruned_sleep = in.read_unsigned(value.at("pruned_by_sleep_sets"), "$.dfs.pruned_by_sleep_sets");
    dfs.stats.pruned_bound = in.read_unsigned(value.at("pruned_by_bound"), "$.dfs.pruned_by_bound");
    dfs.stats.abandoned = in.read_unsigned(value.at("runs_cut_as_redundant"), "$.dfs.runs_cut_as_redundant");
    return dfs;
}

/// `faults`: the counts, none of them past the faults injected.
auto read_faults(const loader::Json& value, const loader::JsonReader& in) -> runner::FaultCounts {
    const loader::Names keys = {"injected", "survived", "detected"};
    in.check_keys(value, "$.faults", keys, keys);
    runner::FaultCounts faults;
    faults.injected = in.read_unsigned(value.at("injected"), "$.faults.injected");
    faults.survived = in.read_unsigned_in(value.at("survived"), "$.faults.survived", 0, faults.injected);
    faults.detected =
        in.read_unsigned_in(value.at("detected"), "$.faults.detected", 0, faults.injected - faults.survived);
    return faults;
}

/// A figure of an estimate: a finite number, 0 or more.
auto read_figure(const loader::Json& object, const std::string& key, const loader::JsonReader& in) -> double {
    const loader::Json& value = object.at(key);
    const std::string where = loader::key_path("$.estimate", key);
    if (!value.is_number()) in.fail(where, "a number", loader::type_name(value));
    const double figure = value.get<double>();
    if (!std::isfinite(figure) || figure < 0) in.fail(where, "a number of 0 or more", in.number_text(value));
    return figure;
}

auto read_estimate(const loader::Json& value, const loader::JsonReader& in) -> runner::SearchEstimate {
    const loader::Names timed = {"seconds", "seconds_per_run", "seconds_per_crash_state",
                                 "estimating_seconds"};
    loader::Names allowed = {"method",       "walks", "seed", "schedules", "schedules_standard_error",
                             "crash_states", "steps"};
    const loader::Names required = allowed;
    const loader::Names stopped = {"walks_stopped", "stopped_depth"};
    allowed.insert(allowed.end(), timed.begin(), timed.end());
    allowed.insert(allowed.end(), stopped.begin(), stopped.end());
    in.check_keys(value, "$.estimate", allowed, required);
    runner::SearchEstimate estimate;
    const std::string method =
        in.read_choice(value.at("method"), "$.estimate.method", {"knuth", "stratified", "sample"}, "");
    estimate.dfs = method != "sample";
    estimate.stratified = method == "stratified";
    estimate.walks = in.read_unsigned(value.at("walks"), "$.estimate.walks");
    estimate.seed = in.read_unsigned(value.at("seed"), "$.estimate.seed");
    estimate.schedules = read_figure(value, "schedules", in);
    estimate.schedules_error = read_figure(value, "schedules_standard_error", in);
    estimate.crash_states = read_figure(value, "crash_states", in);
    estimate.steps = read_figure(value, "steps", in);
    if (value.contains("walks_stopped") || value.contains("stopped_depth")) {
        in.check_keys(value, "$.estimate", allowed, stopped);
        estimate.walks_stopped = in.read_unsigned(value.at("walks_stopped"), "$.estimate.walks_stopped");
        estimate.stopped_depth = in.read_unsigned(value.at("stopped_depth"), "$.estimate.stopped_depth");
    }
    estimate.timed = value.contains("seconds");
    if (estimate.timed) {
        in.check_keys(value, "$.estimate", allowed, timed);
        estimate.seconds = read_figure(value, "seconds", in);
        estimate.seconds_per_run = read_figure(value, "seconds_per_run", in);
        estimate.seconds_per_crash_state = read_figure(value, "seconds_per_crash_state", in);
        estimate.estimating_seconds = read_figure(value, "estimating_seconds", in);
    }
    return estimate;
}

}  // namespace

auto read_campaign_result(const std::string& path) -> runner::CampaignResult {
    return parse_campaign_result(loader::read_text_file(path, "result file"), path);
}

auto parse_campaign_result(const std::string& text, const std::string& path) -> runner::CampaignResult {
    loader::NumberTexts numbers;
    const loader::Json json = loader::parse_json(text, path, &numbers);
    const loader::JsonReader in(path, &numbers);
    runner::read_format(json, "crashsim_result", 1, in);
    in.check_keys(json, "$",
                  {"crashsim_result", "scenario", "scenario_hash", "variant", "strategy", "seed", "schedules",
                   "shard", "schedules_run", "crash_states", "steps", "interrupted", "explore", "violations",
                   "judged", "coverage", "dfs", "faults", "estimate"},
                  {"scenario", "scenario_hash", "variant", "strategy", "seed", "schedules", "shard",
                   "schedules_run", "crash_states", "steps", "interrupted", "violations"});
    runner::CampaignResult result;
    result.scenario = in.read_name(json.at("scenario"), "$.scenario");
    result.scenario_hash = runner::read_hex64(json.at("scenario_hash"), "$.scenario_hash", in);
    result.variant = in.read_name(json.at("variant"), "$.variant");
    result.strategy = in.read_name(json.at("strategy"), "$.strategy");
    result.seed = in.read_unsigned(json.at("seed"), "$.seed");
    result.schedules = in.read_unsigned(json.at("schedules"), "$.schedules");
    const loader::Json& shard = json.at("shard");
    in.check_keys(shard, "$.shard", {"index", "count"}, {"index", "count"});
    constexpr std::uint64_t shard_max = std::numeric_limits<std::uint32_t>::max();
    result.shard_count =
        static_cast<std::uint32_t>(in.read_unsigned_in(shard.at("count"), "$.shard.count", 1, shard_max));
    result.shard_index = static_cast<std::uint32_t>(
        in.read_unsigned_in(shard.at("index"), "$.shard.index", 0, result.shard_count - 1));
    result.schedules_run = in.read_unsigned(json.at("schedules_run"), "$.schedules_run");
    result.crash_states = in.read_unsigned(json.at("crash_states"), "$.crash_states");
    result.steps = in.read_unsigned(json.at("steps"), "$.steps");
    result.interrupted = in.read_bool(json.at("interrupted"), "$.interrupted");
    result.bounds = runner::read_explore_json(json, in);
    const loader::Json& violations = json.at("violations");
    in.check_array(violations, "$.violations");
    for (std::size_t i = 0; i < violations.size(); i++) {
        result.violations.push_back(read_found(violations[i], loader::index_path("$.violations", i), in));
    }
    result.judged = read_counts(json, "judged", "$", in);
    if (json.contains("coverage")) {
        const loader::Json& coverage = json.at("coverage");
        if (!coverage.is_object()) in.fail("$.coverage", "an object", loader::type_name(coverage));
        result.reached = read_counts(coverage, "hits", "$.coverage", in);
    }
    if (json.contains("dfs")) result.dfs = read_dfs(json.at("dfs"), in);
    if (json.contains("faults")) result.faults = read_faults(json.at("faults"), in);
    if (json.contains("estimate")) result.estimate = read_estimate(json.at("estimate"), in);
    return result;
}

}  // namespace report
