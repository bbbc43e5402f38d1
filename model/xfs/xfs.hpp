#pragma once
// xfs data path, as far as "xfs: force writes to delalloc regions to
// unwritten" needs it: inodes whose data fork holds extent records in three states
// (delalloc reservation, unwritten, written/NORM); buffered writes that
// reserve delalloc; writeback (xfs_map_blocks) that converts a whole delalloc
// record in a transaction (xfs_bmapi_convert_delalloc -> xfs_bmapi_allocate)
// and submits data I/O for the flushed pages only; I/O completion (the ioend
// worker) that converts unwritten to written (xfs_iomap_write_unwritten) or
// raises di_size (xfs_setfilesize) in a transaction of its own; fallocate,
// hole punch and zero range (xfs_file_fallocate, xfs_alloc_file_space,
// xfs_free_file_space, xfs_flush_unmap_range); fsync, sync_file_range; a log
// whose transactions commit to the CIL in memory and become durable at a log
// force (PREFLUSH + FUA); godown -f; and log recovery at mount. Follows
// fs/xfs/libxfs/xfs_bmap.c, xfs_aops.c, xfs_iomap.c, xfs_bmap_util.c,
// xfs_file.c and xfs_log_cil.c of v5.7, with the knob selecting v5.8's fix.
//
// Left out on purpose: the COW fork and reflink, realtime,
// quotas, btree-format extent maps (every inode is in extents format, so an
// inode log item carries its whole fork), allocation groups and allocator
// policy (first fit over one free-space map), indirect-block reservations,
// speculative preallocation beyond EOF, CIL internals (a commit appends to
// the CIL; a force writes it as one log record with PREFLUSH + FUA), intents
// (EFI/EFD: a free is logged in the transaction that unmaps), directories and
// names (a file's one name is its di_nlink; the AGI unlinked list is the
// allocated inodes with nlink 0: InodeImage::nlink), timestamps, extent size hint alignment in fallocate. A
// write that would land on a page under writeback waits for it (stable pages), so a page is never dirty and
// under writeback at once.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/counter_table.hpp"
#include "model/cpu_cost.hpp"
#include "model/delayed_work.hpp"
#include "model/freeze.hpp"
#include "model/disk/block_device.hpp"
#include "model/errseq.hpp"
#include "model/filesystem.hpp"
#include "model/filesystem_base.hpp"
#include "model/metadata_store.hpp"
#include "model/page_cache.hpp"
#include "model/story.hpp"
#include "sim/live.hpp"
#include "sim/range_map.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"

