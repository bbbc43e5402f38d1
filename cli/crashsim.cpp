// The command line: CLI11 wiring only. Flags -> load -> run -> print -> exit
// code. The only place that reads the wall clock (for schedules/s figures).
#include <CLI/CLI.hpp>
#include <csignal>
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
#include "report/perf.hpp"
#include "report/plot.hpp"
#include "report/report.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "runner/shrink.hpp"
#include "sim/yield_point.hpp"

namespace {

enum class ExitCode : int { pass = 0, violation = 1, input = 2, interrupted = 130 };

/// The cap on a dfs run's schedules when --schedules is not given.
constexpr std::uint64_t exhaustive_schedules_max = 100'000'000;

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

void print_violations(const scenarios::RunOutcome& outcome) {
    for (const auto& violation : outcome.violations) {
        std::printf("VIOLATION %s: %s", violation.checker.c_str(), violation.message.c_str());
        if (outcome.crash) {
            std::printf("; crash after step %llu (%s)",
                        static_cast<unsigned long long>(outcome.crash->step), outcome.crash->after.c_str());
        }
        std::printf("\n");
    }
}

void print_story(const scenarios::RunOutcome& outcome) { std::fputs(outcome.story.c_str(), stdout); }

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
    print_violations(outcome);
    if (outcome.violated()) return ExitCode::violation;
    std::printf("no violation (%llu crash state(s) checked)\n",
                static_cast<unsigned long long>(outcome.crash_states));
    return ExitCode::pass;
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
    std::printf("crashsim run %s: variant %s, %s\n", scenario.name.c_str(), variant.name.c_str(),
                scenario.schedule.empty() ? "tasks in order (no scripted schedule)" : "scripted schedule");
    const scenarios::RunOutcome outcome = simulation.run_scripted(true, args.seed);
    print_story(outcome);
    write_trace_text(args.trace_text, outcome);
    write_chrome_trace(args.trace, outcome, scenario.name + " " + variant.name);
    std::printf("trace hash %016llx\n", static_cast<unsigned long long>(outcome.trace_hash));
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
    bool no_reduction = false;
    std::uint64_t seed = 0;
    std::uint64_t schedules = scenarios::fuzz_schedules_default;
    std::string out = ".";
    bool quiet = false;
    bool no_shrink = false;
    bool all = false;
    std::uint32_t jobs = 1;
    std::string shard;
    std::string result;
    std::string trace;
    std::optional<std::uint32_t> io_reorders;     // overrides the scenario's explore
    std::optional<std::uint32_t> daemon_wakeups;  // the same
};

auto sanitize(std::string text) -> std::string {
    for (char& c : text) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
    }
    return text;
}

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
    void update(const scenarios::FuzzProgress& progress) {
        if (!enabled_) return;
        const double now = seconds_now();
        if (now - last_ < 0.2) return;
        last_ = now;
        const double elapsed = std::max(now - started_, 1e-9);
        const double rate = progress.schedules / elapsed;
        const double remaining =
            rate > 0 && progress.schedules_planned > progress.schedules
                ? (progress.schedules_planned - progress.schedules) / rate
                : 0;
        std::printf("\r  %llu schedules, %.0f/s, %llu crash states, %llu violations, %.1f s elapsed, ~%.0f s left   ",
                    static_cast<unsigned long long>(progress.schedules), rate,
                    static_cast<unsigned long long>(progress.crash_states),
                    static_cast<unsigned long long>(progress.violations), elapsed, remaining);
        std::fflush(stdout);
        shown_ = true;
    }
    void clear() {
        if (!shown_) return;
        std::printf("\r%100s\r", "");
        std::fflush(stdout);
        shown_ = false;
    }

private:
    bool enabled_;
    double started_;
    double last_ = 0;
    bool shown_ = false;
};

