// The command line: CLI11 wiring only. Flags -> load -> run -> print -> exit
// code. The only place that reads the wall clock (for schedules/s figures).
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdarg>
#include <functional>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "model/disk/block_device.hpp"
#include "model/info.hpp"
#include "runner/campaign.hpp"
#include "report/chrome_trace.hpp"
#include "report/console.hpp"
#include "report/perf.hpp"
#include "report/plot.hpp"
#include "report/report.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "runner/shrink.hpp"
#include "sim/yield_point.hpp"

auto run_bench(const std::string& scenario_path, bool search_only, std::uint32_t bound_max, std::uint64_t cap) -> int;
auto run_visited_bench(const std::string& scenario_path, std::uint32_t bound_max) -> int;
void add_kernel_command(CLI::App& app);  // cli/kernel.cpp

extern "C" void on_stop_signal(int /*signal*/);

namespace {

/// nondeterministic: --verify-determinism saw a schedule run two ways (a
/// defect of crashsim or of a model, not of the modelled file system).
enum class ExitCode : int { pass = 0, violation = 1, input = 2, nondeterministic = 3, interrupted = 130 };

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

/// A numeric option: decimal digits only (no sign), within [min, max];
/// otherwise CLI11 fails the parse with "--flag: expected ..." (exit 2).
auto in_range(std::uint64_t min, std::uint64_t max) -> CLI::Validator {
    const std::string expected =
        "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got \"";
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            std::uint64_t value = 0;
            bool ok = !text.empty() && text.size() <= 20;
            for (char c : text) {
                if (!ok) break;
                const auto digit = static_cast<std::uint64_t>(c - '0');
                ok = c >= '0' && c <= '9' && value <= (~std::uint64_t{0} - digit) / 10;
                value = value * 10 + digit;
            }
            if (ok && value >= min && value <= max) return {};
            return expected + text + "\"";
        },
        "", "");
}

auto seconds_now() -> double {
    using clock = std::chrono::steady_clock;
    static const auto start = clock::now();
    return std::chrono::duration<double>(clock::now() - start).count();
}

auto load(const std::string& path, std::string* text_out = nullptr) -> scenarios::Scenario {
    std::string text = scenarios::read_text_file(path);
    scenarios::Scenario scenario = scenarios::parse_scenario(text, path);
    if (text_out != nullptr) *text_out = std::move(text);
    return scenario;
}

auto pick_variant(const scenarios::Scenario& scenario, const std::string& name) -> const scenarios::Variant& {
    if (name.empty()) return scenario.variants.front();
    const scenarios::Variant* variant = scenario.find_variant(name);
    if (variant == nullptr) {
        std::string names;
        for (const auto& v : scenario.variants) names += (names.empty() ? "" : ", ") + v.name;
        throw scenarios::InputError(scenario.path + ": $.variants: expected a variant named one of " +
                                    names + ", got \"" + name + "\"");
    }
    return *variant;
}

/// What the verb prints: held until it ends, so a run that ends in an
/// input error (exit 2) prints nothing on stdout.
auto output() -> std::string& {
    static std::string text;
    return text;
}

[[gnu::format(printf, 1, 2)]] void say(const char* format, ...) {
    va_list args;
    va_start(args, format);
    char small[512];
    va_list again;
    va_copy(again, args);
    const int size = std::vsnprintf(small, sizeof small, format, args);
    if (size >= 0 && static_cast<std::size_t>(size) < sizeof small) {
        output() += small;
    } else if (size > 0) {
        std::string large(static_cast<std::size_t>(size) + 1, '\0');
        std::vsnprintf(large.data(), large.size(), format, again);
        large.pop_back();
        output() += large;
    }
    va_end(again);
    va_end(args);
}

void print_story(const scenarios::RunOutcome& outcome) { output() += outcome.story; }

void write_trace_text(const std::string& path, const scenarios::RunOutcome& outcome) {
    if (!path.empty()) scenarios::write_text_file_atomically(path, outcome.trace);
}

void write_chrome_trace(const std::string& path, const scenarios::RunOutcome& outcome,
                        const std::string& title) {
    if (!path.empty()) {
        scenarios::write_text_file_atomically(path, scenarios::chrome_trace_json(outcome, title));
    }
}

/// Fails before any work when an output file could not be written, so a run
/// never prints its findings and then exits 2.
void require_writable(const std::string& flag, const std::string& path) {
    if (path.empty()) return;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code error;
    if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
        throw scenarios::InputError(flag + ": expected a file in an existing directory, got \"" + path + "\"");
    }
    if (std::filesystem::is_directory(path, error)) {
        throw scenarios::InputError(flag + ": expected a file, got the directory \"" + path + "\"");
    }
}

auto verdict(const scenarios::RunOutcome& outcome) -> ExitCode {
    output() += scenarios::verdict_text(outcome);
    return outcome.violated() ? ExitCode::violation : ExitCode::pass;
}

// ---- run ----
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
    const scenarios::Scenario scenario = load(args.scenario);
    const scenarios::Variant& variant = pick_variant(scenario, args.variant);
    scenarios::Simulation simulation(scenario, variant);
    say("crashsim run %s: variant %s, %s\n", scenario.name.c_str(), variant.name.c_str(),
                scenario.schedule.empty() ? "tasks in order (no scripted schedule)" : "scripted schedule");
    const scenarios::RunOutcome outcome = simulation.run_scripted(true, args.seed);
    print_story(outcome);
    write_trace_text(args.trace_text, outcome);
    write_chrome_trace(args.trace, outcome, scenario.name + " " + variant.name);
    say("trace hash %016llx\n", static_cast<unsigned long long>(outcome.trace_hash));
    return verdict(outcome);
}

