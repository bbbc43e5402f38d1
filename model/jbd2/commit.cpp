// fs/jbd2/commit.c jbd2_journal_commit_transaction, in the steps C1..C11:
// C1 T_LOCKED, C2 the checkpoint cleanup, C3 T_FLUSH, C4 ordered data, C5 the
// log copies, C6 the tail snapshot, C7 the wait for the log, C8 the commit
// block, C9 the tail update, C10 the forget list, C11 T_FINISHED.
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

void Ext4::commit_transaction() {
    const std::uint64_t tid = running_;
    SIM_LIVE(tid);
    SIM_ASSERT(tid != 0 && committing_ == 0);
    counters_.commits++;
    commit_lock_updates(tid);     // C1
    commit_refile_reserved(tid);  // T_SWITCH: BJ_Reserved first
    // C2: checkpoint cleanup under j_list_lock, before any log write.
    j_list_lock_.lock();
    clean_checkpoint_list();
    j_list_lock_.unlock();
    commit_switch_running(tid);                          // C3
    const std::uint64_t data = commit_submit_data(tid);  // C4, not waited yet
    SIM_LIVE(data);

    // C5: T_COMMIT: the descriptor and the copies of the metadata buffers,
    // submitted while the data is in flight.
    tx(tid).state = TState::commit;
    const std::vector<std::uint64_t> buffers = tx(tid).t_buffers;
    LogWrites log;
    SIM_LIVE(buffers, log);
    write_revoke_records(tid, log);
    write_log_copies(tid, buffers, log);
    commit_wait_data(data);                            // journal_finish_inode_data_buffers
    const TailSnapshot tail = commit_tail_snapshot();  // C6
    SIM_LIVE(tail);
    // C7: internal journal: no FLUSH of a separate fs device; wait for the log writes.
    tx(tid).state = TState::commit_dflush;
    while (log.in_flight > 0) log.wait.wait();
    SIM_NOTE("kjournald2: transaction " + std::to_string(tid) + ": descriptor and " +
             std::to_string(buffers.size()) + " metadata copies in the log");
    sim::yield(points::commit_log_written);
    write_commit_block(tid);  // C8

    // C9: jbd2_update_log_tail with the tail taken at C6.
    if (tail.update) {
        sim::MutexGuard guard(j_checkpoint_mutex_);
        if (tail.tid > j_tail_sequence_) update_log_tail(tail.tid, tail.block);
    }
    j_list_lock_.lock();
    commit_forget_list(tid, buffers);    // C10
    commit_finish(tid, buffers.size());  // C11, drops j_list_lock
}

void Ext4::commit_lock_updates(std::uint64_t tid) {
    // C1: T_LOCKED, wait for the open handles (jbd2_journal_wait_updates).
    SIM_LIVE(tid);
    tx(tid).state = TState::locked;
    while (tx(tid).t_updates > 0) j_wait_updates_.wait();
    SIM_NOTE("kjournald2: commit of transaction " + std::to_string(tid) +
             " starts (T_LOCKED, no open handle)");
    sim::yield(points::commit_locked);
}

void Ext4::commit_refile_reserved(std::uint64_t tid) {
    // T_SWITCH: "the first thing we are allowed to do is to discard any
    // remaining BJ_Reserved buffers" (jbd2_journal_commit_transaction, before
    // __jbd2_journal_clean_checkpoint_list): reserved buffers never dirtied
    // go back (jbd2_journal_refile_buffer), so that the cleanup that follows
    // no longer sees b_transaction set on them.
    Transaction& transaction = tx(tid);
    for (const std::uint64_t block : transaction.t_reserved) {
        BufferHead& bh = bcache_.get(block);
        bh.jh.b_transaction = 0;
        if (bh.jbddirty) {
            bh.jbddirty = false;
            BufferCache::mark_buffer_dirty(bh, sim::now());
        }
    }
    transaction.t_reserved.clear();
}

void Ext4::commit_switch_running(std::uint64_t tid) {
    // C3: T_FLUSH; a new running transaction may start.
    Transaction& transaction = tx(tid);
    transaction.state = TState::flush;
    committing_ = tid;
    running_ = 0;
    transaction.t_log_start = j_head_;
    j_wait_transaction_locked_.wake_all();
    sim::yield(points::commit_flush);
}

auto Ext4::commit_submit_data(std::uint64_t tid) -> std::uint64_t {
    // C4: ordered-mode data, submitted (journal_submit_data_buffers, commit
    // phase 2a) and not waited: the log writes go out while it is in flight.
    std::uint64_t data = 0;
    for (const std::uint32_t file : tx(tid).t_inode_list) data += write_pages(file);
    return data;
}

void Ext4::commit_wait_data(std::uint64_t data) {
    // journal_finish_inode_data_buffers, after the log blocks are submitted
    // and before jbd2_journal_get_log_tail: wait for the ordered data.
    SIM_LIVE(data);
    wait_data();
    if (data > 0) sim::yield(points::commit_data_written);
}

void Ext4::submit_log_block(LogWrites& log, disk::Content content) {
    log.in_flight++;
    device_.submit_write(j_head_, 1, content, false, "log", [&log] {
        SIM_ASSERT(log.in_flight > 0);
        log.in_flight--;
        log.wait.wake_all();
    });
    j_head_ = log_next(j_head_);
}