void print_fuzz_summary(const scenarios::FuzzReport& report, const scenarios::FuzzRequest& request, double elapsed) {
    const bool dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    std::printf("schedules: %llu, crash states checked: %llu, steps: %llu, %.3f s, %.0f schedules/s, %.0f crash states/s\n",
                static_cast<unsigned long long>(report.schedules),
                static_cast<unsigned long long>(report.crash_states),
                static_cast<unsigned long long>(report.steps), elapsed, report.schedules / elapsed,
                report.crash_states / elapsed);
    if (dfs) {
        std::printf("pruned: %llu alternatives by sleep sets, %llu by the preemption bound; %llu runs cut as redundant\n",
                    static_cast<unsigned long long>(report.dfs.pruned_sleep),
                    static_cast<unsigned long long>(report.dfs.pruned_bound),
                    static_cast<unsigned long long>(report.dfs.abandoned));
    }
    std::printf("explored with %s: %llu schedule(s) took an I/O reordering, %llu a daemon wake-up\n",
                scenarios::describe_bounds(report.bounds).c_str(),
                static_cast<unsigned long long>(report.schedules_reordering),
                static_cast<unsigned long long>(report.schedules_waking));
    if (report.interrupted) {
        std::printf("interrupted: explored %llu schedules before the stop request\n",
                    static_cast<unsigned long long>(report.schedules));
    }
    if (!request.stop_at_first && !report.violations.empty()) {
        std::printf("violations: %zu schedule(s) failed:", report.violations.size());
        for (const auto& found : report.violations) {
            std::printf(" %llu (%s)", static_cast<unsigned long long>(found.index), found.violation.checker.c_str());
        }
        std::printf("\n");
    }
    if (report.found || report.interrupted) return;
    if (dfs && report.complete) {
        std::printf("complete: %llu schedules, %llu crash states, no violation within bounds (%u preemptions, %u I/O reorderings, %u daemon wake-ups, subsets of up to %zu unflushed writes)\n",
                    static_cast<unsigned long long>(report.schedules),
                    static_cast<unsigned long long>(report.crash_states), request.strategy.preemptions,
                    report.bounds.io_reorders, report.bounds.daemon_wakeups, scenarios::subset_writes_max);
    } else if (dfs) {
        std::printf("incomplete: stopped after %llu schedules (--schedules), no violation so far\n",
                    static_cast<unsigned long long>(report.schedules));
    } else {
        std::printf("no violation in %llu schedules\n", static_cast<unsigned long long>(report.schedules));
    }
}

/// What the verdict stands on: stake counts and yield-point coverage.
void print_coverage(const scenarios::Counts& judged, const scenarios::Counts& reached) {
    std::printf("judged (crash states with something at stake): %s\n", scenarios::judged_text(judged).c_str());
    std::printf("yield points: %s\n", scenarios::coverage_text(reached).c_str());
}

