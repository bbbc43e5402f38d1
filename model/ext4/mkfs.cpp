// The model's mkfs.ext4 (e2fsprogs ext2fs_initialize, ext2fs_add_journal_inode):
// the layout (superblock, journal superblock, log, block groups) and the
// formatted metadata blocks.
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"

namespace model::ext4 {

auto Ext4::journal_length(std::uint32_t block_size, std::uint64_t device_blocks, std::uint64_t journal_bytes)
    -> std::uint64_t {
    // mkfs.ext4 -J size= when given; else the model's scaled-down journal.
    if (journal_bytes != 0) return journal_bytes / block_size;
    return std::clamp<std::uint64_t>(device_blocks / 8, 64, 1024);
}

auto Ext4::make_groups(std::uint32_t block_size, std::uint64_t device_blocks, std::uint64_t groups_start)
    -> std::vector<Group> {
    // ext2fs_initialize: s_blocks_per_group = 8 * block size (one bitmap
    // block); a last group too small for its bitmaps, inode table and 50 data
    // blocks is dropped. Group 0 also holds the root directory's blocks.
    const std::uint64_t per_group = std::uint64_t{8} * block_size;
    std::vector<Group> groups;
    for (std::uint64_t base = groups_start; base < device_blocks; base += per_group) {
        Group group;
        group.block_bitmap = base;
        group.inode_bitmap = base + 1;
        group.inode_table = base + 2;
        group.data_start = group.inode_table + inode_table_blocks + (groups.empty() ? dir_blocks : 0);
        group.data_end = std::min(base + per_group, device_blocks);
        if (!groups.empty() && group.data_end < group.data_start + 50) break;
        groups.push_back(group);
    }
    return groups;
}

auto Ext4::data_blocks(std::uint32_t block_size, std::uint64_t device_blocks, std::uint64_t journal_bytes)
    -> std::uint64_t {
    const std::uint64_t groups_start = 2 + journal_length(block_size, device_blocks, journal_bytes);
    std::uint64_t blocks = 0;
    for (const Group& group : make_groups(block_size, device_blocks, groups_start)) {
        if (group.data_end > group.data_start) blocks += group.data_end - group.data_start;
    }
    return blocks;
}

Ext4::Ext4(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names)
    : FileSystemBase(geometry, std::move(file_names)), knobs_(knobs), inodes_(file_names_.size()) {
    // mkfs.ext4: block 0 the ext4 superblock (static here), block 1 the journal
    // superblock, then the log, then the block groups.
    cp_scan_step_cost_ = static_cast<sim::Duration>(geometry.cost("cp_scan_step_ns", cpu_cost::cp_scan_step));
    const std::uint64_t log_blocks =
        journal_length(geometry.block_size, geometry.blocks, knobs.journal_bytes);
    j_last_ = j_first_ + log_blocks;
    groups_ = make_groups(geometry.block_size, geometry.blocks, j_last_);
    SIM_ASSERT(!groups_.empty() && groups_[0].data_start < groups_[0].data_end);
    dir_start_ = groups_[0].inode_table + inode_table_blocks;
    max_transaction_buffers_ = log_blocks / 4;  // jbd2_journal_get_max_txn_bufs
    j_head_ = j_first_;
    j_tail_ = j_first_;
    device_.format(0, 1, store(JournalSuper{}));
    // Mounted: journal_reset writes s_start = j_first (s_start 0 only after a clean unmount).
    device_.format(1, 1, store(JournalSuper{j_first_, 1}));
    groups_[0].used_dirs = 1;  // the root directory
    format_groups();
}

void Ext4::format_groups() {
    for (std::uint64_t g = 0; g < groups_.size(); g++) {
        const Group& group = groups_[g];
        for (std::uint64_t block = group.block_bitmap; block < group.data_start; block++) {
            MetaBlock meta;
            meta.block = block;
            if (block == group.block_bitmap) {
                meta.kind = MetaKind::block_bitmap;
                meta.bits.assign(group.data_end - group.data_start, false);
            } else if (block == group.inode_bitmap) {
                meta.kind = MetaKind::inode_bitmap;
                meta.bits.assign(inodes_per_group, false);
                if (g == 0) meta.bits[0] = true;  // inode 0 does not exist (ext4 also reserves 1..10)
            } else if (block < group.inode_table + inode_table_blocks) {
                meta.kind = MetaKind::inode_table;
                meta.inodes.resize(inodes_per_block);
            } else {
                meta.kind = MetaKind::directory;
            }
            device_.format(block, 1, store(meta));
            live_[block] = std::move(meta);
            live_hash_.note(block);
        }
    }
}

}  // namespace model::ext4
