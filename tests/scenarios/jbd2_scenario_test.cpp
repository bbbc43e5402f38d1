// Scenario-level tests of scenarios/jbd2/relogged-buffer-checkpoint.json
// ("jbd2: Check 'jh->b_transaction' before removing it from checkpoint"): the bounded exhaustive
// search with the model's footprints finds the race the unpruned search finds,
// its sleep sets prune, and a crash inside jbd2 recovery is explored by every
// strategy without a violation on the fixed tree. Paths are relative to the
// source root.
#include <doctest/doctest.h>

#include "tests/support.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "loader/scenario.hpp"
#include "runner/campaign.hpp"
#include "runner/runner.hpp"
#include "sim/strategy.hpp"

namespace {

constexpr const char* relogged = "scenarios/jbd2/relogged-buffer-checkpoint.json";

auto dfs(const char* variant, std::uint32_t preemptions, bool sleep_sets, std::uint64_t schedules)
    -> runner::FuzzReport {
    const auto scenario = loader::load_scenario(relogged);
    const loader::Variant* found = scenario.find_variant(variant);
    REQUIRE(found != nullptr);
    runner::Simulation simulation(scenario, *found);
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = preemptions;
    request.schedules = schedules;
    request.sleep_sets = sleep_sets;
    request.dpor = false;  // sleep sets alone (dpor: dpor_soundness_test.cpp)
    return runner::fuzz(simulation, request);
}

}  // namespace

TEST_CASE("jbd2 dfs: the footprints' sleep sets hide no race the unpruned search finds" *
          doctest::test_suite("campaign")) {
    for (const char* variant : {"before-2-3", "v6.5"}) {
        CAPTURE(variant);
        const runner::FuzzReport unpruned = dfs(variant, 1, false, 5000);
        const runner::FuzzReport pruned = dfs(variant, 1, true, 5000);
        REQUIRE(unpruned.found);
        REQUIRE(pruned.found);
        CHECK(pruned.failing.violations.front().checker == unpruned.failing.violations.front().checker);
        CHECK(pruned.schedules <= unpruned.schedules);
    }
}

TEST_CASE("jbd2 dfs: on the fixed tree the declared footprints let sleep sets prune" *
          doctest::test_suite("campaign")) {
    // 3,000 schedules: within the first 300 nothing prunes since a step that
    // adds a timer (the daemons' sleeps) no longer commutes with timers.
    const runner::FuzzReport unpruned = dfs("fix", 1, false, 3000);
    const runner::FuzzReport pruned = dfs("fix", 1, true, 3000);
    CHECK_FALSE(unpruned.found);
    CHECK_FALSE(pruned.found);
    CHECK(unpruned.dfs.pruned_sleep == 0);
    CHECK(pruned.dfs.pruned_sleep > 0);
    // Cut inside recovery too (the scenario's explore.recovery_crashes, 1).
    CHECK(pruned.recovery_crash_states > 0);
}

TEST_CASE(
    "ext4 sync: its promise binds fsync_durability, and it waits for the transaction kjournald2 is "
    "committing") {
    // scenarios/jbd2/sync-durability.json: A's fsync may have switched the
    // running transaction to committing when sync begins; a sync that waited
    // only for a running transaction returned before B's size and data were
    // durable, and fsync_durability (told of sync's promise) reported it.
    const auto scenario = loader::load_scenario("scenarios/jbd2/sync-durability.json");
    const loader::Variant* found = scenario.find_variant("fix");
    REQUIRE(found != nullptr);
    runner::Simulation simulation(scenario, *found);
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::random;
    request.schedules = 40;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    CHECK_FALSE(report.found);
    CHECK(report.schedules == 40);
    std::uint64_t durability = 0;
    for (std::size_t i = 0; i < report.checker_names.size(); i++) {
        if (report.checker_names[i] == "fsync_durability") durability = report.judged[i];
    }
    CHECK(durability > 0);
}

