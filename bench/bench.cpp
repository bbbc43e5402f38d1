// `crashsim bench`: the engine's speed next to its floor, in one run.
//  1. raw Boost.Context round trip (resume into a fiber and back), the floor;
//  2. the engine's cost per scheduler step, 4 tasks that only yield, random
//     strategy (candidate collection, the choice, its record, the switch);
//  3. their ratio;
//  4. schedules/s and crash states/s on the btrfs race (fuzz, random and pct:3);
//  5. bounded exhaustive search (dfs, 2 preemptions) on the race: time to the
//     first counterexample on before-fix, and to the complete proof of fix-1,
//     with schedules/s and crash states (recovery plus every checker) per second.
#include <boost/context/fiber.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "runner/campaign.hpp"
#include "runner/repro.hpp"
#include "sim/fiber.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"

namespace {

const sim::YieldPoint bench_point = sim::register_yield_point("bench.yield", "benchmark task yields");

auto now_seconds() -> double {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

auto raw_round_trip_ns(std::uint64_t rounds) -> double {
    sim::StackBounds stack;
    sim::Fiber fiber(std::allocator_arg, sim::PooledStack{&sim::StackPool::local(), &stack},
                     [](sim::Fiber&& caller) {
                         for (;;) caller = std::move(caller).resume();
                         return std::move(caller);
                     });
    for (int i = 0; i < 1000; i++) fiber = std::move(fiber).resume();
    const double start = now_seconds();
    for (std::uint64_t i = 0; i < rounds; i++) fiber = std::move(fiber).resume();
    return (now_seconds() - start) * 1e9 / static_cast<double>(rounds);
}

auto engine_step_ns(std::uint64_t yields_per_task) -> double {
    sim::Scheduler scheduler({.timers_race_tasks = true, .steps_max = 4 * yields_per_task + 16}, nullptr);
    for (int task = 0; task < 4; task++) {
        scheduler.spawn("yielder", [yields_per_task] {
            for (std::uint64_t i = 0; i < yields_per_task; i++) sim::yield(bench_point);
        });
    }
    sim::RandomStrategy strategy(sim::Prng(1));
    const double start = now_seconds();
    while (scheduler.step(strategy) != sim::StepOutcome::finished) {
    }
    const double elapsed = now_seconds() - start;
    return elapsed * 1e9 / static_cast<double>(scheduler.steps());
}

void schedules_per_second(const std::string& path, const char* variant_name, const char* strategy_text) {
    const std::string text = scenarios::read_text_file(path);
    const scenarios::Scenario scenario = scenarios::parse_scenario(text, path);
    const scenarios::Variant* variant = scenario.find_variant(variant_name);
    if (variant == nullptr) return;
    scenarios::Simulation simulation(scenario, *variant);
    scenarios::FuzzRequest request;
    sim::parse_strategy(strategy_text, request.strategy);
    request.schedules = 20000;
    request.stop_at_first = false;
    const double start = now_seconds();
    const scenarios::FuzzReport report = scenarios::fuzz(simulation, request);
    const double elapsed = now_seconds() - start;
    std::printf("%-34s %-10s %-7s %9.0f schedules/s %10.0f crash states/s %7.1f steps/schedule\n",
                scenario.name.c_str(), variant_name, strategy_text, report.schedules / elapsed,
                report.crash_states / elapsed,
                static_cast<double>(report.steps) / static_cast<double>(report.schedules));
}

void exhaustive(const std::string& path, const char* variant_name) {
    const std::string text = scenarios::read_text_file(path);
    const scenarios::Scenario scenario = scenarios::parse_scenario(text, path);
    const scenarios::Variant* variant = scenario.find_variant(variant_name);
    if (variant == nullptr) return;
    scenarios::Simulation simulation(scenario, *variant);
    scenarios::FuzzRequest request;
    sim::parse_strategy("dfs:2", request.strategy);
    request.schedules = 10'000'000;
    const double start = now_seconds();
    const scenarios::FuzzReport report = scenarios::fuzz(simulation, request);
    const double elapsed = now_seconds() - start;
    std::printf("%-34s %-10s dfs:2   %9.0f schedules/s %10.0f crash states/s %8.4f s to %s (%llu schedules, %llu crash states)\n",
                scenario.name.c_str(), variant_name, report.schedules / elapsed, report.crash_states / elapsed,
                elapsed, report.found ? "the first counterexample" : report.complete ? "a complete proof" : "the cap",
                static_cast<unsigned long long>(report.schedules),
                static_cast<unsigned long long>(report.crash_states));
}

}  // namespace

auto run_bench(const std::string& scenario_path) -> int {
    try {
        double raw = 1e9;
        double step = 1e9;
        for (int repeat = 0; repeat < 5; repeat++) {
            raw = std::min(raw, raw_round_trip_ns(2'000'000));
            step = std::min(step, engine_step_ns(250'000));
        }
        std::printf("raw Boost.Context round trip:        %7.1f ns (best of 5)\n", raw);
        std::printf("engine step, 4 yield-only tasks:     %7.1f ns (best of 5, random strategy)\n", step);
        std::printf("ratio engine step / raw round trip:  %7.2f\n", step / raw);
        schedules_per_second(scenario_path, "before-fix", "random");
        schedules_per_second(scenario_path, "fix-1", "random");
        schedules_per_second(scenario_path, "fix-2", "pct:3");
        exhaustive(scenario_path, "before-fix");
        exhaustive(scenario_path, "fix-1");
        return 0;
    } catch (const scenarios::InputError& error) {
        std::fprintf(stderr, "crashsim: %s\n", error.what());
        return 2;
    }
}
