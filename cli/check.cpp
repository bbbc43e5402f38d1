// crashsim check: every variant's expectation (the CI gate).
#include "cli/common.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "report/console.hpp"
#include "report/perf.hpp"
#include "report/report.hpp"

namespace cli {
namespace {

struct ScenarioFile {
    std::string path;
    bool named = false;  // on the command line, not found in a directory
};

auto collect_scenarios(const std::vector<std::string>& paths) -> std::vector<ScenarioFile> {
    std::vector<ScenarioFile> files;
    for (const auto& path : paths) {
        if (std::filesystem::is_directory(path)) {
            const std::size_t before = files.size();
            for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
                const auto& p = entry.path();
                if (!entry.is_regular_file() || p.extension() != ".json") continue;
                // schema/ holds the JSON Schema, not scenarios.
                if (p.parent_path().filename() == "schema") continue;
                files.push_back({p.string(), false});
            }
            if (files.size() == before) {
                throw scenarios::InputError(path + ": expected a directory with scenario files (*.json), got none");
            }
        } else {
            files.push_back({path, true});
        }
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return files;
}

/// A row for a variant an interrupted check never ran: skipped in the
/// reports, never read as met (issue 14).
auto skipped_row(const scenarios::Scenario& scenario, std::string variant, std::string expectation)
    -> scenarios::CheckRow {
    scenarios::CheckRow row;
    row.scenario = scenario.name;
    row.scenario_path = scenario.path;
    row.variant = std::move(variant);
    row.expectation = std::move(expectation);
    row.skipped = true;
    row.detail = "not run: the check was interrupted before it";
    return row;
}

struct CheckArgs {
    std::vector<std::string> paths;
    std::string junit;
    std::string json;
    std::uint32_t jobs = 1;
    std::uint64_t verify_every = 0;  // --verify-determinism N
};

/// A row for what could not be checked: a file of a directory that does not
/// load, or a variant whose run fails on its input (issue 14).
auto error_row(const std::string& scenario, const std::string& path, const std::string& variant,
               const std::string& expectation, const std::string& message) -> scenarios::CheckRow {
    scenarios::CheckRow row;
    row.scenario = scenario;
    row.scenario_path = path;
    row.variant = variant;
    row.expectation = expectation;
    row.error = true;
    row.detail = message;
    return row;
}

/// The rows of one scenario's performance ratios, then of its variants, each
/// printed as it ends; once a stop is requested the rest are skipped rows.
/// True when the check was interrupted here. A scenario `named` on the command
/// line rethrows an input error; one found in a directory becomes an ERROR row.
auto check_scenario(const scenarios::Scenario& scenario, bool named, const CheckArgs& args,
                    const std::function<void(const scenarios::CheckRow&)>& print_row,
                    std::vector<scenarios::CheckRow>& rows) -> bool {
    bool interrupted = false;
    if (scenarios::stop_requested() && scenario.perf) {
        interrupted = true;
        for (const auto& ratio : scenario.perf->ratios) {
            rows.push_back(skipped_row(scenario, scenarios::perf_row_variant(ratio, scenario.sweep_parameter, ratio.at),
                                       scenarios::perf_row_expectation(scenario, ratio)));
        }
    }
    std::vector<scenarios::CheckRow> perf_rows;
    try {
        if (scenario.perf && !scenarios::stop_requested()) perf_rows = scenarios::check_perf(scenario, seconds_now);
    } catch (const scenarios::InputError& error) {
        if (named) throw;
        perf_rows.push_back(error_row(scenario.name, scenario.path, "perf", "measure", error.what()));
    }
    for (auto& row : perf_rows) {
        interrupted = interrupted || row.interrupted;
        print_row(row);
        rows.push_back(std::move(row));
    }
    for (const auto& variant : scenario.variants) {
        if (variant.expect.kind == scenarios::Expectation::Kind::measure) continue;
        const std::string expectation = scenarios::expectation_text(variant.expect);
        if (scenarios::stop_requested()) {
            interrupted = true;
            rows.push_back(skipped_row(scenario, variant.name, expectation));
            continue;
        }
        ProgressLine progress(true);
        try {
            rows.push_back(scenarios::check_variant(
                scenario, variant, seconds_now, args.jobs,
                [&progress](const scenarios::FuzzProgress& p) { progress.update(p); }, args.verify_every));
        } catch (const scenarios::InputError& error) {
            if (named) throw;
            rows.push_back(error_row(scenario.name, scenario.path, variant.name, expectation, error.what()));
        }
        progress.clear();
        const scenarios::CheckRow& row = rows.back();
        interrupted = interrupted || row.interrupted;
        print_row(row);
    }
    return interrupted;
}

/// The scenarios `check` runs, each with whether it was named on the command line.
struct CheckScenarios {
    std::vector<scenarios::Scenario> loaded;
    std::vector<bool> named;
};

// A bad file named on the command line is bad input (exit 2, like every verb);
// one found in a directory is an ERROR row and the other scenarios still run.
auto load_check_scenarios(const std::vector<ScenarioFile>& files, std::vector<scenarios::CheckRow>& rows)
    -> CheckScenarios {
    CheckScenarios checked;
    for (const auto& file : files) {
        try {
            checked.loaded.push_back(load(file.path));
            checked.named.push_back(file.named);
        } catch (const scenarios::InputError& error) {
            if (file.named) throw;
            rows.push_back(error_row(file.path, file.path, "-", "loads", error.what()));
        }
    }
    return checked;
}

/// The expectations `check` has: one per file in error, one per variant that
/// is not a measure and one per performance ratio of each scenario loaded.
auto expectations_total(std::size_t files_in_error, const std::vector<scenarios::Scenario>& loaded)
    -> std::size_t {
    std::size_t total = files_in_error;
    for (const auto& scenario : loaded) {
        for (const auto& variant : scenario.variants) {
            if (variant.expect.kind != scenarios::Expectation::Kind::measure) total++;
        }
        if (scenario.perf) total += scenario.perf->ratios.size();
    }
    return total;
}

/// The summary line of `check` (after the coverage when it ran to its end),
/// and its exit code.
auto check_verdict(const std::vector<scenarios::CheckRow>& rows, std::size_t total, bool interrupted,
                   std::uint64_t verify_every) -> ExitCode {
    const auto met = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.met; }));
    if (interrupted) {
        const auto skipped = static_cast<std::size_t>(
            std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.skipped || r.interrupted; }));
        say("check: interrupted: %zu of %zu expectations checked, %zu of them met; %zu not run or cut short "
            "(marked skipped in the JUnit and JSON reports)\n",
            rows.size() - skipped, total, met, skipped);
        return ExitCode::interrupted;
    }
    output() += scenarios::model_coverage_text(rows);
    if (verify_every != 0) output() += scenarios::check_determinism_text(rows, verify_every);
    const auto errors = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.error; }));
    if (errors == 0) {
        say("check: %zu of %zu expectations met\n", met, rows.size());
    } else {
        say("check: %zu of %zu expectations met; %zu ERROR (a scenario file or run that failed on its input)\n", met,
            rows.size(), errors);
    }
    return met == rows.size() ? ExitCode::pass : ExitCode::violation;
}

