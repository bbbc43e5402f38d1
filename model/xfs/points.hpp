#pragma once
// The xfs model's yield points, in the order generic/042's story visits them ("xfs: force writes to
// delalloc regions to unwritten"): wb.map_lookup, convert.after_alloc, convert.after_commit,
// wb.submit, ioend.queued and ioend.after_convert_commit).
//
// Each names what the code on either side of it touches, up to the previous and the next yield
// point of the same task (sim/yield_point.hpp), so that sleep sets can prune. Locks, wait queues
// and the disk report themselves; so do the transaction and log helpers (trans_alloc, trans_commit,
// the log forces and the AIL push, model/xfs/log.cpp), with what each touches, and an operation's
// start and the log worker's wake-up cover the stretch to their first yield point (sim::cover,
// model/xfs/file.cpp). The rest is the model's own state, in the parts fingerprint.cpp hashes:
// - xfs.inode: the in-core inodes (i_size, di_size, nlink, if_seq, last_commit_seq, errors);
// - xfs.data_fork: every inode's data fork, delalloc records included;
// - xfs.allocator: the free-space map, m_fdblocks and the delalloc reservation;
// - xfs.busy: busy extents (freed, not durable yet);
// - xfs.page_cache, xfs.ioend (ioends in flight), xfs.ialloc (inode chunks);
// - xfs.log: the CIL, transaction ids, checkpoints, lsns, the AIL and the covering state;
// - xfs.meta: the metadata objects log writes and AIL pushes store;
// - xfs.log_work: l_work's pending, running and cancelling bits;
// - xfs.open_files: the open files' wb_err cursors.
// Steps that change what every step reads (godown's shutdown flag, the freeze level, thaw's re-arm
// of l_work) touch everything: their points declare nothing. When unsure, a point names more: a
// footprint too small would hide a race from the exhaustive search.
#include <string_view>

#include "sim/yield_point.hpp"

