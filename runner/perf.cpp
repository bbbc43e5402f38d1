#include "runner/perf.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "loader/json_reader.hpp"
#include "model/info.hpp"

namespace runner {
namespace {

auto percentile_ms(const std::vector<sim::Duration>& sorted, double fraction) -> double {
    if (sorted.empty()) return 0;
    const auto index = static_cast<std::size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5);
    return static_cast<double>(sorted[index]) / 1e6;
}

auto format_ratio(double value) -> std::string {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", value);
    return text;
}

}  // namespace

namespace {

constexpr std::string_view counter_prefix = "counter:";

/// The scenario's perf metric for one row: a figure of the run, or a counter
/// the model declares (`counter:<name>`; 0 when the run never counted it).
auto metric_of(const PerfRow& row, const std::string& metric) -> double {
    if (metric.starts_with(counter_prefix)) {
        const auto found = row.outcome.counters.find(metric.substr(counter_prefix.size()));
        return found == row.outcome.counters.end() ? 0 : static_cast<double>(found->second);
    }
    return metric == "fsync_rate"    ? row.fsyncs_per_s
           : metric == "files_per_s"   ? row.files_per_s
           : metric == "unlinks_per_s" ? row.unlinks_per_s
                                       : row.throughput_mib_s;
}

void measure_point(const loader::Scenario& scenario, std::optional<std::uint64_t> point,
                   const std::string& metric, PerfReport& report) {
    for (const loader::Variant& variant : scenario.variants) {
        Simulation simulation(scenario, variant);
        PerfRow row;
        row.variant = variant.name;
        row.point = point;
        row.outcome = simulation.run_perf();
        if (row.outcome.interrupted) {
            report.interrupted = true;
            return;
        }
        if (!row.outcome.problem.empty()) {
            throw loader::InputError(scenario.path + ": $.variants: expected variant " + variant.name +
                                     "'s workload to run to its end, got " + row.outcome.problem);
        }
        const double seconds = std::max(static_cast<double>(row.outcome.elapsed_ns) / 1e9, 1e-12);
        row.throughput_mib_s = static_cast<double>(row.outcome.bytes_written) / (1024.0 * 1024.0) / seconds;
        row.writes_per_s = static_cast<double>(row.outcome.writes) / seconds;
        row.fsyncs_per_s = static_cast<double>(row.outcome.fsyncs) / seconds;
        // A phased workload (create_unlink) rates each phase over its own time.
        const bool phased = row.outcome.create_phase_ns != 0;
        const double create_s = phased ? static_cast<double>(row.outcome.create_phase_ns) / 1e9 : seconds;
        const double unlink_s =
            phased ? std::max(static_cast<double>(row.outcome.elapsed_ns - row.outcome.create_phase_ns) / 1e9,
                              1e-12)
                   : seconds;
        row.files_per_s = static_cast<double>(row.outcome.creates) / create_s;
        row.unlinks_per_s = static_cast<double>(row.outcome.unlinks) / unlink_s;
        row.fsync_p50_ms = percentile_ms(row.outcome.fsync_latencies_ns, 0.50);
        row.fsync_p99_ms = percentile_ms(row.outcome.fsync_latencies_ns, 0.99);
        row.fsync_max_ms = row.outcome.fsync_latencies_ns.empty()
                               ? 0
                               : static_cast<double>(row.outcome.fsync_latencies_ns.back()) / 1e6;
        row.metric = metric_of(row, metric);
        report.rows.push_back(std::move(row));
    }
}

}  // namespace

auto measure(const loader::Scenario& scenario) -> PerfReport {
    PerfReport report;
    const std::string metric = scenario.perf ? scenario.perf->metric : "throughput";
    std::vector<std::optional<std::uint64_t>> points;
    if (scenario.sweep_points.empty()) {
        points.emplace_back();
        measure_point(scenario, std::nullopt, metric, report);
        if (report.interrupted) return report;
    } else {
        report.parameter = scenario.sweep_parameter;
        for (std::size_t i = 0; i < scenario.sweep_points.size(); i++) {
            points.emplace_back(scenario.sweep_values[i]);
            measure_point(scenario.sweep_points[i], scenario.sweep_values[i], metric, report);
            if (report.interrupted) return report;
        }
    }
    if (!scenario.perf) return report;
    for (const loader::PerfRatio& ratio : scenario.perf->ratios) {
        for (const auto& point : points) {
            if (ratio.at && point != ratio.at) continue;
            double numerator = 0;
            double denominator = 0;
            const std::string& metric_name = ratio.metric.empty() ? metric : ratio.metric;
            for (const auto& row : report.rows) {
                if (row.point != point) continue;
                if (row.variant == ratio.numerator) numerator = metric_of(row, metric_name);
                if (row.variant == ratio.denominator) denominator = metric_of(row, metric_name);
            }
            PerfRatioResult result{ratio, point, denominator > 0 ? numerator / denominator : 0, false};
            result.met = result.value >= ratio.min && result.value <= ratio.max;
            report.ratios.push_back(result);
        }
    }
    return report;
}

