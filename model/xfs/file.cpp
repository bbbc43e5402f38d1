// File operations: mkfs, create, fsync (xfs_file_fsync), sync_file_range,
// fallocate with its three modes (xfs_file_fallocate in fs/xfs/xfs_file.c;
// xfs_flush_unmap_range, xfs_free_file_space, xfs_alloc_file_space and
// xfs_update_prealloc_flags in fs/xfs/xfs_bmap_util.c), xfs_setattr_size
// growing or shrinking a file (xfs_iops.c), and godown -f. Seed:
// "xfs: force writes to delalloc regions to unwritten"; generic/042's three
// commands (falloc -k, fpunch, fzero -k) start the targeted writeback
// (xfs_flush_unmap_range) that converts a whole delalloc record.
//
// Left out on purpose: collapse, insert and unshare ranges,
// O_DSYNC, timestamps and mode bits (xfs_update_prealloc_flags still logs the
// inode, as it does), partial-block zeroing (every range is block aligned),
// extent size hint alignment of fallocate, directories and names.
#include <algorithm>

#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model::xfs {

Xfs::Xfs(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names)
    : FileSystemBase(geometry, std::move(file_names)), knobs_(knobs), inodes_(file_names_.size()),
      create_cost_(static_cast<sim::Duration>(geometry.cost("create_ns", cpu_cost::create))),
      unlink_cost_(static_cast<sim::Duration>(geometry.cost("unlink_ns", cpu_cost::unlink))),
      chunk_of_(file_names_.size(), 0), chunk_in_use_{inodes_per_chunk - first_chunk_free} {
    // mkfs: block 0 holds the metadata in place, then the internal log
    // (zeroed), then data blocks, which keep what an earlier owner left.
    SIM_ASSERT(geometry.blocks >= 8);
    data_start_ = data_area_start(geometry.blocks);
    log_blocks_ = data_start_ - log_start_;
    free_space_.assign(data_start_, geometry.blocks, Free{});
    free_blocks_ = geometry.blocks - data_start_;
    durable_meta_.inodes.resize(file_names_.size());
    durable_meta_.free_space = free_space_;
    const std::uint64_t home = store(durable_meta_);
    device_.format(0, 1, disk::Content::meta(home));
    device_.format(log_start_, log_blocks_, disk::Content::zeros());
}

auto Xfs::clone() const -> std::unique_ptr<FileSystem> {
    SIM_ASSERT(task_op_.empty());
    SIM_ASSERT(!log_force_lock_.held());
    return std::make_unique<Xfs>(*this);
}

auto Xfs::op_name() const -> std::string {
    if (!sim::has_current_scheduler()) return "none";
    const auto found = task_op_.find(sim::current_scheduler().current());
    return found == task_op_.end() ? "background" : found->second;
}

auto Xfs::op_footprint(const OpCall& call) const -> sim::Footprint {
    // What an operation may touch from its start to its first yield point
    // (or its end, when it reaches none), blocked or not on the way; the
    // transaction and log helpers report their own parts.
    const points::Parts& parts = points::parts();
    const sim::Footprint files = device_.faults().write_errors ? parts.open_files : sim::Footprint{};
    switch (op_of<Op>(call)) {
        case Op::create: return parts.inode | parts.ialloc | files;
        case Op::unlink: return parts.data | parts.ialloc | files;  // xfs_inactive truncates
        case Op::write:
        case Op::writeback:
        case Op::sync_file_range:
        case Op::fsync:
        case Op::falloc:
        case Op::fpunch:
        case Op::fzero:
        case Op::truncate: return parts.data | files;
        case Op::log_force: return parts.logging | files;
        // The shutdown flag and the freeze level: every step reads them.
        case Op::shutdown:
        case Op::freeze:
        case Op::thaw: return sim::footprint_all;
    }
    return sim::footprint_all;
}

