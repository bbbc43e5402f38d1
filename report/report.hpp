#pragma once
// Report files for CI: JUnit XML (one testcase per scenario variant, in the
// shape GitLab, Jenkins and GitHub test reporters read) and a JSON report with
// every figure; and the JSON result of one fuzz campaign or shard, which
// `crashsim merge` combines. Every file is written to a temporary name and
// renamed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/campaign.hpp"
#include "runner/merge.hpp"

namespace report {

void write_junit(const std::vector<runner::CheckRow>& rows, double seconds, const std::string& path);
void write_check_json(const std::vector<runner::CheckRow>& rows, double seconds, const std::string& path);
/// "device faults: N injected into crash states: S survived, D detected, ..."
/// (the console's line, also in a JUnit row's <system-out>).
auto fault_counts_text(const runner::FaultCounts& faults) -> std::string;

/// The stake counts and coverage as JSON: {"judged": {...}, "coverage": {...}}
/// members, added to a row or a campaign result.
void add_coverage_json(nlohmann::ordered_json& json, const runner::Counts& judged,
                       const runner::Counts& reached);

/// The result file's JSON text (format crashsim_result 1).
auto campaign_result_text(const runner::CampaignResult& result) -> std::string;
void write_campaign_result(const runner::CampaignResult& result, const std::string& path);
/// Throws InputError naming the file and JSON path.
auto read_campaign_result(const std::string& path) -> runner::CampaignResult;
auto parse_campaign_result(const std::string& text, const std::string& path) -> runner::CampaignResult;
}  // namespace report
