// Mount after a crash: read the metadata in place, find the log records after it and replay them in
// order (fs/xfs/xfs_log_recover.c: xlog_find_tail, xlog_recover, replaying inode items with di_size
// and their extent records, and the free-space buffers), then read files as a mounted file system
// would: NORM extents read what reached the disk, unwritten extents and holes read zeros, nothing
// past di_size. Seed: "xfs: force writes to delalloc regions to unwritten": before the fix,
// recovery maps blocks whose data was never written into the file.
//
// Every story line (RecoveredState::notes) derives from what this code read
// from the image: the metadata in place, the log records and the data blocks,
// never from the in-core state (the CIL, in-core inodes) that a crash loses.
//
// Recovery writes (recover_with_writes): xlog_do_recovery_pass
// replays items into buffers and writes them home through
// xfs_buf_delwri_submit, which waits for them; the on-disk tail moves only
// with the first log write after recovery (xlog_recover_finish forces the
// log; the iclog write's PREFLUSH makes the home writes durable first). In
// this model the metadata in place is one block that also names the last
// record it reflects (MetaState::applied_lsn is the tail), so the recovered
// items and the tail reach the disk in one write, W(meta) at block 0, then
// the FLUSH. Cut before that write is durable, the next mount finds the old
// metadata in place and replays the same records again over it.
//
// Torn writes (the device's fault model): a log record whose block
// a power cut tore fails its CRC (xlog_recover_process checks xlog_cksum over
// the record); xlog_verify_head treats a CRC failure within XLOG_MAX_ICLOGS
// records of the head as a torn write and walks the head back to the last
// good record; further back it is corruption and the mount fails. The
// metadata in place at block 0 carries a CRC too (xfs_sb_read_verify,
// xfs_buf_verify_cksum): torn, the mount refuses it.
//
// Unlinked inodes (xlog_recover_process_iunlinks, after the replay of a log
// that needed recovery): an inode whose xfs_remove is durable but whose
// xfs_inactive_ifree is not is truncated and freed at mount; its name is gone
// in any case.
//
// Left out on purpose: the log tail in record headers (the metadata in place
// names the last record it reflects), quotacheck.
#include <algorithm>

#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model::xfs {
namespace {

/// Which inode and file block owns a disk block, for fs_consistency.
struct Owner {
    std::uint32_t file;
    std::uint64_t block;
    [[nodiscard]] auto shifted(std::uint64_t blocks) const -> Owner {
        return {file, block + blocks};
    }
    auto operator==(const Owner&) const -> bool = default;
};

}  // namespace

auto Xfs::recover(const disk::Image& image) const -> RecoveredState {
    return mount(image, nullptr);
}

auto Xfs::recover_with_writes(const disk::Image& image) -> Recovery {
    std::optional<MetaState> recovered;
    Recovery recovery{mount(image, &recovered), {}};
    // Nothing replayed (a clean log): xlog_recover writes nothing.
    if (!recovered || !recovery.state.mounted) return recovery;
    meta_objects_.mark_recovery();
    const std::uint64_t lsn = recovered->applied_lsn;
    const std::uint64_t object = store(std::move(*recovered));
    using Kind = disk::MountRequest::Kind;
    recovery.requests.push_back({Kind::write, 0, 1, disk::Content::meta(object), false, "meta",
                                 "W(meta) the recovered metadata home at block 0, reflecting lsn " +
                                     std::to_string(lsn) + " (xfs_buf_delwri_submit)"});
    recovery.requests.push_back({Kind::flush, 0, 0, {}, false, "flush",
                                 "FLUSH (the PREFLUSH of the first log write after recovery, "
                                 "xlog_recover_finish: the tail moves past lsn " +
                                     std::to_string(lsn) + ")"});
    return recovery;
}

