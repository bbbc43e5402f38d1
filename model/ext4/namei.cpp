// fs/ext4/namei.c: create, mkdir, unlink, rmdir and the directory entries
// (ext4_add_entry, ext4_append, ext4_delete_entry).
#include <algorithm>
#include <optional>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

auto Ext4::parent_of(const std::string& path) -> Directory* {
    const auto slash = path.find('/');
    if (slash == std::string::npos) return nullptr;
    return live_dir(path.substr(0, slash));
}

auto Ext4::live_dir(const std::string& path) -> Directory* {
    const auto found = dirs_.find(path);
    return found == dirs_.end() || found->second.dead ? nullptr : &found->second;
}

auto Ext4::append_dir_block(std::uint64_t tid, Directory& dir) -> bool {
    // ext4_append: a new block at the directory's end (ext4_bread with
    // EXT4_GET_BLOCKS_CREATE), journaled as metadata; the inode's size and
    // block map grow.
    SIM_LIVE(tid);
    const auto allocated = new_blocks(tid, dir.ino / inodes_per_group, 1);
    if (allocated.empty()) return false;
    const std::uint64_t block = allocated.front();
    SIM_LIVE(block);
    MetaBlock meta;
    meta.kind = MetaKind::directory;
    meta.block = block;
    if (const auto old = live_.find(block); old != live_.end()) live_hash_.forget(old->second);
    live_[block] = std::move(meta);
    live_hash_.note(block);
    dir.blocks.push_back(block);
    modify(tid, block);
    dirty_metadata(tid, block);
    InodeRecord& record = modify(tid, inode_block(dir.ino)).inodes[dir.ino % inodes_per_block];
    record.size = dir.blocks.size() * block_size_;
    record.blocks[dir.blocks.size() - 1] = block;
    dirty_metadata(tid, inode_block(dir.ino));
    return true;
}

auto Ext4::add_entry(std::uint64_t tid, Directory* dir, const std::string& leaf, std::uint64_t ino) -> bool {
    // ext4_add_entry: the first directory block with room (linear directory,
    // no htree); a full subdirectory grows by a block (ext4_append); the
    // directory's inode is dirtied (mtime; ext4_mark_inode_dirty), but for
    // the root's, which the model does not keep.
    SIM_LIVE(tid, dir, leaf, ino);
    if (dir == nullptr) {
        for (std::uint64_t block = dir_start_; block < groups_[0].data_start; block++) {
            SIM_LIVE(block);
            if (live_.at(block).entries.size() >= names_per_dir_block) continue;
            modify(tid, block).entries.emplace_back(leaf, ino);
            dirty_metadata(tid, block);
            return true;
        }
        return false;
    }
    // The first block with room (ext4_find_dest_de in each block, in order:
    // a name removed by unlink leaves room that a later name reuses).
    const auto room = std::find_if(dir->blocks.begin(), dir->blocks.end(), [this](std::uint64_t block) {
        return live_.at(block).entries.size() < names_per_dir_block;
    });
    const bool full = room == dir->blocks.end();
    const std::uint64_t found = full ? 0 : *room;  // before append_dir_block moves the vector
    SIM_LIVE(full, found);
    if (full && !append_dir_block(tid, *dir)) return false;
    const std::uint64_t target = full ? dir->blocks.back() : found;
    SIM_LIVE(target);
    modify(tid, target).entries.emplace_back(leaf, ino);
    dirty_metadata(tid, target);
    modify(tid, inode_block(dir->ino));
    dirty_metadata(tid, inode_block(dir->ino));
    return true;
}

