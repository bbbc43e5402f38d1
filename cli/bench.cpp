// crashsim bench: engine and exploration speed (bench/bench.cpp).
#include "cli/common.hpp"

#include <memory>

auto run_bench(const std::string& scenario_path, bool search_only, std::uint32_t bound_max, std::uint64_t cap)
    -> int;
auto run_visited_bench(const std::string& scenario_path, std::uint32_t bound_max) -> int;

namespace cli {
namespace {

struct BenchArgs {
    std::string scenario = "scenarios/btrfs/fast-fsync-vs-page-release.json";
    bool search = false;
    bool visited = false;
    std::uint32_t bound_max = 3;
    std::uint64_t cap = 0;
};

}  // namespace

void add_bench_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<BenchArgs>();
    CLI::App* bench = app.add_subcommand("bench", "engine and exploration speed");
    bench->add_option("--scenario", args->scenario, "scenario for schedules/s and the search table");
    bench->add_flag("--search", args->search, "print only the search table (dfs rows)");
    bench
        ->add_option("--bound-max", args->bound_max,
                     "the highest preemption bound of the search table or of --visited (default 3)")
        ->check(in_range(1, 3));
    bench
        ->add_option(
            "--cap", args->cap,
            "schedules of the xfs and log-commit rows at most (default: xfs dfs:1 to its end, the dfs:2 rows "
            "20000)")
        ->check(in_range(1, 100'000'000));
    bench
        ->add_flag(
            "--visited", args->visited,
            "print only what pruning visited states could save: dfs on the scenario's before-fix and fix-1 "
            "at bounds 1..--bound-max, runs cut at a repeated key (a measurement, not a search mode)")
        ->excludes("--search")
        ->excludes("--cap");
    verbs.add(bench, [args] {
        const int code = args->visited ? run_visited_bench(args->scenario, args->bound_max)
                                       : run_bench(args->scenario, args->search, args->bound_max, args->cap);
        return static_cast<ExitCode>(code);
    });
}

}  // namespace cli
