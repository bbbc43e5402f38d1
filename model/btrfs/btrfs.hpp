#pragma once
// btrfs data path, as far as "btrfs: fix race between page release and a fast fsync" needs
// it: buffered writes and delalloc, writeback that creates a pinned extent map
// and an ordered extent, ordered-extent completion (btrfs_finish_ordered_io)
// that inserts the file extent item and unpins the extent map, page release
// (btrfs_releasepage -> try_release_extent_mapping), fsync with its fast path
// (log the list of modified extents) and full path (copy every item of the
// inode, with checksum lookups), the per-root log tree and its commit,
// transaction commit, and log replay at mount. Follows fs/btrfs/extent_io.c,
// extent_map.c, file.c, tree-log.c, ordered-data.c and transaction.c of v5.7.
//
// Left out on purpose: compression, NOCOW, prealloc and
// reflink; xattrs, directories and new names; hole items
// (NO_HOLES); delayed refs and metadata space reservation (data space is
// reserved: delalloc-space.cpp); several subvolumes; the log
// root tree as a separate level. A transaction commit and a log commit never
// overlap. Every tree is written as one metadata block per commit.
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "model/counter_table.hpp"
#include "model/cpu_cost.hpp"
#include "model/disk/block_device.hpp"
#include "model/filesystem.hpp"
#include "model/filesystem_base.hpp"
#include "model/metadata_store.hpp"
#include "model/page_cache.hpp"
#include "model/reclaim.hpp"
#include "model/story.hpp"
#include "sim/range_map.hpp"
#include "sim/sync.hpp"