void Ext4::create(std::uint32_t file) {
    // ext4_create: ext4_new_inode (find_group_other, inode bitmap, inode
    // table), ext4_add_entry.
    const std::string& path = name(file);
    Directory* dir = parent_of(path);
    SIM_LIVE(file, dir);
    std::optional<sim::MutexGuard> parent_lock;
    if (dir != nullptr) parent_lock.emplace(dir->i_rwsem);  // inode_lock(dir) in open_last_lookups
    if ((dir == nullptr || dir->dead) && path.find('/') != std::string::npos) {
        SIM_NOTE("create " + path + ": ENOENT (no such directory)");  // or IS_DEADDIR (may_create)
        return;
    }
    const std::uint64_t tid = journal_start();
    const std::uint64_t group = find_group_other(dir == nullptr ? 0 : dir->ino / inodes_per_group);
    bool room = dir != nullptr;
    for (std::uint64_t block = dir_start_; block < groups_[0].data_start && !room; block++) {
        room = live_.at(block).entries.size() < names_per_dir_block;
    }
    if (group == groups_.size() || !room) {
        SIM_NOTE("create " + path + ": ENOSPC (no free inode or no room in the directory)");
        journal_stop(tid);
        return;
    }
    SIM_LIVE(tid);
    const std::uint64_t ino = new_inode(tid, group, false);
    SIM_LIVE(ino);
    const std::string leaf = dir == nullptr ? path : path.substr(path.find('/') + 1);
    if (!add_entry(tid, dir, leaf, ino)) SIM_NOTE("create " + path + ": ENOSPC (directory block)");
    inodes_[file].ino = ino;
    inodes_[file].i_sync_tid = tid;
    SIM_NOTE("create " + path + ": inode " + std::to_string(ino) + " in transaction " + std::to_string(tid));
    journal_stop(tid);
    sim::yield(points::create_done);
}

void Ext4::mkdir(std::uint32_t file) {
    // ext4_mkdir in the root: ext4_new_inode (find_group_orlov), the
    // directory's first block (ext4_init_new_dir), the name in the root.
    SIM_LIVE(file);
    const std::uint64_t tid = journal_start();
    const std::string& path = name(file);
    const std::uint64_t group = path.find('/') == std::string::npos ? find_group_orlov() : groups_.size();
    SIM_LIVE(tid, group);
    bool room = false;
    for (std::uint64_t block = dir_start_; block < groups_[0].data_start && !room; block++) {
        room = live_.at(block).entries.size() < names_per_dir_block;
    }
    if (group == groups_.size() || !room) {
        SIM_NOTE("mkdir " + path +
                 ": ENOSPC (no free inode or no room in the root directory), or not in the root");
        journal_stop(tid);
        return;
    }
    const std::uint64_t ino = new_inode(tid, group, true);
    SIM_LIVE(ino);
    groups_[group].used_dirs++;
    Directory& dir = dirs_[path];  // a removed one of the same name is made anew
    dir.ino = ino;
    dir.dead = false;
    dir.blocks.clear();
    if (!append_dir_block(tid, dir) || !add_entry(tid, nullptr, path, ino)) {
        SIM_NOTE("mkdir " + path + ": ENOSPC");  // the kernel unwinds; the model keeps what it did
    }
    SIM_NOTE("mkdir " + path + ": inode " + std::to_string(ino) + " in group " + std::to_string(group) +
             ", transaction " + std::to_string(tid));
    journal_stop(tid);
    sim::yield(points::create_done);
}

void Ext4::remove_entry(std::uint64_t tid, Directory* dir, const std::string& leaf) {
    // ext4_delete_entry: the name leaves its directory block (its space joins
    // the previous entry's rec_len); the directory's inode is dirtied (mtime),
    // but for the root's, which the model does not keep.
    const auto holds = [&](std::uint64_t block) {
        const auto& entries = live_.at(block).entries;
        return std::any_of(entries.begin(), entries.end(),
                           [&](const auto& entry) { return entry.first == leaf; });
    };
    std::vector<std::uint64_t> blocks = dir != nullptr ? dir->blocks : std::vector<std::uint64_t>{};
    if (dir == nullptr) {
        for (std::uint64_t block = dir_start_; block < groups_[0].data_start; block++)
            blocks.push_back(block);
    }
    const auto found = std::find_if(blocks.begin(), blocks.end(), holds);
    SIM_ASSERT(found != blocks.end());
    const std::uint64_t block = *found;
    SIM_LIVE(tid, dir, leaf, block);
    auto& entries = modify(tid, *found).entries;
    std::erase_if(entries, [&](const auto& entry) { return entry.first == leaf; });
    dirty_metadata(tid, *found);
    if (dir == nullptr) return;
    modify(tid, inode_block(dir->ino));
    dirty_metadata(tid, inode_block(dir->ino));
}

