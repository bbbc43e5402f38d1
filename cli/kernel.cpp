// `crashsim kernel SCENARIO [--variant V]`: the scenario's workload as real
// system calls on the running kernel, through a logging FUSE device; its
// crash states judged by the same checkers as the model's; beside them the
// model's verdicts and device traffic on the same sequential schedule.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "cli/common.hpp"
#include "kernel/fstests.hpp"
#include "kernel/harness.hpp"
#include "kernel/host.hpp"
#include "loader/scenario.hpp"
#include "runner/runner.hpp"
#include "sim/stop.hpp"

namespace {

struct KernelArgs {
    std::string scenario;
    std::string variant;
    bool generic_042 = false;
};

const char* const kernel_limits =
    "Not done: tasks run one after another (a schedule's until points are the model's yield points and are "
    "not forced, nor is any interleaving); journal_integrity, freeze_quiescence, frozen_image and "
    "fault_outcome read the model's own records and are not judged on real states; the model's column is "
    "the first schedule of a search without preemptions (a task that blocks lets the next one run, where the "
    "real run waits) and the variant's expectation, which `crashsim check` establishes; a FUA write reaches "
    "the loop device as a write then a flush; a block two writes share shows its newest version only.";
const char* const kernel_exit =
    "Exit: 0 every real checker holds and the negative control is caught (or has nothing to lose); 1 a "
    "violation in a real crash state, or the control not caught; 2 bad input, a refused scenario or a "
    "machine that cannot; 130 interrupted.";

auto tally_text(const kernel::CheckerTally& tally, std::uint64_t states) -> std::string {
    if (tally.violated > 0) {
        return "VIOLATED in " + std::to_string(tally.violated) + " of " + std::to_string(states) +
               " state(s)";
    }
    return "holds in " + std::to_string(states) + " state(s), " + std::to_string(tally.judged) + " at stake";
}

void print_ops(const kernel::KernelReport& report) {
    std::printf("operations (as system calls):\n");
    for (const kernel::RanOp& ran : report.ran) {
        const loader::Op& op = *ran.op;
        std::printf("  %-8s %-14s %s%s%s\n", ran.task.empty() ? "set-up" : ran.task.c_str(), op.name.c_str(),
                    op.file.c_str(), ran.ok ? "" : "  failed: ", ran.ok ? "" : ran.error.c_str());
    }
}

void print_verdicts(const kernel::KernelReport& report) {
    const kernel::CrashJudgement& judgement = report.judgement;
    std::printf(
        "real crash states: %llu judged at %llu crash point(s); %s: %s\n",
        static_cast<unsigned long long>(judgement.states), static_cast<unsigned long long>(judgement.points),
        judgement.capped ? "capped, some subsets left out" : "none left out", judgement.cap_text.c_str());
    const kernel::ModelSide& model = report.model;
    std::printf("model: variant %s (%s); its expectation over the scenario's exploration: %s\n",
                model.variant.c_str(), model.why.c_str(), model.expectation.c_str());
    std::printf("  on the sequential schedule (dfs:0's first, no I/O reordering): %s\n",
                model.sequential.c_str());
    std::printf("  %-18s %-44s %s\n", "checker", "real kernel", "model");
    for (const kernel::CheckerTally& tally : judgement.tallies) {
        const auto found = model.checkers.find(tally.name);
        const std::string model_text =
            found == model.checkers.end() ? "not in the scenario's checkers" : found->second;
        std::printf("  %-18s %-44s %s\n", tally.name.c_str(), tally_text(tally, judgement.states).c_str(),
                    model_text.c_str());
        if (!tally.first.empty()) std::printf("      first: %s\n", tally.first.c_str());
        const bool real_violated = tally.violated > 0;
        const bool model_violated = model_text.rfind("VIOLATED", 0) == 0;
        if (found != model.checkers.end() && real_violated != model_violated) {
            std::printf("      they differ: the %s\n", real_violated
                                                           ? "real kernel violates it, the model holds"
                                                           : "model violates it, the real kernel holds");
        }
    }
    for (const auto& [name, text] : model.checkers) {
        bool real = false;
        for (const kernel::CheckerTally& tally : judgement.tallies) real = real || tally.name == name;
        if (!real)
            std::printf("  %-18s %-44s %s\n", name.c_str(), "not judged (reads the model's own records)",
                        text.c_str());
    }
    std::printf("negative control: %s\n", judgement.control_text.c_str());
}

auto count(std::uint64_t n) -> unsigned long long {
    return static_cast<unsigned long long>(n);
}

void print_traffic(const kernel::KernelReport& report) {
    const kernel::Traffic& real = report.traffic;
    const kernel::Traffic& model = report.model.traffic;
    std::printf(
        "device traffic of the workload (real: the order the FUSE device served it, sizes in bytes @ 4 KiB "
        "block; model: submission order)\n");
    std::printf("  %4s  %-22s %s\n", "#", "real", "model");
    const std::size_t rows = std::max(real.requests.size(), model.requests.size());
    for (std::size_t i = 0; i < rows; i++) {
        const std::string a = i < real.requests.size() ? real.requests[i] : "";
        const std::string b = i < model.requests.size() ? model.requests[i] : "";
        std::printf("  %4zu  %-22s %s\n", i + 1, a.c_str(), b.c_str());
    }
    std::printf("  real:  %llu writes (%llu bytes), %llu flushes\n", count(real.writes), count(real.bytes),
                count(real.flushes));
    std::printf(
        "  model: %llu writes (%llu bytes), %llu flushes, %llu FUA writes (as the loop device sees them: "
        "%llu flushes)\n",
        count(model.writes), count(model.bytes), count(model.flushes), count(model.fua),
        count(model.flushes + model.fua));
    std::string differ;
    if (real.writes != model.writes)
        differ += " writes " + std::to_string(real.writes) + " vs " + std::to_string(model.writes) + ";";
    if (real.flushes != model.flushes + model.fua) {
        differ += " flushes " + std::to_string(real.flushes) + " vs " +
                  std::to_string(model.flushes + model.fua) + ";";
    }
    if (real.bytes != model.bytes)
        differ += " bytes " + std::to_string(real.bytes) + " vs " + std::to_string(model.bytes) + ";";
    std::printf("  %s\n", differ.empty() ? "the counts agree" : ("they differ:" + differ).c_str());
}

auto run_kernel_verb(const KernelArgs& args) -> int {
    using clock = std::chrono::steady_clock;
    const loader::Scenario scenario = loader::load_scenario(args.scenario);
    std::map<std::string, clock::time_point> began;
    const auto phase = [&](const std::string& name) { began[name] = clock::now(); };
    const kernel::KernelReport report = kernel::run_kernel(scenario, args.variant, phase);
    const double crash_s = std::chrono::duration<double>(clock::now() - began["crash states"]).count();
    const double workload_s =
        std::chrono::duration<double>(began["crash states"] - began["workload"]).count();
    std::printf("crashsim kernel: %s on Linux %s, %s, %llu MiB image\n", scenario.name.c_str(),
                report.kernel_release.c_str(), report.fs.c_str(), count(report.image_bytes >> 20));
    std::printf("  %s; mount -o %s; tasks one after another: ", report.mkfs.c_str(),
                report.mount_options.empty() ? "defaults" : report.mount_options.c_str());
    for (const std::string& task : report.task_order) std::printf("%s ", task.c_str());
    std::printf("\n");
    print_ops(report);
    print_verdicts(report);
    print_traffic(report);
    const kernel::CrashJudgement& judgement = report.judgement;
    std::printf(
        "time: workload and log %.2f s (%llu records); crash states %.2f s, %.0f ms per state\n", workload_s,
        count(report.log_records), crash_s,
        judgement.states == 0
            ? 0.0
            : 1000.0 * crash_s / static_cast<double>(judgement.states + (judgement.control_ran ? 1 : 0)));
    std::printf("%s\n", kernel_limits);
    bool violated = judgement.control_ran && !judgement.control_caught;
    for (const kernel::CheckerTally& tally : judgement.tallies) violated = violated || tally.violated > 0;
    return violated ? 1 : 0;
}

/// fstests generic/042's own steps on the real kernel, beside the
/// scenario's scripted run of every variant.
auto run_generic_042_verb(const KernelArgs& args) -> int {
    const std::string path = args.scenario.empty() ? "scenarios/xfs/generic-042.json" : args.scenario;
    const loader::Scenario scenario = loader::load_scenario(path);
    if (const std::string missing = kernel::missing_requirements(); !missing.empty()) {
        throw kernel::HostError("the machine lacks " + missing);
    }
    const std::vector<kernel::Generic042Case> cases = kernel::run_generic_042();
    std::printf("fstests generic/042 on the running kernel (xfs, 25 MiB image of 0xCD, godown -f):\n");
    bool passed = true;
    for (const kernel::Generic042Case& c : cases) {
        passed = passed && c.passed();
        std::printf("  %-10s %s: size %llu, %llu bytes of 0x01, %llu bytes of 0xCD%s%s\n", c.command.c_str(),
                    c.passed() ? "pass" : "FAIL", count(c.size), count(c.ones), count(c.stale_bytes),
                    c.error.empty() ? "" : "; ", c.error.c_str());
    }
    std::printf("model, %s (its scripted schedule, one crash state per variant):\n", path.c_str());
    for (const loader::Variant& variant : scenario.variants) {
        runner::Simulation simulation(scenario, variant);
        const runner::RunOutcome outcome = simulation.run_scripted(false);
        std::printf("  %-12s %s\n", variant.name.c_str(),
                    outcome.violated() ? ("violates " + outcome.violations.front().checker + ": " +
                                          outcome.violations.front().message)
                                             .c_str()
                                       : "holds");
    }
    std::printf(
        "generic/042 reads no stale data on this kernel %s; the model's variant with every knob at its "
        "default is the one to compare\n",
        passed ? "(the test passes)" : "NOT: the test fails");
    return passed ? 0 : 1;
}

}  // namespace

