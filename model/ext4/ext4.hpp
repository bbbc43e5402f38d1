#pragma once
// ext4 (fs/ext4/) on jbd2 (model/jbd2/jbd2.hpp), as far as the series
// "jbd2: fix checkpoint cleanup performance regression" needs it: a small
// ext4 (block groups, each with its block and inode bitmaps and inode table;
// the root directory and its subdirectories, whose blocks hold names; inodes
// in inode-table blocks; ordered-mode data, fsync that forces the running
// transaction's commit) on jbd2: handles (jbd2_journal_start/stop,
// do_get_write_access, jbd2_journal_dirty_metadata), the running and
// committing transactions, kjournald2's commit
// (jbd2_journal_commit_transaction, C1..C11), checkpoint lists and
// __jbd2_journal_clean_checkpoint_list, jbd2_log_do_checkpoint, the checkpoint
// shrinker, and recovery (fs/jbd2/recovery.c). Follows v6.5's fs/jbd2/
// checkpoint.c, commit.c, transaction.c and recovery.c; the knob selects the
// tree (model/ext4/super.cpp). The ext4 side follows fs/ext4 file by file
// (mkfs, super, inode, namei, ialloc, balloc, fsync); the journal's code is
// member functions of the same class, in model/jbd2/, by fs/jbd2's files.
//
// Left out on purpose: fast commit, async commit, checksums,
// data=journal, external journals, the shrinker's resume cursor, statistics,
// descriptor layout (one descriptor per transaction, unbounded tags), BH_Shadow
// waits (a frozen copy is taken when a committing transaction's buffer is
// re-logged, and the log copy is the content as of its submission),
// flex_bg (each group keeps its own bitmaps: mkfs.ext4 -O ^flex_bg), group
// descriptors and their free counts, the root directory's own inode (mkfs's,
// never re-logged), directories below the root's subdirectories, htree
// indexes, extents trees (a block map per inode), timestamps, the orphan list,
// the revoke hash's cancel (jbd2_journal_cancel_revoke: a block freed by a
// transaction is not reallocated before that transaction commits, so no
// running transaction re-logs a block it revoked), one revoke block per
// transaction (no r_count limit).
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/buffer_head.hpp"
#include "model/counter_table.hpp"
#include "model/filesystem.hpp"
#include "model/filesystem_base.hpp"
#include "model/jbd2/jbd2.hpp"
#include "model/jbd2/points.hpp"
#include "model/metadata_store.hpp"
#include "sim/fingerprint.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"

