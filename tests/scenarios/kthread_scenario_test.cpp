// scenarios/btrfs/kthread-commit-in-fast-fsync.json: the
// transaction kthread's wake-up is a bounded choice while tasks can run, so
// exploration reaches commits in the middle of a fast fsync. The evidence
// comes from the traces: notes written by the transaction_kthread task
// between the fsyncer's first step and its return, in runs where the fsync
// took the fast path; and every released variant holds. Also a replay of a
// violating run that took I/O reorderings, through a repro file.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/campaign.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "loader/scenario.hpp"

namespace {

constexpr const char* kthread_path = "scenarios/btrfs/kthread-commit-in-fast-fsync.json";

struct Positions {
    std::size_t fsync_first = npos;   // the fsyncer's first line
    std::size_t fast_path = npos;     // its "fast path" decision
    std::size_t fsync_return = npos;  // "fsync of inode I returns 0"
    std::vector<std::size_t> commit_starts;  // the kthread's commit notes
    std::vector<std::size_t> commits_done;
    static constexpr std::size_t npos = ~std::size_t{0};
};

auto positions(const std::vector<sim::TraceLine>& lines) -> Positions {
    Positions at;
    for (std::size_t i = 0; i < lines.size(); i++) {
        const sim::TraceLine& line = lines[i];
        if (line.task == "fsyncer") {
            if (at.fsync_first == Positions::npos) at.fsync_first = i;
            if (line.text.find("fast path") != std::string::npos) at.fast_path = i;
            if (line.text.find("returns 0") != std::string::npos) at.fsync_return = i;
        }
        if (line.task == "transaction_kthread" && line.kind == sim::TraceLine::Kind::note) {
            if (line.text.find("commit starts") != std::string::npos) at.commit_starts.push_back(i);
            if (line.text.find(" committed") != std::string::npos) at.commits_done.push_back(i);
        }
    }
    return at;
}

}  // namespace

TEST_CASE("kthread scenario: the transaction kthread commits in the middle of a fast fsync, and it holds") {
    const loader::Scenario scenario = loader::load_scenario(kthread_path);
    CHECK(scenario.explore.daemon_wakeups >= 1);
    for (const char* name : {"before-fix", "fix-1", "fix-2", "fix-3"}) {
        CAPTURE(name);
        const loader::Variant* variant = scenario.find_variant(name);
        REQUIRE(variant != nullptr);
        runner::Simulation simulation(scenario, *variant);
        sim::StrategySpec random;
        REQUIRE(sim::parse_strategy("random", random));
        bool starts_while_logging = false;  // commit starts after the fast-path decision, before the return
        bool commits_before_logging = false;  // a whole commit after the fsync began, before it logged
        for (std::uint64_t seed = 0; seed < 400 && !(starts_while_logging && commits_before_logging);
             seed++) {
            const runner::RunOutcome outcome =
                simulation.run_strategy(random, runner::schedule_seed(0, seed), true);
            REQUIRE_FALSE(outcome.violated());
            const Positions at = positions(outcome.lines);
            if (at.fast_path == Positions::npos || at.fsync_return == Positions::npos) continue;
            for (std::size_t start : at.commit_starts) {
                if (start > at.fast_path && start < at.fsync_return) starts_while_logging = true;
            }
            for (std::size_t done : at.commits_done) {
                if (done > at.fsync_first && done < at.fast_path) {
                    commits_before_logging = true;
                    CHECK(outcome.daemon_wakeups == 1);
                }
            }
        }
        CHECK(starts_while_logging);
        CHECK(commits_before_logging);
    }
}

