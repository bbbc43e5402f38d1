#include "scenarios/perf.hpp"

#include <cstdio>

#include "sim/assert.hpp"

namespace scenarios {
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

auto perf_counter_names() -> const std::vector<std::string>& {
    static const std::vector<std::string> names = {
        "log_commits",      "log_followers", "jiffy_sleeps",  "fsyncs_fast",
        "fsyncs_full",      "checksum_lookups", "checksum_lock_waits", "extent_maps_released",
        "extent_maps_merged", "pages_reclaimed", "transactions_committed", "transactions",
        "log_forces",       "unwritten_conversions", "data_ios", "disk_writes", "disk_flushes",
    };
    return names;
}

namespace {

void measure_point(const Scenario& scenario, std::optional<std::uint64_t> point, const std::string& metric,
                   PerfReport& report) {
    for (const Variant& variant : scenario.variants) {
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
            throw InputError(scenario.path + ": $.variants: expected variant " + variant.name +
                             "'s workload to run to its end, got " + row.outcome.problem);
        }
        const double seconds = std::max(static_cast<double>(row.outcome.elapsed_ns) / 1e9, 1e-12);
        row.throughput_mib_s = static_cast<double>(row.outcome.bytes_written) / (1024.0 * 1024.0) / seconds;
        row.writes_per_s = static_cast<double>(row.outcome.writes) / seconds;
        row.fsyncs_per_s = static_cast<double>(row.outcome.fsyncs) / seconds;
        row.files_per_s = static_cast<double>(row.outcome.creates) / seconds;
        row.fsync_p50_ms = percentile_ms(row.outcome.fsync_latencies_ns, 0.50);
        row.fsync_p99_ms = percentile_ms(row.outcome.fsync_latencies_ns, 0.99);
        row.fsync_max_ms = row.outcome.fsync_latencies_ns.empty()
                               ? 0
                               : static_cast<double>(row.outcome.fsync_latencies_ns.back()) / 1e6;
        row.metric = metric == "fsync_rate"    ? row.fsyncs_per_s
                     : metric == "files_per_s" ? row.files_per_s
                                               : row.throughput_mib_s;
        report.rows.push_back(std::move(row));
    }
}

}  // namespace

auto measure(const Scenario& scenario) -> PerfReport {
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
    for (const PerfRatio& ratio : scenario.perf->ratios) {
        for (const auto& point : points) {
            if (ratio.at && point != ratio.at) continue;
            double numerator = 0;
            double denominator = 0;
            for (const auto& row : report.rows) {
                if (row.point != point) continue;
                if (row.variant == ratio.numerator) numerator = row.metric;
                if (row.variant == ratio.denominator) denominator = row.metric;
            }
            PerfRatioResult result{ratio, point, denominator > 0 ? numerator / denominator : 0, false};
            result.met = result.value >= ratio.min && result.value <= ratio.max;
            report.ratios.push_back(result);
        }
    }
    return report;
}

auto check_perf(const Scenario& scenario, const std::function<double()>& clock) -> std::vector<CheckRow> {
    std::vector<CheckRow> rows;
    if (!scenario.perf) return rows;
    const double started = clock();
    const PerfReport report = measure(scenario);
    const double seconds = clock() - started;
    for (const auto& result : report.ratios) {
        CheckRow row;
        row.scenario = scenario.name;
        row.scenario_path = scenario.path;
        row.variant = result.ratio.numerator + "/" + result.ratio.denominator;
        if (result.point) row.variant += " at " + report.parameter + "=" + std::to_string(*result.point);
        row.expectation = scenario.perf->metric + " ratio in [" + format_ratio(result.ratio.min) + ", " +
                          format_ratio(result.ratio.max) + "]";
        row.met = result.met;
        row.detail = scenario.perf->metric + " ratio " + format_ratio(result.value);
        row.schedules = report.rows.size();
        row.seconds = seconds / static_cast<double>(report.ratios.size());
        if (!row.met) row.command = "crashsim perf " + scenario.path;
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace scenarios
