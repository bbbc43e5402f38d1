#pragma once
// The text every verb of the command line prints, as strings, so tests can
// read it: fuzz and merge summaries, the check table, the perf table and its
// CSV, the progress line and `crashsim list`. The command line only decides
// when to print (cli/crashsim.cpp); it reads the wall clock, this never does.
#include <cstdarg>
#include <cstdint>
#include <string>
#include <vector>

#include "report/perf.hpp"
#include "report/report.hpp"
#include "runner/campaign.hpp"
#include "runner/coverage.hpp"

namespace report {

/// printf into a string.
[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* format, ...);

/// One "VIOLATION checker: message; crash after step N (...)" line per violation.
auto violations_text(const runner::RunOutcome& outcome) -> std::string;
/// The violations, then "no violation (N crash state(s) checked)" when none.
auto verdict_text(const runner::RunOutcome& outcome) -> std::string;

/// The live progress line of a campaign (without the carriage return).
auto progress_text(const runner::FuzzProgress& progress, double elapsed_s) -> std::string;

/// "crashsim fuzz NAME: variant V, strategy S, seed N[, shard K/N][, J jobs]".
auto fuzz_header(const std::string& scenario, const std::string& variant, const runner::FuzzRequest& request)
    -> std::string;
/// "estimate (...): about N schedules, M crash states, T s at the measured
/// rate ..." (fuzz --estimate, and the first line of every dfs run).
auto estimate_text(const runner::SearchEstimate& estimate, const runner::FuzzRequest& request) -> std::string;
/// What a campaign explored and concluded (after the failing story, if any).
auto fuzz_summary(const runner::FuzzReport& report, const runner::FuzzRequest& request, double elapsed_s)
    -> std::string;
/// What a verdict stands on: stake counts and yield-point coverage.
auto coverage_summary(const runner::Counts& judged, const runner::Counts& reached) -> std::string;
/// `crashsim merge`'s report of the merged campaign.
auto merge_summary(const runner::CampaignResult& merged, std::size_t shards) -> std::string;

/// The check table: its header, one row (and its detail lines), the coverage
/// of each model over every row.
auto check_header(const CheckTable& table) -> std::string;
auto check_row_text(const CheckTable& table, const runner::CheckRow& row) -> std::string;
auto model_coverage_text(const std::vector<runner::CheckRow>& rows) -> std::string;
/// `check --verify-determinism N`: how many schedules were run again, and
/// whether every one ran the same (a row says which did not).
auto check_determinism_text(const std::vector<runner::CheckRow>& rows, std::uint64_t every) -> std::string;

/// `crashsim perf`: the table (header, one line per row, the ratio verdicts)
/// and the same rows as CSV.
struct PerfTable {
    std::string table;
    std::string ratios;
    std::string csv;
    std::uint64_t operations = 0;  // writes, fsyncs and creates over every row
    bool met = true;               // every ratio in its range
};
auto perf_table(const loader::Scenario& scenario, const runner::PerfReport& report) -> PerfTable;
/// The header's notes on variants whose knob values name no real kernel.
auto hypothetical_variants_text(const loader::Scenario& scenario) -> std::string;

/// `crashsim list`: models, knobs, operations, checkers, device profiles.
auto list_text() -> std::string;
/// `crashsim list SCENARIO`: the machine profiles the scenario declares and
/// which variants run on each.
auto machine_profiles_text(const loader::Scenario& scenario) -> std::string;

}  // namespace report
