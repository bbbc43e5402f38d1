// fs/jbd2/journal.c: kjournald2 and the commit timer, commit requests
// (jbd2_log_start_commit, jbd2_log_wait_commit,
// jbd2_trans_will_send_data_barrier) and the log tail
// (jbd2_journal_get_log_tail, __jbd2_update_log_tail).
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

void Ext4::kjournald2() {
    for (;;) {
        while (j_commit_sequence_ >= j_commit_request_) j_wait_commit_.wait();
        // Woken (or back from a commit): the commit reads and sets t_state
        // before its first yield point.
        cover({points::journal});
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
        cover({points::journal});  // woken by its timer: no yield point covers this stretch
        if (running_ != 0 && sim::now() - tx(running_).t_start >= commit_interval) log_start_commit(running_);
    }
}

void Ext4::log_start_commit(std::uint64_t tid) {
    // __jbd2_log_start_commit: only the running transaction can be asked for.
    if (tid == running_ && j_commit_request_ < tid) {
        j_commit_request_ = tid;
        j_wait_commit_.wake_all();
    }
}

void Ext4::complete_transaction(std::uint64_t tid) {
    // jbd2_complete_transaction: ask for the commit, then jbd2_log_wait_commit,
    // which reads j_commit_sequence under j_state_lock before it sleeps in
    // wait_event: the caller may be preempted in between, kjournald2 woken.
    SIM_LIVE(tid);
    log_start_commit(tid);
    if (kjournald2_running_ && j_commit_sequence_ < tid) sim::yield(points::commit_requested);
    log_wait_commit(tid);
}

void Ext4::log_wait_commit(std::uint64_t tid) {
    SIM_LIVE(tid);
    if (!kjournald2_running_) {
        // The set-up runs with no kernel threads: the caller commits (what
        // jbd2_journal_flush would leave behind).
        while (j_commit_sequence_ < tid && running_ != 0) commit_transaction();
        return;
    }
    while (j_commit_sequence_ < tid) j_wait_done_commit_.wait();
}

auto Ext4::trans_will_send_data_barrier(std::uint64_t tid) const -> bool {
    // jbd2_trans_will_send_data_barrier (fs/jbd2/journal.c), j_fs_dev == j_dev.
    if (j_commit_sequence_ >= tid) return false;  // already committed
    if (committing_ != tid) return true;          // its commit is still to start
    return transactions_.at(tid).state < TState::commit_jflush;
}

auto Ext4::get_log_tail(std::uint64_t& tid, std::uint64_t& block) const -> bool {
    // jbd2_journal_get_log_tail.
    if (!checkpoint_transactions_.empty()) {
        tid = checkpoint_transactions_.front();
        block = transactions_.at(tid).t_log_start;
    } else if (committing_ != 0) {
        tid = committing_;
        block = transactions_.at(tid).t_log_start;
    } else if (running_ != 0) {
        tid = running_;
        block = j_head_;
    } else {
        tid = j_transaction_sequence_;
        block = j_head_;
    }
    return tid > j_tail_sequence_;
}

void Ext4::update_log_tail(std::uint64_t tid, std::uint64_t block) {
    // __jbd2_update_log_tail: jbd2_journal_update_sb_log_tail (REQ_SYNC |
    // REQ_FUA), then j_tail_sequence and j_tail. j_checkpoint_mutex held.
    SIM_LIVE(tid, block);
    device_.write_and_wait(1, 1, store(JournalSuper{block, tid}), true, "super");
    counters_.tail_updates++;
    if (tid > j_tail_sequence_) {
        j_tail_sequence_ = tid;
        j_tail_ = block;
    }
    SIM_NOTE("jbd2: journal superblock: tail at log block " + std::to_string(block) + ", sequence " +
             std::to_string(tid) + " (transactions before it are no longer replayed)");
    sim::yield(points::checkpoint_tail_updated);
}

}  // namespace model::ext4
