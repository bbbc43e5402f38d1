// fs/jbd2/checkpoint.c: __jbd2_log_wait_for_space, checkpoint lists, the
// commit-time cleanup (__jbd2_journal_clean_checkpoint_list), the shrinker
// (jbd2_journal_shrink_checkpoint_list), jbd2_log_do_checkpoint and
// jbd2_cleanup_journal_tail.
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

auto Ext4::log_space_left() const -> std::uint64_t {
    // jbd2_log_space_left: the free blocks between j_head and j_tail, less a
    // margin for the commit's control blocks.
    const std::uint64_t length = j_last_ - j_first_;
    const std::uint64_t used = (j_head_ + length - j_tail_) % length;
    const std::uint64_t free = length - used;
    constexpr std::uint64_t margin = 32;
    return free > margin ? free - margin : 0;
}

void Ext4::log_wait_for_space() {
    // __jbd2_log_wait_for_space.
    while (log_space_left() < max_transaction_buffers_) {
        // The checkpoint may run from here, in a stretch the caller's points
        // (jbd2.handle.get_write_access) do not declare.
        touch_to_next_point({points::journal, points::checkpoint, points::buffer, points::log});
        j_checkpoint_mutex_.lock();
        if (log_space_left() >= max_transaction_buffers_) {
            j_checkpoint_mutex_.unlock();
            continue;
        }
        const std::uint64_t committing = committing_;
        SIM_LIVE(committing);
        if (!checkpoint_transactions_.empty()) {
            do_checkpoint();
        } else if (cleanup_journal_tail() <= 0) {
            // We were able to recover space.
        } else if (committing != 0) {
            j_checkpoint_mutex_.unlock();
            log_wait_commit(committing);
            continue;
        } else {
            SIM_ASSERT(false && "jbd2: no way to get more journal space");
        }
        j_checkpoint_mutex_.unlock();
    }
}

auto Ext4::remove_checkpoint(std::uint64_t block) -> bool {
    // __jbd2_journal_remove_checkpoint: 1 when it drops the transaction.
    BufferHead& bh = bcache_.get(block);
    const std::uint64_t cp = bh.jh.b_cp_transaction;
    if (cp == 0) return false;
    Transaction& transaction = tx(cp);
    std::erase(transaction.t_checkpoint_list, block);
    bh.jh.b_cp_transaction = 0;
    if (!transaction.t_checkpoint_list.empty()) return false;
    // A running or committing transaction's list may be empty and stay.
    if (transaction.state != TState::finished) return false;
    drop_transaction(cp);
    SIM_NOTE("jbd2: transaction " + std::to_string(cp) + "'s checkpoint list is empty: transaction dropped");
    return true;
}

void Ext4::drop_transaction(std::uint64_t tid) {
    // __jbd2_journal_drop_transaction: off j_checkpoint_transactions; the
    // shrinker's resume cursor (j_shrink_transaction) is reset.
    std::erase(checkpoint_transactions_, tid);
    transactions_.erase(tid);
    j_shrink_transaction_ = 0;
    counters_.transactions_dropped++;
}

void Ext4::insert_checkpoint(std::uint64_t block, std::uint64_t tid) {
    // __jbd2_journal_insert_checkpoint: new entries go in at the list's head.
    BufferHead& bh = bcache_.get(block);
    SIM_ASSERT(bh.jh.b_cp_transaction == 0);
    bh.jh.b_cp_transaction = tid;
    auto& list = tx(tid).t_checkpoint_list;
    list.insert(list.begin(), block);
}

auto Ext4::try_remove_checkpoint(std::uint64_t block) -> int {
    // jbd2_journal_try_remove_checkpoint (v6.5), -EBUSY as -1. The
    // b_transaction test is patch 2/3's ("jbd2: Check 'jh->b_transaction'
    // before removing it from checkpoint"); v5.8's __try_to_free_cp_buf had it
    // (jh->b_transaction == NULL && !buffer_locked && !buffer_dirty), and
    // 46f881b5b175 ("jbd2: fix a race when checking checkpoint buffer busy")
    // dropped it when it replaced the test with a trylock.
    BufferHead& bh = bcache_.get(block);
    if (knobs_.relogged_busy() && bh.jh.b_transaction != 0) return -1;
    if (!BufferCache::trylock_buffer(bh)) return -1;
    if (bh.dirty) {
        bcache_.unlock_buffer(bh);
        return -1;
    }
    bcache_.unlock_buffer(bh);
    if (bh.jh.b_transaction != 0) {
        SIM_NOTE("jbd2: " + block_name(block) + " is unlocked and not dirty: removed from transaction " +
                 std::to_string(bh.jh.b_cp_transaction) + "'s checkpoint list although transaction " +
                 std::to_string(bh.jh.b_transaction) + " owns it (" +
                 (bh.jbddirty ? "JBDDirty" : "on its forget list") + ", not yet committed)");
    }
    return remove_checkpoint(block) ? 1 : 0;
}

