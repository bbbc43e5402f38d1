// The file operations of fs/btrfs/file.c: buffered writes
// (btrfs_buffered_write), O_DIRECT writes (__btrfs_direct_write),
// btrfs_drop_extent_cache, and fsync (btrfs_sync_file). Seeds:
// "btrfs: fix race between page release and a fast fsync" (step 1, and fsync's
// steps 5, 7, 8) and "btrfs: stop sleeping for one jiffy in non-ssd mounts during
// log commit" (what fsync waits for).
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"
#include "model/direct_io.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::btrfs {

namespace {
// btrfs_buffered_write (v5.7) copies at most nrptrs pages per pass:
// min(pages left, PAGE_SIZE / sizeof(struct page *) = 512,
// current->nr_dirtied_pause - current->nr_dirtied), at least 8. The model
// leaves out dirty throttling: nr_dirtied_pause keeps its value from fork
// (128 >> (PAGE_SHIFT - 10) = 32 pages) and nr_dirtied is 0.
constexpr std::uint64_t write_chunk_pages = 32;
}  // namespace

auto Btrfs::buffered_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                           std::uint64_t version) -> std::uint64_t {
    SIM_LIVE(file, offset, length, version);
    Inode& inode = inodes_[file];
    const std::uint64_t start = offset / block_size_;
    const std::uint64_t end = (offset + length) / block_size_;
    // btrfs_file_write_iter holds the inode lock (i_rwsem) for the whole
    // buffered write, so no write lands inside an fsync's F2..F12.
    inode.inode_lock.lock();
    // lock_and_cleanup_extent_if_need: wait for ordered extents in the range.
    wait_ordered_range(file, start, end);
    // Allocating the pages may have to wait for reclaim (memory pressure).
    balance_pages();
    // Each pass reserves its pages (btrfs_check_data_free_space) before it
    // copies them; a pass that cannot reserve ends the write, which returns
    // the bytes copied so far, or -ENOSPC if none.
    const std::uint64_t size_before = inode.size_bytes;
    std::uint64_t dirtied = start;   // pages copied into the page cache
    std::uint64_t reserved = start;  // pages whose pass reserved its space
    SIM_LIVE(size_before, dirtied, reserved);
    buffered_write_passes(file, start, end, version, dirtied, reserved);
    const std::uint64_t copied = reserved == end ? length : (reserved - start) * block_size_;
    sim::cpu(model::cpu_cost::page_copy * (reserved - start));
    const bool extends = copied > 0 && offset + copied > size_before;
    if (extends) inode.size_bytes = std::max(inode.size_bytes, offset + copied);
    if (copied == 0) {
        SIM_NOTE("write " + range_text(offset, offset + length) + " of inode " + name(file) +
                 ": returns -ENOSPC and changes nothing");
        inode.inode_lock.unlock();
        sim::yield(points::write_enospc);
        return 0;
    }
    SIM_NOTE("write " + range_text(offset, offset + copied) + " of inode " + name(file) + ": " +
             std::to_string(reserved - start) + " page(s) from " + std::to_string(start) +
             " dirtied and marked delalloc" +
             (extends ? ", i_size " + std::to_string(inode.size_bytes) : std::string()) +
             (copied < length ? "; short write: " + std::to_string(copied) + " of " + std::to_string(length) +
                                    " bytes (-ENOSPC for the rest)"
                              : std::string()));
    // btrfs_file_write_iter (v5.7) ends with last_sub_trans = root->log_transid,
    // "otherwise subsequent syncs to a file that's been synced in this
    // transaction will appear to have already occurred".
    inode.last_sub_trans = static_cast<std::int64_t>(log_transid_);
    inode.inode_lock.unlock();
    sim::yield(copied < length ? points::write_enospc : points::write_after_dirty);
    return copied;
}