namespace model::xfs::points {
using sim::register_yield_point;

inline constexpr std::string_view inode = "xfs.inode";
inline constexpr std::string_view data_fork = "xfs.data_fork";
inline constexpr std::string_view allocator = "xfs.allocator";
inline constexpr std::string_view busy = "xfs.busy";
inline constexpr std::string_view page_cache = "xfs.page_cache";
inline constexpr std::string_view ioend = "xfs.ioend";
inline constexpr std::string_view ialloc = "xfs.ialloc";
inline constexpr std::string_view log = "xfs.log";
inline constexpr std::string_view meta = "xfs.meta";
inline constexpr std::string_view log_work = "xfs.log_work";
inline constexpr std::string_view open_files = "xfs.open_files";

/// The parts above as footprints, and two more that only steps touching
/// everything change: xfs.freeze (the freeze levels) and xfs.mount (the
/// shutdown flag; m_active_trans, whose updates commute). fingerprint.cpp
/// hashes the state into them; the helpers report them (Xfs::touch).
struct Parts {
    sim::Footprint inode = sim::resource(points::inode);
    sim::Footprint data_fork = sim::resource(points::data_fork);
    sim::Footprint allocator = sim::resource(points::allocator);
    sim::Footprint busy = sim::resource(points::busy);
    sim::Footprint page_cache = sim::resource(points::page_cache);
    sim::Footprint ioend = sim::resource(points::ioend);
    sim::Footprint ialloc = sim::resource(points::ialloc);
    sim::Footprint log = sim::resource(points::log);
    sim::Footprint meta = sim::resource(points::meta);
    sim::Footprint log_work = sim::resource(points::log_work);
    sim::Footprint open_files = sim::resource(points::open_files);
    sim::Footprint freeze = sim::resource("xfs.freeze");
    sim::Footprint mount = sim::resource("xfs.mount");
    /// What the data path's points declare.
    sim::Footprint data = inode | data_fork | allocator | page_cache | ioend;
    /// What a log force, the AIL push and the log worker touch.
    sim::Footprint logging = log | meta | busy | log_work;
};
inline auto parts() -> const Parts& {
    static const Parts named;
    return named;
}

inline const sim::YieldPoint create_after_commit = register_yield_point(
    "xfs.create.after_commit", "the new inode's transaction is committed to the CIL",
    {inode, ialloc});
inline const sim::YieldPoint write_after_dirty = register_yield_point(
    "xfs.write.after_dirty",
    "buffered write reserved delalloc (or, with an extent size hint, allocated unwritten) and "
    "dirtied its pages; i_size raised, di_size not",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint direct_write_done = register_yield_point(
    "xfs.write.direct_done",
    "an O_DIRECT write's bios completed and xfs_dio_write_end_io converted unwritten extents or "
    "logged the new size",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint wb_map_lookup = register_yield_point(
    "xfs.wb.map_lookup",
    "xfs_map_blocks looked the page up under ILOCK shared and dropped the lock (B1)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint convert_after_alloc = register_yield_point(
    "xfs.convert.after_alloc",
    "xfs_bmapi_convert_delalloc allocated disk blocks for the whole delalloc record, ILOCK "
    "exclusive held (B2)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint convert_after_commit = register_yield_point(
    "xfs.convert.after_commit",
    "the allocation transaction is in the CIL (memory only) and ILOCK is dropped (B2)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint wb_submit = register_yield_point(
    "xfs.wb.submit", "an ioend's W(data) is submitted for the flushed pages only (B3, B4)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint ioend_queued = register_yield_point(
    "xfs.ioend.queued",
    "the data bio completed and its ioend is on the workqueue; the worker has not started (B5)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint ioend_after_convert_commit = register_yield_point(
    "xfs.ioend.after_convert_commit",
    "xfs_iomap_write_unwritten committed one conversion to written (and di_size) (B6)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint ioend_after_size_commit = register_yield_point(
    "xfs.ioend.after_size_commit", "xfs_setfilesize committed the new di_size (B6)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint falloc_after_alloc = register_yield_point(
    "xfs.falloc.after_alloc",
    "xfs_alloc_file_space committed one xfs_bmapi_write(XFS_BMAPI_PREALLOC) allocation",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint punch_after_flush = register_yield_point(
    "xfs.punch.after_flush",
    "xfs_flush_unmap_range wrote back, waited for and invalidated the range",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint punch_after_unmap = register_yield_point(
    "xfs.punch.after_unmap", "xfs_unmap_extent committed the unmapping of up to two extents",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint truncate_after_size_commit = register_yield_point(
    "xfs.truncate.after_size_commit",
    "xfs_setattr_size committed the new di_size (with the first unmapping past it when it shrinks)",
    {inode, data_fork, allocator, page_cache, ioend});
inline const sim::YieldPoint fsync_after_writeback = register_yield_point(
    "xfs.fsync.after_writeback", "xfs_file_fsync wrote back and waited for the whole file",
    {inode, data_fork, allocator, page_cache, ioend, log, open_files});
inline const sim::YieldPoint log_cil_pushed = register_yield_point(
    "xfs.log.cil_pushed",
    "a log force took the CIL checkpoint; its record is not written yet",
    {log, meta, busy});
inline const sim::YieldPoint log_record_durable = register_yield_point(
    "xfs.log.record_durable", "PREFLUSH, then the log record with FUA: the checkpoint is durable",
    {log, meta, busy, log_work});
inline const sim::YieldPoint shutdown_done = register_yield_point(
    "xfs.shutdown.done", "godown -f forced the log and shut the file system down");

// "xfs: remove the m_active_trans counter": the log worker,
// freeze_super and xfs_quiesce_attr.
inline const sim::YieldPoint logworker_after_need_covered = register_yield_point(
    "xfs.logworker.after_need_covered",
    "xfs_log_worker's xfs_log_need_covered returned; when it said yes, the file system was "
    "writable (not freezing) and the CIL empty, and no transaction is allocated yet (L1)",
    {log, meta, busy, log_work});
inline const sim::YieldPoint logworker_in_trans = register_yield_point(
    "xfs.logworker.in_trans",
    "xfs_sync_sb allocated its XFS_TRANS_NO_WRITECOUNT transaction and logs the superblock; "
    "not committed yet (L2)",
    {log, meta, busy, log_work});
inline const sim::YieldPoint freeze_write = register_yield_point(
    "xfs.freeze.write", "freeze_super set SB_FREEZE_WRITE and waited for writers (Z1)");
inline const sim::YieldPoint freeze_fs = register_yield_point(
    "xfs.freeze.fs",
    "freeze_super synced the file system, set SB_FREEZE_FS and waited for sb_start_intwrite "
    "holders (Z1); transactions without a write count are not waited for");
inline const sim::YieldPoint quiesce_drained = register_yield_point(
    "xfs.quiesce.drained",
    "xfs_quiesce_attr's first step is behind it: the m_active_trans poll (v5.7), nothing "
    "(counter removed, cancel left at the end) or cancel_delayed_work_sync (the patch) (Q1)");
inline const sim::YieldPoint quiesce_sbcount = register_yield_point(
    "xfs.quiesce.sbcount", "xfs_log_sbcount: the freezer's own superblock transaction is durable (Q4)");
inline const sim::YieldPoint quiesce_unmount_record = register_yield_point(
    "xfs.quiesce.unmount_record",
    "xfs_log_quiesce cancelled the log worker, forced the log, pushed the AIL and wrote the "
    "unmount record (Q6)");
inline const sim::YieldPoint freeze_complete = register_yield_point(
    "xfs.freeze.complete",
    "xfs_fs_freeze logged the superblock after the unmount record (Z3); SB_FREEZE_COMPLETE (Z4)");

inline const sim::YieldPoint write_enospc = register_yield_point(
    "xfs.write.enospc",
    "a buffered write found no free blocks for its delalloc reservation after xfs_flush_inodes: "
    "-ENOSPC or a short write",
    {inode, data_fork, allocator, page_cache, ioend});

/// Every point above, so that whoever lists the model links (and registers) them.
inline const sim::YieldPoint* const all[] = {
    &create_after_commit,     &write_after_dirty,          &direct_write_done,          &wb_map_lookup,
    &convert_after_alloc,     &convert_after_commit,       &wb_submit,
    &ioend_queued,            &ioend_after_convert_commit, &ioend_after_size_commit,
    &falloc_after_alloc,      &punch_after_flush,          &punch_after_unmap,
    &fsync_after_writeback,   &log_cil_pushed,             &log_record_durable,
    &shutdown_done,           &truncate_after_size_commit,
    &logworker_after_need_covered, &logworker_in_trans, &freeze_write, &freeze_fs,
    &quiesce_drained,         &quiesce_sbcount,            &quiesce_unmount_record,     &freeze_complete,
    &write_enospc,
};
}  // namespace model::xfs::points
