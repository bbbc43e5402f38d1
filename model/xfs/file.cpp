// File operations: mkfs, create, fsync (xfs_file_fsync), sync_file_range,
// fallocate with its three modes (xfs_file_fallocate in fs/xfs/xfs_file.c;
// xfs_flush_unmap_range, xfs_free_file_space, xfs_alloc_file_space and
// xfs_update_prealloc_flags in fs/xfs/xfs_bmap_util.c), xfs_setattr_size
// growing a file (xfs_iops.c), and godown -f. Seed:
// xfs-delalloc-unwritten-stale-data.txt; generic/042's three commands
// (falloc -k, fpunch, fzero -k) are the targeted writeback of FIDELITY.md 3.4.
//
// Left out on purpose: truncate down, collapse, insert and unshare ranges,
// O_DSYNC, timestamps and mode bits (xfs_update_prealloc_flags still logs the
// inode, as it does), partial-block zeroing (every range is block aligned),
// extent size hint alignment of fallocate, directories and names.
#include <algorithm>

#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model::xfs {

Xfs::Xfs(const Knobs& knobs, const Geometry& geometry, std::vector<std::string> file_names)
    : knobs_(knobs),
      block_size_(geometry.block_size),
      file_names_(std::move(file_names)),
      device_(geometry.blocks, geometry.device_profile(), geometry.block_size),
      page_cache_(file_names_.size()),
      inodes_(file_names_.size()) {
    // mkfs: block 0 holds the metadata in place, then the internal log
    // (zeroed), then data blocks, which keep what an earlier owner left.
    SIM_ASSERT(geometry.blocks >= 8);
    log_blocks_ = std::min<std::uint64_t>(1024, geometry.blocks / 8);
    data_start_ = log_start_ + log_blocks_;
    free_space_.assign(data_start_, geometry.blocks, Free{});
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

auto Xfs::execute(const OpCall& call) -> OpResult {
    // xfs_is_shutdown: every entry point fails with EIO once godown ran.
    if (shutdown_ && call.name != "shutdown") {
        SIM_NOTE(std::string(call.name) + " fails with EIO: the file system is shut down");
        return OpResult::failed;
    }
    const sim::TaskId task = sim::current_scheduler().current();
    task_op_[task] = std::string(call.name);
    counters_.by_op[task_op_[task]].ops++;
    const std::uint64_t start = call.offset / block_size_;
    const std::uint64_t end =
        call.has_range ? std::min(file_blocks_end, (call.offset + call.length) / block_size_)
                       : file_blocks_end;
    if (call.name == "create") {
        create(call.file);
    } else if (call.name == "write") {
        if (call.flag("direct")) {
            direct_write(call.file, call.offset, call.length, call.version);
        } else {
            buffered_write(call.file, call.offset, call.length, call.version);
        }
    } else if (call.name == "writeback") {
        writepages(call.file, start, end, "background writeback (WB_SYNC_NONE)");
    } else if (call.name == "sync_file_range") {
        sync_file_range(call.file, start, end);
    } else if (call.name == "fsync") {
        fsync(call.file);
    } else if (call.name == "falloc" || call.name == "fpunch" || call.name == "fzero") {
        fallocate(call, start, end);
    } else if (call.name == "truncate") {
        if (call.length > inodes_[call.file].size_bytes) setattr_size(call.file, call.length);
    } else if (call.name == "log_force") {
        if (!shutdown_) log_force("xfs_log_worker");
    } else if (call.name == "shutdown") {
        shutdown();
    } else {
        SIM_ASSERT(false && "operation validated by the loader");
    }
    task_op_.erase(task);
    // An fsync or write that raced with godown reports EIO.
    return shutdown_ && call.name != "shutdown" ? OpResult::failed : OpResult::ok;
}

auto Xfs::counters() const -> std::map<std::string, std::uint64_t> {
    const auto& disk = device_.counters();
    std::map<std::string, std::uint64_t> all = {
        {"transactions", counters_.transactions},
        {"transactions_cancelled", counters_.transactions_cancelled},
        {"log_forces", counters_.log_forces},
        {"data_ios", counters_.data_ios},
        {"data_blocks_written", counters_.data_blocks_written},
        {"delalloc_conversions", counters_.delalloc_conversions},
        {"unwritten_conversions", counters_.unwritten_conversions},
        {"size_updates", counters_.size_updates},
        {"ioends_queued", counters_.ioends_queued},
        {"ail_pushes", counters_.ail_pushes},
        {"disk_writes", disk.writes},
        {"disk_flushes", disk.flushes},
        {"disk_fua_writes", disk.fua_writes},
    };
    for (const auto& [op, counted] : counters_.by_op) {
        all["ops." + op] = counted.ops;
        all["transactions." + op] = counted.transactions;
        all["data_ios." + op] = counted.data_ios;
        all["log_forces." + op] = counted.log_forces;
    }
    return all;
}

void Xfs::create(std::uint32_t file) {
    Inode& inode = inodes_[file];
    auto tp = trans_alloc("create");
    if (!tp) {
        SIM_NOTE("create inode " + name(file) + " fails with EIO: the file system is shut down");
        return;
    }
    inode.exists = true;
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

void Xfs::fsync(std::uint32_t file) {
    Inode& inode = inodes_[file];
    if (shutdown_) {
        SIM_NOTE("fsync of inode " + name(file) + " fails with EIO: the file system is shut down");
        return;
    }
    sim::cpu(cpu_cost::fsync_entry);
    write_and_wait(file, 0, file_blocks_end, "fsync");
    sim::yield(points::fsync_after_writeback);
    if (shutdown_) {
        SIM_NOTE("fsync of inode " + name(file) + " fails with EIO: the file system is shut down");
        return;
    }
    // xfs_fsync_flush_log: force the log up to the inode's last commit if
    // that is not on disk yet (xfs_ipincount); unless this force wrote the
    // record (with its PREFLUSH), flush the device (xfs_blkdev_issue_flush).
    inode.ilock.lock_shared();
    const std::uint64_t sequence = inode.last_commit_seq;
    const bool log_flushed = sequence > durable_sequence_ && log_force_seq(sequence, "fsync");
    inode.ilock.unlock_shared();
    if (!log_flushed) {
        device_.flush_and_wait();
        SIM_NOTE("fsync of inode " + name(file) + ": no log force needed, FLUSH the data device");
    }
    SIM_NOTE("fsync of inode " + name(file) + " returns 0");
}

void Xfs::sync_file_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    if (shutdown_) {
        SIM_NOTE("sync_file_range of inode " + name(file) + " fails with EIO");
        return;
    }
    // SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER: data only, no log force.
    write_and_wait(file, start, end, "sync_file_range");
    SIM_NOTE("sync_file_range " + range_text(start, end) + " of inode " + name(file) +
             " returns: written back and waited for, no log force");
}

void Xfs::fallocate(const OpCall& call, std::uint64_t start, std::uint64_t end) {
    const std::uint32_t file = call.file;
    Inode& inode = inodes_[file];
    const bool keep_size = call.flag("keep_size");
    const bool punch = call.name == "fpunch";
    const bool zero = call.name == "fzero";
    const std::string command =
        std::string(call.name) + (keep_size ? " -k " : " ") + range_text(start, end);
    if (shutdown_) {
        SIM_NOTE(command + " of inode " + name(file) + " fails with EIO");
        return;
    }
    // xfs_file_fallocate: IOLOCK_EXCL | MMAPLOCK_EXCL for the whole call.
    inode.iolock.lock();
    SIM_NOTE(command + " of inode " + name(file) + " (xfs_file_fallocate)");
    if (punch || zero) flush_unmap_range(file, start, end);
    std::uint64_t new_size = 0;
    if (punch) {
        free_file_space(file, start, end);
    } else {
        if (!keep_size && bytes(end) > inode.size_bytes) new_size = bytes(end);
        // Zero range punches the range, then preallocates it.
        if (zero) free_file_space(file, start, end);
        alloc_file_space(file, start, end);
    }
    update_prealloc_flags(file);
    if (new_size != 0) setattr_size(file, new_size);
    inode.iolock.unlock();
}

void Xfs::flush_unmap_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    // Write back and wait, then truncate_pagecache_range.
    write_and_wait(file, start, end, "xfs_flush_unmap_range");
    page_cache_.remove(file, start, end);
    SIM_NOTE("xfs_flush_unmap_range: " + range_text(start, end) + " of inode " + name(file) +
             " written back and dropped from the page cache");
    sim::yield(points::punch_after_flush);
}