// ---- fuzz ----
struct FuzzArgs {
    std::string scenario;
    std::string variant;
    std::string strategy = "random";
    std::uint32_t preemptions = 2;
    bool preemptions_given = false;
    bool schedules_given = false;
    bool walks_given = false;
    bool no_reduction = false;
    bool dpor = false;
    std::uint64_t seed = 0;
    std::uint64_t schedules = scenarios::fuzz_schedules_default;
    std::string out = ".";
    bool quiet = false;
    bool no_shrink = false;
    std::uint64_t shrink_budget = scenarios::shrink_schedules_total_default;  // --shrink-budget N
    bool all = false;
    std::uint32_t jobs = 1;
    std::string shard;
    std::string result;
    std::string trace;
    std::optional<std::uint32_t> io_reorders;     // overrides the scenario's explore
    std::optional<std::uint32_t> daemon_wakeups;  // the same
    std::optional<std::uint32_t> recovery_crashes;  // the same
    std::uint64_t verify_every = 0;  // --verify-determinism N
    bool estimate = false;           // --estimate: print the estimate, run nothing
    std::uint32_t walks = scenarios::estimate_walks_default;
    std::uint32_t probes = scenarios::estimate_probes_default;  // --probes N (dfs --estimate)
    bool probes_given = false;
    std::size_t split_depth = 0;     // --split-depth D (dfs with --jobs or --shard)
};

/// "K/N" with 0 <= K < N.
void parse_shard(const std::string& text, scenarios::FuzzRequest& request) {
    const auto slash = text.find('/');
    const std::string expected = "K/N with 0 <= K < N";
    auto number = [&](const std::string& digits) -> std::uint32_t {
        if (digits.empty() || digits.size() > 6 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            throw scenarios::InputError("--shard: expected " + expected + ", got \"" + text + "\"");
        }
        return static_cast<std::uint32_t>(std::stoul(digits));
    };
    if (slash == std::string::npos) throw scenarios::InputError("--shard: expected " + expected + ", got \"" + text + "\"");
    request.shard_index = number(text.substr(0, slash));
    request.shard_count = number(text.substr(slash + 1));
    if (request.shard_count == 0 || request.shard_index >= request.shard_count) {
        throw scenarios::InputError("--shard: expected " + expected + ", got \"" + text + "\"");
    }
}

/// A live line on a terminal; nothing elsewhere (CI reads the summary only).
class ProgressLine {
public:
    explicit ProgressLine(bool enabled) : enabled_(enabled && ::isatty(STDOUT_FILENO) != 0), started_(seconds_now()) {}
    ~ProgressLine() { clear(); }
    ProgressLine(const ProgressLine&) = delete;
    auto operator=(const ProgressLine&) -> ProgressLine& = delete;
    void update(const scenarios::FuzzProgress& progress) {
        if (!enabled_) return;
        const double now = seconds_now();
        if (now - last_ < 0.2) return;
        last_ = now;
        std::printf("\r%s", scenarios::progress_text(progress, now - started_).c_str());
        std::fflush(stdout);
        shown_ = true;
    }
    void clear() {
        if (!shown_) return;
        std::printf("\r%100s\r", "");
        std::fflush(stdout);
        shown_ = false;
    }
    [[nodiscard]] auto callback() -> std::function<void(const scenarios::FuzzProgress&)> {
        return [this](const scenarios::FuzzProgress& p) { update(p); };
    }

private:
    bool enabled_;
    double started_;
    double last_ = 0;
    bool shown_ = false;
};

/// The flags turned into a request; every flag error before any work.
auto fuzz_request(const FuzzArgs& args) -> scenarios::FuzzRequest {
    scenarios::FuzzRequest request;
    const std::string strategy_text =
        args.strategy == "dfs" ? "dfs:" + std::to_string(args.preemptions) : args.strategy;
    if (!sim::parse_strategy(strategy_text, request.strategy)) {
        throw scenarios::InputError(std::string("--strategy: expected dfs or ") + sim::strategy_spellings +
                                    ", got \"" + args.strategy + "\"");
    }
    const bool dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    if (args.preemptions_given && args.strategy != "dfs") {
        throw scenarios::InputError("--preemptions: expected only with --strategy dfs, got it with \"" +
                                    args.strategy + "\"");
    }
    if (!args.shard.empty()) parse_shard(args.shard, request);
    if (args.split_depth != 0 && !dfs) {
        throw scenarios::InputError("--split-depth: expected only with --strategy dfs, got it with \"" +
                                    args.strategy + "\"");
    }
    request.split_depth = args.split_depth;
    request.estimate_walks = args.walks;
    // The line a dfs run prints first costs a few walks (the first
    // counterexample within 10 ms), the same line for any J and N; --estimate
    // and --walks take them all, and so does the split depth's own estimate.
    if (dfs && !args.estimate && !args.walks_given) {
        request.estimate_runs = scenarios::estimate_first_line_runs;
    }
    // --estimate alone on dfs: heuristic sampling, close where Knuth's walks
    // read low (docs/exploring.md, "An estimate first"); --walks N asks for N Knuth walks instead.
    if (dfs && args.estimate && !args.walks_given) {
        request.estimate_stratified = true;
        request.estimate_walks = args.probes;
    }
    if (args.probes_given && !(dfs && args.estimate && !args.walks_given)) {
        const std::string got = !dfs ? "with --strategy " + args.strategy
                                : !args.estimate ? std::string("without --estimate")
                                                 : std::string("with --walks");
        throw scenarios::InputError("--probes: expected only with --strategy dfs and --estimate, without --walks, got it " +
                                    got);
    }
    require_writable("--trace", args.trace);
    require_writable("--result", args.result);
    if (!std::filesystem::is_directory(args.out)) {
        throw scenarios::InputError("--out: expected an existing directory, got \"" + args.out + "\"");
    }
    request.sleep_sets = !args.no_reduction;
    if (args.dpor && args.no_reduction) {
        throw scenarios::InputError("--dpor: expected no --no-reduction (dpor is a reduction), got both");
    }
    request.dpor = args.dpor;
    if (args.dpor && args.split_depth == 0 && (args.jobs > 1 || request.shard_count > 1)) {
        throw scenarios::InputError("--dpor: expected --split-depth D with --jobs above 1 or --shard (a split dpor "
                                    "search's counts depend on its depth, the same for any J and N at one depth), "
                                    "got none");
    }
    request.seed = args.seed;
    request.schedules = dfs && !args.schedules_given ? exhaustive_schedules_max : args.schedules;
    request.jobs = args.jobs;
    request.verify_every = args.verify_every;
    request.stop_at_first = !args.all && request.shard_count == 1;
    return request;
}

