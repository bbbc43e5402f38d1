// crashsim check: every variant's expectation (the CI gate).
#include "cli/common.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "report/console.hpp"
#include "report/perf.hpp"
#include "report/report.hpp"
#include "runner/gate.hpp"

namespace cli {
namespace {

struct CheckArgs {
    std::vector<std::string> paths;
    std::string junit;
    std::string json;
    std::uint32_t jobs = 1;
    std::uint64_t verify_every = 0;  // --verify-determinism N
};

/// The summary line of `check` (after the coverage when it ran to its end),
/// and its exit code.
auto check_verdict(const std::vector<runner::CheckRow>& rows, std::size_t total, bool interrupted,
                   std::uint64_t verify_every) -> ExitCode {
    const runner::GateSummary summary = runner::gate_summary(rows);
    if (interrupted) {
        say("check: interrupted: %zu of %zu expectations checked, %zu of them met; %zu not run or cut short "
            "(marked skipped in the JUnit and JSON reports)\n",
            rows.size() - summary.skipped, total, summary.met, summary.skipped);
        return ExitCode::interrupted;
    }
    output() += report::model_coverage_text(rows);
    if (verify_every != 0) output() += report::check_determinism_text(rows, verify_every);
    if (summary.errors == 0) {
        say("check: %zu of %zu expectations met\n", summary.met, rows.size());
    } else {
        say("check: %zu of %zu expectations met; %zu ERROR (a scenario file or run that failed on its "
            "input)\n",
            summary.met, rows.size(), summary.errors);
    }
    return summary.met == rows.size() ? ExitCode::pass : ExitCode::violation;
}

/// How the gate tells its progress: each row printed as it ends, a live
/// progress line while a campaign runs.
auto gate_options(const CheckArgs& args, const report::CheckTable& table,
                  std::optional<ProgressLine>& progress) -> runner::GateOptions {
    runner::GateOptions options;
    options.jobs = args.jobs;
    options.verify_every = args.verify_every;
    options.clock = seconds_now;
    options.print_row = [&table](const runner::CheckRow& row) {
        output() += report::check_row_text(table, row);
    };
    options.begin_variant = [&progress] { progress.emplace(true); };
    options.progress = [&progress](const runner::FuzzProgress& p) { progress->update(p); };
    options.end_variant = [&progress] { progress.reset(); };
    return options;
}

auto cmd_check(const CheckArgs& args) -> ExitCode {
    require_writable("--junit", args.junit);
    require_writable("--json", args.json);
    const auto files =
        runner::collect_scenarios(args.paths.empty() ? std::vector<std::string>{"scenarios"} : args.paths);
    if (files.empty()) throw loader::InputError("check: expected at least one scenario file, got none");
    std::vector<runner::CheckRow> rows;
    const auto [loaded, named] = runner::load_gate_scenarios(files, rows);
    report::CheckTable table(loaded);
    for (const auto& row : rows) {
        table.scenario = std::max(table.scenario, static_cast<int>(row.scenario.size()));
    }
    output() += report::check_header(table);
    const double started = seconds_now();
    bool interrupted = false;
    std::optional<ProgressLine> progress;
    const runner::GateOptions options = gate_options(args, table, progress);
    for (const auto& row : rows) options.print_row(row);
    for (std::size_t i = 0; i < loaded.size(); i++) {
        interrupted = runner::check_scenario(loaded[i], named[i], options, rows) || interrupted;
    }
    const double elapsed = seconds_now() - started;
    const std::size_t total = runner::expectations_total(files.size() - loaded.size(), loaded);
    if (!args.junit.empty()) report::write_junit(rows, elapsed, args.junit);
    if (!args.json.empty()) report::write_check_json(rows, elapsed, args.json);
    return check_verdict(rows, total, interrupted, args.verify_every);
}

}  // namespace

void add_check_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<CheckArgs>();
    CLI::App* check = app.add_subcommand("check", "check every variant's expectation (the CI gate)");
    check->add_option("paths", args->paths, "scenario files or directories (default: scenarios)");
    check->add_option("--junit", args->junit, "write a JUnit XML report to FILE");
    check->add_option("--json", args->json, "write a JSON report with every figure to FILE");
    check->add_option("--jobs", args->jobs,
                      "threads; the same verdicts, counts and violations for any J, only the wall time "
                      "changes (default 1)")
        ->check(in_range(1, jobs_max));
    check->add_option("--verify-determinism", args->verify_every,
                        "N: in every campaign, run every Nth schedule twice more with a trace and compare")
        ->check(in_range(1, schedules_max));
    verbs.add(check, [args] { return cmd_check(*args); });
}

}  // namespace cli
