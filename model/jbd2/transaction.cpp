// Handles (fs/jbd2/transaction.c): jbd2_journal_start/stop (start_this_handle),
// do_get_write_access, jbd2_journal_dirty_metadata, jbd2_journal_forget.
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

auto Ext4::journal_start() -> std::uint64_t {
    // start_this_handle: wait while the running transaction is T_LOCKED
    // (wait_transaction_locked); make room in the log; start a transaction.
    for (;;) {
        if (running_ != 0 && tx(running_).state == TState::running) break;
        if (running_ != 0) {
            j_wait_transaction_locked_.wait();
            continue;
        }
        log_wait_for_space();
        if (running_ != 0) continue;
        const std::uint64_t tid = j_transaction_sequence_++;
        Transaction transaction;
        transaction.tid = tid;
        transaction.t_start = sim::now();
        transactions_[tid] = std::move(transaction);
        running_ = tid;
        counters_.transactions++;
        break;
    }
    tx(running_).t_updates++;
    sim::cpu(cpu_cost::handle);
    return running_;
}

void Ext4::journal_stop(std::uint64_t tid) {
    Transaction& transaction = tx(tid);
    SIM_ASSERT(transaction.t_updates > 0);
    if (--transaction.t_updates == 0) j_wait_updates_.wake_all();
}

void Ext4::freeze(std::uint64_t block) {
    const MetaBlock& copy = frozen_[block] = live_.at(block);
    copy.in_sum = false;  // its term is in live_hash_, not frozen_hash_
    frozen_hash_.note(block);
}

void Ext4::do_get_write_access(std::uint64_t tid, std::uint64_t block) {
    SIM_LIVE(tid, block);
    BufferHead& bh = bcache_.get(block);
    bh.jh.attached = true;
    // jbd2_write_access_granted: already part of this transaction.
    if (bh.jh.b_transaction == tid || bh.jh.b_next_transaction == tid) return;
    bcache_.lock_buffer(bh);  // waits for writeback in flight
    if (bh.dirty && bh.jh.b_transaction != 0) {
        BufferCache::test_clear_buffer_dirty(bh);
        bh.jbddirty = true;
    }
    std::string story;
    if (bh.jh.b_transaction == 0) {
        // Dirty clearing and b_transaction assignment under j_list_lock, so
        // that no checkpoint cleanup sees the buffer in between.
        j_list_lock_.lock();
        const bool was_dirty = BufferCache::test_clear_buffer_dirty(bh);
        if (was_dirty) bh.jbddirty = true;
        bh.jh.b_transaction = tid;
        tx(tid).t_reserved.push_back(block);  // BJ_Reserved
        j_list_lock_.unlock();
        if (sim::tracing()) {
            story = "do_get_write_access: transaction " + std::to_string(tid) + " takes " +
                    block_name(block) + (was_dirty ? ": dirty cleared, JBDDirty set" : "") +
                    ", b_transaction = " + std::to_string(tid) +
                    (bh.jh.b_cp_transaction != 0
                         ? " (still on transaction " + std::to_string(bh.jh.b_cp_transaction) +
                               "'s checkpoint list)"
                         : "");
        }
    } else {
        // The committing transaction owns it: b_next_transaction, and a frozen
        // copy so that the commit logs the contents as of its own changes,
        // only while that transaction still needs it: do_get_write_access
        // freezes only a buffer still on BJ_Metadata. Past C5 (T_COMMIT) the
        // model's commit has already submitted its log copy, and a frozen copy
        // taken now would be logged by the next commit in place of b_data.
        if (tx(bh.jh.b_transaction).state < TState::commit && frozen_.count(block) == 0) freeze(block);
        bh.jh.b_next_transaction = tid;
        if (sim::tracing()) {
            story = "do_get_write_access: transaction " + std::to_string(tid) + " takes " +
                    block_name(block) + " from committing transaction " +
                    std::to_string(bh.jh.b_transaction) + " (b_next_transaction, frozen copy)";
        }
    }
    bcache_.unlock_buffer(bh);
    SIM_NOTE(story);
    sim::yield(points::get_write_access);
}

void Ext4::dirty_metadata(std::uint64_t tid, std::uint64_t block) {
    // jbd2_journal_dirty_metadata: JBDDirty; file on BJ_Metadata of the
    // owning transaction (a b_next_transaction buffer is filed at refile, C10).
    BufferHead& bh = bcache_.get(block);
    bh.jbddirty = true;
    if (bh.jh.b_transaction != tid) return;
    Transaction& transaction = tx(tid);
    std::erase(transaction.t_reserved, block);
    if (std::find(transaction.t_buffers.begin(), transaction.t_buffers.end(), block) ==
        transaction.t_buffers.end()) {
        transaction.t_buffers.push_back(block);
    }
}

void Ext4::journal_forget(std::uint64_t tid, std::uint64_t block) {
    // jbd2_journal_forget: the buffer of a freed metadata block leaves the
    // journal without being written home, whichever list holds it.
    BufferHead& bh = bcache_.get(block);
    if (!bh.jh.attached) return;  // !buffer_jbd: never journaled
    SIM_LIVE(tid, block);
    sim::MutexGuard guard(j_list_lock_);
    Transaction& transaction = tx(tid);
    if (bh.jh.b_transaction == tid) {
        // Part of this transaction: unfiled at once. A buffer an older
        // transaction still has to checkpoint goes on BJ_Forget, so that this
        // commit removes it from that checkpoint list.
        bh.dirty = false;
        bh.jbddirty = false;
        std::erase(transaction.t_buffers, block);
        std::erase(transaction.t_reserved, block);
        if (bh.jh.b_cp_transaction != 0) {
            transaction.t_forget.push_back(block);
        } else {
            bh.jh.b_transaction = 0;  // __jbd2_journal_unfile_buffer
        }
    } else if (bh.jh.b_transaction != 0) {
        // The committing transaction owns it and still logs it: BH_Freed,
        // and the running transaction takes it next (its BJ_Forget, at refile).
        bh.freed = true;
        if (bh.jh.b_next_transaction == 0) bh.jh.b_next_transaction = tid;
    } else if (bh.jh.b_cp_transaction != 0) {
        // Only on a checkpoint list. Written home already: off the list
        // (v5.8 tests !buffer_dirty; 46f881b5b175 made it
        // jbd2_journal_try_remove_checkpoint). Else not written home: dirty
        // cleared and onto this transaction's BJ_Forget, so that the old
        // checkpoint ends only when this commit does.
        bool removed = false;
        if (knobs_.tree == Tree::v5_8) {
            removed = !bh.dirty;
            if (removed) remove_checkpoint(block);
        } else {
            removed = try_remove_checkpoint(block) >= 0;
        }
        if (!removed) {
            bh.dirty = false;
            bh.jh.b_transaction = tid;
            transaction.t_forget.push_back(block);
        }
    }
}

}  // namespace model::ext4
