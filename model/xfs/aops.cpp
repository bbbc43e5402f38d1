// Buffered writes, writeback and I/O completion: xfs_buffered_write_iomap_begin
// (fs/xfs/xfs_iomap.c), xfs_map_blocks, xfs_prepare_ioend, xfs_end_bio and
// xfs_end_ioend (fs/xfs/xfs_aops.c, with iomap_writepages of
// fs/iomap/buffered-io.c) and xfs_setfilesize (xfs_aops.c), v5.7;
// xfs_iomap_write_direct, xfs_iomap_write_unwritten and O_DIRECT writes are
// iomap.cpp's. Seed: "xfs: force writes to delalloc regions to unwritten";
// the writeback steps of xfs_map_blocks and xfs_bmapi_convert_delalloc happen
// here: writeback converts a whole delalloc record but writes only the pages
// of the range it was asked to flush, and I/O completion converts exactly the
// written range to XFS_EXT_NORM and raises di_size, in a transaction of its
// own, after the data write completed.
//
// Left out on purpose: speculative preallocation beyond EOF (a delalloc record
// is as large as the writes that made it, which already exceeds a targeted
// flush), ioend merging on the completion list, the COW fork, bio size limits
// (one ioend is one bio however long). A write waits for pages of
// its range under writeback (stable pages), so a page is never dirty and under
// writeback at once.
#include <algorithm>

#include "model/writeback.hpp"
#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::xfs {

auto Xfs::buffered_write(std::uint32_t file, std::uint64_t offset, std::uint64_t length,
                         std::uint64_t version) -> std::uint64_t {
    Inode& inode = inodes_[file];
    const std::uint64_t start = offset / block_size_;
    const std::uint64_t end = (offset + length) / block_size_;
    if (shutdown_) {
        SIM_NOTE("write " + range_text(start, end) + " of inode " + name(file) +
                 " fails with EIO: the file system is shut down");
        return 0;
    }
    for (bool enospc = false;; enospc = true) {
        SIM_LIVE(file, offset, length, version, enospc);
        // xfs_file_buffered_aio_write holds IOLOCK_EXCL for the whole write.
        inode.iolock.lock();
        if (!enospc) sim::cpu(model::cpu_cost::page_copy * (end - start));
        wait_writeback(file, start, end);
        std::string mapped;
        const std::uint64_t mapped_end = buffered_write_map(file, start, end, mapped);
        if (mapped_end > start) {
            // iomap_file_buffered_write returns what it copied before a
            // mapping failed (a short write), or -ENOSPC if nothing.
            const std::uint64_t copied = mapped_end == end ? length : bytes(mapped_end) - offset;
            SIM_LIVE(copied);
            page_cache_.dirty(file, start, mapped_end, disk::Content::data(file, start, version));
            if (offset + copied > inode.size_bytes) inode.size_bytes = offset + copied;
            SIM_NOTE("write " + range_text(start, mapped_end) + " of inode " + name(file) + ": " + mapped +
                     "; " + std::to_string(mapped_end - start) + " page(s) dirtied; i_size " +
                     std::to_string(inode.size_bytes) + ", di_size " + std::to_string(inode.di_size) +
                     (copied < length ? "; short write: " + std::to_string(copied) + " of " +
                                            std::to_string(length) + " bytes (-ENOSPC for the rest)"
                                      : std::string()));
            inode.iolock.unlock();
            sim::yield(copied < length ? points::write_enospc : points::write_after_dirty);
            return copied;
        }
        if (enospc || shutdown_) {
            inode.iolock.unlock();
            SIM_NOTE("write " + range_text(start, end) + " of inode " + name(file) +
                     (shutdown_ ? " fails: the file system is shut down"
                                : ": returns -ENOSPC and changes nothing"));
            if (!shutdown_) sim::yield(points::write_enospc);
            return 0;
        }
        // xfs_file_buffered_aio_write (v5.7): on the first -ENOSPC,
        // xfs_flush_inodes (sync_inodes_sb, under IOLOCK), drop IOLOCK, free
        // the speculative preallocations past EOF and the COW blocks (none in
        // the model), and try the write once more.
        SIM_NOTE("write " + range_text(start, end) + " of inode " + name(file) + ": " + mapped +
                 "; -ENOSPC: xfs_flush_inodes writes back every inode, then the write is tried again");
        flush_inodes();
        inode.iolock.unlock();
    }
}