namespace model::xfs {

/// CPU time of the code paths, charged only in performance runs (sim::cpu);
/// order-of-magnitude figures for a 2020s core (the page copy of a buffered
/// write and an O_DIRECT write's set-up are model/cpu_cost.hpp's, shared with
/// btrfs): xfs_file_fsync's entry, building and submitting an ioend, one
/// transaction commit into the CIL, the hop to the ioend workqueue, and a CIL
/// push that formats a checkpoint into a log record.
namespace cpu_cost {
inline constexpr sim::Duration fsync_entry = 5 * sim::microseconds;
inline constexpr sim::Duration submit_ioend = 5 * sim::microseconds;
inline constexpr sim::Duration transaction_commit = 8 * sim::microseconds;
inline constexpr sim::Duration workqueue_hop = 4 * sim::microseconds;
inline constexpr sim::Duration cil_push = 15 * sim::microseconds;
/// The rest of a create's and an unlink's CPU time (costs create_ns and
/// unlink_ns; model/xfs/super.cpp says where the defaults come from).
inline constexpr sim::Duration create = 26 * sim::microseconds;
inline constexpr sim::Duration unlink = 33 * sim::microseconds;
}  // namespace cpu_cost

/// XFS_INODES_PER_CHUNK: inodes are allocated and freed 64 at a time.
inline constexpr std::uint32_t inodes_per_chunk = 64;
/// mkfs allocates the first chunk for the root directory and the realtime
/// bitmap and summary inodes: 61 of its 64 inodes are free.
inline constexpr std::uint32_t first_chunk_free = inodes_per_chunk - 3;

/// MAXEXTLEN (XFS_MAX_BMBT_EXTLEN): the longest extent record, in blocks.
inline constexpr std::uint64_t extent_blocks_max = (std::uint64_t{1} << 21) - 1;
/// xfs_unmap_extent unmaps at most this many extents per transaction.
inline constexpr std::uint32_t unmap_extents_per_transaction = 2;

/// The operations a scenario may run, in the order of the model's op table
/// (model/xfs/super.cpp); execute() switches on them.
enum class Op : OpId {
    create, write, writeback, sync_file_range, fsync, falloc, fpunch, fzero, truncate, log_force, shutdown,
    freeze, thaw, unlink,
};

/// mkfs: block 0 holds the metadata in place, then the internal log; data
/// starts at the block this returns.
inline auto data_area_start(std::uint64_t device_blocks) -> std::uint64_t {
    return 1 + std::min<std::uint64_t>(1024, device_blocks / 8);
}

/// How xfs_bmapi_allocate maps a converted delalloc record of the data fork.
enum class DelallocConvert : std::uint8_t {
    written,    // v5.7: XFS_EXT_NORM; XFS_BMAPI_PREALLOC only counted when !wasdel
    unwritten,  // v5.8: XFS_BMAPI_PREALLOC always means XFS_EXT_UNWRITTEN
};

/// What xfs_quiesce_attr does first, and whether transactions count
/// themselves in m_active_trans ("xfs: remove the m_active_trans counter").
enum class ActiveTrans : std::uint8_t {
    counter,               // v5.7: atomic m_active_trans; Q1 polls it with delay(100)
    removed_cancel_last,   // no release: counter gone, l_work cancelled only in xfs_log_quiesce
    removed_cancel_first,  // v5.8: counter gone, cancel_delayed_work_sync(l_work) at Q1
};

struct Knobs {
    DelallocConvert delalloc_convert = DelallocConvert::unwritten;
    std::uint64_t extent_size_hint_blocks = 0;  // inherited by new files; 0: none
    ActiveTrans active_trans = ActiveTrans::removed_cancel_first;
};

/// xfs_syncd_centisecs = 3000: the log worker runs every 30 s.
inline constexpr sim::Duration log_work_interval = 30 * sim::seconds;
/// delay(100) in xfs_quiesce_attr's poll: 100 jiffies, 400 ms at HZ 250.
inline constexpr sim::Duration quiesce_poll_delay = 400 * sim::milliseconds;

/// l_covered_state (xfs_log_priv.h, v5.7): XLOG_STATE_COVER_IDLE, NEED, DONE,
/// NEED2, DONE2. xfs_log_need_covered moves NEED to DONE and NEED2 to DONE2
/// when it asks for a dummy transaction; xlog_state_clean_iclog moves the
/// state on when a log write completes (xlog_covered_state).
enum class CoverState : std::uint8_t { idle, need, done, need2, done2 };
[[nodiscard]] auto cover_state_name(CoverState state) -> const char*;

/// br_state, plus the delayed-allocation marker (isnullstartblock).
enum class ExtentState : std::uint8_t { delalloc, unwritten, normal };

/// struct xfs_bmbt_irec without br_startoff and br_blockcount, which are the
/// RangeMap segment: br_startblock and br_state.
struct Extent {
    ExtentState state = ExtentState::delalloc;
    std::uint64_t start_block = 0;  // disk block; 0 for delalloc