TEST_CASE("kthread scenario: sleep sets judge every crash state the unpruned search judges (dfs:0)") {
    // The kthread's first step (its first sleep) reads the clock a device
    // completion moves; with the empty footprint it had, sleep sets judged 11
    // of these 23 distinct crash states (sim/scheduler.cpp add_timer).
    const loader::Scenario scenario = loader::load_scenario(kthread_path);
    const loader::Variant* variant = scenario.find_variant("before-fix");
    REQUIRE(variant != nullptr);
    std::optional<std::uint64_t> distinct[2];
    for (const bool sleep_sets : {false, true}) {
        runner::Simulation simulation(scenario, *variant);  // its own memo: its own count
        runner::FuzzRequest request;
        request.strategy.kind = sim::StrategySpec::Kind::dfs;
        request.strategy.preemptions = 0;
        request.schedules = 100'000;
        request.sleep_sets = sleep_sets;
        request.dpor = false;
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        REQUIRE(report.complete);
        CHECK_FALSE(report.found);
        distinct[sleep_sets ? 1 : 0] = report.crash_states_distinct;
    }
    REQUIRE(distinct[0].has_value());
    CHECK(*distinct[0] > 0);
    CHECK(distinct[1] == distinct[0]);
}

TEST_CASE("kthread scenario: without daemon wake-ups the kthread never commits while the fsync runs") {
    const loader::Scenario scenario = loader::load_scenario(kthread_path);
    runner::Simulation simulation(scenario, *scenario.find_variant("fix-2"));
    simulation.set_bounds({scenario.explore.io_reorders, 0});
    sim::StrategySpec random;
    REQUIRE(sim::parse_strategy("random", random));
    for (std::uint64_t seed = 0; seed < 200; seed++) {
        const runner::RunOutcome outcome =
            simulation.run_strategy(random, runner::schedule_seed(0, seed), true);
        const Positions at = positions(outcome.lines);
        CHECK(outcome.daemon_wakeups == 0);
        CHECK(at.commit_starts.empty());
    }
}

TEST_CASE(
    "io order: a violating xfs run that took reorderings replays byte for byte, bounds from the repro") {
    const loader::Scenario scenario = loader::load_scenario("scenarios/xfs/direct-write-fsync.json");
    const loader::ExploreBounds bounds{2, 1};
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    simulation.set_bounds(bounds);
    sim::StrategySpec random;
    REQUIRE(sim::parse_strategy("random", random));
    std::optional<runner::RunOutcome> found;
    for (std::uint64_t index = 0; index < 5000 && !found; index++) {
        runner::RunOutcome outcome = simulation.run_strategy(random, runner::schedule_seed(0, index), true);
        if (outcome.violated() && outcome.io_reorders > 0) found = std::move(outcome);
    }
    REQUIRE(found.has_value());
    CHECK(found->trace.find("I/O reordering 1 of at most 2") != std::string::npos);
    // Through a repro file: the bounds travel with the choices.
    runner::Repro repro;
    repro.scenario_path = scenario.path;
    repro.scenario_text = loader::read_text_file(scenario.path);
    repro.variant = "before-fix";
    repro.strategy = "random";
    repro.choices = found->choices;
    repro.bounds = bounds;
    repro.crash = *found->crash;
    repro.checker = found->violations.front().checker;
    repro.trace_hash = found->trace_hash;
    const std::string path = "build/kthread_scenario_test-repro.json";
    runner::write_repro(repro, path);
    const runner::Repro read = runner::read_repro(path);
    CHECK(read.bounds == bounds);
    runner::Simulation again(scenario, *scenario.find_variant("before-fix"));
    again.set_bounds(read.bounds);
    const runner::RunOutcome replayed = again.replay(read.choices, read.crash, true);
    CHECK(replayed.violated());
    CHECK(replayed.trace_hash == found->trace_hash);
    CHECK(replayed.trace == found->trace);
    // With the engine before's bounds the same choices do not fit (or tell another story).
    runner::Simulation old(scenario, *scenario.find_variant("before-fix"));
    old.set_bounds({0, 0});
    bool same = false;
    try {
        same = old.replay(read.choices, read.crash, true).trace_hash == found->trace_hash;
    } catch (const sim::ReplayDiverged&) {
        same = false;
    }
    CHECK_FALSE(same);
}