/// The campaign's JSON result, when asked for or sharded; returns its path.
auto write_result(const FuzzArgs& args, const scenarios::FuzzRequest& request, const scenarios::Scenario& scenario,
                  const std::string& text, const std::string& variant, const scenarios::FuzzReport& report,
                  const scenarios::SearchEstimate* estimate) -> std::string {
    std::string path = args.result;
    if (path.empty() && request.shard_count > 1) {
        path = (std::filesystem::path(args.out) / scenarios::result_file_name(scenario.name, variant, request)).string();
    }
    if (!path.empty()) {
        scenarios::CampaignResult result = scenarios::campaign_result(report, request, scenario, sim::hash_name(text), variant);
        if (estimate != nullptr) result.estimate = *estimate;
        scenarios::write_campaign_result(result, path);
    }
    return path;
}

/// The failing run (shrunk unless --no-shrink): its story, its repro file;
/// false when shrinking was interrupted (the repro says how far it got).
auto report_violation(const FuzzArgs& args, const scenarios::FuzzRequest& request,
                      const scenarios::Scenario& scenario, const std::string& text, const std::string& variant,
                      const scenarios::FuzzReport& report) -> bool {
    scenarios::Repro repro = scenarios::make_repro(report, request, args.scenario, text, variant);
    bool interrupted = false;
    bool budget_spent = false;
    if (!args.no_shrink) {
        scenarios::ShrinkOptions options;
        options.schedules_total = args.shrink_budget;
        const scenarios::ShrinkResult shrunk = scenarios::shrink(repro, options);
        interrupted = shrunk.interrupted;
        budget_spent = shrunk.budget_spent;
        for (const auto& line : shrunk.log) say("shrink: %s\n", line.c_str());
        repro = shrunk.repro;
        if (!args.quiet) print_story(shrunk.outcome);
        output() += scenarios::violations_text(shrunk.outcome);
        write_chrome_trace(args.trace, shrunk.outcome, scenario.name + " " + variant + " (shrunk)");
    }
    const std::string path = (std::filesystem::path(args.out) /
                              scenarios::repro_file_name(scenario.name, variant, repro.strategy, args.seed,
                                                         report.index, report.unit))
                                 .string();
    scenarios::write_repro(repro, path);
    const std::string where = "schedule " + std::to_string(report.index) +
                              (report.unit ? " of dfs unit " + std::to_string(*report.unit) : std::string());
    const char* how_shrunk = interrupted    ? " (shrinking interrupted: not fully shrunk)"
                             : budget_spent ? " (shrunk as far as the budget allowed: not minimal)"
                                            : "";
    say("found %s at %s; repro written to %s%s\nreplay it with: crashsim replay %s\n", repro.checker.c_str(),
        where.c_str(), path.c_str(), how_shrunk, path.c_str());
    return !interrupted;
}

/// The search's estimate (fuzz --estimate; the first line of a dfs run) and,
/// for a split dfs, the depth it splits at.
auto estimate_first(scenarios::FuzzRequest& request, scenarios::Simulation& simulation) -> scenarios::SearchEstimate {
    const scenarios::SearchEstimate estimate = scenarios::estimate_search(simulation, request, seconds_now);
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs && request.split_depth == 0 &&
        (request.jobs > 1 || request.shard_count > 1)) {
        // The depth from all the walks (the same for every shard); the
        // printed line stays the one any J and N print.
        scenarios::FuzzRequest walks = request;
        walks.estimate_runs = 0;
        walks.estimate_stratified = false;
        if (request.estimate_stratified) walks.estimate_walks = scenarios::estimate_walks_default;
        const bool whole = request.estimate_runs == 0 && !request.estimate_stratified;
        const scenarios::SearchEstimate walked = whole ? estimate : scenarios::estimate_search(simulation, walks);
        request.split_depth = scenarios::split_depth_for(walked, scenarios::split_units_wanted(request));
    }
    return estimate;
}

auto cmd_fuzz(const FuzzArgs& args) -> ExitCode {
    scenarios::FuzzRequest request = fuzz_request(args);
    std::string text;
    const scenarios::Scenario scenario = load(args.scenario, &text);
    const scenarios::Variant& variant = pick_variant(scenario, args.variant);
    scenarios::Simulation simulation(scenario, variant);
    scenarios::ExploreBounds bounds = scenario.explore;
    if (args.io_reorders) bounds.io_reorders = *args.io_reorders;
    if (args.daemon_wakeups) bounds.daemon_wakeups = *args.daemon_wakeups;
    if (args.recovery_crashes) bounds.recovery_crashes = *args.recovery_crashes;
    simulation.set_bounds(bounds);
    std::optional<scenarios::SearchEstimate> estimate;
    if (args.estimate || request.strategy.kind == sim::StrategySpec::Kind::dfs) {
        estimate = estimate_first(request, simulation);
        const std::string line = scenarios::estimate_text(*estimate, request);
        if (args.estimate) {
            output() += scenarios::fuzz_header(scenario.name, variant.name, request) + line;
            return ExitCode::pass;
        }
        // The first line, before the search spends the time.
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
    }
    ProgressLine progress(true);
    request.progress = progress.callback();
    const double started = seconds_now();
    const scenarios::FuzzReport report = scenarios::fuzz(simulation, request);
    const double elapsed = std::max(seconds_now() - started, 1e-9);
    progress.clear();
    output() += scenarios::fuzz_header(scenario.name, variant.name, request);
    const std::string result_path =
        write_result(args, request, scenario, text, variant.name, report, estimate ? &*estimate : nullptr);
    if (report.found && args.no_shrink) {
        if (!args.quiet) print_story(report.failing);
        output() += scenarios::violations_text(report.failing);
        write_chrome_trace(args.trace, report.failing, scenario.name + " " + variant.name);
    }
    output() += scenarios::fuzz_summary(report, request, elapsed);
    output() += scenarios::coverage_summary(scenarios::judged_counts(report.checker_names, report.judged),
                                            scenarios::reached_counts(scenario.model, report.hits));
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs && request.sleep_sets) {
        output() += scenarios::undeclared_text(scenario.model, report.hits);
    }
    if (!result_path.empty()) say("result written to %s\n", result_path.c_str());
    if (!report.nondeterministic.empty()) return ExitCode::nondeterministic;
    if (!report.found) return report.interrupted ? ExitCode::interrupted : ExitCode::pass;
    if (!report_violation(args, request, scenario, text, variant.name, report)) return ExitCode::interrupted;
    return ExitCode::violation;
}

