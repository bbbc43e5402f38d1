// What fs/xfs/xfs_iomap.c and the iomap direct I/O path (fs/iomap/direct-io.c)
// do for the model: xfs_iomap_write_direct (unwritten extents allocated over
// holes, for O_DIRECT writes and for buffered writes under an extent size
// hint), the O_DIRECT write (xfs_file_dio_aio_write -> iomap_dio_rw ->
// xfs_dio_write_end_io), and xfs_iomap_write_unwritten, which converts
// exactly the written range to XFS_EXT_NORM once its I/O completed. Seed:
// "xfs: force writes to delalloc regions to unwritten" (the conversion at
// I/O completion, xfs_end_ioend).
#include <algorithm>

#include "model/direct_io.hpp"
#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model::xfs {

auto Xfs::write_iomap_direct(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> bool {
    // xfs_direct_write_iomap_begin -> xfs_iomap_write_direct for each hole:
    // an unwritten allocation aligned to the extent size hint, in a
    // transaction, before the pages are dirtied.
    Inode& inode = inodes_[file];
    const std::uint64_t hint = std::max<std::uint64_t>(1, inode.extsize_blocks);
    std::uint64_t cursor = start;
    SIM_LIVE(file, end, hint, cursor);
    while (cursor < end) {
        inode.ilock.lock_shared();
        const Record record = lookup(inode.data_fork, cursor);
        inode.ilock.unlock_shared();
        if (!record.hole) {
            cursor = std::min(record.end, end);
            continue;
        }
        const std::uint64_t want_end = std::min(record.end, end);
        const std::uint64_t aligned_start = std::max(record.start, cursor / hint * hint);
        const std::uint64_t aligned_end =
            std::min(record.end, (want_end + hint - 1) / hint * hint);
        SIM_LIVE(aligned_start, aligned_end);
        auto tp = trans_alloc("xfs_iomap_write_direct");
        if (!tp) return false;
        SIM_LIVE(tp);
        inode.ilock.lock();
        const auto next = bmapi_write_prealloc(*tp, file, aligned_start, aligned_end);
        if (next) {
            trans_commit(*tp);
        } else {
            trans_cancel(*tp);
        }
        inode.ilock.unlock();
        if (!next) return false;
        cursor = std::max(cursor, std::min(*next, end));
    }
    return true;
}

auto Xfs::direct_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                       std::uint64_t version) -> bool {
    // xfs_file_dio_aio_write -> iomap_dio_rw: write back and drop the cached
    // pages of the range, map it (xfs_direct_write_iomap_begin: a hole gets
    // an unwritten extent from xfs_iomap_write_direct, in a transaction),
    // send the bios from the caller's buffer and wait; then
    // xfs_dio_write_end_io converts what was unwritten (which also moves
    // di_size) or logs the new size. The model takes IOLOCK exclusive (the
    // kernel takes it shared for aligned writes inside EOF).
    Inode& inode = inodes_[file];
    const std::uint64_t start = offset / block_size_;
    const std::uint64_t end = (offset + length) / block_size_;
    bool unwritten = false;
    SIM_LIVE(file, offset, length, version, unwritten);
    inode.iolock.lock();
    direct_write_begin(page_cache_, file, start, end,
                       [&] { write_and_wait(file, start, end, "direct I/O: filemap_write_and_wait_range"); });
    if (!write_iomap_direct(file, start, end)) {
        inode.iolock.unlock();
        SIM_NOTE("O_DIRECT write " + range_text(start, end) + " of inode " + name(file) +
                 " fails: no space or shut down");
        return false;
    }
    // A bio per mapping, sent once the whole range is mapped.
    const std::vector<Mapping> mappings = direct_write_mappings(file, start, end, unwritten);
    DirectBios bios(device_, disk::Content::data(file, start, version), start);
    SIM_LIVE(bios);
    for (const Mapping& mapping : mappings)
        bios.submit(mapping.start, mapping.end, mapping.extent.start_block);
    counters_.data_ios++;
    counters_.data_blocks_written += end - start;
    op_counters().data_ios++;
    SIM_NOTE("O_DIRECT write " + range_text(start, end) + " of inode " + name(file) + ": W(data) to " +
             std::to_string(bios.bios()) + " extent(s)" + (unwritten ? ", some UNWRITTEN" : "") +
             " from the caller's buffer");
    bios.wait();
    dio_write_end_io(file, offset, length, unwritten);
    inode.iolock.unlock();
    sim::yield(points::direct_write_done);
    return true;
}

