#pragma once
// Performance in virtual time, presented: the --vary table and the columns of
// the `check` table (runner/perf.hpp runs the workloads).
#include <string>
#include <vector>

#include "runner/perf.hpp"

namespace report {

/// The table: one row per value, the value, each declared ratio, the verdict.
auto format_vary(const runner::VaryReport& report) -> std::string;
/// The counters the table shows for a model, in order (its ModelInfo's perf_column counters).
auto perf_counter_names(const std::string& model) -> std::vector<std::string>;

/// The columns of the `check` table, wide enough for every row the scenarios
/// can print (performance rows too), so that columns stay aligned.
struct CheckTable {
    explicit CheckTable(const std::vector<loader::Scenario>& scenarios);
    [[nodiscard]] auto header() const -> std::string;
    [[nodiscard]] auto row(const runner::CheckRow& row) const -> std::string;
    int scenario = 40;
    int variant = 12;
    int expectation = 28;
};

}  // namespace report
