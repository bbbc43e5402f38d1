// The data fork and the allocator: xfs_bmapi_convert_delalloc,
// xfs_bmapi_allocate, xfs_bmapi_write (XFS_BMAPI_PREALLOC and
// XFS_BMAPI_CONVERT) and xfs_bunmapi, following fs/xfs/libxfs/xfs_bmap.c of
// v5.7 and the fix "xfs: force writes to delalloc regions to unwritten" (v5.8). The seed's whole
// point lives in bmapi_allocate_delalloc: a delalloc record is converted
// whole, and before the fix a data-fork record converted that way is written
// (XFS_EXT_NORM) even when the caller passed XFS_BMAPI_PREALLOC.
//
// Left out on purpose: allocation groups, the by-size btree and allocator
// policy (first fit: any free block works, provided it
// carries a stale tag, which every never-written block does), indirect-block
// reservations of delalloc records, extent size hint alignment of fallocate,
// the COW fork.
#include <algorithm>

#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model::xfs {

auto lookup(const sim::RangeMap<Extent>& fork, std::uint64_t block) -> Record {
    Record found{0, whole_file_end, {}, true};
    std::uint64_t hole_start = 0;
    bool done = false;
    fork.for_each([&](std::uint64_t start, std::uint64_t end, const Extent& extent) {
        if (done) return;
        if (end <= block) {
            hole_start = end;
            return;
        }
        found = start <= block ? Record{start, end, extent, false}
                               : Record{hole_start, start, {}, true};
        done = true;
    });
    if (!done) found = Record{hole_start, whole_file_end, {}, true};
    SIM_ASSERT(found.start <= block);
    SIM_ASSERT(block < found.end);
    return found;
}

auto Xfs::record_text(const Record& record) const -> std::string {
    if (record.hole) return "a hole " + range_text(record.start, record.end);
    const std::string range = range_text(record.start, record.end);
    switch (record.extent.state) {
        case ExtentState::delalloc:
            return "delalloc record " + range;
        case ExtentState::unwritten:
        case ExtentState::normal: {
            const std::uint64_t first = record.extent.start_block;
            const std::uint64_t last = first + (record.end - record.start) - 1;
            return std::string(record.extent.state == ExtentState::normal ? "NORM" : "UNWRITTEN") +
                   " extent " + range + " at disk block" +
                   (first == last ? " " + std::to_string(first)
                                  : "s " + std::to_string(first) + ".." + std::to_string(last));
        }
    }
    return "?";
}

auto Xfs::fork_text(const sim::RangeMap<Extent>& fork, std::uint64_t end) const -> std::string {
    std::string text;
    std::uint64_t cursor = 0;
    auto add = [&](const std::string& piece) { text += (text.empty() ? "" : ", ") + piece; };
    fork.for_each(0, end, [&](std::uint64_t start, std::uint64_t stop, const Extent& extent) {
        if (start > cursor) add("hole " + range_text(cursor, start));
        add(record_text({start, stop, extent, false}));
        cursor = stop;
    });
    if (cursor < end) add("hole " + range_text(cursor, end));
    return text.empty() ? "empty" : text;
}

void Xfs::fork_changed(Transaction& tp, std::uint32_t file) {
    // xfs_iext_insert/remove/update bump if_seq; the whole extent list of an
    // extents-format fork travels with the inode log item.
    inodes_[file].if_seq++;
    if (std::find(tp.inodes.begin(), tp.inodes.end(), file) == tp.inodes.end()) {
        tp.inodes.push_back(file);
    }
}

auto Xfs::new_eof(std::uint32_t file, std::uint64_t new_size_bytes) const -> std::uint64_t {
    // xfs_new_eof: never past the in-core i_size; 0 when di_size already covers it.
    const Inode& inode = inodes_[file];
    const std::uint64_t size = std::min(new_size_bytes, inode.size_bytes);
    return size > inode.di_size ? size : 0;
}

void Xfs::lock_agf(Transaction& tp) {
    // xfs_alloc_read_agf locks the AGF buffer, and the transaction holds it
    // until it commits: free space changes reach the log in the order made.
    if (tp.holds_agf) return;
    agf_lock_.lock();
    tp.holds_agf = true;
}

auto Xfs::alloc_extent(Transaction& tp, std::uint64_t length, bool wasdel)
    -> std::pair<std::uint64_t, std::uint64_t> {
    SIM_ASSERT(length > 0);
    // Reading the AGF fails with -EIO once the file system is shut down.
    if (shutdown_) return {0, 0};
    // A delalloc record's blocks were taken from m_fdblocks when it was
    // reserved; any other allocation reserves from m_fdblocks (xfs_trans_reserve,
    // -ENOSPC), so it never takes blocks a delalloc record holds.
    // The model caps the allocation at fdblocks where the kernel reserves
    // the transaction's blocks before it allocates.
    if (!wasdel) length = std::min(length, fdblocks());
    if (length == 0) return {0, 0};
    SIM_LIVE(length);
    lock_agf(tp);
    for (int attempt = 0; attempt < 2; attempt++) {
        SIM_LIVE(attempt);
        // Busy extents (freed by a transaction not yet on disk) are skipped.
        touch(points::parts().busy);
        sim::RangeMap<Free> available = free_space_;
        for (const BusyExtent& busy : busy_) available.erase(busy.start, busy.end);
        std::pair<std::uint64_t, std::uint64_t> found{0, 0};
        available.for_each([&](std::uint64_t start, std::uint64_t end, const Free&) {
            if (found.second == 0) found = {start, std::min(length, end - start)};
        });
        if (found.second > 0) {
            free_space_.erase(found.first, found.first + found.second);
            free_blocks_ -= found.second;
            return found;
        }
        if (busy_.empty()) break;
        // xfs_extent_busy_flush: force the log so that busy extents clear.
        log_force("xfs_extent_busy_flush");
    }
    return {0, 0};
}