// ---- merge ----
auto cmd_merge(const std::vector<std::string>& paths, const std::string& out) -> ExitCode {
    require_writable("--out", out);
    std::vector<scenarios::CampaignResult> shards;
    for (const auto& path : paths) shards.push_back(scenarios::read_campaign_result(path));
    const scenarios::CampaignResult merged = scenarios::merge_results(shards, paths);
    output() += scenarios::merge_summary(merged, shards.size());
    if (!out.empty()) {
        scenarios::write_campaign_result(merged, out);
        say("merged result written to %s\n", out.c_str());
    }
    return merged.violations.empty() ? ExitCode::pass : ExitCode::violation;
}

// ---- replay ----
struct ReplayArgs {
    std::string repro;
    std::string trace_text;
    std::string trace;
};

auto cmd_replay(const ReplayArgs& args) -> ExitCode {
    require_writable("--trace-text", args.trace_text);
    require_writable("--trace", args.trace);
    // Malformed, diverging or not reproducing its trace hash: exit 2.
    const scenarios::LoadedRepro loaded = scenarios::load_repro(args.repro);
    const scenarios::Repro& repro = loaded.repro;
    const scenarios::RunOutcome& outcome = loaded.replayed;
    const scenarios::Variant& variant = loaded.variant();
    say("crashsim replay %s: %s, variant %s, %s schedule %llu\n", args.repro.c_str(),
                loaded.scenario.name.c_str(), variant.name.c_str(), repro.strategy.c_str(),
                static_cast<unsigned long long>(repro.schedule_index));
    print_story(outcome);
    write_trace_text(args.trace_text, outcome);
    write_chrome_trace(args.trace, outcome, loaded.scenario.name + " " + variant.name + " (replay)");
    say("trace hash %016llx (matches the repro)\n", static_cast<unsigned long long>(outcome.trace_hash));
    return verdict(outcome);
}

// ---- shrink ----
struct ShrinkArgs {
    std::string repro;
    std::string out;
    std::uint64_t budget = scenarios::shrink_schedules_total_default;  // --budget N
};

auto cmd_shrink(const ShrinkArgs& args) -> ExitCode {
    std::string out = args.out;
    if (out.empty()) {
        const std::filesystem::path path(args.repro);
        out = (path.parent_path() / (path.stem().string() + "-shrunk.json")).string();
    }
    require_writable("--out", out);
    // Validated as replay validates it: the same function.
    const scenarios::LoadedRepro loaded = scenarios::load_repro(args.repro);
    scenarios::ShrinkOptions options;
    options.schedules_total = args.budget;
    const scenarios::ShrinkResult shrunk = scenarios::shrink(loaded.repro, options);
    for (const auto& line : shrunk.log) say("shrink: %s\n", line.c_str());
    print_story(shrunk.outcome);
    scenarios::write_repro(shrunk.repro, out);
    if (shrunk.interrupted) {
        say("interrupted: the repro written to %s is as far as shrinking got (its \"shrunk\" log says so)\n",
            out.c_str());
        return ExitCode::interrupted;
    }
    say("%s repro written to %s\nreplay it with: crashsim replay %s\n",
        shrunk.budget_spent ? "shrunk (as far as the budget allowed: not minimal)" : "shrunk", out.c_str(), out.c_str());
    return verdict(shrunk.outcome);
}

// ---- check ----
struct ScenarioFile {
    std::string path;
    bool named = false;  // on the command line, not found in a directory
};

auto collect_scenarios(const std::vector<std::string>& paths) -> std::vector<ScenarioFile> {
    std::vector<ScenarioFile> files;
    for (const auto& path : paths) {
        if (std::filesystem::is_directory(path)) {
            const std::size_t before = files.size();
            for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
                const auto& p = entry.path();
                if (!entry.is_regular_file() || p.extension() != ".json") continue;
                // schema/ holds the JSON Schema, not scenarios.
                if (p.parent_path().filename() == "schema") continue;
                files.push_back({p.string(), false});
            }
            if (files.size() == before) {
                throw scenarios::InputError(path + ": expected a directory with scenario files (*.json), got none");
            }
        } else {
            files.push_back({path, true});
        }
    }
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return files;
}

/// A row for a variant an interrupted check never ran: skipped in the
/// reports, never read as met.
auto skipped_row(const scenarios::Scenario& scenario, std::string variant, std::string expectation)
    -> scenarios::CheckRow {
    scenarios::CheckRow row;
    row.scenario = scenario.name;
    row.scenario_path = scenario.path;
    row.variant = std::move(variant);
    row.expectation = std::move(expectation);
    row.skipped = true;
    row.detail = "not run: the check was interrupted before it";
    return row;
}

struct CheckArgs {
    std::vector<std::string> paths;
    std::string junit;
    std::string json;
    std::uint32_t jobs = 1;
    std::uint64_t verify_every = 0;  // --verify-determinism N
};