auto Xfs::mount(const disk::Image& image, std::optional<MetaState>* recovered) const -> RecoveredState {
    RecoveredState state;
    state.files.resize(file_names_.size());
    state.device_blocks = device_.block_count();
    state.metadata_end = data_start_;  // superblock, log, inodes
    const MetaState* home = meta_objects_.read_superblock<MetaState>(image, file_names_, block_size_, state,
                                                                     "xfs_sb_read_verify");
    if (home == nullptr) return state;
    MetaState meta = *home;
    bool recovery_needed = false;
    const bool replayed = replay_log(image, meta, state, recovery_needed);
    if (!state.mount_error.empty()) return state;  // a CRC failure past the head's torn-write window
    // xfs_log_mount_finish -> xlog_recover_finish: "if (log->l_flags &
    // XLOG_RECOVERY_NEEDED)" (set by xlog_recover when the head is not the
    // tail) it processes the unlinked lists; a clean log's are left alone.
    if (recovery_needed) process_iunlinks(meta, state);
    for (std::uint32_t file = 0; file < file_names_.size(); file++) {
        const InodeImage& inode = meta.inodes[file];
        if (!inode.exists) continue;
        if (inode.nlink == 0) {
            // xfs_remove's transaction is durable: the name is gone, a lookup
            // finds no file (the inode stays allocated, on the unlinked list).
            state.notes.push_back("inode " + name(file) + ": di_nlink 0 (on the AGI unlinked list), no name: "
                                  "the file is gone");
            continue;
        }
        read_file(image, inode, state.files[file]);
        describe_file(inode, file, image, state);
    }
    check_consistency(meta, state);
    state.mounted = true;
    if (recovered != nullptr && replayed) *recovered = std::move(meta);
    return state;
}

/// What the frozen_image checker and the story see of one record.
auto Xfs::found_record(const LogRecord& record) -> LogRecordFound {
    LogRecordFound found{record.lsn, record.unmount, static_cast<std::uint32_t>(record.transactions.size()),
                         !record.transactions.empty(), ""};
    for (const auto& transaction : record.transactions) {
        const bool superblock_only =
            transaction.superblock && transaction.inodes.empty() && !transaction.free_space.has_value();
        found.superblock_only = found.superblock_only && superblock_only;
        found.kinds += (found.kinds.empty() ? "" : ", ") + std::string(transaction.kind);
    }
    return found;
}

auto Xfs::replay_log(const disk::Image& image, MetaState& meta, RecoveredState& state,
                     bool& recovery_needed) const -> bool {
    // xlog_find_tail: every log record still in the log, by lsn; a torn one
    // is there, but its CRC fails.
    std::map<std::uint64_t, const LogRecord*> records;
    std::map<std::uint64_t, std::uint64_t> torn;  // lsn -> block
    image.blocks().for_each(
        log_start_, log_start_ + log_blocks_,
        [&](std::uint64_t start, std::uint64_t, const disk::DurableBlock& block) {
            disk::Content whole = block.content;
            whole.sectors = 0;
            const auto* record = meta_objects_.find<LogRecord>(whole);
            if (record == nullptr) return;
            records[record->lsn] = record;
            if (block.content.torn()) torn[record->lsn] = start;
        });
    // xlog_recover: the records after the tail, in order, up to the first gap.
    const std::uint64_t tail = meta.applied_lsn;
    std::uint64_t head = tail;
    while (records.contains(head + 1)) head++;
    if (!trim_torn_head(torn, tail, head, state)) return false;
    // xlog_find_tail: an unmount record at the head moves the tail past it
    // (xlog_check_unmount_rec), so the log is clean; xlog_recover sets
    // XLOG_RECOVERY_NEEDED only "if (tail_blk != head_blk)".
    recovery_needed = head > tail && !records.at(head)->unmount;
    state.notes.push_back(
        "mount: metadata in place reflects lsn " + std::to_string(tail) + "; " +
        (head == tail ? std::string("no log record after it, nothing to replay")
                      : "log recovery replays lsn " + std::to_string(tail + 1) + ".." +
                            std::to_string(head)));
    bool changed = false;
    state.log_records.emplace();
    for (std::uint64_t lsn = tail + 1; lsn <= head; lsn++) {
        const LogRecord& record = *records.at(lsn);
        state.log_records->push_back(found_record(record));
        if (record.unmount) {
            // xlog_check_unmount_rec: an unmount record carries no change; a
            // log whose head it is needs no recovery (xfs_log_unmount_write
            // came after the AIL push of everything before it).
            replay(meta, record);
            state.notes.push_back("log recovery finds the unmount record lsn " + std::to_string(lsn) +
                                  (lsn == head ? ": the log is clean" : ", then more records"));
            continue;
        }
        changed = true;
        replay(meta, record);
        state.notes.push_back("log recovery replays record lsn " + std::to_string(lsn) + ": " +
                              std::to_string(record.transactions.size()) + " transaction(s) (" +
                              state.log_records->back().kinds + ")");
    }
    return changed;
}

