#pragma once
// Runs a scenario variant: set-up once into a prototype world, then each
// schedule on a copy of it, with the scenario's tasks as fibers, crash states
// evaluated between steps (recovery plus every checker), and a trace.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "checkers/oracle.hpp"
#include "model/filesystem.hpp"
#include "loader/scenario.hpp"
#include "sim/dfs.hpp"
#include "sim/strategy.hpp"

namespace runner {

/// A second power cut, inside the recovery of the previous crash's image:
/// after the mount's first `requests` requests (the last
/// one a write), keeping the recovery's unflushed writes marked in `keep`.
struct RecoveryCut {
    std::uint64_t requests = 0;  // 1..: requests the mount had issued
    std::string after;           // the last one's description, for the story
    std::vector<bool> keep;      // per recovery write still in the cache, in issue order
    auto operator==(const RecoveryCut&) const -> bool = default;
};

/// Where and how the power was cut.
struct CrashRecord {
    std::uint64_t step = 0;      // engine step after which the crash happened
    std::string after;           // "fsyncer at btrfs.sync_log.super_durable"
    std::vector<bool> keep;      // per unflushed write, in submission order
    /// Cuts inside recovery, outermost first (empty: the first mount ran to its end).
    std::vector<RecoveryCut> recovery{};
    /// Device faults: writes keep loses that the cut left partly
    /// on the media, by write index (increasing).
    std::vector<model::disk::TornWrite> torn{};
    /// Writes keep loses that landed on another block instead (by write
    /// index, increasing; none of them torn).
    std::vector<model::disk::MisdirectedWrite> misdirected{};
    /// Blocks whose reads the first mount got EIO for (latent sector errors).
    std::vector<std::uint64_t> unreadable{};
};

/// Device faults injected into judged crash states, and how each
/// ended: survived (every checker held), detected (a checksum refused the
/// mount or the read: an error the user sees), or neither (silently wrong, or
/// the mount failed for another reason).
struct FaultCounts {
    std::uint64_t injected = 0;
    std::uint64_t survived = 0;
    std::uint64_t detected = 0;
    auto operator+=(const FaultCounts& other) -> FaultCounts& {
        injected += other.injected;
        survived += other.survived;
        detected += other.detected;
        return *this;
    }
    [[nodiscard]] auto neither() const -> std::uint64_t { return injected - survived - detected; }
};

struct RunOutcome {
    std::vector<checkers::Violation> violations;  // empty when the run held
    std::optional<CrashRecord> crash;             // the crash that showed them
    std::uint64_t steps = 0;
    std::uint64_t crash_states = 0;
    /// Crash states reached by cutting the power inside a recovery
    /// (explore.recovery_crashes), not counted in crash_states.
    std::uint64_t recovery_crash_states = 0;
    /// Of crash_states: judged earlier in the run, their verdict reused
    /// (RunState's verdict memo, runner/judge.cpp); counted and judged all the same.
    std::uint64_t crash_states_reused = 0;
    /// Mounts inside a crash state's recovery crashes whose image that crash
    /// state had judged already (a cut that kept none of recovery's writes).
    std::uint64_t mounts_reused = 0;
    /// Evaluation points (a step's crash states, every subset and fault set)
    /// whose device, promises, freeze level and bounds an earlier run's point
    /// had: their crash states' verdicts reused whole, no image built
    /// (RunState::evaluate_point). Their crash states are in crash_states_reused.
    std::uint64_t points_reused = 0;
    /// The verdict memo's entries (Verdict::id) a dfs run's crash states
    /// reused or added (a repeat of the last one once), for
    /// Simulation::count_reached; empty for other runs.
    std::vector<std::uint64_t> memo_reached;
    bool abandoned = false;  // cut by the search: the rest was reached elsewhere
    /// A search's or campaign's run (run_dfs, count_dfs, an interruptible
    /// run_strategy) stopped before its end, by a stop request (SIGINT,
    /// SIGTERM) or at run_dfs's crash_states_max: its counts are partial,
    /// and no campaign counts it as a schedule. One run can be long
    /// (btrfs/log-commit-jiffy-sleep: at dfs:2 11,949 steps and 233,934 crash
    /// states, 40 s; a random run about 0.7 s), so the request is heard
    /// between steps.
    bool interrupted = false;
    /// The step bound (explore.steps) when the run was cut there: not
    /// explored past that step, no claim about the rest (not a violation).
    std::uint64_t cut_at_step = 0;
    std::vector<std::uint32_t> choices;
    std::string story;
    std::string trace;  // every line, for --trace-text and hashing
    std::vector<sim::TraceLine> lines;  // the same, structured (Chrome trace export)
    std::uint64_t trace_hash = 0;
    /// The model's counters at the run's end; not filled by a dfs run
    /// without a trace (run_dfs, count_dfs), where nothing reads them.
    std::map<std::string, std::uint64_t> counters;
    std::uint32_t io_reorders = 0;     // I/O reorderings the schedule took
    std::uint32_t daemon_wakeups = 0;  // daemon wake-ups it took
    /// Per checker (Simulation::checker_names order): crash states it judged
    /// with something at stake (Checker::at_stake).
    std::vector<std::uint64_t> judged;
    /// Per yield point id (sim::yield_point_by_id): times a task reached it.
    std::vector<std::uint64_t> hits;
    FaultCounts faults;  // device faults in the crash states judged
    [[nodiscard]] auto violated() const -> bool { return !violations.empty(); }
};

/// A run in virtual time (crashsim perf): tasks in order, timers only when no
/// task can run, no crash states.
struct PerfOutcome {
    sim::Instant elapsed_ns = 0;
    std::uint64_t bytes_written = 0;
    std::uint64_t writes = 0;
    std::uint64_t fsyncs = 0;
    std::uint64_t creates = 0;  // files the tasks created (fs_mark's files/s)
    std::uint64_t unlinks = 0;  // files the tasks removed
    /// A phased workload (create_unlink): when every task had finished
    /// creating (0: no phases). Creates are rated over [0, it], unlinks over
    /// [it, elapsed].
    sim::Instant create_phase_ns = 0;
    std::vector<sim::Duration> fsync_latencies_ns;  // sorted
    std::map<std::string, std::uint64_t> counters;  // of the run alone (set-up subtracted)
    std::string problem;  // a deadlock or step bound, empty when the run ended
    bool interrupted = false;  // stopped by request_stop() (SIGINT, SIGTERM)
};

/// How crash states are chosen during one run.
struct CrashPlan {
    enum class Kind : std::uint8_t {
        every_state,  // after every step that changed the disk or the promises
        exhaustive,   // the same, with every subset of unflushed writes (bounded)
        scripted,     // at the schedule's crash step (or at the end)
        at_step,      // replay: at a recorded step with a recorded subset
        none,         // replay of a violation without a crash (liveness, deadlock)
        count,        // dfs estimates: the crash states `exhaustive` evaluates, counted, none mounted
    };
    Kind kind = Kind::every_state;
    CrashRecord recorded;  // at_step
};

class VerdictMemo;  // runner/verdict_memo.hpp

class Simulation {
public:
    /// Runs the set-up; throws InputError if the set-up cannot complete.
    Simulation(const loader::Scenario& scenario, const loader::Variant& variant);
    ~Simulation();
    Simulation(const Simulation&) = delete;
    auto operator=(const Simulation&) -> Simulation& = delete;