/// A row for what could not be checked: a file of a directory that does not
/// load, or a variant whose run fails on its input.
auto error_row(const std::string& scenario, const std::string& path, const std::string& variant,
               const std::string& expectation, const std::string& message) -> scenarios::CheckRow {
    scenarios::CheckRow row;
    row.scenario = scenario;
    row.scenario_path = path;
    row.variant = variant;
    row.expectation = expectation;
    row.error = true;
    row.detail = message;
    return row;
}

/// The rows of one scenario's performance ratios, then of its variants, each
/// printed as it ends; once a stop is requested the rest are skipped rows.
/// True when the check was interrupted here. A scenario `named` on the command
/// line rethrows an input error; one found in a directory becomes an ERROR row.
auto check_scenario(const scenarios::Scenario& scenario, bool named, const CheckArgs& args,
                    const std::function<void(const scenarios::CheckRow&)>& print_row,
                    std::vector<scenarios::CheckRow>& rows) -> bool {
    bool interrupted = false;
    if (scenarios::stop_requested() && scenario.perf) {
        interrupted = true;
        for (const auto& ratio : scenario.perf->ratios) {
            rows.push_back(skipped_row(scenario, scenarios::perf_row_variant(ratio, scenario.sweep_parameter, ratio.at),
                                       scenarios::perf_row_expectation(scenario, ratio)));
        }
    }
    std::vector<scenarios::CheckRow> perf_rows;
    try {
        if (scenario.perf && !scenarios::stop_requested()) perf_rows = scenarios::check_perf(scenario, seconds_now);
    } catch (const scenarios::InputError& error) {
        if (named) throw;
        perf_rows.push_back(error_row(scenario.name, scenario.path, "perf", "measure", error.what()));
    }
    for (auto& row : perf_rows) {
        interrupted = interrupted || row.interrupted;
        print_row(row);
        rows.push_back(std::move(row));
    }
    for (const auto& variant : scenario.variants) {
        if (variant.expect.kind == scenarios::Expectation::Kind::measure) continue;
        const std::string expectation = scenarios::expectation_text(variant.expect);
        if (scenarios::stop_requested()) {
            interrupted = true;
            rows.push_back(skipped_row(scenario, variant.name, expectation));
            continue;
        }
        ProgressLine progress(true);
        try {
            rows.push_back(scenarios::check_variant(
                scenario, variant, seconds_now, args.jobs,
                [&progress](const scenarios::FuzzProgress& p) { progress.update(p); }, args.verify_every));
        } catch (const scenarios::InputError& error) {
            if (named) throw;
            rows.push_back(error_row(scenario.name, scenario.path, variant.name, expectation, error.what()));
        }
        progress.clear();
        const scenarios::CheckRow& row = rows.back();
        interrupted = interrupted || row.interrupted;
        print_row(row);
    }
    return interrupted;
}

/// The scenarios `check` runs, each with whether it was named on the command line.
struct CheckScenarios {
    std::vector<scenarios::Scenario> loaded;
    std::vector<bool> named;
};

// A bad file named on the command line is bad input (exit 2, like every verb);
// one found in a directory is an ERROR row and the other scenarios still run.
auto load_check_scenarios(const std::vector<ScenarioFile>& files, std::vector<scenarios::CheckRow>& rows)
    -> CheckScenarios {
    CheckScenarios checked;
    for (const auto& file : files) {
        try {
            checked.loaded.push_back(load(file.path));
            checked.named.push_back(file.named);
        } catch (const scenarios::InputError& error) {
            if (file.named) throw;
            rows.push_back(error_row(file.path, file.path, "-", "loads", error.what()));
        }
    }
    return checked;
}

/// The expectations `check` has: one per file in error, one per variant that
/// is not a measure and one per performance ratio of each scenario loaded.
auto expectations_total(std::size_t files_in_error, const std::vector<scenarios::Scenario>& loaded)
    -> std::size_t {
    std::size_t total = files_in_error;
    for (const auto& scenario : loaded) {
        for (const auto& variant : scenario.variants) {
            if (variant.expect.kind != scenarios::Expectation::Kind::measure) total++;
        }
        if (scenario.perf) total += scenario.perf->ratios.size();
    }
    return total;
}

/// The summary line of `check` (after the coverage when it ran to its end),
/// and its exit code.
auto check_verdict(const std::vector<scenarios::CheckRow>& rows, std::size_t total, bool interrupted,
                   std::uint64_t verify_every) -> ExitCode {
    const auto met = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.met; }));
    if (interrupted) {
        const auto skipped = static_cast<std::size_t>(
            std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.skipped || r.interrupted; }));
        say("check: interrupted: %zu of %zu expectations checked, %zu of them met; %zu not run or cut short "
            "(marked skipped in the JUnit and JSON reports)\n",
            rows.size() - skipped, total, met, skipped);
        return ExitCode::interrupted;
    }
    output() += scenarios::model_coverage_text(rows);
    if (verify_every != 0) output() += scenarios::check_determinism_text(rows, verify_every);
    const auto errors = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.error; }));
    if (errors == 0) {
        say("check: %zu of %zu expectations met\n", met, rows.size());
    } else {
        say("check: %zu of %zu expectations met; %zu ERROR (a scenario file or run that failed on its input)\n", met,
            rows.size(), errors);
    }
    return met == rows.size() ? ExitCode::pass : ExitCode::violation;
}

auto cmd_check(const CheckArgs& args) -> ExitCode {
    require_writable("--junit", args.junit);
    require_writable("--json", args.json);
    const auto files =
        collect_scenarios(args.paths.empty() ? std::vector<std::string>{"scenarios"} : args.paths);
    if (files.empty()) throw scenarios::InputError("check: expected at least one scenario file, got none");
    std::vector<scenarios::CheckRow> rows;
    const auto [loaded, named] = load_check_scenarios(files, rows);
    scenarios::CheckTable table(loaded);
    for (const auto& row : rows) {
        table.scenario = std::max(table.scenario, static_cast<int>(row.scenario.size()));
    }
    output() += scenarios::check_header(table);
    const double started = seconds_now();
    bool interrupted = false;
    const auto print_row = [&table](const scenarios::CheckRow& row) {
        output() += scenarios::check_row_text(table, row);
    };
    for (const auto& row : rows) print_row(row);
    for (std::size_t i = 0; i < loaded.size(); i++) {
        interrupted = check_scenario(loaded[i], named[i], args, print_row, rows) || interrupted;
    }
    const double elapsed = seconds_now() - started;
    const std::size_t total = expectations_total(files.size() - loaded.size(), loaded);
    if (!args.junit.empty()) scenarios::write_junit(rows, elapsed, args.junit);
    if (!args.json.empty()) scenarios::write_check_json(rows, elapsed, args.json);
    return check_verdict(rows, total, interrupted, args.verify_every);
}

