#pragma once
// The interface between a file-system model and the rest of crashsim. A model
// runs operations inside fibers against its own block device and page cache,
// and mounts a crashed image (log or journal replay) into a RecoveredState
// that checkers read. Models never see the oracle or the checkers.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/disk/block_device.hpp"
#include "model/disk/content.hpp"
#include "model/info.hpp"
#include "sim/fingerprint.hpp"
#include "sim/range_map.hpp"
#include "sim/scheduler.hpp"

namespace model {

using Config = std::map<std::string, std::string>;

/// The "whole file" marker: the end, in file blocks, of every operation that
/// names no range (writeback, page release, fsync, sync) and of a hole past
/// a file's last extent. Past any block a scenario can name: the loader caps
/// a byte range's end at 2^44 bytes (loader/load_tasks.cpp), so 2^44 blocks lie
/// beyond it at any block size.
inline constexpr std::uint64_t whole_file_end = std::uint64_t{1} << 44;

/// File blocks [start, end).
struct BlockRange {
    std::uint64_t start;
    std::uint64_t end;
};

/// One operation, resolved: file names are ids, a write carries its version.
struct OpCall {
    std::string_view name;  // for the story; execute() dispatches on `op`
    OpId op = 0;            // index in the model's ModelInfo::ops
    std::uint32_t file = 0;
    std::uint64_t offset = 0;  // bytes
    std::uint64_t length = 0;  // bytes
    bool has_range = false;
    std::uint64_t version = 0;  // write: the oracle's version for its contents
    const std::map<std::string, bool>* flags = nullptr;
    /// A write that returned OpResult::short_write: the bytes it copied
    /// before the error (generic_perform_write's and btrfs_buffered_write's
    /// return value), set by the model.
    mutable std::uint64_t copied = 0;
    /// A boolean field (keep_size, direct): false when the op does not set it.
    [[nodiscard]] auto flag(const std::string& field) const -> bool {
        if (flags == nullptr) return false;
        const auto found = flags->find(field);
        return found != flags->end() && found->second;
    }
    /// The common start of every model's execute(): the call's byte range in
    /// file blocks of `block_size`, or from `offset` to the whole file's end
    /// when it names no range.
    [[nodiscard]] auto blocks(std::uint32_t block_size) const -> BlockRange {
        const std::uint64_t start = offset / block_size;
        if (!has_range) return {start, whole_file_end};
        // Up to the block holding the range's last byte (a byte-granular
        // write touches its partial last block; for block multiples the same).
        return {start, std::min(whole_file_end, (offset + length + block_size - 1) / block_size)};
    }
};

/// The call's operation as the model's own enum (its op table's order), for
/// execute()'s switch.
template <typename Op>
auto op_of(const OpCall& call) -> Op {
    return static_cast<Op>(call.op);
}

/// One mapping of file blocks to device blocks as recovery found it in the
/// image (a btrfs file extent item, an xfs data fork record), for the checks
/// made outside the model (checkers/recovered_image.hpp).
struct RecoveredExtent {
    std::uint64_t file_block = 0;
    std::uint64_t device_block = 0;
    std::uint64_t blocks = 0;
    bool unwritten = false;  // allocated, reads zeros (xfs XFS_EXT_UNWRITTEN)
};

struct RecoveredFile {
    bool exists = false;
    std::uint64_t size_bytes = 0;
    /// File block -> content; holes (and unwritten extents) are absent and read as zeros.
    sim::RangeMap<disk::Content> blocks;
    /// Every extent of the file, in file order (delalloc records, which have
    /// no device block, are not extents).
    std::vector<RecoveredExtent> extents;
    /// What a read after mount returns for `count` file blocks from
    /// `file_block` that an extent maps to `device_block` onward: what the
    /// crashed image holds there.
    void read_mapped(const disk::Image& image, std::uint64_t file_block, std::uint64_t device_block,
                     std::uint64_t count);
};

/// A journaling model's log as the crashed image holds it, read forensically
/// (every commit block found in the log area, not only those recovery
/// replayed), for checkers/journal_integrity.cpp. Versions count the changes
/// of one metadata block: a higher version holds every earlier change.
struct JournalUpdate {
    std::uint64_t block = 0;    // home location
    std::uint64_t version = 0;  // of the logged copy
};
struct JournalTransaction {
    std::uint64_t sequence = 0;
    bool replayed = false;  // from the recorded tail onward: recovery replayed it
    std::vector<JournalUpdate> updates;
    /// Home blocks its revoke records name: no copy of them from this
    /// transaction or an earlier one is to be replayed (jbd2_journal_test_revoke).
    std::vector<std::uint64_t> revoked;
};
struct JournalAudit {
    std::uint64_t tail_sequence = 0;  // the journal superblock's s_sequence (0: clean)
    /// Every transaction whose descriptor and commit block the image holds, oldest first.
    std::vector<JournalTransaction> durable;
    /// After recovery: the version each metadata block holds at home, and what it is.
    std::map<std::uint64_t, std::uint64_t> home_versions;
    std::map<std::uint64_t, std::string> block_names;
    /// Logged blocks that are no longer metadata after recovery (no recovered
    /// directory maps them: freed, or reused as a file's data): an update of
    /// one owes nothing, since what would make it metadata again is itself a
    /// logged update.
    std::set<std::uint64_t> not_metadata;
};

/// The file system as mount after a crash left it.
/// One log record that log recovery found after the tail (xfs_recover).
struct LogRecordFound {
    std::uint64_t lsn = 0;
    bool unmount = false;            // xlog_unmount_write's record: no change
    std::uint32_t transactions = 0;  // transactions in it
    bool superblock_only = false;    // each of them logs only the superblock (xfs_sync_sb)
    std::string kinds;               // the transactions' kinds, for the story
};

struct RecoveredState {
    bool mounted = false;
    std::string mount_error;
    std::vector<RecoveredFile> files;  // by file id
    /// Broken metadata invariants found while mounting (fs_consistency).
    std::vector<std::string> consistency_errors;
    /// What recovery did, for the story ("replayed log transaction 3: inode I size ...").
    std::vector<std::string> notes;
    /// The device's size in blocks, and the blocks [0, metadata_end) the
    /// model keeps for its own metadata (superblock, trees, log): no file
    /// extent may point there (0: the model declares no such area).
    std::uint64_t device_blocks = 0;
    std::uint64_t metadata_end = 0;
    /// Journaling models only (model/jbd2/): what the log held.
    std::optional<JournalAudit> journal;
    /// Device faults: blocks whose checksum or CRC failed while
    /// mounting. A mount refused for one of them is a fault detected (the
    /// user sees the error), not a violation of the mount checker.
    std::vector<std::uint64_t> checksum_failed;
    /// The model verifies data checksums on read (btrfs): a torn data block
    /// a file maps reads as EIO, not as wrong data.
    bool data_checksums = false;
    /// Set by the runner: faults the crash injected (fault_outcome's stake).
    std::uint32_t faults_injected = 0;
    /// Log recovery's account of the records it found after the tail, in
    /// lsn order (xfs; unset: the model gives no such account).
    std::optional<std::vector<LogRecordFound>> log_records;
};

struct Geometry {
    std::uint32_t block_size;
    std::uint64_t blocks;
    std::string profile;
    /// Memory for the page cache, in bytes (0: unlimited, reclaim only runs
    /// when a scenario asks for it).
    std::uint64_t page_cache_bytes = 0;
    /// What one kswapd pass frees: the gap between its watermarks.
    std::uint64_t reclaim_batch_bytes = 0;
    /// The scenario's own device figures over the profile's (unset: the
    /// profile's): `device.write_latency_us`, `flush_latency_us`, `bandwidth`.
    std::optional<sim::Duration> write_latency{};
    std::optional<sim::Duration> flush_latency{};
    std::optional<std::uint64_t> bandwidth{};
    /// The scenario's calibrated costs (`costs`), by the name the model declares (ModelInfo::costs).
    std::map<std::string, std::uint64_t> costs_ns{};
    /// The cost `name` the scenario set, else `default_ns`.
    [[nodiscard]] auto cost(const std::string& name, std::uint64_t default_ns) const -> std::uint64_t {
        const auto found = costs_ns.find(name);
        return found == costs_ns.end() ? default_ns : found->second;
    }
    /// The profile named by `profile`, with the overrides above.
    [[nodiscard]] auto device_profile() const -> disk::DeviceProfile;
};

/// A mount that recovers, as the engine sees it: what the mount made of the
/// image, and the writes and flushes it issued on the way, in order (btrfs:
/// the log replay's transaction commit; xfs: recovered items written home).
/// Cutting the power after any of them and mounting again is a second
/// recovery (runner/runner.cpp).
struct Recovery {
    RecoveredState state;
    std::vector<disk::MountRequest> requests;
};

/// How an operation ended: an operation that failed (EIO after a shutdown,
/// ENOSPC) acknowledges nothing, so the oracle records no promise for it. A
/// short write acknowledges the OpCall::copied bytes from its offset only
/// (it ran out of space after copying some: the kernel returns that count).
enum class OpResult : std::uint8_t { ok, failed, short_write };

class MetadataIndex;  // model/metadata_store.hpp

class FileSystem {
public:
    virtual ~FileSystem() = default;
    /// A copy of a quiescent file system (no task inside it, no I/O in flight).
    [[nodiscard]] virtual auto clone() const -> std::unique_ptr<FileSystem> = 0;
    /// Spawns the model's kernel threads (kswapd, the transaction kthread) as
    /// daemons of the current scheduler, before a run's tasks start.
    virtual void start_daemons() {}
    /// Runs one operation in the calling fiber.
    virtual auto execute(const OpCall& call) -> OpResult = 0;
    /// What `call` may touch from its start to its first yield point, waits
    /// on the way included: the runner covers that stretch with it
    /// (sim::cover), which no yield point's declaration covers. Any model
    /// state (everything the engine does not report itself) unless the model
    /// says less.
    [[nodiscard]] virtual auto op_footprint(const OpCall&) const -> sim::Footprint {
        return sim::footprint_all.without(sim::self_reported());
    }
    virtual auto device() -> disk::BlockDevice& = 0;
    /// Brings up to date the state hashes the model keeps across copies
    /// (visited states): the runner calls it once on the set-up world, so
    /// that every run's copy starts with them. The default keeps the
    /// device's durable-blocks hash.
    virtual void keep_state_hashes() { device().keep_durable_hash(); }
    /// Mounts a crashed image: superblock, log replay.
    [[nodiscard]] virtual auto recover(const disk::Image& image) const -> RecoveredState = 0;
    /// Mounts as recover() does and also returns the disk requests the mount
    /// issues, so that the engine can cut the power inside recovery. Its
    /// state must equal recover(image)'s. The default issues none (a model
    /// whose recovery writes nothing, or has not modelled its writes yet):
    /// crash during recovery then has nothing to cut. Metadata objects the
    /// requests carry stay readable by recover() until forget_recovery().
    [[nodiscard]] virtual auto recover_with_writes(const disk::Image& image) -> Recovery {
        return {recover(image), {}};
    }
    /// Drops what recover_with_writes() kept for its requests; the engine
    /// calls it once a crash state and every nested one are judged.
    virtual void forget_recovery() {}
    /// The metadata objects recover() reads through the image's
    /// Content::meta ids, by content (the runner's verdict memo across
    /// schedules); nullptr: its crash states are not memoized. A
    /// model returns its
    /// store only if recover() and recover_with_writes() read nothing else
    /// of the run than the image (geometry fixed at mkfs aside).
    [[nodiscard]] virtual auto metadata_index() const -> const MetadataIndex* { return nullptr; }
    /// Mechanism counters for summaries (transactions, log commits, full fsyncs...).
    [[nodiscard]] virtual auto counters() const -> std::map<std::string, std::uint64_t> = 0;
    /// Sets every counter the model declares a maximum (CounterKind::maximum,
    /// model/info.hpp) to 0, so that it reads the largest value of what runs
    /// afterwards only. The default: the model keeps no maximum.
    virtual void reset_maxima() {}
    /// Adds the hash of every piece of the model's in-memory state to the
    /// footprint bit that names it (the resources its yield points, locks
    /// and wait queues declare: sim/fingerprint.hpp), for a search that
    /// remembers visited states. Every piece a step can read must lie in a
    /// bit the step touches; the disk's bit is the engine's. The default:
    /// false, the model has no hashes and its runs are not remembered.
    virtual auto hash_resources(sim::ResourceHashes&) const -> bool { return false; }
    /// Resources whose updates by steps that do not declare them commute
    /// with each other (a count of running transactions, of writers at a
    /// freeze level, a task's own record), while every step that reads them
    /// touches everything: --check-footprints does not count their changes
    /// as omissions. None by default.
    [[nodiscard]] virtual auto commuting_parts() const -> sim::Footprint { return {}; }
};

/// Builds a freshly formatted file system of the named model (one of
/// models(), model/registry.cpp). The caller has validated `config` against
/// the model's knobs.
auto make_filesystem(const std::string& model, const Config& config, const Geometry& geometry,
                     const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem>;

}  // namespace model
