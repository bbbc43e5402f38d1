#pragma once
// What a model declares about itself: its knobs (each patch is a knob), the
// operations a scenario may use with their fields and what each means to the
// oracle, the counters it keeps, and its yield points. The scenario loader
// validates against this; `crashsim list` prints it. Each model declares it in
// its own folder (model/btrfs/super.cpp, model/xfs/super.cpp) and registers
// it with its factory (model/registry.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/yield_point.hpp"

namespace model {

struct KnobInfo {
    std::string name;
    std::vector<std::string> values;
    std::string default_value;
    std::string about;
};

/// The fields an operation may carry besides "op".
enum class FieldKind : std::uint8_t {
    file,    // string naming a file; must exist (created earlier) unless the op creates it
    offset,  // unsigned byte offset, multiple of the block size
    length,  // unsigned byte count > 0, multiple of the block size
    flag,    // boolean
};

struct FieldInfo {
    std::string name;
    FieldKind kind;
    bool required;
};

/// What an operation means to the oracle (checkers/oracle.hpp), so that the
/// code running workloads never needs a model's operation names.
enum class OracleEffect : std::uint8_t {
    none,
    write_data,  // file, offset, length now hold this operation's contents
    zero_range,  // file, offset, length now read as zeros; without keep_size, the size
                 // becomes max(size, offset + length) (zero range)
    punch_hole,  // file, offset, length now read as zeros; the size never changes
    fsync_file,  // once it returns, the file's data and size are promised
    sync_all,    // once it returns, every existing file is promised
    set_size,    // truncate: the file's size becomes `length`; zeros past it
    extend_size, // fallocate: without keep_size, the size becomes max(size, offset + length)
    remove_file, // unlink: once it began, a missing file is not lost data
};

/// An operation's typed id: its index in ModelInfo::ops. Each model maps it
/// to its own enum and dispatches with a switch (model/btrfs/super.cpp).
using OpId = std::uint16_t;

struct OpInfo {
    std::string name;
    std::string about;
    std::vector<FieldInfo> fields;
    bool creates_file = false;  // "file" names a new file
    OracleEffect effect = OracleEffect::none;
    bool makes_directory = false;  // "file" names a new directory (fs_mark makes its -D directories)
};

/// How a counter's value is made: a total adds up events, a maximum keeps the
/// largest one event gave. crashsim perf reports a total's growth over the
/// workload (the set-up's value subtracted) and a maximum over the workload
/// alone (FileSystem::reset_maxima() before it starts; a difference of two
/// maxima measures nothing).
enum class CounterKind : std::uint8_t { total, maximum };

/// A counter the model keeps (FileSystem::counters()), with what it counts.
/// Perf metrics may name any of them (`counter:<name>`).
struct CounterInfo {
    std::string name;
    std::string about;
    bool perf_column = false;  // shown as a column of the crashsim perf table
    CounterKind kind = CounterKind::total;
};

/// A calibrated CPU cost of one of the model's code paths that a scenario may
/// set (`"costs": {NAME: ns}`) and `perf --vary NAME=...` may sweep; the
/// default and where it comes from are in `about`.
struct CostInfo {
    std::string name;
    std::uint64_t default_ns = 0;
    std::string about;
};

struct ModelInfo {
    std::string name;
    std::string about;
    std::vector<KnobInfo> knobs;
    std::vector<OpInfo> ops;  // by OpId
    /// Every counter, in the order the perf table shows the perf_column ones.
    /// Counters per operation ("ops.<op>") are declared by their prefix
    /// ("ops.").
    std::vector<CounterInfo> counters;
    std::vector<CostInfo> costs;
    /// Write offsets and lengths in bytes (i_size in bytes, a partial block
    /// written as its whole page); otherwise multiples of the block size.
    bool byte_granular = false;
    std::vector<std::string> model_tasks;  // tasks the model spawns itself ("endio")
    /// The device faults the model's checksums detect or its recovery
    /// survives, for `list` and the loader; empty: the model
    /// verifies no checksum, and a scenario may not inject faults into it.
    std::string faults;
    /// Why a misdirected write is detected or survived on this model's
    /// self-describing blocks (disk::SelfDescribing); empty: the model
    /// verifies no block's own address, and no scenario may inject them.
    std::string misdirected_writes;
    /// How the model reports a data write that completes with EIO to the
    /// application (faults.write_errors); empty: not modelled, and
    /// no scenario may inject them.
    std::string write_errors;
    std::vector<const sim::YieldPoint*> yield_points;  // every point, in story order
};

/// A knob value naming no real kernel starts with this prefix; a run that
/// uses one says so in its story.
inline constexpr std::string_view hypothetical_prefix = "hypothetical-";
/// One story line per knob of `config` set to a hypothetical value.
auto hypothetical_notes(const ModelInfo& info, const std::map<std::string, std::string>& config)
    -> std::vector<std::string>;

/// Every model linked in (model/registry.hpp), by name.
auto models() -> const std::vector<ModelInfo>&;
auto find_model(const std::string& name) -> const ModelInfo*;

/// The model's operation for one oracle effect (the generic roles a workload
/// expands into: write_data, fsync_file, set_size...), the first declared;
/// nullptr when it has none.
auto op_with_effect(const ModelInfo& info, OracleEffect effect) -> const OpInfo*;
/// The model's operation that creates a file, or nullptr.
auto op_creating(const ModelInfo& info) -> const OpInfo*;
/// The model's operation that makes a directory, or nullptr.
auto op_making_directory(const ModelInfo& info) -> const OpInfo*;
auto find_op(const ModelInfo& info, std::string_view name) -> const OpInfo*;
/// The OpId of `op`, an entry of info.ops.
auto op_id(const ModelInfo& info, const OpInfo& op) -> OpId;
/// The counter named `name` (or the per-operation family it belongs to).
auto find_counter(const ModelInfo& info, std::string_view name) -> const CounterInfo*;

}  // namespace model