// ---- perf ----
// crashsim perf SCENARIO --vary NAME=V1,V2,...: one run of the scenario per value.
auto cmd_perf_vary(const std::string& path, const std::string& spec, const std::string& points) -> ExitCode {
    const double started = seconds_now();
    const scenarios::VaryReport report = scenarios::measure_vary(path, spec, points);
    const double elapsed = seconds_now() - started;
    if (report.interrupted) {
        say("interrupted: stopped after %.2f s of wall time; nothing written\n", elapsed);
        return ExitCode::interrupted;
    }
    say("%s", scenarios::format_vary(report).c_str());
    say("%zu runs of the scenario in %.2f s of wall time\n", report.reports.size(), elapsed);
    return ExitCode::pass;
}

auto cmd_perf(const std::string& path, const std::string& csv, const std::string& plot,
              const std::string& points = "") -> ExitCode {
    require_writable("--csv", csv);
    require_writable("--plot", plot);
    if (!plot.empty()) scenarios::check_plot_path(plot);
    scenarios::Scenario scenario = load(path);
    if (!points.empty()) scenarios::keep_points(scenario, points);
    if (!scenario.fio && !scenario.fs_mark && !scenario.create_unlink) {
        throw scenarios::InputError(path + ": $.workload: expected a declared workload for perf, got nothing");
    }
    const double started = seconds_now();
    const scenarios::PerfReport report = scenarios::measure(scenario);
    const double elapsed = seconds_now() - started;
    if (report.interrupted) {
        say("interrupted: stopped after %.2f s of wall time; nothing written\n", elapsed);
        return ExitCode::interrupted;
    }
    say("crashsim perf %s (%s device, virtual time)\n", scenario.name.c_str(), scenario.device.profile.c_str());
    output() += scenarios::hypothetical_variants_text(scenario);
    const scenarios::PerfTable table = scenarios::perf_table(scenario, report);
    output() += table.table + table.ratios;
    const std::uint64_t operations = table.operations;
    const bool met = table.met;
    say("simulated %llu operations in %.2f s of wall time (%.0f operations/s)\n",
                static_cast<unsigned long long>(operations), elapsed, operations / std::max(elapsed, 1e-9));
    if (!csv.empty()) scenarios::write_text_file_atomically(csv, table.csv);
    if (!plot.empty()) {
        scenarios::plot_svg(scenario, report, plot);
        say("plot: %s\n", plot.c_str());
    }
    return met ? ExitCode::pass : ExitCode::violation;
}

// ---- list ----
// crashsim list [SCENARIO...]: with scenarios, also the machine profiles each declares.
auto cmd_list(const std::vector<std::string>& paths) -> ExitCode {
    std::string text = scenarios::list_text();
    for (const auto& path : paths) text += scenarios::machine_profiles_text(scenarios::load_scenario(path));
    output() += text;
    return ExitCode::pass;
}

/// Every verb's flags, and the subcommands that tell which verb was given.
struct Command {
    RunArgs run_args;
    FuzzArgs fuzz_args;
    ReplayArgs replay_args;
    ShrinkArgs shrink_args;
    CheckArgs check_args;
    std::string perf_scenario;
    std::string perf_csv;
    std::string perf_plot;
    std::string perf_vary;
    std::string perf_points;
    std::vector<std::string> merge_paths;
    std::vector<std::string> list_scenarios;
    std::string merge_out;
    std::string bench_scenario = "scenarios/btrfs/fast-fsync-vs-page-release.json";
    bool bench_search = false;
    bool bench_visited = false;
    std::uint32_t bench_bound_max = 3;
    std::uint64_t bench_cap = 0;
    CLI::App* run = nullptr;
    CLI::App* fuzz = nullptr;
    CLI::Option* preemptions = nullptr;
    CLI::Option* schedules = nullptr;
    CLI::Option* walks = nullptr;
    CLI::Option* probes = nullptr;
    CLI::App* replay = nullptr;
    CLI::App* shrink = nullptr;
    CLI::App* check = nullptr;
    CLI::App* perf = nullptr;
    CLI::App* merge = nullptr;
    CLI::App* bench = nullptr;
};

void add_run(CLI::App& app, Command& c) {
    const CLI::Validator any_u64 = in_range(0, ~std::uint64_t{0});
    c.run = app.add_subcommand("run", "run a scenario's scripted schedule and tell its story");
    c.run->add_option("scenario", c.run_args.scenario, "scenario JSON file")->required();
    c.run->add_option("--variant", c.run_args.variant, "variant name (default: the first)");
    const CLI::Validator bound = in_range(0, scenarios::explore_bound_max);
    const CLI::Validator jobs_range = in_range(1, jobs_max);
    c.run->add_option("--seed", c.run_args.seed, "seed for the writes a crash keeps (any-subset, prefix)")
        ->check(any_u64);
    c.run->add_option("--trace-text", c.run_args.trace_text, "write every engine step and note to FILE");
    c.run->add_option("--trace", c.run_args.trace, "write Chrome trace-event JSON (Perfetto) to FILE");
}

