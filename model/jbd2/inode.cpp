// ext4's side (fs/ext4/ialloc.c, namei.c, inode.c, fsync.c): create, buffered
// write with ordered-mode data, fsync; the layout and the model's entry point.
#include <algorithm>

#include "model/cpu_cost.hpp"
#include "model/jbd2/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "model/story.hpp"

namespace model::jbd2 {

auto Ext4::data_start(std::uint64_t device_blocks) -> std::uint64_t {
    const std::uint64_t log_blocks = std::clamp<std::uint64_t>(device_blocks / 8, 64, 1024);
    return 2 + log_blocks + 2 + inode_table_blocks + dir_blocks;
}

Ext4::Ext4(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names)
    : FileSystemBase(geometry, std::move(file_names)), knobs_(knobs), inodes_(file_names_.size()) {
    // mkfs.ext4: block 0 the ext4 superblock (static here), block 1 the journal
    // superblock, then the log, the bitmaps, the inode table, the directory.
    const std::uint64_t log_blocks = std::clamp<std::uint64_t>(geometry.blocks / 8, 64, 1024);
    j_last_ = j_first_ + log_blocks;
    block_bitmap_ = j_last_;
    inode_bitmap_ = block_bitmap_ + 1;
    inode_table_ = inode_bitmap_ + 1;
    dir_start_ = inode_table_ + inode_table_blocks;
    data_start_ = dir_start_ + dir_blocks;
    SIM_ASSERT(data_start_ == data_start(geometry.blocks) && data_start_ < geometry.blocks);
    max_transaction_buffers_ = log_blocks / 4;  // jbd2_journal_get_max_txn_bufs
    j_head_ = j_first_;
    j_tail_ = j_first_;
    device_.format(0, 1, store(JournalSuper{}));
    // Mounted: journal_reset writes s_start = j_first (s_start 0 only after a clean unmount).
    device_.format(1, 1, store(JournalSuper{j_first_, 1}));
    for (std::uint64_t block = block_bitmap_; block < data_start_; block++) {
        MetaBlock meta;
        meta.block = block;
        if (block == block_bitmap_) {
            meta.kind = MetaKind::block_bitmap;
            meta.bits.assign(geometry.blocks - data_start_, false);
        } else if (block == inode_bitmap_) {
            meta.kind = MetaKind::inode_bitmap;
            meta.bits.assign(inode_table_blocks * inodes_per_block, false);
            meta.bits[0] = true;  // inode 0 does not exist (ext4 also reserves 1..10)
        } else if (block < dir_start_) {
            meta.kind = MetaKind::inode_table;
            meta.inodes.resize(inodes_per_block);
        } else {
            meta.kind = MetaKind::directory;
        }
        device_.format(block, 1, store(meta));
        live_[block] = std::move(meta);
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
        case Op::write: touch({journal, buffer, inode, log}); break;
        case Op::fsync: touch({journal, buffer, inode}); break;
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
            write(call);
            break;
        case Op::fsync:
            fsync(call.file);
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
    }
    task_op_.erase(sim::current_scheduler().current());
    return result;
}

auto Ext4::inode_block(std::uint64_t ino) const -> std::uint64_t {
    return inode_table_ + ino / inodes_per_block;
}

auto Ext4::block_name(std::uint64_t block) const -> std::string {
    const std::string number = " (block " + std::to_string(block) + ")";
    if (block == block_bitmap_) return "the block bitmap" + number;
    if (block == inode_bitmap_) return "the inode bitmap" + number;
    if (block >= inode_table_ && block < dir_start_) {
        const std::uint64_t first = (block - inode_table_) * inodes_per_block;
        return "inode table block of inodes " + std::to_string(first) + ".." +
               std::to_string(first + inodes_per_block - 1) + number;
    }
    if (block >= dir_start_ && block < data_start_)
        return "directory block " + std::to_string(block - dir_start_) + number;
    return "block " + std::to_string(block);
}

auto Ext4::modify(std::uint64_t tid, std::uint64_t block) -> MetaBlock& {
    do_get_write_access(tid, block);
    MetaBlock& meta = live_.at(block);
    meta.version++;
    return meta;
}

void Ext4::create(std::uint32_t file) {
    // ext4_create: ext4_new_inode (inode bitmap, inode table), ext4_add_entry.
    const std::uint64_t tid = journal_start();
    const MetaBlock& bitmap = live_.at(inode_bitmap_);
    const auto free_bit = std::find(bitmap.bits.begin(), bitmap.bits.end(), false);
    bool room = false;
    for (std::uint64_t block = dir_start_; block < data_start_ && !room; block++) {
        room = live_.at(block).entries.size() < names_per_dir_block;
    }
    if (free_bit == bitmap.bits.end() || !room) {
        SIM_NOTE("create " + name(file) + ": ENOSPC (no free inode or no room in the directory)");
        journal_stop(tid);
        return;
    }
    const auto ino = static_cast<std::uint64_t>(free_bit - bitmap.bits.begin());
    modify(tid, inode_bitmap_).bits[ino] = true;
    dirty_metadata(tid, inode_bitmap_);
    MetaBlock& table = modify(tid, inode_block(ino));
    table.inodes[ino % inodes_per_block] = InodeRecord{true, 0, {}};
    dirty_metadata(tid, inode_block(ino));
    for (std::uint64_t block = dir_start_; block < data_start_; block++) {
        if (live_.at(block).entries.size() >= names_per_dir_block) continue;
        modify(tid, block).entries.emplace_back(name(file), ino);
        dirty_metadata(tid, block);
        break;
    }
    inodes_[file].ino = ino;
    inodes_[file].i_sync_tid = tid;
    SIM_NOTE("create " + name(file) + ": inode " + std::to_string(ino) + " in transaction " +
             std::to_string(tid));
    journal_stop(tid);
    sim::yield(points::create_done);
}

void Ext4::write(const OpCall& call) {
    Inode& inode = inodes_[call.file];
    const BlockRange range = call.blocks(block_size_);
    const std::uint64_t tid = journal_start();
    const std::uint64_t table_block = inode_block(inode.ino);
    // ext4_da_write_begin/ext4_map_blocks: allocate the holes in the block
    // bitmap (first fit), log the inode's block map and size.
    const InodeRecord& current = live_.at(table_block).inodes[inode.ino % inodes_per_block];
    std::vector<std::uint64_t> holes;
    for (std::uint64_t block = range.start; block < range.end; block++) {
        if (current.blocks.count(block) == 0) holes.push_back(block);
    }
    std::map<std::uint64_t, std::uint64_t> allocated;
    if (!holes.empty()) {
        const MetaBlock& bitmap = live_.at(block_bitmap_);
        std::vector<std::uint64_t> free;
        for (std::uint64_t bit = 0; bit < bitmap.bits.size() && free.size() < holes.size(); bit++) {
            if (!bitmap.bits[bit]) free.push_back(bit);
        }
        if (free.size() < holes.size()) {
            SIM_NOTE("write " + name(call.file) + ": ENOSPC");
            journal_stop(tid);
            return;
        }
        MetaBlock& bits = modify(tid, block_bitmap_);
        for (std::size_t i = 0; i < holes.size(); i++) {
            bits.bits[free[i]] = true;
            allocated[holes[i]] = data_start_ + free[i];
        }
        dirty_metadata(tid, block_bitmap_);
    }
    InodeRecord& record = modify(tid, table_block).inodes[inode.ino % inodes_per_block];
    for (const auto& [file_block, device_block] : allocated) record.blocks[file_block] = device_block;
    record.size = std::max(record.size, call.offset + call.length);
    dirty_metadata(tid, table_block);
    for (std::uint64_t block = range.start; block < range.end; block++) {
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

auto Ext4::counters() const -> std::map<std::string, std::uint64_t> {
    std::map<std::string, std::uint64_t> result{
        {"transactions", counters_.transactions},
        {"commits", counters_.commits},
        {"cp_scan_steps", counters_.cp_scan_steps},
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
