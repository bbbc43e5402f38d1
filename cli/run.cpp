// crashsim run: a scenario's scripted schedule and its story.
#include "cli/common.hpp"

#include <memory>


namespace cli {
namespace {

struct RunArgs {
    std::string scenario;
    std::string variant;
    std::uint64_t seed = 0;
    std::string trace;
    std::string trace_text;
};

auto cmd_run(const RunArgs& args) -> ExitCode {
    require_writable("--trace-text", args.trace_text);
    require_writable("--trace", args.trace);
    const loader::Scenario scenario = load(args.scenario);
    const loader::Variant& variant = pick_variant(scenario, args.variant);
    runner::Simulation simulation(scenario, variant);
    say("crashsim run %s: variant %s, %s\n", scenario.name.c_str(), variant.name.c_str(),
                scenario.schedule.empty() ? "tasks in order (no scripted schedule)" : "scripted schedule");
    const runner::RunOutcome outcome = simulation.run_scripted(true, args.seed);
    print_story(outcome);
    write_trace_text(args.trace_text, outcome);
    write_chrome_trace(args.trace, outcome, scenario.name + " " + variant.name);
    say("trace hash %016llx\n", static_cast<unsigned long long>(outcome.trace_hash));
    return verdict(outcome);
}

}  // namespace

void add_run_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<RunArgs>();
    const CLI::Validator any_u64 = in_range(0, ~std::uint64_t{0});
    CLI::App* run = app.add_subcommand("run", "run a scenario's scripted schedule and tell its story");
    run->add_option("scenario", args->scenario, "scenario JSON file")->required();
    run->add_option("--variant", args->variant, "variant name (default: the first)");
    run->add_option("--seed", args->seed, "seed for the writes a crash keeps (any-subset, prefix)")
        ->check(any_u64);
    run->add_option("--trace-text", args->trace_text, "write every engine step and note to FILE");
    run->add_option("--trace", args->trace, "write Chrome trace-event JSON (Perfetto) to FILE");
    verbs.add(run, [args] { return cmd_run(*args); });
}

}  // namespace cli