auto Xfs::direct_write_mappings(std::uint32_t file, std::uint64_t start, std::uint64_t end, bool& unwritten)
    -> std::vector<Mapping> {
    // The range as xfs_direct_write_iomap_begin maps it once allocated: no
    // hole, no delalloc; `unwritten` tells whether some of it is unwritten.
    SIM_LIVE(file, start, end);
    Inode& inode = inodes_[file];
    std::vector<Mapping> mappings;
    inode.ilock.lock_shared();
    for (std::uint64_t cursor = start; cursor < end;) {
        const Record record = lookup(inode.data_fork, cursor);
        SIM_ASSERT(!record.hole && record.extent.state != ExtentState::delalloc);
        mappings.push_back({cursor, std::min(record.end, end), record.extent.shifted(cursor - record.start)});
        unwritten = unwritten || record.extent.state == ExtentState::unwritten;
        cursor = mappings.back().end;
    }
    inode.ilock.unlock_shared();
    return mappings;
}

void Xfs::dio_write_end_io(std::uint32_t file, std::uint64_t offset, std::uint64_t length, bool unwritten) {
    // xfs_dio_write_end_io (v5.7): unwritten conversion updates i_size and
    // di_size itself (update_isize); otherwise "if (offset + size >
    // i_size_read(inode)) { i_size_write(); xfs_setfilesize(); }": a write
    // inside i_size logs no size, even past di_size.
    Inode& inode = inodes_[file];
    const std::uint64_t start = offset / block_size_;
    const std::uint64_t end = (offset + length) / block_size_;
    const bool extends = offset + length > inode.size_bytes;
    SIM_LIVE(file, end);
    if (extends) inode.size_bytes = offset + length;
    if (unwritten) {
        iomap_write_unwritten(file, start, end);
    } else if (extends) {
        if (auto tp = trans_alloc("xfs_setfilesize")) update_di_size(*tp, file, end);
    }
}

void Xfs::iomap_write_unwritten(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    Inode& inode = inodes_[file];
    std::uint64_t cursor = start;
    SIM_LIVE(file, end, cursor);
    while (cursor < end) {
        auto tp = trans_alloc("xfs_iomap_write_unwritten");
        if (!tp) return;
        SIM_LIVE(tp);
        inode.ilock.lock();
        // xfs_bmapi_write(XFS_BMAPI_CONVERT): exactly the written range,
        // splitting the unwritten record around it.
        const std::uint64_t next = bmapi_convert_unwritten(*tp, file, cursor, end);
        SIM_LIVE(next);
        const std::uint64_t old_size = inode.di_size;
        // "i_size = XFS_FSB_TO_B(mp, offset_fsb + count_fsb)", capped at
        // offset + count: the end of the whole range still to convert, not of
        // the piece this transaction converts (v5.7 as today), then xfs_new_eof.
        const std::uint64_t size = new_eof(file, bytes(end));
        if (size != 0) {
            inode.di_size = size;
            if (std::find(tp->inodes.begin(), tp->inodes.end(), file) == tp->inodes.end()) {
                tp->inodes.push_back(file);
            }
        }
        const std::uint64_t id = tp->id;
        trans_commit(*tp);
        inode.ilock.unlock();
        counters_.unwritten_conversions++;
        SIM_NOTE("xfs_iomap_write_unwritten converts exactly " + range_text(cursor, next) +
                 " of inode " + name(file) + " to NORM" +
                 (size != 0 ? "; di_size " + std::to_string(old_size) + " -> " +
                                  std::to_string(size)
                            : std::string()) +
                 " (transaction #" + std::to_string(id) + " in the CIL)");
        sim::yield(points::ioend_after_convert_commit);
        cursor = next;
    }
}

}  // namespace model::xfs
