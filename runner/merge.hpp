#pragma once
// The result of one fuzz campaign or shard, and the merge that combines the
// shards of a campaign into one result (crashsim merge); report/report.hpp
// writes and reads it as JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/campaign.hpp"

namespace runner {

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
    loader::ExploreBounds bounds{0, 0};
    std::vector<FoundViolation> violations;
    Counts judged;   // crash states each checker judged with something at stake
    Counts reached;  // hits of each of the model's yield points
    std::optional<DfsResult> dfs;  // dfs campaigns
    std::optional<FaultCounts> faults;  // a scenario with a fault budget (`faults`)
    /// The estimate printed before the campaign ran (shards: the first's).
    std::optional<SearchEstimate> estimate;
};

auto campaign_result(const FuzzReport& report, const FuzzRequest& request, const loader::Scenario& scenario,
                     std::uint64_t scenario_hash, const std::string& variant) -> CampaignResult;
/// Combines the shards of one campaign; throws InputError when they are not
/// the shards 0..N-1 of the same campaign, each once.
auto merge_results(const std::vector<CampaignResult>& shards, const std::vector<std::string>& paths)
    -> CampaignResult;

}  // namespace runner