void Xfs::process_iunlinks(MetaState& meta, RecoveredState& state) const {
    // xlog_recover_process_iunlinks: every inode on an AGI unlinked bucket
    // (the model: allocated with nlink 0, InodeImage::nlink), by
    // xlog_recover_process_one_iunlink: xfs_iget, then xfs_irele, whose
    // last reference evicts it into xfs_inactive: "if (VFS_I(ip)->i_nlink
    // != 0)" it would only trim post-EOF blocks; at nlink 0 a regular file
    // with di_size or extents goes through xfs_inactive_truncate (di_size 0,
    // xfs_itruncate_extents frees every extent), then xfs_inactive_ifree
    // (xfs_iunlink_remove and xfs_difree: the inode is free). These run as
    // ordinary transactions during mount; the model folds their result into
    // the recovered metadata that recover_with_writes writes home, so a cut
    // before that write replays and processes the same list again.
    for (std::uint32_t file = 0; file < meta.inodes.size(); file++) {
        InodeImage& inode = meta.inodes[file];
        if (!inode.exists || inode.nlink != 0) continue;
        std::uint64_t freed = 0;
        inode.extents.for_each([&](std::uint64_t start, std::uint64_t end, const Extent& extent) {
            SIM_ASSERT(extent.state != ExtentState::delalloc);  // xfs_iextents_copy logs none
            meta.free_space.assign(extent.start_block, extent.start_block + (end - start), Free{});
            freed += end - start;
        });
        state.notes.push_back(
            "xlog_recover_process_iunlinks: inode " + name(file) +
            " is on the AGI unlinked list (di_nlink 0); xfs_inactive truncates it (di_size " +
            std::to_string(inode.di_size) + " -> 0, " + std::to_string(freed) +
            " block(s) back to free space) and xfs_inactive_ifree frees it");
        inode = InodeImage{};
    }
}

auto Xfs::trim_torn_head(const std::map<std::uint64_t, std::uint64_t>& torn, std::uint64_t tail,
                         std::uint64_t& head, RecoveredState& state) const -> bool {
    // xlog_verify_head: the CRC pass over the last XLOG_MAX_ICLOGS records
    // before the head; the first bad one becomes the new head.
    constexpr std::uint64_t xlog_max_iclogs = 8;
    for (const auto& [lsn, block] : torn) {
        if (lsn <= tail || lsn > head) continue;  // not replayed: never read
        const std::string where =
            "log record lsn " + std::to_string(lsn) + " at block " + std::to_string(block);
        if (head - lsn >= xlog_max_iclogs) {
            // xlog_do_recovery_pass returns -EFSBADCRC outside the window.
            refuse_mount(state, block,
                         where + " fails its CRC (xlog_cksum in xlog_recover_process), " +
                             std::to_string(head - lsn) + " records before the head: log recovery fails");
            return false;
        }
        state.checksum_failed.push_back(block);
        state.notes.push_back(where +
                              " fails its CRC (xlog_cksum in xlog_recover_process): a torn write at the "
                              "head; xlog_verify_head walks the head back to lsn " +
                              std::to_string(lsn - 1));
        head = lsn - 1;
        break;
    }
    return true;
}

void Xfs::read_file(const disk::Image& image, const InodeImage& inode,
                    RecoveredFile& recovered) const {
    recovered.exists = true;
    recovered.size_bytes = inode.di_size;
    const std::uint64_t size_blocks = (inode.di_size + block_size_ - 1) / block_size_;
    inode.extents.for_each([&](std::uint64_t start, std::uint64_t end, const Extent& extent) {
        if (extent.state == ExtentState::delalloc) return;  // no device block
        recovered.extents.push_back(
            {start, extent.start_block, end - start, extent.state == ExtentState::unwritten});
    });
    inode.extents.for_each(0, size_blocks, [&](std::uint64_t start, std::uint64_t end,
                                               const Extent& extent) {
        if (extent.state != ExtentState::normal) return;  // unwritten reads zeros
        recovered.read_mapped(image, start, extent.start_block, end - start);
    });
}

