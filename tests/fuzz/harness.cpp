#include "tests/fuzz/harness.hpp"

#include <algorithm>

#include "loader/scenario.hpp"
#include "report/report.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"

namespace fuzz {
namespace {

/// Inputs the runner target leaves to the loader target: a scenario this
/// large runs for seconds, and a fuzzer wants thousands of inputs a second.
constexpr std::size_t runner_ops_max = 64;
constexpr std::uint64_t runner_blocks_max = 1 << 16;
constexpr std::uint64_t runner_steps_max = 20'000;
constexpr std::uint64_t runner_schedules = 3;

const char* const input_path = "fuzz-input.json";

void scenario_loader(const std::string& input) {
    try {
        (void)loader::parse_scenario(input, input_path);
    } catch (const loader::InputError&) {
    }
}

/// Reading a repro replays its embedded scenario, so this reaches the
/// runner as well (replay's own checks: divergence, trace hash).
void repro_loader(const std::string& input) {
    try {
        (void)runner::load_repro_text(input, input_path);
    } catch (const loader::InputError&) {
    }
}

void result_reader(const std::string& input) {
    try {
        const runner::CampaignResult result = report::parse_campaign_result(input, input_path);
        // merge's own checks on one shard.
        (void)runner::merge_results({result}, {input_path});
    } catch (const loader::InputError&) {
    }
}

auto small_enough(const loader::Scenario& scenario) -> bool {
    std::size_t ops = scenario.setup.size();
    for (const auto& task : scenario.tasks) {
        ops += task.ops.size();
        // A generated workload (create_unlink) holds no ops: count what it makes.
        if (task.generated)
            ops += static_cast<std::size_t>(task.generated->files * (task.generated->unlink ? 2 : 1));
    }
    return ops <= runner_ops_max && scenario.device.blocks <= runner_blocks_max && !scenario.perf &&
           scenario.sweep_points.empty();
}

/// A scenario that loads runs its scripted schedule (if any) and a few random
/// schedules of each variant, with every crash state checked.
void scenario_runner(const std::string& input) {
    loader::Scenario scenario;
    try {
        scenario = loader::parse_scenario(input, input_path);
    } catch (const loader::InputError&) {
        return;
    }
    if (!small_enough(scenario)) return;
    sim::StrategySpec random;
    sim::parse_strategy("random", random);
    for (const auto& variant : scenario.variants) {
        runner::Simulation simulation(scenario, variant);
        loader::ExploreBounds bounds = scenario.explore;
        bounds.steps = std::min(bounds.steps, runner_steps_max);
        bounds.progress_steps = std::min(bounds.progress_steps, runner_steps_max);
        simulation.set_bounds(bounds);
        try {
            if (!scenario.schedule.empty()) (void)simulation.run_scripted(false);
            for (std::uint64_t seed = 0; seed < runner_schedules; seed++) {
                (void)simulation.run_strategy(random, seed, false);
            }
        } catch (const loader::InputError&) {
            // A scripted schedule the tasks cannot follow: bad input, as in check.
        }
    }
}

}  // namespace

auto targets() -> const std::vector<Target>& {
    static const std::vector<Target> all{
        {"scenario_loader", "parse_scenario on the bytes", scenario_loader},
        {"repro_loader", "load_repro on the bytes (parse, load the embedded scenario, replay)", repro_loader},
        {"result_reader", "parse_campaign_result on the bytes, then merge it as one shard", result_reader},
        {"scenario_runner", "a scenario that loads and is small runs its scripted and 3 random schedules",
         scenario_runner},
    };
    return all;
}

auto find_target(const std::string& name) -> const Target* {
    for (const auto& target : targets()) {
        if (name == target.name) return &target;
    }
    return nullptr;
}

}  // namespace fuzz