    [[nodiscard]] auto shifted(std::uint64_t blocks) const -> Extent {
        return state == ExtentState::delalloc ? *this : Extent{state, start_block + blocks};
    }
    auto operator==(const Extent&) const -> bool = default;
};

/// A block of the free-space map (the by-block free space btree).
struct Free {
    [[nodiscard]] auto shifted(std::uint64_t) const -> Free { return {}; }
    auto operator==(const Free&) const -> bool = default;
};

/// One record of a data fork, or a hole: [start, end) in file blocks.
struct Record {
    std::uint64_t start;
    std::uint64_t end;
    Extent extent;  // at `start`; meaningless for a hole
    bool hole = false;
};

/// The on-disk inode as an inode log item carries it: the core (di_size) and,
/// for an extents-format fork, every real extent (never a delalloc record).
struct InodeImage {
    bool exists = false;  // allocated (di_mode != 0): xfs_ifree clears it
    /// di_nlink. The model keeps no directories: a file's one name is in
    /// its directory while nlink is 1. xfs_remove's transaction logs nlink 0
    /// (xfs_droplink) and, in the same transaction, puts the inode on the
    /// AGI unlinked list (xfs_iunlink) and removes the name
    /// (xfs_dir_removename); xfs_inactive_ifree takes it off the list
    /// (xfs_iunlink_remove) in the transaction that frees it. So an
    /// allocated inode with nlink 0 is on the unlinked list, in every
    /// committed state (no O_TMPFILE, no links: left out).
    std::uint32_t nlink = 0;
    std::uint64_t di_size = 0;
    std::uint64_t extsize_blocks = 0;
    sim::RangeMap<Extent> extents;
};

/// One committed transaction as the log carries it.
struct LoggedTransaction {
    std::uint64_t id;
    const char* kind;  // "xfs_bmapi_convert_delalloc", ...
    std::vector<std::pair<std::uint32_t, InodeImage>> inodes;
    std::optional<sim::RangeMap<Free>> free_space;  // AGF and free-space btree buffers
    bool superblock = false;                         // xfs_log_sb: the superblock buffer
};

/// A CIL checkpoint written by one log force.
struct LogRecord {
    std::uint64_t lsn;
    std::vector<LoggedTransaction> transactions;
    bool unmount = false;  // xlog_unmount_write's record: no transactions
};

/// The metadata in place (superblock, AG headers, inodes, btrees): written at
/// mkfs and when the AIL pushes the log tail forward.
struct MetaState {
    std::uint64_t applied_lsn = 0;  // every record up to this one is in place
    std::vector<InodeImage> inodes;
    sim::RangeMap<Free> free_space;
};

using MetaObject = std::variant<MetaState, LogRecord>;

// Every member of the objects above, for the runner's verdict memo across
// schedules (model/metadata_store.hpp): a member added to them goes here too.
// None holds an object id; a transaction's kind is encoded by its text.
inline void encode_inode(KeyWords& out, const InodeImage& inode) {
    out.insert(out.end(), {std::uint64_t{inode.exists}, inode.nlink, inode.di_size, inode.extsize_blocks});
    encode_range_map(out, inode.extents, [&](const Extent& extent) {
        out.insert(out.end(), {static_cast<std::uint64_t>(extent.state), extent.start_block});
    });
}
inline void encode_free(KeyWords& out, const sim::RangeMap<Free>& free) {
    encode_range_map(out, free, [](const Free&) {});
}
inline void encode_object(KeyWords& out, const MetaState& meta) {
    out.push_back(meta.applied_lsn);
    out.push_back(meta.inodes.size());
    for (const InodeImage& inode : meta.inodes) encode_inode(out, inode);
    encode_free(out, meta.free_space);
}
inline void encode_transaction(KeyWords& out, const LoggedTransaction& transaction) {
    out.push_back(transaction.id);
    encode_string(out, transaction.kind == nullptr ? std::string_view{} : std::string_view{transaction.kind});
    out.push_back(transaction.kind == nullptr);
    out.push_back(transaction.inodes.size());
    for (const auto& [ino, inode] : transaction.inodes) {
        out.push_back(ino);
        encode_inode(out, inode);
    }
    out.push_back(transaction.free_space.has_value());
    if (transaction.free_space) encode_free(out, *transaction.free_space);
    out.push_back(transaction.superblock);
}
inline void encode_object(KeyWords& out, const LogRecord& record) {
    out.insert(out.end(), {record.lsn, std::uint64_t{record.unmount}, record.transactions.size()});
    for (const LoggedTransaction& transaction : record.transactions) encode_transaction(out, transaction);
}
template <typename T>
void object_references(const T&, std::vector<std::uint64_t>&) {}

/// The in-core inode.
struct Inode {
    bool exists = false;
    std::uint32_t nlink = 0;       // i_nlink: 1 from create, 0 after xfs_droplink
    std::uint64_t size_bytes = 0;  // i_size (VFS)
    std::uint64_t di_size = 0;     // ip->i_d.di_size: what the log carries
    std::uint64_t extsize_blocks = 0;
    sim::RangeMap<Extent> data_fork;  // i_df, delalloc records included
    std::uint64_t if_seq = 0;         // bumped on every fork change
    std::uint64_t last_commit_seq = 0;  // CIL checkpoint of the last transaction logging it
    bool writeback_error = false;       // mapping_set_error(AS_ENOSPC) by a failed writeback
    MappingErrors errors;               // wb_err and AS_EIO: data write I/O errors (faults.write_errors)
    sim::RwLock iolock{"IOLOCK"};     // i_rwsem (and MMAPLOCK, folded in)
    sim::RwLock ilock{"ILOCK"};
};

/// struct xfs_trans while it runs.
struct Transaction {
    std::uint64_t id = 0;
    const char* kind = "";
    std::vector<std::uint32_t> inodes;  // xfs_trans_log_inode
    bool free_space = false;            // xfs_alloc / xfs_free dirtied the AGF
    std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;  // blocks it freed
    bool holds_agf = false;  // the AGF buffer stays locked until commit or cancel
    bool no_writecount = false;  // XFS_TRANS_NO_WRITECOUNT: no sb_start_intwrite hold
    bool superblock = false;     // xfs_log_sb logged the superblock
    std::string op;                     // the operation it is counted against
};

/// struct iomap_ioend: contiguous pages, one mapping, one type.
struct Ioend {
    std::uint64_t id;
    std::uint32_t file;
    std::uint64_t start;   // file block
    std::uint64_t length;  // blocks
    std::uint64_t disk_block;
    bool unwritten;
    std::optional<Transaction> size_transaction;  // io_private: xfs_setfilesize_trans_alloc
    std::uint32_t bios_pending = 0;
    std::string op;
    std::uint64_t mapping_start = 0;  // the mapping it was cut from, for the story
    std::uint64_t mapping_end = 0;
    bool failed = false;  // a bio ended with EIO (chained bios fail the ioend's io_bio)
};

/// A block range freed by a transaction that may not be on disk yet: the
/// allocator must not hand it out before the freeing checkpoint is durable.
struct BusyExtent {
    std::uint64_t start;
    std::uint64_t end;
    std::uint64_t sequence;  // CIL checkpoint of the freeing transaction
};

struct OpCounters {
    std::uint64_t ops = 0;
    std::uint64_t transactions = 0;
    std::uint64_t data_ios = 0;
    std::uint64_t log_forces = 0;
};

struct Counters {
    std::uint64_t transactions = 0;  // committed with log items
    std::uint64_t transactions_cancelled = 0;
    std::uint64_t log_forces = 0;  // log records written
    std::uint64_t data_ios = 0;    // ioends submitted (one bio each in the kernel)
    std::uint64_t data_blocks_written = 0;
    std::uint64_t delalloc_conversions = 0;   // delalloc records allocated
    std::uint64_t unwritten_conversions = 0;  // xfs_iomap_write_unwritten transactions
    std::uint64_t size_updates = 0;           // xfs_setfilesize transactions
    std::uint64_t ioends_queued = 0;          // completions that went through the workqueue
    std::uint64_t ail_pushes = 0;
    std::uint64_t rolls = 0;                // xfs_trans_roll (xfs_trans_dup)
    std::uint64_t inode_chunks_allocated = 0;
    std::uint64_t inode_chunks_freed = 0;
    std::map<std::string, OpCounters> by_op;
};

/// A mapping xfs_map_blocks returns: a real extent record covering the page.
struct Mapping {
    std::uint64_t start;
    std::uint64_t end;
    Extent extent;  // at `start`
    [[nodiscard]] auto disk_block(std::uint64_t block) const -> std::uint64_t {
        return extent.start_block + (block - start);
    }
};

/// struct xfs_writepage_ctx: the cached mapping and the fork sequence it was read at.
struct WritepageCtx {
    std::optional<Mapping> imap;
    std::uint64_t data_seq = 0;
};

// Live locals' hashes (sim/live.hpp): the transactions, records, mappings,
// writeback contexts, ioends and CIL checkpoints a task keeps across a
// suspension, every member of each.
inline void hash_value(sim::StateHash& out, const Extent& extent) {
    out.add(static_cast<std::uint64_t>(extent.state));
    out.add(extent.start_block);
}
inline void hash_value(sim::StateHash& out, const Record& record) {
    for (const std::uint64_t word : {record.start, record.end, std::uint64_t{record.hole}}) out.add(word);
    hash_value(out, record.extent);
}
inline void hash_value(sim::StateHash& out, const Mapping& mapping) {
    out.add(mapping.start);
    out.add(mapping.end);
    hash_value(out, mapping.extent);
}
inline void hash_value(sim::StateHash& out, const WritepageCtx& wpc) {
    sim::hash_value(out, wpc.imap);
    out.add(wpc.data_seq);
}
inline void hash_value(sim::StateHash& out, const Transaction& tp) {
    out.add(tp.id);
    out.add(sim::hash_name(tp.kind));
    sim::hash_value(out, tp.inodes);
    sim::hash_value(out, tp.busy);
    out.add((tp.free_space ? 1U : 0U) | (tp.holds_agf ? 2U : 0U) | (tp.no_writecount ? 4U : 0U) |
            (tp.superblock ? 8U : 0U));
    out.add(sim::hash_name(tp.op));
}
inline void hash_value(sim::StateHash& out, const Ioend& ioend) {
    for (const std::uint64_t word : {ioend.id, std::uint64_t{ioend.file}, ioend.start, ioend.length,
                                     ioend.disk_block, std::uint64_t{ioend.bios_pending}, ioend.mapping_start,
                                     ioend.mapping_end}) {
        out.add(word);
    }
    out.add((ioend.unwritten ? 1U : 0U) | (ioend.failed ? 2U : 0U));
    sim::hash_value(out, ioend.size_transaction);
    out.add(sim::hash_name(ioend.op));
}
inline void hash_value(sim::StateHash& out, const LoggedTransaction& transaction) {
    KeyWords words;
    encode_transaction(words, transaction);
    out.add(sim::hash_words(words));
}

class Xfs final : public FileSystemBase<MetaObject> {
public:
    Xfs(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names);