auto Ext4::shrink_one_cp_list(std::uint64_t tid, ShrinkType type, bool& released, std::uint64_t& scanned)
    -> std::uint64_t {
    // journal_shrink_one_cp_list (v6.5 with patch 1/3's shrink_type; v5.8's
    // journal_clean_one_cp_list is BUSY_STOP). Called with j_list_lock held;
    // one yield per buffer visited, each with its CPU cost.
    released = false;
    std::uint64_t freed = 0;
    const std::vector<std::uint64_t> list = tx(tid).t_checkpoint_list;  // walked by b_cpnext
    std::size_t at = 0;
    SIM_LIVE(type, freed, list, at);
    for (; at < list.size(); at++) {
        const std::uint64_t block = list[at];
        scanned++;
        sim::cpu(cp_scan_step_cost_);
        int ret = 0;
        SIM_LIVE(ret);
        if (type == ShrinkType::destroy) {
            ret = remove_checkpoint(block) ? 1 : 0;
        } else {
            ret = try_remove_checkpoint(block);
        }
        sim::yield(points::scan_step);
        if (ret < 0) {
            if (type == ShrinkType::busy_skip) continue;
            break;
        }
        freed++;
        if (ret != 0) {
            released = true;
            break;
        }
    }
    return freed;
}

void Ext4::clean_checkpoint_list() {
    // __jbd2_journal_clean_checkpoint_list(journal, false), j_list_lock held:
    // oldest first; stop after a transaction that was not released. v6.5
    // before patch 1/3 skipped busy buffers (SHRINK_BUSY_SKIP semantics).
    if (checkpoint_transactions_.empty()) return;
    const ShrinkType type = knobs_.commit_busy_stop() ? ShrinkType::busy_stop : ShrinkType::busy_skip;
    const std::vector<std::uint64_t> order = checkpoint_transactions_;
    std::uint64_t scanned = 0;
    std::size_t at = 0;
    SIM_LIVE(type, order, scanned, at);
    for (; at < order.size(); at++) {
        const std::uint64_t tid = order[at];
        if (transactions_.count(tid) == 0) break;
        bool released = false;
        SIM_LIVE(released);
        shrink_one_cp_list(tid, type, released, scanned);
        if (!released) break;
    }
    counters_.cp_scan_steps += scanned;
    counters_.cp_scan_longest = std::max(counters_.cp_scan_longest, scanned);
}

void Ext4::shrink_checkpoint_list() {
    // ext4_journal_scan_objects -> jbd2_journal_shrink_checkpoint_list, one
    // call of the shrinker's scan: nr_to_scan is do_shrink_slab's batch
    // (SHRINK_BATCH, 128) or the count (jbd2_journal_shrink_count, every
    // checkpoint buffer) when smaller. It resumes at j_shrink_transaction,
    // walks SHRINK_BUSY_SKIP to the last transaction, counting down
    // nr_to_scan by the buffers it frees, and keeps the next transaction as
    // the cursor when nr_to_scan ran out first; it starts again from the
    // cursor while both remain ("goto again").
    if (!knobs_.has_shrinker()) {
        SIM_NOTE("shrinker: v5.8 has no jbd2 checkpoint shrinker (added in v5.16)");
        return;
    }
    constexpr std::uint64_t shrink_batch = 128;  // SHRINK_BATCH
    j_list_lock_.lock();
    std::uint64_t count = 0;
    for (const std::uint64_t tid : checkpoint_transactions_) count += tx(tid).t_checkpoint_list.size();
    std::uint64_t nr_to_scan = std::min(count, shrink_batch);
    std::uint64_t scanned = 0;
    SIM_LIVE(nr_to_scan, scanned);
    while (nr_to_scan > 0 && !checkpoint_transactions_.empty()) {
        shrink_pass(nr_to_scan, scanned);
        if (j_shrink_transaction_ == 0) break;
    }
    counters_.shrink_scan_steps += scanned;
    j_list_lock_.unlock();
}

void Ext4::shrink_pass(std::uint64_t& nr_to_scan, std::uint64_t& scanned) {
    // One pass of jbd2_journal_shrink_checkpoint_list's loop, from the cursor
    // (or the oldest transaction) to the last one, j_list_lock held.
    const std::vector<std::uint64_t> order = checkpoint_transactions_;
    auto at = std::find(order.begin(), order.end(), j_shrink_transaction_);
    if (at == order.end()) at = order.begin();
    for (; at != order.end(); ++at) {
        if (transactions_.count(*at) == 0) continue;  // dropped by this walk: its next is still listed
        bool released = false;
        const auto index = static_cast<std::uint64_t>(at - order.begin());
        SIM_LIVE(order, index, released);
        const std::uint64_t freed = shrink_one_cp_list(*at, ShrinkType::busy_skip, released, scanned);
        nr_to_scan -= std::min(nr_to_scan, freed);
        if (nr_to_scan == 0) break;
    }
    // transaction != last_transaction: the next one is the cursor; else none.
    const bool stopped_early = at != order.end() && std::next(at) != order.end();
    j_shrink_transaction_ = stopped_early ? *std::next(at) : 0;
}