auto Xfs::execute(const OpCall& call) -> OpResult {
    // xfs_is_shutdown: every entry point fails with EIO once godown ran.
    if (shutdown_ && op_of<Op>(call) != Op::shutdown) {
        SIM_NOTE(std::string(call.name) + " fails with EIO: the file system is shut down");
        return OpResult::failed;
    }
    const sim::TaskId task = sim::current_scheduler().current();
    task_op_[task] = std::string(call.name);
    counters_.by_op[task_op_[task]].ops++;
    const auto [start, end] = call.blocks(block_size_);
    // The task's open file samples wb_err at its first operation (do_dentry_open).
    if (device_.faults().write_errors) {
        open_files_.cursor(call.file, inodes_[call.file].errors.wb_err);
        touch(points::parts().open_files);
    }
    bool short_write = false;  // a write copied call.copied bytes only
    // sb_start_write: blocks once freeze_super reached SB_FREEZE_WRITE.
    const bool write_protected = takes_write_protection(op_of<Op>(call));
    SIM_LIVE(task, write_protected);
    if (write_protected) sb_.start(WriteLevel::write);
    const bool ok = run_op(call, start, end, short_write);
    if (write_protected) sb_.end(WriteLevel::write);
    task_op_.erase(task);
    // An fsync or write that raced with godown reports EIO.
    if (!ok || (shutdown_ && op_of<Op>(call) != Op::shutdown)) return OpResult::failed;
    return short_write ? OpResult::short_write : OpResult::ok;
}

auto Xfs::run_op(const OpCall& call, std::uint64_t start, std::uint64_t end, bool& short_write) -> bool {
    bool ok = true;  // false: the operation returned an error (ENOSPC)
    switch (op_of<Op>(call)) {
        case Op::create: create(call.file); break;
        case Op::write:
            if (call.flag("direct")) {
                ok = direct_write(call.file, call.offset, call.length, call.version);
            } else {
                const std::uint64_t copied =
                    buffered_write(call.file, call.offset, call.length, call.version);
                ok = copied > 0;
                short_write = ok && copied < call.length;
                if (short_write) call.copied = copied;
            }
            break;
        case Op::writeback: writepages(call.file, start, end, "background writeback (WB_SYNC_NONE)"); break;
        case Op::sync_file_range: ok = sync_file_range(call.file, start, end); break;
        case Op::fsync: ok = fsync(call.file); break;
        case Op::falloc:
        case Op::fpunch:
        case Op::fzero: ok = fallocate(call, start, end); break;
        case Op::truncate: truncate(call.file, call.length); break;
        case Op::log_force:
            // One run of xfs_log_worker from a task, the same code the xfs-sync
            // daemon runs (freeze.cpp): cover the log or force it, push the
            // AIL. The re-arm (xfs_log_work_queue) stays the daemon's: l_work
            // is armed already. The model waits for the record; the kernel's
            // async force does not, which only delays this run's return.
            log_worker();
            break;
        case Op::shutdown: shutdown(); break;
        case Op::freeze: ok = freeze_super(); break;  // FIFREEZE
        case Op::thaw: ok = thaw_super(); break;      // FITHAW
        case Op::unlink: unlink(call.file); break;
    }
    return ok;
}

auto Xfs::counters() const -> std::map<std::string, std::uint64_t> {
    return counter_values(counter_table, *this, counters_, device_.counters());
}