void Ext4::write_log_copies(std::uint64_t tid, const std::vector<std::uint64_t>& buffers, LogWrites& log) {
    // C5: the descriptor, then each buffer's frozen copy if
    // do_get_write_access made one (b_frozen_data), else the buffer itself.
    submit_log_block(log, store(Descriptor{tid, buffers}));
    for (const std::uint64_t block : buffers) {
        const auto frozen = frozen_.find(block);
        submit_log_block(log, store(frozen != frozen_.end() ? frozen->second : live_.at(block)));
        if (frozen != frozen_.end()) {
            frozen_hash_.forget(frozen->second);
            frozen_.erase(frozen);
        }
    }
}

auto Ext4::commit_tail_snapshot() -> TailSnapshot {
    // C6: the tail as it stands before the commit block's PREFLUSH.
    TailSnapshot tail;
    SIM_LIVE(tail);
    tail.update = get_log_tail(tail.tid, tail.block);
    if (tail.update) {
        // Update the tail only if it frees a significant amount of space.
        const std::uint64_t length = j_last_ - j_first_;
        const std::uint64_t freed = (tail.block + length - j_tail_) % length;
        if (freed < max_transaction_buffers_) tail.update = false;
    }
    sim::yield(points::commit_tail_snapshot);
    return tail;
}

void Ext4::write_commit_block(std::uint64_t tid) {
    // C8: the commit block with PREFLUSH + FUA (journal_submit_commit_record).
    SIM_LIVE(tid);
    tx(tid).state = TState::commit_jflush;
    device_.flush_and_wait();
    const std::uint64_t commit_block = j_head_;
    j_head_ = log_next(j_head_);
    device_.write_and_wait(commit_block, 1, store(CommitBlock{tid}), true, "log");
    SIM_NOTE("kjournald2: commit block of transaction " + std::to_string(tid) + " durable (PREFLUSH + FUA)");
    sim::yield(points::commit_durable);
}

void Ext4::commit_forget_list(std::uint64_t tid, const std::vector<std::uint64_t>& buffers) {
    // C10, j_list_lock held: the t_forget list, taken from its head. It
    // holds first the buffers jbd2_journal_forget (or a refile) filed there
    // while the transaction ran, then the logged ones: commit phase 3 takes
    // each shadow buffer from the tail of t_shadow_list
    // (t_shadow_list->b_tprev) and files it at the tail of t_forget
    // (__blist_add_buffer), so they come in reverse logging order. Each leaves
    // an older checkpoint list; a buffer freed while an older commit owned it
    // (BH_Freed) and claimed by no later transaction loses JBDDirty; the rest
    // join this checkpoint list while JBDDirty, each at its head
    // (__jbd2_journal_insert_checkpoint), so that the list ends up in
    // t_buffers order, the first-logged buffer at its head; each is refiled.
    std::vector<std::uint64_t> forget = tx(tid).t_forget;
    forget.insert(forget.end(), buffers.rbegin(), buffers.rend());
    for (const std::uint64_t block : forget) {
        BufferHead& bh = bcache_.get(block);
        if (bh.jh.b_cp_transaction != 0) remove_checkpoint(block);
        if (bh.freed && bh.jh.b_next_transaction == 0) {
            bh.freed = false;
            bh.jbddirty = false;
        }
        if (bh.jbddirty) insert_checkpoint(block, tid);
        refile_buffer(block);
    }
    tx(tid).t_buffers.clear();
    tx(tid).t_forget.clear();
}

void Ext4::refile_buffer(std::uint64_t block) {
    // __jbd2_journal_refile_buffer: to the next transaction if one has
    // claimed the buffer (b_next_transaction), else out of the journal.
    BufferHead& bh = bcache_.get(block);
    if (bh.jh.b_next_transaction != 0) {
        const std::uint64_t next = bh.jh.b_next_transaction;
        bh.jh.b_transaction = next;
        bh.jh.b_next_transaction = 0;
        if (bh.freed) {
            tx(next).t_forget.push_back(block);  // BJ_Forget: freed by `next`
        } else if (bh.jbddirty) {
            tx(next).t_buffers.push_back(block);
        } else {
            tx(next).t_reserved.push_back(block);
        }
        return;
    }
    bh.jh.b_transaction = 0;
    if (bh.jbddirty) {
        bh.jbddirty = false;
        BufferCache::mark_buffer_dirty(bh, sim::now());
    }
}

void Ext4::commit_finish(std::uint64_t tid, std::size_t buffers) {
    // C11, j_list_lock held on entry: on the checkpoint transactions (even
    // with an empty list: it cannot be dropped before T_FINISHED), then
    // T_COMMIT_CALLBACK and the lock dropped; j_commit_callback
    // (ext4_journal_commit_callback) runs with no journal lock; then, under
    // j_list_lock again, T_FINISHED, and the transaction is dropped if its
    // checkpoint list is empty (__jbd2_journal_drop_transaction).
    SIM_LIVE(tid, buffers);
    checkpoint_transactions_.push_back(tid);
    tx(tid).state = TState::commit_callback;
    j_commit_sequence_ = tid;
    committing_ = 0;
    j_list_lock_.unlock();
    release_freed_blocks(tid);  // j_commit_callback
    j_list_lock_.lock();
    tx(tid).state = TState::finished;
    const bool listed = !tx(tid).t_checkpoint_list.empty();
    if (!listed) drop_transaction(tid);
    j_list_lock_.unlock();
    j_wait_done_commit_.wake_all();
    SIM_NOTE("kjournald2: transaction " + std::to_string(tid) + " finished" +
             (listed
                  ? ", on the checkpoint list with its " + std::to_string(buffers) + " buffers, still dirty"
                  : ", nothing to checkpoint"));
    sim::yield(points::commit_done);
}

}  // namespace model::ext4