void Ext4::unlink(std::uint32_t file) {
    // ext4_unlink, then the final iput's ext4_evict_inode. The kernel uses
    // two handles and puts the inode on the orphan list between them (orphan
    // recovery finishes a delete a crash interrupted); the model does both
    // in one handle, so no crash falls between them. Dirty pages are dropped
    // (truncate_inode_pages); a regular file's blocks are data, freed with no
    // revoke record (get_default_free_blocks_flags gives no FORGET flag).
    const std::string& path = name(file);
    Directory* dir = parent_of(path);
    SIM_LIVE(file, dir);
    std::optional<sim::MutexGuard> parent_lock;
    if (dir != nullptr) parent_lock.emplace(dir->i_rwsem);  // do_unlinkat: inode_lock_nested(parent)
    if (inodes_[file].ino == 0) {
        SIM_NOTE("unlink " + path + ": ENOENT (unlinked while this one waited for the directory)");
        return;
    }
    const std::uint64_t tid = journal_start();
    SIM_LIVE(tid);
    const std::string leaf = dir == nullptr ? path : path.substr(path.find('/') + 1);
    remove_entry(tid, dir, leaf);
    const std::uint64_t ino = inodes_[file].ino;
    SIM_LIVE(ino);
    free_inode(tid, ino);
    inodes_[file] = Inode{};
    SIM_NOTE("unlink " + path + ": inode " + std::to_string(ino) + " freed in transaction " +
             std::to_string(tid));
    journal_stop(tid);
}

auto Ext4::rmdir(std::uint32_t file) -> bool {
    // do_rmdir -> ext4_rmdir, then the final iput's ext4_evict_inode, in one
    // handle as unlink does: the name leaves the root directory, the
    // directory's blocks are freed as metadata (each revoked, free_blocks)
    // and its inode is cleared. vfs_rmdir holds the victim's i_rwsem and
    // marks it S_DEAD, so no create can add a name to it meanwhile.
    const std::string& path = name(file);
    Directory* dir = live_dir(path);
    if (dir == nullptr) {
        SIM_NOTE("rmdir " + path + ": ENOENT");
        return false;
    }
    SIM_LIVE(file, dir);
    sim::MutexGuard lock(dir->i_rwsem);
    const bool empty = std::all_of(dir->blocks.begin(), dir->blocks.end(),
                                   [this](std::uint64_t block) { return live_.at(block).entries.empty(); });
    if (dir->dead || !empty) {
        SIM_NOTE("rmdir " + path + (dir->dead ? ": ENOENT" : ": ENOTEMPTY (ext4_empty_dir)"));
        return false;
    }
    const std::uint64_t tid = journal_start();
    SIM_LIVE(tid);
    remove_entry(tid, nullptr, path);
    const std::uint64_t ino = dir->ino;
    const std::size_t blocks = dir->blocks.size();
    SIM_LIVE(ino, blocks);
    free_inode(tid, ino);
    groups_[ino / inodes_per_group].used_dirs--;
    dir->dead = true;
    dir->blocks.clear();
    SIM_NOTE("rmdir " + path + ": inode " + std::to_string(ino) + " and its " + std::to_string(blocks) +
             " directory blocks freed in transaction " + std::to_string(tid));
    journal_stop(tid);
    return true;
}

}  // namespace model::ext4