namespace model::ext4 {

using jbd2::CommitBlock;
using jbd2::Descriptor;
using jbd2::JournalSuper;
using jbd2::nr_batch;
using jbd2::RevokeBlock;
using jbd2::Transaction;
using jbd2::Tree;
using jbd2::TState;
namespace cpu_cost = jbd2::cpu_cost;
namespace points = jbd2::points;

enum class Op : OpId { create, write, fsync, checkpoint, shrink, mkdir, unlink, sync, rmdir };

struct Knobs {
    Tree tree = Tree::patch_2;
    /// mkfs.ext4 -J size= in bytes; 0: the model's scaled-down journal
    /// (device/8, 64..1024 blocks; super.cpp).
    std::uint64_t journal_bytes = 0;
    /// jbd2_journal_revoke writes revoke records (every real kernel); false
    /// is the knob's hypothetical value (super.cpp), which forgets a freed
    /// metadata buffer as ext4_forget does a data block's, with no record.
    bool revoke = true;
    /// __jbd2_journal_clean_checkpoint_list stops at the first busy buffer.
    [[nodiscard]] auto commit_busy_stop() const -> bool { return tree != Tree::v6_5; }
    /// jh->b_transaction makes a checkpoint buffer busy.
    [[nodiscard]] auto relogged_busy() const -> bool { return tree == Tree::v5_8 || tree == Tree::patch_2; }
    /// jbd2_journal_shrink_checkpoint_list exists (v5.16 on).
    [[nodiscard]] auto has_shrinker() const -> bool { return tree != Tree::v5_8; }
};

/// Geometry of the model's mkfs.
inline constexpr std::uint64_t inodes_per_block = 16;  // 256-byte inodes in 4 KiB
inline constexpr std::uint64_t names_per_dir_block = 64;
inline constexpr std::uint64_t inode_table_blocks = 64;  // per group
inline constexpr std::uint64_t inodes_per_group = inode_table_blocks * inodes_per_block;
inline constexpr std::uint64_t dir_blocks = 16;  // the root directory's, preallocated in group 0
inline constexpr sim::Duration commit_interval = 5 * sim::seconds;           // ext4 commit=5
inline constexpr sim::Duration dirty_writeback_interval = 5 * sim::seconds;  // dirty_writeback_centisecs
inline constexpr sim::Duration dirty_expire_interval = 30 * sim::seconds;    // dirty_expire_centisecs

struct InodeRecord {
    bool used = false;
    bool directory = false;  // S_IFDIR: its blocks hold names
    std::uint64_t size = 0;
    std::map<std::uint64_t, std::uint64_t> blocks;  // file block -> device block
    auto operator==(const InodeRecord&) const -> bool = default;
    /// A live local (sim/live.hpp): a copy free_inode keeps.
    friend void hash_value(sim::StateHash& out, const InodeRecord& record) {
        out.add((record.used ? 1U : 0U) | (record.directory ? 2U : 0U));
        out.add(record.size);
        out.add(record.blocks.size());
        for (const auto& [file_block, device_block] : record.blocks) {
            out.add(file_block);
            out.add(device_block);
        }
    }
};

enum class MetaKind : std::uint8_t { block_bitmap, inode_bitmap, inode_table, directory };

/// One metadata block's contents (b_data), at home or as a log copy.
struct MetaBlock {
    MetaKind kind = MetaKind::inode_table;
    std::uint64_t block = 0;                                     // home location
    std::uint64_t version = 0;                                   // changes made to it since mkfs
    std::vector<InodeRecord> inodes;                             // inode table
    std::vector<std::pair<std::string, std::uint64_t>> entries;  // directory: name, inode
    std::vector<bool> bits;                                      // bitmaps
    // The visited-state hash of the members above (hash_meta_blocks), kept
    // for `version`: every change bumps it (Ext4::modify) before the block
    // is hashed again, so a hash kept for the current version is current.
    mutable std::uint64_t hashed_version = ~std::uint64_t{0};
    mutable std::uint64_t content_hash = 0;
    // Its term in its map's MetaBlocksHash sum, while `in_sum`.
    mutable std::uint64_t counted = 0;
    mutable bool in_sum = false;
};

/// The visited-state hash of a map of metadata blocks, kept as its entries
/// change: an order-independent sum of one term per block, recomputed only
/// for the blocks noted since the last hash (walking a few hundred blocks at
/// every decision was a fifth of a jbd2 search's time). Whoever changes a
/// map notes the block (Ext4::modify, the bitmap updates, insertions) or
/// forgets an entry before erasing or replacing it.
struct MetaBlocksHash {
    std::uint64_t sum = 0;
    bool primed = false;  // sum covers the whole map (the first hash primes it)
    std::vector<std::uint64_t> changed;
    void note(std::uint64_t block) {
        if (primed) changed.push_back(block);
    }
    void forget(const MetaBlock& meta) {
        if (meta.in_sum) sum -= meta.counted;
        meta.in_sum = false;
    }
    /// Adds `meta`'s term, which it keeps for forget().
    void count(const MetaBlock& meta, std::uint64_t term) {
        meta.counted = term;
        meta.in_sum = true;
        sum += term;
    }
};

using MetaObject = std::variant<JournalSuper, Descriptor, MetaBlock, CommitBlock, RevokeBlock>;

// Every member of a MetaBlock, for the runner's verdict memo across schedules
// (model/metadata_store.hpp); the journal's blocks encode in model/jbd2/jbd2.hpp.
inline void encode_object(KeyWords& out, const MetaBlock& meta) {
    out.insert(out.end(),
               {static_cast<std::uint64_t>(meta.kind), meta.block, meta.version, meta.inodes.size()});
    for (const InodeRecord& inode : meta.inodes) {
        out.insert(out.end(), {std::uint64_t{inode.used}, std::uint64_t{inode.directory}, inode.size,
                               inode.blocks.size()});
        for (const auto& [file_block, device_block] : inode.blocks)
            out.insert(out.end(), {file_block, device_block});
    }
    out.push_back(meta.entries.size());
    for (const auto& [name, ino] : meta.entries) {
        encode_string(out, name);
        out.push_back(ino);
    }
    encode_bits(out, meta.bits);
}
template <typename T>
void object_references(const T&, std::vector<std::uint64_t>&) {}

/// One block group (fs/ext4/ext4.h struct ext4_group_desc without flex_bg):
/// its block bitmap, inode bitmap and inode table at its start, then data.
struct Group {
    std::uint64_t block_bitmap = 0;
    std::uint64_t inode_bitmap = 0;
    std::uint64_t inode_table = 0;
    std::uint64_t data_start = 0;  // group 0: after the root directory's blocks
    std::uint64_t data_end = 0;
    std::uint64_t used_dirs = 0;  // bg_used_dirs_count (find_group_orlov)
};

/// A subdirectory of the root: its inode and its blocks (ext4_append).
struct Directory {
    std::uint64_t ino = 0;
    std::vector<std::uint64_t> blocks;
    /// S_DEAD: removed by rmdir; a lookup in it fails (ENOENT). The entry
    /// stays so that a task waiting for its lock still finds it.
    bool dead = false;
    /// The directory inode's i_rwsem: create, unlink and rmdir in it hold it
    /// (inode_lock in open_last_lookups, do_unlinkat, do_rmdir's vfs_rmdir).
    sim::Mutex i_rwsem{"ext4.i_rwsem"};
};
/// A live local that points at a directory (sim/live.hpp): whether it
/// names one, and its inode.
inline void hash_value(sim::StateHash& out, const Directory* dir) {
    out.add(dir == nullptr ? 0 : 1 + dir->ino);
}

/// The in-core inode.
struct Inode {
    std::uint64_t ino = 0;                               // 0: not created
    std::map<std::uint64_t, disk::Content> dirty_pages;  // file block -> contents not yet written
    std::uint64_t i_sync_tid = 0;
};

struct Counters {
    std::uint64_t transactions = 0;
    std::uint64_t commits = 0;
    std::uint64_t cp_scan_steps = 0;      // journal_shrink_one_cp_list iterations at commit (C2)
    std::uint64_t cp_scan_longest = 0;    // the most one commit's cleanup visited
    std::uint64_t shrink_scan_steps = 0;  // and in the shrinker
    std::uint64_t checkpoint_writes = 0;  // buffers written home by jbd2_log_do_checkpoint
    std::uint64_t flusher_writes = 0;     // buffers written home by background writeback
    std::uint64_t tail_updates = 0;       // journal superblock writes
    std::uint64_t transactions_dropped = 0;
    std::map<std::string, std::uint64_t> ops;
};

/// Tests: every metadata block hash kept for its version, and the device's
/// durable-blocks hash, is recomputed and must agree (a change that did not
/// bump `version` is a model defect).
void verify_meta_block_hashes(bool on);

class Ext4 final : public FileSystemBase<MetaObject> {
public:
    Ext4(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names);