void Xfs::free_extent(Transaction& tp, std::uint64_t start, std::uint64_t count) {
    SIM_ASSERT(count > 0);
    SIM_ASSERT(start >= data_start_);
    SIM_ASSERT(start + count <= device_.block_count());
    SIM_LIVE(start, count);
    lock_agf(tp);
    free_space_.assign(start, start + count, Free{});
    free_blocks_ += count;
    tp.free_space = true;
    tp.busy.emplace_back(start, start + count);
}

auto Xfs::bmapi_allocate_delalloc(Transaction& tp, std::uint32_t file, const Record& record)
    -> std::optional<Record> {
    SIM_ASSERT(!record.hole);
    SIM_ASSERT(record.extent.state == ExtentState::delalloc);
    SIM_LIVE(file, record);
    // xfs_bmapi_allocate with wasdel: the whole delalloc record, whatever
    // offset the caller asked for (capped at MAXEXTLEN).
    const std::uint64_t length = std::min(record.end - record.start, extent_blocks_max);
    const auto [disk_block, count] = alloc_extent(tp, length, true);
    if (count == 0) return std::nullopt;
    delalloc_blocks_ -= count;  // the reservation becomes the allocation
    // Before the fix a wasdel extent of the data fork stays XFS_EXT_NORM even
    // with XFS_BMAPI_PREALLOC; after it, XFS_BMAPI_PREALLOC means unwritten
    // (and xfs_bmapi_convert_delalloc passes it).
    const ExtentState state = knobs_.delalloc_convert == DelallocConvert::unwritten
                                  ? ExtentState::unwritten
                                  : ExtentState::normal;
    const Extent extent{state, disk_block};
    inodes_[file].data_fork.assign(record.start, record.start + count, extent);
    fork_changed(tp, file);
    tp.free_space = true;
    counters_.delalloc_conversions++;
    return Record{record.start, record.start + count, extent, false};
}

auto Xfs::bmapi_convert_delalloc(std::uint32_t file, std::uint64_t block, std::uint64_t& seq)
    -> std::optional<Mapping> {
    Inode& inode = inodes_[file];
    auto tp = trans_alloc("xfs_bmapi_convert_delalloc");
    if (!tp) return std::nullopt;
    SIM_LIVE(file, block, seq, tp);  // the first three in xfs_map_blocks' frame while trans_alloc waits
    inode.ilock.lock();
    // Look the offset up again under the exclusive ILOCK: another thread may
    // have converted the record since xfs_map_blocks dropped the shared lock.
    const Record record = lookup(inode.data_fork, block);
    if (record.hole || record.extent.state != ExtentState::delalloc) {
        trans_cancel(*tp);
        seq = inode.if_seq;
        inode.ilock.unlock();
        SIM_NOTE("xfs_bmapi_convert_delalloc: the re-lookup under ILOCK_EXCL finds " +
                 record_text(record) + " of inode " + name(file) +
                 ": already converted by another thread, transaction cancelled");
        if (record.hole) return std::nullopt;
        return Mapping{record.start, record.end, record.extent};
    }
    const auto got = bmapi_allocate_delalloc(*tp, file, record);
    SIM_LIVE(got);
    if (!got) {
        trans_cancel(*tp);
        inode.ilock.unlock();
        SIM_NOTE("xfs_bmapi_convert_delalloc: no free space for " + record_text(record) +
                 " of inode " + name(file) + " (ENOSPC)");
        return std::nullopt;
    }
    SIM_NOTE("xfs_bmapi_convert_delalloc converts the whole " + record_text(record) +
             " of inode " + name(file) + ", not just the block at " +
             std::to_string(bytes(block)) + ": " + record_text(*got) +
             (got->extent.state == ExtentState::normal
                  ? " (delalloc_convert: written: a delalloc extent of the data fork is "
                    "allocated written)"
                  : " (delalloc_convert: unwritten: XFS_BMAPI_PREALLOC, written only when its "
                    "I/O completes)"));
    sim::yield(points::convert_after_alloc);
    seq = inode.if_seq;
    const std::uint64_t id = tp->id;
    const bool committed = trans_commit(*tp);
    inode.ilock.unlock();
    if (!committed) {
        SIM_NOTE("xfs_bmapi_convert_delalloc: the file system is shut down, the commit fails "
                 "with EIO and the page is not written");
        return std::nullopt;
    }
    SIM_NOTE("transaction #" + std::to_string(id) +
             " (xfs_bmapi_convert_delalloc) committed to the CIL, in memory only: inode " +
             name(file) + "'s new extent and the free space");
    sim::yield(points::convert_after_commit);
    return Mapping{got->start, got->end, got->extent};
}

