#include "report/console.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "checkers/checker.hpp"
#include "loader/scenario.hpp"
#include "model/disk/block_device.hpp"
#include "model/info.hpp"
#include "sim/yield_point.hpp"

namespace report {

void appendf(std::string& out, const char* format, ...) {
    va_list args;
    va_start(args, format);
    va_list again;
    va_copy(again, args);
    const int size = std::vsnprintf(nullptr, 0, format, args);
    va_end(args);
    if (size > 0) {
        const std::size_t at = out.size();
        out.resize(at + static_cast<std::size_t>(size) + 1);
        std::vsnprintf(out.data() + at, static_cast<std::size_t>(size) + 1, format, again);
        out.resize(at + static_cast<std::size_t>(size));
    }
    va_end(again);
}

namespace {
using ull = unsigned long long;
}  // namespace

auto violations_text(const runner::RunOutcome& outcome) -> std::string {
    std::string out;
    for (const auto& violation : outcome.violations) {
        appendf(out, "VIOLATION %s: %s", violation.checker.c_str(), violation.message.c_str());
        if (outcome.crash) {
            appendf(out, "; crash after step %llu (%s)", static_cast<ull>(outcome.crash->step),
                    outcome.crash->after.c_str());
        }
        out += '\n';
    }
    return out;
}

auto verdict_text(const runner::RunOutcome& outcome) -> std::string {
    std::string out = violations_text(outcome);
    if (!outcome.violated()) {
        appendf(out, "no violation (%llu crash state(s) checked)\n", static_cast<ull>(outcome.crash_states));
    }
    if (outcome.cut_at_step != 0) {
        appendf(out,
                "not explored past step %llu: the run reached the step bound (explore.steps); no claim about "
                "the rest of it\n",
                static_cast<ull>(outcome.cut_at_step));
    }
    return out;
}

auto progress_text(const runner::FuzzProgress& progress, double elapsed_s) -> std::string {
    const double elapsed = std::max(elapsed_s, 1e-9);
    const double rate = static_cast<double>(progress.schedules) / elapsed;
    const double remaining = rate > 0 && progress.schedules_planned > progress.schedules
                                 ? static_cast<double>(progress.schedules_planned - progress.schedules) / rate
                                 : 0;
    std::string out;
    appendf(out,
            "  %llu schedules, %.0f/s, %llu crash states, %llu violations, %.1f s elapsed, ~%.0f s left   ",
            static_cast<ull>(progress.schedules), rate, static_cast<ull>(progress.crash_states),
            static_cast<ull>(progress.violations), elapsed, remaining);
    return out;
}

auto fuzz_header(const std::string& scenario, const std::string& variant, const runner::FuzzRequest& request)
    -> std::string {
    std::string out;
    appendf(out, "crashsim fuzz %s: variant %s, strategy %s, seed %llu", scenario.c_str(), variant.c_str(),
            request.strategy.text().c_str(), static_cast<ull>(request.seed));
    if (request.shard_count > 1) appendf(out, ", shard %u/%u", request.shard_index, request.shard_count);
    if (request.jobs > 1) appendf(out, ", %u jobs", request.jobs);
    out += '\n';
    return out;
}

namespace {

/// A figure to three significant digits: 37600, 1.24e+07 past 10^7.
auto about(double figure) -> std::string {
    std::string out;
    if (figure >= 1e7) {
        appendf(out, "%.3g", figure);
    } else {
        const double digits = figure < 1000 ? 1 : std::pow(10.0, std::floor(std::log10(figure)) - 2);
        appendf(out, "%.0f", std::round(figure / digits) * digits);
    }
    return out;
}

auto split_text(const runner::SearchEstimate& estimate, const runner::FuzzRequest& request) -> std::string {
    if (request.jobs == 1 && request.shard_count == 1) return "";
    const std::size_t depth = request.split_depth != 0
                                  ? request.split_depth
                                  : runner::split_depth_for(estimate, runner::split_units_wanted(request));
    const double units =
        estimate.units.empty() ? 1 : estimate.units[std::min(depth, estimate.units.size() - 1)];
    std::string out;
    appendf(out, "; split at depth %zu into about %s units", depth, about(units).c_str());
    return out;
}

}  // namespace

namespace {
/// The dfs summary's line on partial-order reduction.
auto reduction_text(const runner::FuzzRequest& request, std::size_t split_depth) -> std::string {
    if (!request.sleep_sets) return "reduction: none (--no-reduction): every interleaving within the bound\n";
    if (!request.dpor) {
        return "reduction: sleep sets only: every interleaving within the bound (--dpor: about one per "
               "class)\n";
    }
    std::string out =
        "reduction: dynamic partial-order reduction (--dpor; source sets with bounded POR's conservative "
        "backtrack "
        "points; no sleep sets under a bound): about one schedule per class of equivalent interleavings, not "
        "every "
        "interleaving";
    if (split_depth != 0) out += "; split: every alternative above the split depth, dpor below it";
    return out + "\n";
}

/// The dfs estimate's figures: from Knuth walks or stratified probes, and
/// how the search would split.
auto dfs_estimate_text(const runner::SearchEstimate& estimate, const runner::FuzzRequest& request)
    -> std::string {
    std::string out;
    const char* what = estimate.stratified
                           ? (estimate.walks == 1 ? "stratified probe" : "stratified probes")
                           : "Knuth walks";
    if (estimate.walks_stopped == 0) {
        appendf(
            out,
            "estimate (%llu %s, seed %llu): about %s schedules (standard error %.0f%%), %s crash states, "
            "%s steps",
            static_cast<ull>(estimate.walks), what, static_cast<ull>(estimate.seed),
            about(estimate.schedules).c_str(),
            estimate.schedules > 0 ? 100 * estimate.schedules_error / estimate.schedules : 0.0,
            about(estimate.crash_states).c_str(), about(estimate.steps).c_str());
    } else {
        // A walk cut short counts its paths as schedules where it stopped:
        // less than the search, and no spread worth printing.
        appendf(
            out,
            "estimate (%llu %s, seed %llu): more than about %s schedules, %s crash states, %s steps "
            "(%llu of the walks stopped before a schedule's end, the shallowest %zu decisions deep: at "
            "the run cap, past a product of branching factors of 1e30 or at a stop request; a lower "
            "figure)",
            static_cast<ull>(estimate.walks), what, static_cast<ull>(estimate.seed),
            about(estimate.schedules).c_str(), about(estimate.crash_states).c_str(),
            about(estimate.steps).c_str(), static_cast<ull>(estimate.walks_stopped),
            estimate.stopped_depth);
    }
    if (estimate.walks < estimate.walks_asked) {
        appendf(
            out,
            " (walks stopped at %llu runs, a rough figure: --walks %llu or --estimate for a closer one)",
            static_cast<ull>(estimate.runs), static_cast<ull>(estimate.walks_asked));
    }
    if (estimate.stratified) appendf(out, " (%llu runs)", static_cast<ull>(estimate.runs));
    if (request.dpor) out += " for the search without dpor (dpor may take fewer, or under a bound more)";
    out += split_text(estimate, request);
    return out;
}
}  // namespace

auto estimate_text(const runner::SearchEstimate& estimate, const runner::FuzzRequest& request)
    -> std::string {
    std::string out;
    if (estimate.dfs) {
        out += dfs_estimate_text(estimate, request);
    } else {
        appendf(
            out,
            "estimate (from the first %llu schedules, seed %llu): %s schedules (--schedules), about %s crash "
            "states, %s steps",
            static_cast<ull>(estimate.walks), static_cast<ull>(estimate.seed),
            about(estimate.schedules).c_str(), about(estimate.crash_states).c_str(),
            about(estimate.steps).c_str());
    }
    if (estimate.timed) {
        const double jobs = request.jobs;
        appendf(out, "; %s %.3g s at the measured rate",
                estimate.walks_stopped == 0 ? "about" : "more than about", estimate.seconds / jobs);
        if (request.jobs > 1) appendf(out, " on %u jobs with a core each", request.jobs);
        if (estimate.dfs) {
            appendf(out, " (%.3g us a run, %.3g us a crash state)", estimate.seconds_per_run * 1e6,
                    estimate.seconds_per_crash_state * 1e6);
        }
        appendf(out, "; estimating took %.3g s", estimate.estimating_seconds);
    }
    out += "\n";
    return out;
}

namespace {

/// "every schedule", "1 schedule in 64" (dfs: of those it did not abandon;
/// a split dfs counts within each unit, so every unit's first is sampled).
auto every_text(std::uint64_t every, bool dfs, bool split = false) -> std::string {
    std::string which = every == 1 ? "every schedule" : "1 schedule in " + std::to_string(every);
    if (split && every != 1) which += " of each unit, its first included";
    return dfs ? which + ", runs the search abandoned left out" : which;
}

/// --verify-determinism: what was run again and whether it ran the same.
auto determinism_text(const runner::FuzzReport& report, const runner::FuzzRequest& request) -> std::string {
    if (request.verify_every == 0) return "";
    const bool dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    std::string out;
    for (const auto& failure : report.nondeterministic) {
        appendf(out,
                "NONDETERMINISM (a defect of crashsim or its model, not of the file system): schedule %llu",
                static_cast<ull>(failure.index));
        if (!dfs) appendf(out, " (schedule seed %llu)", static_cast<ull>(failure.schedule_seed));
        appendf(out, ": %s\n", failure.what.c_str());
    }
    appendf(
        out, "determinism: %llu schedule(s) (%s) run twice more with a trace: %s\n",
        static_cast<ull>(report.verified),
        every_text(request.verify_every, dfs, report.split_depth != 0).c_str(),
        !report.nondeterministic.empty() ? "not all the same (above)"
        : dfs ? "byte-identical traces, the same steps and choices as the search's run"
              : "byte-identical traces, the same steps, choices, crash states and verdict as the campaign's "
                "run");
    return out;
}

}  // namespace

/// "device faults: N injected into crash states: S survived, D detected, ..."
auto fault_counts_text(const runner::FaultCounts& faults) -> std::string {
    std::string out;
    appendf(out,
            "device faults: %llu injected into crash states: %llu survived, %llu detected, %llu neither "
            "(a checker violated, or the mount failed for another reason)",
            static_cast<ull>(faults.injected), static_cast<ull>(faults.survived),
            static_cast<ull>(faults.detected), static_cast<ull>(faults.neither()));
    return out;
}

namespace {

/// The last line of a campaign that found nothing.
auto fuzz_conclusion(const runner::FuzzReport& report, const runner::FuzzRequest& request) -> std::string {
    const bool dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    std::string out;
    if (dfs && report.complete && request.shard_count > 1) {
        appendf(
            out,
            "shard %u/%u complete: its %llu units of %llu, %llu schedules, %llu crash states, no violation; "
            "crashsim merge of every shard's result gives the search's verdict\n",
            request.shard_index, request.shard_count, static_cast<ull>(report.units_explored),
            static_cast<ull>(report.units), static_cast<ull>(report.schedules),
            static_cast<ull>(report.crash_states));
    } else if (dfs && report.complete) {
        appendf(
            out,
            "complete: %llu schedules, %llu crash states, no violation within bounds (%u preemptions, %u I/O "
            "reorderings, %u daemon wake-ups, subsets of up to %zu unflushed writes)\n",
            static_cast<ull>(report.schedules), static_cast<ull>(report.crash_states),
            request.strategy.preemptions, report.bounds.io_reorders, report.bounds.daemon_wakeups,
            runner::subset_writes_max);
    } else if (dfs) {
        appendf(out, "incomplete: stopped after %llu schedules (--schedules%s), no violation so far\n",
                static_cast<ull>(report.schedules),
                request.shard_count > 1 ? ": this shard's share of the campaign's cap"
                                        : ", the search's in all");
    } else {
        appendf(out, "no violation in %llu schedules\n", static_cast<ull>(report.schedules));
    }
    return out;
}

}  // namespace

namespace {

/// What --check-footprints found.
auto footprint_check_text(const runner::FuzzRequest& request, const runner::FuzzReport& report)
    -> std::string {
    std::string out;
    if (!request.check_footprints) return out;
    const sim::DfsStats& dfs = report.dfs;
    appendf(out,
            "footprint check: %llu task steps compared, %zu kind(s) of step changed a resource their "
            "footprint does not name (writes only: a read changes no hash)\n",
            static_cast<ull>(dfs.footprint_steps), report.omissions.size());
    const std::size_t shown = std::min(report.omissions.size(), sim::omissions_described_max);
    for (std::size_t i = 0; i < shown; i++) {
        const sim::FootprintOmission& omission = report.omissions[i];
        appendf(out, "footprint check: %s, from %s to %s, changed %s\n", omission.task.c_str(),
                omission.from.c_str(), omission.to.c_str(), omission.resource.c_str());
    }
    if (shown < report.omissions.size()) {
        appendf(out, "footprint check: %zu more not shown\n", report.omissions.size() - shown);
    }
    return out;
}

/// What remembering visited states did (fuzz --states), and check mode's findings.
auto visited_text(const runner::FuzzRequest& request, const runner::FuzzReport& report) -> std::string {
    const sim::DfsStats& dfs = report.dfs;
    if (request.states == sim::VisitedKey::none) {
        return "visited states: not remembered "
               "(--states locals cuts a run at a state an earlier run explored)\n";
    }
    std::string out;
    const auto states = static_cast<double>(dfs.states);
    appendf(out,
            "visited states: %llu distinct remembered (key: %s), %llu runs cut at a visited state "
            "(%llu first reached with fewer I/O reorderings, daemon wake-ups or I/O errors spent, %llu with "
            "more steps); "
            "64-bit keys: a collision, which could only cut a run too many, has probability at most %.2g\n",
            static_cast<ull>(dfs.states),
            request.states == sim::VisitedKey::locals ? "the tasks' declared live locals"
                                                      : "the tasks' reads",
            static_cast<ull>(dfs.cut_visited), static_cast<ull>(dfs.cut_fewer_charges),
            static_cast<ull>(dfs.cut_more_steps),
            states * states / 3.6893488147419103e19);
    if (dfs.dropped != 0) {
        appendf(out,
                "visited states: %llu states not remembered: the table reached its bound of %llu MiB per job "
                "(--max-memory); their revisits ran again (more runs, nothing explored less)\n",
                static_cast<ull>(dfs.dropped), static_cast<ull>(request.max_memory_mib));
    }
    if (dfs.unhashed != 0) {
        appendf(out,
                "visited states: %llu decisions could not be hashed (a model without state hashes): "
                "explored there without remembering states\n",
                static_cast<ull>(dfs.unhashed));
    }
    if (request.check_fingerprints) {
        appendf(out,
                "fingerprint check: %llu revisits followed for up to %zu decisions each, %llu decisions "
                "compared, %llu where the runs parted\n",
                static_cast<ull>(dfs.merges_followed), sim::check_decisions,
                static_cast<ull>(dfs.decisions_compared), static_cast<ull>(dfs.mismatches));
        appendf(out,
                "fingerprint check: %llu key hits whose states differ in what the key hashes (64-bit "
                "collisions: neither cut nor followed)\n",
                static_cast<ull>(dfs.collisions));
        for (const sim::FingerprintMismatch& mismatch : report.mismatches) {
            appendf(out, "fingerprint check: run %llu, %llu decision(s) after the merge: %s\n",
                    static_cast<ull>(mismatch.schedule), static_cast<ull>(mismatch.decisions),
                    mismatch.what.c_str());
        }
    }
    return out;
}

}  // namespace

namespace {

/// A dfs search's reductions (sleep sets, the bound, dpor, visited states)
/// and how it split into units.
auto dfs_search_text(const runner::FuzzReport& report, const runner::FuzzRequest& request) -> std::string {
    std::string out;
    appendf(out,
            "pruned: %llu alternatives by sleep sets, %llu by the preemption bound; %llu runs cut as "
            "redundant\n",
            static_cast<ull>(report.dfs.pruned_sleep), static_cast<ull>(report.dfs.pruned_bound),
            static_cast<ull>(report.dfs.abandoned));
    out += reduction_text(request, report.split_depth);
    out += visited_text(request, report);
    out += footprint_check_text(request, report);
    if (report.split_depth != 0) {
        appendf(out,
                "split at depth %zu into %s units, %llu explored here (every job walks the tree above the "
                "depth; counts are the explored units'); --schedules %llu caps the search in all, its units "
                "taken in order, the same for any --jobs (%u here)\n",
                report.split_depth,
                report.units == 0 ? "an unknown number of" : std::to_string(report.units).c_str(),
                static_cast<ull>(report.units_explored), static_cast<ull>(request.schedules), request.jobs);
    }
    return out;
}

/// The exploration bounds and what the schedules took of them, and the
/// nested power cuts inside recovery.
auto bounds_text(const runner::FuzzReport& report) -> std::string {
    std::string out;
    appendf(out, "explored with %s: %llu schedule(s) took an I/O reordering, %llu a daemon wake-up\n",
            loader::describe_bounds(report.bounds).c_str(), static_cast<ull>(report.schedules_reordering),
            static_cast<ull>(report.schedules_waking));
    if (report.bounds.recovery_crashes == 0) {
        appendf(out,
                "crash during recovery: not explored (bound 0; --recovery-crashes N cuts the power inside "
                "each crash state's recovery)\n");
    } else {
        appendf(
            out,
            "crash during recovery: explored %u nested power cut(s) per crash state: %llu mount(s) after a "
            "cut inside recovery\n",
            report.bounds.recovery_crashes, static_cast<ull>(report.recovery_crash_states));
    }
    return out;
}

}  // namespace

auto fuzz_summary(const runner::FuzzReport& report, const runner::FuzzRequest& request, double elapsed)
    -> std::string {
    const bool dfs = request.strategy.kind == sim::StrategySpec::Kind::dfs;
    std::string out;
    appendf(out,
            "schedules: %llu, crash states checked: %llu, steps: %llu, %.3f s, %.0f schedules/s, %.0f crash "
            "states/s\n",
            static_cast<ull>(report.schedules), static_cast<ull>(report.crash_states),
            static_cast<ull>(report.steps), elapsed, static_cast<double>(report.schedules) / elapsed,
            static_cast<double>(report.crash_states) / elapsed);
    if (report.crash_states_reused > 0) {
        appendf(out,
                "verdict memo: %llu of the %llu crash states judged before in this search, their verdict "
                "reused\n",
                static_cast<ull>(report.crash_states_reused), static_cast<ull>(report.crash_states));
    }
    if (report.crash_states_distinct) {
        appendf(
            out,
            "distinct crash states without a violation: %llu (image, promises and freeze level by content)\n",
            static_cast<ull>(*report.crash_states_distinct));
    }
    if (dfs) out += dfs_search_text(report, request);
    out += bounds_text(report);
    if (report.faults.injected != 0) out += fault_counts_text(report.faults) + "\n";
    if (report.schedules_cut != 0) {
        appendf(out, "%llu schedule(s) not explored past step %llu (the step bound explore.steps)\n",
                static_cast<ull>(report.schedules_cut), static_cast<ull>(report.bounds.steps));
    }
    out += determinism_text(report, request);
    if (report.interrupted) {
        appendf(out, "interrupted: explored %llu schedules before the stop request\n",
                static_cast<ull>(report.schedules));
    }
    if (!request.stop_at_first && !report.violations.empty()) {
        appendf(out, "violations: %zu schedule(s) failed:", report.violations.size());
        for (const auto& found : report.violations) {
            appendf(out, " %llu (%s)", static_cast<ull>(found.index), found.violation.checker.c_str());
        }
        out += '\n';
    }
    if (report.found || report.interrupted) return out;
    return out + fuzz_conclusion(report, request);
}

auto coverage_summary(const runner::Counts& judged, const runner::Counts& reached) -> std::string {
    return "judged (crash states with something at stake): " + runner::judged_text(judged) +
           "\nyield points: " + runner::coverage_text(reached) + "\n";
}

namespace {

/// A merged dfs: its split, pruning, and whether the search completed.
auto merged_dfs_text(const runner::DfsResult& dfs, bool no_violation) -> std::string {
    std::string out;
    if (dfs.split_depth != 0) {
        appendf(out, "split at depth %llu: %llu units explored of %llu\n", static_cast<ull>(dfs.split_depth),
                static_cast<ull>(dfs.units_explored), static_cast<ull>(dfs.units));
    }
    appendf(
        out,
        "pruned: %llu alternatives by sleep sets, %llu by the preemption bound; %llu runs cut as redundant\n",
        static_cast<ull>(dfs.stats.pruned_sleep), static_cast<ull>(dfs.stats.pruned_bound),
        static_cast<ull>(dfs.stats.abandoned));
    if (dfs.complete && no_violation) {
        out += "complete: every shard explored its units, no violation within bounds\n";
    } else if (!dfs.complete) {
        out +=
            "incomplete: a shard did not explore all its units (--schedules, a stop request or a "
            "violation)\n";
    }
    return out;
}

}  // namespace

auto merge_summary(const runner::CampaignResult& merged, std::size_t shards) -> std::string {
    std::string out;
    appendf(out, "crashsim merge %s: variant %s, strategy %s, seed %llu, %zu shard(s)\n",
            merged.scenario.c_str(), merged.variant.c_str(), merged.strategy.c_str(),
            static_cast<ull>(merged.seed), shards);
    appendf(out, "schedules: %llu of %llu, crash states checked: %llu, steps: %llu%s\n",
            static_cast<ull>(merged.schedules_run), static_cast<ull>(merged.schedules),
            static_cast<ull>(merged.crash_states), static_cast<ull>(merged.steps),
            merged.interrupted ? " (a shard was interrupted)" : "");
    for (const auto& found : merged.violations) {
        appendf(out, "VIOLATION at schedule %llu (seed %llu) %s: %s\n", static_cast<ull>(found.index),
                static_cast<ull>(found.schedule_seed), found.violation.checker.c_str(),
                found.violation.message.c_str());
    }
    if (merged.violations.empty()) out += "no violation\n";
    if (merged.dfs) out += merged_dfs_text(*merged.dfs, merged.violations.empty());
    appendf(out, "explored with %s\n", loader::describe_bounds(merged.bounds).c_str());
    if (merged.faults) out += fault_counts_text(*merged.faults) + "\n";
    if (!merged.judged.empty() || !merged.reached.empty())
        out += coverage_summary(merged.judged, merged.reached);
    return out;
}

auto check_header(const CheckTable& table) -> std::string { return table.header() + "\n"; }

auto check_row_text(const CheckTable& table, const runner::CheckRow& row) -> std::string {
    std::string out = table.row(row) + "\n";
    if (!row.met) appendf(out, "    %s\n", row.detail.c_str());
    if (row.faults) appendf(out, "    %s\n", fault_counts_text(*row.faults).c_str());
    if (!row.judged.empty()) {
        appendf(out, "    judged: %s; yield points: %s\n", runner::judged_text(row.judged).c_str(),
                runner::coverage_text(row.reached).c_str());
    }
    return out;
}

auto model_coverage_text(const std::vector<runner::CheckRow>& rows) -> std::string {
    std::vector<std::pair<std::string, runner::Counts>> reached;
    for (const auto& row : rows) reached.emplace_back(row.model, row.reached);
    std::string out;
    for (const auto& [model, counts] : runner::coverage_by_model(reached)) {
        appendf(out, "coverage of %s: yield points %s\n", model.c_str(),
                runner::coverage_text(counts).c_str());
    }
    return out;
}

auto check_determinism_text(const std::vector<runner::CheckRow>& rows, std::uint64_t every) -> std::string {
    std::uint64_t verified = 0;
    for (const auto& row : rows) verified += row.verified;
    std::string out;
    appendf(
        out, "determinism: %llu schedule(s) (%s of each campaign, or of each unit of a dfs search that "
             "--jobs splits) run twice more with a trace%s\n",
        static_cast<ull>(verified), every_text(every, false).c_str(),
        std::any_of(rows.begin(), rows.end(),
                    [](const runner::CheckRow& row) { return row.nondeterministic != 0; })
            ? ": NOT all the same (rows above)"
            : ": each ran the same");
    return out;
}

namespace {

/// The counters the first row has, in perf_counter_names() order.
auto shown_counters(const loader::Scenario& scenario, const runner::PerfReport& report)
    -> std::vector<std::string> {
    std::vector<std::string> counters;
    for (const auto& name : perf_counter_names(scenario.model)) {
        if (!report.rows.empty() && report.rows.front().outcome.counters.count(name) != 0)
            counters.push_back(name);
    }
    return counters;
}

/// Which shown counters are maxima (CounterKind::maximum), said under the
/// table: they are the workload's own, where the others count its events.
auto maxima_note(const loader::Scenario& scenario, const std::vector<std::string>& counters) -> std::string {
    const model::ModelInfo* info = model::find_model(scenario.model);
    std::string maxima;
    for (const auto& name : counters) {
        const model::CounterInfo* counter = info == nullptr ? nullptr : model::find_counter(*info, name);
        if (counter == nullptr || counter->kind != model::CounterKind::maximum) continue;
        maxima += (maxima.empty() ? "" : ", ") + name;
    }
    if (maxima.empty()) return "";
    return "counters count the workload's events (the set-up's subtracted); " + maxima +
           ": the largest over the workload alone\n";
}

/// Columns of file rates: 0 none, 1 files/s (fs_mark), 2 and unlinks/s (create_unlink).
void perf_heading(PerfTable& table, const runner::PerfReport& report, int files_shown,
                  const std::vector<std::string>& counters) {
    // In a sweep each row starts with the swept parameter's value.
    const bool swept = !report.parameter.empty();
    if (swept) appendf(table.table, "%8s ", report.parameter.c_str());
    appendf(table.table, "%-14s %10s %10s %10s %9s %9s %9s %10s", "variant", "MiB/s", "writes/s", "fsyncs/s",
            "p50 ms", "p99 ms", "max ms", "virtual s");
    if (files_shown > 0) appendf(table.table, " %10s", "files/s");
    if (files_shown > 1) appendf(table.table, " %10s", "unlinks/s");
    for (const auto& name : counters) appendf(table.table, " %s", name.c_str());
    table.table += '\n';
    table.csv = swept ? report.parameter + "," : std::string();
    table.csv += "variant,mib_s,writes_s,fsyncs_s,fsync_p50_ms,fsync_p99_ms,fsync_max_ms,virtual_s";
    if (files_shown > 0) table.csv += ",files_s";
    if (files_shown > 1) table.csv += ",unlinks_s";
    for (const auto& name : counters) table.csv += "," + name;
    table.csv += "\n";
}

void perf_line(PerfTable& table, const runner::PerfRow& row, bool swept, int files_shown,
               const std::vector<std::string>& counters) {
    const double virtual_s = static_cast<double>(row.outcome.elapsed_ns) / 1e9;
    table.operations += row.outcome.writes + row.outcome.fsyncs + row.outcome.creates + row.outcome.unlinks;
    if (swept) {
        appendf(table.table, "%8llu ", static_cast<ull>(*row.point));
        table.csv += std::to_string(*row.point) + ",";
    }
    appendf(table.table, "%-14s %10.2f %10.0f %10.0f %9.3f %9.3f %9.3f %10.3f", row.variant.c_str(),
            row.throughput_mib_s, row.writes_per_s, row.fsyncs_per_s, row.fsync_p50_ms, row.fsync_p99_ms,
            row.fsync_max_ms, virtual_s);
    appendf(table.csv, "%s,%.4f,%.2f,%.2f,%.4f,%.4f,%.4f,%.6f", row.variant.c_str(), row.throughput_mib_s,
            row.writes_per_s, row.fsyncs_per_s, row.fsync_p50_ms, row.fsync_p99_ms, row.fsync_max_ms,
            virtual_s);
    if (files_shown > 0) {
        appendf(table.table, " %10.0f", row.files_per_s);
        appendf(table.csv, ",%.2f", row.files_per_s);
    }
    if (files_shown > 1) {
        appendf(table.table, " %10.0f", row.unlinks_per_s);
        appendf(table.csv, ",%.2f", row.unlinks_per_s);
    }
    for (const auto& name : counters) {
        const auto value = row.outcome.counters.at(name);
        appendf(table.table, " %*llu", static_cast<int>(name.size()), static_cast<ull>(value));
        table.csv += ',' + std::to_string(value);
    }
    table.table += '\n';
    table.csv += '\n';
}

}  // namespace

auto perf_table(const loader::Scenario& scenario, const runner::PerfReport& report) -> PerfTable {
    PerfTable table;
    // Files/s only where the workload creates files while it is measured (fs_mark).
    const int files_shown = scenario.create_unlink ? 2 : scenario.fs_mark ? 1 : 0;
    const std::vector<std::string> counters = shown_counters(scenario, report);
    perf_heading(table, report, files_shown, counters);
    for (const auto& row : report.rows)
        perf_line(table, row, !report.parameter.empty(), files_shown, counters);
    table.table += maxima_note(scenario, counters);
    for (const auto& result : report.ratios) {
        table.met = table.met && result.met;
        const std::string where =
            result.point ? " at " + report.parameter + "=" + std::to_string(*result.point) : std::string();
        appendf(table.ratios, "ratio %s / %s%s (%s): %.2f, expected %.2f..%.2f: %s\n",
                result.ratio.numerator.c_str(), result.ratio.denominator.c_str(), where.c_str(),
                runner::ratio_metric(scenario, result.ratio).c_str(), result.value, result.ratio.min,
                result.ratio.max, result.met ? "ok" : "OUT OF RANGE");
    }
    return table;
}

auto hypothetical_variants_text(const loader::Scenario& scenario) -> std::string {
    const model::ModelInfo* info = model::find_model(scenario.model);
    std::string out;
    for (const auto& variant : scenario.variants) {
        for (const auto& note : model::hypothetical_notes(*info, variant.config)) {
            appendf(out, "note: variant %s: %s\n", variant.name.c_str(), note.c_str());
        }
    }
    return out;
}

namespace {

void list_model(std::string& out, const model::ModelInfo& info) {
    appendf(out, "  %s: %s\n    knobs:\n", info.name.c_str(), info.about.c_str());
    for (const auto& knob : info.knobs) {
        std::string values;
        for (const auto& value : knob.values) values += (values.empty() ? "" : " | ") + value;
        appendf(out, "      %s: %s (default %s)\n        %s\n", knob.name.c_str(), values.c_str(),
                knob.default_value.c_str(), knob.about.c_str());
    }
    out += "    operations:\n";
    for (const auto& op : info.ops) {
        std::string fields;
        for (const auto& field : op.fields) {
            fields += field.required ? " " : " [";
            fields += field.name;
            if (!field.required) fields += ']';
        }
        appendf(out, "      %s%s: %s\n", op.name.c_str(), fields.c_str(), op.about.c_str());
    }
    out += "    counters:\n";
    for (const auto& counter : info.counters) {
        const bool maximum = counter.kind == model::CounterKind::maximum;
        appendf(out, "      %-24s %s%s\n",
                (counter.name.ends_with('.') ? counter.name + "<op>" : counter.name).c_str(),
                counter.about.c_str(), maximum ? " (a maximum: perf gives the workload's own)" : "");
    }
    if (!info.costs.empty()) out += "    costs (\"costs\": {NAME: ns}; perf --vary NAME=...):\n";
    for (const auto& cost : info.costs) {
        appendf(out, "      %s (default %llu)\n        %s\n", cost.name.c_str(),
                static_cast<unsigned long long>(cost.default_ns), cost.about.c_str());
    }
    std::string tasks;
    for (const auto& task : info.model_tasks) tasks += (tasks.empty() ? "" : ", ") + task;
    appendf(out, "    tasks the model spawns: %s\n    yield points (each is a crash point):\n",
            tasks.c_str());
    for (const sim::YieldPoint* point : info.yield_points) {
        appendf(out, "      %-44s %s\n", std::string(point->name).c_str(), std::string(point->about).c_str());
    }
}

}  // namespace

namespace {

/// The device profiles, and the fields of a machine profile.
void list_machines(std::string& out) {
    out += "device profiles:\n";
    for (const auto& profile : model::disk::profiles()) {
        const std::string bandwidth =
            profile.bandwidth == 0
                ? std::string()
                : ", " + std::to_string(profile.bandwidth / (1024 * 1024)) + " MiB/s channel";
        appendf(out, "  %-8s write %llu ns, flush %llu ns%s, %s (%s)\n", profile.name.c_str(),
                static_cast<ull>(profile.write_latency), static_cast<ull>(profile.flush_latency),
                bandwidth.c_str(), profile.rotational ? "rotational" : "non-rotational",
                profile.source.c_str());
    }
    out +=
        "machine profiles (\"machines\": {NAME: {...}}, a variant's \"machine\": NAME; perf --vary "
        "NAME.FIELD=...):\n"
        "  cpus                 CPUs shared by every task (numbered 0..cpus-1)\n"
        "  sockets              sockets (cpus = sockets * cores_per_socket)\n"
        "  cores_per_socket     CPU c is on socket c / cores_per_socket\n"
        "  line_hit_ns          a shared cache-line access on the CPU that owns the line\n"
        "  line_miss_ns         one that pulls the line from a CPU of the same socket (after FIFO waiting)\n"
        "  line_miss_remote_ns  one that pulls it from another socket (default line_miss_ns)\n"
        "  costs                per-operation CPU costs over the scenario's (the model's costs above)\n";
}

/// The device faults a scenario may enable, and what each model detects.
void list_faults(std::string& out) {
    out += "device faults (opt-in):\n";
    out += "  faults: {\"budget\": 1.." + std::to_string(loader::fault_budget_max) +
           ", \"torn_writes\": true, \"misdirected_writes\": true, \"latent_errors\": true, "
           "\"write_errors\": true}   "
           "at most budget faults per crash state, each a choice of the power cut, each on a different write "
           "the cut "
           "loses (write_errors: at most budget per run, each a choice of the schedule):\n"
           "    torn_writes         a write the cut loses is partly on the media: its first sectors (512 "
           "bytes) new, "
           "the rest old\n"
           "    misdirected_writes  a write the cut loses landed on another block of the same area: its own "
           "block "
           "keeps its old contents, the victim holds the new (only self-describing blocks, see below)\n"
           "    latent_errors       one block the first mount reads through a checked path (the superblock; "
           "btrfs: the "
           "fs tree and log tree roots it names) is unreadable: the read returns EIO and the mount fails "
           "with it "
           "(at most one per crash state: the mount stops at the first)\n"
           "    write_errors        while the workload runs, a data writeback write completes with EIO: it "
           "is not "
           "durable, the file system reports it to the application (see below); an fsync that returned EIO "
           "promises "
           "nothing, and no later fsync promises what was written before an error was reported (fsyncgate)\n";
    out +=
        "  device.write_cache: \"lies-about-flush\"   a write cache that acknowledges FLUSH without making "
        "earlier writes durable (FUA writes are honoured); a violation it causes is blamed on the device\n";
    out += "  what each model's checksums detect or its recovery survives:\n";
    for (const auto& info : model::models()) {
        appendf(out, "    %-6s %s\n", info.name.c_str(),
                info.faults.empty() ? "none: no faults may be injected" : info.faults.c_str());
        if (!info.faults.empty()) {
            appendf(out, "           misdirected writes: %s\n",
                    info.misdirected_writes.empty()
                        ? "none offered: the model verifies no block's own address in its header"
                        : info.misdirected_writes.c_str());
            appendf(out, "           write errors: %s\n",
                    info.write_errors.empty() ? "none offered: the model does not report a failed data write"
                                              : info.write_errors.c_str());
        }
    }
}

}  // namespace

auto list_text() -> std::string {
    std::string out = "models:\n";
    for (const auto& info : model::models()) list_model(out, info);
    out += "checkers:\n";
    for (const auto& name : checkers::checker_names()) {
        appendf(out, "  %-18s %s\n", name.c_str(), checkers::checker_about(name).c_str());
    }
    list_machines(out);
    out += "crash policies for unflushed writes: none, all, any-subset, prefix\n";
    list_faults(out);
    out += "strategies: random, pct:D (D in 1..16)\n";
    return out;
}

auto machine_profiles_text(const loader::Scenario& scenario) -> std::string {
    std::string out = "machine profiles of " + scenario.path + ":";
    if (scenario.machines.empty()) return out + " none (every variant runs on the scenario's machine)\n";
    out += '\n';
    for (const auto& [name, profile] : scenario.machines) {
        const loader::Machine& m = profile.machine;
        const std::uint32_t cores = m.cores_per_socket == 0 ? m.cpus : m.cores_per_socket;
        const std::uint32_t sockets = cores == 0 ? 1 : (m.cpus + cores - 1) / cores;
        appendf(
            out,
            "  %s: %u CPUs, %u socket(s) of %u cores; line hit %llu ns, miss %llu ns, remote miss %llu ns\n",
            name.c_str(), m.cpus, sockets, cores, static_cast<ull>(m.line_hit_ns),
            static_cast<ull>(m.line_miss_ns), static_cast<ull>(m.line_miss_remote_ns));
        if (!profile.about.empty()) appendf(out, "    %s\n", profile.about.c_str());
        for (const auto& [cost, ns] : profile.costs)
            appendf(out, "    %s %llu\n", cost.c_str(), static_cast<ull>(ns));
        std::string variants;
        for (const auto& variant : scenario.variants) {
            if (variant.machine == name) variants += (variants.empty() ? "" : ", ") + variant.name;
        }
        appendf(out, "    variants: %s\n", variants.empty() ? "none" : variants.c_str());
    }
    return out;
}

}  // namespace report
