// What fs/btrfs/inode.c does for the model: mkfs and the operation entry
// point, inode creation, run_delalloc_range -> cow_file_range (a disk extent,
// its pinned extent map and its ordered extent), btrfs_finish_ordered_io, and
// sync. Seed: "btrfs: fix race between page release and a fast fsync", steps 1 to 3 with
// file.cpp (buffered and O_DIRECT writes) and extent_io.cpp (writeback and
// bio completion).
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::btrfs {

auto ExtentMapTree::lookup(std::uint64_t block) -> ExtentMap* {
    auto it = maps.upper_bound(block);
    if (it == maps.begin()) return nullptr;
    --it;
    return block < it->second.end() ? &it->second : nullptr;
}

Btrfs::Btrfs(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names)
    : FileSystemBase(geometry, std::move(file_names)),
      knobs_(knobs),
      inodes_(file_names_.size()),
      csum_tree_(knobs.nodesize, "csum_root.lock"),
      log_csum_tree_(knobs.nodesize, "log_root.lock"),
      reclaim_(geometry, geometry.block_size) {
    // mkfs: superblock at block 0, a metadata area, then data.
    meta_area_end_ = metadata_area_end(geometry.blocks);
    SIM_ASSERT(meta_area_end_ < geometry.blocks);
    meta_cursor_ = 1;
    data_cursor_ = meta_area_end_;
    generation_ = 1;
    last_trans_committed_ = 1;
    ssd_ = !device_.profile().rotational;
    costs_ = Costs::from(geometry);
    root_object_ = store(FsTree{});
    root_block_ = allocate_meta_block();
    device_.format(root_block_, 1, disk::Content::meta(root_object_));
    const auto super = store(Superblock{1, root_block_, root_object_, false, 0, 0, 0});
    device_.format(0, 1, disk::Content::meta(super));
    // Misdirected writes: the superblock and every tree block
    // (fs tree, log tree) name their own bytenr in a checksummed header.
    // btrfs_read_dev_one_super refuses a superblock whose bytenr or magic
    // is not its own; btrfs_validate_extent_buffer refuses a tree block
    // whose header bytenr is not the block read ("bad tree block start",
    // -EIO) before its checksum and verify_parent_transid. Data blocks are
    // not self-describing (btrfs_check_data_csum catches a wrong one only
    // through the csum tree, which the model leaves out): none offered.
    device_.declare_self_describing({meta_area_end_, {"super", "meta", "log"}});
}

auto Btrfs::clone() const -> std::unique_ptr<FileSystem> {
    SIM_ASSERT(transaction_writers_ == 0);
    // Unflushed writes of the set-up are cloned too: a crash may lose them.
    return std::make_unique<Btrfs>(*this);
}

void Btrfs::start_daemons() {
    auto& scheduler = sim::current_scheduler();
    // transaction_kthread runs on every mounted btrfs (disk-io.c, open_ctree).
    scheduler.spawn_daemon("transaction_kthread", [this] { transaction_kthread(); });
    if (reclaim_.enabled()) scheduler.spawn_daemon("kswapd", [this] { kswapd(); });
}

auto Btrfs::execute(const OpCall& call) -> OpResult {
    const auto [start, end] = call.blocks(block_size_);
    switch (op_of<Op>(call)) {
        case Op::create: create(call.file); break;
        case Op::write: {
            if (call.flag("direct")) {
                return direct_write(call.file, call.offset, call.length, call.version) ? OpResult::ok
                                                                                        : OpResult::failed;
            }
            // -ENOSPC acknowledges nothing; a short write only what it copied.
            const std::uint64_t copied = buffered_write(call.file, call.offset, call.length, call.version);
            if (copied == 0) return OpResult::failed;
            if (copied < call.length) {
                call.copied = copied;
                return OpResult::short_write;
            }
            break;
        }
        case Op::writeback: writeback(call.file, start, end, "writeback not triggered by fsync"); break;
        case Op::release_pages: release_pages(call.file, start, end); break;
        case Op::fsync: fsync(call.file); break;
        case Op::commit: commit_transaction(); break;
        case Op::sync: sync_all(); break;
    }
    return OpResult::ok;
}

namespace {
auto parts(std::initializer_list<std::string_view> names) -> sim::Footprint {
    sim::Footprint footprint;
    for (const std::string_view name : names) footprint |= sim::resource(name);
    return footprint;
}
/// An inode's data path: its fields, extent maps, io tree, ordered extents,
/// pages and the data allocator.
auto inode_data() -> const sim::Footprint& {
    static const sim::Footprint data = parts({"btrfs.inode", "btrfs.em_tree", "btrfs.io_tree",
                                              "btrfs.ordered", "btrfs.page_cache", "btrfs.allocator"});
    return data;
}
}  // namespace

auto Btrfs::write_footprint() -> sim::Footprint {
    // The inode lock, ordered extents, page reclaim (btrfs_releasepage), the
    // space reservation, last_sub_trans from the root's log_transid.
    static const sim::Footprint write = inode_data() | parts({"btrfs.log", "btrfs.transaction"});
    return write;
}

auto Btrfs::op_footprint(const OpCall& call) const -> sim::Footprint {
    // What an operation may touch from its start to its first yield point
    // (or its end, when it reaches none), blocked or not on the way; locks
    // and wait queues report their own.
    switch (op_of<Op>(call)) {
        // join_transaction, the inode and its item in the subvolume tree.
        case Op::create: return parts({"btrfs.inode", "btrfs.fs_tree", "btrfs.transaction"});
        // ENOSPC's flush and commit report the write's parts themselves
        // (alloc_data_ondemand).
        case Op::write: return write_footprint();
        // Dirty pages found and locked, the extent reserved, the ordered
        // extent and the pinned extent map created.
        case Op::writeback: return inode_data();
        // btrfs_releasepage: the page, i_size, the extent maps, NEEDS_FULL_SYNC.
        case Op::release_pages: return points::release_before_em_lock.touches;
        // F1's writeback, up to fsync.after_start_writeback.
        case Op::fsync: return inode_data() | parts({"btrfs.log"});
        // The commit's start, up to commit.after_writers.
        case Op::commit: return points::commit_after_writers.touches;
        // Every inode's writeback and ordered extents, then a commit.
        case Op::sync: return sim::footprint_all.without(sim::self_reported());
    }
    return sim::footprint_all;
}

auto Btrfs::counters() const -> std::map<std::string, std::uint64_t> {
    return counter_values(counter_table, *this, counters_, device_.counters());
}

void Btrfs::create(std::uint32_t file) {
    const std::uint64_t transid = join_transaction();
    Inode& inode = inodes_[file];
    inode.exists = true;
    inode.generation = transid;
    set_inode_last_trans(inode, transid);
    // btrfs_new_inode: the first fsync of a new inode is a full one.
    inode.needs_full_sync = true;
    fs_tree_.inodes[file] = InodeItems{};
    SIM_NOTE("create inode " + name(file) + " in transaction " + std::to_string(transid) +
             " (NEEDS_FULL_SYNC set)");
    end_transaction();
}

auto Btrfs::cow_file_range(std::uint32_t file, std::uint64_t start, std::uint64_t end)
    -> std::uint64_t {
    Inode& inode = inodes_[file];
    // FL1: run delalloc: reserve a disk extent. Every page it allocates was
    // reserved by its write (bytes_may_use, delalloc-space.cpp): the
    // allocator cannot find the device full.
    const std::uint64_t length = end - start;
    SIM_ASSERT(data_cursor_ + length <= device_.block_count());
    const std::uint64_t disk_block = data_cursor_;
    data_cursor_ += length;
    // FL2: a new extent map, PINNED, generation (u64)-1, added in "modified"
    // mode (on the list of modified extents); older maps of the range go.
    inode.em_tree.lock.lock();
    drop_extent_cache(file, start, end);
    const std::uint64_t em_id = next_extent_map_id_++;
    inode.em_tree.add(ExtentMap{em_id, start, length, disk_block, generation_pinned, true, false, true});
    inode.em_tree.lock.unlock();
    const std::uint64_t ordered_id = ordered_.size();
    ordered_.push_back(OrderedExtent{ordered_id, file, start, length, disk_block, 0, false});
    inode.ordered_pending.push_back(ordered_id);
    counters_.ordered_extents++;
    // Pages go from dirty to writeback (clear_page_dirty_for_io).
    page_cache_.set_state(file, start, end, PageState::writeback);
    SIM_NOTE("run_delalloc_range reserves disk extent " + std::to_string(disk_block) + "+" +
             std::to_string(length) + "; extent map " + range_text(bytes(start), bytes(end)) +
             " created PINNED, generation (u64)-1, on the list of modified extents; ordered "
             "extent #" + std::to_string(ordered_id));
    return ordered_id;
}

void Btrfs::finish_ordered_io(std::uint64_t ordered_id) {
    SIM_LIVE(ordered_id);
    const OrderedExtent ordered = ordered_[ordered_id];
    Inode& inode = inodes_[ordered.file];
    const std::uint64_t end = ordered.start + ordered.length;
    // E1: join the running transaction.
    const std::uint64_t transid = join_transaction();
    SIM_LIVE(transid);
    SIM_NOTE("btrfs_finish_ordered_io for ordered extent #" + std::to_string(ordered_id) +
             " joins transaction " + std::to_string(transid));
    sim::yield(points::endio_after_join);
    // E2, E3: lock the range, insert the file extent item (dirty in transid).
    lock_extent(ordered.file, ordered.start, end);
    InodeItems& items = fs_tree_.inodes[ordered.file];
    items.extents.assign(ordered.start, end, FileExtentItem{ordered.disk_block, transid, ordered_id + 1});
    SIM_NOTE("file extent item " + range_text(bytes(ordered.start), bytes(end)) +
             " -> disk block " + std::to_string(ordered.disk_block) +
             " inserted in the subvolume tree");
    sim::yield(points::endio_after_extent_item);
    // E4: unpin_extent_cache. The kernel WARNs when the map found does not
    // start at the ordered extent; here it always does and is still pinned:
    // the range is LOCKED since E2 and writers wait for the ordered extent
    // before they dirty it again, so no writeback can replace the map.
    inode.em_tree.lock.lock();
    ExtentMap* em = inode.em_tree.lookup(ordered.start);
    SIM_ASSERT(em == nullptr || (em->start == ordered.start && em->pinned));
    if (em != nullptr) {
        em->generation = transid;
        em->pinned = false;
        SIM_NOTE("ordered extent completes: extent map " +
                 range_text(bytes(em->start), bytes(em->end())) + " unpinned, generation " +
                 std::to_string(transid) +
                 (em->on_modified_list ? ", still on the list of modified extents" : ""));
        // unpin_extent_cache: try_merge_map (a map on the list never merges).
        if (!em->logging) try_merge_map(ordered.file, em->start);
    }
    inode.em_tree.lock.unlock();
    sim::yield(points::endio_after_unpin);
    // E5: checksums go into the checksum tree; E6: the inode item is updated
    // with the disk i_size this ordered extent allows.
    insert_checksums(ordered.disk_block, ordered.length);
    const std::uint64_t disk_size = std::min(bytes(end), inode.size_bytes);
    items.size_bytes = std::max(items.size_bytes, disk_size);
    set_inode_last_trans(inode, transid);
    // E7: unlock the range, end the transaction, complete the ordered extent.
    unlock_extent(ordered.file, ordered.start, end);
    end_transaction();
    ordered_[ordered_id].complete = true;
    auto& pending = inode.ordered_pending;
    pending.erase(std::find(pending.begin(), pending.end(), ordered_id));
    ordered_wait_.wake_all();
}

void Btrfs::sync_all() {
    for (std::uint32_t file = 0; file < inodes_.size(); file++) {
        if (!inodes_[file].exists) continue;
        writeback(file, 0, whole_file_end, "sync: writeback");
        wait_ordered_range(file, 0, whole_file_end);
    }
    commit_transaction();
}

}  // namespace model::btrfs
