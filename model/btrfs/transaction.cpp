// Transactions: join/end and commit (fs/btrfs/transaction.c), superblock
// writes (disk-io.c write_all_supers). A commit writes the trees, flushes the
// device cache, then writes the superblock with FUA: only then is the
// transaction durable. Log trees of the committed transaction are dropped.
#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::btrfs {

auto Btrfs::allocate_meta_block() -> std::uint64_t {
    // Copy-on-write: never reuse the block the durable superblock names.
    for (std::uint64_t tries = 0; tries < meta_area_end_; tries++) {
        const std::uint64_t block = meta_cursor_;
        meta_cursor_ = meta_cursor_ + 1 >= meta_area_end_ ? 1 : meta_cursor_ + 1;
        if (block != root_block_ && block != log_block_) return block;
    }
    SIM_ASSERT(false && "metadata area exhausted");
    return 0;
}

auto Btrfs::join_transaction() -> std::uint64_t {
    while (commit_in_progress_) transaction_wait_.wait();
    if (!transaction_running_) {
        generation_++;
        transaction_running_ = true;
        transaction_start_ = sim::now();
        SIM_NOTE("transaction " + std::to_string(generation_) + " starts");
    }
    transaction_writers_++;
    return generation_;
}

void Btrfs::end_transaction() {
    SIM_ASSERT(transaction_writers_ > 0);
    transaction_writers_--;
    if (transaction_writers_ == 0) transaction_wait_.wake_all();
}

void Btrfs::write_superblock(bool with_log, std::uint64_t generation) {
    SIM_LIVE(with_log, generation);
    const std::uint64_t object = store(Superblock{generation, root_block_, root_object_,
                                                  with_log, log_block_, log_object_, log_transid_});
    device_.write_and_wait(0, 1, disk::Content::meta(object), true, "super");
}

void Btrfs::commit_transaction() {
    // The commit and sync operations attach to the running transaction
    // (btrfs_attach_transaction_barrier in btrfs_sync_fs): wait for a commit
    // in progress; no running transaction, nothing to commit (-ENOENT).
    while (commit_in_progress_) transaction_wait_.wait();
    if (!transaction_running_) return;
    commit_in_progress_ = true;
    const std::uint64_t transid = generation_;
    SIM_LIVE(transid);
    SIM_NOTE("transaction " + std::to_string(transid) + " commit starts");
    while (transaction_writers_ > 0) transaction_wait_.wait();
    sim::yield(points::commit_after_writers);
    // Write the fs tree (copy-on-write, a new block), then FLUSH, then the
    // superblock with FUA.
    const std::uint64_t object = store(fs_tree_);
    const std::uint64_t block = allocate_meta_block();
    SIM_LIVE(object, block);
    device_.write_and_wait(block, 1, disk::Content::meta(object), false, "meta");
    sim::yield(points::commit_after_tree_write);
    device_.flush_and_wait();
    root_block_ = block;
    root_object_ = object;
    // The log of this transaction is dropped: the new superblock names none.
    log_tree_ = LogTree{};
    log_csum_tree_.clear();
    // The checksum tree's blocks were written with the transaction: the next
    // change to each copies it first (should_cow_block).
    csum_tree_.generation++;
    log_root_exists_ = false;
    log_block_ = 0;
    write_superblock(false, transid);
    // Only now is the transaction committed (write_all_supers, then
    // last_trans_committed): an fsync that sees it may skip logging.
    last_trans_committed_ = transid;
    counters_.transactions_committed++;
    SIM_NOTE("transaction " + std::to_string(transid) +
             " committed: trees written, FLUSH, superblock FUA (no log)");
    transaction_running_ = false;
    commit_in_progress_ = false;
    transaction_wait_.wake_all();
    sim::yield(points::commit_super_durable);
}

void Btrfs::transaction_kthread() {
    // transaction_kthread (disk-io.c): wake every commit interval; commit the
    // running transaction once it is that old, else sleep out the rest.
    sim::Duration delay = knobs_.commit_interval;
    SIM_LIVE(delay);
    for (;;) {
        // schedule_timeout_interruptible, then kthread_should_stop: close_ctree's kthread_stop.
        if (sim::current_scheduler().kthread_sleep(delay)) return;
        // The wake-up's code, up to the commit's first point, is covered by
        // no point: it reads and starts the commit.
        sim::cover(points::commit_after_writers.touches);
        delay = knobs_.commit_interval;
        if (!transaction_running_ || commit_in_progress_) continue;
        const sim::Duration age = sim::now() - transaction_start_;
        if (age < knobs_.commit_interval) {
            delay = knobs_.commit_interval - age;
            continue;
        }
        SIM_NOTE("transaction kthread: transaction " + std::to_string(generation_) + " is " +
                 std::to_string(age / sim::seconds) + " s old");
        commit_transaction();
    }
}

}  // namespace model::btrfs