void Xfs::create(std::uint32_t file) {
    SIM_LIVE(file);
    Inode& inode = inodes_[file];
    // xfs_generic_create -> xfs_create (v5.7): the path walk, the inode's
    // initialisation and the directory insert take create_ns of CPU; the
    // transaction commit and m_active_trans are charged where they happen.
    sim::cpu(create_cost_);
    auto tp = trans_alloc("create");
    if (!tp) {
        SIM_NOTE("create inode " + name(file) + " fails with EIO: the file system is shut down");
        return;
    }
    dialloc(*tp, file);
    inode.exists = true;
    inode.nlink = 1;  // xfs_init_new_inode: nlink 1, then xfs_dir_createname
    inode.extsize_blocks = knobs_.extent_size_hint_blocks;  // inherited (XFS_DIFLAG_EXTSZINHERIT)
    tp->inodes.push_back(file);
    const std::uint64_t id = tp->id;
    trans_commit(*tp);
    SIM_NOTE("create inode " + name(file) + " (transaction #" + std::to_string(id) +
             " in the CIL)" +
             (inode.extsize_blocks > 0
                  ? ", extent size hint " + std::to_string(bytes(inode.extsize_blocks)) +
                        " inherited"
                  : std::string()));
    sim::yield(points::create_after_commit);
}

void Xfs::dialloc(Transaction& tp, std::uint32_t file) {
    // xfs_dir_ialloc -> xfs_ialloc -> xfs_dialloc (v5.7): an inode from a
    // chunk with free inodes; with none left, xfs_ialloc_ag_alloc allocates a
    // new chunk of XFS_INODES_PER_CHUNK and returns with ialloc_context set,
    // and xfs_dir_ialloc "xfs_trans_bhold(tp, ialloc_context); ... code =
    // xfs_trans_roll(&tp);" before taking the inode from it. The chunk's
    // buffers and the AGI are not modelled: the rolled-from handle logs
    // nothing the model keeps. Freed inodes are not reused (creates and
    // unlinks of the bundled scenarios do not interleave).
    if (chunk_free_ == 0) {
        chunk_free_ = inodes_per_chunk;
        chunk_in_use_.push_back(0);
        counters_.inode_chunks_allocated++;
        trans_roll(tp);
    }
    chunk_free_--;
    chunk_of_[file] = static_cast<std::uint32_t>(chunk_in_use_.size() - 1);
    chunk_in_use_.back()++;
}

void Xfs::unlink(std::uint32_t file) {
    SIM_LIVE(file);
    // do_unlinkat -> xfs_vn_unlink -> xfs_remove (v5.7): tr_remove,
    // xfs_droplink (nlink 0: xfs_iunlink puts the inode on the AGI unlinked
    // list), xfs_dir_removename, xfs_trans_commit. The path walk, the
    // directory lookup and removal take unlink_ns of CPU.
    sim::cpu(unlink_cost_);
    auto tp = trans_alloc("xfs_remove");
    if (!tp) {
        SIM_NOTE("unlink " + name(file) + " fails with EIO: the file system is shut down");
        return;
    }
    // xfs_droplink: drop_nlink, xfs_trans_log_inode(XFS_ILOG_CORE), and at
    // nlink 0 xfs_iunlink (the AGI unlinked list); xfs_dir_removename takes
    // the name in the same transaction. The model keeps no directory or AGI:
    // the logged inode's nlink 0 stands for all three (InodeImage::nlink).
    // Durable, the name is gone and log recovery's
    // xlog_recover_process_iunlinks truncates and frees the inode
    // (model/xfs/log_recover.cpp).
    inodes_[file].nlink = 0;
    tp->inodes.push_back(file);
    const std::uint64_t id = tp->id;
    trans_commit(*tp);
    SIM_NOTE("unlink " + name(file) + ": xfs_remove (transaction #" + std::to_string(id) + " in the CIL)");
    // The last iput: evict -> xfs_fs_destroy_inode -> xfs_inactive, in the
    // unlinking task (v5.7 has no background inactivation).
    inactive(file);
}