    [[nodiscard]] auto clone() const -> std::unique_ptr<FileSystem> override;
    auto execute(const OpCall& call) -> OpResult override;
    [[nodiscard]] auto recover(const disk::Image& image) const -> RecoveredState override;
    [[nodiscard]] auto recover_with_writes(const disk::Image& image) -> Recovery override;
    [[nodiscard]] auto counters() const -> std::map<std::string, std::uint64_t> override;
    void reset_maxima() override { reset_counter_maxima(counter_table, counters_); }
    /// Every counter the model keeps, registered once (super.cpp).
    static const CounterTable<Xfs, Counters> counter_table;
    /// The log worker's kernel thread (l_work, armed at mount by
    /// xfs_log_work_queue), in every kernel: its wake-ups race the tasks
    /// within explore.daemon_wakeups.
    void start_daemons() override;
    /// The model's state per footprint resource, for visited states (fingerprint.cpp).
    auto hash_resources(sim::ResourceHashes& out) const -> bool override;
    [[nodiscard]] auto commuting_parts() const -> sim::Footprint override;

private:
    /// xlog_recover and the mount around it: recover() and
    /// recover_with_writes() share it; `recovered` (if given) receives the
    /// metadata with the log replayed into it, when any record was replayed.
    auto mount(const disk::Image& image, std::optional<MetaState>* recovered) const -> RecoveredState;
    // fingerprint.cpp: hash_resources' parts.
    void hash_inodes(sim::ResourceHashes& out) const;
    void hash_log(sim::ResourceHashes& out) const;
    void hash_io(sim::ResourceHashes& out) const;
    // file.cpp: the file operations
    /// The operation itself, between sb_start_write and sb_end_write; false:
    /// it returned an error. `short_write`: a write copied call.copied bytes only.
    auto run_op(const OpCall& call, std::uint64_t start, std::uint64_t end, bool& short_write) -> bool;
    [[nodiscard]] auto op_footprint(const OpCall& call) const -> sim::Footprint override;
    void create(std::uint32_t file);
    /// xfs_dialloc's inode for `file`: from the current chunk, or from a new
    /// one, which xfs_dir_ialloc commits and rolls (`tp` becomes the new handle).
    void dialloc(Transaction& tp, std::uint32_t file);
    /// xfs_remove then, at the last iput, xfs_inactive.
    void unlink(std::uint32_t file);
    void inactive(std::uint32_t file);
    auto fsync(std::uint32_t file) -> bool;
    auto sync_file_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool;
    auto fallocate(const OpCall& call, std::uint64_t start, std::uint64_t end) -> bool;
    void truncate(std::uint32_t file, std::uint64_t size_bytes);
    auto flush_unmap_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool;
    /// filemap_check_errors: a writeback error (AS_ENOSPC) is reported once, then cleared.
    auto check_writeback_error(std::uint32_t file, const std::string& who) -> bool;
    void free_file_space(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    auto alloc_file_space(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool;
    void update_prealloc_flags(std::uint32_t file);
    void setattr_size(std::uint32_t file, std::uint64_t size_bytes);
    void shutdown();
    // iomap.cpp: O_DIRECT writes, unwritten extents allocated over holes, and
    // their conversion once the I/O completed
    auto direct_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                      std::uint64_t version) -> bool;
    auto write_iomap_direct(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool;
    auto direct_write_mappings(std::uint32_t file, std::uint64_t start, std::uint64_t end, bool& unwritten)
        -> std::vector<Mapping>;
    void dio_write_end_io(std::uint32_t file, std::uint64_t offset, std::uint64_t length, bool unwritten);
    void iomap_write_unwritten(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    // aops.cpp: buffered writes, writeback, I/O completion
    /// The bytes copied (less than `length`: a short write; 0: an error).
    auto buffered_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                        std::uint64_t version) -> std::uint64_t;
    /// xfs_buffered_write_iomap_begin over [start, end) under IOLOCK: the
    /// block where the first mapping failed (`end` if none did) and the
    /// story's text for what was mapped.
    auto buffered_write_map(std::uint32_t file, std::uint64_t start, std::uint64_t end, std::string& mapped)
        -> std::uint64_t;
    /// xfs_bmapi_reserve_delalloc over the holes of [start, end), in order:
    /// the start of the first hole whose blocks xfs_mod_fdblocks refused
    /// (`end` if none); `reserved_any`: a hole was reserved.
    auto reserve_delalloc(std::uint32_t file, std::uint64_t start, std::uint64_t end, bool& reserved_any)
        -> std::uint64_t;
    /// m_fdblocks: free blocks less those delalloc records reserve.
    [[nodiscard]] auto fdblocks() const -> std::uint64_t { return free_blocks_ - delalloc_blocks_; }
    void flush_inodes();
    void writepages(std::uint32_t file, std::uint64_t start, std::uint64_t end, const char* who);
    auto map_blocks(WritepageCtx& wpc, std::uint32_t file, std::uint64_t block)
        -> std::optional<Mapping>;
    /// iomap_add_to_ioend: [page, chunk_end) of `mapping` joins `ioend`, or
    /// `ioend` is submitted and a new one holds it.
    void add_to_ioend(std::optional<Ioend>& ioend, std::uint32_t file, std::uint64_t page,
                      std::uint64_t chunk_end, const Mapping& mapping);
    void submit_ioend(Ioend ioend);
    void end_bio(std::uint64_t ioend_id, bool ok);
    /// The errseq part of file_write_and_wait_range and file_fdatawait_range
    /// (faults.write_errors only): false when it reports EIO to this open file.
    auto check_wb_err(std::uint32_t file, const std::string& who) -> bool;
    void end_ioend(std::uint64_t ioend_id);
    void finish_ioend_pages(const Ioend& ioend);
    void setfilesize(std::uint64_t ioend_id);
    struct SizeUpdate {
        std::uint64_t old_size;
        std::uint64_t new_size;
        std::uint64_t transaction;
    };
    /// __xfs_setfilesize: under ILOCK, di_size up to the I/O's end (never
    /// past i_size), committed in `tp`; nothing (tp cancelled) when di_size
    /// already covers it.
    auto update_di_size(Transaction tp, std::uint32_t file, std::uint64_t io_end)
        -> std::optional<SizeUpdate>;
    void wait_writeback(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    void write_and_wait(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                        const char* who);
    // bmap.cpp: the data fork and the allocator
    auto bmapi_convert_delalloc(std::uint32_t file, std::uint64_t block, std::uint64_t& seq)
        -> std::optional<Mapping>;
    auto bmapi_allocate_delalloc(Transaction& tp, std::uint32_t file, const Record& record)
        -> std::optional<Record>;
    auto bmapi_write_prealloc(Transaction& tp, std::uint32_t file, std::uint64_t block,
                              std::uint64_t end) -> std::optional<std::uint64_t>;
    auto bmapi_convert_unwritten(Transaction& tp, std::uint32_t file, std::uint64_t block,
                                 std::uint64_t end) -> std::uint64_t;
    auto bunmapi(Transaction& tp, std::uint32_t file, std::uint64_t start, std::uint64_t end)
        -> bool;
    /// `wasdel`: for a delalloc record, whose blocks are reserved already.
    auto alloc_extent(Transaction& tp, std::uint64_t length, bool wasdel)
        -> std::pair<std::uint64_t, std::uint64_t>;
    void lock_agf(Transaction& tp);
    void free_extent(Transaction& tp, std::uint64_t start, std::uint64_t count);
    void fork_changed(Transaction& tp, std::uint32_t file);
    [[nodiscard]] auto new_eof(std::uint32_t file, std::uint64_t new_size_bytes) const
        -> std::uint64_t;
    // log.cpp: transactions, the CIL, log forces, the AIL
    auto trans_alloc(const char* kind, bool no_writecount = false) -> std::optional<Transaction>;
    auto trans_commit(Transaction& tp) -> bool;
    void trans_cancel(Transaction& tp);
    /// xfs_trans_roll: xfs_trans_dup a new handle, commit the old; `tp`
    /// becomes the new handle.
    void trans_roll(Transaction& tp);
    /// atomic_inc/atomic_dec of m_active_trans (ActiveTrans::counter only):
    /// the count, and one access to its cache line.
    void active_trans_add(bool increment);
    /// xfs_trans_free: m_active_trans, sb_end_intwrite, the free event.
    void trans_free(const Transaction& tp);
    /// xfs_log_unmount_write: the unmount record, after everything before it.
    void log_unmount_write();
    // freeze.cpp: the log worker, xfs_sync_sb, freeze_super / xfs_fs_freeze,
    // thaw ("xfs: remove the m_active_trans counter")
    /// xfs_log_worker's body (L1..L3): the xfs-sync daemon runs it and
    /// re-arms (L4); the log_force op runs it from a task.
    void log_worker();
    /// xfs_log_need_covered, with its covering state transitions.
    auto log_need_covered() -> bool;
    /// Why xfs_log_need_covered says no, for the story ("" when it says yes).
    [[nodiscard]] auto cover_refusal() const -> std::string;
    /// xfs_sync_sb(mp, true); `in_trans`, if given, is yielded at with the
    /// transaction allocated. False when no transaction could be allocated.
    auto sync_sb(const char* who, const sim::YieldPoint* in_trans) -> bool;
    /// xfs_fs_writable(mp, level): not frozen at or past `level`, not shut down.
    [[nodiscard]] auto fs_writable(FreezeLevel level) const -> bool;
    auto freeze_super() -> bool;
    void sync_filesystem();
    void fs_freeze();
    void quiesce_attr();
    void quiesce_drain();
    void log_quiesce();
    auto thaw_super() -> bool;
    /// VFS write protection (sb_start_write) of the operations that modify.
    [[nodiscard]] static auto takes_write_protection(Op op) -> bool;
    void log_force(const char* why);
    auto log_force_seq(std::uint64_t sequence, const char* why) -> bool;
    auto push_cil(const char* why) -> bool;
    void push_ail();
    /// xfs_ail_min_lsn() == 0: every item a written record logged is in place.
    [[nodiscard]] auto ail_empty() const -> bool { return ail_lsn_ <= home_lsn_; }
    /// A log record is on disk (xlog_state_do_callback): its items enter the
    /// AIL (xfs_trans_committed_bulk) and the iclog is cleaned
    /// (xlog_state_clean_iclog), which moves the covering state.
    void log_write_done(std::uint64_t lsn, bool items, bool cover_record);
    auto store(MetaObject object) -> std::uint64_t { return meta_objects_.store(std::move(object)); }
    /// Reports parts of the state (points::parts()) as touched by the running
    /// step: what the transaction and log helpers change for their callers,
    /// whatever yield point the caller's stretch runs between.
    static void touch(const sim::Footprint& parts) {
        if (sim::has_current_scheduler()) sim::current_scheduler().touch(parts);
    }
    [[nodiscard]] auto image_of(std::uint32_t file) const -> InodeImage;
    // log_recover.cpp
    /// xlog_find_tail and xlog_recover over the metadata in place.
    /// True when it replayed at least one record.
    /// `recovery_needed`: XLOG_RECOVERY_NEEDED, the log's head is not its tail.
    auto replay_log(const disk::Image& image, MetaState& meta, RecoveredState& state,
                    bool& recovery_needed) const -> bool;
    /// xlog_recover_finish's xlog_recover_process_iunlinks over `meta`.
    void process_iunlinks(MetaState& meta, RecoveredState& state) const;
    static auto found_record(const LogRecord& record) -> LogRecordFound;
    /// xlog_verify_head over the torn records (lsn -> block): the head walks
    /// back before a torn record near it; false: the mount fails.
    auto trim_torn_head(const std::map<std::uint64_t, std::uint64_t>& torn, std::uint64_t tail,
                        std::uint64_t& head, RecoveredState& state) const -> bool;
    /// A file as a read after mount returns it.
    void read_file(const disk::Image& image, const InodeImage& inode,
                   RecoveredFile& recovered) const;
    void describe_file(const InodeImage& inode, std::uint32_t file, const disk::Image& image,
                       RecoveredState& state) const;
    void check_consistency(const MetaState& meta, RecoveredState& state) const;

    // Helpers shared by the files above (name() and bytes() are FileSystemBase's).
    /// File blocks [start, end) as model/story.hpp writes a byte range.
    [[nodiscard]] auto range_text(std::uint64_t start, std::uint64_t end) const -> std::string {
        return model::range_text(bytes(start), bytes(end));
    }
    [[nodiscard]] auto record_text(const Record& record) const -> std::string;
    [[nodiscard]] auto fork_text(const sim::RangeMap<Extent>& fork, std::uint64_t end) const
        -> std::string;
    [[nodiscard]] auto op_name() const -> std::string;
    auto op_counters() -> OpCounters& { return counters_.by_op[op_name()]; }

    Knobs knobs_;
    std::vector<Inode> inodes_;
    bool shutdown_ = false;
    SbWriters sb_;                      // sb->s_writers (model/freeze.hpp)
    sim::RwLock s_umount_{"s_umount"};  // sb->s_umount: freeze_super and thaw_super take it for write
    std::uint64_t active_trans_ = 0;    // mp->m_active_trans (ActiveTrans::counter only)
    /// The cache line of m_active_trans in struct xfs_mount.
    sim::CacheLine active_trans_line_{"m_active_trans line"};
    sim::Duration create_cost_ = cpu_cost::create;
    sim::Duration unlink_cost_ = cpu_cost::unlink;
    // Inode chunks (xfs_ialloc.c): the free inodes left in the chunk creates
    // take from, the chunk each inode came from, and each chunk's inodes in use.
    std::uint32_t chunk_free_ = first_chunk_free;
    std::vector<std::uint32_t> chunk_of_;
    std::vector<std::uint32_t> chunk_in_use_;
    DelayedWork log_work_{"l_work", log_work_interval};  // log->l_work

    // Layout: block 0 holds the metadata in place, then the internal log, then data.
    std::uint64_t log_start_ = 1;
    std::uint64_t log_blocks_ = 0;
    std::uint64_t data_start_ = 0;
    sim::RangeMap<Free> free_space_;  // in core
    std::vector<BusyExtent> busy_;
    // The superblock's free block counter: the blocks in
    // free_space_, and those the data forks' delalloc records reserve
    // (xfs_bmapi_reserve_delalloc's xfs_mod_fdblocks). Indirect-block
    // reservations (indlen) and m_alloc_set_aside are left out.
    std::uint64_t free_blocks_ = 0;
    std::uint64_t delalloc_blocks_ = 0;

    // The log: the CIL collects committed transactions; a force writes them.
    std::uint64_t next_transaction_id_ = 1;
    std::vector<LoggedTransaction> cil_;
    std::uint64_t cil_sequence_ = 1;      // checkpoint that collects commits now
    std::uint64_t durable_sequence_ = 0;  // newest checkpoint on stable storage
    std::uint64_t lsn_ = 0;               // newest log record written
    std::uint64_t home_lsn_ = 0;          // newest record the metadata in place reflects
    MetaState durable_meta_;              // metadata as of record lsn_
    std::uint64_t ail_lsn_ = 0;           // newest record whose items entered the AIL
    /// An iclog holds log ops (xlog_iclogs_empty is false): from the CIL
    /// push's xlog_write until the record's completion cleans it.
    bool iclogs_busy_ = false;
    CoverState covered_state_ = CoverState::idle;  // xlog_alloc_log: XLOG_STATE_COVER_IDLE
    sim::Mutex log_force_lock_{"xlog.force"};
    sim::Mutex agf_lock_{"AGF"};  // the AGF buffer lock: one allocating transaction at a time

    // I/O completion.
    std::vector<Ioend> ioends_;
    sim::WaitQueue writeback_wait_{"page.writeback"};
    /// The operation each running task executes, for per-operation counters.
    std::map<sim::TaskId, std::string> task_op_;
    OpenFiles open_files_;  // f_wb_err cursors (faults.write_errors only)
    Counters counters_;
};

/// Log recovery of one record: its transactions' items replace what they log.
void replay(MetaState& state, const LogRecord& record);

/// xfs_iext_lookup_extent: the record of `fork` that contains `block`, or the
/// hole around it (up to the next record, or whole_file_end).
auto lookup(const sim::RangeMap<Extent>& fork, std::uint64_t block) -> Record;

}  // namespace model::xfs