auto cmd_fuzz(const FuzzArgs& args) -> ExitCode {
    scenarios::FuzzRequest request;
    if (args.preemptions > sim::dfs_preemptions_max) {
        throw scenarios::InputError("--preemptions: expected 0 to 8, got " + std::to_string(args.preemptions));
    }
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
    if (args.schedules == 0) throw scenarios::InputError("--schedules: expected at least 1, got 0");
    if (args.io_reorders && *args.io_reorders > scenarios::explore_bound_max) {
        throw scenarios::InputError("--io-reorders: expected 0 to 8, got " + std::to_string(*args.io_reorders));
    }
    if (args.daemon_wakeups && *args.daemon_wakeups > scenarios::explore_bound_max) {
        throw scenarios::InputError("--daemon-wakeups: expected 0 to 8, got " + std::to_string(*args.daemon_wakeups));
    }
    if (args.jobs == 0) throw scenarios::InputError("--jobs: expected at least 1, got 0");
    if (!args.shard.empty()) parse_shard(args.shard, request);
    if (dfs && (args.jobs > 1 || request.shard_count > 1)) {
        throw scenarios::InputError("--strategy: expected random or pct:D with --jobs or --shard, got \"" +
                                    request.strategy.text() + "\"");
    }
    require_writable("--trace", args.trace);
    require_writable("--result", args.result);
    if (!std::filesystem::is_directory(args.out)) {
        throw scenarios::InputError("--out: expected an existing directory, got \"" + args.out + "\"");
    }
    std::string text;
    const scenarios::Scenario scenario = load(args.scenario, &text);
    const scenarios::Variant& variant = pick_variant(scenario, args.variant);
    request.sleep_sets = !args.no_reduction;
    request.seed = args.seed;
    request.schedules = dfs && !args.schedules_given ? exhaustive_schedules_max : args.schedules;
    request.jobs = args.jobs;
    request.stop_at_first = !args.all && request.shard_count == 1;
    scenarios::Simulation simulation(scenario, variant);
    scenarios::ExploreBounds bounds = scenario.explore;
    if (args.io_reorders) bounds.io_reorders = *args.io_reorders;
    if (args.daemon_wakeups) bounds.daemon_wakeups = *args.daemon_wakeups;
    simulation.set_bounds(bounds);
    ProgressLine progress(true);
    request.progress = [&progress](const scenarios::FuzzProgress& p) { progress.update(p); };
    const double started = seconds_now();
    const scenarios::FuzzReport report = scenarios::fuzz(simulation, request);
    const double elapsed = std::max(seconds_now() - started, 1e-9);
    progress.clear();
    std::printf("crashsim fuzz %s: variant %s, strategy %s, seed %llu", scenario.name.c_str(),
                variant.name.c_str(), request.strategy.text().c_str(),
                static_cast<unsigned long long>(args.seed));
    if (request.shard_count > 1) std::printf(", shard %u/%u", request.shard_index, request.shard_count);
    if (request.jobs > 1) std::printf(", %u jobs", request.jobs);
    std::printf("\n");
    std::string result_path = args.result;
    if (result_path.empty() && request.shard_count > 1) {
        result_path = (std::filesystem::path(args.out) /
                       ("result-" + sanitize(scenario.name) + "-" + sanitize(variant.name) + "-" +
                        sanitize(request.strategy.text()) + "-seed" + std::to_string(args.seed) + "-shard" +
                        std::to_string(request.shard_index) + "of" + std::to_string(request.shard_count) + ".json"))
                          .string();
    }
    if (!result_path.empty()) {
        scenarios::write_campaign_result(
            scenarios::campaign_result(report, request, scenario, sim::hash_name(text), variant.name), result_path);
    }
    if (report.found && args.no_shrink) {
        if (!args.quiet) print_story(report.failing);
        print_violations(report.failing);
        write_chrome_trace(args.trace, report.failing, scenario.name + " " + variant.name);
    }
    print_fuzz_summary(report, request, elapsed);
    print_coverage(scenarios::judged_counts(report.checker_names, report.judged),
                   scenarios::reached_counts(scenario.model, report.hits));
    if (!result_path.empty()) std::printf("result written to %s\n", result_path.c_str());
    if (!report.found) return report.interrupted ? ExitCode::interrupted : ExitCode::pass;
    scenarios::Repro repro;
    repro.scenario_path = args.scenario;
    repro.scenario_text = text;
    repro.variant = variant.name;
    repro.strategy = request.strategy.text();
    repro.seed = args.seed;
    repro.schedule_index = report.index;
    repro.schedule_seed = report.schedule_seed;
    repro.choices = report.failing.choices;
    repro.bounds = bounds;
    repro.crash = *report.failing.crash;
    repro.checker = report.failing.violations.front().checker;
    repro.message = report.failing.violations.front().message;
    repro.trace_hash = report.failing.trace_hash;
    if (!args.no_shrink) {
        const scenarios::ShrinkResult shrunk = scenarios::shrink(repro, scenarios::ShrinkOptions{});
        for (const auto& line : shrunk.log) std::printf("shrink: %s\n", line.c_str());
        repro = shrunk.repro;
        if (!args.quiet) print_story(shrunk.outcome);
        print_violations(shrunk.outcome);
        write_chrome_trace(args.trace, shrunk.outcome, scenario.name + " " + variant.name + " (shrunk)");
    }
    const std::string path = (std::filesystem::path(args.out) /
                              ("repro-" + sanitize(scenario.name) + "-" + sanitize(variant.name) + "-" +
                               sanitize(repro.strategy) + "-seed" + std::to_string(args.seed) + ".json"))
                                 .string();
    scenarios::write_repro(repro, path);
    std::printf("found %s at schedule %llu; repro written to %s\nreplay it with: crashsim replay %s\n",
                repro.checker.c_str(), static_cast<unsigned long long>(report.index), path.c_str(),
                path.c_str());
    return ExitCode::violation;
}