namespace cli {

void add_kernel_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<KernelArgs>();
    CLI::App* sub = app.add_subcommand("kernel",
                                       "run a scenario's workload on the running kernel through a logging "
                                       "device and judge its crash states");
    sub->footer(std::string("Operations map to: ") + kernel::mapping_text() + ".\n" + kernel_limits + "\n" +
                kernel_exit);
    sub->add_option("scenario", args->scenario,
                    "scenario JSON file (with --generic-042: the scenario beside it, "
                    "default scenarios/xfs/generic-042.json)");
    sub->add_flag(
        "--generic-042", args->generic_042,
        "run fstests generic/042's own steps on xfs (xfs_io, shutdown -f) instead of a scenario's workload");
    sub->add_option("--variant", args->variant,
                    "the model's variant to compare with (default: the one naming the "
                    "running kernel, else the one with every knob at its default)");
    verbs.add(sub, [args] {
        if (!args->generic_042 && args->scenario.empty()) {
            throw loader::InputError("kernel: expected a scenario file (or --generic-042)");
        }
        int code = 2;
        try {
            code = args->generic_042 ? run_generic_042_verb(*args) : run_kernel_verb(*args);
        } catch (const kernel::HostError& error) {
            std::fprintf(stderr, "crashsim: kernel: %s\n", error.what());
            code = sim::stop_requested() ? 130 : 2;  // a command Ctrl-C killed fails too
        }
        std::fflush(stdout);
        return static_cast<ExitCode>(code);
    });
}

}  // namespace cli
