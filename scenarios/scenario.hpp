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

namespace scenarios {

/// Bad scenario, repro or flag: one message naming the file, the JSON path
/// and what was expected. Only crashsim.cpp catches it (exit code 2).
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Op {
    std::string name;                    // "write", "fsync", ...
    std::string file;                    // empty when the op takes no file
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    bool has_offset = false;
    bool has_length = false;
    std::map<std::string, bool> flags;   // FieldKind::flag fields given
    std::string json_path;               // "$.tasks[1].ops[0]" for messages
};

struct Task {
    std::string name;
    std::vector<Op> ops;
};

/// What the disk keeps of writes that were not yet made durable.
enum class UnflushedPolicy : std::uint8_t { none, all, any_subset, prefix };

struct CrashPolicy {
    UnflushedPolicy unflushed = UnflushedPolicy::any_subset;
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

/// A fuzz budget: which strategies, how many schedules each.
struct FuzzBudget {
    std::vector<std::string> strategies;  // "random", "pct:3"
    std::uint64_t schedules = 0;
    std::uint64_t seed = 0;
};

struct Expectation {
    /// measure: a performance variant, judged by the scenario's perf ratios.
    enum class Kind : std::uint8_t { violates, holds, measure };
    Kind kind = Kind::holds;
    std::string checker;  // violates: the checker that must fail
    FuzzBudget fuzz;      // found within this budget / survives this budget
};

struct Variant {
    std::string name;
    std::map<std::string, std::string> config;  // every knob, defaults filled in
    Expectation expect;
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
    std::string prefill = "none";  // none, truncate (sparse, sized), falloc, write
    std::uint64_t seed = 0;     // randwrite offsets
};

/// A performance expectation: numerator's metric / denominator's in [min, max].
struct PerfRatio {
    std::string numerator;
    std::string denominator;
    double min = 0;
    double max = 0;
    std::string json_path;
};

struct PerfSpec {
    std::string metric = "throughput";  // throughput (MiB/s) or fsync_rate (fsyncs/s)
    std::vector<PerfRatio> ratios;
};

struct Device {
    std::uint32_t block_size = 4096;
    std::uint64_t blocks = 0;
    std::string profile = "nvme";  // ssd, hdd, nvme, ramdisk
};

struct Scenario {
    std::string path;      // file it was loaded from, as given
    std::string name;
    std::string about;
    std::string model;
    Device device;
    std::vector<std::string> files;  // every file name, in order of first creation
    std::vector<Op> setup;
    std::vector<Task> tasks;
    CrashPolicy crash;
    std::vector<ScheduleStep> schedule;  // empty when the scenario has none
    std::vector<std::string> checkers;
    std::vector<Variant> variants;
    std::optional<FioJob> fio;     // the declared workload, if any (already expanded)
    std::optional<PerfSpec> perf;  // performance expectations, if any

    [[nodiscard]] auto find_variant(const std::string& name) const -> const Variant*;
    [[nodiscard]] auto file_id(const std::string& name) const -> std::uint32_t;
};

/// Loads and validates a scenario file. Throws InputError.
auto load_scenario(const std::string& path) -> Scenario;
/// Same, from text already read (repro files embed their scenario).
auto parse_scenario(const std::string& text, const std::string& path) -> Scenario;

/// The checkers crashsim knows, for validation and `list`.
auto known_checkers() -> const std::vector<std::string>&;

}  // namespace scenarios