void add_fuzz(CLI::App& app, Command& c) {
    const CLI::Validator any_u64 = in_range(0, ~std::uint64_t{0});
    const CLI::Validator bound = in_range(0, scenarios::explore_bound_max);
    c.fuzz = app.add_subcommand("fuzz", "explore schedules, crash points and kept writes");
    c.fuzz->add_option("scenario", c.fuzz_args.scenario, "scenario JSON file")->required();
    c.fuzz->add_option("--variant", c.fuzz_args.variant, "variant name (default: the first)");
    c.fuzz->add_option("--strategy", c.fuzz_args.strategy, "random, pct:D, dfs (with --preemptions) or dfs:P");
    c.preemptions = c.fuzz->add_option("--preemptions", c.fuzz_args.preemptions,
                                         "dfs: the most preemptions a schedule may take (default 2)")
                               ->check(in_range(0, sim::dfs_preemptions_max));
    c.fuzz->add_flag("--no-reduction", c.fuzz_args.no_reduction, "dfs: turn partial-order reduction off (dpor and sleep sets)");
    c.fuzz->add_flag("--dpor", c.fuzz_args.dpor,
                     "dfs: dynamic partial-order reduction, about one schedule per class of equivalent interleavings "
                     "(default: every interleaving within the bound, pruned by sleep sets)");
    c.fuzz->add_option("--io-reorders", c.fuzz_args.io_reorders,
                     "per schedule, device completions that may fire ahead of earlier timers (0-8; default: the scenario's explore, else 1)")
        ->check(bound);
    c.fuzz->add_option("--daemon-wakeups", c.fuzz_args.daemon_wakeups,
                     "per schedule, daemon timers that may fire while tasks can run (0-8; default: the scenario's explore, else 1)")
        ->check(bound);
    c.fuzz->add_option("--recovery-crashes", c.fuzz_args.recovery_crashes,
                       "per crash state, power cuts nested inside recovery, each followed by a mount again (0-" +
                           std::to_string(scenarios::recovery_crashes_max) + "; default: the scenario's explore, else " +
                           std::to_string(scenarios::recovery_crashes_default) + ")")
        ->check(in_range(0, scenarios::recovery_crashes_max));
    c.fuzz->add_option("--seed", c.fuzz_args.seed, "campaign seed")->check(any_u64);
    c.schedules = c.fuzz->add_option("--schedules", c.fuzz_args.schedules,
                                       "schedules to run in all, the same for any --jobs (dfs: the most it may take; "
                                       "a shard takes its share)")
                             ->check(in_range(1, schedules_max));
    c.fuzz->add_option("--out", c.fuzz_args.out, "directory for the repro file");
    c.fuzz->add_flag("--quiet", c.fuzz_args.quiet, "do not print the failing story");
    c.fuzz->add_flag("--no-shrink", c.fuzz_args.no_shrink, "write the violation as found, unshrunk");
    c.fuzz->add_option("--shrink-budget", c.fuzz_args.shrink_budget,
                       "schedules shrinking may run in all (default " +
                           std::to_string(scenarios::shrink_schedules_total_default) + ")")
        ->check(in_range(1, ~std::uint64_t{0}));
    c.fuzz->add_option("--trace", c.fuzz_args.trace, "write the failing run as Chrome trace-event JSON");
    c.fuzz->add_option("--jobs", c.fuzz_args.jobs,
                       "threads; the result is the same for any J, only the wall time changes (dfs: sharing "
                       "the units of a split tree; default 1)")
        ->check(in_range(1, jobs_max));
    c.fuzz->add_option("--shard", c.fuzz_args.shard,
                     "K/N: run schedules i (dfs: units i) with i % N == K and write a result for crashsim merge");
    c.fuzz->add_flag("--estimate", c.fuzz_args.estimate,
                     "print an estimate of the schedules, crash states and time, run nothing");
    c.walks = c.fuzz->add_option("--walks", c.fuzz_args.walks,
                       "the estimate's random walks (dfs) or sample schedules (random, pct; default " +
                           std::to_string(scenarios::estimate_walks_default) + "; the line a dfs run prints first "
                           "stops at " + std::to_string(scenarios::estimate_first_line_runs) + " runs unless given)")
        ->check(in_range(1, walks_max));
    c.probes = c.fuzz->add_option("--probes", c.fuzz_args.probes,
                                  "dfs --estimate: stratified probes (heuristic sampling; default " +
                                      std::to_string(scenarios::estimate_probes_default) + ")")
                   ->check(in_range(1, probes_max));
    c.fuzz->add_option("--split-depth", c.fuzz_args.split_depth,
                       "dfs with --jobs or --shard: split the tree into units at this many choices (default: from "
                       "the estimate, 64 units per shard or job)")
        ->check(in_range(1, split_depth_max));
    c.fuzz->add_option("--result", c.fuzz_args.result, "write the campaign's JSON result to FILE");
    c.fuzz->add_flag("--all", c.fuzz_args.all, "do not stop at the first violation");
    c.fuzz->add_option("--verify-determinism", c.fuzz_args.verify_every,
                       "N: run every Nth schedule twice more with a trace and compare (exit 3 if they differ)")
        ->check(in_range(1, schedules_max));
}

