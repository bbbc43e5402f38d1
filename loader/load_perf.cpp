// Reads the performance expectations (a metric, ratios between variants), the
// seed's own figures beside them, and a sweep: the workload once per point,
// each point loaded as a scenario of its own.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "loader/json_reader.hpp"
#include "loader/loader_impl.hpp"
#include "loader/scenario.hpp"
#include "model/info.hpp"

namespace loader {

void Loader::read_perf(const Json& value) {
    check_keys(value, "$.perf", {"metric", "ratios", "seed"}, {"metric", "ratios"});
    PerfSpec perf;
    perf.metric = read_metric(value.at("metric"), "$.perf.metric");
    const Json& ratios = value.at("ratios");
    check_array(ratios, "$.perf.ratios");
    if (ratios.empty()) fail("$.perf.ratios", "a non-empty array", "an empty array");
    Names variants;
    for (const auto& variant : scenario_.variants) variants.push_back(variant.name);
    for (std::size_t i = 0; i < ratios.size(); i++) {
        const std::string path = index_path("$.perf.ratios", i);
        check_keys(ratios[i], path, {"numerator", "denominator", "min", "max", "at", "metric"},
                   {"numerator", "denominator", "min", "max"});
        PerfRatio ratio;
        ratio.json_path = path;
        ratio.numerator =
            read_choice(ratios[i].at("numerator"), path + ".numerator", variants, "the variants ");
        ratio.denominator =
            read_choice(ratios[i].at("denominator"), path + ".denominator", variants, "the variants ");
        ratio.min = read_number(ratios[i].at("min"), path + ".min");
        ratio.max = read_number(ratios[i].at("max"), path + ".max");
        if (ratios[i].contains("at")) ratio.at = read_unsigned(ratios[i].at("at"), path + ".at");
        if (ratios[i].contains("metric"))
            ratio.metric = read_metric(ratios[i].at("metric"), path + ".metric");
        if (ratio.max < ratio.min)
            fail(path + ".max", "at least min (" + number_text(ratios[i].at("min")) + ")",
                 number_text(ratios[i].at("max")));
        perf.ratios.push_back(std::move(ratio));
    }
    scenario_.perf = std::move(perf);
}

// A metric is a figure of the run, or `counter:<name>` for a counter the model declares.
auto Loader::read_metric(const Json& value, const std::string& json_path) const -> std::string {
    const Names figures = {"throughput", "fsync_rate", "files_per_s", "unlinks_per_s"};
    constexpr std::string_view counter_prefix = "counter:";
    if (!value.is_string() || !value.get_ref<const std::string&>().starts_with(counter_prefix)) {
        return read_choice(value, json_path, figures, "");
    }
    const std::string& text = value.get_ref<const std::string&>();
    if (model::find_counter(*model_, std::string_view(text).substr(counter_prefix.size())) != nullptr)
        return text;
    Names counters;
    for (const auto& counter : model_->counters)
        counters.push_back(std::string(counter_prefix) + counter.name);
    fail(json_path, "counter:<name> for a counter of model " + model_->name + ": " + join(counters),
         json_quoted(text));
}

// perf.seed: the seed's own figures beside the model's (crashsim perf --plot draws both), with
// where they come from: {"source": "...", "points": [{"jobs": 1, "before": 29.1, "after": 29.3}]}.
void Loader::read_seed(const Json& value) {
    const std::string path = "$.perf.seed";
    check_keys(value, path, {"source", "points"}, {"source", "points"});
    scenario_.perf->seed_source = read_string(value.at("source"), path + ".source");
    if (scenario_.perf->seed_source.empty()) fail(path + ".source", "a non-empty string", "\"\"");
    const Json& points = value.at("points");
    check_array(points, path + ".points");
    if (points.empty()) fail(path + ".points", "a non-empty array", "an empty array");
    const std::string& parameter = scenario_.sweep_parameter;
    Names keys;
    if (!parameter.empty()) keys.push_back(parameter);
    for (const auto& variant : scenario_.variants) keys.push_back(variant.name);
    for (std::size_t i = 0; i < points.size(); i++) {
        const std::string point_path = index_path(path + ".points", i);
        check_keys(points[i], point_path, keys, parameter.empty() ? Names{} : Names{parameter});
        SeedPoint seed;
        if (!parameter.empty()) {
            seed.point = read_sweep_value(points[i].at(parameter), key_path(point_path, parameter),
                                          scenario_.fs_mark ? "fs_mark" : "fio", parameter);
            if (std::find(scenario_.sweep_values.begin(), scenario_.sweep_values.end(), *seed.point) ==
                scenario_.sweep_values.end()) {
                fail(key_path(point_path, parameter), "one of the sweep's values of " + parameter,
                     std::to_string(*seed.point));
            }
        }
        for (const auto& item : points[i].items()) {
            if (item.key() == parameter) continue;
            const double figure = read_number(item.value(), key_path(point_path, item.key()));
            if (!(figure > 0))
                fail(key_path(point_path, item.key()), "a positive number", number_text(item.value()));
            seed.values[item.key()] = figure;
        }
        if (seed.values.empty()) fail(point_path, "at least one variant's figure", "none");
        scenario_.perf->seed_points.push_back(std::move(seed));
    }
}

// A sweep runs the declared workload once per point, each point overriding some of its fields
// (the seed's table: jobs 1, 2, 4, ... with the file size scaled so the total stays put). Each
// point is loaded as a scenario of its own, so it is validated exactly like the base workload.
void Loader::read_sweep(const Json& root) {
    const Json& sweep = root.at("sweep");
    check_keys(sweep, "$.sweep", {"parameter", "points"}, {"parameter", "points"});
    if (!root.contains("workload")) fail("$.sweep", "a scenario with a workload to sweep", "no workload");
    const Json& workload = root.at("workload");
    const std::string kind = workload.begin().key();  // fio or fs_mark, checked by read_workload
    const std::string base = "$.workload." + kind;
    const std::string parameter = read_string(sweep.at("parameter"), "$.sweep.parameter");
    if (!workload.at(kind).contains(parameter)) {
        fail("$.sweep.parameter", "a field set in " + base, json_quoted(parameter));
    }
    const Json& points = sweep.at("points");
    check_array(points, "$.sweep.points");
    if (points.size() < 2) fail("$.sweep.points", "at least two points", std::to_string(points.size()));
    scenario_.sweep_parameter = parameter;
    for (std::size_t i = 0; i < points.size(); i++) {
        const std::string path = index_path("$.sweep.points", i);
        const Json& point = points[i];
        if (!point.is_object()) fail(path, "an object of " + base + " fields", type_name(point));
        if (!point.contains(parameter)) fail(key_path(path, parameter), "a required key", "nothing");
        const std::uint64_t value =
            read_sweep_value(point.at(parameter), key_path(path, parameter), kind, parameter);
        if (std::find(scenario_.sweep_values.begin(), scenario_.sweep_values.end(), value) !=
            scenario_.sweep_values.end()) {
            fail(key_path(path, parameter), "a value no earlier point has", std::to_string(value));
        }
        scenario_.sweep_points.push_back(load_sweep_point(root, point, kind, path));
        scenario_.sweep_values.push_back(value);
    }
}

namespace {

/// A sweep point's error message, pointed at the point's own field (`json_path`
/// is the point's) when it came from one, else saying which point it was.
auto sweep_point_message(std::string message, const Json& point, const std::string& base,
                         const std::string& json_path) -> std::string {
    for (const auto& item : point.items()) {
        const std::string from = ": " + base + "." + item.key() + ":";
        const auto at = message.find(from);
        if (at != std::string::npos) {
            message.replace(at, from.size(), ": " + key_path(json_path, item.key()) + ":");
            return message;
        }
    }
    return message + " (at sweep point " + json_path + ")";
}

}  // namespace

// The scenario at one sweep point: the base workload with the point's fields
// set, loaded by a loader of its own that counts on from the ops loaded so far.
auto Loader::load_sweep_point(const Json& root, const Json& point, const std::string& kind,
                              const std::string& json_path) -> Scenario {
    Json copy = root;
    copy.erase("sweep");
    for (const auto& item : point.items()) copy["workload"][kind][item.key()] = item.value();
    if (copy.contains("perf")) {
        for (Json& ratio : copy["perf"]["ratios"]) ratio.erase("at");
        copy["perf"].erase("seed");
    }
    Loader nested(scenario_.path);
    nested.workload_ops_used_ = workload_ops_used_;
    try {
        Scenario loaded = nested.load(copy);
        workload_ops_used_ = nested.workload_ops_used_;
        return loaded;
    } catch (const InputError& error) {
        throw InputError(sweep_point_message(error.what(), point, "$.workload." + kind, json_path));
    }
}

// A point's value of the swept field: a size ("64k") where the field is one.
auto Loader::read_sweep_value(const Json& value, const std::string& json_path, const std::string& kind,
                              const std::string& parameter) const -> std::uint64_t {
    static const Names fio_sizes = {"bs", "size", "io_size"};
    const bool size = kind == "fio" ? contains(fio_sizes, parameter) : parameter == "size";
    return size ? read_size(value, json_path) : read_unsigned(value, json_path);
}

}  // namespace loader