namespace model::btrfs {

inline constexpr std::uint64_t generation_pinned = ~std::uint64_t{0};  // (u64)-1 while pinned
inline constexpr std::uint64_t release_gate_bytes = 16 * 1024 * 1024;   // SZ_16M
inline constexpr std::uint64_t extent_blocks_max = 32768;              // 128 MiB of 4 KiB
// btrfs_log_changed_extents gives up (-EFBIG, a transaction commit instead)
// once its count passes this ("just an arbitrary number" in tree-log.c).
inline constexpr std::uint64_t log_changed_extents_max = 32768;

/// CPU time of the code paths, charged only in performance runs (sim::cpu).
/// Order-of-magnitude figures for a 2020s x86 core (the page copy of a
/// buffered write and an O_DIRECT write's set-up are model/cpu_cost.hpp's,
/// shared with xfs): btrfs_sync_file's entry and writeback start;
/// btrfs_log_inode's btree searches and item copies for a few items; one
/// checksum-tree lookup; the leader's log-commit bookkeeping.
namespace cpu_cost {
inline constexpr sim::Duration fsync_entry = 30 * sim::microseconds;
inline constexpr sim::Duration log_inode = 120 * sim::microseconds;
inline constexpr sim::Duration checksum_lookup = 2 * sim::microseconds;
inline constexpr sim::Duration log_commit = 40 * sim::microseconds;
// btrfs_csum_file_blocks for one ordered extent: search the checksum tree,
// COW and fill (or split) a leaf, all under the leaf's write lock.
inline constexpr sim::Duration checksum_insert = 12 * sim::microseconds;
// copy_items: one item copied from the subvolume tree into the log.
inline constexpr sim::Duration copy_item = 1 * sim::microseconds;
// log_csums: one extent's checksums inserted into the log tree (a search and
// a leaf insert, under the log tree's write lock).
inline constexpr sim::Duration log_checksums = 6 * sim::microseconds;
// btrfs_search_slot at one internal node of the checksum tree: a binary
// search over up to ~500 key pointers of an extent buffer (about 9 key
// comparisons through read_extent_buffer), then locking the child.
inline constexpr sim::Duration btree_node_search = 200;  // ns
}  // namespace cpu_cost

/// The CPU costs above as a run uses them: each may be set by a scenario
/// (`"costs": {"copy_item_ns": ...}`, listed by `crashsim list`) and swept
/// by `perf --vary copy_item_ns=...`, so a reader sees how far a ratio
/// depends on an order-of-magnitude figure.
struct Costs {
    sim::Duration fsync_entry;
    sim::Duration log_inode;
    sim::Duration checksum_lookup;
    sim::Duration log_commit;
    sim::Duration checksum_insert;
    sim::Duration copy_item;
    sim::Duration log_checksums;
    sim::Duration btree_node_search;
    /// The scenario's figures over the defaults above.
    static auto from(const Geometry& geometry) -> Costs;
};

/// The checksum tree (csum root) as leaves of csum items keyed by disk
/// bytenr, each leaf and each internal node with its own extent buffer lock
/// (v5.7: btrfs_tree_read_lock / btrfs_tree_lock, reader-preferring). Patch
/// 3/3 of "btrfs: fix race between page release and a fast fsync" names this tree: full
/// fsyncs look up checksums (btrfs_lookup_csums_range from copy_items) while
/// ordered-extent completions of other inodes insert them
/// (btrfs_csum_file_blocks), and "the contention on the checksums btree
/// locks" is where the two touch the same leaves and nodes.
///
/// Leaf capacity, derived (ctree.h, file-item.c of v5.7): a leaf of nodesize
/// bytes has a 101-byte header (struct btrfs_header), so
/// BTRFS_LEAF_DATA_SIZE = nodesize - 101 = 16,283 bytes at the default 16 KiB
/// nodesize. A csum item costs a 25-byte struct btrfs_item (17-byte key,
/// offset, size) plus 4 bytes of crc32c per 4 KiB sector it covers.
/// btrfs_csum_file_blocks extends the item that ends where the new sums
/// start (btrfs_lookup_csum's -EFBIG) while the leaf has room and the item
/// stays under MAX_CSUM_ITEMS ((16,283 - 2 * 25) / 4 - 1 = 4,057 sums), else
/// inserts a new item. So one job's contiguous extents fill a leaf with
/// about 4,000 sums (15.9 MiB of data); interleaved 64 KiB ordered extents
/// of several jobs that complete out of disk order make one item of 16 sums
/// each, 25 + 64 = 89 bytes: 16,283 / 89 = 182 items, 11.4 MiB of data per
/// leaf. An internal node holds (nodesize - 101) / 33 key pointers (a
/// 17-byte key, an 8-byte block pointer and an 8-byte generation): 493.
/// Inserting past a leaf's last item when it is full starts a new leaf
/// (split_leaf at the last slot); inserting inside it splits it in half.
/// The log tree's csum items (log_csums -> btrfs_csum_file_blocks on the log
/// root) are a tree of the same shape, freed at transaction commit.
/// COW (should_cow_block, ctree.c v5.7): a block not yet copied since the
/// tree's blocks were last written (`generation`: the checksum tree's at each
/// transaction commit, the log tree's at each log commit, which sets
/// BTRFS_HEADER_FLAG_WRITTEN) is copied by the first search with cow set,
/// which must hold it and its parent write-locked: btrfs_search_slot raises
/// write_lock_level to the block's level + 1 and searches again.
/// Left out: node splits, readahead.
struct CsumTree {
    static constexpr std::uint32_t header_bytes = 101;   // struct btrfs_header
    static constexpr std::uint32_t item_bytes = 25;      // struct btrfs_item
    static constexpr std::uint32_t csum_bytes = 4;       // crc32c per sector
    static constexpr std::uint32_t key_ptr_bytes = 33;   // struct btrfs_key_ptr
    struct Leaf {
        std::uint64_t first;                      // lowest disk block it may hold
        std::map<std::uint64_t, std::uint64_t> items;  // disk block -> sums in the item
        std::uint32_t used = 0;                   // bytes of items and their data
        std::uint64_t cowed = 0;                  // `generation` it was last copied in
        sim::RwLock lock;
        Leaf(std::uint64_t first_in, sim::Footprint footprint)
            : first(first_in), lock("csum_leaf.lock", footprint, sim::RwLock::Preference::readers) {}
    };
    CsumTree(std::uint32_t nodesize, const char* footprint_name);
    CsumTree(const CsumTree& other);
    auto operator=(const CsumTree&) -> CsumTree& = delete;
    /// Index of the leaf whose key range holds `block`.
    [[nodiscard]] auto leaf_index(std::uint64_t block) const -> std::size_t;
    /// Levels above the leaves (0: the root is a leaf).
    [[nodiscard]] auto node_levels() const -> std::uint32_t;
    struct Node {
        sim::RwLock lock;
        std::uint64_t cowed;  // `generation` it was last copied in
    };
    /// The internal node at `level` above leaf `leaf`.
    auto node(std::uint32_t level, std::size_t leaf) -> Node&;
    /// True when an item at `block` already holds its sums (btrfs_lookup_csum
    /// finds it: btrfs_csum_file_blocks overwrites them in place).
    [[nodiscard]] auto holds(std::uint64_t block) const -> bool;
    /// Puts `count` sums at `block` into the leaf that holds it, extending
    /// the item that ends there or adding one, splitting a full leaf.
    void insert(std::uint64_t block, std::uint64_t count);
    /// An empty tree (a log tree freed at transaction commit); no lock held.
    void clear();

