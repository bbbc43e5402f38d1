// fs/ext4/ialloc.c: find_group_orlov, find_group_other, __ext4_new_inode and
// the inode's release (ext4_evict_inode, ext4_free_inode).
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

auto Ext4::find_group_orlov() const -> std::uint64_t {
    // find_group_orlov for a directory whose parent is the root: the group
    // with free inodes and the fewest directories, searched from a start the
    // kernel takes from the name's hash (s_hash_seed) or at random; the
    // model starts at group 0. The average free inode/block tests pass for
    // every group of an empty file system and are left out.
    std::uint64_t best = groups_.size();
    for (std::uint64_t g = 0; g < groups_.size(); g++) {
        const auto& bits = live_.at(groups_[g].inode_bitmap).bits;
        if (std::find(bits.begin(), bits.end(), false) == bits.end()) continue;
        if (best == groups_.size() || groups_[g].used_dirs < groups_[best].used_dirs) best = g;
    }
    return best;
}

auto Ext4::find_group_other(std::uint64_t parent_group) const -> std::uint64_t {
    // find_group_other without flex_bg: the parent's group if it has a free
    // inode and a free block; the kernel's hashed quadratic probe that comes
    // next is a linear one here (the model has no other use for it).
    for (std::uint64_t i = 0; i < groups_.size(); i++) {
        const std::uint64_t g = (parent_group + i) % groups_.size();
        const auto& inodes = live_.at(groups_[g].inode_bitmap).bits;
        const auto& blocks = live_.at(groups_[g].block_bitmap).bits;
        if (std::find(inodes.begin(), inodes.end(), false) != inodes.end() &&
            std::find(blocks.begin(), blocks.end(), false) != blocks.end())
            return g;
    }
    return groups_.size();
}

auto Ext4::new_inode(std::uint64_t tid, std::uint64_t group, bool directory) -> std::uint64_t {
    // __ext4_new_inode: write access to the group's inode bitmap, then its
    // first free bit, taken under the group lock (ext4_test_and_set_bit; a
    // bit another task took meanwhile sends find_inode_bit on: the model
    // looks only once it holds write access, so no task takes it between),
    // the inode in its inode-table block.
    const std::uint64_t bitmap = groups_[group].inode_bitmap;
    SIM_LIVE(tid, directory, bitmap);
    MetaBlock& bits = modify(tid, bitmap);
    const auto bit =
        static_cast<std::uint64_t>(std::find(bits.bits.begin(), bits.bits.end(), false) - bits.bits.begin());
    const std::uint64_t ino = group * inodes_per_group + bit;
    SIM_LIVE(ino);
    bits.bits[bit] = true;
    dirty_metadata(tid, bitmap);
    MetaBlock& table = modify(tid, inode_block(ino));
    table.inodes[ino % inodes_per_block] = InodeRecord{true, directory, 0, {}};
    dirty_metadata(tid, inode_block(ino));
    return ino;
}

void Ext4::free_inode(std::uint64_t tid, std::uint64_t ino) {
    // ext4_evict_inode (the last reference is gone: fs_mark closed the file
    // before its unlink): ext4_truncate frees the blocks, the on-disk inode
    // is cleared (i_dtime, i_links_count 0: ext4_mark_inode_dirty), and
    // ext4_free_inode clears its bit in the inode bitmap. With a journal the
    // number may be taken again at once (find_inode_bit tests
    // recently_deleted only without one).
    const std::uint64_t table_block = inode_block(ino);
    const InodeRecord record = live_.at(table_block).inodes[ino % inodes_per_block];
    SIM_LIVE(tid, ino, record);
    free_blocks(tid, record.blocks, record.directory);
    modify(tid, table_block).inodes[ino % inodes_per_block] = InodeRecord{};
    dirty_metadata(tid, table_block);
    const std::uint64_t bitmap = groups_[ino / inodes_per_group].inode_bitmap;
    modify(tid, bitmap).bits[ino % inodes_per_group] = false;
    dirty_metadata(tid, bitmap);
}

}  // namespace model::ext4