TEST_CASE(
    "ext4 flusher: buffers dirty for 30 s are written home by background writeback; the checkpoint then "
    "drops their transaction") {
    // scenarios/jbd2/flusher-writeback.json in task order: the app's FLUSHes
    // (1 s each) let the flusher's 5 s timer fire; at 35 s transaction 1's
    // buffers, dirty since its commit at 1 s, have expired.
    const auto scenario = loader::load_scenario("scenarios/jbd2/flusher-writeback.json");
    const loader::Variant* variant = scenario.find_variant("fix");
    REQUIRE(variant != nullptr);
    runner::Simulation simulation(scenario, *variant);
    const runner::RunOutcome outcome = simulation.run_scripted(true);
    CHECK_FALSE(outcome.violated());
    const auto submitted = outcome.story.find("flusher: 4 expired metadata buffers submitted");
    const auto dropped = outcome.story.find("transaction 1's checkpoint list is empty: transaction dropped");
    const auto flush = outcome.story.find("jbd2_cleanup_journal_tail: FLUSH before moving the tail");
    REQUIRE(submitted != std::string::npos);
    REQUIRE(dropped != std::string::npos);
    REQUIRE(flush != std::string::npos);
    CHECK(submitted < dropped);
    CHECK(dropped < flush);
    // The checkpoint found nothing left to write home itself.
    CHECK(outcome.story.find("jbd2_log_do_checkpoint: 4 buffers submitted home") == std::string::npos);
}

TEST_CASE("jbd2 checkpoint lists: in logging order, patch 1/3 drops the re-logged head, the tail passes it") {
    // scenarios/jbd2/partial-relog-busy-stop.json: transaction 1's list is
    // inode bitmap, inode table, directory block, block bitmap (t_buffers
    // order); transaction 2 re-logs the first three. The cleanup at the start
    // of transaction 2's commit removes those three and stops at the dirty
    // block bitmap; the checkpoint writes it home and moves the tail past
    // transaction 1 before transaction 2's commit block.
    const auto scenario = loader::load_scenario("scenarios/jbd2/partial-relog-busy-stop.json");
    for (const char* name : {"patch-1", "fix"}) {
        CAPTURE(name);
        const loader::Variant* variant = scenario.find_variant(name);
        REQUIRE(variant != nullptr);
        runner::Simulation simulation(scenario, *variant);
        const runner::RunOutcome outcome = simulation.run_scripted(true);
        const std::string& story = outcome.story;
        const auto bitmap = story.find("the inode bitmap (block 803) is unlocked and not dirty: removed");
        const auto table =
            story.find("inode table block of inodes 0..15 (block 804) is unlocked and not dirty");
        const auto directory = story.find("directory block 0 (block 868) is unlocked and not dirty");
        const auto dropped = story.find("transaction 1's checkpoint list is empty: transaction dropped");
        const auto tail = story.find("journal superblock: tail at log block 8, sequence 2");
        if (std::string(name) == "fix") {
            // Patch 2/3: the re-logged head is busy; the checkpoint forces
            // transaction 2's commit before the tail moves.
            CHECK_FALSE(outcome.violated());
            CHECK(bitmap == std::string::npos);
            CHECK(story.find("belongs to transaction 2: forcing its commit") != std::string::npos);
            continue;
        }
        REQUIRE(outcome.violated());
        CHECK(outcome.violations.front().checker == "journal_integrity");
        REQUIRE(bitmap != std::string::npos);
        REQUIRE(table != std::string::npos);
        REQUIRE(directory != std::string::npos);
        REQUIRE(dropped != std::string::npos);
        REQUIRE(tail != std::string::npos);
        CHECK(bitmap < table);
        CHECK(table < directory);
        CHECK(directory < dropped);
        CHECK(dropped < tail);
        CHECK(story.find("jbd2_log_do_checkpoint: 1 buffers submitted home") < dropped);
    }
}

namespace {

auto fs_mark_files_per_s(const char* variant_name) -> double {
    const auto scenario = loader::load_scenario("scenarios/jbd2/fs-mark-checkpoint-scan.json");
    const loader::Variant* variant = scenario.find_variant(variant_name);
    REQUIRE(variant != nullptr);
    runner::Simulation simulation(scenario, *variant);
    const runner::PerfOutcome outcome = simulation.run_perf(0);
    REQUIRE(outcome.problem.empty());
    REQUIRE(outcome.creates == 10000);
    return static_cast<double>(outcome.creates) * 1e9 / static_cast<double>(outcome.elapsed_ns);
}

}  // namespace