auto perf_row_variant(const loader::PerfRatio& ratio, const std::string& parameter,
                      std::optional<std::uint64_t> point) -> std::string {
    std::string variant = ratio.numerator + "/" + ratio.denominator;
    if (point) variant += " at " + parameter + "=" + std::to_string(*point);
    return variant;
}

auto ratio_metric(const loader::Scenario& scenario, const loader::PerfRatio& ratio) -> const std::string& {
    return ratio.metric.empty() ? scenario.perf->metric : ratio.metric;
}

auto perf_row_expectation(const loader::Scenario& scenario, const loader::PerfRatio& ratio) -> std::string {
    return ratio_metric(scenario, ratio) + " ratio in [" + format_ratio(ratio.min) + ", " +
           format_ratio(ratio.max) + "]";
}

auto check_perf(const loader::Scenario& scenario, const std::function<double()>& clock)
    -> std::vector<CheckRow> {
    std::vector<CheckRow> rows;
    if (!scenario.perf) return rows;
    const double started = clock();
    const PerfReport report = measure(scenario);
    const double seconds = clock() - started;
    for (const auto& result : report.ratios) {
        CheckRow row;
        row.scenario = scenario.name;
        row.scenario_path = scenario.path;
        row.variant = perf_row_variant(result.ratio, report.parameter, result.point);
        row.expectation = perf_row_expectation(scenario, result.ratio);
        row.met = result.met && !report.interrupted;
        row.interrupted = report.interrupted;
        row.detail = report.interrupted ? "interrupted before every run was measured"
                                        : ratio_metric(scenario, result.ratio) + " ratio " +
                                              format_ratio(result.value);
        row.schedules = report.rows.size();
        row.seconds = seconds / static_cast<double>(report.ratios.size());
        if (!row.met) row.command = "crashsim perf " + scenario.path;
        rows.push_back(std::move(row));
    }
    return rows;
}

namespace {

using Json = nlohmann::ordered_json;

// --vary names and the scenario field each sets (JSON pointer, JSON path).
struct VaryField {
    const char* name;
    const char* pointer;
    const char* about;
};

auto vary_fields() -> const std::vector<VaryField>& {
    static const std::vector<VaryField> fields = {
        {"reclaim_batch", "/machine/reclaim_batch", "bytes kswapd frees per pass"},
        {"page_cache", "/machine/page_cache", "bytes of page cache (before machine.scale)"},
        {"cpus", "/machine/cpus", "CPUs shared by every task"},
        {"scale", "/machine/scale", "the factor memory and data are divided by"},
        {"write_latency_us", "/device/write_latency_us", "the device's write latency"},
        {"flush_latency_us", "/device/flush_latency_us", "the device's cache flush latency"},
        {"bandwidth", "/device/bandwidth", "the device's transfer channel, bytes/s (0: none)"},
        {"jobs", "/workload/fio/jobs", "fio jobs"},
        {"bs", "/workload/fio/bs", "fio block size"},
        {"size", "/workload/fio/size", "fio bytes per job"},
        {"dirs", "/workload/fs_mark/dirs", "fs_mark -D: subdirectories"},
        {"previous_files", "/workload/fs_mark/previous_files",
         "fs_mark: files of the earlier run that unlinked them right before this one"},
    };
    return fields;
}

auto split_values(const std::string& text) -> std::vector<std::string> {
    std::vector<std::string> values;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        values.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return values;
}

auto json_path_of(const std::string& pointer) -> std::string {
    std::string path = "$";
    for (char c : pointer) path += c == '/' ? '.' : c;
    return path;
}

}  // namespace

