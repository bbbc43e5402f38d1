// `crashsim bench`: the engine's speed next to its floor, in one run.
//  1. raw Boost.Context round trip (resume into a fiber and back), the floor;
//  2. the engine's cost per scheduler step, 4 tasks that only yield, random
//     strategy (candidate collection, the choice, its record, the switch);
//  3. their ratio;
//  4. schedules/s and crash states/s on the btrfs race (fuzz, random and pct:3);
//  5. the search table (--search prints only it): the
//     first counterexample on before-fix as fuzz dfs:2 reaches it (estimate
//     line and search), then dfs at bounds 1..3 on before-fix and fix-1
//     (schedules, crash states, time, complete or where it stopped), the xfs
//     race at 1 and 2 and log-commit batching at 2, the last capped in
//     schedules (--cap) and saying so. SPIN's side: bench/spin/compare.sh.
//  6. --visited (alone): what pruning visited states could save on the btrfs
//     race's before-fix and fix-1 at bounds 1..--bound-max, by sim::VisitedKey: the search
//     as fuzz runs it, cut at a repeated key of positions only (unsound: a
//     floor for any sound fingerprint), and of per-task histories. Distinct
//     crash states show what the unsound key lost.
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
    const std::string text = loader::read_text_file(path);
    const loader::Scenario scenario = loader::parse_scenario(text, path);
    const loader::Variant* variant = scenario.find_variant(variant_name);
    if (variant == nullptr) return;
    runner::Simulation simulation(scenario, *variant);
    runner::FuzzRequest request;
    sim::parse_strategy(strategy_text, request.strategy);
    request.schedules = 20000;
    request.stop_at_first = false;
    const double start = now_seconds();
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    const double elapsed = now_seconds() - start;
    std::printf("%-34s %-10s %-7s %9.0f schedules/s %10.0f crash states/s %7.1f steps/schedule\n",
                scenario.name.c_str(), variant_name, strategy_text, report.schedules / elapsed,
                report.crash_states / elapsed,
                static_cast<double>(report.steps) / static_cast<double>(report.schedules));
}

/// One row of the search table: a dfs search of `variant` at `bound`
/// preemptions, capped at `cap` schedules (0: none), stopping at its first
/// violation (what fuzz does). Sleep sets, no dpor: fuzz's default.
struct SearchRow {
    const char* path;
    const char* variant;
    std::uint32_t bound;
    std::uint64_t cap;
};

auto load_row(const std::string& path, const char* variant_name, loader::Scenario& scenario)
    -> const loader::Variant* {
    scenario = loader::parse_scenario(loader::read_text_file(path), path);
    return scenario.find_variant(variant_name);
}

void search_row(const SearchRow& row) {
    loader::Scenario scenario;
    const loader::Variant* variant = load_row(row.path, row.variant, scenario);
    if (variant == nullptr) return;
    runner::Simulation simulation(scenario, *variant);
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = row.bound;
    request.schedules = row.cap != 0 ? row.cap : 100'000'000;
    const double start = now_seconds();
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    const double elapsed = now_seconds() - start;
    const std::string what = report.found      ? "violation at schedule " + std::to_string(report.index)
                             : report.complete ? std::string("complete proof")
                                               : "capped at " + std::to_string(row.cap) +
                                                     " schedules: not complete";
    std::printf("search %-34s %-11s dfs:%u %10llu schedules %11llu crash states %9.3f s  %s\n",
                scenario.name.c_str(), row.variant, row.bound,
                static_cast<unsigned long long>(report.schedules),
                static_cast<unsigned long long>(report.crash_states), elapsed, what.c_str());
}

/// What `crashsim fuzz --strategy dfs:2` spends before it reports the race
/// (process start and the report aside): loading the scenario, the set-up,
/// the estimate line (walks capped at estimate_first_line_runs) and the
/// search to its first violation.
void first_counterexample(const std::string& path) {
    const double start = now_seconds();
    loader::Scenario scenario;
    const loader::Variant* variant = load_row(path, "before-fix", scenario);
    if (variant == nullptr) return;
    runner::Simulation simulation(scenario, *variant);
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = 2;
    request.schedules = 100'000'000;
    request.estimate_runs = runner::estimate_first_line_runs;
    const runner::SearchEstimate estimate = runner::estimate_search(simulation, request, now_seconds);
    const double estimated = now_seconds();
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    const double end = now_seconds();
    std::printf(
        "first counterexample %-34s before-fix  dfs:2 %9.3f ms in all: estimate %.3f ms (%llu walks, %llu "
        "runs), search %.3f ms (%llu schedules, %s)\n",
        scenario.name.c_str(), (end - start) * 1e3, (estimated - start) * 1e3,
        static_cast<unsigned long long>(estimate.walks), static_cast<unsigned long long>(estimate.runs),
        (end - estimated) * 1e3, static_cast<unsigned long long>(report.schedules),
        report.found ? "found" : "not found");
}