void Xfs::inactive(std::uint32_t file) {
    SIM_LIVE(file);
    Inode& inode = inodes_[file];
    // xfs_inactive: "if (VFS_I(ip)->i_size != 0 || ip->i_d.di_nextents > 0)
    // xfs_inactive_truncate" (di_size 0 and xfs_itruncate_extents; the model's
    // truncate to 0 does both), then xfs_inactive_ifree.
    bool mapped = false;
    inode.data_fork.for_each([&](std::uint64_t, std::uint64_t, const Extent&) { mapped = true; });
    if (inode.size_bytes != 0 || mapped) {
        // setattr_size expects IOLOCK_EXCL (truncate's caller holds it); at
        // the last iput no one else can reach the inode, so it is uncontended.
        inode.iolock.lock();
        setattr_size(file, 0);
        inode.iolock.unlock();
    }
    // xfs_inactive_ifree: tr_ifree, xfs_ifree -> xfs_difree -> xfs_difree_inobt
    // (v5.7): "if (!(mp->m_flags & XFS_MOUNT_IKEEP) && rec.ir_free ==
    // XFS_INOBT_ALL_FREE && mp->m_sb.sb_inopblock <= XFS_INODES_PER_CHUNK)"
    // the whole chunk is freed (the model mounts without ikeep, the default,
    // and 4 KiB blocks hold 8 inodes of 512 bytes: only ir_free decides);
    // xfs_difree_inode_chunk defers the extent free, and the commit's
    // xfs_defer_finish_noroll rolls once (EFI, then EFD in the new handle).
    auto tp = trans_alloc("xfs_inactive_ifree");
    if (!tp) return;
    // After the truncate's points, which declare the data path only.
    touch(points::parts().inode | points::parts().ialloc);
    inode.exists = false;
    tp->inodes.push_back(file);
    const std::uint32_t chunk = chunk_of_[file];
    SIM_ASSERT(chunk_in_use_[chunk] > 0);
    chunk_in_use_[chunk]--;
    // Chunk 0 keeps mkfs's root inodes, so it is never all free.
    if (chunk_in_use_[chunk] == 0) {
        if (chunk + 1 == chunk_in_use_.size()) chunk_free_ = 0;  // its free inodes go with it
        counters_.inode_chunks_freed++;
        // The old handle logs the freed inode; the new one the extent free
        // (not modelled: the chunk's blocks are not in the free-space map).
        trans_roll(*tp);
    }
    const std::uint64_t id = tp->id;
    trans_commit(*tp);
    SIM_NOTE("xfs_inactive: inode " + name(file) + " freed (transaction #" + std::to_string(id) +
             " in the CIL)");
}

auto Xfs::check_writeback_error(std::uint32_t file, const std::string& who) -> bool {
    if (!inodes_[file].writeback_error) return true;
    inodes_[file].writeback_error = false;
    SIM_NOTE(who + " of inode " + name(file) +
             " fails with ENOSPC: writeback could not allocate (filemap_check_errors)");
    return false;
}

auto Xfs::check_wb_err(std::uint32_t file, const std::string& who) -> bool {
    if (!device_.faults().write_errors) return true;  // no wb_err is ever set
    touch(points::parts().inode | points::parts().open_files);
    MappingErrors& errors = inodes_[file].errors;
    if (file_check_and_advance_wb_err(errors, open_files_.cursor(file, errors.wb_err)) == 0) return true;
    SIM_NOTE(who + " of inode " + name(file) + " fails with EIO: a data write of its writeback failed " +
             "(file_check_and_advance_wb_err reports it once to this open file; the pages stay clean, " +
             "nothing rewrites them)");
    return false;
}

