#pragma once
// Performance in virtual time (crashsim perf): every variant of a scenario
// runs its workload once, tasks in order, timers only when no task can run;
// throughput, fsync latency percentiles and the mechanism counters come from
// what the modelled code did (sleeps, lock waits, device latency), never
// from a ratio written into the model.
#include <optional>
#include <string>
#include <vector>

#include <functional>

#include "runner/campaign.hpp"
#include "runner/runner.hpp"

namespace runner {

struct PerfRow {
    std::string variant;
    std::optional<std::uint64_t> point;  // the swept parameter's value, in a sweep
    PerfOutcome outcome;
    double throughput_mib_s = 0;
    double writes_per_s = 0;
    double fsyncs_per_s = 0;
    double files_per_s = 0;  // files the tasks created per second (fs_mark); over the create phase, phased
    double unlinks_per_s = 0;  // files the tasks removed per second, over the unlink phase when phased
    double fsync_p50_ms = 0;
    double fsync_p99_ms = 0;
    double fsync_max_ms = 0;
    double metric = 0;  // the scenario's perf metric
};

struct PerfRatioResult {
    loader::PerfRatio ratio;
    std::optional<std::uint64_t> point;  // where it was evaluated, in a sweep
    double value = 0;
    bool met = false;
};

struct PerfReport {
    std::string parameter;     // the swept workload field ("jobs"), empty without a sweep
    std::vector<PerfRow> rows;  // every variant, point by point
    bool interrupted = false;   // a stop request ended it early (rows are incomplete)
    std::vector<PerfRatioResult> ratios;
};

/// crashsim perf --vary NAME=V1,V2,...: the scenario run once per value of
/// one parameter, to see which of its ratios are robust.
struct VaryReport {
    std::string scenario;   // its name, for the table's title
    std::string metric;     // of its perf expectations (throughput when none)
    std::string name;       // as given: reclaim_batch, cpus, nodesize, ...
    std::string json_path;  // the field each value replaces: $.machine.reclaim_batch
    std::vector<std::string> values;
    std::vector<PerfReport> reports;  // one per value, in order
    bool interrupted = false;
};
/// crashsim perf --points V1,V2,...: keeps only these points of the sweep
/// (and the ratios and seed figures declared at them); throws InputError
/// for a scenario without a sweep or a value it does not sweep.
void keep_points(loader::Scenario& scenario, const std::string& values);
/// The parameters --vary knows for a scenario of `model` (machine, device,
/// workload fields and the model's knobs).
auto vary_parameters(const std::string& model) -> std::vector<std::string>;
/// Loads the scenario once per value of `spec` ("NAME=V1,V2,...") and runs
/// each; a bad spec or value throws InputError naming it.
auto measure_vary(const std::string& path, const std::string& spec, const std::string& points = "")
    -> VaryReport;

/// Runs every variant (throws InputError on a deadlock or step bound).
auto measure(const loader::Scenario& scenario) -> PerfReport;
/// One check row per ratio of the scenario's perf expectations.
auto check_perf(const loader::Scenario& scenario, const std::function<double()>& clock)
    -> std::vector<CheckRow>;
/// The variant and expectation columns of a performance row of `check`.
auto perf_row_variant(const loader::PerfRatio& ratio, const std::string& parameter,
                      std::optional<std::uint64_t> point) -> std::string;
auto perf_row_expectation(const loader::Scenario& scenario, const loader::PerfRatio& ratio) -> std::string;
/// The metric a ratio compares: its own, else the scenario's perf.metric.
auto ratio_metric(const loader::Scenario& scenario, const loader::PerfRatio& ratio) -> const std::string&;

}  // namespace runner
