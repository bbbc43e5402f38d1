// crashsim shrink: a repro shrunk to the smallest failing story.
#include "cli/common.hpp"

#include <filesystem>
#include <memory>

#include "runner/repro.hpp"
#include "runner/shrink.hpp"

namespace cli {
namespace {

struct ShrinkArgs {
    std::string repro;
    std::string out;
    std::uint64_t budget = runner::shrink_schedules_total_default;  // --budget N
};

auto cmd_shrink(const ShrinkArgs& args) -> ExitCode {
    std::string out = args.out;
    if (out.empty()) {
        const std::filesystem::path path(args.repro);
        out = (path.parent_path() / (path.stem().string() + "-shrunk.json")).string();
    }
    require_writable("--out", out);
    // Validated as replay validates it: the same function.
    const runner::LoadedRepro loaded = runner::load_repro(args.repro);
    runner::ShrinkOptions options;
    options.schedules_total = args.budget;
    const runner::ShrinkResult shrunk = runner::shrink(loaded.repro, options);
    for (const auto& line : shrunk.log) say("shrink: %s\n", line.c_str());
    print_story(shrunk.outcome);
    runner::write_repro(shrunk.repro, out);
    if (shrunk.interrupted) {
        say("interrupted: the repro written to %s is as far as shrinking got (its \"shrunk\" log says so)\n",
            out.c_str());
        return ExitCode::interrupted;
    }
    say("%s repro written to %s\nreplay it with: crashsim replay %s\n",
        shrunk.budget_spent ? "shrunk (as far as the budget allowed: not minimal)" : "shrunk", out.c_str(),
        out.c_str());
    return verdict(shrunk.outcome);
}

}  // namespace

void add_shrink_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<ShrinkArgs>();
    CLI::App* shrink = app.add_subcommand("shrink", "shrink a repro to the smallest failing story");
    shrink->add_option("repro", args->repro, "repro JSON")->required();
    shrink->add_option("--out", args->out, "where to write the shrunk repro (default: REPRO-shrunk.json)");
    shrink->add_option("--budget", args->budget,
                         "schedules shrinking may run in all (default " +
                             std::to_string(runner::shrink_schedules_total_default) + ")")
        ->check(in_range(1, ~std::uint64_t{0}));
    verbs.add(shrink, [args] { return cmd_shrink(*args); });
}

}  // namespace cli
