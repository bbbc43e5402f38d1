// A campaign's budgets are totals: `check` and `fuzz` give the same verdict,
// counts and violations for any --jobs, capped or not, and the shards of a
// campaign merge to the unsharded result, byte for byte in the JSON each
// writes (times aside).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "report/report.hpp"
#include "runner/campaign.hpp"
#include "tests/support.hpp"

namespace {

auto read_text(const std::string& path) -> std::string {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/// `check --json` of the scenario's variants with `jobs` jobs, the times zeroed.
auto check_json(const loader::Scenario& scenario, std::uint32_t jobs) -> std::string {
    std::vector<runner::CheckRow> rows;
    for (const auto& variant : scenario.variants) {
        rows.push_back(runner::check_variant(scenario, variant, [] { return 0.0; }, jobs));
        rows.back().seconds = 0;
    }
    const std::string path =
        (std::filesystem::temp_directory_path() / ("crashsim-budget-check-" + std::to_string(jobs) + ".json"))
            .string();
    report::write_check_json(rows, 0, path);
    const std::string text = read_text(path);
    std::filesystem::remove(path);
    return text;
}

/// The bundled kthread race with budgets its dfs:1 search (20,019 schedules)
/// does not reach with one job and would reach with two jobs' worth.
auto capped_kthread() -> loader::Scenario {
    loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/kthread-commit-in-fast-fsync.json");
    scenario.variants.resize(2);
    for (auto& variant : scenario.variants) {
        variant.expect.fuzz.strategies = {test_support::spec_of("random"), test_support::spec_of("pct:3"),
                                          test_support::spec_of("dfs:1")};
        variant.expect.fuzz.states = sim::VisitedKey::none;
        variant.expect.fuzz.schedules = 600;
        variant.expect.fuzz.dfs_schedules = 12'000;
    }
    return scenario;
}

struct Campaign {
    std::string strategy;
    std::uint64_t schedules;
    bool stop_at_first = true;
    std::size_t split_depth = 0;
};

/// The result of one campaign, run with `jobs` jobs as shard `shard` of `shards`.
auto result_of(const loader::Scenario& scenario, const std::string& variant, const Campaign& campaign,
               std::uint32_t jobs, std::uint32_t shard = 0, std::uint32_t shards = 1)
    -> runner::CampaignResult {
    runner::Simulation simulation(scenario, *scenario.find_variant(variant));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of(campaign.strategy);
    request.schedules = campaign.schedules;
    request.stop_at_first = campaign.stop_at_first && shards == 1;
    request.jobs = jobs;
    request.shard_index = shard;
    request.shard_count = shards;
    request.split_depth = campaign.split_depth;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    return runner::campaign_result(report, request, scenario, 0, variant);
}

auto merged_text(const loader::Scenario& scenario, const std::string& variant, const Campaign& campaign,
                 std::uint32_t jobs, std::uint32_t shards) -> std::string {
    std::vector<runner::CampaignResult> results;
    for (std::uint32_t shard = 0; shard < shards; shard++) {
        results.push_back(result_of(scenario, variant, campaign, jobs, shard, shards));
    }
    return report::campaign_result_text(
        runner::merge_results(results, std::vector<std::string>(shards, "result.json")));
}

}  // namespace

TEST_CASE("campaign budget: check --json is the same for --jobs 1, 2, 3 where dfs stops at its cap" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario = capped_kthread();
    const std::string one = check_json(scenario, 1);
    CHECK(one.find("did not complete within 12000 schedules") != std::string::npos);
    CHECK(check_json(scenario, 2) == one);
    CHECK(check_json(scenario, 3) == one);
}

TEST_CASE("campaign budget: check --json is the same for --jobs 1, 2, 3 where every search completes" *
          doctest::test_suite("campaign")) {
    loader::Scenario scenario = capped_kthread();
    for (auto& variant : scenario.variants) variant.expect.fuzz.dfs_schedules = 50'000;
    const std::string one = check_json(scenario, 1);
    CHECK(one.find("\"met\": false") == std::string::npos);
    CHECK(check_json(scenario, 2) == one);
    CHECK(check_json(scenario, 3) == one);
}

TEST_CASE("campaign budget: fuzz results are the same for --jobs 1, 2, 3, capped or complete" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    // fix-1 at dfs:1 completes in 14,871 schedules; before-fix fails at
    // its first violation, and with stop_at_first off it finds many.
    const std::vector<std::pair<std::string, Campaign>> campaigns = {
        {"fix-1", {"dfs:1", 5'000}},
        {"fix-1", {"dfs:1", 14'870}},
        {"fix-1", {"dfs:1", 14'871}},
        {"fix-1", {"dfs:1", 1'000'000}},
        {"before-fix", {"dfs:1", 3'000, false}},
        {"before-fix", {"dfs:1", 1'000'000}},
        {"before-fix", {"pct:3", 1'500}},
        {"before-fix", {"random", 1'500, false}},
    };
    for (const auto& [variant, campaign] : campaigns) {
        CAPTURE(variant);
        CAPTURE(campaign.strategy);
        CAPTURE(campaign.schedules);
        const std::string one = report::campaign_result_text(result_of(scenario, variant, campaign, 1));
        for (std::uint32_t jobs : {2U, 3U}) {
            CAPTURE(jobs);
            CHECK(report::campaign_result_text(result_of(scenario, variant, campaign, jobs)) == one);
        }
    }
    const std::string capped =
        report::campaign_result_text(result_of(scenario, "fix-1", {"dfs:1", 5'000}, 1));
    CHECK(capped.find("\"schedules_run\": 5000") != std::string::npos);
    CHECK(capped.find("\"complete\": false") != std::string::npos);
    // A cap one short of the search: incomplete; the search's size: complete.
    const std::string short_one =
        report::campaign_result_text(result_of(scenario, "fix-1", {"dfs:1", 14'870}, 2));
    CHECK(short_one.find("\"complete\": false") != std::string::npos);
    const std::string exact =
        report::campaign_result_text(result_of(scenario, "fix-1", {"dfs:1", 14'871}, 2));
    CHECK(exact.find("\"schedules_run\": 14871") != std::string::npos);
    CHECK(exact.find("\"complete\": true") != std::string::npos);
}

TEST_CASE("campaign budget: the merged shards are the unsharded result, for any --jobs in each shard" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    const std::vector<std::pair<std::string, Campaign>> campaigns = {
        {"fix-1", {"dfs:1", 1'000'000}},
        {"before-fix", {"dfs:1", 1'000'000, false}},
        {"before-fix", {"pct:3", 1'500, false}},
        {"fix-1", {"random", 1'000, false}},
    };
    for (const auto& [variant, campaign] : campaigns) {
        CAPTURE(variant);
        CAPTURE(campaign.strategy);
        const std::string whole = report::campaign_result_text(result_of(scenario, variant, campaign, 1));
        for (std::uint32_t shards : {2U, 3U}) {
            for (std::uint32_t jobs : {1U, 2U}) {
                CAPTURE(shards);
                CAPTURE(jobs);
                CHECK(merged_text(scenario, variant, campaign, jobs, shards) == whole);
            }
        }
    }
}

TEST_CASE("campaign budget: a capped dfs split over shards spends the one total, the same for any --jobs") {
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    const Campaign campaign{"dfs:1", 5'000, false, 3};
    const std::string one = merged_text(scenario, "fix-1", campaign, 1, 3);
    CHECK(merged_text(scenario, "fix-1", campaign, 2, 3) == one);
    CHECK(merged_text(scenario, "fix-1", campaign, 3, 3) == one);
    const runner::CampaignResult merged = report::parse_campaign_result(one, "merged.json");
    CHECK(merged.schedules_run <= 5'000);
    CHECK(merged.schedules_run > 4'000);
    REQUIRE(merged.dfs.has_value());
    CHECK_FALSE(merged.dfs->complete);
}

namespace {

/// The bundled two-fsyncs race, each variant proved by dfs:2 alone with the
/// budget's `states`.
auto proved_by_dfs(sim::VisitedKey states) -> loader::Scenario {
    loader::Scenario scenario = loader::load_scenario("scenarios/btrfs/two-fsyncs-one-file.json");
    scenario.variants.resize(2);
    for (auto& variant : scenario.variants) {
        variant.expect.fuzz.strategies = {test_support::spec_of("dfs:2")};
        variant.expect.fuzz.states = states;
    }
    return scenario;
}

auto schedules_of(const loader::Scenario& scenario) -> std::uint64_t {
    std::uint64_t schedules = 0;
    for (const auto& variant : scenario.variants) {
        const runner::CheckRow row = runner::check_variant(scenario, variant, [] { return 0.0; }, 1);
        CHECK(row.met);
        REQUIRE(row.attempts.size() == 1);
        CHECK(row.attempts.front().complete);
        schedules += row.schedules;
    }
    return schedules;
}

}  // namespace

TEST_CASE("campaign budget: a budget's visited states give one result for any --jobs, in fewer schedules" *
          doctest::test_suite("campaign")) {
    const loader::Scenario remembered = proved_by_dfs(sim::VisitedKey::locals);
    const std::string one = check_json(remembered, 1);
    CHECK(one.find("\"met\": false") == std::string::npos);
    CHECK(check_json(remembered, 2) == one);
    CHECK(check_json(remembered, 3) == one);
    // The same proofs, stateless, take more schedules.
    CHECK(schedules_of(remembered) * 4 < schedules_of(proved_by_dfs(sim::VisitedKey::none)));
}
