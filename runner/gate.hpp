#pragma once
// The gate (crashsim check): the scenario files it finds, each loaded, each
// variant's expectation and each performance ratio checked in turn, and the
// rows that say so. The command line prints the rows and the summary.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "runner/campaign.hpp"

namespace runner {

struct ScenarioFile {
    std::string path;
    bool named = false;  // on the command line, not found in a directory
};

/// The scenario files under `paths` (directories searched for *.json but
/// schema/), sorted by path; a directory without one is bad input.
auto collect_scenarios(const std::vector<std::string>& paths) -> std::vector<ScenarioFile>;

/// A row for a variant an interrupted check never ran: skipped in the
/// reports, never read as met.
auto skipped_row(const loader::Scenario& scenario, std::string variant, std::string expectation) -> CheckRow;

/// A row for what could not be checked: a file of a directory that does not
/// load, or a variant whose run fails on its input.
auto error_row(const std::string& scenario, const std::string& path, const std::string& variant,
               const std::string& expectation, const std::string& message) -> CheckRow;

/// How the gate runs a scenario, and what it tells the caller as it goes.
struct GateOptions {
    std::uint32_t jobs = 1;
    std::uint64_t verify_every = 0;  // --verify-determinism N
    std::function<double()> clock;                   // seconds, for the time column
    std::function<void(const CheckRow&)> print_row;  // each row as it ends
    std::function<void()> begin_variant;             // a campaign starts
    std::function<void(const FuzzProgress&)> progress;
    std::function<void()> end_variant;  // a campaign ended
};

/// The rows of one scenario's performance ratios, then of its variants, each
/// printed as it ends; once a stop is requested the rest are skipped rows.
/// True when the check was interrupted here. A scenario `named` on the command
/// line rethrows an input error; one found in a directory becomes an ERROR row.
auto check_scenario(const loader::Scenario& scenario, bool named, const GateOptions& options,
                    std::vector<CheckRow>& rows) -> bool;

/// The scenarios `check` runs, each with whether it was named on the command line.
struct CheckScenarios {
    std::vector<loader::Scenario> loaded;
    std::vector<bool> named;
};

// A bad file named on the command line is bad input (exit 2, like every verb);
// one found in a directory is an ERROR row and the other scenarios still run.
auto load_gate_scenarios(const std::vector<ScenarioFile>& files, std::vector<CheckRow>& rows)
    -> CheckScenarios;

/// The expectations `check` has: one per file in error, one per variant that
/// is not a measure and one per performance ratio of each scenario loaded.
auto expectations_total(std::size_t files_in_error, const std::vector<loader::Scenario>& loaded)
    -> std::size_t;

/// The counts the summary line of `check` gives.
struct GateSummary {
    std::size_t met = 0;
    std::size_t skipped = 0;  // not run or cut short (interrupted)
    std::size_t errors = 0;
};
auto gate_summary(const std::vector<CheckRow>& rows) -> GateSummary;

}  // namespace runner
