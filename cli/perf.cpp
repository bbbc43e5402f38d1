// crashsim perf: throughput and fsync latency of every variant, in virtual time.
#include "cli/common.hpp"

#include <algorithm>
#include <memory>

#include "report/perf.hpp"
#include "report/plot.hpp"
#include "runner/atomic_file.hpp"

namespace cli {
namespace {

struct PerfArgs {
    std::string scenario;
    std::string csv;
    std::string plot;
    std::string vary;
    std::string points;
};

// crashsim perf SCENARIO --vary NAME=V1,V2,...: one run of the scenario per value.
auto cmd_perf_vary(const std::string& path, const std::string& spec, const std::string& points) -> ExitCode {
    const double started = seconds_now();
    const runner::VaryReport report = runner::measure_vary(path, spec, points);
    const double elapsed = seconds_now() - started;
    if (report.interrupted) {
        say("interrupted: stopped after %.2f s of wall time; nothing written\n", elapsed);
        return ExitCode::interrupted;
    }
    say("%s", report::format_vary(report).c_str());
    say("%zu runs of the scenario in %.2f s of wall time\n", report.reports.size(), elapsed);
    return ExitCode::pass;
}

auto cmd_perf(const std::string& path, const std::string& csv, const std::string& plot,
              const std::string& points = "") -> ExitCode {
    require_writable("--csv", csv);
    require_writable("--plot", plot);
    if (!plot.empty()) report::check_plot_path(plot);
    loader::Scenario scenario = load(path);
    if (!points.empty()) runner::keep_points(scenario, points);
    if (!scenario.fio && !scenario.fs_mark && !scenario.create_unlink) {
        throw loader::InputError(path +
                                 ": $.workload: expected a declared workload for perf, got nothing");
    }
    const double started = seconds_now();
    const runner::PerfReport report = runner::measure(scenario);
    const double elapsed = seconds_now() - started;
    if (report.interrupted) {
        say("interrupted: stopped after %.2f s of wall time; nothing written\n", elapsed);
        return ExitCode::interrupted;
    }
    say("crashsim perf %s (%s device, virtual time)\n", scenario.name.c_str(),
        scenario.device.profile.c_str());
    output() += report::hypothetical_variants_text(scenario);
    const report::PerfTable table = report::perf_table(scenario, report);
    output() += table.table + table.ratios;
    const std::uint64_t operations = table.operations;
    const bool met = table.met;
    say("simulated %llu operations in %.2f s of wall time (%.0f operations/s)\n",
                static_cast<unsigned long long>(operations), elapsed, operations / std::max(elapsed, 1e-9));
    if (!csv.empty()) runner::write_text_file_atomically(csv, table.csv);
    if (!plot.empty()) {
        report::plot_svg(scenario, report, plot);
        say("plot: %s\n", plot.c_str());
    }
    return met ? ExitCode::pass : ExitCode::violation;
}

auto run_perf_verb(const PerfArgs& c) -> ExitCode {
    if (!c.vary.empty() && (!c.csv.empty() || !c.plot.empty())) {
        throw loader::InputError("--vary: expected no --csv or --plot with it, got both");
    }
    return c.vary.empty() ? cmd_perf(c.scenario, c.csv, c.plot, c.points)
                               : cmd_perf_vary(c.scenario, c.vary, c.points);
}

}  // namespace

void add_perf_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<PerfArgs>();
    CLI::App* perf =
        app.add_subcommand("perf", "throughput and fsync latency of every variant, in virtual time");
    perf->add_option("scenario", args->scenario, "scenario JSON file with a workload")->required();
    perf->add_option("--csv", args->csv, "write the table as CSV to FILE");
    perf->add_option("--plot", args->plot,
                     "draw the metric against the swept parameter into FILE.svg (needs gnuplot: "
                     "apt-get install gnuplot-nox)");
    perf->add_option("--vary", args->vary,
                     "NAME=V1,V2,...: run once per value of one parameter (machine, device, workload field "
                     "or knob) and print how each ratio moves");
    perf->add_option("--points", args->points, "V1,V2,...: run only these points of the scenario's sweep");
    verbs.add(perf, [args] { return run_perf_verb(*args); });
}

}  // namespace cli