void Btrfs::buffered_write_passes(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                                  std::uint64_t version, std::uint64_t& dirtied, std::uint64_t& reserved) {
    Inode& inode = inodes_[file];
    while (reserved < end) {
        const std::uint64_t chunk = std::min(end - reserved, write_chunk_pages);
        std::uint64_t pending = reserved - dirtied;  // reserved, not copied yet: not counted dirty
        for (auto [s, e] : page_cache_.runs(file, dirtied, reserved, PageState::dirty)) pending -= e - s;
        if (!data_space_fits(chunk + pending)) {
            // The passes before this one have copied their pages already,
            // and btrfs_dirty_pages raised i_size to their end.
            if (dirtied < reserved) dirty_range(file, dirtied, reserved, version);
            if (reserved > start) {
                inode.size_bytes = std::max(inode.size_bytes, bytes(reserved));
                // The flush below yields at the flusher's and the commit's
                // points, which declare no inode.
                sim::current_scheduler().touch(sim::resource("btrfs.inode"));
            }
            dirtied = reserved;
            if (!alloc_data_ondemand(file, chunk)) break;
        }
        reserved += chunk;
    }
    if (dirtied < reserved) dirty_range(file, dirtied, reserved, version);
}

void Btrfs::dirty_range(std::uint32_t file, std::uint64_t start, std::uint64_t end, std::uint64_t version) {
    page_cache_.dirty(file, start, end, disk::Content::data(file, start, version));
}

auto Btrfs::direct_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                         std::uint64_t version) -> bool {
    SIM_LIVE(file, offset, length, version);
    // btrfs_file_write_iter -> __btrfs_direct_write (v5.7), under the inode
    // lock: generic_file_direct_write writes back and drops the cached pages
    // of the range; btrfs_direct_IO locks the range in the io tree, reserves
    // an extent and creates its pinned extent map (on the list of modified
    // extents) and ordered extent (btrfs_get_blocks_direct_write, which also
    // raises i_size), unlocks the range and sends the bio from the caller's
    // buffer; the write returns once the bio completes, its ordered extent
    // finishing in endio as a buffered one does.
    Inode& inode = inodes_[file];
    const std::uint64_t start = offset / block_size_;
    const std::uint64_t end = (offset + length) / block_size_;
    inode.inode_lock.lock();
    direct_write_begin(page_cache_, file, start, end, [&] {
        writeback(file, start, end, "direct I/O: filemap_write_and_wait_range");
        wait_ordered_range(file, start, end);
    });
    // btrfs_direct_IO: btrfs_delalloc_reserve_space for the whole write
    // (btrfs_check_data_free_space); -ENOSPC returns before any I/O.
    if (!alloc_data_ondemand(file, end - start)) {
        SIM_NOTE("O_DIRECT write " + range_text(offset, offset + length) + " of inode " + name(file) +
                 ": returns -ENOSPC and writes nothing");
        inode.inode_lock.unlock();
        sim::yield(points::write_enospc);
        return false;
    }
    lock_extent(file, start, end);
    const std::uint64_t ordered_id = cow_file_range(file, start, end);
    if (offset + length > inode.size_bytes) inode.size_bytes = offset + length;
    unlock_extent(file, start, end);
    DirectBios bios(device_, disk::Content::data(file, start, version), start);
    SIM_LIVE(ordered_id, bios);
    ordered_[ordered_id].bios_pending = 1;
    bios.submit(start, end, ordered_[ordered_id].disk_block, [this, ordered_id] { end_bio(ordered_id); });
    SIM_NOTE("O_DIRECT write " + range_text(offset, offset + length) + " of inode " + name(file) +
             ": W(data) to disk block " + std::to_string(ordered_[ordered_id].disk_block) +
             " from the caller's buffer, ordered extent #" + std::to_string(ordered_id));
    bios.wait();
    // btrfs_file_write_iter, as for a buffered write.
    inode.last_sub_trans = static_cast<std::int64_t>(log_transid_);
    counters_.direct_writes++;
    inode.inode_lock.unlock();
    sim::yield(points::direct_write_done);
    return true;
}

void Btrfs::drop_extent_cache(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    // btrfs_drop_extent_cache: the parts of older maps outside [start, end)
    // survive as split maps that keep the list membership (called with
    // em_tree.lock held).
    ExtentMapTree& tree = inodes_[file].em_tree;
    auto& maps = tree.maps;
    std::vector<ExtentMap> overlapping;
    auto it = maps.lower_bound(start);
    if (it != maps.begin() && std::prev(it)->second.end() > start) --it;
    while (it != maps.end() && it->second.start < end) {
        if (start < it->second.end()) {
            overlapping.push_back(it->second);
            it = tree.remove(it);
        } else {
            ++it;
        }
    }
    for (const ExtentMap& old : overlapping) {
        if (old.start < start) {
            ExtentMap head = old;
            head.id = next_extent_map_id_++;
            head.logging = false;  // the kernel clears EXTENT_FLAG_LOGGING on splits
            head.length = start - old.start;
            tree.add(head);
        }
        if (old.end() > end) {
            ExtentMap tail = old;
            tail.id = next_extent_map_id_++;
            tail.logging = false;
            tail.start = end;
            tail.length = old.end() - end;
            tail.block_start = old.block_start + (end - old.start);
            tree.add(tail);
        }
    }
}