auto Xfs::buffered_write_map(std::uint32_t file, std::uint64_t start, std::uint64_t end, std::string& mapped)
    -> std::uint64_t {
    SIM_LIVE(file, start, end);
    Inode& inode = inodes_[file];
    if (inode.extsize_blocks > 0) {
        // "we can't use delayed allocations when using extent size hints"
        if (!write_iomap_direct(file, start, end)) {
            mapped = "no space for the unwritten extents (extent size hint)";
            return start;
        }
        mapped = "unwritten extents allocated at write time (extent size hint " +
                 std::to_string(bytes(inode.extsize_blocks)) + ")";
        return end;
    }
    // xfs_bmapi_reserve_delalloc over the holes of the range: an in-core
    // record with no disk block; adjacent reservations merge.
    inode.ilock.lock();
    bool holes = false;
    const std::uint64_t reserved_end = reserve_delalloc(file, start, end, holes);
    const Record record = lookup(inode.data_fork, start);
    inode.ilock.unlock();
    if (reserved_end == start) {
        mapped = "xfs_bmapi_reserve_delalloc: xfs_mod_fdblocks finds " + std::to_string(fdblocks()) +
                 " free block(s) (-ENOSPC)";
    } else {
        mapped = holes ? "xfs_bmapi_reserve_delalloc: " + record_text(record)
                       : "over existing " + record_text(record);
    }
    return reserved_end;
}

auto Xfs::reserve_delalloc(std::uint32_t file, std::uint64_t start, std::uint64_t end, bool& reserved_any)
    -> std::uint64_t {
    Inode& inode = inodes_[file];
    std::vector<std::pair<std::uint64_t, std::uint64_t>> holes;
    inode.data_fork.for_each_hole(start, end,
                                  [&](std::uint64_t s, std::uint64_t e) { holes.emplace_back(s, e); });
    reserved_any = false;
    std::uint64_t reserved_end = end;
    for (auto [s, e] : holes) {
        // xfs_mod_fdblocks(mp, -alen): -ENOSPC when fewer blocks are free;
        // iomap_apply stops at that mapping, after copying the ones before.
        if (e - s > fdblocks()) {
            reserved_end = s;
            break;
        }
        inode.data_fork.assign(s, e, Extent{ExtentState::delalloc, 0});
        delalloc_blocks_ += e - s;
        reserved_any = true;
    }
    if (reserved_any) inode.if_seq++;
    return reserved_end;
}

void Xfs::flush_inodes() {
    for (std::uint32_t file = 0; file < inodes_.size(); file++) {
        SIM_LIVE(file);
        if (inodes_[file].exists) write_and_wait(file, 0, whole_file_end, "ENOSPC: xfs_flush_inodes");
    }
}

void Xfs::wait_writeback(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    SIM_LIVE(file, start, end);
    while (!page_cache_.runs(file, start, end, PageState::writeback).empty()) {
        writeback_wait_.wait();
    }
}

void Xfs::write_and_wait(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                         const char* who) {
    // filemap_write_and_wait_range
    SIM_LIVE(file, start, end);
    writepages(file, start, end, who);
    wait_writeback(file, start, end);
}

