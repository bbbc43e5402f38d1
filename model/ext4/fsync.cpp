// fs/ext4/fsync.c ext4_sync_file, and sync(2) with ext4_sync_fs (fs/sync.c,
// fs/ext4/super.c).
#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

void Ext4::fsync(std::uint32_t file) {
    // ext4_sync_file: file_write_and_wait_range, then jbd2_complete_transaction
    // on i_sync_tid; when that transaction already committed, the data written
    // since needs a cache flush of its own (needs_barrier).
    SIM_LIVE(file);
    Inode& inode = inodes_[file];
    write_pages(file);
    wait_data();
    sim::yield(points::fsync_after_data);
    const std::uint64_t tid = inode.i_sync_tid;
    if (tid > j_commit_sequence_) {
        complete_transaction(tid);
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
    SIM_LIVE(dirty);
    for (const auto& [block, buffer] : bcache_.buffers()) {
        if (buffer.dirty) dirty.push_back(block);
    }
    for (const std::uint64_t block : dirty) {
        SIM_LIVE(block);
        BufferHead& bh = bcache_.get(block);
        bcache_.lock_buffer(bh);
        if (!BufferCache::test_clear_buffer_dirty(bh)) {
            bcache_.unlock_buffer(bh);
            continue;
        }
        bcache_.submit_write(device_, bh, store(live_.at(block)), "meta");
    }
    for (const std::uint64_t block : dirty) {
        SIM_LIVE(block);
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
    const std::uint64_t target = running_ != 0      ? running_
                                 : committing_ != 0 ? committing_
                                                    : j_commit_sequence_;
    const bool needs_barrier = !trans_will_send_data_barrier(target);
    SIM_LIVE(target, needs_barrier);
    if (running_ != 0 || committing_ != 0) {
        log_start_commit(target);
        log_wait_commit(target);
    }
    if (needs_barrier) device_.flush_and_wait();
}

}  // namespace model::ext4