void add_other_verbs(CLI::App& app, Command& c) {
    c.replay = app.add_subcommand("replay", "replay a repro file byte for byte");
    c.replay->add_option("repro", c.replay_args.repro, "repro JSON written by fuzz")->required();
    c.replay->add_option("--trace-text", c.replay_args.trace_text, "write every engine step and note to FILE");
    c.replay->add_option("--trace", c.replay_args.trace, "write Chrome trace-event JSON (Perfetto) to FILE");
    c.shrink = app.add_subcommand("shrink", "shrink a repro to the smallest failing story");
    c.shrink->add_option("repro", c.shrink_args.repro, "repro JSON")->required();
    c.shrink->add_option("--out", c.shrink_args.out, "where to write the shrunk repro (default: REPRO-shrunk.json)");
    c.shrink->add_option("--budget", c.shrink_args.budget,
                         "schedules shrinking may run in all (default " +
                             std::to_string(scenarios::shrink_schedules_total_default) + ")")
        ->check(in_range(1, ~std::uint64_t{0}));
    c.check = app.add_subcommand("check", "check every variant's expectation (the CI gate)");
    c.check->add_option("paths", c.check_args.paths, "scenario files or directories (default: scenarios)");
    c.check->add_option("--junit", c.check_args.junit, "write a JUnit XML report to FILE");
    c.check->add_option("--json", c.check_args.json, "write a JSON report with every figure to FILE");
    c.check->add_option("--jobs", c.check_args.jobs,
                        "threads; the same verdicts, counts and violations for any J, only the wall time "
                        "changes (default 1)")
        ->check(in_range(1, jobs_max));
    c.check->add_option("--verify-determinism", c.check_args.verify_every,
                        "N: in every campaign, run every Nth schedule twice more with a trace and compare")
        ->check(in_range(1, schedules_max));
    c.perf = app.add_subcommand("perf", "throughput and fsync latency of every variant, in virtual time");
    c.perf->add_option("scenario", c.perf_scenario, "scenario JSON file with a workload")->required();
    c.perf->add_option("--csv", c.perf_csv, "write the table as CSV to FILE");
    c.perf->add_option("--plot", c.perf_plot,
                     "draw the metric against the swept parameter into FILE.svg (needs gnuplot: "
                     "apt-get install gnuplot-nox)");
    c.perf->add_option("--vary", c.perf_vary,
                     "NAME=V1,V2,...: run once per value of one parameter (machine, device, workload field "
                     "or knob) and print how each ratio moves");
    c.perf->add_option("--points", c.perf_points, "V1,V2,...: run only these points of the scenario's sweep");
    c.merge = app.add_subcommand("merge", "combine the results of a sharded campaign");
    c.merge->add_option("results", c.merge_paths, "result JSON files written by fuzz --shard")->required();
    c.merge->add_option("--out", c.merge_out, "write the merged result to FILE");
    app.add_subcommand("list", "models, knobs, operations, checkers and yield points")
        ->add_option("scenarios", c.list_scenarios, "scenario JSON files whose machine profiles to list too");
    c.bench = app.add_subcommand("bench", "engine and exploration speed");
    c.bench->add_option("--scenario", c.bench_scenario, "scenario for schedules/s and the search table");
    c.bench->add_flag("--search", c.bench_search, "print only the search table (dfs rows)");
    c.bench->add_option("--bound-max", c.bench_bound_max, "the highest preemption bound of the search table or of --visited (default 3)")
        ->check(in_range(1, 3));
    c.bench->add_option("--cap", c.bench_cap, "schedules of the xfs and log-commit rows at most (default: xfs dfs:1 to its end, the dfs:2 rows "
                      "20000)")
        ->check(in_range(1, 100'000'000));
    c.bench->add_flag("--visited", c.bench_visited,
                      "print only what pruning visited states could save: dfs on the scenario's before-fix and fix-1 "
                      "at bounds 1..--bound-max, runs cut at a repeated key (a measurement, not a search mode)")
        ->excludes("--search")
        ->excludes("--cap");
}

auto run_perf_verb(const Command& c) -> ExitCode {
    if (!c.perf_vary.empty() && (!c.perf_csv.empty() || !c.perf_plot.empty())) {
        throw scenarios::InputError("--vary: expected no --csv or --plot with it, got both");
    }
    return c.perf_vary.empty() ? cmd_perf(c.perf_scenario, c.perf_csv, c.perf_plot, c.perf_points)
                               : cmd_perf_vary(c.perf_scenario, c.perf_vary, c.perf_points);
}

auto run_verb(const CLI::App& app, const Command& c) -> ExitCode {
    if (*c.run) return cmd_run(c.run_args);
    if (*c.fuzz) return cmd_fuzz(c.fuzz_args);
    if (*c.replay) return cmd_replay(c.replay_args);
    if (*c.shrink) return cmd_shrink(c.shrink_args);
    if (*c.check) return cmd_check(c.check_args);
    if (*c.merge) return cmd_merge(c.merge_paths, c.merge_out);
    if (*c.perf) return run_perf_verb(c);
    if (app.got_subcommand("list")) return cmd_list(c.list_scenarios);
    return ExitCode::pass;
}

}  // namespace

auto main(int argc, char** argv) -> int {
    // Ctrl-C and SIGTERM stop campaigns at the next schedule; the verb then
    // prints what it explored and writes its reports (by rename, whole).
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    CLI::App app{"crashsim: a deterministic crash-consistency simulator for file-system write, fsync and commit protocols"};
    app.require_subcommand(1);
    Command c;
    add_run(app, c);
    add_fuzz(app, c);
    add_other_verbs(app, c);
    add_kernel_command(app);
    try {
        app.parse(argc, argv);
        c.fuzz_args.preemptions_given = c.preemptions->count() > 0;
        c.fuzz_args.schedules_given = c.schedules->count() > 0;
        c.fuzz_args.walks_given = c.walks->count() > 0;
        c.fuzz_args.probes_given = c.probes->count() > 0;
    } catch (const CLI::CallForHelp& help) {
        return app.exit(help);
    } catch (const CLI::ParseError& error) {
        std::fprintf(stderr, "crashsim: %s (see crashsim --help)\n", error.what());
        return static_cast<int>(ExitCode::input);
    }
    if (*c.bench && c.bench_visited) return run_visited_bench(c.bench_scenario, c.bench_bound_max);
    if (*c.bench) return run_bench(c.bench_scenario, c.bench_search, c.bench_bound_max, c.bench_cap);
    try {
        const ExitCode code = run_verb(app, c);
        std::fputs(output().c_str(), stdout);
        std::fflush(stdout);
        return static_cast<int>(code);
    } catch (const scenarios::InputError& error) {
        std::fprintf(stderr, "crashsim: %s\n", error.what());
        return static_cast<int>(ExitCode::input);
    } catch (const scenarios::LoadInterrupted& interrupted) {
        std::fprintf(stderr, "crashsim: %s\n", interrupted.what());
        return static_cast<int>(ExitCode::interrupted);
    }
}

extern "C" void on_stop_signal(int /*signal*/) { scenarios::request_stop(); }