// ---- merge ----
auto cmd_merge(const std::vector<std::string>& paths, const std::string& out) -> ExitCode {
    require_writable("--out", out);
    std::vector<scenarios::CampaignResult> shards;
    for (const auto& path : paths) shards.push_back(scenarios::read_campaign_result(path));
    const scenarios::CampaignResult merged = scenarios::merge_results(shards, paths);
    std::printf("crashsim merge %s: variant %s, strategy %s, seed %llu, %zu shard(s)\n", merged.scenario.c_str(),
                merged.variant.c_str(), merged.strategy.c_str(), static_cast<unsigned long long>(merged.seed),
                shards.size());
    std::printf("schedules: %llu of %llu, crash states checked: %llu, steps: %llu%s\n",
                static_cast<unsigned long long>(merged.schedules_run),
                static_cast<unsigned long long>(merged.schedules),
                static_cast<unsigned long long>(merged.crash_states),
                static_cast<unsigned long long>(merged.steps), merged.interrupted ? " (a shard was interrupted)" : "");
    for (const auto& found : merged.violations) {
        std::printf("VIOLATION at schedule %llu (seed %llu) %s: %s\n", static_cast<unsigned long long>(found.index),
                    static_cast<unsigned long long>(found.schedule_seed), found.violation.checker.c_str(),
                    found.violation.message.c_str());
    }
    if (merged.violations.empty()) std::printf("no violation\n");
    std::printf("explored with %s\n", scenarios::describe_bounds(merged.bounds).c_str());
    if (!merged.judged.empty() || !merged.reached.empty()) print_coverage(merged.judged, merged.reached);
    if (!out.empty()) {
        scenarios::write_campaign_result(merged, out);
        std::printf("merged result written to %s\n", out.c_str());
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
    const scenarios::Repro repro = scenarios::read_repro(args.repro);
    scenarios::Scenario scenario;
    try {
        scenario = scenarios::parse_scenario(repro.scenario_text, repro.scenario_path);
    } catch (const scenarios::InputError& error) {
        throw scenarios::InputError(args.repro + ": $.scenario: expected the scenario it was found with, got one that does not load (" +
                                    error.what() + ")");
    }
    const scenarios::Variant* variant = scenario.find_variant(repro.variant);
    if (variant == nullptr) {
        throw scenarios::InputError(args.repro + ": $.variant: expected a variant of the embedded scenario, got \"" +
                                    repro.variant + "\"");
    }
    scenarios::Simulation simulation(scenario, *variant);
    simulation.set_bounds(repro.bounds);
    scenarios::RunOutcome outcome;
    try {
        outcome = simulation.replay(repro.choices, repro.crash, true);
    } catch (const sim::ReplayDiverged& diverged) {
        throw scenarios::InputError(args.repro + ": $.choices: expected a choice list this scenario can replay, got one that diverges: " +
                                    diverged.what());
    }
    std::printf("crashsim replay %s: %s, variant %s, %s schedule %llu\n", args.repro.c_str(),
                scenario.name.c_str(), variant->name.c_str(), repro.strategy.c_str(),
                static_cast<unsigned long long>(repro.schedule_index));
    print_story(outcome);
    write_trace_text(args.trace_text, outcome);
    write_chrome_trace(args.trace, outcome, scenario.name + " " + variant->name + " (replay)");
    std::printf("trace hash %016llx (%s the repro)\n", static_cast<unsigned long long>(outcome.trace_hash),
                outcome.trace_hash == repro.trace_hash ? "matches" : "DIFFERS FROM");
    return verdict(outcome);
}

// ---- shrink ----
struct ShrinkArgs {
    std::string repro;
    std::string out;
};

auto cmd_shrink(const ShrinkArgs& args) -> ExitCode {
    std::string out = args.out;
    if (out.empty()) {
        const std::filesystem::path path(args.repro);
        out = (path.parent_path() / (path.stem().string() + "-shrunk.json")).string();
    }
    require_writable("--out", out);
    const scenarios::Repro repro = scenarios::read_repro(args.repro);
    try {
        static_cast<void>(scenarios::parse_scenario(repro.scenario_text, repro.scenario_path));
    } catch (const scenarios::InputError& error) {
        throw scenarios::InputError(args.repro + ": $.scenario: expected the scenario it was found with, got one that does not load (" +
                                    error.what() + ")");
    }
    scenarios::ShrinkResult shrunk;
    try {
        shrunk = scenarios::shrink(repro, scenarios::ShrinkOptions{});
    } catch (const sim::ReplayDiverged& diverged) {
        throw scenarios::InputError(args.repro + ": $.choices: expected a choice list this scenario can replay, got one that diverges: " +
                                    diverged.what());
    }
    for (const auto& line : shrunk.log) std::printf("shrink: %s\n", line.c_str());
    print_story(shrunk.outcome);
    scenarios::write_repro(shrunk.repro, out);
    std::printf("shrunk repro written to %s\nreplay it with: crashsim replay %s\n", out.c_str(), out.c_str());
    return verdict(shrunk.outcome);
}

// ---- check ----
auto collect_scenarios(const std::vector<std::string>& paths) -> std::vector<std::string> {
    std::vector<std::string> files;
    for (const auto& path : paths) {
        if (std::filesystem::is_directory(path)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
                const auto& p = entry.path();
                if (!entry.is_regular_file() || p.extension() != ".json") continue;
                // schema/ holds the JSON Schema, not scenarios.
                if (p.parent_path().filename() == "schema") continue;
                files.push_back(p.string());
            }
        } else {
            files.push_back(path);
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

struct CheckArgs {
    std::vector<std::string> paths;
    std::string junit;
    std::string json;
    std::uint32_t jobs = 1;
};

/// What the whole check explored of each model: yield points summed over its rows.
void print_model_coverage(const std::vector<scenarios::CheckRow>& rows) {
    std::vector<std::pair<std::string, scenarios::Counts>> reached;
    for (const auto& row : rows) reached.emplace_back(row.model, row.reached);
    for (const auto& [model, counts] : scenarios::coverage_by_model(reached)) {
        std::printf("coverage of %s: yield points %s\n", model.c_str(), scenarios::coverage_text(counts).c_str());
    }
}

auto cmd_check(const CheckArgs& args) -> ExitCode {
    if (args.jobs == 0) throw scenarios::InputError("--jobs: expected at least 1, got 0");
    require_writable("--junit", args.junit);
    require_writable("--json", args.json);
    const auto files = collect_scenarios(args.paths.empty() ? std::vector<std::string>{"scenarios"} : args.paths);
    if (files.empty()) throw scenarios::InputError("check: expected at least one scenario file, got none");
    std::vector<scenarios::Scenario> loaded;
    for (const auto& file : files) loaded.push_back(load(file));
    std::printf("%-40s %-12s %-28s %-7s %10s %13s %9s\n", "scenario", "variant", "expectation",
                "verdict", "schedules", "crash states", "time");
    const double started = seconds_now();
    std::vector<scenarios::CheckRow> rows;
    bool interrupted = false;
    auto print_row = [](const scenarios::CheckRow& row) {
        std::printf("%-40s %-12s %-28s %-7s %10llu %13llu %7.2f s\n", row.scenario.c_str(),
                    row.variant.c_str(), row.expectation.c_str(), row.met ? "ok" : "FAILED",
                    static_cast<unsigned long long>(row.schedules),
                    static_cast<unsigned long long>(row.crash_states), row.seconds);
        if (!row.met) std::printf("    %s\n", row.detail.c_str());
        if (!row.judged.empty()) {
            std::printf("    judged: %s; yield points: %s\n", scenarios::judged_text(row.judged).c_str(),
                        scenarios::coverage_text(row.reached).c_str());
        }
        std::fflush(stdout);
    };
    for (const auto& scenario : loaded) {
        for (auto& row : scenarios::check_perf(scenario, seconds_now)) {
            print_row(row);
            rows.push_back(std::move(row));
        }
        for (const auto& variant : scenario.variants) {
            if (variant.expect.kind == scenarios::Expectation::Kind::measure) continue;
            if (scenarios::stop_requested()) {
                interrupted = true;
                break;
            }
            ProgressLine progress(true);
            rows.push_back(scenarios::check_variant(
                scenario, variant, seconds_now, args.jobs,
                [&progress](const scenarios::FuzzProgress& p) { progress.update(p); }));
            progress.clear();
            const scenarios::CheckRow& row = rows.back();
            interrupted = interrupted || row.interrupted;
            print_row(row);
        }
    }
    const double elapsed = seconds_now() - started;
    const auto met = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.met; }));
    std::size_t total = 0;
    for (const auto& scenario : loaded) {
        for (const auto& variant : scenario.variants) {
            if (variant.expect.kind != scenarios::Expectation::Kind::measure) total++;
        }
        if (scenario.perf) total += scenario.perf->ratios.size();
    }
    if (!args.junit.empty()) scenarios::write_junit(rows, elapsed, args.junit);
    if (!args.json.empty()) scenarios::write_check_json(rows, elapsed, args.json);
    if (interrupted) {
        std::printf("check: interrupted after %zu of %zu variants; %zu of them met their expectation\n", rows.size(),
                    total, met);
        return ExitCode::interrupted;
    }
    print_model_coverage(rows);
    std::printf("check: %zu of %zu expectations met\n", met, rows.size());
    return met == rows.size() ? ExitCode::pass : ExitCode::violation;
}