    std::uint32_t leaf_data_bytes;
    std::uint32_t node_fanout;
    sim::Footprint footprint;
    std::uint64_t generation = 1;  // blocks copied in it need no COW
    std::vector<std::unique_ptr<Leaf>> leaves;  // by first key
    std::map<std::pair<std::uint32_t, std::size_t>, Node> nodes;  // (level, index)
};

/// The operations a scenario may run, in the order of the model's op table
/// (model/btrfs/super.cpp); execute() switches on them.
enum class Op : OpId { create, write, writeback, release_pages, fsync, commit, sync };

/// mkfs: the superblock at block 0, then the metadata area; data starts at
/// the block this returns.
inline auto metadata_area_end(std::uint64_t device_blocks) -> std::uint64_t {
    return 1 + std::min<std::uint64_t>(1024, std::max<std::uint64_t>(device_blocks / 8, 4));
}

/// try_release_extent_mapping, by patch of the series.
enum class ReleasePolicy : std::uint8_t {
    before_fix,               // v5.7: drop any unpinned, unlocked extent map
    keep_modified,            // 1/3: keep one on the modified list unless LOGGING
    keep_current_generation,  // 2/3: but drop a listed one older than fs_info->generation
};

struct Knobs {
    // Both from the knob release_extent_maps (one value per kernel): fix-3
    // is keep_current_generation without the flag, the earlier kernels set it.
    ReleasePolicy release = ReleasePolicy::keep_current_generation;
    bool full_sync_on_release = false;
    // "btrfs: stop sleeping for one jiffy in non-ssd mounts during log commit": the leader of a log
    // commit on a non-ssd mount sleeps one jiffy while MULTI_LOG_TASKS is set (before the patch) or
    // not at all (after it).
    bool log_commit_sleep = false;
    std::uint32_t hz = 250;
    bool jiffy_tick_aligned = true;
    /// mkfs.btrfs -n: the size of a btree node or leaf (default 16 KiB); sets
    /// how many checksums one leaf of the checksum tree holds.
    std::uint32_t nodesize = 16384;
    /// The transaction kthread commits the running transaction once it is
    /// this old (mount -o commit=, kernel default 30 s); 0: no kthread, only
    /// commit and sync operations commit (exploration scenarios).
    sim::Duration commit_interval = 30 * sim::seconds;  // transaction_kthread: mount -o commit=, default 30
};

/// struct extent_map. Lengths and offsets in blocks (4 KiB pages).
struct ExtentMap {
    std::uint64_t id;  // identity, for the fsync's private reference
    std::uint64_t start;
    std::uint64_t length;
    std::uint64_t block_start;  // disk block
    std::uint64_t generation;
    bool pinned;            // EXTENT_FLAG_PINNED: I/O not finished
    bool logging;           // EXTENT_FLAG_LOGGING: a fast fsync is logging it
    bool on_modified_list;  // em->list linked on modified_extents
    [[nodiscard]] auto end() const -> std::uint64_t { return start + length; }
};

/// An inode's extent map tree: the rb-tree and the list of modified extents,
/// guarded by em_tree.lock (every actor here takes it in write mode).
struct ExtentMapTree {
    using Maps = std::map<std::uint64_t, ExtentMap>;
    sim::RwLock lock{"em_tree.lock"};
    Maps maps;  // by start; change it only through add, remove and unlink
    std::set<std::uint64_t> listed;  // starts of the maps on modified_extents, in order
    [[nodiscard]] auto lookup(std::uint64_t block) -> ExtentMap*;
    void add(const ExtentMap& em) {
        maps.emplace(em.start, em);
        if (em.on_modified_list) listed.insert(em.start);
    }
    auto remove(Maps::iterator it) -> Maps::iterator {
        if (it->second.on_modified_list) listed.erase(it->first);
        return maps.erase(it);
    }
    /// list_del_init(&em->list)
    void unlink(ExtentMap& em) {
        em.on_modified_list = false;
        listed.erase(em.start);
    }
};

/// A file extent item in the subvolume tree or the log tree.
struct FileExtentItem {
    std::uint64_t disk_block;
    std::uint64_t generation;
    std::uint64_t item = 0;  // which item: two adjacent items never read as one
    [[nodiscard]] auto shifted(std::uint64_t blocks) const -> FileExtentItem {
        return {disk_block + blocks, generation, item};
    }
    auto operator==(const FileExtentItem&) const -> bool = default;
};

struct InodeItems {
    std::uint64_t size_bytes = 0;
    sim::RangeMap<FileExtentItem> extents;  // file block -> disk block
};

/// The subvolume btree (fs tree): inode items and file extent items.
struct FsTree {
    std::map<std::uint32_t, InodeItems> inodes;
};

/// What one fsync logged for an inode, over what earlier fsyncs of the same
/// log tree logged (`below`; none after a full fsync, which drops the
/// inode's earlier log items). Layers are shared between log commits, as
/// unchanged log leaves are, so a log commit does not copy the whole log.
struct LogLayer {
    InodeItems items;  // the inode item's size, and the file extent items it added
    mutable std::shared_ptr<const LogLayer> below;
    LogLayer(InodeItems items_in, std::shared_ptr<const LogLayer> below_in)
        : items(std::move(items_in)), below(std::move(below_in)) {}
    LogLayer(const LogLayer&) = delete;
    auto operator=(const LogLayer&) -> LogLayer& = delete;
    /// Frees a chain of layers one by one (a transaction of fsyncs makes one
    /// layer each; recursion would run out of stack).
    ~LogLayer() {
        std::shared_ptr<const LogLayer> next = std::move(below);
        while (next && next.use_count() == 1) next = std::move(next->below);
    }
};

/// The log tree of one root: what fsyncs logged in the running transaction.
struct LogTree {
    std::map<std::uint32_t, std::shared_ptr<const LogLayer>> inodes;
};

struct Superblock {
    std::uint64_t generation;  // last committed transaction
    std::uint64_t root_block;  // fs tree root
    std::uint64_t root_object;
    bool has_log;
    std::uint64_t log_block;
    std::uint64_t log_object;
    std::uint64_t log_transid;
};

using MetaObject = std::variant<Superblock, FsTree, LogTree>;

// Every member of the objects above, for the runner's verdict memo across
// schedules (model/metadata_store.hpp): a member added to them goes here too.
// A Superblock's root_object and log_object are object ids: references, not
// content. A LogTree's layers are encoded by content, down each chain.
inline void encode_items(KeyWords& out, const InodeItems& items) {
    out.push_back(items.size_bytes);
    encode_range_map(out, items.extents, [&](const FileExtentItem& item) {
        out.insert(out.end(), {item.disk_block, item.generation, item.item});
    });
}
/// Live locals' hashes (sim/live.hpp): what an fsync logs, and the copies
/// of extent maps it logs them from.
inline void hash_value(sim::StateHash& out, const InodeItems& items) {
    KeyWords words;
    encode_items(words, items);
    out.add(sim::hash_words(words));
}
inline void hash_value(sim::StateHash& out, const ExtentMap& em) {
    for (const std::uint64_t word : {em.id, em.start, em.length, em.block_start, em.generation}) {
        out.add(word);
    }
    out.add((em.pinned ? 1U : 0U) | (em.logging ? 2U : 0U) | (em.on_modified_list ? 4U : 0U));
}
inline void encode_object(KeyWords& out, const Superblock& super) {
    out.insert(out.end(), {super.generation, super.root_block, std::uint64_t{super.has_log}, super.log_block,
                           super.log_transid});
}
inline void encode_object(KeyWords& out, const FsTree& tree) {
    out.push_back(tree.inodes.size());
    for (const auto& [ino, items] : tree.inodes) {
        out.push_back(ino);
        encode_items(out, items);
    }
}
inline void encode_object(KeyWords& out, const LogTree& log) {
    out.push_back(log.inodes.size());
    for (const auto& [ino, top] : log.inodes) {
        out.push_back(ino);
        for (const LogLayer* layer = top.get(); layer != nullptr; layer = layer->below.get()) {
            out.push_back(1);  // one more layer
            encode_items(out, layer->items);
        }
        out.push_back(0);
    }
}
inline void object_references(const Superblock& super, std::vector<std::uint64_t>& out) {
    out.push_back(super.root_object);
    out.push_back(super.log_object);
}
inline void object_references(const FsTree&, std::vector<std::uint64_t>&) {}
inline void object_references(const LogTree&, std::vector<std::uint64_t>&) {}

struct OrderedExtent {
    std::uint64_t id;
    std::uint32_t file;
    std::uint64_t start;   // file block
    std::uint64_t length;  // blocks
    std::uint64_t disk_block;
    std::uint32_t bios_pending = 0;
    bool complete = false;  // BTRFS_ORDERED_COMPLETE
};

struct Inode {
    bool exists = false;
    std::uint64_t size_bytes = 0;  // in-memory i_size
    ExtentMapTree em_tree;
    /// io tree EXTENT_LOCKED ranges (file blocks).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> locked;
    bool needs_full_sync = true;  // a new inode's first fsync is a full one
    std::vector<std::uint64_t> ordered_pending;  // ordered extents not yet complete
    std::uint64_t last_trans = 0;
    std::uint64_t logged_trans = 0;
    // btrfs_inode.h (v5.7): the root's log transaction when the inode was
    // last changed (last_sub_trans), and a copy of the root's
    // last_log_commit, taken when the inode is changed
    // (btrfs_set_inode_last_trans) and set to last_sub_trans once the inode
    // is logged (end of btrfs_log_inode). Both are int in the kernel.
    std::int64_t last_sub_trans = 0;
    std::int64_t last_log_commit = 0;
    std::uint64_t generation = 0;  // transaction that created the inode
    sim::Mutex inode_lock{"inode.i_rwsem"};
    sim::Mutex log_mutex{"inode.log_mutex"};
    [[nodiscard]] auto range_locked(std::uint64_t start, std::uint64_t end) const -> bool;
};

struct Counters {
    std::uint64_t transactions_committed = 0;
    std::uint64_t log_commits = 0;
    std::uint64_t fsyncs_fast = 0;
    std::uint64_t fsyncs_full = 0;
    std::uint64_t fsyncs_skipped = 0;
    std::uint64_t fsyncs_committed = 0;  // logging failed: the fsync committed the transaction
    std::uint64_t checksum_lookups = 0;
    std::uint64_t extent_maps_released = 0;
    std::uint64_t extent_maps_kept = 0;
    std::uint64_t ordered_extents = 0;
    std::uint64_t jiffy_sleeps = 0;
    std::uint64_t log_followers = 0;  // fsyncs whose log commit another task led
    std::uint64_t extent_maps_merged = 0;
    std::uint64_t checksum_lock_waits = 0;  // checksum tree locks (any leaf or node) found taken
    std::uint64_t checksum_leaf_waits = 0;  // of those, at a leaf
    std::uint64_t log_tree_lock_waits = 0;  // log tree locks (any leaf or node) log_csums found taken
    std::uint64_t log_tree_leaf_waits = 0;  // of those, at a leaf
    std::uint64_t direct_writes = 0;
};

class Btrfs final : public FileSystemBase<MetaObject> {
public:
    Btrfs(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names);