void keep_points(loader::Scenario& scenario, const std::string& values) {
    if (scenario.sweep_values.empty()) {
        throw loader::InputError("--points: expected a scenario with a sweep, got " + scenario.path +
                                 " without one");
    }
    std::vector<std::uint64_t> kept;
    for (const std::string& value : split_values(values)) {
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
            value.size() > 19) {
            throw loader::InputError("--points: expected values of " + scenario.sweep_parameter +
                                     " separated by commas, got " + loader::Json(values).dump());
        }
        const std::uint64_t number = std::stoull(value);
        if (std::find(scenario.sweep_values.begin(), scenario.sweep_values.end(), number) ==
            scenario.sweep_values.end()) {
            std::string swept;
            for (auto v : scenario.sweep_values) swept += (swept.empty() ? "" : ", ") + std::to_string(v);
            throw loader::InputError("--points: expected one of the sweep's values of " +
                                     scenario.sweep_parameter + " (" + swept + "), got " + value);
        }
        if (std::find(kept.begin(), kept.end(), number) == kept.end()) kept.push_back(number);
    }
    std::vector<loader::Scenario> points;
    std::vector<std::uint64_t> point_values;
    for (std::size_t i = 0; i < scenario.sweep_values.size(); i++) {
        if (std::find(kept.begin(), kept.end(), scenario.sweep_values[i]) == kept.end()) continue;
        points.push_back(std::move(scenario.sweep_points[i]));
        point_values.push_back(scenario.sweep_values[i]);
    }
    scenario.sweep_points = std::move(points);
    scenario.sweep_values = point_values;
    if (!scenario.perf) return;
    const auto kept_point = [&](const std::optional<std::uint64_t>& at) {
        return !at || std::find(point_values.begin(), point_values.end(), *at) != point_values.end();
    };
    auto& ratios = scenario.perf->ratios;
    ratios.erase(std::remove_if(ratios.begin(), ratios.end(),
                                [&](const loader::PerfRatio& r) { return !kept_point(r.at); }),
                 ratios.end());
    auto& seed = scenario.perf->seed_points;
    seed.erase(std::remove_if(seed.begin(), seed.end(),
                              [&](const loader::SeedPoint& p) { return !kept_point(p.point); }),
               seed.end());
}

auto vary_parameters(const std::string& model) -> std::vector<std::string> {
    std::vector<std::string> names;
    for (const auto& field : vary_fields()) names.emplace_back(field.name);
    if (const model::ModelInfo* info = model::find_model(model)) {
        for (const auto& knob : info->knobs) names.push_back(knob.name);
        for (const auto& cost : info->costs) names.push_back(cost.name);
    }
    return names;
}

namespace {

[[noreturn]] void bad_vary(const std::string& expected, const std::string& got) {
    throw loader::InputError("--vary: expected " + expected + ", got " + got);
}

/// The parameter's name and values from "NAME=V1,V2,...": each value given,
/// none twice.
void read_vary_spec(const std::string& spec, VaryReport& report) {
    const std::size_t equals = spec.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size()) {
        bad_vary("NAME=V1,V2,... (one parameter, its values separated by commas)", Json(spec).dump());
    }
    report.name = spec.substr(0, equals);
    report.values = split_values(spec.substr(equals + 1));
    for (std::size_t i = 0; i < report.values.size(); i++) {
        if (report.values[i].empty()) bad_vary("a value between every two commas", Json(spec).dump());
        for (std::size_t j = 0; j < i; j++) {
            if (report.values[j] == report.values[i]) {
                bad_vary("values that differ", "\"" + report.values[i] + "\" twice");
            }
        }
    }
}

/// The scenario field a --vary parameter replaces.
struct VaryTarget {
    std::string pointer;  // JSON pointer
    bool numeric = true;  // a machine, device or workload number; a knob's value is a string
};

/// Where parameter `name` lands in the scenario (`base`, its text parsed as
/// `root`): a machine, device or workload field of it, or a knob of its
/// model that no variant sets.
/// PROFILE.FIELD: a field of machine profile PROFILE (`machines`), or one of
/// its per-operation CPU costs; empty when `name` names no profile.
auto vary_profile_target(const std::string& name, const loader::Scenario& base) -> std::string {
    const std::size_t dot = name.find('.');
    if (dot == std::string::npos || base.machines.count(name.substr(0, dot)) == 0) return "";
    const std::string profile = name.substr(0, dot);
    const std::string field = name.substr(dot + 1);
    for (const char* known :
         {"cpus", "cores_per_socket", "line_hit_ns", "line_miss_ns", "line_miss_remote_ns"}) {
        if (field == known) return "/machines/" + profile + "/" + field;
    }
    if (const model::ModelInfo* info = model::find_model(base.model)) {
        for (const auto& cost : info->costs) {
            if (cost.name == field) return "/machines/" + profile + "/costs/" + field;
        }
    }
    bad_vary("a field of machine profile " + profile +
                 " (cpus, cores_per_socket, line_hit_ns, line_miss_ns, line_miss_remote_ns or a cost)",
             Json(name).dump());
}