    [[nodiscard]] auto clone() const -> std::unique_ptr<FileSystem> override;
    /// The metadata blocks' sums (live_hash_, frozen_hash_) and the device's.
    void keep_state_hashes() override;
    void start_daemons() override;
    auto execute(const OpCall& call) -> OpResult override;
    [[nodiscard]] auto recover(const disk::Image& image) const -> RecoveredState override;
    [[nodiscard]] auto recover_with_writes(const disk::Image& image) -> Recovery override;
    [[nodiscard]] auto counters() const -> std::map<std::string, std::uint64_t> override;
    void reset_maxima() override { reset_counter_maxima(counter_table, counters_); }
    /// Every counter the model keeps, registered once (super.cpp).
    static const CounterTable<Ext4, Counters> counter_table;
    auto hash_resources(sim::ResourceHashes& out) const -> bool override;
    [[nodiscard]] auto commuting_parts() const -> sim::Footprint override;

    /// Layout: superblock, journal superblock, log, then the block groups.
    static auto journal_length(std::uint32_t block_size, std::uint64_t device_blocks,
                               std::uint64_t journal_bytes) -> std::uint64_t;
    /// The data blocks of every group (what a workload's data may fill).
    static auto data_blocks(std::uint32_t block_size, std::uint64_t device_blocks,
                            std::uint64_t journal_bytes) -> std::uint64_t;
    static auto make_groups(std::uint32_t block_size, std::uint64_t device_blocks, std::uint64_t groups_start)
        -> std::vector<Group>;

private:
    // fingerprint.cpp: hash_resources' parts.
    void hash_journal(sim::ResourceHashes& out) const;
    void hash_buffers(sim::ResourceHashes& out) const;
    // super.cpp: the entry point and the mount
    [[nodiscard]] auto op_footprint(const OpCall& call) const -> sim::Footprint override;
    auto file_op(const OpCall& call) -> OpResult;
    // mkfs.cpp, namei.cpp, ialloc.cpp, balloc.cpp, inode.cpp, fsync.cpp
    void format_groups();
    void create(std::uint32_t file);
    void mkdir(std::uint32_t file);
    void unlink(std::uint32_t file);
    auto rmdir(std::uint32_t file) -> bool;
    void remove_entry(std::uint64_t tid, Directory* dir, const std::string& leaf);
    void free_inode(std::uint64_t tid, std::uint64_t ino);
    void free_blocks(std::uint64_t tid, const std::map<std::uint64_t, std::uint64_t>& blocks, bool metadata);
    void release_freed_blocks(std::uint64_t tid);
    /// The directory a name lives in: a subdirectory "dD/..." or the root (nullptr).
    [[nodiscard]] auto parent_of(const std::string& path) -> Directory*;
    /// A live subdirectory of the root by name (nullptr: none, or removed).
    [[nodiscard]] auto live_dir(const std::string& path) -> Directory*;
    auto add_entry(std::uint64_t tid, Directory* dir, const std::string& leaf, std::uint64_t ino) -> bool;
    auto append_dir_block(std::uint64_t tid, Directory& dir) -> bool;
    auto new_inode(std::uint64_t tid, std::uint64_t group, bool directory) -> std::uint64_t;
    auto new_blocks(std::uint64_t tid, std::uint64_t goal_group, std::uint64_t count)
        -> std::vector<std::uint64_t>;
    [[nodiscard]] auto find_group_orlov() const -> std::uint64_t;
    [[nodiscard]] auto find_group_other(std::uint64_t parent_group) const -> std::uint64_t;
    [[nodiscard]] auto is_static_meta(std::uint64_t block) const -> bool;
    [[nodiscard]] auto group_of_block(std::uint64_t block) const -> std::uint64_t;
    /// The bytes copied: `call.length`, fewer (a short write), or 0
    /// (-ENOSPC, nothing changed).
    auto write(const OpCall& call) -> std::uint64_t;
    /// Writes the call's blocks from `from` on: the block it stopped at
    /// (the first hole it found no block for), or the range's end.
    auto map_holes(const OpCall& call, std::uint64_t tid, const BlockRange& range,
                   std::map<std::uint64_t, std::uint64_t>& allocated) -> std::optional<std::uint64_t>;
    auto write_once(const OpCall& call, std::uint64_t from) -> std::uint64_t;
    auto should_retry_alloc(int& retries) -> bool;
    [[nodiscard]] auto free_blocks() const -> std::uint64_t;
    /// The block `bit` of group `g` is free to ext4_mb_new_blocks.
    [[nodiscard]] auto allocatable(std::uint64_t g, std::uint64_t bit) const -> bool;
    /// How many of `count` blocks new_blocks would find.
    [[nodiscard]] auto allocatable_blocks(std::uint64_t count) const -> std::uint64_t;
    void fsync(std::uint32_t file);
    void sync();
    void sync_fs();
    [[nodiscard]] auto trans_will_send_data_barrier(std::uint64_t tid) const -> bool;
    auto write_pages(std::uint32_t file) -> std::uint64_t;  // submits, returns the count
    void wait_data();
    auto modify(std::uint64_t tid, std::uint64_t block) -> MetaBlock&;
    [[nodiscard]] auto inode_block(std::uint64_t ino) const -> std::uint64_t;
    [[nodiscard]] auto block_name(std::uint64_t block) const -> std::string;
    // model/jbd2/transaction.cpp, revoke.cpp, journal.cpp: handles and commit requests
    auto journal_start() -> std::uint64_t;
    void journal_stop(std::uint64_t tid);
    void do_get_write_access(std::uint64_t tid, std::uint64_t block);
    /// b_frozen_data: a copy of the block for the committing transaction.
    void freeze(std::uint64_t block);
    void dirty_metadata(std::uint64_t tid, std::uint64_t block);
    void journal_revoke(std::uint64_t tid, std::uint64_t block);
    void journal_forget(std::uint64_t tid, std::uint64_t block);
    void log_start_commit(std::uint64_t tid);
    void log_wait_commit(std::uint64_t tid);
    void complete_transaction(std::uint64_t tid);
    void log_wait_for_space();
    [[nodiscard]] auto log_space_left() const -> std::uint64_t;
    // model/jbd2/commit.cpp: kjournald2, commit_timer (journal.cpp), the flusher (super.cpp)
    void kjournald2();
    void commit_timer();
    void commit_transaction();
    /// The log writes of one commit in flight (C5..C7).
    struct LogWrites {
        std::uint64_t in_flight = 0;
        sim::WaitQueue wait{"jbd2.log_io", sim::Footprint{}};
        /// A live local of the commit (sim/live.hpp): the writes in flight.
        friend void hash_value(sim::StateHash& out, const LogWrites& log) { out.add(log.in_flight); }
    };
    /// The log tail taken at C6 and applied at C9 (jbd2_update_log_tail).
    struct TailSnapshot {
        bool update = false;
        std::uint64_t tid = 0;
        std::uint64_t block = 0;
        friend void hash_value(sim::StateHash& out, const TailSnapshot& tail) {
            out.add_bool(tail.update);
            out.add(tail.tid);
            out.add(tail.block);
        }
    };
    void commit_lock_updates(std::uint64_t tid);
    void commit_switch_running(std::uint64_t tid);
    void commit_refile_reserved(std::uint64_t tid);
    auto commit_submit_data(std::uint64_t tid) -> std::uint64_t;
    void commit_wait_data(std::uint64_t data);
    void submit_log_block(LogWrites& log, disk::Content content);
    void write_log_copies(std::uint64_t tid, const std::vector<std::uint64_t>& buffers, LogWrites& log);
    auto commit_tail_snapshot() -> TailSnapshot;
    void write_commit_block(std::uint64_t tid);
    void write_revoke_records(std::uint64_t tid, LogWrites& log);
    void commit_forget_list(std::uint64_t tid, const std::vector<std::uint64_t>& buffers);
    void refile_buffer(std::uint64_t block);
    void commit_finish(std::uint64_t tid, std::size_t buffers);
    // model/jbd2/checkpoint.cpp; the log tail in journal.cpp
    enum class ShrinkType : std::uint8_t { destroy, busy_stop, busy_skip };
    auto try_remove_checkpoint(std::uint64_t block) -> int;
    auto remove_checkpoint(std::uint64_t block) -> bool;
    void drop_transaction(std::uint64_t tid);
    void insert_checkpoint(std::uint64_t block, std::uint64_t tid);
    auto shrink_one_cp_list(std::uint64_t tid, ShrinkType type, bool& released, std::uint64_t& scanned)
        -> std::uint64_t;
    void clean_checkpoint_list();
    void shrink_checkpoint_list();
    void shrink_pass(std::uint64_t& nr_to_scan, std::uint64_t& scanned);
    auto do_checkpoint() -> int;
    /// How one walk of a checkpoint list ends: jbd2_log_do_checkpoint's
    /// `goto restart` (locks were dropped), the transaction is done, or the
    /// walk reached the end of the list (`restart2`).
    enum class CheckpointPass : std::uint8_t { restart, done, list_end };
    auto checkpoint_pass(std::uint64_t this_tid, std::vector<std::uint64_t>& batch) -> CheckpointPass;
    void force_relogged_commit(std::uint64_t block, std::vector<std::uint64_t>& batch);
    void flush_batch(std::vector<std::uint64_t>& batch);
    auto cleanup_journal_tail() -> int;
    auto get_log_tail(std::uint64_t& tid, std::uint64_t& block) const -> bool;
    void update_log_tail(std::uint64_t tid, std::uint64_t block);
    void write_dirty_buffer(std::uint64_t block, const char* who);
    void flusher();
    // model/jbd2/recovery.cpp; mount and recover_names in super.cpp
    /// A transaction PASS_SCAN found complete at a log position.
    struct LoggedTransaction {
        std::uint64_t sequence = 0;
        std::vector<std::pair<const MetaBlock*, disk::Content>> copies;  // the copy, as the log holds it
        std::vector<std::uint64_t> revoked;                              // its revoke block's records
        std::uint64_t next = 0;  // the log block after its commit block
    };
    /// What jbd2_journal_recover leaves to write: the buffers PASS_REPLAY
    /// dirtied (the last logged copy of each home block wins) and
    /// info.end_transaction, the sequence the log restarts at.
    /// A mount's view of the metadata blocks: each block's contents after
    /// replay, pointing into meta_objects_ (stored objects never change, and a
    /// mount stores none), so a mount copies no block.
    using HomeBlocks = std::map<std::uint64_t, const MetaBlock*>;
    struct ReplayPlan {
        bool needed = false;                                                    // s_start != 0
        std::map<std::uint64_t, std::pair<disk::Content, std::uint64_t>> home;  // block -> copy, its sequence
        std::uint64_t end_transaction = 0;
    };
    [[nodiscard]] auto mount(const disk::Image& image, ReplayPlan* plan) const -> RecoveredState;
    [[nodiscard]] auto read_transaction(const disk::Image& image, std::uint64_t at,
                                        std::uint64_t sequence) const -> std::optional<LoggedTransaction>;
    /// PASS_REVOKE and PASS_REPLAY into `home` and `replayed` (the content
    /// replay leaves in each block it wrote).
    void recover_journal(const disk::Image& image, HomeBlocks& home,
                         std::map<std::uint64_t, disk::Content>& replayed, RecoveredState& state,
                         ReplayPlan* plan) const;
    [[nodiscard]] auto scan_pass(const disk::Image& image, const JournalSuper& super,
                                 RecoveredState& state) const -> std::vector<LoggedTransaction>;
    [[nodiscard]] static auto revoke_pass(const std::vector<LoggedTransaction>& replay)
        -> std::map<std::uint64_t, std::uint64_t>;
    static auto replay_pass(const std::vector<LoggedTransaction>& replay,
                            const std::map<std::uint64_t, std::uint64_t>& revoked, HomeBlocks& home,
                            std::map<std::uint64_t, disk::Content>& replayed, ReplayPlan* plan)
        -> std::uint64_t;
    void audit_names(const disk::Image& image, const HomeBlocks& home, JournalAudit& audit) const;
    [[nodiscard]] auto journal_audit(const disk::Image& image, const JournalSuper& super,
                                     const std::vector<LoggedTransaction>& replay) const -> JournalAudit;
    [[nodiscard]] auto home_block(const disk::Image& image, std::uint64_t block) const -> const MetaBlock*;
    [[nodiscard]] auto block_free(const HomeBlocks& home, std::uint64_t device_block) const -> bool;
    void recover_file(const disk::Image& image, const std::map<std::uint64_t, disk::Content>& replayed,
                      const InodeRecord& record, RecoveredFile& recovered) const;
    void recover_names(const disk::Image& image, const HomeBlocks& home,
                       const std::map<std::uint64_t, disk::Content>& replayed, RecoveredState& state,
                       std::set<std::uint64_t>& dir_blocks) const;

