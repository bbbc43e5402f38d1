// crashsim fuzz: explores schedules, crash points and kept writes.
#include "cli/common.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "report/console.hpp"
#include "report/report.hpp"
#include "runner/repro.hpp"
#include "runner/shrink.hpp"
#include "sim/yield_point.hpp"

namespace cli {
namespace {

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
    std::uint64_t schedules = loader::fuzz_schedules_default;
    std::string out = ".";
    bool quiet = false;
    bool no_shrink = false;
    std::uint64_t shrink_budget = runner::shrink_schedules_total_default;  // --shrink-budget N
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
    std::uint32_t walks = runner::estimate_walks_default;
    std::uint32_t probes = runner::estimate_probes_default;  // --probes N (dfs --estimate)
    bool probes_given = false;
    std::size_t split_depth = 0;     // --split-depth D (dfs with --jobs or --shard)
    std::string states = "none";     // --states locals|reads
    bool check_fingerprints = false;
    bool check_footprints = false;
    std::string footprint_omit;
    std::string fingerprint_omit;
    std::uint64_t max_memory_mib = runner::visited_memory_default_mib;  // --max-memory MiB
};

/// --states, --check-fingerprints and --fingerprint-omit into the request.
void visited_states(const FuzzArgs& args, bool dfs, runner::FuzzRequest& request) {
    if (args.states == "locals") {
        request.states = sim::VisitedKey::locals;
    } else if (args.states == "reads") {
        request.states = sim::VisitedKey::reads;
    } else if (args.states != "none") {
        throw loader::InputError("--states: expected none, locals or reads, got \"" + args.states + "\"");
    }
    const bool remembers = request.states != sim::VisitedKey::none;
    if (remembers && !dfs) {
        throw loader::InputError("--states: expected only with --strategy dfs, got it with \"" +
                                 args.strategy + "\"");
    }
    if (remembers && args.dpor) {
        throw loader::InputError("--states: expected no --dpor (dpor runs stateless), got both");
    }
    if (remembers && args.split_depth == 0 && (args.jobs > 1 || request.shard_count > 1)) {
        throw loader::InputError(
            "--states: expected --split-depth D with --jobs above 1 or --shard (a split search remembers "
            "states within a unit, so its counts depend on the depth), got none");
    }
    if ((args.check_fingerprints || !args.fingerprint_omit.empty()) && !remembers) {
        throw loader::InputError(
            "--check-fingerprints, --fingerprint-omit: expected --states locals or reads, got --states none");
    }
    if (args.check_fingerprints && (args.jobs > 1 || request.shard_count > 1)) {
        throw loader::InputError("--check-fingerprints: expected one job and no shard, got more");
    }
    request.check_fingerprints = args.check_fingerprints;
    if (args.check_footprints && !dfs) {
        throw loader::InputError("--check-footprints: expected only with --strategy dfs, got it with \"" +
                                 args.strategy + "\"");
    }
    if (args.check_footprints && (args.jobs > 1 || request.shard_count > 1)) {
        throw loader::InputError("--check-footprints: expected one job and no shard, got more");
    }
    if (!args.footprint_omit.empty() && !args.check_footprints) {
        throw loader::InputError("--footprint-omit: expected --check-footprints, got none");
    }
    request.check_footprints = args.check_footprints;
    request.footprint_left_out = args.footprint_omit;
    request.fingerprint_omit = args.fingerprint_omit;
    request.max_memory_mib = args.max_memory_mib;
}

/// "K/N" with 0 <= K < N.
void parse_shard(const std::string& text, runner::FuzzRequest& request) {
    const auto slash = text.find('/');
    const std::string expected = "K/N with 0 <= K < N";
    auto number = [&](const std::string& digits) -> std::uint32_t {
        if (digits.empty() || digits.size() > 6 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            throw loader::InputError("--shard: expected " + expected + ", got \"" + text + "\"");
        }
        return static_cast<std::uint32_t>(std::stoul(digits));
    };
    if (slash == std::string::npos)
        throw loader::InputError("--shard: expected " + expected + ", got \"" + text + "\"");
    request.shard_index = number(text.substr(0, slash));
    request.shard_count = number(text.substr(slash + 1));
    if (request.shard_count == 0 || request.shard_index >= request.shard_count) {
        throw loader::InputError("--shard: expected " + expected + ", got \"" + text + "\"");
    }
}

/// --estimate, --walks and --probes into the request.
void estimate_request(const FuzzArgs& args, bool dfs, runner::FuzzRequest& request) {
    request.estimate_walks = args.walks;
    // The line a dfs run prints first costs a few walks (the first
    // counterexample within 10 ms), the same line for any J and N; --estimate
    // and --walks take them all, and so does the split depth's own estimate.
    if (dfs && !args.estimate && !args.walks_given) {
        request.estimate_runs = runner::estimate_first_line_runs;
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
        throw loader::InputError(
            "--probes: expected only with --strategy dfs and --estimate, without --walks, got it " + got);
    }
}

/// The flags turned into a request; every flag error before any work.
auto fuzz_request(const FuzzArgs& args) -> runner::FuzzRequest {
    runner::FuzzRequest request;
    const std::string strategy_text =
        args.strategy == "dfs" ? "dfs:" + std::to_string(args.preemptions) : args.strategy;
    if (!sim::parse_strategy(strategy_text, request.strategy)) {
        throw loader::InputError(std::string("--strategy: expected dfs or ") + sim::strategy_spellings +
                                 ", got \"" + args.strategy + "\"");
    }
    const bool dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    if (args.preemptions_given && args.strategy != "dfs") {
        throw loader::InputError("--preemptions: expected only with --strategy dfs, got it with \"" +
                                 args.strategy + "\"");
    }
    if (!args.shard.empty()) parse_shard(args.shard, request);
    if (args.split_depth != 0 && !dfs) {
        throw loader::InputError("--split-depth: expected only with --strategy dfs, got it with \"" +
                                 args.strategy + "\"");
    }
    request.split_depth = args.split_depth;
    estimate_request(args, dfs, request);
    require_writable("--trace", args.trace);
    require_writable("--result", args.result);
    if (!std::filesystem::is_directory(args.out)) {
        throw loader::InputError("--out: expected an existing directory, got \"" + args.out + "\"");
    }
    request.sleep_sets = !args.no_reduction;
    if (args.dpor && args.no_reduction) {
        throw loader::InputError("--dpor: expected no --no-reduction (dpor is a reduction), got both");
    }
    request.dpor = args.dpor;
    visited_states(args, dfs, request);
    if (args.dpor && args.split_depth == 0 && (args.jobs > 1 || request.shard_count > 1)) {
        throw loader::InputError(
            "--dpor: expected --split-depth D with --jobs above 1 or --shard (a split dpor search's counts "
            "depend on its depth, the same for any J and N at one depth), got none");
    }
    request.seed = args.seed;
    request.schedules = dfs && !args.schedules_given ? exhaustive_schedules_max : args.schedules;
    request.jobs = args.jobs;
    request.verify_every = args.verify_every;
    request.stop_at_first = !args.all && request.shard_count == 1;
    return request;
}

/// The campaign's JSON result, when asked for or sharded; returns its path.
auto write_result(const FuzzArgs& args, const runner::FuzzRequest& request,
                  const loader::Scenario& scenario, const std::string& text, const std::string& variant,
                  const runner::FuzzReport& report, const runner::SearchEstimate* estimate)
    -> std::string {
    std::string path = args.result;
    if (path.empty() && request.shard_count > 1) {
        path =
            (std::filesystem::path(args.out) / runner::result_file_name(scenario.name, variant, request))
                .string();
    }
    if (!path.empty()) {
        runner::CampaignResult result =
            runner::campaign_result(report, request, scenario, sim::hash_name(text), variant);
        if (estimate != nullptr) result.estimate = *estimate;
        report::write_campaign_result(result, path);
    }
    return path;
}

/// The failing run (shrunk unless --no-shrink): its story, its repro file;
/// false when shrinking was interrupted (the repro says how far it got).
auto report_violation(const FuzzArgs& args, const runner::FuzzRequest& request,
                      const loader::Scenario& scenario, const std::string& text,
                      const std::string& variant, const runner::FuzzReport& report) -> bool {
    runner::Repro repro = runner::make_repro(report, request, args.scenario, text, variant);
    bool interrupted = false;
    bool budget_spent = false;
    if (!args.no_shrink) {
        runner::ShrinkOptions options;
        options.schedules_total = args.shrink_budget;
        const runner::ShrinkResult shrunk = runner::shrink(repro, options);
        interrupted = shrunk.interrupted;
        budget_spent = shrunk.budget_spent;
        for (const auto& line : shrunk.log) say("shrink: %s\n", line.c_str());
        repro = shrunk.repro;
        if (!args.quiet) print_story(shrunk.outcome);
        output() += report::violations_text(shrunk.outcome);
        write_chrome_trace(args.trace, shrunk.outcome, scenario.name + " " + variant + " (shrunk)");
    }
    const std::string path = (std::filesystem::path(args.out) /
                              runner::repro_file_name(scenario.name, variant, repro.strategy, args.seed,
                                                      report.index, report.unit))
                                 .string();
    runner::write_repro(repro, path);
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
auto estimate_first(runner::FuzzRequest& request, runner::Simulation& simulation)
    -> runner::SearchEstimate {
    const runner::SearchEstimate estimate = runner::estimate_search(simulation, request, seconds_now);
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs && request.split_depth == 0 &&
        (request.jobs > 1 || request.shard_count > 1)) {
        // The depth from all the walks (the same for every shard); the
        // printed line stays the one any J and N print.
        runner::FuzzRequest walks = request;
        walks.estimate_runs = 0;
        walks.estimate_stratified = false;
        if (request.estimate_stratified) walks.estimate_walks = runner::estimate_walks_default;
        const bool whole = request.estimate_runs == 0 && !request.estimate_stratified;
        const runner::SearchEstimate walked =
            whole ? estimate : runner::estimate_search(simulation, walks);
        request.split_depth = runner::split_depth_for(walked, runner::split_units_wanted(request));
    }
    return estimate;
}

/// A search that found no violation: what its check modes saw decides.
auto exit_without_violation(const runner::FuzzReport& report) -> ExitCode {
    if (!report.nondeterministic.empty()) return ExitCode::nondeterministic;
    // Check mode: the visited-state key merged two states that then parted, so
    // a run with --states would have cut a run it needed.
    if (report.dfs.mismatches != 0) return ExitCode::key_merges_unequal;
    // Footprint check mode: a step changed what its footprint does not name,
    // so the reductions could have taken it for one that commutes.
    if (!report.omissions.empty()) return ExitCode::footprint_undeclared;
    return report.interrupted ? ExitCode::interrupted : ExitCode::pass;
}

auto cmd_fuzz(const FuzzArgs& args) -> ExitCode {
    runner::FuzzRequest request = fuzz_request(args);
    std::string text;
    const loader::Scenario scenario = load(args.scenario, &text);
    const loader::Variant& variant = pick_variant(scenario, args.variant);
    runner::Simulation simulation(scenario, variant);
    loader::ExploreBounds bounds = scenario.explore;
    if (args.io_reorders) bounds.io_reorders = *args.io_reorders;
    if (args.daemon_wakeups) bounds.daemon_wakeups = *args.daemon_wakeups;
    if (args.recovery_crashes) bounds.recovery_crashes = *args.recovery_crashes;
    simulation.set_bounds(bounds);
    std::optional<runner::SearchEstimate> estimate;
    if (args.estimate || request.strategy.kind == sim::StrategySpec::Kind::dfs) {
        estimate = estimate_first(request, simulation);
        const std::string line = report::estimate_text(*estimate, request);
        if (args.estimate) {
            output() += report::fuzz_header(scenario.name, variant.name, request) + line;
            return ExitCode::pass;
        }
        // The first line, before the search spends the time.
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
    }
    ProgressLine progress(true);
    request.progress = progress.callback();
    const double started = seconds_now();
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    const double elapsed = std::max(seconds_now() - started, 1e-9);
    progress.clear();
    output() += report::fuzz_header(scenario.name, variant.name, request);
    const std::string result_path =
        write_result(args, request, scenario, text, variant.name, report, estimate ? &*estimate : nullptr);
    if (report.found && args.no_shrink) {
        if (!args.quiet) print_story(report.failing);
        output() += report::violations_text(report.failing);
        write_chrome_trace(args.trace, report.failing, scenario.name + " " + variant.name);
    }
    output() += report::fuzz_summary(report, request, elapsed);
    output() += report::coverage_summary(runner::judged_counts(report.checker_names, report.judged),
                                         runner::reached_counts(scenario.model, report.hits));
    if (request.strategy.kind == sim::StrategySpec::Kind::dfs && request.sleep_sets) {
        output() += runner::undeclared_text(scenario.model, report.hits);
    }
    if (!result_path.empty()) say("result written to %s\n", result_path.c_str());
    if (!report.found) return exit_without_violation(report);
    if (!report_violation(args, request, scenario, text, variant.name, report)) return ExitCode::interrupted;
    return ExitCode::violation;
}

/// The search's flags: strategy, bound, reductions, visited states and the
/// kernel's nondeterminism. Returns --preemptions, whose count the verb reads.
auto add_search_options(CLI::App* fuzz, FuzzArgs* args) -> CLI::Option* {
    const CLI::Validator bound = in_range(0, loader::explore_bound_max);
    fuzz->add_option("--strategy", args->strategy, "random, pct:D, dfs (with --preemptions) or dfs:P");
    CLI::Option* preemptions = fuzz->add_option("--preemptions", args->preemptions,
                                         "dfs: the most preemptions a schedule may take (default 2)")
                               ->check(in_range(0, sim::dfs_preemptions_max));
    fuzz->add_flag("--no-reduction", args->no_reduction,
                   "dfs: turn partial-order reduction off (dpor and sleep sets)");
    fuzz->add_flag(
        "--dpor", args->dpor,
        "dfs: dynamic partial-order reduction, about one schedule per class of equivalent interleavings "
        "(default: every interleaving within the bound, pruned by sleep sets)");
    fuzz->add_option("--states", args->states,
                     "dfs: remember visited states and cut revisits: locals (each task's declared live "
                     "locals), reads (each task's history of reads) or none (default)");
    fuzz->add_flag("--check-fingerprints", args->check_fingerprints,
                   "dfs with --states: follow every revisit beside the first visit's run instead of cutting "
                   "it, and name the task, yield point and part where they part");
    fuzz->add_flag("--check-footprints", args->check_footprints,
                   "dfs: hash every resource before and after each task step and name the steps that "
                   "changed one their footprint does not declare");
    fuzz->add_option("--footprint-omit", args->footprint_omit,
                     "dfs with --check-footprints: take a resource out of every step's footprint (a "
                     "mutation the check must catch)");
    fuzz->add_option("--fingerprint-omit", args->fingerprint_omit,
                     "dfs with --states: leave a live local or a resource out of the key (a mutation that "
                     "--check-fingerprints must catch)");
    fuzz->add_option("--max-memory", args->max_memory_mib,
                     "dfs with --states: the visited-state table's bound per job, in MiB (default 2048; 0: "
                     "none); once full, new states are not remembered and the summary says how many")
        ->check(in_range(0, std::uint64_t{1} << 40));
    fuzz->add_option("--io-reorders", args->io_reorders,
                     "per schedule, device completions that may fire ahead of earlier timers (0-8; default: "
                     "the scenario's explore, else 1)")
        ->check(bound);
    fuzz->add_option("--daemon-wakeups", args->daemon_wakeups,
                     "per schedule, daemon timers that may fire while tasks can run (0-8; default: the "
                     "scenario's explore, else 1)")
        ->check(bound);
    fuzz->add_option(
            "--recovery-crashes", args->recovery_crashes,
            "per crash state, power cuts nested inside recovery, each followed by a mount again (0-" +
                std::to_string(loader::recovery_crashes_max) + "; default: the scenario's explore, else " +
                std::to_string(loader::recovery_crashes_default) + ")")
        ->check(in_range(0, loader::recovery_crashes_max));
    return preemptions;
}

/// The campaign's flags: seed, schedules, output, shrinking, jobs and
/// shards. Returns --schedules, whose count the verb reads.
auto add_campaign_options(CLI::App* fuzz, FuzzArgs* args) -> CLI::Option* {
    const CLI::Validator any_u64 = in_range(0, ~std::uint64_t{0});
    fuzz->add_option("--seed", args->seed, "campaign seed")->check(any_u64);
    CLI::Option* schedules =
        fuzz->add_option("--schedules", args->schedules,
                         "schedules to run in all, the same for any --jobs (dfs: the most it may take; a "
                         "shard takes its share)")
                             ->check(in_range(1, schedules_max));
    fuzz->add_option("--out", args->out, "directory for the repro file");
    fuzz->add_flag("--quiet", args->quiet, "do not print the failing story");
    fuzz->add_flag("--no-shrink", args->no_shrink, "write the violation as found, unshrunk");
    fuzz->add_option("--shrink-budget", args->shrink_budget,
                       "schedules shrinking may run in all (default " +
                           std::to_string(runner::shrink_schedules_total_default) + ")")
        ->check(in_range(1, ~std::uint64_t{0}));
    fuzz->add_option("--trace", args->trace, "write the failing run as Chrome trace-event JSON");
    fuzz->add_option("--jobs", args->jobs,
                     "threads; the result is the same for any J, only the wall time changes (dfs: "
                     "sharing the units of a split tree; default 1)")
        ->check(in_range(1, jobs_max));
    fuzz->add_option(
        "--shard", args->shard,
        "K/N: run schedules i (dfs: units i) with i % N == K and write a result for crashsim merge");
    return schedules;
}

/// The estimate's flags and the split depth. Returns --walks and --probes,
/// whose counts the verb reads.
auto add_estimate_options(CLI::App* fuzz, FuzzArgs* args) -> std::pair<CLI::Option*, CLI::Option*> {
    fuzz->add_flag("--estimate", args->estimate,
                     "print an estimate of the schedules, crash states and time, run nothing");
    CLI::Option* walks =
        fuzz->add_option("--walks", args->walks,
                         "the estimate's random walks (dfs) or sample schedules (random, pct; default " +
                             std::to_string(runner::estimate_walks_default) +
                             "; the line a dfs run prints first "
                             "stops at " +
                             std::to_string(runner::estimate_first_line_runs) + " runs unless given)")
            ->check(in_range(1, walks_max));
    CLI::Option* probes = fuzz->add_option("--probes", args->probes,
                                  "dfs --estimate: stratified probes (heuristic sampling; default " +
                                      std::to_string(runner::estimate_probes_default) + ")")
                   ->check(in_range(1, probes_max));
    fuzz->add_option(
            "--split-depth", args->split_depth,
            "dfs with --jobs or --shard: split the tree into units at this many choices (default: from "
            "the estimate, 64 units per shard or job)")
        ->check(in_range(1, split_depth_max));
    return {walks, probes};
}

}  // namespace

