// The command line: CLI11 wiring only. Each verb is one file, cli/VERB.cpp,
// that adds its subcommand and what runs it (add_VERB_command); main parses,
// runs the verb given and prints what it held back, then exits with its code.
// cli/ is the only place that reads the wall clock (for schedules/s figures).
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "cli/common.hpp"

extern "C" void on_stop_signal(int /*signal*/);

namespace {

auto run_verb(const cli::Verbs& verbs) -> cli::ExitCode {
    for (const auto& [subcommand, action] : verbs.list) {
        if (*subcommand) return action();
    }
    return cli::ExitCode::pass;
}

}  // namespace

auto main(int argc, char** argv) -> int {
    // Ctrl-C and SIGTERM stop campaigns at the next schedule; the verb then
    // prints what it explored and writes its reports (by rename, whole).
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    CLI::App app{
        "crashsim: a deterministic crash-consistency simulator for file-system write, fsync and commit "
        "protocols"};
    app.require_subcommand(1);
    cli::Verbs verbs;
    cli::add_run_command(app, verbs);
    cli::add_fuzz_command(app, verbs);
    cli::add_replay_command(app, verbs);
    cli::add_shrink_command(app, verbs);
    cli::add_check_command(app, verbs);
    cli::add_perf_command(app, verbs);
    cli::add_merge_command(app, verbs);
    cli::add_list_command(app, verbs);
    cli::add_bench_command(app, verbs);
    cli::add_kernel_command(app, verbs);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& help) {
        return app.exit(help);
    } catch (const CLI::ParseError& error) {
        std::fprintf(stderr, "crashsim: %s (see crashsim --help)\n", error.what());
        return static_cast<int>(cli::ExitCode::input);
    }
    try {
        const cli::ExitCode code = run_verb(verbs);
        std::fputs(cli::output().c_str(), stdout);
        std::fflush(stdout);
        return static_cast<int>(code);
    } catch (const loader::InputError& error) {
        std::fprintf(stderr, "crashsim: %s\n", error.what());
        return static_cast<int>(cli::ExitCode::input);
    } catch (const loader::LoadInterrupted& interrupted) {
        std::fprintf(stderr, "crashsim: %s\n", interrupted.what());
        return static_cast<int>(cli::ExitCode::interrupted);
    }
}

extern "C" void on_stop_signal(int /*signal*/) { runner::request_stop(); }