auto Xfs::bmapi_write_prealloc(Transaction& tp, std::uint32_t file, std::uint64_t block,
                               std::uint64_t end) -> std::optional<std::uint64_t> {
    Inode& inode = inodes_[file];
    SIM_ASSERT(inode.ilock.write_held());
    const Record record = lookup(inode.data_fork, block);
    SIM_LIVE(file, block, end, record);
    if (record.hole) {
        // xfs_bmapi_allocate without wasdel: XFS_BMAPI_PREALLOC makes it
        // unwritten, before the fix as after it.
        const std::uint64_t length = std::min({record.end, end}) - block;
        const auto [disk_block, count] = alloc_extent(tp, std::min(length, extent_blocks_max), false);
        if (count == 0) return std::nullopt;
        const Record got{block, block + count, {ExtentState::unwritten, disk_block}, false};
        inode.data_fork.assign(got.start, got.end, got.extent);
        fork_changed(tp, file);
        tp.free_space = true;
        SIM_NOTE("xfs_bmapi_write(XFS_BMAPI_PREALLOC) allocates " + record_text(got) +
                 " in a hole of inode " + name(file));
        return got.end;
    }
    if (record.extent.state == ExtentState::delalloc) {
        const auto got = bmapi_allocate_delalloc(tp, file, record);
        if (!got) return std::nullopt;
        SIM_NOTE("xfs_bmapi_write(XFS_BMAPI_PREALLOC) meets " + record_text(record) +
                 " of inode " + name(file) + ": xfs_bmapi_allocate (wasdel) converts the whole "
                 "record, not just " + range_text(block, std::min(record.end, end)) + ": " +
                 record_text(*got) +
                 (got->extent.state == ExtentState::normal
                      ? " (delalloc_convert: written: XFS_BMAPI_PREALLOC is ignored for a "
                        "delalloc extent of the data fork)"
                      : " (delalloc_convert: unwritten)"));
        // The rest of a partly allocated record is allocated on the next call.
        return std::max(block, std::min(got->end, end));
    }
    // Already allocated: nothing to do (xfs_bmapi_convert_unwritten returns
    // early for XFS_BMAPI_PREALLOC without XFS_BMAPI_CONVERT).
    return std::min(record.end, end);
}

auto Xfs::bmapi_convert_unwritten(Transaction& tp, std::uint32_t file, std::uint64_t block,
                                  std::uint64_t end) -> std::uint64_t {
    Inode& inode = inodes_[file];
    SIM_ASSERT(inode.ilock.write_held());
    const Record record = lookup(inode.data_fork, block);
    // The range was mapped when its I/O was submitted, and nothing unmaps a
    // range with pages under writeback (punch and zero wait for them).
    SIM_ASSERT(!record.hole);
    SIM_ASSERT(record.extent.state != ExtentState::delalloc);
    const std::uint64_t piece_end = std::min(record.end, end);
    if (record.extent.state == ExtentState::unwritten) {
        const Extent written{ExtentState::normal,
                             record.extent.shifted(block - record.start).start_block};
        inode.data_fork.assign(block, piece_end, written);
        fork_changed(tp, file);
    }
    return piece_end;
}

auto Xfs::bunmapi(Transaction& tp, std::uint32_t file, std::uint64_t start, std::uint64_t end)
    -> bool {
    Inode& inode = inodes_[file];
    SIM_ASSERT(inode.ilock.write_held());
    std::vector<Record> mapped;
    inode.data_fork.for_each(start, end, [&](std::uint64_t s, std::uint64_t e, const Extent& x) {
        mapped.push_back({s, e, x, false});
    });
    // xfs_bunmapi walks backwards from the end, at most two extents here.
    const std::size_t count = std::min<std::size_t>(mapped.size(), unmap_extents_per_transaction);
    std::string freed;
    std::size_t i = mapped.size() - count;
    SIM_LIVE(file, mapped, count, i);
    for (; i < mapped.size(); i++) {
        const Record& piece = mapped[i];
        inode.data_fork.erase(piece.start, piece.end);
        if (piece.extent.state != ExtentState::delalloc) {
            free_extent(tp, piece.extent.start_block, piece.end - piece.start);
        } else {
            delalloc_blocks_ -= piece.end - piece.start;  // xfs_bmap_del_extent_delay
        }
        freed += (freed.empty() ? "" : ", ") + record_text(piece);
    }
    if (count > 0) {
        fork_changed(tp, file);
        SIM_NOTE("xfs_unmap_extent: xfs_bunmapi unmaps " + freed + " of inode " + name(file) +
                 "; the blocks go back to free space (busy until the transaction is on disk)");
    }
    return count == mapped.size();
}

}  // namespace model::xfs
