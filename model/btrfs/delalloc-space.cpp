// The data space_info of fs/btrfs/space-info.c and delalloc-space.c (v5.7):
// every write reserves its bytes (bytes_may_use) before it dirties a page,
// and the allocator (cow_file_range, find_free_extent) only turns a
// reservation into bytes_used, so a write that reserved never finds the
// device full. The model's data area is one block group that mkfs
// allocated (data_sinfo->full: no chunk can be added); the dirty pages are
// the delalloc bytes that bytes_may_use counts (btrfs_dirty_pages clears the
// old DELALLOC bits with EXTENT_CLEAR_DATA_RESV, so a page dirtied twice is
// counted once, but only after the new reservation succeeded).
//
// Left out on purpose: metadata reservations (btrfs_delalloc_reserve_metadata:
// the metadata area is its own, never full), qgroups, and freeing data
// extents: an overwritten extent's blocks stay used (the kernel pins them and
// frees them when the transaction commits), so a device that overwrites data
// fills earlier in the model than in the kernel, never later.
#include "model/btrfs/btrfs.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::btrfs {

auto Btrfs::data_space_fits(std::uint64_t pages) const -> bool {
    // btrfs_space_info_used(data_sinfo, true) + bytes <= total_bytes.
    const std::uint64_t total = device_.block_count() - meta_area_end_;
    const std::uint64_t used = data_cursor_ - meta_area_end_;
    return used + page_cache_.dirty_pages() + pages <= total;
}

void Btrfs::start_delalloc_roots() {
    // btrfs_start_delalloc_roots(fs_info, -1) then btrfs_wait_ordered_roots:
    // writeback of every inode's delalloc, then every ordered extent waited for.
    for (std::uint32_t file = 0; file < inodes_.size(); file++) {
        SIM_LIVE(file);
        if (inodes_[file].exists) writeback(file, 0, whole_file_end, "ENOSPC: btrfs_start_delalloc_roots");
    }
    for (std::uint32_t file = 0; file < inodes_.size(); file++) {
        SIM_LIVE(file);
        if (inodes_[file].exists) wait_ordered_range(file, 0, whole_file_end);
    }
}

auto Btrfs::alloc_data_ondemand(std::uint32_t file, std::uint64_t pages) -> bool {
    // btrfs_alloc_data_chunk_ondemand (v5.7), need_commit = 2: the first
    // pass flushes delalloc, waits for ordered extents and commits; the
    // second commits only if the pinned bytes would cover the request
    // (have_pinned_space) or the transaction removed a block group: the
    // model pins nothing and removes none, so it ends the joined transaction
    // and returns -ENOSPC.
    SIM_LIVE(file, pages);
    for (int need_commit = 2;;) {
        SIM_LIVE(need_commit);
        if (data_space_fits(pages)) return true;
        // The flush and commit below yield at points that declare none of
        // the write's parts (op_footprint: the write read and changed them
        // before).
        sim::current_scheduler().touch(write_footprint());
        need_commit--;
        SIM_NOTE("ENOSPC for " + std::to_string(pages) + " page(s) of inode " + name(file) +
                 ": btrfs_alloc_data_chunk_ondemand " +
                 (need_commit > 0 ? "flushes delalloc, waits for ordered extents and commits"
                                  : "joins the transaction (nothing pinned to free: no commit)"));
        if (need_commit > 0) start_delalloc_roots();
        join_transaction();
        end_transaction();
        if (need_commit == 0) break;
        commit_transaction();
    }
    SIM_NOTE("write of inode " + name(file) + ": btrfs_check_data_free_space finds no room for " +
             std::to_string(pages) + " page(s) (-ENOSPC)");
    return false;
}

}  // namespace model::btrfs
