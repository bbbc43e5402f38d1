#include "report/perf.hpp"

#include <algorithm>
#include <cstdio>

#include "model/info.hpp"

namespace report {

auto perf_counter_names(const std::string& model) -> std::vector<std::string> {
    std::vector<std::string> names;
    const model::ModelInfo* info = model::find_model(model);
    if (info == nullptr) return names;
    for (const auto& counter : info->counters) {
        if (counter.perf_column) names.push_back(counter.name);
    }
    return names;
}

auto format_vary(const runner::VaryReport& report) -> std::string {
    std::string text = "crashsim perf " + report.scenario + " --vary " + report.name + " (" +
                       report.json_path + "), " + report.metric + " ratios:\n";
    std::vector<std::string> headers;
    if (!report.reports.empty()) {
        for (const auto& result : report.reports.front().ratios) {
            std::string header = result.ratio.numerator + "/" + result.ratio.denominator;
            if (result.point)
                header += "@" + report.reports.front().parameter + "=" + std::to_string(*result.point);
            headers.push_back(header);
        }
    }
    char cell[64];
    std::snprintf(cell, sizeof cell, "%16s", report.name.c_str());
    text += cell;
    for (const auto& header : headers) {
        std::snprintf(cell, sizeof cell, " %*s", static_cast<int>(std::max<std::size_t>(header.size(), 6)),
                      header.c_str());
        text += cell;
    }
    text += "  verdict\n";
    for (std::size_t i = 0; i < report.reports.size(); i++) {
        std::snprintf(cell, sizeof cell, "%16s", report.values[i].c_str());
        text += cell;
        std::string out_of_range;
        for (std::size_t j = 0; j < report.reports[i].ratios.size() && j < headers.size(); j++) {
            const auto& result = report.reports[i].ratios[j];
            std::snprintf(cell, sizeof cell, " %*.2f",
                          static_cast<int>(std::max<std::size_t>(headers[j].size(), 6)), result.value);
            text += cell;
            if (!result.met) out_of_range += (out_of_range.empty() ? "" : ", ") + headers[j];
        }
        text += out_of_range.empty() ? "  all in range\n" : "  out of range: " + out_of_range + "\n";
    }
    if (headers.empty()) text += "(the scenario declares no ratios)\n";
    return text;
}

CheckTable::CheckTable(const std::vector<loader::Scenario>& scenarios) {
    const auto widen = [](int& width, const std::string& text) {
        width = std::max(width, static_cast<int>(text.size()));
    };
    for (const loader::Scenario& scenario : scenarios) {
        widen(this->scenario, scenario.name);
        for (const loader::Variant& each : scenario.variants) {
            widen(variant, each.name);
            widen(expectation, runner::expectation_text(each.expect));
        }
        if (!scenario.perf) continue;
        for (const loader::PerfRatio& ratio : scenario.perf->ratios) {
            widen(expectation, runner::perf_row_expectation(scenario, ratio));
            widen(variant, runner::perf_row_variant(ratio, scenario.sweep_parameter, std::nullopt));
            for (const std::uint64_t point : scenario.sweep_values) {
                widen(variant, runner::perf_row_variant(ratio, scenario.sweep_parameter, point));
            }
        }
    }
}

auto CheckTable::header() const -> std::string {
    char line[512];
    std::snprintf(line, sizeof line, "%-*s %-*s %-*s %-7s %10s %13s %9s", scenario, "scenario", variant,
                  "variant", expectation, "expectation", "verdict", "schedules", "crash states", "time");
    return line;
}

auto CheckTable::row(const runner::CheckRow& row) const -> std::string {
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, " %-7s %10llu %13llu %7.2f s",
                  row.met     ? "ok"
                  : row.error ? "ERROR"
                              : "FAILED",
                  static_cast<unsigned long long>(row.schedules),
                  static_cast<unsigned long long>(row.crash_states), row.seconds);
    const auto padded = [](const std::string& text, int width) {
        return text +
               std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(text.size()))), ' ');
    };
    return padded(row.scenario, scenario) + " " + padded(row.variant, variant) + " " +
           padded(row.expectation, expectation) + numbers;
}

}  // namespace report