TEST_CASE("jbd2 fs_mark: fitted on the fixed kernel's files/s, the regressed kernel's is predicted" *
          doctest::test_suite("campaign")) {
    // scenarios/jbd2/fs-mark-checkpoint-scan.json: the device latencies are
    // fitted to the 8,558.4 files/s the patch 1/3 posting reports after its fix;
    // the scan step's cost (400 ns) is an estimate made without the seed's
    // rates. v6.5's files/s is then a prediction, held to within half of the
    // seed's 2,107.1 (its other regressed run, 7,649.0, lies above).
    const double fixed = fs_mark_files_per_s("busy-stop");
    const double regressed = fs_mark_files_per_s("v6.5");
    MESSAGE("busy-stop " << fixed << " files/s (fitted to 8558.4), v6.5 " << regressed
                         << " files/s (predicted; the seed: 2107.1)");
    CHECK(fixed > 8558.4 * 0.98);
    CHECK(fixed < 8558.4 * 1.02);
    CHECK(regressed > 2107.1 / 1.5);
    CHECK(regressed < 2107.1 * 1.5);
}

TEST_CASE("jbd2 fs_mark perf: cp_scan_longest is the longest cleanup of the workload alone") {
    // cp_scan_longest is a maximum (CounterKind::maximum): the set-up's earlier
    // run has commits of its own whose cleanups visit buffers too, and a
    // difference of the two maxima is no scan's length. Over the workload alone
    // it lies between the mean scan and the sum of them; with hybrid-v5.8 every
    // commit's cleanup visits one buffer, in the set-up as in the workload.
    std::ifstream file("scenarios/jbd2/fs-mark-checkpoint-scan.json");
    std::stringstream text;
    text << file.rdbuf();
    nlohmann::json document = nlohmann::json::parse(text.str());
    document["workload"]["fs_mark"]["files"] = 1000;
    document["workload"]["fs_mark"]["dirs"] = 10;
    document["workload"]["fs_mark"]["previous_files"] = 1000;
    const auto scenario = loader::parse_scenario(document.dump(), "fs-mark-small.json");
    for (const loader::Variant& variant : scenario.variants) {
        CAPTURE(variant.name);
        runner::Simulation simulation(scenario, variant);
        const runner::PerfOutcome outcome = simulation.run_perf(0);
        REQUIRE(outcome.problem.empty());
        const std::uint64_t commits = outcome.counters.at("commits");
        const std::uint64_t steps = outcome.counters.at("cp_scan_steps");
        const std::uint64_t longest = outcome.counters.at("cp_scan_longest");
        CHECK(commits == 1000);  // one per fsync
        CHECK(longest * commits >= steps);
        CHECK(longest <= steps);
        if (variant.name == "hybrid-v5.8") CHECK(longest == 1);
    }
}

TEST_CASE("jbd2 fs_mark: the earlier run's directories, synced in the set-up, survive every crash") {
    // The set-up makes fs_mark's directories and syncs, which promises each
    // of them; the crash states of the measured run mount and find them.
    std::ifstream file("scenarios/jbd2/fs-mark-checkpoint-scan.json");
    std::stringstream text;
    text << file.rdbuf();
    nlohmann::json document = nlohmann::json::parse(text.str());
    document["workload"]["fs_mark"]["files"] = 20;
    document["workload"]["fs_mark"]["dirs"] = 2;
    document["workload"]["fs_mark"]["files_per_dir"] = 10;
    document["workload"]["fs_mark"]["previous_files"] = 20;
    // A small device and journal, and only durable writes kept, so that a
    // schedule's crash states take milliseconds.
    document["device"] = {{"block_size", 4096}, {"blocks", 40000}, {"profile", "nvme"}};
    document["config"] = {{"journal_size", "4M"}};
    document["crash"] = {{"unflushed", "none"}};
    document["explore"] = {{"recovery_crashes", 0}};
    const auto scenario = loader::parse_scenario(document.dump(), "fs-mark-tiny.json");
    for (const loader::Variant& variant : scenario.variants) {
        CAPTURE(variant.name);
        runner::Simulation simulation(scenario, variant);
        runner::FuzzRequest request;
        request.strategy.kind = sim::StrategySpec::Kind::dfs;
        request.strategy.preemptions = 0;
        request.schedules = 3;
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        CHECK(report.crash_states > 0);
        CHECK_FALSE(report.found);
    }
}
