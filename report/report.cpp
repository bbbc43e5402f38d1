#include "report/report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "runner/repro.hpp"

namespace scenarios {
namespace {

using Json = nlohmann::ordered_json;

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
auto junit_coverage_text(const CheckRow& row) -> std::string {
    if (row.judged.empty() && row.reached.empty()) return "";
    return "\njudged (crash states with something at stake): " + judged_text(row.judged) +
           "\nyield points: " + coverage_text(row.reached) + "\n" + hits_text(row.reached);
}

auto attempt_json(const CheckAttempt& attempt) -> Json {
    Json json = {{"strategy", attempt.strategy}, {"schedules", attempt.schedules},
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

void add_coverage_json(Json& json, const Counts& judged, const Counts& reached) {
    Json judged_json = Json::object();
    for (const auto& [name, count] : judged) judged_json[name] = count;
    Json hits = Json::object();
    Json never = Json::array();
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
void add_model_coverage_json(Json& summary, const std::vector<CheckRow>& rows) {
    std::vector<std::pair<std::string, Counts>> reached;
    for (const auto& row : rows) reached.emplace_back(row.model, row.reached);
    Json models = Json::object();
    for (const auto& [model, counts] : coverage_by_model(reached)) {
        Json member = Json::object();
        add_coverage_json(member, {}, counts);
        models[model] = member["coverage"];
    }
    summary["coverage"] = models;
}

}  // namespace

void write_junit(const std::vector<CheckRow>& rows, double seconds, const std::string& path) {
    std::map<std::string, std::vector<const CheckRow*>> suites;  // by scenario, sorted
    std::size_t failures = 0;
    for (const auto& row : rows) {
        suites[row.scenario].push_back(&row);
        if (!row.met) failures++;
    }
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    xml += "<testsuites name=\"crashsim check\" tests=\"" + std::to_string(rows.size()) +
           "\" failures=\"" + std::to_string(failures) + "\" time=\"" + seconds_text(seconds) + "\">\n";
    for (const auto& [scenario, members] : suites) {
        std::size_t suite_failures = 0;
        double suite_seconds = 0;
        for (const CheckRow* row : members) {
            if (!row->met) suite_failures++;
            suite_seconds += row->seconds;
        }
        xml += "  <testsuite name=\"" + xml_escape(scenario) + "\" tests=\"" + std::to_string(members.size()) +
               "\" failures=\"" + std::to_string(suite_failures) + "\" time=\"" + seconds_text(suite_seconds) + "\">\n";
        for (const CheckRow* row : members) {
            xml += "    <testcase classname=\"" + xml_escape(scenario) + "\" name=\"" +
                   xml_escape(row->variant + ": " + row->expectation) + "\" file=\"" +
                   xml_escape(row->scenario_path) + "\" time=\"" + seconds_text(row->seconds) + "\">\n";
            if (!row->met) {
                std::string body = row->detail + "\n";
                if (!row->story.empty()) body += "\n" + row->story;
                if (!row->command.empty()) body += "\nreproduce with: " + row->command + "\n";
                xml += "      <failure type=\"expectation\" message=\"" + xml_escape(row->detail) + "\">" +
                       xml_escape(body) + "</failure>\n";
            }
            xml += "      <system-out>" +
                   xml_escape(row->detail + "; " + std::to_string(row->schedules) + " schedules, " +
                              std::to_string(row->crash_states) + " crash states" +
                              junit_coverage_text(*row)) +
                   "</system-out>\n";
            xml += "    </testcase>\n";
        }
        xml += "  </testsuite>\n";
    }
    xml += "</testsuites>\n";
    write_text_file_atomically(path, xml);
}

void write_check_json(const std::vector<CheckRow>& rows, double seconds, const std::string& path) {
    Json list = Json::array();
    std::size_t met = 0;
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    for (const auto& row : rows) {
        if (row.met) met++;
        schedules += row.schedules;
        crash_states += row.crash_states;
        Json attempts = Json::array();
        for (const auto& attempt : row.attempts) attempts.push_back(attempt_json(attempt));
        Json json = {{"scenario", row.scenario}, {"file", row.scenario_path}, {"variant", row.variant},
                     {"expectation", row.expectation}, {"met", row.met}, {"detail", row.detail},
                     {"schedules", row.schedules}, {"crash_states", row.crash_states},
                     {"seconds", row.seconds}, {"attempts", attempts}};
        if (!row.command.empty()) json["reproduce"] = row.command;
        if (!row.story.empty()) json["story"] = row.story;
        if (row.interrupted) json["interrupted"] = true;
        if (row.bounds) json["explore"] = explore_json(*row.bounds);
        if (!row.judged.empty() || !row.reached.empty()) add_coverage_json(json, row.judged, row.reached);
        list.push_back(std::move(json));
    }
    Json report = {{"crashsim_check", 1},
                         {"summary",
                          {{"variants", rows.size()}, {"met", met}, {"failed", rows.size() - met},
                           {"schedules", schedules}, {"crash_states", crash_states}, {"seconds", seconds}}},
                         {"variants", list}};
    add_model_coverage_json(report["summary"], rows);
    write_text_file_atomically(path, report.dump(2) + "\n");
}

auto campaign_result(const FuzzReport& report, const FuzzRequest& request, const Scenario& scenario,
                     std::uint64_t scenario_hash, const std::string& variant) -> CampaignResult {
    CampaignResult result;
    result.scenario = scenario.name;
    result.scenario_hash = scenario_hash;
    result.variant = variant;
    result.strategy = request.strategy.text();
    result.seed = request.seed;
    result.schedules = request.schedules;
    result.shard_index = request.shard_index;
    result.shard_count = request.shard_count;
    result.schedules_run = report.schedules;
    result.crash_states = report.crash_states;
    result.steps = report.steps;
    result.interrupted = report.interrupted;
    result.bounds = report.bounds;
    result.violations = report.violations;
    result.judged = judged_counts(report.checker_names, report.judged);
    result.reached = reached_counts(scenario.model, report.hits);
    return result;
}

void write_campaign_result(const CampaignResult& result, const std::string& path) {
    Json violations = Json::array();
    for (const auto& found : result.violations) {
        violations.push_back({{"index", found.index}, {"schedule_seed", found.schedule_seed},
                              {"checker", found.violation.checker}, {"file", found.violation.file},
                              {"offset", found.violation.offset}, {"message", found.violation.message}});
    }
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(result.scenario_hash));
    Json json = {{"crashsim_result", 1},
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
                       {"explore", explore_json(result.bounds)},
                       {"violations", violations}};
    add_coverage_json(json, result.judged, result.reached);
    write_text_file_atomically(path, json.dump(2) + "\n");
}

namespace {

template <typename T>
auto get(const Json& json, const std::string& key, const std::string& path, const std::string& where,
         const char* what) -> T {
    if (!json.is_object() || !json.contains(key)) {
        throw InputError(path + ": " + where + "." + key + ": expected " + what + ", got nothing");
    }
    try {
        return json.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw InputError(path + ": " + where + "." + key + ": expected " + what + ", got " +
                         json.at(key).type_name());
    }
}

/// An optional object of unsigned counts, in the file's order.
auto read_counts(const Json& json, const std::string& key, const std::string& path, const std::string& where)
    -> Counts {
    Counts counts;
    if (!json.is_object() || !json.contains(key)) return counts;
    const Json& object = json.at(key);
    if (!object.is_object()) {
        throw InputError(path + ": " + where + "." + key + ": expected an object, got " + object.type_name());
    }
    for (const auto& [name, count] : object.items()) {
        if (!count.is_number_unsigned()) {
            throw InputError(path + ": " + where + "." + key + "." + name + ": expected an unsigned integer, got " +
                             count.type_name());
        }
        counts.emplace_back(name, count.get<std::uint64_t>());
    }
    return counts;
}

}  // namespace

auto read_campaign_result(const std::string& path) -> CampaignResult {
    const std::string text = read_text_file(path);
    Json json;
    try {
        json = Json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
        throw InputError(path + ": $: expected a crashsim result (valid JSON), got a syntax error");
    }
    if (!json.is_object() || !json.contains("crashsim_result") || json["crashsim_result"] != 1) {
        throw InputError(path + ": $.crashsim_result: expected 1, got " +
                         (json.is_object() && json.contains("crashsim_result") ? json["crashsim_result"].dump()
                                                                               : std::string("nothing")));
    }
    CampaignResult result;
    result.scenario = get<std::string>(json, "scenario", path, "$", "a string");
    const auto hash = get<std::string>(json, "scenario_hash", path, "$", "16 hex digits");
    try {
        result.scenario_hash = std::stoull(hash, nullptr, 16);
    } catch (const std::exception&) {
        throw InputError(path + ": $.scenario_hash: expected 16 hex digits, got \"" + hash + "\"");
    }
    result.variant = get<std::string>(json, "variant", path, "$", "a string");
    result.strategy = get<std::string>(json, "strategy", path, "$", "a string");
    result.seed = get<std::uint64_t>(json, "seed", path, "$", "an unsigned integer");
    result.schedules = get<std::uint64_t>(json, "schedules", path, "$", "an unsigned integer");
    const Json shard = get<Json>(json, "shard", path, "$", "an object");
    result.shard_index = get<std::uint32_t>(shard, "index", path, "$.shard", "an unsigned integer");
    result.shard_count = get<std::uint32_t>(shard, "count", path, "$.shard", "an unsigned integer");
    result.schedules_run = get<std::uint64_t>(json, "schedules_run", path, "$", "an unsigned integer");
    result.crash_states = get<std::uint64_t>(json, "crash_states", path, "$", "an unsigned integer");
    result.steps = get<std::uint64_t>(json, "steps", path, "$", "an unsigned integer");
    result.interrupted = get<bool>(json, "interrupted", path, "$", "a boolean");
    result.bounds = read_explore_json(json, path);
    const Json violations = get<Json>(json, "violations", path, "$", "an array");
    if (!violations.is_array()) throw InputError(path + ": $.violations: expected an array, got " + std::string(violations.type_name()));
    for (std::size_t i = 0; i < violations.size(); i++) {
        const std::string where = "$.violations[" + std::to_string(i) + "]";
        FoundViolation found{};
        found.index = get<std::uint64_t>(violations[i], "index", path, where, "an unsigned integer");
        found.schedule_seed = get<std::uint64_t>(violations[i], "schedule_seed", path, where, "an unsigned integer");
        found.violation.checker = get<std::string>(violations[i], "checker", path, where, "a string");
        found.violation.file = get<std::string>(violations[i], "file", path, where, "a string");
        found.violation.offset = get<std::uint64_t>(violations[i], "offset", path, where, "an unsigned integer");
        found.violation.message = get<std::string>(violations[i], "message", path, where, "a string");
        result.violations.push_back(std::move(found));
    }
    result.judged = read_counts(json, "judged", path, "$");
    if (json.contains("coverage")) {
        result.reached = read_counts(get<Json>(json, "coverage", path, "$", "an object"), "hits", path, "$.coverage");
    }
    return result;
}

auto merge_results(const std::vector<CampaignResult>& shards, const std::vector<std::string>& paths)
    -> CampaignResult {
    if (shards.empty()) throw InputError("merge: expected at least one result file, got none");
    const CampaignResult& first = shards.front();
    std::vector<bool> seen(first.shard_count, false);
    CampaignResult merged = first;
    merged.shard_index = 0;
    merged.shard_count = 1;
    merged.schedules_run = merged.crash_states = merged.steps = 0;
    merged.interrupted = false;
    merged.violations.clear();
    merged.judged.clear();
    merged.reached.clear();
    for (std::size_t i = 0; i < shards.size(); i++) {
        const CampaignResult& shard = shards[i];
        auto differs = [&](const std::string& field, const std::string& got, const std::string& expected) {
            throw InputError(paths[i] + ": $." + field + ": expected " + expected + " like " + paths[0] +
                             ", got " + got);
        };
        if (shard.scenario != first.scenario || shard.scenario_hash != first.scenario_hash) {
            differs("scenario", "\"" + shard.scenario + "\"", "the same scenario");
        }
        if (shard.variant != first.variant) differs("variant", "\"" + shard.variant + "\"", "\"" + first.variant + "\"");
        if (shard.strategy != first.strategy) differs("strategy", "\"" + shard.strategy + "\"", "\"" + first.strategy + "\"");
        if (shard.seed != first.seed) differs("seed", std::to_string(shard.seed), std::to_string(first.seed));
        if (shard.schedules != first.schedules) differs("schedules", std::to_string(shard.schedules), std::to_string(first.schedules));
        if (!(shard.bounds == first.bounds)) {
            differs("explore", "\"" + describe_bounds(shard.bounds) + "\"", "\"" + describe_bounds(first.bounds) + "\"");
        }
        if (shard.shard_count != first.shard_count) {
            differs("shard.count", std::to_string(shard.shard_count), std::to_string(first.shard_count));
        }
        if (shard.shard_index >= shard.shard_count || seen[shard.shard_index]) {
            differs("shard.index", std::to_string(shard.shard_index), "a shard not given before");
        }
        seen[shard.shard_index] = true;
        merged.schedules_run += shard.schedules_run;
        merged.crash_states += shard.crash_states;
        merged.steps += shard.steps;
        merged.interrupted = merged.interrupted || shard.interrupted;
        merged.violations.insert(merged.violations.end(), shard.violations.begin(), shard.violations.end());
        add_named(merged.judged, shard.judged);
        add_named(merged.reached, shard.reached);
    }
    for (std::uint32_t k = 0; k < first.shard_count; k++) {
        if (!seen[k]) {
            throw InputError("merge: expected shards 0.." + std::to_string(first.shard_count - 1) +
                             " of the campaign, got no shard " + std::to_string(k));
        }
    }
    std::sort(merged.violations.begin(), merged.violations.end(),
              [](const FoundViolation& a, const FoundViolation& b) { return a.index < b.index; });
    return merged;
}

}  // namespace scenarios
