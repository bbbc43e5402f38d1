#include "runner/merge.hpp"

#include <algorithm>
#include <map>

#include "runner/coverage.hpp"
#include "runner/repro.hpp"

namespace runner {

auto campaign_result(const FuzzReport& report, const FuzzRequest& request, const loader::Scenario& scenario,
                     std::uint64_t scenario_hash, const std::string& variant) -> CampaignResult {
    CampaignResult result;
    result.scenario = scenario.name;
    result.scenario_hash = scenario_hash;
    result.variant = variant;
    result.strategy = request.strategy.text();
    result.seed = request.seed;
    result.schedules = request.schedules;
    result.shard_index = request.shard_index;
    result.shard_count = request.shard_count;
    result.schedules_run = report.schedules;
    result.crash_states = report.crash_states;
    result.steps = report.steps;
    result.interrupted = report.interrupted;
    result.bounds = report.bounds;
    result.violations = report.violations;
    result.judged = judged_counts(report.checker_names, report.judged);
    result.reached = reached_counts(scenario.model, report.hits);
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs) {
        result.dfs = DfsResult{report.complete, report.split_depth, report.units, report.units_explored,
                               report.dfs,     report.unit_schedules};
    }
    if (scenario.faults.budget > 0) result.faults = report.faults;
    return result;
}

namespace {

/// Throws unless `shard` (read from `path`) is another shard of the campaign
/// of `first` (read from `first_path`), and one not given before (`seen`).
void check_same_campaign(const CampaignResult& shard, const std::string& path, const CampaignResult& first,
                         const std::string& first_path, const std::vector<bool>& seen) {
    auto differs = [&](const std::string& field, const std::string& got, const std::string& expected) {
        throw loader::InputError(path + ": $." + field + ": expected " + expected + " like " + first_path +
                                 ", got " + got);
    };
    if (shard.scenario != first.scenario || shard.scenario_hash != first.scenario_hash) {
        differs("scenario", "\"" + shard.scenario + "\"", "the same scenario");
    }
    if (shard.variant != first.variant) {
        differs("variant", "\"" + shard.variant + "\"", "\"" + first.variant + "\"");
    }
    if (shard.strategy != first.strategy) {
        differs("strategy", "\"" + shard.strategy + "\"", "\"" + first.strategy + "\"");
    }
    if (shard.seed != first.seed) differs("seed", std::to_string(shard.seed), std::to_string(first.seed));
    if (shard.schedules != first.schedules) {
        differs("schedules", std::to_string(shard.schedules), std::to_string(first.schedules));
    }
    if (!(shard.bounds == first.bounds)) {
        differs("explore", "\"" + loader::describe_bounds(shard.bounds) + "\"",
                "\"" + loader::describe_bounds(first.bounds) + "\"");
    }
    if (shard.shard_count != first.shard_count) {
        differs("shard.count", std::to_string(shard.shard_count), std::to_string(first.shard_count));
    }
    if (shard.shard_index >= shard.shard_count || seen[shard.shard_index]) {
        differs("shard.index", std::to_string(shard.shard_index), "a shard not given before");
    }
    // dfs shards share out the units of one split: the same depth in each.
    const auto depth = [](const CampaignResult& result) { return result.dfs ? result.dfs->split_depth : 0; };
    if (shard.dfs.has_value() != first.dfs.has_value() || depth(shard) != depth(first)) {
        differs("dfs.split_depth", shard.dfs ? std::to_string(depth(shard)) : "none",
                first.dfs ? "split depth " + std::to_string(depth(first)) : "no dfs member");
    }
    if (shard.faults.has_value() != first.faults.has_value()) {
        differs("faults", shard.faults ? "fault counts" : "none",
                first.faults ? "fault counts" : "no faults member");
    }
}

/// Adds a dfs shard's search figures: complete only when every shard is.
void merge_dfs(DfsResult& merged, const DfsResult& shard) {
    merged.complete = merged.complete && shard.complete;
    merged.units = std::max(merged.units, shard.units);
    merged.units_explored += shard.units_explored;
    merged.stats += shard.stats;
    merged.unit_schedules.insert(merged.unit_schedules.end(), shard.unit_schedules.begin(),
                                 shard.unit_schedules.end());
}

/// dfs: a shard's violation counts its index within its unit; the merged
/// search's count from the search's first schedule, as the unsharded one's.
void index_from_first(CampaignResult& merged) {
    if (!merged.dfs) return;
    std::vector<std::pair<std::uint64_t, std::uint64_t>>& units = merged.dfs->unit_schedules;
    std::sort(units.begin(), units.end());
    std::map<std::uint64_t, std::uint64_t> offset;
    std::uint64_t before = 0;
    for (const auto& [unit, schedules] : units) {
        offset[unit] = before;
        before += schedules;
    }
    for (FoundViolation& found : merged.violations) {
        if (!found.unit || offset.count(*found.unit) == 0) continue;
        found.index += offset[*found.unit];
        found.unit = std::nullopt;
    }
}

}  // namespace

auto merge_results(const std::vector<CampaignResult>& shards, const std::vector<std::string>& paths)
    -> CampaignResult {
    if (shards.empty()) throw loader::InputError("merge: expected at least one result file, got none");
    const CampaignResult& first = shards.front();
    std::vector<bool> seen(first.shard_count, false);
    CampaignResult merged = first;
    merged.shard_index = 0;
    merged.shard_count = 1;
    merged.schedules_run = merged.crash_states = merged.steps = 0;
    merged.interrupted = false;
    merged.violations.clear();
    merged.judged.clear();
    merged.reached.clear();
    if (merged.dfs) merged.dfs = DfsResult{true, first.dfs->split_depth, 0, 0, {}, {}};
    if (merged.faults) merged.faults = FaultCounts{};
    for (std::size_t i = 0; i < shards.size(); i++) {
        const CampaignResult& shard = shards[i];
        check_same_campaign(shard, paths[i], first, paths[0], seen);
        seen[shard.shard_index] = true;
        merged.schedules_run += shard.schedules_run;
        merged.crash_states += shard.crash_states;
        merged.steps += shard.steps;
        merged.interrupted = merged.interrupted || shard.interrupted;
        merged.violations.insert(merged.violations.end(), shard.violations.begin(), shard.violations.end());
        add_named(merged.judged, shard.judged);
        add_named(merged.reached, shard.reached);
        if (merged.dfs) merge_dfs(*merged.dfs, *shard.dfs);
        if (merged.faults) *merged.faults += *shard.faults;
    }
    for (std::uint32_t k = 0; k < first.shard_count; k++) {
        if (!seen[k]) {
            throw loader::InputError("merge: expected shards 0.." + std::to_string(first.shard_count - 1) +
                                     " of the campaign, got no shard " + std::to_string(k));
        }
    }
    // dfs shards: by unit, then within it (the unsplit search's order).
    std::sort(merged.violations.begin(), merged.violations.end(),
              [](const FoundViolation& a, const FoundViolation& b) {
                  return std::pair(a.unit.value_or(0), a.index) < std::pair(b.unit.value_or(0), b.index);
              });
    index_from_first(merged);
    return merged;
}

}  // namespace runner