/// The search table: the btrfs race at bounds 1 to
/// `bound_max`, before-fix and fix-1; the xfs race at 1 (and 2, capped);
/// log-commit batching at 2, capped. Caps are schedules, never time.
/// `cap` 0: the xfs race at 1 runs to its end (170,615 schedules, about 9 s),
/// the two rows that do not finish in minutes stop at slow_rows_cap.
void search_table(const std::string& race, std::uint32_t bound_max, std::uint64_t cap) {
    constexpr std::uint64_t slow_rows_cap = 20'000;
    first_counterexample(race);
    for (const char* variant : {"before-fix", "fix-1"}) {
        for (std::uint32_t bound = 1; bound <= bound_max; bound++)
            search_row({race.c_str(), variant, bound, 0});
    }
    search_row({"scenarios/xfs/delalloc-writeback-race.json", "fix", 1, cap});
    if (bound_max >= 2) {
        const std::uint64_t slow = cap != 0 ? cap : slow_rows_cap;
        search_row({"scenarios/xfs/delalloc-writeback-race.json", "fix", 2, slow});
        search_row({"scenarios/btrfs/log-commit-batching.json", "jiffy-sleep", 2, slow});
    }
}

/// One row of --visited: the search with its runs cut at a repeated key.
void visited_row(const std::string& path, const char* variant_name, std::uint32_t bound,
                 sim::VisitedKey key) {
    loader::Scenario scenario;
    const loader::Variant* variant = load_row(path, variant_name, scenario);
    if (variant == nullptr) {
        throw loader::InputError(path + ": expected a variant named " + variant_name +
                                 " (bench --visited runs before-fix and fix-1), got none");
    }
    runner::Simulation simulation(scenario, *variant);
    sim::DfsTree tree(bound, true);  // sleep sets, no dpor: fuzz's default
    tree.measure_visited(key);
    std::uint64_t crash_states = 0;
    std::uint64_t violations = 0;
    const double start = now_seconds();
    for (bool more = true; more; more = tree.backtrack()) {
        const runner::RunOutcome outcome = simulation.run_dfs(tree, false);
        simulation.count_reached(outcome);
        crash_states += outcome.crash_states;
        if (outcome.violated()) violations++;
    }
    const double elapsed = now_seconds() - start;
    const char* name = key == sim::VisitedKey::none        ? "none (fuzz)"
                       : key == sim::VisitedKey::positions ? "positions (unsound)"
                       : key == sim::VisitedKey::histories ? "task histories"
                                                           : "reads";
    std::printf(
        "visited %-30s %-10s dfs:%u key %-19s %9llu schedules (%8llu cut as visited) %9llu crash states, "
        "%3llu distinct, %llu violating, %8.3f s\n",
        scenario.name.c_str(), variant_name, bound, name,
        static_cast<unsigned long long>(tree.stats().schedules),
        static_cast<unsigned long long>(tree.stats().cut_visited),
        static_cast<unsigned long long>(crash_states),
        static_cast<unsigned long long>(simulation.crash_states_distinct().value_or(0)),
        static_cast<unsigned long long>(violations), elapsed);
}

}  // namespace

auto run_visited_bench(const std::string& scenario_path, std::uint32_t bound_max) -> int {
    try {
        for (const char* variant : {"before-fix", "fix-1"}) {
            for (std::uint32_t bound = 1; bound <= bound_max; bound++) {
                for (const sim::VisitedKey key :
                     {sim::VisitedKey::none, sim::VisitedKey::positions, sim::VisitedKey::histories,
                      sim::VisitedKey::reads}) {
                    visited_row(scenario_path, variant, bound, key);
                }
            }
        }
        return 0;
    } catch (const loader::InputError& error) {
        std::fprintf(stderr, "crashsim: %s\n", error.what());
        return 2;
    }
}

auto run_bench(const std::string& scenario_path, bool search_only, std::uint32_t bound_max, std::uint64_t cap)
    -> int {
    try {
        if (search_only) {
            search_table(scenario_path, bound_max, cap);
            return 0;
        }
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
        search_table(scenario_path, bound_max, cap);
        return 0;
    } catch (const loader::InputError& error) {
        std::fprintf(stderr, "crashsim: %s\n", error.what());
        return 2;
    }
}