void add_fuzz_command(CLI::App& app, Verbs& verbs) {
    auto args = std::make_shared<FuzzArgs>();
    CLI::App* fuzz = app.add_subcommand("fuzz", "explore schedules, crash points and kept writes");
    fuzz->add_option("scenario", args->scenario, "scenario JSON file")->required();
    fuzz->add_option("--variant", args->variant, "variant name (default: the first)");
    CLI::Option* preemptions = add_search_options(fuzz, args.get());
    CLI::Option* schedules = add_campaign_options(fuzz, args.get());
    const std::pair<CLI::Option*, CLI::Option*> estimate = add_estimate_options(fuzz, args.get());
    CLI::Option* walks = estimate.first;
    CLI::Option* probes = estimate.second;
    fuzz->add_option("--result", args->result, "write the campaign's JSON result to FILE");
    fuzz->add_flag("--all", args->all, "do not stop at the first violation");
    fuzz->add_option("--verify-determinism", args->verify_every,
                     "N: run every Nth schedule twice more with a trace and compare (exit 3 if they differ)")
        ->check(in_range(1, schedules_max));
    verbs.add(fuzz, [args, preemptions, schedules, walks, probes] {
        args->preemptions_given = preemptions->count() > 0;
        args->schedules_given = schedules->count() > 0;
        args->walks_given = walks->count() > 0;
        args->probes_given = probes->count() > 0;
        return cmd_fuzz(*args);
    });
}

}  // namespace cli