// ---- perf ----
/// A perf run has no story: its header says which variants use a knob value
/// that names no real kernel.
void print_hypothetical_variants(const scenarios::Scenario& scenario) {
    const model::ModelInfo* info = model::find_model(scenario.model);
    for (const auto& variant : scenario.variants) {
        for (const auto& note : model::hypothetical_notes(*info, variant.config)) {
            std::printf("note: variant %s: %s\n", variant.name.c_str(), note.c_str());
        }
    }
}

// crashsim perf SCENARIO --vary NAME=V1,V2,...: one run of the scenario per value.
auto cmd_perf_vary(const std::string& path, const std::string& spec, const std::string& points) -> ExitCode {
    const double started = seconds_now();
    const scenarios::VaryReport report = scenarios::measure_vary(path, spec, points);
    const double elapsed = seconds_now() - started;
    if (report.interrupted) {
        std::printf("interrupted: stopped after %.2f s of wall time; nothing written\n", elapsed);
        return ExitCode::interrupted;
    }
    std::printf("%s", scenarios::format_vary(report).c_str());
    std::printf("%zu runs of the scenario in %.2f s of wall time\n", report.reports.size(), elapsed);
    return ExitCode::pass;
}

auto cmd_perf(const std::string& path, const std::string& csv, const std::string& plot,
              const std::string& points = "") -> ExitCode {
    require_writable("--csv", csv);
    require_writable("--plot", plot);
    if (!plot.empty()) scenarios::check_plot_path(plot);
    scenarios::Scenario scenario = load(path);
    if (!points.empty()) scenarios::keep_points(scenario, points);
    if (!scenario.fio && !scenario.fs_mark) {
        throw scenarios::InputError(path + ": $.workload: expected a declared workload for perf, got nothing");
    }
    const double started = seconds_now();
    const scenarios::PerfReport report = scenarios::measure(scenario);
    const double elapsed = seconds_now() - started;
    if (report.interrupted) {
        std::printf("interrupted: stopped after %.2f s of wall time; nothing written\n", elapsed);
        return ExitCode::interrupted;
    }
    std::printf("crashsim perf %s (%s device, virtual time)\n", scenario.name.c_str(), scenario.device.profile.c_str());
    print_hypothetical_variants(scenario);
    // In a sweep each row starts with the swept parameter's value.
    const bool swept = !report.parameter.empty();
    if (swept) std::printf("%8s ", report.parameter.c_str());
    std::printf("%-14s %10s %10s %10s %9s %9s %9s %10s", "variant", "MiB/s", "writes/s", "fsyncs/s",
                "p50 ms", "p99 ms", "max ms", "virtual s");
    // Files/s only where the workload creates files while it is measured (fs_mark).
    const bool files_shown = scenario.fs_mark.has_value();
    if (files_shown) std::printf(" %10s", "files/s");
    std::vector<std::string> counters;
    for (const auto& name : scenarios::perf_counter_names()) {
        if (!report.rows.empty() && report.rows.front().outcome.counters.count(name) != 0) counters.push_back(name);
    }
    for (const auto& name : counters) std::printf(" %s", name.c_str());
    std::printf("\n");
    std::string csv_text = swept ? report.parameter + "," : std::string();
    csv_text += "variant,mib_s,writes_s,fsyncs_s,fsync_p50_ms,fsync_p99_ms,fsync_max_ms,virtual_s";
    if (files_shown) csv_text += ",files_s";
    for (const auto& name : counters) csv_text += "," + name;
    csv_text += "\n";
    std::uint64_t operations = 0;
    for (const auto& row : report.rows) {
        const double virtual_s = static_cast<double>(row.outcome.elapsed_ns) / 1e9;
        operations += row.outcome.writes + row.outcome.fsyncs + row.outcome.creates;
        if (swept) {
            std::printf("%8llu ", static_cast<unsigned long long>(*row.point));
            csv_text += std::to_string(*row.point) + ",";
        }
        std::printf("%-14s %10.2f %10.0f %10.0f %9.3f %9.3f %9.3f %10.3f", row.variant.c_str(), row.throughput_mib_s,
                    row.writes_per_s, row.fsyncs_per_s, row.fsync_p50_ms, row.fsync_p99_ms, row.fsync_max_ms, virtual_s);
        char line[256];
        std::snprintf(line, sizeof line, "%s,%.4f,%.2f,%.2f,%.4f,%.4f,%.4f,%.6f", row.variant.c_str(),
                      row.throughput_mib_s, row.writes_per_s, row.fsyncs_per_s, row.fsync_p50_ms, row.fsync_p99_ms,
                      row.fsync_max_ms, virtual_s);
        csv_text += line;
        if (files_shown) {
            std::printf(" %10.0f", row.files_per_s);
            std::snprintf(line, sizeof line, ",%.2f", row.files_per_s);
            csv_text += line;
        }
        for (const auto& name : counters) {
            const auto value = row.outcome.counters.at(name);
            std::printf(" %*llu", static_cast<int>(name.size()), static_cast<unsigned long long>(value));
            csv_text += ',';
            csv_text += std::to_string(value);
        }
        std::printf("\n");
        csv_text += "\n";
    }
    bool met = true;
    for (const auto& result : report.ratios) {
        met = met && result.met;
        const std::string where =
            result.point ? " at " + report.parameter + "=" + std::to_string(*result.point) : std::string();
        std::printf("ratio %s / %s%s (%s): %.2f, expected %.2f..%.2f: %s\n", result.ratio.numerator.c_str(),
                    result.ratio.denominator.c_str(), where.c_str(), scenario.perf->metric.c_str(), result.value,
                    result.ratio.min, result.ratio.max, result.met ? "ok" : "OUT OF RANGE");
    }
    std::printf("simulated %llu operations in %.2f s of wall time (%.0f operations/s)\n",
                static_cast<unsigned long long>(operations), elapsed, operations / std::max(elapsed, 1e-9));
    if (!csv.empty()) scenarios::write_text_file_atomically(csv, csv_text);
    if (!plot.empty()) {
        scenarios::plot_svg(scenario, report, plot);
        std::printf("plot: %s\n", plot.c_str());
    }
    return met ? ExitCode::pass : ExitCode::violation;
}

