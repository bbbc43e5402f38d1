#pragma once
// What every verb of the command line shares: exit codes, the numeric option
// validator, the wall clock (cli/ is the only place that reads it), the output
// held until a verb ends, and the live progress line. Each verb is one file,
// cli/VERB.cpp, with an add_VERB_command that cli/crashsim.cpp calls.
#include <CLI/CLI.hpp>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "loader/scenario.hpp"
#include "report/console.hpp"
#include "runner/campaign.hpp"
#include "runner/runner.hpp"

namespace cli {

/// nondeterministic: --verify-determinism saw a schedule run two ways (a
/// defect of crashsim or of a model, not of the modelled file system).
/// key_merges_unequal: --check-fingerprints saw two states with one
/// visited-state key part (a live local left undeclared, a hash too narrow).
/// footprint_undeclared: --check-footprints saw a step change a resource its
/// footprint does not name.
enum class ExitCode : int {
    pass = 0,
    violation = 1,
    input = 2,
    nondeterministic = 3,
    key_merges_unequal = 4,
    footprint_undeclared = 5,
    interrupted = 130
};

/// The cap on a dfs run's schedules when --schedules is not given.
constexpr std::uint64_t exhaustive_schedules_max = 100'000'000;
/// The most schedules --schedules may ask for (years of campaign; keeps the
/// shard arithmetic far from 2^64).
constexpr std::uint64_t schedules_max = 1'000'000'000'000;
/// The most threads --jobs may ask for.
constexpr std::uint64_t jobs_max = 256;
/// The most walks an estimate may take, and the deepest split.
constexpr std::uint64_t walks_max = 100'000;
/// The most stratified probes (each takes hundreds to thousands of runs).
constexpr std::uint64_t probes_max = 1'000;
constexpr std::uint64_t split_depth_max = 10'000;

/// What a verb does once the command line parsed: runs and returns its exit code.
using VerbAction = std::function<ExitCode()>;

/// The verbs' subcommands and their actions; main runs the one given.
struct Verbs {
    std::vector<std::pair<CLI::App*, VerbAction>> list;
    void add(CLI::App* subcommand, VerbAction action) { list.emplace_back(subcommand, std::move(action)); }
};

/// The verbs, one file each (cli/VERB.cpp).
void add_run_command(CLI::App& app, Verbs& verbs);
void add_fuzz_command(CLI::App& app, Verbs& verbs);
void add_replay_command(CLI::App& app, Verbs& verbs);
void add_shrink_command(CLI::App& app, Verbs& verbs);
void add_check_command(CLI::App& app, Verbs& verbs);
void add_perf_command(CLI::App& app, Verbs& verbs);
void add_merge_command(CLI::App& app, Verbs& verbs);
void add_list_command(CLI::App& app, Verbs& verbs);
void add_bench_command(CLI::App& app, Verbs& verbs);
void add_kernel_command(CLI::App& app, Verbs& verbs);  // the real kernel's side (kernel/)

/// A numeric option: decimal digits only (no sign), within [min, max];
/// otherwise CLI11 fails the parse with "--flag: expected ..." (exit 2).
auto in_range(std::uint64_t min, std::uint64_t max) -> CLI::Validator;

auto seconds_now() -> double;

auto load(const std::string& path, std::string* text_out = nullptr) -> loader::Scenario;

auto pick_variant(const loader::Scenario& scenario, const std::string& name) -> const loader::Variant&;

/// What the verb prints: held until it ends, so a run that ends in an
/// input error (exit 2) prints nothing on stdout.
auto output() -> std::string&;

[[gnu::format(printf, 1, 2)]] void say(const char* format, ...);

void print_story(const runner::RunOutcome& outcome);

void write_trace_text(const std::string& path, const runner::RunOutcome& outcome);

void write_chrome_trace(const std::string& path, const runner::RunOutcome& outcome,
                        const std::string& title);

/// Fails before any work when an output file could not be written, so a run
/// never prints its findings and then exits 2.
void require_writable(const std::string& flag, const std::string& path);

auto verdict(const runner::RunOutcome& outcome) -> ExitCode;

/// A live line on a terminal; nothing elsewhere (CI reads the summary only).
class ProgressLine {
public:
    explicit ProgressLine(bool enabled)
        : enabled_(enabled && ::isatty(STDOUT_FILENO) != 0), started_(seconds_now()) {}
    ~ProgressLine() { clear(); }
    ProgressLine(const ProgressLine&) = delete;
    auto operator=(const ProgressLine&) -> ProgressLine& = delete;
    void update(const runner::FuzzProgress& progress) {
        if (!enabled_) return;
        const double now = seconds_now();
        if (now - last_ < 0.2) return;
        last_ = now;
        std::printf("\r%s", report::progress_text(progress, now - started_).c_str());
        std::fflush(stdout);
        shown_ = true;
    }
    void clear() {
        if (!shown_) return;
        std::printf("\r%100s\r", "");
        std::fflush(stdout);
        shown_ = false;
    }
    [[nodiscard]] auto callback() -> std::function<void(const runner::FuzzProgress&)> {
        return [this](const runner::FuzzProgress& p) { update(p); };
    }

private:
    bool enabled_;
    double started_;
    double last_ = 0;
    bool shown_ = false;
};

}  // namespace cli
