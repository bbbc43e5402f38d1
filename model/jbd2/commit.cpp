// kjournald2 (fs/jbd2/journal.c kjournald2, commit.c
// jbd2_journal_commit_transaction), the commit timer and the flusher.
// FIDELITY.md 5.2 lists the steps C1..C11 this follows.
#include <algorithm>

#include "model/jbd2/ext4.hpp"
#include "model/jbd2/points.hpp"

namespace model::jbd2 {

void Ext4::kjournald2() {
    for (;;) {
        while (j_commit_sequence_ >= j_commit_request_) j_wait_commit_.wait();
        // Woken (or back from a commit): the commit reads and sets t_state
        // before its first yield point.
        touch({points::journal});
        if (running_ == 0 || running_ > j_commit_request_) {
            j_commit_sequence_ = std::max(j_commit_sequence_, j_commit_request_);
            continue;
        }
        commit_transaction();
    }
}

void Ext4::commit_timer() {
    // j_commit_timer (commit_timeout): the running transaction's t_expires,
    // commit_interval after it started, wakes kjournald2 to commit it.
    for (;;) {
        sim::current_scheduler().sleep(commit_interval);
        touch({points::journal});  // woken by its timer: no yield point covers this stretch
        if (running_ != 0 && sim::now() - tx(running_).t_start >= commit_interval) log_start_commit(running_);
    }
}

void Ext4::flusher() {
    // wb_workfn every dirty_writeback_interval: write back the block device's
    // dirty buffers older than dirty_expire_interval (__block_write_full_page,
    // WB_SYNC_NONE: trylock_buffer, clear BH_Dirty at submission, unlock at
    // completion). JBDDirty buffers are not dirty to writeback.
    for (;;) {
        sim::current_scheduler().sleep(dirty_writeback_interval);
        touch({points::buffer});  // woken by its timer: no yield point covers this stretch
        std::uint64_t submitted = 0;
        for (const auto& [block, buffer] : bcache_.buffers()) {
            BufferHead& bh = bcache_.get(block);
            if (!bh.dirty || sim::now() - bh.dirtied_at < dirty_expire_interval) continue;
            if (!BufferCache::trylock_buffer(bh)) continue;
            if (!BufferCache::test_clear_buffer_dirty(bh)) {
                bcache_.unlock_buffer(bh);
                continue;
            }
            bcache_.submit_write(device_, bh, store(live_.at(block)), "meta");
            counters_.flusher_writes++;
            submitted++;
        }
        if (submitted > 0) {
            SIM_NOTE("flusher: " + std::to_string(submitted) + " expired metadata buffers submitted");
            sim::yield(points::flusher_submitted);
        }
    }
}

void Ext4::commit_transaction() {
    const std::uint64_t tid = running_;
    SIM_ASSERT(tid != 0 && committing_ == 0);
    counters_.commits++;
    // C1: T_LOCKED, wait for the open handles.
    tx(tid).state = TState::locked;
    while (tx(tid).t_updates > 0) j_wait_updates_.wait();
    SIM_NOTE("kjournald2: commit of transaction " + std::to_string(tid) +
             " starts (T_LOCKED, no open handle)");
    sim::yield(points::commit_locked);

    // C2: checkpoint cleanup under j_list_lock, before any log write.
    j_list_lock_.lock();
    clean_checkpoint_list();
    j_list_lock_.unlock();

    // C3: T_FLUSH; a new running transaction may start. Reserved buffers that
    // were never dirtied go back (jbd2_journal_refile_buffer).
    Transaction& transaction = tx(tid);
    transaction.state = TState::flush;
    committing_ = tid;
    running_ = 0;
    transaction.t_log_start = j_head_;
    for (const std::uint64_t block : transaction.t_reserved) {
        BufferHead& bh = bcache_.get(block);
        bh.jh.b_transaction = 0;
        if (bh.jbddirty) {
            bh.jbddirty = false;
            BufferCache::mark_buffer_dirty(bh, sim::now());
        }
    }
    transaction.t_reserved.clear();
    j_wait_transaction_locked_.wake_all();
    sim::yield(points::commit_flush);

    // C4: ordered-mode data (journal_submit_data_buffers, then wait).
    std::uint64_t data = 0;
    for (const std::uint32_t file : tx(tid).t_inode_list) data += write_pages(file);
    wait_data();
    if (data > 0) sim::yield(points::commit_data_written);

    // C5: T_COMMIT: the descriptor and the copies of the metadata buffers.
    tx(tid).state = TState::commit;
    const std::vector<std::uint64_t> buffers = tx(tid).t_buffers;
    std::uint64_t log_in_flight = 0;
    sim::WaitQueue log_wait("jbd2.log_io", 0);
    const auto submit_log = [&](disk::Content content) {
        log_in_flight++;
        device_.submit_write(j_head_, 1, content, false, "log", [&log_in_flight, &log_wait] {
            log_in_flight--;
            log_wait.wake_all();
        });
        j_head_ = log_next(j_head_);
    };
    submit_log(store(Descriptor{tid, buffers}));
    for (const std::uint64_t block : buffers) {
        const auto frozen = frozen_.find(block);
        submit_log(store(frozen != frozen_.end() ? frozen->second : live_.at(block)));
        if (frozen != frozen_.end()) frozen_.erase(frozen);
    }
    // C6: the tail as it stands before the commit block's PREFLUSH.
    std::uint64_t first_tid = 0;
    std::uint64_t first_block = 0;
    bool update_tail = get_log_tail(first_tid, first_block);
    if (update_tail) {
        // Update the tail only if it frees a significant amount of space.
        const std::uint64_t length = j_last_ - j_first_;
        const std::uint64_t freed = (first_block + length - j_tail_) % length;
        if (freed < max_transaction_buffers_) update_tail = false;
    }
    sim::yield(points::commit_tail_snapshot);
    // C7: internal journal: no FLUSH of a separate fs device; wait for the log writes.
    tx(tid).state = TState::commit_dflush;
    while (log_in_flight > 0) log_wait.wait();
    SIM_NOTE("kjournald2: transaction " + std::to_string(tid) + ": descriptor and " +
             std::to_string(buffers.size()) + " metadata copies in the log");
    sim::yield(points::commit_log_written);

    // C8: the commit block with PREFLUSH + FUA.
    tx(tid).state = TState::commit_jflush;
    device_.flush_and_wait();
    const std::uint64_t commit_block = j_head_;
    j_head_ = log_next(j_head_);
    device_.write_and_wait(commit_block, 1, store(CommitBlock{tid}), true, "log");
    SIM_NOTE("kjournald2: commit block of transaction " + std::to_string(tid) + " durable (PREFLUSH + FUA)");
    sim::yield(points::commit_durable);

    // C9: jbd2_update_log_tail with the tail taken at C6.
    if (update_tail) {
        sim::MutexGuard guard(j_checkpoint_mutex_);
        if (first_tid > j_tail_sequence_) update_log_tail(first_tid, first_block);
    }

    // C10: forget-list processing: each buffer leaves an older checkpoint
    // list, joins this one while JBDDirty, and is refiled.
    j_list_lock_.lock();
    for (const std::uint64_t block : buffers) {
        BufferHead& bh = bcache_.get(block);
        if (bh.jh.b_cp_transaction != 0) remove_checkpoint(block);
        if (bh.jbddirty) insert_checkpoint(block, tid);
        // __jbd2_journal_refile_buffer.
        if (bh.jh.b_next_transaction != 0) {
            const std::uint64_t next = bh.jh.b_next_transaction;
            bh.jh.b_transaction = next;
            bh.jh.b_next_transaction = 0;
            if (bh.jbddirty) {
                tx(next).t_buffers.push_back(block);
            } else {
                tx(next).t_reserved.push_back(block);
            }
        } else {
            bh.jh.b_transaction = 0;
            if (bh.jbddirty) {
                bh.jbddirty = false;
                BufferCache::mark_buffer_dirty(bh, sim::now());
            }
        }
    }
    tx(tid).t_buffers.clear();
    // C11: T_COMMIT_CALLBACK, on the checkpoint transactions; then T_FINISHED.
    tx(tid).state = TState::commit_callback;
    j_commit_sequence_ = tid;
    committing_ = 0;
    const bool listed = !tx(tid).t_checkpoint_list.empty();
    if (listed) checkpoint_transactions_.push_back(tid);
    tx(tid).state = TState::finished;
    if (!listed) {
        transactions_.erase(tid);
        counters_.transactions_dropped++;
    }
    j_list_lock_.unlock();
    j_wait_done_commit_.wake_all();
    SIM_NOTE("kjournald2: transaction " + std::to_string(tid) + " finished" +
             (listed ? ", on the checkpoint list with its " + std::to_string(buffers.size()) +
                           " buffers, still dirty"
                     : ", nothing to checkpoint"));
    sim::yield(points::commit_done);
}

}  // namespace model::jbd2