auto Xfs::map_blocks(WritepageCtx& wpc, std::uint32_t file, std::uint64_t block)
    -> std::optional<Mapping> {
    // xfs_map_blocks (B1): fails with -EIO once the file system is shut down.
    if (shutdown_) return std::nullopt;
    SIM_LIVE(file, block);
    Inode& inode = inodes_[file];
    // xfs_imap_valid: the cached mapping covers the block and the fork has
    // not changed since it was read.
    if (wpc.imap && wpc.data_seq == inode.if_seq && wpc.imap->start <= block &&
        block < wpc.imap->end) {
        return wpc.imap;
    }
    inode.ilock.lock_shared();
    const Record record = lookup(inode.data_fork, block);
    const std::uint64_t seq = inode.if_seq;
    SIM_LIVE(record, seq);
    inode.ilock.unlock_shared();
    SIM_NOTE("xfs_map_blocks: the block at " + std::to_string(bytes(block)) + " of inode " +
             name(file) + " lies in " + record_text(record));
    sim::yield(points::wb_map_lookup);
    if (record.hole) return std::nullopt;  // only after a failed allocation
    if (record.extent.state != ExtentState::delalloc) {
        wpc.imap = Mapping{record.start, record.end, record.extent};
        wpc.data_seq = seq;
        return wpc.imap;
    }
    // B2, in a loop: a fragmented allocation may take several records.
    for (;;) {
        std::uint64_t converted_seq = 0;
        SIM_LIVE(converted_seq);
        const auto mapping = bmapi_convert_delalloc(file, block, converted_seq);
        if (!mapping) return std::nullopt;
        if (mapping->start <= block && block < mapping->end) {
            wpc.imap = mapping;
            wpc.data_seq = converted_seq;
            return mapping;
        }
    }
}

void Xfs::writepages(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                     const char* who) {
    if (shutdown_) return;
    WritepageCtx wpc;
    std::optional<Ioend> ioend;
    bool started = false;
    std::uint64_t cursor = start;
    SIM_LIVE(file, end, wpc, ioend, started, cursor);
    while (cursor < end && !shutdown_) {
        const auto dirty = page_cache_.runs(file, cursor, end, PageState::dirty);
        if (dirty.empty()) break;
        const std::uint64_t page = dirty.front().first;
        SIM_LIVE(page);
        if (!started) {
            SIM_NOTE(std::string(who) + ": writeback of inode " + name(file) + " " +
                     range_text(start, std::min(end, dirty.back().second)));
            started = true;
        }
        // write_cache_pages locks the page and clears its dirty bit for I/O.
        page_cache_.set_state(file, page, page + 1, PageState::writeback);
        const auto mapping = map_blocks(wpc, file, page);
        if (!mapping) {
            // iomap_writepage_map: the error is recorded on the mapping
            // (mapping_set_error) for the next fsync or flush to return; a
            // shut down file system fails everything anyway. The kernel
            // discards the page (xfs_discard_page); the model keeps it dirty,
            // which only lets later writeback succeed (never a false alarm).
            if (!shutdown_) inodes_[file].writeback_error = true;
            // Redirty the page and wake whoever waits for it to leave writeback.
            page_cache_.set_state(file, page, page + 1, PageState::dirty);
            writeback_wait_.wake_all();
            cursor = page + 1;
            continue;
        }
        // The pages after it that are still dirty and share the mapping.
        std::uint64_t chunk_end = page + 1;
        const auto more = page_cache_.runs(file, chunk_end, std::min(end, mapping->end),
                                           PageState::dirty);
        if (!more.empty() && more.front().first == chunk_end) chunk_end = more.front().second;
        page_cache_.set_state(file, page, chunk_end, PageState::writeback);
        cursor = chunk_end;
        add_to_ioend(ioend, file, page, chunk_end, *mapping);
    }
    if (ioend) submit_ioend(std::move(*ioend));
}

void Xfs::add_to_ioend(std::optional<Ioend>& ioend, std::uint32_t file, std::uint64_t page,
                       std::uint64_t chunk_end, const Mapping& mapping) {
    // iomap_add_to_ioend: pages that go on where the ioend ends, on disk too,
    // with its type join it; others submit it and start a new one.
    const bool unwritten = mapping.extent.state == ExtentState::unwritten;
    const bool joins = ioend && ioend->file == file &&
                       ioend->start + ioend->length == page && ioend->unwritten == unwritten &&
                       ioend->disk_block + ioend->length == mapping.disk_block(page);
    if (joins) {
        ioend->length += chunk_end - page;
        return;
    }
    SIM_LIVE(file, page, chunk_end, mapping, unwritten);
    if (ioend) submit_ioend(std::move(*ioend));
    ioend = Ioend{0, file, page, chunk_end - page, mapping.disk_block(page), unwritten,
                  std::nullopt, 0, {}, mapping.start, mapping.end};
}

