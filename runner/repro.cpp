#include "runner/repro.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace scenarios {

namespace {
constexpr int repro_format = 1;

auto hex(std::uint64_t value) -> std::string {
    char text[19];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}
}  // namespace

auto read_text_file(const std::string& path) -> std::string {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(path + ": $: expected a readable file, got " + std::strerror(errno));
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

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
    std::string keep;
    for (bool kept : repro.crash.keep) keep += kept ? '1' : '0';
    json["crash"] = {{"step", repro.crash.step}, {"after", repro.crash.after}, {"keep", keep}};
    json["violation"] = {{"checker", repro.checker}, {"message", repro.message}};
    json["trace_hash"] = hex(repro.trace_hash);
    if (!repro.shrink_log.empty()) json["shrunk"] = repro.shrink_log;
    json["scenario"] = repro.scenario_text;
    write_text_file_atomically(path, json.dump(2) + "\n");
}

namespace {

template <typename T>
auto field(const nlohmann::json& json, const char* key, const std::string& path, const char* what,
           const std::string& parent = "$") -> T {
    const std::string where = path + ": " + parent + "." + key + ": expected " + what;
    if (!json.contains(key)) throw InputError(where + ", got nothing");
    try {
        return json.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw InputError(where + ", got " + std::string(json.at(key).type_name()));
    }
}

}  // namespace

auto explore_json(const ExploreBounds& bounds) -> nlohmann::json {
    return {{"io_reorders", bounds.io_reorders}, {"daemon_wakeups", bounds.daemon_wakeups}};
}

auto read_explore_json(const nlohmann::json& file, const std::string& path) -> ExploreBounds {
    ExploreBounds bounds{0, 0};
    if (!file.contains("explore")) return bounds;
    const auto explore = field<nlohmann::json>(file, "explore", path, "an object");
    for (const char* key : {"io_reorders", "daemon_wakeups"}) {
        const auto value = field<std::uint64_t>(explore, key, path, "an unsigned integer of at most 8", "$.explore");
        if (value > explore_bound_max) {
            throw InputError(path + ": $.explore." + key + ": expected an unsigned integer of at most 8, got " +
                             std::to_string(value));
        }
        (std::string(key) == "io_reorders" ? bounds.io_reorders : bounds.daemon_wakeups) =
            static_cast<std::uint32_t>(value);
    }
    return bounds;
}

auto read_repro(const std::string& path) -> Repro {
    const std::string text = read_text_file(path);
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
        throw InputError(path + ": $: expected a crashsim repro (valid JSON), got a syntax error");
    }
    if (!json.is_object() || !json.contains("crashsim_repro") || json["crashsim_repro"] != repro_format) {
        throw InputError(path + ": $.crashsim_repro: expected " + std::to_string(repro_format) +
                         ", got " + (json.is_object() && json.contains("crashsim_repro")
                                         ? json["crashsim_repro"].dump()
                                         : std::string("nothing")));
    }
    Repro repro;
    repro.scenario_path = field<std::string>(json, "scenario_path", path, "a string");
    repro.scenario_text = field<std::string>(json, "scenario", path, "the scenario text");
    repro.variant = field<std::string>(json, "variant", path, "a string");
    repro.strategy = field<std::string>(json, "strategy", path, "a string");
    repro.seed = field<std::uint64_t>(json, "seed", path, "an unsigned integer");
    repro.schedule_index = field<std::uint64_t>(json, "schedule_index", path, "an unsigned integer");
    repro.schedule_seed = field<std::uint64_t>(json, "schedule_seed", path, "an unsigned integer");
    repro.choices = field<std::vector<std::uint32_t>>(json, "choices", path, "an array of unsigned integers");
    repro.bounds = read_explore_json(json, path);
    const auto crash = field<nlohmann::json>(json, "crash", path, "an object");
    repro.crash.step = field<std::uint64_t>(crash, "step", path, "an unsigned integer", "$.crash");
    repro.crash.after = field<std::string>(crash, "after", path, "a string", "$.crash");
    for (char c : field<std::string>(crash, "keep", path, "a string of 0 and 1", "$.crash")) {
        if (c != '0' && c != '1') throw InputError(path + ": $.crash.keep: expected a string of 0 and 1, got '" + std::string(1, c) + "'");
        repro.crash.keep.push_back(c == '1');
    }
    const auto violation = field<nlohmann::json>(json, "violation", path, "an object");
    repro.checker = field<std::string>(violation, "checker", path, "a string", "$.violation");
    repro.message = field<std::string>(violation, "message", path, "a string", "$.violation");
    if (json.contains("shrunk")) {
        repro.shrink_log = field<std::vector<std::string>>(json, "shrunk", path, "an array of strings");
    }
    const auto hash = field<std::string>(json, "trace_hash", path, "16 hex digits");
    try {
        std::size_t used = 0;
        repro.trace_hash = std::stoull(hash, &used, 16);
        if (used != hash.size() || hash.size() != 16) throw std::invalid_argument("length");
    } catch (const std::exception&) {
        throw InputError(path + ": $.trace_hash: expected 16 hex digits, got \"" + hash + "\"");
    }
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
    repro.crash = *report.failing.crash;
    repro.checker = report.failing.violations.front().checker;
    repro.message = report.failing.violations.front().message;
    repro.trace_hash = report.failing.trace_hash;
    return repro;
}

auto repro_file_name(const std::string& scenario, const std::string& variant, const std::string& strategy,
                     std::uint64_t seed) -> std::string {
    return "repro-" + sanitize(scenario) + "-" + sanitize(variant) + "-" + sanitize(strategy) + "-seed" +
           std::to_string(seed) + ".json";
}

auto result_file_name(const std::string& scenario, const std::string& variant, const FuzzRequest& request)
    -> std::string {
    return "result-" + sanitize(scenario) + "-" + sanitize(variant) + "-" + sanitize(request.strategy.text()) +
           "-seed" + std::to_string(request.seed) + "-shard" + std::to_string(request.shard_index) + "of" +
           std::to_string(request.shard_count) + ".json";
}

}  // namespace scenarios
