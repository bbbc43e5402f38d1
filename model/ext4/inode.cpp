// fs/ext4/inode.c: buffered write with ordered-mode data (ext4_da_write_begin,
// ext4_map_blocks), the pages' writeback, and where an inode and a block live.
#include <algorithm>
#include <optional>

#include "model/cpu_cost.hpp"
#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

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
            return "block " + std::to_string(found - dir.blocks.begin()) + " of directory " + dir_name +
                   number;
    }
    return "block " + std::to_string(block);
}

auto Ext4::modify(std::uint64_t tid, std::uint64_t block) -> MetaBlock& {
    SIM_LIVE(block);
    do_get_write_access(tid, block);
    MetaBlock& meta = live_.at(block);
    meta.version++;
    live_hash_.note(block);
    return meta;
}

auto Ext4::write(const OpCall& call) -> std::uint64_t {
    // generic_perform_write, page by page: ext4_da_write_begin's -ENOSPC
    // goes to ext4_should_retry_alloc, which decides whether to try that
    // page again; when it gives up, the write returns the bytes
    // copied before that page, or -ENOSPC if none.
    const BlockRange range = call.blocks(block_size_);
    std::uint64_t done = range.start;
    int retries = 0;
    SIM_LIVE(done, retries);
    for (;;) {
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

auto Ext4::map_holes(const OpCall& call, std::uint64_t tid, const BlockRange& range,
                     std::map<std::uint64_t, std::uint64_t>& allocated) -> std::optional<std::uint64_t> {
    // ext4_da_write_begin/ext4_map_blocks: allocate the holes in the block
    // bitmaps (first fit from the inode's group). The block the write
    // reaches, or none (-ENOSPC at its first page).
    const Inode& inode = inodes_[call.file];
    const InodeRecord& current = live_.at(inode_block(inode.ino)).inodes[inode.ino % inodes_per_block];
    std::vector<std::uint64_t> holes;
    for (std::uint64_t block = range.start; block < range.end; block++) {
        if (current.blocks.count(block) == 0) holes.push_back(block);
    }
    if (holes.empty()) return range.end;
    std::uint64_t reached = range.end;
    SIM_LIVE(tid, holes);
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
        if (blocks.empty()) return std::nullopt;
        reached = holes[blocks.size()];
    }
    for (std::size_t i = 0; i < blocks.size(); i++) allocated[holes[i]] = blocks[i];
    return reached;
}

auto Ext4::write_once(const OpCall& call, std::uint64_t from) -> std::uint64_t {
    SIM_LIVE(from);
    Inode& inode = inodes_[call.file];
    const BlockRange range{from, call.blocks(block_size_).end};
    const std::uint64_t tid = journal_start();
    const std::uint64_t table_block = inode_block(inode.ino);
    std::map<std::uint64_t, std::uint64_t> allocated;
    SIM_LIVE(tid, allocated);
    const std::optional<std::uint64_t> mapped = map_holes(call, tid, range, allocated);
    if (!mapped) {
        journal_stop(tid);
        return from;
    }
    const std::uint64_t reached = *mapped;
    SIM_LIVE(reached);
    for (const auto& [file_block, device_block] : allocated) {
        SIM_LIVE(file_block);
        // clean_bdev_aliases (mpage_map_one_extent, a new mapping): the block
        // device's buffer of a block that was metadata (a removed directory's)
        // is cleaned and its write waited for, so none lands after the data.
        if (bcache_.find(device_block) == nullptr) continue;
        BufferHead& bh = bcache_.get(device_block);
        BufferCache::test_clear_buffer_dirty(bh);
        bcache_.wait_on_buffer(bh);
    }
    // Log the inode's block map and size.
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

}  // namespace model::ext4