void Xfs::submit_ioend(Ioend ioend) {
    const Inode& inode = inodes_[ioend.file];
    const std::uint64_t end = ioend.start + ioend.length;
    if (shutdown_) {
        // The ioend fails with -EIO before any bio is sent: a shut down file
        // system writes no data.
        page_cache_.set_state(ioend.file, ioend.start, end, PageState::dirty);
        writeback_wait_.wake_all();
        SIM_NOTE("ioend " + range_text(ioend.start, end) + " of inode " + name(ioend.file) +
                 " fails with EIO: the file system is shut down, nothing is written");
        return;
    }
    SIM_LIVE(ioend);
    sim::cpu(cpu_cost::submit_ioend);
    // xfs_prepare_ioend (B3): an append that is not unwritten allocates its
    // size-update transaction now; unwritten completion updates di_size itself.
    if (!ioend.unwritten && bytes(end) > inode.di_size) {
        ioend.size_transaction = trans_alloc("xfs_setfilesize");
    }
    ioend.id = ioends_.size();
    ioend.op = op_name();
    const Ioend submitted = ioend;
    ioends_.push_back(std::move(ioend));
    // B4: W(data) of the flushed pages; the device takes one write per run of
    // contents (the kernel sends the ioend as one bio).
    ioends_[submitted.id].bios_pending = submit_failable_writeback_pages(
        page_cache_, device_, submitted.file, submitted.start, end, submitted.disk_block,
        [this, id = submitted.id](bool ok) { end_bio(id, ok); });
    counters_.data_ios++;
    counters_.data_blocks_written += submitted.length;
    op_counters().data_ios++;
    const auto left = page_cache_.runs(submitted.file, submitted.mapping_start,
                                       submitted.mapping_end, PageState::dirty);
    std::uint64_t left_pages = 0;
    for (auto [s, e] : left) left_pages += e - s;
    SIM_NOTE("submit W(data) of " + std::to_string(submitted.length) + " page(s) " +
             range_text(submitted.start, end) + " of inode " + name(submitted.file) +
             " to disk block " + std::to_string(submitted.disk_block) + ": ioend #" +
             std::to_string(submitted.id) + (submitted.unwritten ? " UNWRITTEN" : " NORM") +
             (submitted.size_transaction
                  ? ", past di_size " + std::to_string(inode.di_size) +
                        ": size update transaction allocated (xfs_setfilesize_trans_alloc)"
                  : std::string()) +
             (left_pages > 0 ? "; " + std::to_string(left_pages) +
                                   " dirty page(s) of the mapping " +
                                   range_text(submitted.mapping_start, submitted.mapping_end) +
                                   " are not written"
                             : std::string()));
    sim::yield(points::wb_submit);
}

void Xfs::end_bio(std::uint64_t ioend_id, bool ok) {
    Ioend& ioend = ioends_[ioend_id];
    SIM_ASSERT(ioend.bios_pending > 0);
    // The ioend's bios are chained to its io_bio: one failing fails it.
    if (!ok) ioend.failed = true;
    if (--ioend.bios_pending > 0) return;
    // B5, xfs_end_bio: unwritten conversion and size updates need a
    // transaction, so they go to the workqueue; anything else ends here.
    if (ioend.unwritten || ioend.size_transaction) {
        counters_.ioends_queued++;
        SIM_NOTE("bio of ioend #" + std::to_string(ioend_id) + " completes: queued to the " +
                 "ioend workqueue (xfs_end_io)");
        const sim::TaskId task =
            sim::current_scheduler().spawn("ioend", [this, ioend_id] { end_ioend(ioend_id); },
                                           sim::hash_of(ioend_id));
        task_op_[task] = ioend.op;
        return;
    }
    finish_ioend_pages(ioend);
    SIM_NOTE("bio of ioend #" + std::to_string(ioend_id) + " completes" + (ioend.failed ? " with EIO" : "") +
             ": page(s) " + range_text(ioend.start, ioend.start + ioend.length) + " of inode " +
             name(ioend.file) + " clean");
}