// ---- list ----
auto cmd_list() -> ExitCode {
    std::printf("models:\n");
    for (const auto& info : model::models()) {
        std::printf("  %s: %s\n    knobs:\n", info.name.c_str(), info.about.c_str());
        for (const auto& knob : info.knobs) {
            std::string values;
            for (const auto& value : knob.values) values += (values.empty() ? "" : " | ") + value;
            std::printf("      %s: %s (default %s)\n        %s\n", knob.name.c_str(), values.c_str(),
                        knob.default_value.c_str(), knob.about.c_str());
        }
        std::printf("    operations:\n");
        for (const auto& op : info.ops) {
            std::string fields;
            for (const auto& field : op.fields) {
                fields += field.required ? " " : " [";
                fields += field.name;
                if (!field.required) fields += ']';
            }
            std::printf("      %s%s: %s\n", op.name.c_str(), fields.c_str(), op.about.c_str());
        }
        std::string tasks;
        for (const auto& task : info.model_tasks) tasks += (tasks.empty() ? "" : ", ") + task;
        std::printf("    tasks the model spawns: %s\n    yield points (each is a crash point):\n", tasks.c_str());
        for (const sim::YieldPoint* point : info.yield_points) {
            std::printf("      %-44s %s\n", std::string(point->name).c_str(), std::string(point->about).c_str());
        }
    }
    std::printf("checkers:\n");
    for (const auto& name : checkers::checker_names()) {
        std::printf("  %-18s %s\n", name.c_str(), checkers::checker_about(name).c_str());
    }
    std::printf("device profiles:\n");
    for (const auto& profile : model::disk::profiles()) {
        const std::string bandwidth =
            profile.bandwidth == 0 ? std::string()
                                   : ", " + std::to_string(profile.bandwidth / (1024 * 1024)) + " MiB/s channel";
        std::printf("  %-8s write %llu ns, flush %llu ns%s, %s (%s)\n", profile.name.c_str(),
                    static_cast<unsigned long long>(profile.write_latency),
                    static_cast<unsigned long long>(profile.flush_latency), bandwidth.c_str(),
                    profile.rotational ? "rotational" : "non-rotational", profile.source.c_str());
    }
    std::printf("crash policies for unflushed writes: none, all, any-subset, prefix\n");
    std::printf("strategies: random, pct:D (D in 1..16)\n");
    return ExitCode::pass;
}

}  // namespace

