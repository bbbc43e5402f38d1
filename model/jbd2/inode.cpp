// ext4's side (fs/ext4/ialloc.c, namei.c, inode.c, fsync.c): create, buffered
// write with ordered-mode data, fsync; the layout and the model's entry point.
#include <algorithm>
#include <optional>

#include "model/cpu_cost.hpp"
#include "model/jbd2/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "model/story.hpp"

namespace model::jbd2 {

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
    const std::uint64_t log_blocks = journal_length(geometry.block_size, geometry.blocks, knobs.journal_bytes);
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
        }
    }
}

auto Ext4::clone() const -> std::unique_ptr<FileSystem> {
    return std::make_unique<Ext4>(*this);
}

void Ext4::start_daemons() {
    auto& scheduler = sim::current_scheduler();
    kjournald2_running_ = true;
    scheduler.spawn_daemon("kjournald2", [this] { kjournald2(); });
    scheduler.spawn_daemon("jbd2_commit_timer", [this] { commit_timer(); });
    scheduler.spawn_daemon("flusher", [this] { flusher(); });
}

auto Ext4::op_name() const -> std::string {
    const auto found = task_op_.find(sim::current_scheduler().current());
    return found == task_op_.end() ? std::string("kernel") : found->second;
}

auto Ext4::execute(const OpCall& call) -> OpResult {
    task_op_[sim::current_scheduler().current()] = std::string(call.name);
    counters_.ops[std::string(call.name)]++;
    // The stretch from the operation's start to its first yield point (or
    // its first wait) is covered by no point: report what it may touch.
    using namespace points;
    switch (op_of<Op>(call)) {
        case Op::create:
        case Op::mkdir:
        case Op::unlink:
        case Op::rmdir:
        case Op::write: touch({journal, buffer, inode, log}); break;
        case Op::fsync:
        case Op::sync: touch({journal, buffer, inode}); break;
        case Op::checkpoint: touch({journal, checkpoint, buffer, log}); break;
        case Op::shrink: touch({journal, checkpoint, buffer}); break;
    }
    OpResult result = OpResult::ok;
    switch (op_of<Op>(call)) {
        case Op::create:
            if (inodes_[call.file].ino == 0) create(call.file);
            if (inodes_[call.file].ino == 0) result = OpResult::failed;
            break;
        case Op::write:
        case Op::fsync:
            // A file whose create failed (ENOENT, ENOSPC) has no inode: EBADF.
            if (inodes_[call.file].ino == 0) {
                SIM_NOTE(std::string(call.name) + " " + name(call.file) + ": no such file (its create failed)");
                result = OpResult::failed;
            } else if (op_of<Op>(call) == Op::write) {
                // ENOSPC: the write returns the error and acknowledges
                // nothing, or the bytes it copied before it.
                const std::uint64_t copied = write(call);
                if (copied == 0) result = OpResult::failed;
                if (copied > 0 && copied < call.length) {
                    call.copied = copied;
                    result = OpResult::short_write;
                }
            } else {
                fsync(call.file);
            }
            break;
        case Op::checkpoint: {
            // jbd2_journal_flush's and __jbd2_log_wait_for_space's call, under j_checkpoint_mutex.
            sim::MutexGuard guard(j_checkpoint_mutex_);
            do_checkpoint();
            break;
        }
        case Op::shrink:
            shrink_checkpoint_list();
            break;
        case Op::mkdir:
            if (live_dir(name(call.file)) == nullptr) mkdir(call.file);
            if (live_dir(name(call.file)) == nullptr) result = OpResult::failed;
            break;
        case Op::rmdir:
            if (!rmdir(call.file)) result = OpResult::failed;
            break;
        case Op::sync:
            sync();
            break;
        case Op::unlink:
            // No inode (never created, create failed, unlinked already): ENOENT.
            if (inodes_[call.file].ino == 0) {
                SIM_NOTE("unlink " + name(call.file) + ": ENOENT");
                result = OpResult::failed;
            } else {
                unlink(call.file);
            }
            break;
    }
    task_op_.erase(sim::current_scheduler().current());
    return result;
}