auto cmd_check(const CheckArgs& args) -> ExitCode {
    require_writable("--junit", args.junit);
    require_writable("--json", args.json);
    const auto files =
        collect_scenarios(args.paths.empty() ? std::vector<std::string>{"scenarios"} : args.paths);
    if (files.empty()) throw scenarios::InputError("check: expected at least one scenario file, got none");
    std::vector<scenarios::CheckRow> rows;
    const auto [loaded, named] = load_check_scenarios(files, rows);
    scenarios::CheckTable table(loaded);
    for (const auto& row : rows) {
        table.scenario = std::max(table.scenario, static_cast<int>(row.scenario.size()));
    }
    output() += scenarios::check_header(table);
    const double started = seconds_now();
    bool interrupted = false;
    const auto print_row = [&table](const scenarios::CheckRow& row) {
        output() += scenarios::check_row_text(table, row);
    };
    for (const auto& row : rows) print_row(row);
    for (std::size_t i = 0; i < loaded.size(); i++) {
        interrupted = check_scenario(loaded[i], named[i], args, print_row, rows) || interrupted;
    }
    const double elapsed = seconds_now() - started;
    const std::size_t total = expectations_total(files.size() - loaded.size(), loaded);
    if (!args.junit.empty()) scenarios::write_junit(rows, elapsed, args.junit);
    if (!args.json.empty()) scenarios::write_check_json(rows, elapsed, args.json);
    return check_verdict(rows, total, interrupted, args.verify_every);
}

}  // namespace

void add_check_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<CheckArgs>();
    CLI::App* check = app.add_subcommand("check", "check every variant's expectation (the CI gate)");
    check->add_option("paths", args->paths, "scenario files or directories (default: scenarios)");
    check->add_option("--junit", args->junit, "write a JUnit XML report to FILE");
    check->add_option("--json", args->json, "write a JSON report with every figure to FILE");
    check->add_option("--jobs", args->jobs, "threads for random and pct campaigns (default 1)")
        ->check(in_range(1, jobs_max));
    check->add_option("--verify-determinism", args->verify_every,
                        "N: in every campaign, run every Nth schedule twice more with a trace and compare")
        ->check(in_range(1, schedules_max));
    verbs.add(check, [args] { return cmd_check(*args); });
}

}  // namespace cli