auto run_bench(const std::string& scenario_path) -> int;

extern "C" void on_stop_signal(int /*signal*/) { scenarios::request_stop(); }

auto main(int argc, char** argv) -> int {
    // Ctrl-C and SIGTERM stop campaigns at the next schedule; the verb then
    // prints what it explored and writes its reports (by rename, whole).
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    CLI::App app{"crashsim: a deterministic crash-consistency simulator for file-system write, fsync and commit protocols"};
    app.require_subcommand(1);
    RunArgs run_args;
    auto* run = app.add_subcommand("run", "run a scenario's scripted schedule and tell its story");
    run->add_option("scenario", run_args.scenario, "scenario JSON file")->required();
    run->add_option("--variant", run_args.variant, "variant name (default: the first)");
    run->add_option("--seed", run_args.seed, "seed for the writes a crash keeps (any-subset, prefix)");
    run->add_option("--trace-text", run_args.trace_text, "write every engine step and note to FILE");
    run->add_option("--trace", run_args.trace, "write Chrome trace-event JSON (Perfetto) to FILE");
    FuzzArgs fuzz_args;
    auto* fuzz = app.add_subcommand("fuzz", "explore schedules, crash points and kept writes");
    fuzz->add_option("scenario", fuzz_args.scenario, "scenario JSON file")->required();
    fuzz->add_option("--variant", fuzz_args.variant, "variant name (default: the first)");
    fuzz->add_option("--strategy", fuzz_args.strategy, "random, pct:D, dfs (with --preemptions) or dfs:P");
    auto* preemptions = fuzz->add_option("--preemptions", fuzz_args.preemptions,
                                         "dfs: the most preemptions a schedule may take (default 2)");
    fuzz->add_flag("--no-reduction", fuzz_args.no_reduction, "dfs: turn sleep-set pruning off");
    fuzz->add_option("--io-reorders", fuzz_args.io_reorders,
                     "per schedule, device completions that may fire ahead of earlier timers (0-8; default: the scenario's explore, else 1)");
    fuzz->add_option("--daemon-wakeups", fuzz_args.daemon_wakeups,
                     "per schedule, daemon timers that may fire while tasks can run (0-8; default: the scenario's explore, else 1)");
    fuzz->add_option("--seed", fuzz_args.seed, "campaign seed");
    auto* schedules = fuzz->add_option("--schedules", fuzz_args.schedules,
                                       "schedules to run (dfs: the most it may take)");
    fuzz->add_option("--out", fuzz_args.out, "directory for the repro file");
    fuzz->add_flag("--quiet", fuzz_args.quiet, "do not print the failing story");
    fuzz->add_flag("--no-shrink", fuzz_args.no_shrink, "write the violation as found, unshrunk");
    fuzz->add_option("--trace", fuzz_args.trace, "write the failing run as Chrome trace-event JSON");
    fuzz->add_option("--jobs", fuzz_args.jobs, "threads (random and pct; default 1)");
    fuzz->add_option("--shard", fuzz_args.shard,
                     "K/N: run schedules i with i % N == K and write a result for crashsim merge");
    fuzz->add_option("--result", fuzz_args.result, "write the campaign's JSON result to FILE");
    fuzz->add_flag("--all", fuzz_args.all, "do not stop at the first violation");
    ReplayArgs replay_args;
    auto* replay = app.add_subcommand("replay", "replay a repro file byte for byte");
    replay->add_option("repro", replay_args.repro, "repro JSON written by fuzz")->required();
    replay->add_option("--trace-text", replay_args.trace_text, "write every engine step and note to FILE");
    replay->add_option("--trace", replay_args.trace, "write Chrome trace-event JSON (Perfetto) to FILE");
    ShrinkArgs shrink_args;
    auto* shrink = app.add_subcommand("shrink", "shrink a repro to the smallest failing story");
    shrink->add_option("repro", shrink_args.repro, "repro JSON")->required();
    shrink->add_option("--out", shrink_args.out, "where to write the shrunk repro (default: REPRO-shrunk.json)");
    CheckArgs check_args;
    auto* check = app.add_subcommand("check", "check every variant's expectation (the CI gate)");
    check->add_option("paths", check_args.paths, "scenario files or directories (default: scenarios)");
    check->add_option("--junit", check_args.junit, "write a JUnit XML report to FILE");
    check->add_option("--json", check_args.json, "write a JSON report with every figure to FILE");
    check->add_option("--jobs", check_args.jobs, "threads for random and pct campaigns (default 1)");
    std::string perf_scenario;
    std::string perf_csv;
    auto* perf = app.add_subcommand("perf", "throughput and fsync latency of every variant, in virtual time");
    perf->add_option("scenario", perf_scenario, "scenario JSON file with a workload")->required();
    perf->add_option("--csv", perf_csv, "write the table as CSV to FILE");
    std::string perf_plot;
    perf->add_option("--plot", perf_plot,
                     "draw the metric against the swept parameter into FILE.svg (needs gnuplot: "
                     "apt-get install gnuplot-nox)");
    std::string perf_vary;
    perf->add_option("--vary", perf_vary,
                     "NAME=V1,V2,...: run once per value of one parameter (machine, device, workload field "
                     "or knob) and print how each ratio moves");
    std::string perf_points;
    perf->add_option("--points", perf_points, "V1,V2,...: run only these points of the scenario's sweep");
    std::vector<std::string> merge_paths;
    std::string merge_out;
    auto* merge = app.add_subcommand("merge", "combine the results of a sharded campaign");
    merge->add_option("results", merge_paths, "result JSON files written by fuzz --shard")->required();
    merge->add_option("--out", merge_out, "write the merged result to FILE");
    app.add_subcommand("list", "models, knobs, operations, checkers and yield points");
    std::string bench_scenario = "scenarios/btrfs/fast-fsync-vs-page-release.json";
    auto* bench = app.add_subcommand("bench", "engine and exploration speed");
    bench->add_option("--scenario", bench_scenario, "scenario for schedules/s");
    try {
        app.parse(argc, argv);
        fuzz_args.preemptions_given = preemptions->count() > 0;
        fuzz_args.schedules_given = schedules->count() > 0;
    } catch (const CLI::CallForHelp& help) {
        return app.exit(help);
    } catch (const CLI::ParseError& error) {
        std::fprintf(stderr, "crashsim: %s (see crashsim --help)\n", error.what());
        return static_cast<int>(ExitCode::input);
    }
    try {
        ExitCode code = ExitCode::pass;
        if (*run) code = cmd_run(run_args);
        if (*fuzz) code = cmd_fuzz(fuzz_args);
        if (*replay) code = cmd_replay(replay_args);
        if (*shrink) code = cmd_shrink(shrink_args);
        if (*check) code = cmd_check(check_args);
        if (*merge) code = cmd_merge(merge_paths, merge_out);
        if (*perf) {
            if (!perf_vary.empty() && (!perf_csv.empty() || !perf_plot.empty())) {
                throw scenarios::InputError("--vary: expected no --csv or --plot with it, got both");
            }
            code = perf_vary.empty() ? cmd_perf(perf_scenario, perf_csv, perf_plot, perf_points)
                                     : cmd_perf_vary(perf_scenario, perf_vary, perf_points);
        }
        if (app.got_subcommand("list")) code = cmd_list();
        if (*bench) return run_bench(bench_scenario);
        std::fflush(stdout);
        return static_cast<int>(code);
    } catch (const scenarios::InputError& error) {
        std::fflush(stdout);
        std::fprintf(stderr, "crashsim: %s\n", error.what());
        return static_cast<int>(ExitCode::input);
    }
}