auto Ext4::inode_block(std::uint64_t ino) const -> std::uint64_t {
    return groups_[ino / inodes_per_group].inode_table + ino % inodes_per_group / inodes_per_block;
}

auto Ext4::group_of_block(std::uint64_t block) const -> std::uint64_t {
    const std::uint64_t per_group = std::uint64_t{8} * block_size_;
    return std::min<std::uint64_t>((block - groups_[0].block_bitmap) / per_group, groups_.size() - 1);
}

auto Ext4::is_static_meta(std::uint64_t block) const -> bool {
    if (block < groups_[0].block_bitmap) return false;
    const Group& group = groups_[group_of_block(block)];
    return block < group.data_start;
}

auto Ext4::block_name(std::uint64_t block) const -> std::string {
    const std::string number = " (block " + std::to_string(block) + ")";
    if (block < groups_[0].block_bitmap) return "block " + std::to_string(block);
    const std::uint64_t g = group_of_block(block);
    const Group& group = groups_[g];
    const std::string of_group = g == 0 ? "" : " of group " + std::to_string(g);
    if (block == group.block_bitmap) return "the block bitmap" + of_group + number;
    if (block == group.inode_bitmap) return "the inode bitmap" + of_group + number;
    if (block >= group.inode_table && block < group.inode_table + inode_table_blocks) {
        const std::uint64_t first = g * inodes_per_group + (block - group.inode_table) * inodes_per_block;
        return "inode table block of inodes " + std::to_string(first) + ".." +
               std::to_string(first + inodes_per_block - 1) + number;
    }
    if (block >= dir_start_ && block < groups_[0].data_start)
        return "directory block " + std::to_string(block - dir_start_) + number;
    for (const auto& [dir_name, dir] : dirs_) {
        const auto found = std::find(dir.blocks.begin(), dir.blocks.end(), block);
        if (found != dir.blocks.end())
            return "block " + std::to_string(found - dir.blocks.begin()) + " of directory " + dir_name + number;
    }
    return "block " + std::to_string(block);
}

auto Ext4::modify(std::uint64_t tid, std::uint64_t block) -> MetaBlock& {
    do_get_write_access(tid, block);
    MetaBlock& meta = live_.at(block);
    meta.version++;
    return meta;
}

auto Ext4::parent_of(const std::string& path) -> Directory* {
    const auto slash = path.find('/');
    if (slash == std::string::npos) return nullptr;
    return live_dir(path.substr(0, slash));
}

