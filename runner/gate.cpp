#include "runner/gate.hpp"

#include <algorithm>
#include <filesystem>

#include "loader/json_reader.hpp"
#include "runner/perf.hpp"

namespace runner {

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
                throw loader::InputError(path +
                                         ": expected a directory with scenario files (*.json), got none");
            }
        } else {
            files.push_back({path, true});
        }
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return files;
}

auto skipped_row(const loader::Scenario& scenario, std::string variant, std::string expectation)
    -> CheckRow {
    CheckRow row;
    row.scenario = scenario.name;
    row.scenario_path = scenario.path;
    row.variant = std::move(variant);
    row.expectation = std::move(expectation);
    row.skipped = true;
    row.detail = "not run: the check was interrupted before it";
    return row;
}

auto error_row(const std::string& scenario, const std::string& path, const std::string& variant,
               const std::string& expectation, const std::string& message) -> CheckRow {
    CheckRow row;
    row.scenario = scenario;
    row.scenario_path = path;
    row.variant = variant;
    row.expectation = expectation;
    row.error = true;
    row.detail = message;
    return row;
}

auto check_scenario(const loader::Scenario& scenario, bool named, const GateOptions& options,
                    std::vector<CheckRow>& rows) -> bool {
    bool interrupted = false;
    if (stop_requested() && scenario.perf) {
        interrupted = true;
        for (const auto& ratio : scenario.perf->ratios) {
            rows.push_back(skipped_row(scenario, perf_row_variant(ratio, scenario.sweep_parameter, ratio.at),
                                       perf_row_expectation(scenario, ratio)));
        }
    }
    std::vector<CheckRow> perf_rows;
    try {
        if (scenario.perf && !stop_requested()) perf_rows = check_perf(scenario, options.clock);
    } catch (const loader::InputError& error) {
        if (named) throw;
        perf_rows.push_back(error_row(scenario.name, scenario.path, "perf", "measure", error.what()));
    }
    for (auto& row : perf_rows) {
        interrupted = interrupted || row.interrupted;
        options.print_row(row);
        rows.push_back(std::move(row));
    }
    for (const auto& variant : scenario.variants) {
        if (variant.expect.kind == loader::Expectation::Kind::measure) continue;
        const std::string expectation = expectation_text(variant.expect);
        if (stop_requested()) {
            interrupted = true;
            rows.push_back(skipped_row(scenario, variant.name, expectation));
            continue;
        }
        options.begin_variant();
        try {
            rows.push_back(check_variant(scenario, variant, options.clock, options.jobs, options.progress,
                                         options.verify_every));
        } catch (const loader::InputError& error) {
            if (named) throw;
            rows.push_back(error_row(scenario.name, scenario.path, variant.name, expectation, error.what()));
        }
        options.end_variant();
        const CheckRow& row = rows.back();
        interrupted = interrupted || row.interrupted;
        options.print_row(row);
    }
    return interrupted;
}

auto load_gate_scenarios(const std::vector<ScenarioFile>& files, std::vector<CheckRow>& rows)
    -> CheckScenarios {
    CheckScenarios checked;
    for (const auto& file : files) {
        try {
            checked.loaded.push_back(loader::parse_scenario(loader::read_text_file(file.path), file.path));
            checked.named.push_back(file.named);
        } catch (const loader::InputError& error) {
            if (file.named) throw;
            rows.push_back(error_row(file.path, file.path, "-", "loads", error.what()));
        }
    }
    return checked;
}

auto expectations_total(std::size_t files_in_error, const std::vector<loader::Scenario>& loaded)
    -> std::size_t {
    std::size_t total = files_in_error;
    for (const auto& scenario : loaded) {
        for (const auto& variant : scenario.variants) {
            if (variant.expect.kind != loader::Expectation::Kind::measure) total++;
        }
        if (scenario.perf) total += scenario.perf->ratios.size();
    }
    return total;
}

auto gate_summary(const std::vector<CheckRow>& rows) -> GateSummary {
    GateSummary summary;
    summary.met = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.met; }));
    summary.skipped = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.skipped || r.interrupted; }));
    summary.errors = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.error; }));
    return summary;
}

}  // namespace runner
