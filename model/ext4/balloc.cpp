// fs/ext4/balloc.c and mballoc.c: block allocation (ext4_mb_new_blocks), the
// free counters, ext4_should_retry_alloc, and freed blocks held until their
// transaction commits (ext4_mb_free_metadata, ext4_process_freed_data).
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

auto Ext4::new_blocks(std::uint64_t tid, std::uint64_t goal_group, std::uint64_t count)
    -> std::vector<std::uint64_t> {
    // ext4_mb_new_blocks with the inode's group as goal (ext4_inode_to_goal_block):
    // first fit in that group's block bitmap, then the next groups. Empty on ENOSPC.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;  // group, bit
    for (std::uint64_t i = 0; i < groups_.size() && taken.size() < count; i++) {
        const std::uint64_t g = (goal_group + i) % groups_.size();
        const std::size_t bits = live_.at(groups_[g].block_bitmap).bits.size();
        for (std::uint64_t bit = 0; bit < bits && taken.size() < count; bit++) {
            if (allocatable(g, bit)) taken.emplace_back(g, bit);
        }
    }
    std::vector<std::uint64_t> found;
    if (taken.size() < count) return found;
    std::size_t i = 0;
    SIM_LIVE(tid, taken, found, i);
    // The buddy marks the blocks used under the group lock (mb_mark_used)
    // before ext4_mb_mark_diskspace_used takes write access to the bitmap
    // buffer, which may wait: no other allocator gets them meanwhile.
    for (const auto& [g, bit] : taken) buddy_used_.insert(groups_[g].data_start + bit);
    for (; i < taken.size(); i++) {
        const Group& group = groups_[taken[i].first];
        const bool first_of_group = i == 0 || taken[i - 1].first != taken[i].first;
        const bool last_of_group = i + 1 == taken.size() || taken[i + 1].first != taken[i].first;
        if (first_of_group) do_get_write_access(tid, group.block_bitmap);
        MetaBlock& bitmap = live_.at(group.block_bitmap);
        if (first_of_group) {
            bitmap.version++;
            live_hash_.note(group.block_bitmap);
        }
        bitmap.bits[taken[i].second] = true;
        buddy_used_.erase(group.data_start + taken[i].second);
        found.push_back(group.data_start + taken[i].second);
        if (last_of_group) dirty_metadata(tid, group.block_bitmap);
    }
    return found;
}

auto Ext4::allocatable(std::uint64_t g, std::uint64_t bit) const -> bool {
    // A block freed by a transaction that has not committed is not free to
    // the allocator yet (freed_pending_, ext4_mb_free_metadata); one another
    // allocator holds in the buddy is not free either.
    const std::uint64_t block = groups_[g].data_start + bit;
    return !live_.at(groups_[g].block_bitmap).bits[bit] && freed_pending_tid_.count(block) == 0 &&
           buddy_used_.count(block) == 0;
}

auto Ext4::allocatable_blocks(std::uint64_t count) const -> std::uint64_t {
    std::uint64_t found = 0;
    for (std::uint64_t g = 0; g < groups_.size() && found < count; g++) {
        const std::size_t bits = live_.at(groups_[g].block_bitmap).bits.size();
        for (std::uint64_t bit = 0; bit < bits && found < count; bit++) found += allocatable(g, bit) ? 1 : 0;
    }
    return found;
}

void Ext4::free_blocks(std::uint64_t tid, const std::map<std::uint64_t, std::uint64_t>& blocks,
                       bool metadata) {
    // ext4_free_blocks -> ext4_mb_clear_bb: the bits are cleared in the block
    // bitmap buffer now; with data=ordered the allocator gets the blocks back
    // only when this transaction has committed (ext4_mb_free_metadata), so a
    // crash cannot leave the old file naming a block new data went to. A
    // directory's blocks are metadata (get_default_free_blocks_flags:
    // EXT4_FREE_BLOCKS_METADATA | EXT4_FREE_BLOCKS_FORGET): ext4_forget
    // revokes each first, so that replay of an older transaction's copy
    // cannot overwrite what the block holds once reused.
    SIM_LIVE(tid, metadata);
    for (const auto& [file_block, device_block] : blocks) {
        SIM_LIVE(file_block, device_block);
        if (metadata) journal_revoke(tid, device_block);
        const Group& group = groups_[group_of_block(device_block)];
        modify(tid, group.block_bitmap).bits[device_block - group.data_start] = false;
        dirty_metadata(tid, group.block_bitmap);
        freed_pending_[tid].push_back(device_block);
        freed_pending_tid_[device_block] = tid;
    }
}

void Ext4::release_freed_blocks(std::uint64_t tid) {
    // ext4_journal_commit_callback -> ext4_process_freed_data (C11).
    const auto found = freed_pending_.find(tid);
    if (found == freed_pending_.end()) return;
    for (const std::uint64_t block : found->second) freed_pending_tid_.erase(block);
    freed_pending_.erase(found);
}

auto Ext4::should_retry_alloc(int& retries) -> bool {
    // ext4_should_retry_alloc (fs/ext4/balloc.c): at most 3 retries; with no
    // block waiting for a commit to free it (s_mb_free_pending == 0), retry
    // only while a block is free (a request for more fails again: nothing
    // runs in between); else jbd2_journal_force_commit_nested (the running
    // transaction, or the committing one) and retry.
    if (++retries > 3) return false;
    if (freed_pending_tid_.empty()) return free_blocks() != 0;
    const std::uint64_t tid = running_ != 0 ? running_ : committing_;
    if (tid == 0) return true;
    SIM_NOTE("ENOSPC: ext4_should_retry_alloc forces the commit of transaction " + std::to_string(tid) +
             ", which frees " + std::to_string(freed_pending_tid_.size()) + " block(s)");
    log_start_commit(tid);
    log_wait_commit(tid);
    return true;
}

auto Ext4::free_blocks() const -> std::uint64_t {
    // ext4_has_free_clusters: s_freeclusters_counter less
    // s_dirtyclusters_counter. ext4_free_blocks adds a freed block to the
    // free counter at once, even one ext4_mb_free_metadata keeps from the
    // allocator until its transaction commits (freed_pending_); a block
    // another allocator holds in the buddy (buddy_used_) was claimed into
    // the dirty counter (ext4_claim_free_clusters) and leaves the free
    // counter only in ext4_mb_mark_diskspace_used: free less dirty leaves it
    // out. The watermark and root reservation are left out (none set).
    std::uint64_t free = 0;
    for (const Group& group : groups_) {
        const auto& bits = live_.at(group.block_bitmap).bits;
        for (std::uint64_t bit = 0; bit < bits.size(); bit++) {
            if (!bits[bit] && buddy_used_.count(group.data_start + bit) == 0) free++;
        }
    }
    return free;
}

}  // namespace model::ext4