void Xfs::free_file_space(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    Inode& inode = inodes_[file];
    for (;;) {
        auto tp = trans_alloc("xfs_unmap_extent");
        if (!tp) return;
        inode.ilock.lock();
        const bool done = bunmapi(*tp, file, start, end);
        const bool changed = !tp->inodes.empty();
        trans_commit(*tp);
        inode.ilock.unlock();
        if (changed) sim::yield(points::punch_after_unmap);
        if (done) return;
    }
}

void Xfs::alloc_file_space(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    Inode& inode = inodes_[file];
    std::uint64_t cursor = start;
    while (cursor < end) {
        auto tp = trans_alloc("xfs_alloc_file_space");
        if (!tp) return;
        inode.ilock.lock();
        const auto next = bmapi_write_prealloc(*tp, file, cursor, end);
        const bool changed = !tp->inodes.empty();
        if (next) {
            trans_commit(*tp);
        } else {
            trans_cancel(*tp);
        }
        inode.ilock.unlock();
        if (!next) {
            SIM_NOTE("xfs_alloc_file_space: no free space (ENOSPC)");
            return;
        }
        if (changed) sim::yield(points::falloc_after_alloc);
        cursor = std::max(cursor, *next);
    }
}

void Xfs::update_prealloc_flags(std::uint32_t file) {
    // Every fallocate mode ends with a transaction that logs the inode core.
    Inode& inode = inodes_[file];
    auto tp = trans_alloc("xfs_update_prealloc_flags");
    if (!tp) return;
    inode.ilock.lock();
    tp->inodes.push_back(file);
    trans_commit(*tp);
    inode.ilock.unlock();
}

void Xfs::setattr_size(std::uint32_t file, std::uint64_t size_bytes) {
    Inode& inode = inodes_[file];
    // xfs_setattr_size writes back what lies between di_size and the new
    // size first, or a crash could expose it as zeros (the "null files" case).
    if (size_bytes > inode.di_size && inode.size_bytes != inode.di_size) {
        write_and_wait(file, inode.di_size / block_size_,
                       (size_bytes + block_size_ - 1) / block_size_, "xfs_setattr_size");
    }
    auto tp = trans_alloc("xfs_setattr_size");
    if (!tp) return;
    inode.ilock.lock();
    inode.size_bytes = size_bytes;
    inode.di_size = size_bytes;
    tp->inodes.push_back(file);
    trans_commit(*tp);
    inode.ilock.unlock();
    SIM_NOTE("xfs_setattr_size: i_size and di_size of inode " + name(file) + " " +
             std::to_string(size_bytes) + " (transaction in the CIL)");
}

}  // namespace model::xfs