    /// Covers the running task's stretch to its next yield point with `names`
    /// (points.hpp; sim::cover): a stretch no yield point's declaration covers,
    /// whose steps that end at a wait or at the task's end touch them.
    static void cover(std::initializer_list<std::string_view> names) {
        if (sim::has_current_scheduler()) sim::current_scheduler().cover(footprint_of(names));
    }
    /// sim::Scheduler::touch_to_next_point of the parts `names`.
    static void touch_to_next_point(std::initializer_list<std::string_view> names) {
        if (sim::has_current_scheduler()) sim::current_scheduler().touch_to_next_point(footprint_of(names));
    }
    static auto footprint_of(std::initializer_list<std::string_view> names) -> sim::Footprint {
        sim::Footprint footprint;
        for (const std::string_view name : names) footprint |= sim::resource(name);
        return footprint;
    }
    auto store(MetaObject object) -> disk::Content {
        return disk::Content::meta(meta_objects_.store(std::move(object)));
    }
    [[nodiscard]] auto log_next(std::uint64_t block) const -> std::uint64_t {
        return block + 1 == j_last_ ? j_first_ : block + 1;
    }
    [[nodiscard]] auto tx(std::uint64_t tid) -> Transaction& { return transactions_.at(tid); }
    [[nodiscard]] auto op_name() const -> std::string;