auto Ext4::live_dir(const std::string& path) -> Directory* {
    const auto found = dirs_.find(path);
    return found == dirs_.end() || found->second.dead ? nullptr : &found->second;
}

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
    MetaBlock& bits = modify(tid, bitmap);
    const auto bit = static_cast<std::uint64_t>(std::find(bits.bits.begin(), bits.bits.end(), false) - bits.bits.begin());
    const std::uint64_t ino = group * inodes_per_group + bit;
    bits.bits[bit] = true;
    dirty_metadata(tid, bitmap);
    MetaBlock& table = modify(tid, inode_block(ino));
    table.inodes[ino % inodes_per_block] = InodeRecord{true, directory, 0, {}};
    dirty_metadata(tid, inode_block(ino));
    return ino;
}

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
    // The buddy marks the blocks used under the group lock (mb_mark_used)
    // before ext4_mb_mark_diskspace_used takes write access to the bitmap
    // buffer, which may wait: no other allocator gets them meanwhile.
    for (const auto& [g, bit] : taken) buddy_used_.insert(groups_[g].data_start + bit);
    for (std::size_t i = 0; i < taken.size(); i++) {
        const Group& group = groups_[taken[i].first];
        const bool first_of_group = i == 0 || taken[i - 1].first != taken[i].first;
        const bool last_of_group = i + 1 == taken.size() || taken[i + 1].first != taken[i].first;
        if (first_of_group) do_get_write_access(tid, group.block_bitmap);
        MetaBlock& bitmap = live_.at(group.block_bitmap);
        if (first_of_group) bitmap.version++;
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

auto Ext4::append_dir_block(std::uint64_t tid, Directory& dir) -> bool {
    // ext4_append: a new block at the directory's end (ext4_bread with
    // EXT4_GET_BLOCKS_CREATE), journaled as metadata; the inode's size and
    // block map grow.
    const auto allocated = new_blocks(tid, dir.ino / inodes_per_group, 1);
    if (allocated.empty()) return false;
    const std::uint64_t block = allocated.front();
    MetaBlock meta;
    meta.kind = MetaKind::directory;
    meta.block = block;
    live_[block] = std::move(meta);
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
    if (dir == nullptr) {
        for (std::uint64_t block = dir_start_; block < groups_[0].data_start; block++) {
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
    if (full && !append_dir_block(tid, *dir)) return false;
    const std::uint64_t target = full ? dir->blocks.back() : found;
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
    const std::uint64_t ino = new_inode(tid, group, false);
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
    const std::uint64_t tid = journal_start();
    const std::string& path = name(file);
    const std::uint64_t group = path.find('/') == std::string::npos ? find_group_orlov() : groups_.size();
    bool room = false;
    for (std::uint64_t block = dir_start_; block < groups_[0].data_start && !room; block++) {
        room = live_.at(block).entries.size() < names_per_dir_block;
    }
    if (group == groups_.size() || !room) {
        SIM_NOTE("mkdir " + path + ": ENOSPC (no free inode or no room in the root directory), or not in the root");
        journal_stop(tid);
        return;
    }
    const std::uint64_t ino = new_inode(tid, group, true);
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
        return std::any_of(entries.begin(), entries.end(), [&](const auto& entry) { return entry.first == leaf; });
    };
    std::vector<std::uint64_t> blocks = dir != nullptr ? dir->blocks : std::vector<std::uint64_t>{};
    if (dir == nullptr) {
        for (std::uint64_t block = dir_start_; block < groups_[0].data_start; block++) blocks.push_back(block);
    }
    const auto found = std::find_if(blocks.begin(), blocks.end(), holds);
    SIM_ASSERT(found != blocks.end());
    auto& entries = modify(tid, *found).entries;
    std::erase_if(entries, [&](const auto& entry) { return entry.first == leaf; });
    dirty_metadata(tid, *found);
    if (dir == nullptr) return;
    modify(tid, inode_block(dir->ino));
    dirty_metadata(tid, inode_block(dir->ino));
}

void Ext4::free_blocks(std::uint64_t tid, const std::map<std::uint64_t, std::uint64_t>& blocks, bool metadata) {
    // ext4_free_blocks -> ext4_mb_clear_bb: the bits are cleared in the block
    // bitmap buffer now; with data=ordered the allocator gets the blocks back
    // only when this transaction has committed (ext4_mb_free_metadata), so a
    // crash cannot leave the old file naming a block new data went to. A
    // directory's blocks are metadata (get_default_free_blocks_flags:
    // EXT4_FREE_BLOCKS_METADATA | EXT4_FREE_BLOCKS_FORGET): ext4_forget
    // revokes each first, so that replay of an older transaction's copy
    // cannot overwrite what the block holds once reused.
    for (const auto& [file_block, device_block] : blocks) {
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

void Ext4::free_inode(std::uint64_t tid, std::uint64_t ino) {
    // ext4_evict_inode (the last reference is gone: fs_mark closed the file
    // before its unlink): ext4_truncate frees the blocks, the on-disk inode
    // is cleared (i_dtime, i_links_count 0: ext4_mark_inode_dirty), and
    // ext4_free_inode clears its bit in the inode bitmap. With a journal the
    // number may be taken again at once (find_inode_bit tests
    // recently_deleted only without one).
    const std::uint64_t table_block = inode_block(ino);
    const InodeRecord record = live_.at(table_block).inodes[ino % inodes_per_block];
    free_blocks(tid, record.blocks, record.directory);
    modify(tid, table_block).inodes[ino % inodes_per_block] = InodeRecord{};
    dirty_metadata(tid, table_block);
    const std::uint64_t bitmap = groups_[ino / inodes_per_group].inode_bitmap;
    modify(tid, bitmap).bits[ino % inodes_per_group] = false;
    dirty_metadata(tid, bitmap);
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
    std::optional<sim::MutexGuard> parent_lock;
    if (dir != nullptr) parent_lock.emplace(dir->i_rwsem);  // do_unlinkat: inode_lock_nested(parent)
    if (inodes_[file].ino == 0) {
        SIM_NOTE("unlink " + path + ": ENOENT (unlinked while this one waited for the directory)");
        return;
    }
    const std::uint64_t tid = journal_start();
    const std::string leaf = dir == nullptr ? path : path.substr(path.find('/') + 1);
    remove_entry(tid, dir, leaf);
    const std::uint64_t ino = inodes_[file].ino;
    free_inode(tid, ino);
    inodes_[file] = Inode{};
    SIM_NOTE("unlink " + path + ": inode " + std::to_string(ino) + " freed in transaction " + std::to_string(tid));
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
    sim::MutexGuard lock(dir->i_rwsem);
    const bool empty = std::all_of(dir->blocks.begin(), dir->blocks.end(),
                                   [this](std::uint64_t block) { return live_.at(block).entries.empty(); });
    if (dir->dead || !empty) {
        SIM_NOTE("rmdir " + path + (dir->dead ? ": ENOENT" : ": ENOTEMPTY (ext4_empty_dir)"));
        return false;
    }
    const std::uint64_t tid = journal_start();
    remove_entry(tid, nullptr, path);
    const std::uint64_t ino = dir->ino;
    const std::size_t blocks = dir->blocks.size();
    free_inode(tid, ino);
    groups_[ino / inodes_per_group].used_dirs--;
    dir->dead = true;
    dir->blocks.clear();
    SIM_NOTE("rmdir " + path + ": inode " + std::to_string(ino) + " and its " + std::to_string(blocks) +
             " directory blocks freed in transaction " + std::to_string(tid));
    journal_stop(tid);
    return true;
}

auto Ext4::write(const OpCall& call) -> std::uint64_t {
    // generic_perform_write, page by page: ext4_da_write_begin's -ENOSPC
    // goes to ext4_should_retry_alloc, which decides whether to try that
    // page again; when it gives up, the write returns the bytes
    // copied before that page, or -ENOSPC if none.
    const BlockRange range = call.blocks(block_size_);
    std::uint64_t done = range.start;
    for (int retries = 0;;) {
        const std::uint64_t reached = write_once(call, done);
        if (reached > done) retries = 0;  // the page that failed is a new write_begin
        done = reached;
        if (done == range.end || !should_retry_alloc(retries)) break;
    }
    if (done == range.start) {
        SIM_NOTE("write " + name(call.file) + ": returns -ENOSPC and changes nothing");
        return 0;
    }
    if (done == range.end) return call.length;
    const std::uint64_t copied = done * block_size_ - call.offset;
    SIM_NOTE("write " + name(call.file) + ": short write: " + std::to_string(copied) + " of " +
             std::to_string(call.length) + " bytes");
    return copied;
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

auto Ext4::write_once(const OpCall& call, std::uint64_t from) -> std::uint64_t {
    Inode& inode = inodes_[call.file];
    const BlockRange range{from, call.blocks(block_size_).end};
    const std::uint64_t tid = journal_start();
    const std::uint64_t table_block = inode_block(inode.ino);
    // ext4_da_write_begin/ext4_map_blocks: allocate the holes in the block
    // bitmaps (first fit from the inode's group), log the inode's block map and size.
    const InodeRecord& current = live_.at(table_block).inodes[inode.ino % inodes_per_block];
    std::vector<std::uint64_t> holes;
    for (std::uint64_t block = range.start; block < range.end; block++) {
        if (current.blocks.count(block) == 0) holes.push_back(block);
    }
    std::map<std::uint64_t, std::uint64_t> allocated;
    std::uint64_t reached = range.end;
    if (!holes.empty()) {
        auto blocks = new_blocks(tid, inode.ino / inodes_per_group, holes.size());
        if (blocks.empty()) {
            // ext4_da_write_begin's reservation (ext4_da_reserve_space ->
            // ext4_claim_free_clusters) fails with -ENOSPC before its page is
            // dirtied; the pages before it were copied. The model allocates
            // the holes that have a block in one transaction and stops at
            // the first that has none.
            const std::uint64_t free = allocatable_blocks(holes.size());
            if (free > 0) blocks = new_blocks(tid, inode.ino / inodes_per_group, free);
            SIM_NOTE("write " + name(call.file) + ": ENOSPC (no free block for " +
                     std::to_string(holes.size() - blocks.size()) + " hole(s)" +
                     (blocks.empty() ? std::string() : " of " + std::to_string(holes.size())) + ")");
            if (blocks.empty()) {
                journal_stop(tid);
                return from;
            }
            reached = holes[blocks.size()];
        }
        for (std::size_t i = 0; i < blocks.size(); i++) allocated[holes[i]] = blocks[i];
    }
    for (const auto& [file_block, device_block] : allocated) {
        // clean_bdev_aliases (mpage_map_one_extent, a new mapping): the block
        // device's buffer of a block that was metadata (a removed directory's)
        // is cleaned and its write waited for, so none lands after the data.
        if (bcache_.find(device_block) == nullptr) continue;
        BufferHead& bh = bcache_.get(device_block);
        BufferCache::test_clear_buffer_dirty(bh);
        bcache_.wait_on_buffer(bh);
    }
    InodeRecord& record = modify(tid, table_block).inodes[inode.ino % inodes_per_block];
    for (const auto& [file_block, device_block] : allocated) record.blocks[file_block] = device_block;
    const std::uint64_t copied_end = reached == range.end ? call.offset + call.length : reached * block_size_;
    record.size = std::max(record.size, copied_end);
    dirty_metadata(tid, table_block);
    for (std::uint64_t block = range.start; block < reached; block++) {
        inode.dirty_pages[block] = disk::Content::data(call.file, block, call.version);
        sim::cpu(model::cpu_cost::page_copy);
    }
    // jbd2_journal_inode_ranges_for_write: ordered mode writes the data before the commit.
    Transaction& transaction = tx(tid);
    if (std::find(transaction.t_inode_list.begin(), transaction.t_inode_list.end(), call.file) ==
        transaction.t_inode_list.end()) {
        transaction.t_inode_list.push_back(call.file);
    }
    inode.i_sync_tid = tid;
    journal_stop(tid);
    sim::yield(points::write_done);
    return reached;
}

auto Ext4::write_pages(std::uint32_t file) -> std::uint64_t {
    Inode& inode = inodes_[file];
    const InodeRecord& record = live_.at(inode_block(inode.ino)).inodes[inode.ino % inodes_per_block];
    std::uint64_t submitted = 0;
    for (const auto& [file_block, content] : inode.dirty_pages) {
        const auto mapped = record.blocks.find(file_block);
        SIM_ASSERT(mapped != record.blocks.end());
        data_in_flight_++;
        submitted++;
        device_.submit_write(mapped->second, 1, content, false, "data", [this] {
            data_in_flight_--;
            data_wait_.wake_all();
        });
    }
    inode.dirty_pages.clear();
    return submitted;
}

void Ext4::wait_data() {
    while (data_in_flight_ > 0) data_wait_.wait();
}

void Ext4::fsync(std::uint32_t file) {
    // ext4_sync_file: file_write_and_wait_range, then jbd2_complete_transaction
    // on i_sync_tid; when that transaction already committed, the data written
    // since needs a cache flush of its own (needs_barrier).
    Inode& inode = inodes_[file];
    write_pages(file);
    wait_data();
    sim::yield(points::fsync_after_data);
    const std::uint64_t tid = inode.i_sync_tid;
    if (tid > j_commit_sequence_) {
        log_start_commit(tid);
        log_wait_commit(tid);
    } else {
        device_.flush_and_wait();
    }
}

void Ext4::sync() {
    // ksys_sync (fs/sync.c): the files' dirty pages are written and waited
    // (sync_inodes_sb), ext4_sync_fs (sync_fs below) commits the running or
    // committing transaction and waits for it, then the block device's dirty buffers are written and
    // waited (sync_bdevs: filemap_fdatawrite, filemap_fdatawait). The clean
    // buffers stay on their checkpoint lists until a cleanup or a checkpoint
    // removes them.
    for (std::uint32_t file = 0; file < inodes_.size(); file++) {
        if (inodes_[file].ino != 0) write_pages(file);
    }
    wait_data();
    sync_fs();
    std::vector<std::uint64_t> dirty;
    for (const auto& [block, buffer] : bcache_.buffers()) {
        if (buffer.dirty) dirty.push_back(block);
    }
    for (const std::uint64_t block : dirty) {
        BufferHead& bh = bcache_.get(block);
        bcache_.lock_buffer(bh);
        if (!BufferCache::test_clear_buffer_dirty(bh)) {
            bcache_.unlock_buffer(bh);
            continue;
        }
        bcache_.submit_write(device_, bh, store(live_.at(block)), "meta");
    }
    for (const std::uint64_t block : dirty) {
        BufferHead& bh = bcache_.get(block);
        bcache_.lock_buffer(bh);  // wait_on_buffer
        bcache_.unlock_buffer(bh);
    }
    SIM_NOTE("sync: " + std::to_string(dirty.size()) + " dirty metadata buffers written home");
}

void Ext4::sync_fs() {
    // ext4_sync_fs (wait = 1): the target is jbd2_get_latest_transaction's
    // (the running transaction, else the committing one, else the last
    // committed); jbd2_journal_start_commit asks for the running one's
    // commit or names the committing one, and jbd2_log_wait_commit waits for
    // it. The data sync_inodes_sb wrote needs a FLUSH of its own unless that
    // commit's commit block (PREFLUSH) is still to come
    // (jbd2_trans_will_send_data_barrier; the journal is internal and
    // JBD2_BARRIER is set, ext4's default).
    const std::uint64_t target = running_ != 0 ? running_ : committing_ != 0 ? committing_ : j_commit_sequence_;
    const bool needs_barrier = !trans_will_send_data_barrier(target);
    if (running_ != 0 || committing_ != 0) {
        log_start_commit(target);
        log_wait_commit(target);
    }
    if (needs_barrier) device_.flush_and_wait();
}

auto Ext4::trans_will_send_data_barrier(std::uint64_t tid) const -> bool {
    // jbd2_trans_will_send_data_barrier (fs/jbd2/journal.c), j_fs_dev == j_dev.
    if (j_commit_sequence_ >= tid) return false;  // already committed
    if (committing_ != tid) return true;          // its commit is still to start
    return transactions_.at(tid).state < TState::commit_jflush;
}

auto Ext4::counters() const -> std::map<std::string, std::uint64_t> {
    std::map<std::string, std::uint64_t> result{
        {"transactions", counters_.transactions},
        {"commits", counters_.commits},
        {"cp_scan_steps", counters_.cp_scan_steps},
        {"cp_scan_longest", counters_.cp_scan_longest},
        {"shrink_scan_steps", counters_.shrink_scan_steps},
        {"checkpoint_writes", counters_.checkpoint_writes},
        {"flusher_writes", counters_.flusher_writes},
        {"tail_updates", counters_.tail_updates},
        {"transactions_dropped", counters_.transactions_dropped},
        {"disk_writes", device_.counters().writes},
        {"disk_flushes", device_.counters().flushes},
    };
    for (const auto& [op, count] : counters_.ops) result["ops." + op] = count;
    return result;
}

}  // namespace model::jbd2