auto vary_target(const std::string& name, const loader::Scenario& base, const Json& root) -> VaryTarget {
    VaryTarget target;
    target.pointer = vary_profile_target(name, base);
    if (!target.pointer.empty()) return target;
    for (const auto& field : vary_fields()) {
        if (name == field.name) target.pointer = field.pointer;
    }
    const model::ModelInfo* info = model::find_model(base.model);
    if (target.pointer.empty() && info != nullptr) {
        for (const auto& knob : info->knobs) {
            if (knob.name != name) continue;
            target.pointer = "/config/" + knob.name;
            target.numeric = false;
            for (const auto& variant : root.at("variants")) {
                if (variant.contains("config") && variant.at("config").contains(knob.name)) {
                    bad_vary("a knob no variant sets (variant " + variant.at("name").get<std::string>() +
                                 " sets " + knob.name + ", so varying it would change nothing)",
                             Json(name).dump());
                }
            }
        }
    }
    if (target.pointer.empty() && info != nullptr) {
        for (const auto& cost : info->costs) {
            if (cost.name == name) target.pointer = "/costs/" + cost.name;
        }
    }
    if (target.pointer.empty()) {
        std::string names;
        for (const auto& parameter : vary_parameters(base.model)) {
            names += (names.empty() ? "" : ", ") + parameter;
        }
        bad_vary("a parameter name, one of " + names, Json(name).dump());
    }
    if (target.pointer.rfind("/workload/fio/", 0) == 0 && !base.fio) {
        bad_vary("a parameter of an fio workload", Json(name).dump());
    }
    if (target.pointer.rfind("/workload/fs_mark/", 0) == 0 && !base.fs_mark) {
        bad_vary("a parameter of an fs_mark workload", Json(name).dump());
    }
    if (!base.sweep_parameter.empty() && target.pointer == "/workload/fio/" + base.sweep_parameter) {
        bad_vary("a parameter the scenario does not sweep already (its sweep sets " + base.sweep_parameter +
                     " at each point)",
                 Json(name).dump());
    }
    return target;
}

/// The scenario `root` loaded once per value of the report, the value
/// written at `target` (and only `points` of its sweep kept, when given).
auto vary_scenarios(const std::string& path, const Json& root, const VaryTarget& target,
                    const VaryReport& report, const std::string& points) -> std::vector<loader::Scenario> {
    std::vector<loader::Scenario> loaded;
    for (const std::string& value : report.values) {
        Json copy = root;
        if (target.numeric) {
            if (value.find_first_not_of("0123456789") != std::string::npos || value.size() > 19) {
                bad_vary("an unsigned integer for " + report.name, Json(value).dump());
            }
            copy[Json::json_pointer(target.pointer)] = std::stoull(value);
        } else {
            copy[Json::json_pointer(target.pointer)] = value;
        }
        try {
            loaded.push_back(loader::parse_scenario(copy.dump(), path));
            if (!points.empty()) keep_points(loaded.back(), points);
        } catch (const loader::InputError& error) {
            throw loader::InputError(std::string(error.what()) + " (--vary " + report.name + "=" + value +
                                     ")");
        }
    }
    return loaded;
}

}  // namespace

auto measure_vary(const std::string& path, const std::string& spec, const std::string& points) -> VaryReport {
    VaryReport report;
    read_vary_spec(spec, report);
    // The scenario as written (loaded once to validate it and learn its model).
    const std::string text = loader::read_text_file(path);
    loader::Scenario base = loader::parse_scenario(text, path);
    if (!points.empty()) keep_points(base, points);
    if (!base.fio && !base.fs_mark && !base.create_unlink) {
        throw loader::InputError(path + ": $.workload: expected a declared workload for perf, got nothing");
    }
    report.scenario = base.name;
    report.metric = base.perf ? base.perf->metric : std::string("throughput");
    const loader::Json root = loader::Json::parse(text);
    const VaryTarget target = vary_target(report.name, base, root);
    report.json_path = json_path_of(target.pointer);
    for (const loader::Scenario& scenario : vary_scenarios(path, root, target, report, points)) {
        report.reports.push_back(measure(scenario));
        if (report.reports.back().interrupted) {
            report.interrupted = true;
            break;
        }
    }
    return report;
}

}  // namespace runner