    Knobs knobs_;
    sim::Duration cp_scan_step_cost_ = cpu_cost::cp_scan_step;
    // Layout.
    std::uint64_t j_first_ = 2;  // block 0: ext4's own superblock (static), 1: journal superblock
    std::uint64_t j_last_ = 0;
    std::uint64_t dir_start_ = 0;  // the root directory's blocks, in group 0
    std::vector<Group> groups_;
    std::map<std::string, Directory> dirs_;      // the root's subdirectories, by name
    std::uint64_t max_transaction_buffers_ = 0;  // j_max_transaction_buffers

    // The buffer cache and what each metadata buffer holds (b_data); frozen
    // copies (b_frozen_data) of buffers a running transaction re-logged while
    // the committing one owned them.
    BufferCache bcache_;
    std::map<std::uint64_t, MetaBlock> live_;
    std::map<std::uint64_t, MetaBlock> frozen_;
    mutable MetaBlocksHash live_hash_;
    mutable MetaBlocksHash frozen_hash_;
    std::vector<Inode> inodes_;  // by file id
    // Blocks freed by a transaction not yet committed, by tid: cleared in the
    // block bitmap buffer, not yet reusable (ext4_mb_free_metadata: with
    // data=ordered the buddy gets them back in the commit callback,
    // ext4_process_freed_data).
    std::map<std::uint64_t, std::vector<std::uint64_t>> freed_pending_;
    std::map<std::uint64_t, std::uint64_t> freed_pending_tid_;  // block -> tid
    // Blocks the buddy handed out whose bit an allocator waiting for write
    // access has not yet set in the block bitmap buffer (mb_mark_used).
    std::set<std::uint64_t> buddy_used_;
    std::vector<disk::Content> initial_;  // what mkfs wrote, by metadata block - inode bitmap start