    /// The scenario's scripted schedule (or, without one, tasks in order);
    /// `seed` drives the choice of kept writes when the crash keeps any subset.
    auto run_scripted(bool trace, std::uint64_t seed = 0) -> RunOutcome;
    /// One schedule of a fuzz campaign.
    /// `interruptible`: a stop request ends the run between steps
    /// (RunOutcome::interrupted); a campaign's own runs, not its replays.
    auto run_strategy(const sim::StrategySpec& spec, std::uint64_t seed, bool trace,
                      bool interruptible = false) -> RunOutcome;
    /// The workload in virtual time, for performance figures; CPU and device
    /// latency jitter are forked from `seed`.
    auto run_perf(std::uint64_t seed = 0) -> PerfOutcome;
    /// The next schedule of a bounded exhaustive search; with
    /// `crash_states_max` (0: none) the run stops once it has evaluated that
    /// many (RunOutcome::interrupted), as the estimate's timing needs.
    auto run_dfs(sim::DfsTree& tree, bool trace, std::uint64_t crash_states_max = 0) -> RunOutcome;
    /// A run of a dfs estimate (sim::knuth_probe): crash states counted
    /// where run_dfs evaluates them (RunOutcome::crash_states), none judged.
    auto count_dfs(sim::DfsTree& tree) -> RunOutcome;
    /// A recorded run: choices plus crash; without a crash (a liveness or
    /// deadlock violation), the run to its end with no crash state.
    auto replay(const std::vector<std::uint32_t>& choices, const std::optional<CrashRecord>& crash,
                bool trace) -> RunOutcome;
    /// Decisions a schedule takes (PCT's k): the most of a few random
    /// schedules, measured on first use.
    auto decisions_estimate() -> std::uint64_t;