void Xfs::describe_file(const InodeImage& inode, std::uint32_t file, const disk::Image&,
                        RecoveredState& state) const {
    const std::uint64_t size_blocks = (inode.di_size + block_size_ - 1) / block_size_;
    const std::uint64_t fork_end = std::max(size_blocks, inode.extents.end_key());
    state.notes.push_back("inode " + name(file) + ": di_size " + std::to_string(inode.di_size) +
                          ", data fork: " + fork_text(inode.extents, fork_end));
    if (size_blocks == 0) {
        state.notes.push_back("a read of inode " + name(file) + " returns nothing (size 0)");
        return;
    }
    const RecoveredFile& recovered = state.files[file];
    std::string reads;
    std::uint64_t cursor = 0;
    auto add = [&](std::uint64_t start, std::uint64_t end, const std::string& what) {
        reads += (reads.empty() ? "" : "; ") + range_text(start, end) + " " + what;
    };
    recovered.blocks.for_each(0, size_blocks, [&](std::uint64_t start, std::uint64_t end,
                                                  const disk::Content& content) {
        if (start > cursor) add(cursor, start, "zeros");
        std::string what = content.describe(file_names_, block_size_);
        if (end - start > 1) what += " onwards";
        add(start, end, what);
        cursor = end;
    });
    if (cursor < size_blocks) add(cursor, size_blocks, "zeros");
    state.notes.push_back("a read of inode " + name(file) + " returns " + reads);
}

void Xfs::check_consistency(const MetaState& meta, RecoveredState& state) const {
    // No block in two extents, every extent inside the data area, and the
    // free-space map agrees with the extents: no block both free and owned,
    // none neither.
    const std::uint64_t device_end = device_.block_count();
    sim::RangeMap<Owner> owners;
    for (std::uint32_t file = 0; file < meta.inodes.size(); file++) {
        const InodeImage& inode = meta.inodes[file];
        if (!inode.exists) continue;
        inode.extents.for_each([&](std::uint64_t start, std::uint64_t end, const Extent& extent) {
            const std::string where = "inode " + name(file) + " extent " + range_text(start, end);
            if (extent.state == ExtentState::delalloc) {
                state.consistency_errors.push_back(where + " is a delalloc record on disk");
                return;
            }
            const std::uint64_t first = extent.start_block;
            const std::uint64_t last = first + (end - start);
            if (first < data_start_ || last > device_end) {
                state.consistency_errors.push_back(where + " points outside the data area (disk "
                                                   "block " + std::to_string(first) + ")");
                return;
            }
            owners.for_each(first, last, [&](std::uint64_t s, std::uint64_t, const Owner& other) {
                state.consistency_errors.push_back(
                    "disk block " + std::to_string(s) + " is in two extents: " + where +
                    " and inode " + name(other.file) + " at " + std::to_string(bytes(other.block)));
            });
            meta.free_space.for_each(first, last, [&](std::uint64_t s, std::uint64_t, const Free&) {
                state.consistency_errors.push_back("disk block " + std::to_string(s) +
                                                   " is free and in " + where);
            });
            owners.assign(first, last, Owner{file, start});
        });
    }
    meta.free_space.for_each([&](std::uint64_t start, std::uint64_t end, const Free&) {
        if (start < data_start_ || end > device_end) {
            state.consistency_errors.push_back("free space [" + std::to_string(start) + ", " +
                                               std::to_string(end) +
                                               ") lies outside the data area");
        }
    });
    sim::RangeMap<Free> accounted = meta.free_space;
    owners.for_each([&](std::uint64_t start, std::uint64_t end, const Owner&) {
        accounted.assign(start, end, Free{});
    });
    accounted.for_each_hole(data_start_, device_end, [&](std::uint64_t start, std::uint64_t end) {
        state.consistency_errors.push_back("disk blocks " + std::to_string(start) + ".." +
                                           std::to_string(end - 1) +
                                           " are neither free nor in any extent (leaked)");
    });
}

}  // namespace model::xfs