    // journal_t.
    std::map<std::uint64_t, Transaction> transactions_;  // alive, by tid
    std::uint64_t running_ = 0;
    std::uint64_t committing_ = 0;
    std::vector<std::uint64_t> checkpoint_transactions_;  // oldest first
    std::uint64_t j_shrink_transaction_ = 0;              // the shrinker's resume cursor (0: none)
    std::uint64_t j_head_ = 0;
    std::uint64_t j_tail_ = 0;
    std::uint64_t j_tail_sequence_ = 1;
    std::uint64_t j_transaction_sequence_ = 1;  // next tid
    std::uint64_t j_commit_sequence_ = 0;
    std::uint64_t j_commit_request_ = 0;
    sim::Mutex j_list_lock_{"j_list_lock"};
    sim::Mutex j_checkpoint_mutex_{"j_checkpoint_mutex"};
    sim::WaitQueue j_wait_commit_{"j_wait_commit"};
    sim::WaitQueue j_wait_done_commit_{"j_wait_done_commit"};
    sim::WaitQueue j_wait_updates_{"j_wait_updates"};
    sim::WaitQueue j_wait_transaction_locked_{"j_wait_transaction_locked"};
    sim::WaitQueue data_wait_{"ext4.data_io"};
    std::uint64_t data_in_flight_ = 0;
    bool kjournald2_running_ = false;

    std::map<sim::TaskId, std::string> task_op_;
    Counters counters_;
};

}  // namespace model::ext4
