#pragma once
// A scenario as loaded and validated from JSON (see scenarios/schema/ and
// scenarios/README.md). Everything here has been checked against the model's
// declared knobs and operations; later code trusts it.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/dfs.hpp"
#include "sim/strategy.hpp"

namespace loader {

/// Bad scenario, repro or flag: one message naming the file, the JSON path
/// and what was expected. Only cli/crashsim.cpp catches it (exit code 2).
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// SIGINT or SIGTERM (sim::stop_requested) while a file was read, parsed or
/// expanded: "interrupted while loading FILE". cli/crashsim.cpp exits 130.
class LoadInterrupted : public std::runtime_error {
public:
    explicit LoadInterrupted(const std::string& path)
        : std::runtime_error("interrupted while loading " + path) {}
};

struct Op {
    std::string name;                    // "write", "fsync", ...
    std::string file;                    // empty when the op takes no file
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    bool has_offset = false;
    bool has_length = false;
    std::map<std::string, bool> flags;   // FieldKind::flag fields given
    std::uint64_t user_cpu_ns = 0;       // the task's own CPU time before the call (performance runs)
    std::string json_path;               // "$.tasks[1].ops[0]" for messages
    /// The file's index in Scenario::files when known (generated ops), so
    /// that running it needs no lookup by name.
    std::uint32_t file_index = no_file_index;
    static constexpr std::uint32_t no_file_index = ~std::uint32_t{0};
};

/// Operations a task makes as it runs, one at a time, never stored
/// (`workload.create_unlink`): create files [first_file, first_file + files)
/// in order; then, if unlink, wait until every generated task has created
/// its files and unlink them in the same order.
struct GeneratedOps {
    std::uint32_t first_file = 0;
    std::uint64_t files = 0;
    bool unlink = false;
    std::uint32_t phase_tasks = 0;  // generated tasks that meet before unlinking
    std::uint64_t user_cpu_ns = 0;  // the task's own CPU time per operation
    std::string create_op;          // the model's operation names
    std::string unlink_op;
    std::string json_path;
};

struct Task {
    std::string name;
    std::vector<Op> ops;
    std::optional<GeneratedOps> generated;  // instead of ops
};

/// What the disk keeps of writes that were not yet made durable.
enum class UnflushedPolicy : std::uint8_t { none, all, any_subset, prefix };

struct CrashPolicy {
    UnflushedPolicy unflushed = UnflushedPolicy::any_subset;
    /// crash.mount: "may-fail" when the scenario expects recovery to refuse
    /// some crashed images; else ("must-succeed") a refused mount is a
    /// violation of the mount checker.
    bool mount_may_fail = false;
};

/// One step of a scripted schedule.
struct ScheduleStep {
    enum class Kind : std::uint8_t { run, crash };
    Kind kind = Kind::run;
    std::string task;                    // run: task name (a model task such as "endio" too)
    std::string until;                   // run: stop after this yield point; empty = until done
    std::uint32_t count = 1;             // run: the count-th time `until` is reached
    UnflushedPolicy unflushed = UnflushedPolicy::none;  // crash: what the cache keeps
    std::string json_path;
};

/// Schedules a campaign runs when neither the scenario's budget nor the
/// command line says (`fuzz --schedules`, `expect.fuzz.schedules`).
inline constexpr std::uint64_t fuzz_schedules_default = 10'000;

/// A fuzz budget: which strategies, how many schedules each.
struct FuzzBudget {
    std::vector<sim::StrategySpec> strategies;  // "random", "pct:3", parsed once by the loader
    std::uint64_t schedules = 0;
    /// The cap of a dfs strategy, when it differs (`dfs_schedules`): a proof
    /// must complete, which may take more schedules than a random or PCT
    /// sample needs; 0: `schedules`.
    std::uint64_t dfs_schedules = 0;
    std::uint64_t seed = 0;
    /// `states`: the dfs strategies remember visited states by this key
    /// (`fuzz --states`, sim/visited.cpp); none: stateless.
    sim::VisitedKey states = sim::VisitedKey::none;
};

struct Expectation {
    /// measure: a performance variant, judged by the scenario's perf ratios.
    enum class Kind : std::uint8_t { violates, holds, measure };
    Kind kind = Kind::holds;
    std::string checker;  // violates: the checker that must fail
    FuzzBudget fuzz;      // found within this budget / survives this budget
    /// `faults`: at least one injected device fault must be detected, or
    /// survived, over the variant's runs (a scenario with a fault budget).
    bool faults_detected = false;
    bool faults_survived = false;
};

struct Variant {
    std::string name;
    std::map<std::string, std::string> config;  // every knob, defaults filled in
    Expectation expect;
    /// Yield points `check` requires the variant's runs to reach: the
    /// scenario's must_reach, then the variant's own.
    std::vector<std::string> must_reach;
    /// The machine profile it runs on (`machine`; empty: the scenario's machine).
    std::string machine;
};

/// A fio-like job (`workload.fio`), expanded at load time into one file
/// ("job0", "job1", ...) created in the set-up and one task per job.
struct FioJob {
    std::uint32_t jobs = 1;
    bool random = false;        // rw: randwrite (else write)
    std::uint64_t bs = 4096;    // bytes per write
    std::uint64_t size = 0;     // bytes of each job's file
    std::uint64_t io_size = 0;  // bytes each job writes
    std::uint64_t fsync = 0;    // fsync after every N writes (0: never)
    bool o_dsync = false;       // O_DSYNC: every write is followed by an fsync
    bool direct = false;        // O_DIRECT: writes bypass the page cache (the write op's direct flag)
    std::string prefill = "none";  // none, truncate (sparse, sized), falloc, write
    std::uint64_t seed = 0;     // randwrite offsets
};

/// An fs_mark-like job (`workload.fs_mark`), expanded at load time into one
/// task per thread ("thread0", ...) that creates, writes and (by default) fsyncs its files one
/// after another. File names say which directory fs_mark would use ("d3/t0.f17"); the models
/// have no directories, so a name is only a name.
struct FsMarkJob {
    std::uint64_t files = 0;          // files per thread (fs_mark -n)
    std::uint64_t size = 0;           // bytes per file (fs_mark -s)
    std::uint32_t threads = 1;        // fs_mark -t
    std::uint64_t dirs = 1;           // fs_mark -D
    std::uint64_t files_per_dir = 0;  // fs_mark -N: consecutive files per directory (0: round-robin)
    bool fsync = true;                // fsync before close (fs_mark's default sync method)
    std::uint64_t user_cpu_ns = 0;    // fs_mark's own CPU time per file (its "App Overhead")
    /// Files of an earlier run of the same command right before this one,
    /// which (without -k) unlinked them after its timed loop: the set-up.
    std::uint64_t previous_files = 0;
};

/// A create-then-unlink job (`workload.create_unlink`;
/// "xfs: remove the m_active_trans counter"): `threads`
/// tasks ("thread0", ...) each create `files` empty files ("t3.f17"), then,
/// once every thread has created its own (the seed measures the create and
/// the removal as two runs), unlink them. The operations are generated as
/// the tasks run (GeneratedOps), not expanded at load time.
struct CreateUnlinkJob {
    std::uint32_t threads = 1;
    std::uint64_t files = 0;       // per thread
    bool unlink = true;
    std::uint64_t user_cpu_ns = 0;  // the benchmark's own CPU time per operation
};

/// A performance expectation: numerator's metric / denominator's in [min, max].
struct PerfRatio {
    std::string numerator;
    std::string denominator;
    double min = 0;
    double max = 0;
    std::optional<std::uint64_t> at;  // in a sweep: only at this value (else at every point)
    std::string metric;               // this ratio's own metric (empty: the scenario's perf.metric)
    std::string json_path;
};

/// One point of the seed's own measurements (`perf.seed.points`): the swept
/// parameter's value (in a sweep) and the metric per variant.
struct SeedPoint {
    std::optional<std::uint64_t> point;
    std::map<std::string, double> values;  // variant -> the seed's figure
};

struct PerfSpec {
    std::string metric = "throughput";  // throughput (MiB/s), fsync_rate (fsyncs/s), files_per_s
    std::vector<PerfRatio> ratios;
    std::string seed_source;  // where the seed's figures come from (empty: none declared)
    std::vector<SeedPoint> seed_points;
};

struct Device {
    std::uint32_t block_size = 4096;
    std::uint64_t blocks = 0;
    std::string profile = "nvme";  // ssd, hdd, nvme, ramdisk
    /// The scenario's own figures over the profile's (crashsim perf --vary).
    std::optional<std::uint64_t> write_latency_ns;
    std::optional<std::uint64_t> flush_latency_ns;
    std::optional<std::uint64_t> bandwidth;  // bytes/s, 0: no transfer channel
    /// device.write_cache: "lies-about-flush" opts into a write cache that
    /// acknowledges FLUSH without making earlier writes durable.
    bool lying_cache = false;
};

/// The device faults a crash may inject (`faults`): at most
/// `budget` per crash state, of the kinds enabled.
inline constexpr std::uint32_t fault_budget_max = 8;
struct Faults {
    std::uint32_t budget = 0;
    bool torn_writes = false;
    bool misdirected_writes = false;  // only where ModelInfo::misdirected_writes says why
    bool latent_errors = false;       // a block a mount reads returns EIO
    /// A data writeback write completes with EIO while the workload runs
    /// (a schedule's choice, at most `budget` per run; ModelInfo::write_errors).
    bool write_errors = false;
};

/// The machine a performance run models (`machine`): CPUs shared by every
/// task's CPU time, and memory for the page cache (reclaim keeps it under).
struct Machine {
    std::uint32_t cpus = 0;              // 0: every task has a CPU of its own
    std::uint64_t page_cache_bytes = 0;  // 0: unlimited
    /// What one kswapd pass frees (the gap between its watermarks); by
    /// default 0.1 % of the page cache (watermark_scale_factor 10), at least
    /// 32 pages (SWAP_CLUSTER_MAX).
    std::uint64_t reclaim_batch_bytes = 0;
    /// machine.scale: page_cache, reclaim_batch and the fio sizes were given
    /// at the seed's size and divided by this (1: as given).
    std::uint64_t scale = 1;
    /// CPUs with identity: CPU c is on socket
    /// c / cores_per_socket (0: one socket).
    std::uint32_t cores_per_socket = 0;
    /// One access to a shared cache line (sim::CacheLine):
    /// on the CPU that owns it, pulled from a CPU of the same socket, from
    /// another socket.
    std::uint64_t line_hit_ns = 0;
    std::uint64_t line_miss_ns = 0;
    std::uint64_t line_miss_remote_ns = 0;
};

/// A machine profile (`machines.NAME`): the scenario's machine with its own
/// CPUs, topology, cache-line costs and per-operation CPU costs; a variant
/// naming it (`variants[i].machine`) runs on it.
struct MachineProfile {
    std::string name;
    std::string about;
    Machine machine;
    std::map<std::string, std::uint64_t> costs;  // over the scenario's costs
};

/// Bounds on the kernel's own nondeterminism that exploration adds to the
/// strategies' choices (`explore` in a scenario, --io-reorders
/// and --daemon-wakeups on fuzz): per schedule, how many device completions
/// may fire ahead of earlier timers, and how many times a daemon's timer (the
/// btrfs transaction kthread) may fire while tasks can run.
/// Steps one run explores (`explore.steps`): a run still going at this step
/// is cut there, "not explored past step N"; a bound, not a violation.
inline constexpr std::uint64_t explore_steps_default = 1'000'000;
/// Steps without an operation completing (`explore.progress_steps`) before a
/// run is a liveness violation ("no progress"): a long workload whose
/// operations keep completing is not a livelock.
inline constexpr std::uint64_t progress_steps_default = 100'000;
/// The most either may be set to.
inline constexpr std::uint64_t explore_steps_max = 1'000'000'000;
/// Power cuts nested inside recovery (`explore.recovery_crashes`,
/// --recovery-crashes): 0 explores none, 1 cuts each
/// crash state's recovery once and mounts again, 2 cuts that second
/// recovery too (docs/recovery-crash.md says what the default costs).
inline constexpr std::uint32_t recovery_crashes_default = 1;
/// The most recovery_crashes may be set to: each level multiplies the
/// mounts a crash state costs.
inline constexpr std::uint32_t recovery_crashes_max = 4;
struct ExploreBounds {
    std::uint32_t io_reorders = 1;
    std::uint32_t daemon_wakeups = 1;
    std::uint64_t steps = explore_steps_default;
    std::uint64_t progress_steps = progress_steps_default;
    std::uint32_t recovery_crashes = recovery_crashes_default;
    /// Daemons start asleep (sim::Scheduler::settle_daemons). Not a scenario
    /// setting: false only when replaying a repro written before (its
    /// choice list has a daemon's start racing the tasks).
    bool daemons_settled = true;
    auto operator==(const ExploreBounds&) const -> bool = default;
};
inline constexpr std::uint32_t explore_bound_max = 8;
/// "at most 1 I/O reordering and 1 daemon wake-up per schedule", then the
/// step bounds when they are not the defaults.
inline auto describe_bounds(const ExploreBounds& bounds) -> std::string {
    std::string text = "at most " + std::to_string(bounds.io_reorders) + " I/O reordering" +
                       (bounds.io_reorders == 1 ? "" : "s") + " and " +
                       std::to_string(bounds.daemon_wakeups) + " daemon wake-up" +
                       (bounds.daemon_wakeups == 1 ? "" : "s") + " per schedule";
    if (bounds.steps != explore_steps_default || bounds.progress_steps != progress_steps_default) {
        text += ", runs of at most " + std::to_string(bounds.steps) + " steps, no progress after " +
                std::to_string(bounds.progress_steps);
    }
    text += bounds.recovery_crashes == 0
                ? "; crash during recovery: not explored (bound 0)"
                : "; crash during recovery: " + std::to_string(bounds.recovery_crashes) +
                      " nested power cut" + (bounds.recovery_crashes == 1 ? "" : "s") + " per crash state";
    return text;
}

struct Scenario {
    std::string path;      // file it was loaded from, as given
    std::string name;
    std::string about;
    std::string model;
    Device device;
    Faults faults;  // `faults`: none by default
    Machine machine;
    std::map<std::string, std::uint64_t> costs;  // calibrated costs set (model::CostInfo), in ns
    std::map<std::string, MachineProfile> machines;  // `machines`, by name
    std::vector<std::string> files;  // every file name, in order of first creation
    std::vector<Op> setup;
    std::vector<Task> tasks;
    CrashPolicy crash;
    std::vector<ScheduleStep> schedule;  // empty when the scenario has none
    std::vector<std::string> checkers;
    ExploreBounds explore;  // `explore`, defaults above
    std::vector<Variant> variants;
    std::optional<FioJob> fio;     // the declared workload, if any (already expanded)
    std::optional<FsMarkJob> fs_mark;  // the same for an fs_mark workload
    std::optional<CreateUnlinkJob> create_unlink;  // generated as it runs
    std::optional<PerfSpec> perf;  // performance expectations, if any
    /// A sweep (`sweep`): the swept workload field, its values, and the
    /// scenario loaded at each value (empty without a sweep).
    std::string sweep_parameter;
    std::vector<std::uint64_t> sweep_values;
    std::vector<Scenario> sweep_points;

    [[nodiscard]] auto find_variant(const std::string& name) const -> const Variant*;
    [[nodiscard]] auto file_id(const std::string& name) const -> std::uint32_t;
    /// The machine a variant runs on: its profile's, else the scenario's.
    [[nodiscard]] auto machine_of(const Variant& variant) const -> const Machine&;
    /// The CPU costs a variant runs with: the scenario's, its profile's over them.
    [[nodiscard]] auto costs_of(const Variant& variant) const -> std::map<std::string, std::uint64_t>;
};

/// Loads and validates a scenario file. Throws InputError.
auto load_scenario(const std::string& path) -> Scenario;
/// Same, from text already read (repro files embed their scenario).
auto parse_scenario(const std::string& text, const std::string& path) -> Scenario;

}  // namespace loader