auto Xfs::fsync(std::uint32_t file) -> bool {
    // xfs_file_fsync, v5.7.
    SIM_LIVE(file);
    Inode& inode = inodes_[file];
    if (shutdown_) {
        SIM_NOTE("fsync of inode " + name(file) + " fails with EIO: the file system is shut down");
        return false;
    }
    sim::cpu(cpu_cost::fsync_entry);
    // file_write_and_wait_range: "if (error) return error;"
    write_and_wait(file, 0, whole_file_end, "fsync");
    sim::yield(points::fsync_after_writeback);
    if (!check_writeback_error(file, "fsync")) return false;
    if (!check_wb_err(file, "fsync")) return false;
    // "if (XFS_FORCED_SHUTDOWN(mp)) return -EIO;"
    if (shutdown_) {
        SIM_NOTE("fsync of inode " + name(file) + " fails with EIO: the file system is shut down");
        return false;
    }
    // No realtime and no external log device: no data device flush first.
    // Under ILOCK_SHARED: "if (xfs_ipincount(ip)) { if (!datasync ||
    // (ip->i_itemp->ili_fsync_fields & ~XFS_ILOG_TIMESTAMP)) lsn =
    // ili_last_lsn; }". The inode stays pinned until the checkpoint holding
    // its last commit is on disk (last_commit_seq > durable_sequence_). The
    // model has no fdatasync and leaves timestamps out, so every logged field
    // counts and the condition is the pin count alone (O_DSYNC writes in fio
    // workloads call this fsync: datasync changes nothing without
    // timestamp-only transactions). Then xfs_log_force_lsn(XFS_LOG_SYNC,
    // &log_flushed), and "if (!log_flushed && !XFS_IS_REALTIME_INODE(ip) &&
    // mp->m_logdev_targp == mp->m_ddev_targp) xfs_blkdev_issue_flush". (Later
    // kernels move the log part into xfs_fsync_flush_log; same conditions.)
    inode.ilock.lock_shared();
    const std::uint64_t sequence = inode.last_commit_seq;
    const bool log_flushed = sequence > durable_sequence_ && log_force_seq(sequence, "fsync");
    inode.ilock.unlock_shared();
    if (!log_flushed) {
        device_.flush_and_wait();
        SIM_NOTE("fsync of inode " + name(file) + ": no log force needed, FLUSH the data device");
    }
    // xfs_log_force_lsn fails with -EIO once the log is shut down; the
    // device flush above still runs, then fsync returns the error.
    if (shutdown_) {
        SIM_NOTE("fsync of inode " + name(file) + " fails with EIO: the file system is shut down");
        return false;
    }
    SIM_NOTE("fsync of inode " + name(file) + " returns 0");
    return true;
}

auto Xfs::sync_file_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool {
    SIM_LIVE(file, start, end);
    if (shutdown_) {
        SIM_NOTE("sync_file_range of inode " + name(file) + " fails with EIO");
        return false;
    }
    // SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER: data only, no log force.
    write_and_wait(file, start, end, "sync_file_range");
    if (!check_writeback_error(file, "sync_file_range")) return false;
    // file_fdatawait_range: file_check_and_advance_wb_err too.
    if (!check_wb_err(file, "sync_file_range")) return false;
    SIM_NOTE("sync_file_range " + range_text(start, end) + " of inode " + name(file) +
             " returns: written back and waited for, no log force");
    return true;
}

auto Xfs::fallocate(const OpCall& call, std::uint64_t start, std::uint64_t end) -> bool {
    const std::uint32_t file = call.file;
    Inode& inode = inodes_[file];
    const bool keep_size = call.flag("keep_size");
    const bool punch = op_of<Op>(call) == Op::fpunch;
    const bool zero = op_of<Op>(call) == Op::fzero;
    SIM_LIVE(file, keep_size, punch, zero, start, end);
    const std::string command =
        std::string(call.name) + (keep_size ? " -k " : " ") + range_text(start, end);
    if (shutdown_) {
        SIM_NOTE(command + " of inode " + name(file) + " fails with EIO");
        return false;
    }
    // xfs_file_fallocate: IOLOCK_EXCL | MMAPLOCK_EXCL for the whole call.
    inode.iolock.lock();
    SIM_NOTE(command + " of inode " + name(file) + " (xfs_file_fallocate)");
    if ((punch || zero) && !flush_unmap_range(file, start, end)) {
        inode.iolock.unlock();  // "if (error) goto out_unlock;"
        return false;
    }
    // xfs_file_fallocate: new_size only when !(mode & FALLOC_FL_KEEP_SIZE) and
    // offset + len > i_size_read(inode); punch never changes the size. An
    // allocation error (ENOSPC) goes to out_unlock: no size change.
    std::uint64_t new_size = 0;
    SIM_LIVE(new_size);
    if (punch) {
        free_file_space(file, start, end);
    } else {
        if (!keep_size && bytes(end) > inode.size_bytes) new_size = bytes(end);
        // Zero range punches the range, then preallocates it.
        if (zero) free_file_space(file, start, end);
        if (!alloc_file_space(file, start, end)) {
            inode.iolock.unlock();
            return false;
        }
    }
    update_prealloc_flags(file);
    if (new_size != 0) setattr_size(file, new_size);
    inode.iolock.unlock();
    return true;
}