void Xfs::finish_ioend_pages(const Ioend& ioend) {
    // xfs_finish_page_writeback (v5.7): on an error, SetPageError and
    // mapping_set_error(mapping, -EIO); the page ends writeback clean all
    // the same (its data is in no durable place and nothing rewrites it).
    if (ioend.failed) {
        inodes_[ioend.file].errors.set_eio();
        SIM_NOTE("ioend #" + std::to_string(ioend.id) + " of inode " + name(ioend.file) +
                 " failed: mapping_set_error(-EIO), wb_err " +
                 std::to_string(inodes_[ioend.file].errors.wb_err.value()));
    }
    // end_page_writeback
    page_cache_.set_state(ioend.file, ioend.start, ioend.start + ioend.length, PageState::clean);
    writeback_wait_.wake_all();
}

void Xfs::end_ioend(std::uint64_t ioend_id) {
    SIM_LIVE(ioend_id);
    sim::yield(points::ioend_queued);
    sim::cpu(cpu_cost::workqueue_hop);
    // B6, xfs_end_ioend. ioends_ may grow while this task yields: index it anew.
    const std::uint32_t file = ioends_[ioend_id].file;
    const std::uint64_t start = ioends_[ioend_id].start;
    const std::uint64_t end = start + ioends_[ioend_id].length;
    if (shutdown_) {
        if (ioends_[ioend_id].size_transaction) trans_cancel(*ioends_[ioend_id].size_transaction);
        SIM_NOTE("ioend #" + std::to_string(ioend_id) + " of inode " + name(file) +
                 ": the file system is shut down: -EIO, no conversion, no size update");
    } else if (ioends_[ioend_id].failed) {
        // "error = blk_status_to_errno(ioend->io_bio->bi_status); if
        // (unlikely(error)) goto done;": no unwritten conversion;
        // xfs_setfilesize_ioend cancels the size transaction.
        if (ioends_[ioend_id].size_transaction) trans_cancel(*ioends_[ioend_id].size_transaction);
        SIM_NOTE("ioend #" + std::to_string(ioend_id) + " of inode " + name(file) +
                 " failed with EIO: no unwritten conversion, no size update");
    } else if (ioends_[ioend_id].unwritten) {
        iomap_write_unwritten(file, start, end);
    } else if (ioends_[ioend_id].size_transaction) {
        setfilesize(ioend_id);
    }
    finish_ioend_pages(ioends_[ioend_id]);
    task_op_.erase(sim::current_scheduler().current());
}

void Xfs::setfilesize(std::uint64_t ioend_id) {
    // Copy what is needed first: ioends_ may grow while this task waits for ILOCK.
    SIM_ASSERT(ioends_[ioend_id].size_transaction.has_value());
    Transaction tp = *ioends_[ioend_id].size_transaction;
    ioends_[ioend_id].size_transaction.reset();
    const std::uint32_t file = ioends_[ioend_id].file;
    const std::uint64_t io_end = ioends_[ioend_id].start + ioends_[ioend_id].length;
    const auto update = update_di_size(std::move(tp), file, io_end);
    if (!update) return;
    SIM_NOTE("xfs_setfilesize for ioend #" + std::to_string(ioend_id) + ": di_size of inode " +
             name(file) + " " + std::to_string(update->old_size) + " -> " + std::to_string(update->new_size) +
             " (transaction #" + std::to_string(update->transaction) + " in the CIL)");
    sim::yield(points::ioend_after_size_commit);
}

auto Xfs::update_di_size(Transaction tp, std::uint32_t file, std::uint64_t io_end)
    -> std::optional<SizeUpdate> {
    SIM_LIVE(tp, file, io_end);
    Inode& inode = inodes_[file];
    inode.ilock.lock();
    const std::uint64_t size = new_eof(file, bytes(io_end));
    if (size == 0) {
        trans_cancel(tp);
        inode.ilock.unlock();
        return std::nullopt;
    }
    const SizeUpdate update{inode.di_size, size, tp.id};
    inode.di_size = size;
    tp.inodes.push_back(file);
    trans_commit(tp);
    inode.ilock.unlock();
    counters_.size_updates++;
    return update;
}

}  // namespace model::xfs
