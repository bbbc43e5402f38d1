// crashsim replay: a repro file replayed byte for byte.
#include "cli/common.hpp"

#include <memory>

#include "runner/repro.hpp"

namespace cli {
namespace {

struct ReplayArgs {
    std::string repro;
    std::string trace_text;
    std::string trace;
};

auto cmd_replay(const ReplayArgs& args) -> ExitCode {
    require_writable("--trace-text", args.trace_text);
    require_writable("--trace", args.trace);
    // Malformed, diverging or not reproducing its trace hash: exit 2.
    const runner::LoadedRepro loaded = runner::load_repro(args.repro);
    const runner::Repro& repro = loaded.repro;
    const runner::RunOutcome& outcome = loaded.replayed;
    const loader::Variant& variant = loaded.variant();
    say("crashsim replay %s: %s, variant %s, %s schedule %llu\n", args.repro.c_str(),
                loaded.scenario.name.c_str(), variant.name.c_str(), repro.strategy.c_str(),
                static_cast<unsigned long long>(repro.schedule_index));
    print_story(outcome);
    write_trace_text(args.trace_text, outcome);
    write_chrome_trace(args.trace, outcome, loaded.scenario.name + " " + variant.name + " (replay)");
    say("trace hash %016llx (matches the repro)\n", static_cast<unsigned long long>(outcome.trace_hash));
    return verdict(outcome);
}

}  // namespace

void add_replay_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<ReplayArgs>();
    CLI::App* replay = app.add_subcommand("replay", "replay a repro file byte for byte");
    replay->add_option("repro", args->repro, "repro JSON written by fuzz")->required();
    replay->add_option("--trace-text", args->trace_text, "write every engine step and note to FILE");
    replay->add_option("--trace", args->trace, "write Chrome trace-event JSON (Perfetto) to FILE");
    verbs.add(replay, [args] { return cmd_replay(*args); });
}

}  // namespace cli
