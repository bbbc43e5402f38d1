#pragma once
// Fuzz campaigns and the CI gate's per-variant verdicts, on top of Simulation.
//
// A campaign of N schedules is the list 0..N-1; schedule i uses
// schedule_seed(seed, i), so the result depends only on the list, never on how
// it was run: in parallel (--jobs), in slices (--shard K/N, then merge) or at
// once. Stopping at the first violation means the lowest failing index, and
// counts are those of schedules 0..index.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/coverage.hpp"
#include "runner/runner.hpp"

namespace runner {

struct FuzzProgress {
    std::uint64_t schedules = 0;
    std::uint64_t schedules_planned = 0;
    std::uint64_t crash_states = 0;
    std::uint64_t violations = 0;
};

/// Walks of a dfs estimate unless asked otherwise.
inline constexpr std::uint32_t estimate_walks_default = 256;
/// The runs the estimate printed first by a dfs run may take (FuzzRequest::
/// estimate_runs) unless it picks the split depth or --walks is given: a
/// walk of the btrfs race takes about 25 runs of 30-40 us, so 64 is two or
/// three walks, about 3 ms, where 256 walks took 146 ms before a search
/// that finds the race in 2 ms (the first counterexample within
/// 10 ms). The line says its walks, its standard error and that it is a
/// rough figure: two walks of fix-1 at dfs:2 say 20,500 schedules (standard
/// error 88%) for a search of 111,185; 256 say 44,000 (30%). Each walk also
/// stops at this many runs (sim::ProbeWalk::stopped), as on a tree
/// thousands of decisions deep one walk would not end.
inline constexpr std::uint64_t estimate_first_line_runs = 64;
/// Probes of a stratified dfs estimate (fuzz --estimate without --walks):
/// one probe of heuristic sampling (sim::stratified_probe) read within 10%
/// of every search the search table measures (the btrfs race's fix-1 at dfs:1-3, the
/// xfs race at dfs:1-2, log-commit-batching at dfs:2; docs/speed.md); two
/// give a standard error.
inline constexpr std::uint32_t estimate_probes_default = 2;

/// --max-memory's default: a bound well below a CI runner's memory.
inline constexpr std::uint64_t visited_memory_default_mib = 2048;

struct FuzzRequest {
    sim::StrategySpec strategy;
    std::uint64_t seed = 0;
    /// The campaign's schedules in all, for any `jobs` (random, pct: indices
    /// 0..schedules-1; dfs: the most it may take, the unsplit search's first
    /// that many; a dfs shard takes its share, DfsSearch in campaign.cpp).
    std::uint64_t schedules = loader::fuzz_schedules_default;
    bool stop_at_first = true;
    bool sleep_sets = true;  // dfs: partial-order reduction on
    /// dfs: source-set dpor (--dpor; sim/dfs.hpp); off, the default: every
    /// interleaving within the bound, pruned by sleep sets. Opt-in until its
    /// comparison with the unreduced search covers every bundled scenario.
    bool dpor = false;
    /// dfs: remember visited states (--states, sim/visited.cpp): none, or
    /// VisitedKey::locals (the tasks' declared live locals) or reads (their
    /// histories of reads). A split search remembers them within a unit.
    sim::VisitedKey states = sim::VisitedKey::none;
    /// dfs with states: follow every revisit instead of cutting it and
    /// compare it with the first visit's run (--check-fingerprints).
    bool check_fingerprints = false;
    /// dfs: compare every task step's footprint with the resources it
    /// changed (--check-footprints).
    bool check_footprints = false;
    /// With check_footprints: a resource the check takes out of every
    /// step's footprint (a mutation its tests must see caught).
    std::string footprint_left_out;
    /// A mutation of the key that check mode must catch: a live local's
    /// name, or a resource's (--fingerprint-omit).
    std::string fingerprint_omit;
    /// dfs with states: the visited-state table's bound per job, in MiB
    /// (--max-memory; DfsTree::limit_visited); 0: none.
    std::uint64_t max_memory_mib = visited_memory_default_mib;
    std::uint32_t jobs = 1;  // threads (dfs: workers sharing the units, sim/dfs.hpp)
    /// This slice of the campaign: random and pct run the indices i with
    /// i % shard_count == shard_index, dfs the units u with u % count == index.
    std::uint32_t shard_index = 0;
    std::uint32_t shard_count = 1;
    /// dfs with jobs or shards: the depth at which the tree splits into units
    /// (DfsTree::split); 0: chosen from an estimate (split_depth_for).
    std::size_t split_depth = 0;
    /// Random walks of a dfs estimate (estimate_search); seeded by `seed`.
    std::uint32_t estimate_walks = estimate_walks_default;
    /// dfs: the runs the estimate's walks may take, summed (0: no cap); the
    /// walks stop at the first walk that reaches it, after two at least (a
    /// standard error needs two), and each walk stops there too. Counted in
    /// runs, never in time, so the same request walks the same way
    /// (estimate_first_line_runs).
    std::uint64_t estimate_runs = 0;
    /// dfs: heuristic sampling (sim::stratified_probe) in place of Knuth's
    /// walks, `estimate_walks` probes (fuzz --estimate without --walks).
    bool estimate_stratified = false;
    /// --verify-determinism: every schedule whose index is a multiple of this
    /// runs twice more with a trace; 0: none (verify_schedule).
    std::uint64_t verify_every = 0;
    std::function<void(const FuzzProgress&)> progress;  // called now and then, from the caller's thread
};

/// A schedule that did not run the same way twice: a defect of crashsim
/// itself (or of a model), never of the file system it models.
struct Nondeterminism {
    std::uint64_t index;
    std::uint64_t schedule_seed;  // random, pct; dfs: 0
    std::string what;             // which figures differed
};

/// One failing schedule of a campaign.
struct FoundViolation {
    std::uint64_t index;  // dfs shard (unit set): the index within the unit
    std::uint64_t schedule_seed;
    checkers::Violation violation;
    /// A dfs shard's: the unit (sim/dfs.hpp), whose schedules before it the
    /// shard does not know, so `index` counts from the unit's first.
    std::optional<std::uint64_t> unit = std::nullopt;
};

struct FuzzReport {
    std::uint64_t schedules = 0;  // run
    std::uint64_t crash_states = 0;
    /// Of crash_states: their verdict taken from the verdict memo (judged
    /// before by a run of the same Simulation: RunOutcome::crash_states_reused).
    /// Depends on the jobs (each has its own memo), unlike every other count.
    std::uint64_t crash_states_reused = 0;
    /// dfs, one job and one shard: the distinct crash states without a
    /// violation judged (Simulation::crash_states_distinct); none otherwise.
    /// A reduction that loses a class shows here first: the same verdict can
    /// hide crash states it never reached (bench/reduction-soundness.sh,
    /// bench/dpor-soundness.sh).
    std::optional<std::uint64_t> crash_states_distinct;
    /// Mounts judged after a power cut inside a recovery (explore.recovery_crashes).
    std::uint64_t recovery_crash_states = 0;
    FaultCounts faults;  // device faults in the crash states judged
    std::uint64_t steps = 0;
    bool found = false;
    std::uint64_t index = 0;          // of the (first) failing schedule
    /// A dfs shard's: the unit that schedule is in, `index` counting within it
    /// (FoundViolation::unit).
    std::optional<std::uint64_t> unit = std::nullopt;
    std::uint64_t schedule_seed = 0;  // its seed
    RunOutcome failing;               // traced re-run of the first failing schedule
    std::vector<FoundViolation> violations;  // every failing schedule run, by index
    bool complete = false;            // dfs: every schedule within the bound was run
    bool interrupted = false;         // stopped by request_stop()
    sim::DfsStats dfs;                // dfs: pruning figures
    /// dfs --check-fingerprints: the first merges whose runs parted.
    std::vector<sim::FingerprintMismatch> mismatches;
    /// dfs --check-footprints: the steps that changed a resource their
    /// footprint does not name, each once.
    std::vector<sim::FootprintOmission> omissions;
    loader::ExploreBounds bounds;     // the simulation's, for the output
    std::uint64_t schedules_reordering = 0;  // schedules that took an I/O reordering
    std::uint64_t schedules_waking = 0;      // schedules that took a daemon wake-up
    std::uint64_t schedules_cut = 0;  // not explored past the step bound (bounds.steps)
    /// Summed over the schedules run (RunOutcome::judged, RunOutcome::hits).
    std::vector<std::uint64_t> judged;
    std::vector<std::uint64_t> hits;
    std::vector<std::string> checker_names;  // names `judged`
    std::uint64_t verified = 0;  // schedules run again twice (FuzzRequest::verify_every)
    std::vector<Nondeterminism> nondeterministic;  // by index
    /// dfs split (--jobs, --shard): the depth, the units the tree has (0 when
    /// the walk above the depth did not finish) and those explored here.
    std::size_t split_depth = 0;
    std::uint64_t units = 0;
    std::uint64_t units_explored = 0;
    /// dfs shard: each unit folded and its schedules, by number, so that
    /// merge can count a violation's index from the search's first schedule.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> unit_schedules;
};

/// A search's size before it runs (fuzz --estimate). dfs:
/// the mean of `walks` Knuth walks (sim::knuth_probe) or stratified probes
/// (sim::stratified_probe, FuzzRequest::estimate_stratified), seeded by the
/// request's seed; crash states counted, not evaluated, so a run a violation
/// would end is walked on: a bound on a search that stops at its first).
/// random, pct: the schedules are the request's, the rest from the first
/// `walks` of them. Times only when estimated with a clock.
struct SearchEstimate {
    bool dfs = false;
    bool stratified = false;  // dfs: `walks` are stratified probes, not Knuth walks
    std::uint64_t walks = 0;
    std::uint64_t walks_asked = 0;  // dfs: fewer walks were taken when the run cap came first
    /// dfs: walks that stopped before a leaf (sim::ProbeWalk::stopped), the
    /// shallowest at `stopped_depth` decisions: the figures then estimate
    /// less than the search, never more.
    std::uint64_t walks_stopped = 0;
    std::size_t stopped_depth = 0;
    std::uint64_t seed = 0;
    double schedules = 0;
    double schedules_error = 0;  // standard error of the mean (dfs)
    double crash_states = 0;
    double steps = 0;
    std::vector<double> units;  // dfs: units[d] at split depth d (DfsTree::split)
    std::uint64_t runs = 0;     // the estimate's own runs
    std::uint64_t run_steps = 0;  // and their steps
    bool timed = false;
    double seconds_per_run = 0;         // of a run, crash states aside
    double seconds_per_crash_state = 0;  // mounting and judging one
    double seconds = 0;                  // the search at those rates, on one job
    double estimating_seconds = 0;       // what the estimate took
};

auto estimate_search(Simulation& simulation, const FuzzRequest& request,
                     const std::function<double()>& clock = {}) -> SearchEstimate;
/// The shallowest depth whose estimated units reach `wanted` (else the one
/// with most units), at least 1.
auto split_depth_for(const SearchEstimate& estimate, double wanted) -> std::size_t;
/// The units a split search asks for: 64 per shard, or per job unsharded.
auto split_units_wanted(const FuzzRequest& request) -> double;
/// The units `check` asks for when a budget remembers visited states, for
/// every --jobs: each unit has a table of its own, so fewer units merge more.
inline constexpr double stateful_split_units = 16;

/// Runs the campaign (or, for dfs, the bounded exhaustive search).
auto fuzz(Simulation& simulation, const FuzzRequest& request) -> FuzzReport;
auto explore_exhaustively(Simulation& simulation, const FuzzRequest& request) -> FuzzReport;

/// Asks every running campaign to stop at the next schedule (async-signal-safe).
void request_stop();
auto stop_requested() -> bool;
/// Withdraws a stop request (tests that interrupt and then go on).
void clear_stop_request();

/// One strategy's part of a check.
struct CheckAttempt {
    std::string strategy;
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    bool found = false;
    std::uint64_t index = 0;
    std::string checker;  // of the violation found
    bool complete = false;  // dfs
    std::uint64_t pruned = 0;  // dfs: by sleep sets
};

/// One row of `crashsim check`.
struct CheckRow {
    std::string scenario;
    std::string scenario_path;
    std::string variant;
    std::string expectation;  // "violates fsync_durability", "holds"
    bool met = false;
    std::string detail;  // why, in one line
    bool error = false;  // not checked: the file or the run failed on its input (detail says how)
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    double seconds = 0;
    std::vector<CheckAttempt> attempts;
    std::string story;    // of the violation that broke a "holds", if any
    std::string command;  // reproduces it
    bool interrupted = false;
    /// Not run: the check was interrupted before this variant.
    bool skipped = false;
    std::uint64_t schedules_cut = 0;  // runs not explored past the step bound
    /// Over every run of the row (scripted and each strategy): crash states
    /// each checker judged with something at stake, and hits of each of the
    /// model's yield points (runner/coverage.hpp).
    Counts judged;
    Counts reached;
    std::string model;  // whose yield points `reached` counts
    /// The bounds the row's strategies explored with (none: scripted only).
    std::optional<loader::ExploreBounds> bounds;
    std::uint64_t verified = 0;  // schedules run again twice (--verify-determinism)
    std::uint64_t nondeterministic = 0;  // of them, those that did not run the same
    std::optional<FaultCounts> faults;  // a scenario with a fault budget: over every run
};

/// The expectation column of a check row: "holds" or "violates CHECKER".
auto expectation_text(const loader::Expectation& expect) -> std::string;

/// Checks one variant against its expectation. `clock` returns seconds (the
/// library reads no wall clock itself).
auto check_variant(const loader::Scenario& scenario, const loader::Variant& variant,
                   const std::function<double()>& clock, std::uint32_t jobs = 1,
                   const std::function<void(const FuzzProgress&)>& progress = {},
                   std::uint64_t verify_every = 0) -> CheckRow;

}  // namespace runner
