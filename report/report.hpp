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

namespace scenarios {

void write_junit(const std::vector<CheckRow>& rows, double seconds, const std::string& path);
void write_check_json(const std::vector<CheckRow>& rows, double seconds, const std::string& path);
/// "device faults: N injected into crash states: S survived, D detected, ..."
/// (the console's line, also in a JUnit row's <system-out>).
auto fault_counts_text(const FaultCounts& faults) -> std::string;

/// The stake counts and coverage as JSON: {"judged": {...}, "coverage": {...}}
/// members, added to a row or a campaign result.
void add_coverage_json(nlohmann::ordered_json& json, const Counts& judged, const Counts& reached);

/// A dfs campaign's search figures: "dfs" in a result file.
struct DfsResult {
    bool complete = false;  // every unit of this result explored within the bound
    std::uint64_t split_depth = 0;  // 0: not split
    std::uint64_t units = 0;        // the tree's, when known
    std::uint64_t units_explored = 0;
    sim::DfsStats stats;
    /// A shard's: (unit, schedules) of each unit it explored (FuzzReport::unit_schedules).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> unit_schedules;
};

/// A fuzz campaign's result, or one shard's.
struct CampaignResult {
    std::string scenario;       // name
    std::uint64_t scenario_hash = 0;  // of the scenario file's text
    std::string variant;
    std::string strategy;
    std::uint64_t seed = 0;
    std::uint64_t schedules = 0;  // the whole campaign's size
    std::uint32_t shard_index = 0;
    std::uint32_t shard_count = 1;
    std::uint64_t schedules_run = 0;
    std::uint64_t crash_states = 0;
    std::uint64_t steps = 0;
    bool interrupted = false;
    /// The bounds the shard explored with; shards of one campaign must agree.
    /// A result file without them comes from before reorderings and daemon
    /// wake-ups were choices: {0, 0}.
    ExploreBounds bounds{0, 0};
    std::vector<FoundViolation> violations;
    Counts judged;   // crash states each checker judged with something at stake
    Counts reached;  // hits of each of the model's yield points
    std::optional<DfsResult> dfs;  // dfs campaigns
    std::optional<FaultCounts> faults;  // a scenario with a fault budget (`faults`)
    /// The estimate printed before the campaign ran (shards: the first's).
    std::optional<SearchEstimate> estimate;
};

auto campaign_result(const FuzzReport& report, const FuzzRequest& request, const Scenario& scenario,
                     std::uint64_t scenario_hash, const std::string& variant) -> CampaignResult;
/// The result file's JSON text (format crashsim_result 1).
auto campaign_result_text(const CampaignResult& result) -> std::string;
void write_campaign_result(const CampaignResult& result, const std::string& path);
/// Throws InputError naming the file and JSON path.
auto read_campaign_result(const std::string& path) -> CampaignResult;
auto parse_campaign_result(const std::string& text, const std::string& path) -> CampaignResult;
/// Combines the shards of one campaign; throws InputError when they are not
/// the shards 0..N-1 of the same campaign, each once.
auto merge_results(const std::vector<CampaignResult>& shards, const std::vector<std::string>& paths)
    -> CampaignResult;

}  // namespace scenarios
