// Golden figures: one fixed seed and strategy per model, compared to a
// literal, so that a change in any random stream (a strategy's, the crash
// stream's, PCT's probe, the CPU and device jitter of performance runs) or in
// what the trace records shows up here, not as a silent drift of every repro.
// A commit that changes one of these says which and why (README: trace hashes
// of bundled scenarios stay unchanged unless a commit says why).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "loader/scenario.hpp"
#include "runner/runner.hpp"
#include "sim/strategy.hpp"

namespace {

struct Golden {
    const char* path;
    const char* variant;
    const char* strategy;
    std::uint64_t seed;
    std::uint64_t trace_hash;
    std::uint64_t steps;
};

auto run(const Golden& golden) -> runner::RunOutcome {
    const loader::Scenario scenario = loader::load_scenario(golden.path);
    const loader::Variant* variant = scenario.find_variant(golden.variant);
    REQUIRE(variant != nullptr);
    runner::Simulation simulation(scenario, *variant);
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy(golden.strategy, spec));
    return simulation.run_strategy(spec, golden.seed, true);
}

auto perf_elapsed(const char* path, const char* variant_name) -> std::uint64_t {
    const loader::Scenario scenario = loader::load_scenario(path);
    const loader::Variant* variant = scenario.find_variant(variant_name);
    REQUIRE(variant != nullptr);
    runner::Simulation simulation(scenario, *variant);
    const runner::PerfOutcome outcome = simulation.run_perf(0);
    REQUIRE(outcome.problem.empty());
    return static_cast<std::uint64_t>(outcome.elapsed_ns);
}

}  // namespace

TEST_CASE("golden: btrfs trace hashes of fixed seeds (strategy and crash streams)") {
    for (const Golden& golden : {
             Golden{"scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1", "random", 7,
                    11005368832714557248ULL, 28},
             Golden{"scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1", "pct:3", 7,
                    6855662918969267727ULL, 15},
             Golden{"scenarios/btrfs/two-files-two-fsyncers.json", "fix-1", "random", 7,
                    11691573393655283659ULL, 49},
             Golden{"scenarios/btrfs/two-files-two-fsyncers.json", "fix-1", "pct:3", 7,
                    16149506118743773597ULL, 53},
         }) {
        CAPTURE(std::string(golden.strategy));
        const runner::RunOutcome outcome = run(golden);
        CHECK_FALSE(outcome.violated());
        CHECK(outcome.trace_hash == golden.trace_hash);
        CHECK(outcome.steps == golden.steps);
    }
}

TEST_CASE("golden: xfs trace hashes of fixed seeds (strategy and crash streams)") {
    for (const Golden& golden : {
             Golden{"scenarios/xfs/generic-042.json", "fix", "random", 7, 17115146574871924948ULL, 15},
             Golden{"scenarios/xfs/generic-042.json", "fix", "pct:3", 7, 7218751114732649627ULL, 15},
         }) {
        CAPTURE(std::string(golden.strategy));
        const runner::RunOutcome outcome = run(golden);
        CHECK_FALSE(outcome.violated());
        CHECK(outcome.trace_hash == golden.trace_hash);
        CHECK(outcome.steps == golden.steps);
    }
}

TEST_CASE("golden: ext4/jbd2 trace hashes of fixed seeds (strategy, crash and recovery-crash streams)") {
    // The scenario keeps explore.recovery_crashes at 1: each crash state's
    // jbd2 recovery is cut once more (a draw from the recovery_crash stream).
    for (const Golden& golden : {
             Golden{"scenarios/jbd2/relogged-buffer-checkpoint.json", "fix", "random", 7,
                    7573192340085877378ULL, 68},
             Golden{"scenarios/jbd2/relogged-buffer-checkpoint.json", "fix", "pct:3", 7,
                    14770479257690402443ULL, 45},
         }) {
        CAPTURE(std::string(golden.strategy));
        const runner::RunOutcome outcome = run(golden);
        CHECK_FALSE(outcome.violated());
        CHECK(outcome.trace_hash == golden.trace_hash);
        CHECK(outcome.steps == golden.steps);
    }
}

TEST_CASE("golden: performance runs' virtual time (CPU and device jitter streams)") {
    CHECK(perf_elapsed("scenarios/btrfs/log-commit-jiffy-sleep.json", "jiffy-sleep") == 1033673260);
    CHECK(perf_elapsed("scenarios/xfs/dsync-unwritten-cost.json", "fix") == 13357114);
}