auto Xfs::flush_unmap_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool {
    // xfs_flush_unmap_range (v5.7): inode_dio_wait (direct writes hold
    // IOLOCK here), filemap_write_and_wait_range ("if (error) return
    // error;"), then truncate_pagecache_range. Block size = page size, so
    // the rounding to max(block, PAGE_SIZE) changes nothing.
    SIM_LIVE(file, start, end);
    write_and_wait(file, start, end, "xfs_flush_unmap_range");
    if (!check_writeback_error(file, "xfs_flush_unmap_range")) return false;
    // filemap_check_errors: the legacy AS_EIO flag, not this file's wb_err.
    if (inodes_[file].errors.check_legacy()) {
        SIM_NOTE("xfs_flush_unmap_range of inode " + name(file) +
                 " fails with EIO: AS_EIO, a data write of its writeback failed (filemap_check_errors)");
        return false;
    }
    page_cache_.remove(file, start, end);
    SIM_NOTE("xfs_flush_unmap_range: " + range_text(start, end) + " of inode " + name(file) +
             " written back and dropped from the page cache");
    sim::yield(points::punch_after_flush);
    return true;
}

void Xfs::free_file_space(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    SIM_LIVE(file, start, end);
    Inode& inode = inodes_[file];
    for (;;) {
        auto tp = trans_alloc("xfs_unmap_extent");
        if (!tp) return;
        SIM_LIVE(tp);
        inode.ilock.lock();
        const bool done = bunmapi(*tp, file, start, end);
        SIM_LIVE(done);
        const bool changed = !tp->inodes.empty();
        trans_commit(*tp);
        inode.ilock.unlock();
        if (changed) sim::yield(points::punch_after_unmap);
        if (done) return;
    }
}

