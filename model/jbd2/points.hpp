#pragma once
// The ext4/jbd2 model's yield points (C1..C11 name the steps of
// jbd2_journal_commit_transaction, model/jbd2/commit.cpp).
//
// Each names what the code on either side of it touches, up to the previous
// and the next yield point of the same task (sim/yield_point.hpp), so that
// sleep sets can prune (README "Exploring"). Locks (j_list_lock,
// j_checkpoint_mutex), wait queues (buffer.lock, j_wait_*) and the disk
// report themselves; the rest is the journal's own state, in five parts:
// - jbd2.journal: journal_t's running and committing transactions (t_state,
//   t_updates, t_buffers, t_reserved, t_inode_list), the transaction table,
//   j_transaction_sequence, j_commit_sequence, j_commit_request;
// - jbd2.checkpoint: j_checkpoint_transactions, every t_checkpoint_list and
//   each journal head's b_cp_transaction;
// - jbd2.log: j_head, j_tail, j_tail_sequence (log space) and the journal
//   superblock;
// - buffer.state: each buffer's BH_Lock, BH_Dirty, BH_JBDDirty, its journal
//   head's b_transaction and b_next_transaction, b_data and b_frozen_data;
// - ext4.inode: the in-core inodes (number, dirty pages, i_sync_tid) and the
//   ordered-mode data in flight.
// A stretch that starts where no yield point covers it (a task's start, an
// operation's start after workload.op_begin, a daemon woken by its timer,
// __jbd2_log_wait_for_space entering its loop) reports what it touches with
// sim::Scheduler::cover (Ext4::cover): a step of that stretch that ends at a
// wait or at the task's end touches it. When unsure, a point names more: a footprint too
// small would hide a race from the exhaustive search.
#include <string_view>

#include "sim/yield_point.hpp"

namespace model::jbd2::points {
using sim::register_yield_point;

inline constexpr std::string_view journal = "jbd2.journal";
inline constexpr std::string_view checkpoint = "jbd2.checkpoint";
inline constexpr std::string_view log = "jbd2.log";
/// The stored metadata objects the device's contents name (Content::meta
/// ids): immutable once stored, so stores commute up to their ids, which
/// crash states compare by content; no point declares them.
inline constexpr std::string_view objects = "jbd2.objects";
inline constexpr std::string_view buffer = "buffer.state";
inline constexpr std::string_view inode = "ext4.inode";

inline const sim::YieldPoint create_done = register_yield_point(
    "ext4.create.done",
    "ext4_create: the inode bitmap, the inode table block and the directory block are dirtied "
    "in the running transaction and the handle is stopped", {journal, buffer, inode});
inline const sim::YieldPoint write_done = register_yield_point(
    "ext4.write.done",
    "a buffered write dirtied its pages; new blocks are allocated in the block bitmap and the "
    "inode's block map and size logged in the running transaction", {journal, buffer, inode});
inline const sim::YieldPoint fsync_after_data = register_yield_point(
    "ext4.fsync.after_data", "ext4_sync_file wrote back and waited for the file's dirty pages",
    {journal, buffer, inode});
inline const sim::YieldPoint get_write_access = register_yield_point(
    "jbd2.handle.get_write_access",
    "do_get_write_access: the buffer joined the running transaction (b_transaction set, or "
    "b_next_transaction while the committing one owns it); a dirty buffer became JBDDirty",
    {journal, buffer, inode, log});
inline const sim::YieldPoint commit_requested = register_yield_point(
    "jbd2.commit.requested",
    "jbd2_complete_transaction (fsync): the commit is asked for (kjournald2 woken) and the caller has "
    "yet to sleep on j_wait_done_commit",
    {journal});
inline const sim::YieldPoint commit_locked = register_yield_point(
    "jbd2.commit.locked", "C1: the transaction is T_LOCKED and its open handles reached zero",
    {journal, checkpoint, buffer, log});
inline const sim::YieldPoint scan_step = register_yield_point(
    "jbd2.cp.scan_step",
    "C2 or the shrinker: one checkpoint buffer tested (and maybe removed) under j_list_lock",
    {journal, checkpoint, buffer, log});
inline const sim::YieldPoint commit_flush = register_yield_point(
    "jbd2.commit.flush", "C3: T_FLUSH, t_log_start = j_head; a new running transaction may start",
    {journal, checkpoint, buffer, log, inode});
inline const sim::YieldPoint commit_data_written = register_yield_point(
    "jbd2.commit.data_written",
    "journal_finish_inode_data_buffers: the ordered-mode data submitted at C4 (before the log writes) waited",
    {journal, checkpoint, buffer, log, inode});
inline const sim::YieldPoint commit_log_written = register_yield_point(
    "jbd2.commit.log_written",
    "C5/C7: descriptor and metadata copies written to the log and waited for (not durable yet)",
    {journal, log});
inline const sim::YieldPoint commit_tail_snapshot = register_yield_point(
    "jbd2.commit.tail_snapshot", "C6: update_tail = jbd2_journal_get_log_tail, before the commit flush",
    {journal, checkpoint, buffer, log});
inline const sim::YieldPoint commit_durable = register_yield_point(
    "jbd2.commit.durable", "C8: commit block written with PREFLUSH + FUA: the transaction is durable",
    {journal, checkpoint, buffer, log});
inline const sim::YieldPoint commit_done = register_yield_point(
    "jbd2.commit.done",
    "C9-C11: tail maybe updated, buffers moved to this transaction's checkpoint list, T_FINISHED",
    {journal, checkpoint, buffer});
inline const sim::YieldPoint checkpoint_flushed = register_yield_point(
    "jbd2.checkpoint.flushed",
    "jbd2_cleanup_journal_tail: the fs device FLUSHed; the journal superblock is not written yet",
    {journal, checkpoint, buffer, log});
inline const sim::YieldPoint checkpoint_tail_updated = register_yield_point(
    "jbd2.checkpoint.tail_updated",
    "__jbd2_update_log_tail: the journal superblock (FUA) holds the new start and sequence",
    {journal, checkpoint, buffer, log});
inline const sim::YieldPoint checkpoint_batch =
    register_yield_point("jbd2.checkpoint.batch_submitted",
                         "jbd2_log_do_checkpoint: __flush_batch submitted up to 64 dirty checkpoint buffers",
                         {journal, checkpoint, buffer, log});
inline const sim::YieldPoint flusher_submitted = register_yield_point(
    "ext4.flusher.submitted",
    "background writeback submitted the expired dirty metadata buffers (locked until completion)", {buffer});

inline const sim::YieldPoint* const all[] = {
    &create_done,       &write_done,   &fsync_after_data,    &get_write_access,        &commit_locked,
    &scan_step,         &commit_flush, &commit_data_written, &commit_log_written,      &commit_tail_snapshot,
    &commit_durable,    &commit_done,  &checkpoint_flushed,  &checkpoint_tail_updated, &checkpoint_batch,
    &flusher_submitted, &commit_requested,
};
}  // namespace model::jbd2::points