    /// The bounds random, pct, dfs and replay runs explore with (the
    /// scenario's `explore` unless set); scripted runs use none.
    [[nodiscard]] auto bounds() const -> const loader::ExploreBounds& { return bounds_; }
    void set_bounds(const loader::ExploreBounds& bounds) {
        bounds_ = bounds;
        decisions_estimated_ = false;
        decisions_estimate_ = 1;
    }
    [[nodiscard]] auto scenario() const -> const loader::Scenario& { return scenario_; }
    [[nodiscard]] auto variant() const -> const loader::Variant& { return variant_; }
    /// The checkers every crash state goes through, in order: the scenario's,
    /// then mount (unless the scenario's crash.mount is may-fail).
    [[nodiscard]] auto checker_names() const -> std::vector<std::string>;
    /// Whether a run reuses the verdict of a crash state this Simulation's
    /// runs already judged (VerdictMemo, RunState::memo_key in runner/judge.cpp;
    /// on by default). Off only to show, in tests, that it changes no count
    /// and no verdict.
    void set_verdict_memo(bool on) { verdict_memo_ = on; }
    /// The distinct crash states without a violation judged by the runs of
    /// this Simulation a search counted (count_reached; the verdict memo's
    /// keys: image, oracle and freeze level by content), or none when the
    /// memo was not used or dropped its keys at its bound. Two searches of
    /// one scenario and variant that reach the same crash states have the
    /// same count (tests/runner/dpor_soundness_test.cpp). The estimate's
    /// timing runs and a run a stop request cut short judge crash states
    /// too, but count only once a counted run reaches them.
    [[nodiscard]] auto crash_states_distinct() const -> std::optional<std::uint64_t>;
    /// Counts the crash states `outcome` (a run of this Simulation) judged
    /// or reused toward crash_states_distinct.
    void count_reached(const RunOutcome& outcome);

private:
    auto execute(sim::Strategy& strategy, const CrashPlan& plan, sim::Prng crash_prng,
                 sim::Prng recovery_prng, bool trace, class ScriptedStrategy* script,
                 const loader::ExploreBounds& bounds, std::uint64_t crash_states_max = 0,
                 bool interruptible = false) -> RunOutcome;

    const loader::Scenario& scenario_;
    loader::Variant variant_;
    loader::ExploreBounds bounds_;
    std::unique_ptr<model::FileSystem> prototype_;
    std::unique_ptr<checkers::Oracle> prototype_oracle_;
    std::vector<bool> prototype_created_;
    std::vector<std::unique_ptr<checkers::Checker>> checkers_;
    std::uint64_t decisions_estimate_ = 1;
    bool decisions_estimated_ = false;
    bool verdict_memo_ = true;
    bool list_memo_reached_ = false;  // run_dfs: its runs list their memo entries
    /// The verdicts of crash states judged by any run so far.
    std::unique_ptr<VerdictMemo> verdicts_;
    std::string run_label_;  // the run in progress, for a failing SIM_ASSERT
};

// One run of the tasks is bounded by the scenario's explore.steps (cut there,
// not a violation) and explore.progress_steps (that many steps without an
// operation completing: a liveness violation), loader/scenario.hpp.
/// Steps the set-up may take (it runs once per variant, tasks in order).
inline constexpr std::uint64_t setup_steps_max = 10'000'000;
/// Steps a performance run may take (a fio or fs_mark workload at full size).
inline constexpr std::uint64_t perf_steps_max = 2'000'000'000;

/// Exhaustive crash states enumerate every subset of up to this many
/// unflushed writes; past it: none, all, and each write alone kept or lost.
inline constexpr std::size_t subset_writes_max = 10;

/// The counters of a perf run from the set-up's file system (`before`) and
/// the run's (`after`, a clone of it whose maxima were reset before the
/// workload): a total is its growth over the workload, a maximum (CounterKind,
/// model/info.hpp) the workload's own, as `after` holds it.
auto workload_counters(const model::FileSystem& before, const model::FileSystem& after,
                       const std::string& model) -> std::map<std::string, std::uint64_t>;

/// The seed of schedule `index` of a campaign started with `seed`.
auto schedule_seed(std::uint64_t seed, std::uint64_t index) -> std::uint64_t;

}  // namespace runner
