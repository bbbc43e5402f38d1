#pragma once
// The btrfs model's yield points, in the order the seed's story visits them.
// Each names what the code on either side of it touches (sim/yield_point.hpp):
// the inode's fields (size, flags, last_trans), its extent map tree, io tree
// and pages, the ordered extents, the running transaction, the subvolume tree,
// the log, metadata objects and the data allocator; the checksum trees by
// their locks' names (csum_root.lock, log_root.lock). `crashsim fuzz
// --check-footprints` names a step that changes a part its points leave out.
#include "sim/yield_point.hpp"

namespace model::btrfs::points {
using sim::register_yield_point;

inline const sim::YieldPoint write_after_dirty = register_yield_point(
    "btrfs.write.after_dirty", "buffered write dirtied its pages and marked them delalloc",
    {"btrfs.ordered", "btrfs.page_cache", "btrfs.inode", "btrfs.allocator", "btrfs.log"});
inline const sim::YieldPoint direct_write_done = register_yield_point(
    "btrfs.write.direct_done", "an O_DIRECT write's bio completed; its ordered extent is queued to endio",
    {"btrfs.ordered", "btrfs.page_cache", "btrfs.inode", "btrfs.em_tree", "btrfs.io_tree",
     "btrfs.allocator", "btrfs.log"});
inline const sim::YieldPoint flusher_after_delalloc = register_yield_point(
    "btrfs.flusher.after_delalloc",
    "run_delalloc_range created the pinned extent map and the ordered extent (range LOCKED)",
    {"btrfs.page_cache", "btrfs.io_tree", "btrfs.allocator", "btrfs.em_tree", "btrfs.ordered"});
inline const sim::YieldPoint flusher_after_submit = register_yield_point(
    "btrfs.flusher.after_submit", "the data bio is submitted; pages are under writeback",
    {"btrfs.page_cache", "btrfs.io_tree", "btrfs.allocator", "btrfs.em_tree", "btrfs.ordered"});
inline const sim::YieldPoint endio_after_join = register_yield_point(
    "btrfs.endio.after_join", "btrfs_finish_ordered_io joined the running transaction",
    {"btrfs.transaction", "btrfs.io_tree", "btrfs.fs_tree", "btrfs.ordered"});
inline const sim::YieldPoint endio_after_extent_item = register_yield_point(
    "btrfs.endio.after_extent_item", "the file extent item is in the subvolume tree",
    {"btrfs.fs_tree", "btrfs.em_tree", "btrfs.io_tree", "btrfs.ordered"});
inline const sim::YieldPoint endio_after_unpin = register_yield_point(
    "btrfs.endio.after_unpin", "unpin_extent_cache set the generation and cleared PINNED",
    {"btrfs.em_tree", "btrfs.fs_tree", "btrfs.inode", "btrfs.io_tree", "btrfs.transaction", "btrfs.ordered"});
inline const sim::YieldPoint release_before_em_lock = register_yield_point(
    "btrfs.release.before_em_lock",
    "btrfs_releasepage passed the page and i_size checks, before taking em_tree.lock",
    {"btrfs.page_cache", "btrfs.inode", "btrfs.em_tree", "btrfs.transaction", "btrfs.io_tree"});
inline const sim::YieldPoint release_after_em_unlock = register_yield_point(
    "btrfs.release.after_em_unlock",
    "try_release_extent_mapping dropped em_tree.lock after one extent map",
    {"btrfs.page_cache", "btrfs.inode", "btrfs.em_tree", "btrfs.transaction", "btrfs.io_tree"});
inline const sim::YieldPoint fsync_after_start_writeback = register_yield_point(
    "btrfs.fsync.after_start_writeback", "btrfs_sync_file started writeback of the range",
    {"btrfs.page_cache", "btrfs.io_tree", "btrfs.ordered", "btrfs.em_tree", "btrfs.allocator", "btrfs.log"});
inline const sim::YieldPoint fsync_after_wait_ordered =
    register_yield_point("btrfs.fsync.after_wait_ordered", "every ordered extent in range has completed",
                         {"btrfs.page_cache", "btrfs.io_tree", "btrfs.ordered", "btrfs.em_tree",
                          "btrfs.allocator", "btrfs.log", "btrfs.inode", "btrfs.transaction"});
inline const sim::YieldPoint fsync_after_join = register_yield_point(
    "btrfs.fsync.after_join", "fsync joined the running transaction and started the log",
    {"btrfs.transaction", "btrfs.log", "btrfs.inode", "btrfs.em_tree"});
inline const sim::YieldPoint fsync_after_full_sync_check = register_yield_point(
    "btrfs.fsync.after_full_sync_check",
    "btrfs_log_inode read NEEDS_FULL_SYNC and chose the fast or the full path",
    {"btrfs.inode", "btrfs.log", "btrfs.fs_tree", "btrfs.em_tree", "btrfs.transaction"});
inline const sim::YieldPoint fsync_before_changed_extents_lock = register_yield_point(
    "btrfs.fsync.before_changed_extents_lock",
    "the inode item is logged; btrfs_log_changed_extents has not locked em_tree yet",
    {"btrfs.log", "btrfs.inode", "btrfs.em_tree", "btrfs.transaction"});
inline const sim::YieldPoint fsync_logging_extent = register_yield_point(
    "btrfs.fsync.logging_extent",
    "btrfs_log_changed_extents dropped em_tree.lock to log one extent map (LOGGING set)",
    {"btrfs.em_tree", "btrfs.log", "btrfs.inode"});
inline const sim::YieldPoint sync_log_root_released = register_yield_point(
    "btrfs.sync_log.root_released",
    "the leader started the log write and released log_mutex: later fsyncs join the next log "
    "transaction",
    {"btrfs.log", "btrfs.transaction", "btrfs.meta", "log_root.lock"});
inline const sim::YieldPoint sync_log_after_log_write = register_yield_point(
    "btrfs.sync_log.after_log_write", "the log tree blocks are written (not yet flushed)",
    {"btrfs.log", "btrfs.transaction", "btrfs.meta", "btrfs.inode", "btrfs.em_tree"});
inline const sim::YieldPoint sync_log_super_durable = register_yield_point(
    "btrfs.sync_log.super_durable", "FLUSH then superblock FUA naming the log: the log is durable",
    {"btrfs.log", "btrfs.transaction", "btrfs.meta"});
inline const sim::YieldPoint commit_after_writers = register_yield_point(
    "btrfs.commit.after_writers", "the committing transaction has no writers left",
    {"btrfs.transaction", "btrfs.fs_tree", "btrfs.meta", "btrfs.log"});
inline const sim::YieldPoint commit_after_tree_write = register_yield_point(
    "btrfs.commit.after_tree_write", "the transaction's tree blocks are written (not yet flushed)",
    {"btrfs.transaction", "btrfs.fs_tree", "btrfs.meta", "btrfs.log", "csum_root.lock", "log_root.lock"});
inline const sim::YieldPoint commit_super_durable = register_yield_point(
    "btrfs.commit.super_durable", "FLUSH then superblock FUA: the transaction is committed",
    {"btrfs.transaction", "btrfs.meta", "btrfs.log", "csum_root.lock", "log_root.lock"});
inline const sim::YieldPoint write_enospc = register_yield_point(
    "btrfs.write.enospc",
    "a write could not reserve data space after flushing delalloc and committing: -ENOSPC or a short write",
    {"btrfs.ordered", "btrfs.page_cache", "btrfs.inode", "btrfs.allocator", "btrfs.log"});

/// Every point above, so that whoever lists the model links (and registers) them.
inline const sim::YieldPoint* const all[] = {
    &write_after_dirty,        &direct_write_done,       &flusher_after_delalloc,  &flusher_after_submit,
    &endio_after_join,         &endio_after_extent_item, &endio_after_unpin,
    &release_before_em_lock,   &release_after_em_unlock, &fsync_after_start_writeback,
    &fsync_after_wait_ordered, &fsync_after_join,        &fsync_after_full_sync_check,
    &fsync_before_changed_extents_lock, &fsync_logging_extent, &sync_log_root_released,
    &sync_log_after_log_write,
    &sync_log_super_durable,   &commit_after_writers,    &commit_after_tree_write,
    &commit_super_durable,     &write_enospc,
};
}  // namespace model::btrfs::points