void Btrfs::fsync(std::uint32_t file) {
    SIM_LIVE(file);
    Inode& inode = inodes_[file];
    const std::uint64_t all = whole_file_end;
    // F1: start writeback of the dirty range.
    sim::cpu(costs_.fsync_entry);
    writeback(file, 0, all, "fsync: writeback");
    sim::yield(points::fsync_after_start_writeback);
    // F2: the inode lock; log_batch++. F3, widening the range to the whole
    // file when NEEDS_FULL_SYNC is set (btrfs_sync_file), has nothing to do:
    // every fsync of the model covers the whole file.
    inode.inode_lock.lock();
    log_batch_++;
    // F4: start writeback again and wait for every ordered extent in range.
    writeback(file, 0, all, "fsync: writeback");
    wait_ordered_range(file, 0, all);
    sim::yield(points::fsync_after_wait_ordered);
    // F5: log_batch++, then the early return when there is nothing to log.
    log_batch_++;
    if (fsync_nothing_to_log(file)) return;
    // F6: join the running transaction.
    const std::uint64_t transid = join_transaction();
    // F7 to F11: btrfs_log_dentry_safe -> btrfs_log_inode_parent.
    std::uint64_t log_transid = 0;
    SIM_LIVE(transid, log_transid);
    const LogInodeResult logged = log_inode_parent(file, transid, log_transid);
    // The inode lock is dropped whatever came of it: the log is consistent
    // on disk, and a later logging of the file synchronises in btrfs_sync_log.
    inode.inode_lock.unlock();
    switch (logged) {
        case LogInodeResult::no_log_sync:
            end_transaction();
            return;
        case LogInodeResult::commit:
            // btrfs_log_inode failed: btrfs_sync_file commits the transaction
            // instead of syncing the log.
            end_transaction();
            counters_.fsyncs_committed++;
            SIM_NOTE("fsync of inode " + name(file) + " could not log it: commits the transaction");
            commit_transaction();
            break;
        case LogInodeResult::logged:
            // F12: make the log durable; F13.
            sync_log(log_transid);
            end_transaction();
            break;
    }
    SIM_NOTE("fsync of inode " + name(file) + " returns 0");
}

auto Btrfs::fsync_nothing_to_log(std::uint32_t file) -> bool {
    Inode& inode = inodes_[file];
    // F5 (btrfs_sync_file, v5.7): nothing to log if
    //   btrfs_inode_in_log(inode, fs_info->generation) ||
    //   inode->last_trans <= fs_info->last_trans_committed.
    // The kernel then clears NEEDS_FULL_SYNC ("everything committed since the
    // last time we were modified"). v5.10 adds to the second test "&& (full_sync
    // || list_empty(&ctx.ordered_extents))" (fast fsyncs stop waiting for
    // ordered extents); the model follows v5.7, which waits for them (F4).
    const bool in_log = inode_in_log(inode, generation_);
    if (in_log || inode.last_trans <= last_trans_committed_) {
        SIM_NOTE("fsync of inode " + name(file) + ": nothing to log (" +
                 nothing_to_log_text(inode, in_log) + ")");
        inode.needs_full_sync = false;
        counters_.fsyncs_skipped++;
        inode.inode_lock.unlock();
        return true;
    }
    return false;
}

auto Btrfs::nothing_to_log_text(const Inode& inode, bool in_log) const -> std::string {
    if (in_log) {
        return "btrfs_inode_in_log: logged in transaction " + std::to_string(inode.logged_trans) +
               ", last_sub_trans " + std::to_string(inode.last_sub_trans) + " <= last_log_commit " +
               std::to_string(inode.last_log_commit) + " and <= the root's " +
               std::to_string(last_log_commit_) + ", no modified extents";
    }
    return "last_trans " + std::to_string(inode.last_trans) + " <= last committed " +
           std::to_string(last_trans_committed_);
}

}  // namespace model::btrfs