auto Xfs::alloc_file_space(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool {
    Inode& inode = inodes_[file];
    std::uint64_t cursor = start;
    SIM_LIVE(file, end, cursor);
    while (cursor < end) {
        auto tp = trans_alloc("xfs_alloc_file_space");
        if (!tp) return false;
        SIM_LIVE(tp);
        inode.ilock.lock();
        const auto next = bmapi_write_prealloc(*tp, file, cursor, end);
        SIM_LIVE(next);
        const bool changed = !tp->inodes.empty();
        if (next) {
            trans_commit(*tp);
        } else {
            trans_cancel(*tp);
        }
        inode.ilock.unlock();
        if (!next) {
            SIM_NOTE("xfs_alloc_file_space: no free space (ENOSPC)");
            return false;
        }
        if (changed) sim::yield(points::falloc_after_alloc);
        cursor = std::max(cursor, *next);
    }
    return true;
}

void Xfs::update_prealloc_flags(std::uint32_t file) {
    // Every fallocate mode ends with a transaction that logs the inode core.
    SIM_LIVE(file);
    Inode& inode = inodes_[file];
    auto tp = trans_alloc("xfs_update_prealloc_flags");
    if (!tp) return;
    SIM_LIVE(tp);
    inode.ilock.lock();
    tp->inodes.push_back(file);
    trans_commit(*tp);
    inode.ilock.unlock();
}

void Xfs::truncate(std::uint32_t file, std::uint64_t size_bytes) {
    // xfs_vn_setattr with ATTR_SIZE: IOLOCK_EXCL and MMAPLOCK_EXCL around
    // xfs_setattr_size.
    SIM_LIVE(file, size_bytes);
    Inode& inode = inodes_[file];
    inode.iolock.lock();
    // xfs_setattr_size returns early only when newsize == 0 && oldsize == 0
    // && di_nextents == 0 (then only timestamps change, which the model
    // leaves out); `length` is never 0 in a scenario, but keep the condition.
    bool has_extents = false;
    inode.data_fork.for_each([&](std::uint64_t, std::uint64_t, const Extent& extent) {
        has_extents = has_extents || extent.state != ExtentState::delalloc;
    });
    if (size_bytes == 0 && inode.size_bytes == 0 && !has_extents) {
        SIM_NOTE("truncate of inode " + name(file) + " to 0: already empty, no size change");
    } else {
        setattr_size(file, size_bytes);
    }
    inode.iolock.unlock();
}

void Xfs::setattr_size(std::uint32_t file, std::uint64_t size_bytes) {
    // xfs_setattr_size (fs/xfs/xfs_iops.c, v5.7), IOLOCK_EXCL held.
    Inode& inode = inodes_[file];
    SIM_ASSERT(inode.iolock.write_held());
    const std::uint64_t old_size = inode.size_bytes;
    const std::uint64_t new_end = (size_bytes + block_size_ - 1) / block_size_;
    bool done = true;  // xfs_itruncate_extents unmapped everything past the new size
    SIM_LIVE(file, size_bytes, old_size, done);
    // "if (newsize > ip->i_d.di_size && (oldsize != ip->i_d.di_size ||
    // did_zeroing))": write back what lies between di_size and the new size
    // first, or a crash could expose it as zeros (the "null files" case).
    // did_zeroing (xfs_zero_eof growing the file) is always false here:
    // every size is block aligned and no written block lies past EOF
    // (no speculative preallocation; falloc -k past EOF is unwritten).
    if (size_bytes > inode.di_size && old_size != inode.di_size) {
        write_and_wait(file, inode.di_size / block_size_, new_end, "xfs_setattr_size");
    }
    // truncate_setsize: i_size, then truncate_pagecache past the new size,
    // which waits for pages under writeback there and drops them, dirty or not.
    inode.size_bytes = size_bytes;
    if (size_bytes < old_size) {
        wait_writeback(file, new_end, whole_file_end);
        page_cache_.remove(file, new_end, whole_file_end);
    }
    auto tp = trans_alloc("xfs_setattr_size");
    if (!tp) return;
    SIM_LIVE(tp);
    inode.ilock.lock();
    inode.di_size = size_bytes;
    tp->inodes.push_back(file);
    // "if (newsize <= oldsize)": xfs_itruncate_extents unmaps everything past
    // the new size, in this transaction and the ones it rolls to (at most two
    // extents each, as xfs_bunmapi is called by xfs_itruncate_extents_flags).
    if (size_bytes <= old_size) done = bunmapi(*tp, file, new_end, whole_file_end);
    const std::uint64_t id = tp->id;
    trans_commit(*tp);
    inode.ilock.unlock();
    SIM_NOTE("xfs_setattr_size: i_size and di_size of inode " + name(file) + " " +
             std::to_string(old_size) + " -> " + std::to_string(size_bytes) +
             (size_bytes <= old_size ? ", blocks past it unmapped" : std::string()) +
             " (transaction #" + std::to_string(id) + " in the CIL)");
    sim::yield(points::truncate_after_size_commit);
    while (!done) {
        tp = trans_alloc("xfs_itruncate_extents");
        if (!tp) return;
        inode.ilock.lock();
        done = bunmapi(*tp, file, new_end, whole_file_end);
        trans_commit(*tp);
        inode.ilock.unlock();
        sim::yield(points::punch_after_unmap);
    }
}

}  // namespace model::xfs