    [[nodiscard]] auto clone() const -> std::unique_ptr<FileSystem> override;
    void start_daemons() override;
    auto execute(const OpCall& call) -> OpResult override;
    [[nodiscard]] auto recover(const disk::Image& image) const -> RecoveredState override;
    [[nodiscard]] auto recover_with_writes(const disk::Image& image) -> Recovery override;
    [[nodiscard]] auto counters() const -> std::map<std::string, std::uint64_t> override;
    void reset_maxima() override { reset_counter_maxima(counter_table, counters_); }
    /// Every counter the model keeps, registered once (super.cpp).
    static const CounterTable<Btrfs, Counters> counter_table;
    auto hash_resources(sim::ResourceHashes& out) const -> bool override;
    [[nodiscard]] auto op_footprint(const OpCall& call) const -> sim::Footprint override;
    /// A write's op_footprint.
    [[nodiscard]] static auto write_footprint() -> sim::Footprint;

private:
    // fingerprint.cpp: hash_resources' parts.
    void hash_inodes(sim::ResourceHashes& out) const;
    void hash_log(sim::ResourceHashes& out) const;
    /// What a mount that replayed a log leaves for the replay's commit.
    struct LogReplay {
        bool replayed = false;
        Superblock super{};  // the superblock the mount read
        FsTree tree;         // the fs tree with the log replayed into it
    };
    /// open_ctree up to the replay's commit: recover() and
    /// recover_with_writes() share it; `replay` (if given) receives the
    /// replayed tree.
    auto mount(const disk::Image& image, LogReplay* replay) const -> RecoveredState;
    // inode.cpp: create, delalloc to ordered extents, ordered-extent completion, sync
    void create(std::uint32_t file);
    auto cow_file_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> std::uint64_t;
    void finish_ordered_io(std::uint64_t ordered_id);
    void sync_all();
    // file.cpp: buffered and O_DIRECT writes, the extent map cache, fsync
    /// The bytes copied (less than `length`: a short write; 0: -ENOSPC).
    auto buffered_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                        std::uint64_t version) -> std::uint64_t;
    /// The passes of a buffered write over the pages [start, end): each
    /// reserves its pages before it copies them (`reserved`, `dirtied`: the
    /// pages so far); a pass that cannot reserve ends the write.
    void buffered_write_passes(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                               std::uint64_t version, std::uint64_t& dirtied, std::uint64_t& reserved);
    /// The pages [start, end) of a buffered write dirtied and marked delalloc.
    void dirty_range(std::uint32_t file, std::uint64_t start, std::uint64_t end, std::uint64_t version);
    /// False: -ENOSPC, nothing written.
    auto direct_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                      std::uint64_t version) -> bool;
    // delalloc-space.cpp: the data space_info
    /// bytes_used + bytes_may_use + `pages` fit in total_bytes.
    [[nodiscard]] auto data_space_fits(std::uint64_t pages) const -> bool;
    /// btrfs_alloc_data_chunk_ondemand: flush and commit until `pages` fit,
    /// else false (-ENOSPC).
    auto alloc_data_ondemand(std::uint32_t file, std::uint64_t pages) -> bool;
    void start_delalloc_roots();
    void drop_extent_cache(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    void fsync(std::uint32_t file);
    /// F5: btrfs_sync_file returns early when the inode has nothing to log
    /// (it clears NEEDS_FULL_SYNC and drops the inode lock); true then.
    auto fsync_nothing_to_log(std::uint32_t file) -> bool;
    /// Why btrfs_sync_file found nothing to log (the note of its early return).
    [[nodiscard]] auto nothing_to_log_text(const Inode& inode, bool in_log) const -> std::string;
    // ordered-data.cpp
    void wait_ordered_range(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    // extent_io.cpp: writeback, the io tree's extent locks, bio completion, page release
    void writeback(std::uint32_t file, std::uint64_t start, std::uint64_t end, const char* who);
    void writeback_run(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    void submit_ordered_bios(std::uint64_t ordered_id);
    void end_bio(std::uint64_t ordered_id);
    void lock_extent(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    void unlock_extent(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    void release_pages(std::uint32_t file, std::uint64_t start, std::uint64_t end);
    void try_release_extent_mapping(std::uint32_t file, std::uint64_t page);
    void release_one(std::uint32_t file, ExtentMap& em);
    void try_merge_map(std::uint32_t file, std::uint64_t start);
    // reclaim.cpp: btrfs's hook into page reclaim (model/reclaim.hpp).
    auto reclaim_target() -> ReclaimTarget;
    void balance_pages();
    void kswapd();
    // file-item.cpp: the checksum tree, leaves and nodes with their own
    // locks.
    void insert_checksums(std::uint64_t disk_block, std::uint64_t count);
    void lookup_checksums(std::uint64_t disk_block, std::uint64_t count);
    struct CsumPath {
        CsumTree::Leaf* leaf = nullptr;      // locked: write with cow, read for a lookup
        bool leaf_write = false;
        sim::RwLock* parent = nullptr;       // still locked when the leaf must split
        bool parent_write = false;
        /// A live local's hash (sim/live.hpp): which locks the path holds and
        /// how; the locks' holders name the blocks.
        friend void hash_value(sim::StateHash& out, const CsumPath& path) {
            out.add((path.leaf != nullptr ? 1U : 0U) | (path.leaf_write ? 2U : 0U) |
                    (path.parent != nullptr ? 4U : 0U) | (path.parent_write ? 8U : 0U));
        }
    };
    auto csum_search(CsumTree& tree, std::uint64_t disk_block, std::uint64_t count, bool cow, bool insert,
                     std::uint64_t& waits, std::uint64_t& leaf_waits) -> CsumPath;
    // csum_search's steps: the nodes from level `top` down, then the leaf.
    // False when the search dropped its path to start again (with
    // write_lock_level raised, or the key moved to another leaf).
    auto csum_search_nodes(CsumTree& tree, std::uint64_t disk_block, bool cow, std::uint32_t top,
                           int& write_lock_level, std::uint64_t& waits, CsumPath& path) -> bool;
    auto csum_search_leaf(CsumTree& tree, std::uint64_t disk_block, bool cow, std::uint32_t top,
                          int& write_lock_level, std::uint64_t& waits, std::uint64_t& leaf_waits,
                          CsumPath& path) -> bool;
    static void csum_release(CsumPath& path);
    void csum_insert(CsumTree& tree, std::uint64_t disk_block, std::uint64_t count, sim::Duration cost,
                     std::uint64_t& waits, std::uint64_t& leaf_waits);
    // transaction.cpp
    auto join_transaction() -> std::uint64_t;
    void end_transaction();
    void commit_transaction();
    void transaction_kthread();
    void write_superblock(bool with_log, std::uint64_t generation);
    auto store(MetaObject object) -> std::uint64_t { return meta_objects_.store(std::move(object)); }
    auto allocate_meta_block() -> std::uint64_t;
    // tree-log.cpp: logging an inode, the log tree's commit
    /// What btrfs_log_inode_parent returns to btrfs_sync_file (v5.7): 0, the
    /// log holds the inode (sync it); BTRFS_NO_LOG_SYNC, it did already (end
    /// the transaction); 1, logging failed (commit the transaction).
    enum class LogInodeResult { logged, no_log_sync, commit };
    /// btrfs_log_inode_parent, from the BTRFS_NO_LOG_SYNC test to
    /// end_log_trans; `log_transid` is the log transaction it joined
    /// (btrfs_log_ctx's log_transid).
    auto log_inode_parent(std::uint32_t file, std::uint64_t transid, std::uint64_t& log_transid)
        -> LogInodeResult;
    auto log_inode(std::uint32_t file, std::uint64_t transid) -> bool;
    void log_inode_full(std::uint32_t file, std::uint64_t transid, InodeItems& logged);
    auto log_changed_extents(std::uint32_t file, std::uint64_t transid, InodeItems& logged) -> bool;
    /// F10's walk of the list of modified extents, under em_tree.lock: the
    /// maps taken go to `to_log` (LOGGING), `listed` counts the maps visited.
    /// Returns the kernel's num: past log_changed_extents_max, -EFBIG.
    auto walk_modified_list(Inode& inode, const std::set<std::uint64_t>& on_list, std::uint64_t test_gen,
                            std::vector<ExtentMap>& to_log, std::uint64_t& listed) -> std::uint64_t;
    /// The note's list of the maps a fast fsync logs.
    [[nodiscard]] auto extents_text(const std::vector<ExtentMap>& to_log) const -> std::string;
    void log_one_extent(const ExtentMap& em, InodeItems& logged);
    void clear_em_logging(std::uint32_t file, const ExtentMap& em);
    auto start_log_trans() -> std::uint64_t;
    void wait_for_writer();
    void wait_log_commit(std::uint64_t log_transid);
    void jiffy_sleep();
    void sync_log(std::uint64_t log_transid);
    // btrfs_sync_log's steps: S4, S8 to S11, S12.
    void wait_log_batch();
    void write_log_root_tree(std::uint64_t block, std::uint64_t object, sim::Completion& written);
    void end_log_commit(std::uint64_t log_transid);
    void set_inode_last_trans(Inode& inode, std::uint64_t transid);
    [[nodiscard]] auto inode_in_log(const Inode& inode, std::uint64_t generation) const -> bool;
    // recovery.cpp
    /// One inode's logged items, oldest fsync first, over the fs tree.
    void replay_log_inode(std::uint32_t file, const LogLayer& head, FsTree& tree,
                          RecoveredState& state) const;
    /// A file as a read after mount returns it.
    void read_file(const disk::Image& image, std::uint32_t file, const InodeItems& items,
                   RecoveredState& state) const;
    void check_consistency(const FsTree& tree, RecoveredState& state) const;


    Knobs knobs_;
    std::vector<Inode> inodes_;

    // fs_info
    std::uint64_t generation_ = 0;  // fs_info->generation: newest transaction started
    std::uint64_t last_trans_committed_ = 0;
    bool transaction_running_ = false;
    bool commit_in_progress_ = false;
    sim::Instant transaction_start_ = 0;
    std::uint32_t transaction_writers_ = 0;  // num_writers of the running transaction
    sim::WaitQueue transaction_wait_{"transaction.wait"};  // commit done / writers gone
    FsTree fs_tree_;  // in memory, dirty in the running transaction
    std::uint64_t root_block_ = 0;  // fs tree root as last committed
    std::uint64_t root_object_ = 0;

    // The per-root log (log tree, log_mutex, log writers).
    sim::Mutex root_log_mutex_{"root.log_mutex"};
    bool log_root_exists_ = false;
    std::uint32_t log_writers_ = 0;
    sim::WaitQueue log_writer_wait_{"root.log_writer_wait"};
    std::uint64_t log_transid_ = 0;
    std::int64_t log_transid_committed_ = -1;
    // root->last_log_commit: the newest log transaction whose commit is
    // durable (btrfs_sync_log advances it after the superblock FUA).
    std::int64_t last_log_commit_ = 0;
    bool log_committing_[2] = {false, false};
    sim::WaitQueue log_commit_wait_[2] = {sim::WaitQueue{"root.log_commit_wait"},
                                          sim::WaitQueue{"root.log_commit_wait"}};
    sim::TaskId log_start_task_ = sim::no_task;  // log_start_pid
    bool multi_log_tasks_ = false;               // BTRFS_ROOT_MULTI_LOG_TASKS
    bool ssd_ = false;                           // -o ssd: the device is not rotational
    sim::Mutex log_root_tree_mutex_{"log_root_tree.log_mutex"};
    std::uint64_t log_batch_ = 0;
    LogTree log_tree_;
    std::uint64_t log_block_ = 0;  // the log tree as last written (0: none)
    std::uint64_t log_object_ = 0;

    // Ordered extents and allocators.
    std::vector<OrderedExtent> ordered_;
    sim::WaitQueue ordered_wait_{"ordered_extent.wait"};
    sim::WaitQueue io_tree_wait_{"io_tree.locked"};
    std::uint64_t next_extent_map_id_ = 1;
    std::uint64_t meta_cursor_ = 0;
    std::uint64_t meta_area_end_ = 0;
    std::uint64_t data_cursor_ = 0;
    // The checksum tree; its extent buffer locks as in v5.7/v5.8: a reader
    // (btrfs_tree_read_lock) waits only while a writer holds the lock, a
    // writer (btrfs_tree_lock) until no reader is left.
    CsumTree csum_tree_;
    // The log tree's csum items, shared by every fsync logging in the same
    // transaction: log_csums inserts them as btrfs_csum_file_blocks does.
    CsumTree log_csum_tree_;
    // Memory pressure: kswapd and direct reclaim over the page cache's LRU.
    PageReclaim reclaim_;
    Costs costs_{};  // CPU costs of the model's own paths (performance runs)
    Counters counters_;
};

}  // namespace model::btrfs