auto Ext4::cleanup_journal_tail() -> int {
    // jbd2_cleanup_journal_tail: FLUSH the fs device, then move the tail.
    std::uint64_t tid = 0;
    std::uint64_t block = 0;
    SIM_LIVE(tid, block);
    if (!get_log_tail(tid, block)) return 1;
    device_.flush_and_wait();
    SIM_NOTE("jbd2_cleanup_journal_tail: FLUSH before moving the tail to transaction " + std::to_string(tid));
    sim::yield(points::checkpoint_flushed);
    update_log_tail(tid, block);
    return 0;
}

void Ext4::write_dirty_buffer(std::uint64_t block, const char* who) {
    // write_dirty_buffer(bh, REQ_SYNC): lock_buffer, test_clear_buffer_dirty, submit.
    SIM_LIVE(block, who);
    BufferHead& bh = bcache_.get(block);
    bcache_.lock_buffer(bh);
    if (!BufferCache::test_clear_buffer_dirty(bh)) {
        bcache_.unlock_buffer(bh);
        return;
    }
    bcache_.submit_write(device_, bh, store(live_.at(block)), who);
    counters_.checkpoint_writes++;
}

void Ext4::flush_batch(std::vector<std::uint64_t>& batch) {
    // __flush_batch: submit, do not wait (a later pass waits on the locked buffers).
    std::size_t at = 0;
    SIM_LIVE(batch, at);
    for (; at < batch.size(); at++) write_dirty_buffer(batch[at], "meta");
    if (!batch.empty()) {
        SIM_NOTE("jbd2_log_do_checkpoint: " + std::to_string(batch.size()) + " buffers submitted home");
        sim::yield(points::checkpoint_batch);
    }
    batch.clear();
}

auto Ext4::do_checkpoint() -> int {
    // jbd2_log_do_checkpoint, j_checkpoint_mutex held.
    int result = cleanup_journal_tail();
    if (result <= 0) return result;
    std::vector<std::uint64_t> batch;
    SIM_LIVE(batch);
    j_list_lock_.lock();
    if (!checkpoint_transactions_.empty()) {
        const std::uint64_t this_tid = checkpoint_transactions_.front();
        SIM_LIVE(this_tid);
        for (;;) {
            // restart: someone may have cleaned the transaction up meanwhile.
            if (checkpoint_transactions_.empty() || checkpoint_transactions_.front() != this_tid) break;
            const CheckpointPass pass = checkpoint_pass(this_tid, batch);
            if (pass == CheckpointPass::done) break;
            if (pass == CheckpointPass::restart) continue;
            // The list is walked: restart2 submits what is batched, or stops.
            if (batch.empty()) break;
            j_list_lock_.unlock();
            flush_batch(batch);
            j_list_lock_.lock();
        }
    }
    j_list_lock_.unlock();
    result = cleanup_journal_tail();
    return result < 0 ? result : 0;
}

auto Ext4::checkpoint_pass(std::uint64_t this_tid, std::vector<std::uint64_t>& batch) -> CheckpointPass {
    // One walk of jbd2_log_do_checkpoint over the transaction's
    // t_checkpoint_list, j_list_lock held on entry and on return.
    while (!tx(this_tid).t_checkpoint_list.empty()) {
        auto& list = tx(this_tid).t_checkpoint_list;
        const std::uint64_t block = list.front();
        SIM_LIVE(block);
        BufferHead& bh = bcache_.get(block);
        if (bh.jh.b_transaction != 0) {
            force_relogged_commit(block, batch);
            return CheckpointPass::restart;
        }
        if (!BufferCache::trylock_buffer(bh)) {
            j_list_lock_.unlock();
            bcache_.wait_on_buffer(bh);
            flush_batch(batch);
            j_list_lock_.lock();
            return CheckpointPass::restart;
        }
        const bool dirty = bh.dirty;
        bcache_.unlock_buffer(bh);
        if (!dirty) {
            if (remove_checkpoint(block) || tx(this_tid).t_checkpoint_list.empty()) {
                return CheckpointPass::done;
            }
        } else {
            batch.push_back(block);
            std::rotate(list.begin(), list.begin() + 1, list.end());  // t_checkpoint_list = b_cpnext
        }
        const bool wrapped = !batch.empty() && tx(this_tid).t_checkpoint_list.front() == batch.front();
        if (batch.size() == nr_batch || wrapped) {
            j_list_lock_.unlock();
            flush_batch(batch);
            j_list_lock_.lock();
            return CheckpointPass::restart;
        }
    }
    return CheckpointPass::list_end;
}

void Ext4::force_relogged_commit(std::uint64_t block, std::vector<std::uint64_t>& batch) {
    // The buffer is re-logged in a newer transaction: force that
    // transaction's commit and wait for it, both locks dropped meanwhile.
    const std::uint64_t t = bcache_.get(block).jh.b_transaction;
    SIM_LIVE(t);
    j_list_lock_.unlock();
    flush_batch(batch);
    SIM_NOTE("jbd2_log_do_checkpoint: " + block_name(block) + " belongs to transaction " + std::to_string(t) +
             ": forcing its commit");
    log_start_commit(t);
    j_checkpoint_mutex_.unlock();
    log_wait_commit(t);
    j_checkpoint_mutex_.lock();
    j_list_lock_.lock();
}

}  // namespace model::ext4
