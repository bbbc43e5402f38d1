// Transactions and the log: xfs_trans_alloc/commit/cancel (fs/xfs/xfs_trans.c),
// the CIL and its push (xfs_log_cil.c), xfs_log_force and xfs_log_force_lsn
// (xfs_log.c), and the AIL moving the log tail (xfs_trans_ail.c). Seed:
// "xfs: force writes to delalloc regions to unwritten", where the log force is
// the moment the allocation transaction of xfs_bmapi_convert_delalloc becomes
// durable.
//
// Left out on purpose: CIL internals. A commit formats its
// items (the whole inode, with every real extent of its extents-format fork;
// the free-space map) and appends them to the CIL in memory. A force switches
// the CIL context, then writes the checkpoint as one log record of one block
// with REQ_PREFLUSH | REQ_FUA, so that data completed before the switch is
// durable before the record that may reference it. Of the iclogs only
// whether one holds log ops is kept (xlog_iclogs_empty, for the covering
// test), and of the AIL whether it holds items (xfs_ail_min_lsn); log
// reservations and regrants, the log tail in record headers and intents are
// not modelled. When the log would wrap onto a record the metadata in place
// does not yet reflect, the AIL writes the whole metadata in place (block 0)
// first.
#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model::xfs {

void replay(MetaState& state, const LogRecord& record) {
    SIM_ASSERT(record.lsn == state.applied_lsn + 1);
    for (const LoggedTransaction& transaction : record.transactions) {
        for (const auto& [file, image] : transaction.inodes) {
            SIM_ASSERT(file < state.inodes.size());
            state.inodes[file] = image;
        }
        if (transaction.free_space) state.free_space = *transaction.free_space;
    }
    state.applied_lsn = record.lsn;
}

auto Xfs::image_of(std::uint32_t file) const -> InodeImage {
    const Inode& inode = inodes_[file];
    InodeImage image{inode.exists, inode.nlink, inode.di_size, inode.extsize_blocks, {}};
    // xfs_iextents_copy: delalloc records never reach the disk.
    inode.data_fork.for_each([&](std::uint64_t start, std::uint64_t end, const Extent& extent) {
        if (extent.state != ExtentState::delalloc) image.extents.assign(start, end, extent);
    });
    return image;
}

auto Xfs::trans_alloc(const char* kind, bool no_writecount) -> std::optional<Transaction> {
    // xfs_trans_alloc fails with -EIO once the file system is shut down.
    if (shutdown_) return std::nullopt;
    SIM_LIVE(kind, no_writecount);
    // T2: "if (!(flags & XFS_TRANS_NO_WRITECOUNT)) sb_start_intwrite(mp->m_super);"
    // ("xfs: remove the m_active_trans counter"): blocks once freezing reached FS.
    if (!no_writecount) sb_.start(WriteLevel::fs);
    touch(points::parts().log);  // next_transaction_id_, in the step after any wait above
    Transaction tp;
    tp.id = next_transaction_id_++;
    tp.kind = kind;
    tp.op = op_name();
    tp.no_writecount = no_writecount;
    // T3: "WARN_ON(resp->tr_logres > 0 && mp->m_super->s_writers.frozen ==
    // SB_FREEZE_COMPLETE)": every model transaction reserves log space.
    if (sb_.frozen() == FreezeLevel::complete) {
        SIM_NOTE("WARNING at xfs_trans_alloc: transaction #" + std::to_string(tp.id) + " (" + kind +
                 ") reserves log space on a frozen file system");
    }
    // T4 (v5.7 only): atomic_inc(&mp->m_active_trans).
    active_trans_add(true);
    emit(transaction_event(EventKind::trans_alloc, tp.id, kind, no_writecount, true));
    return tp;
}

void Xfs::trans_free(const Transaction& tp) {
    // T7, xfs_trans_free: "atomic_dec(&tp->t_mountp->m_active_trans)" (v5.7),
    // then "if (!(tp->t_flags & XFS_TRANS_NO_WRITECOUNT)) sb_end_intwrite".
    active_trans_add(false);
    if (!tp.no_writecount) sb_.end(WriteLevel::fs);
    emit(transaction_event(EventKind::trans_free, tp.id, tp.kind));
}

void Xfs::active_trans_add(bool increment) {
    if (knobs_.active_trans != ActiveTrans::counter) return;
    // One locked read-modify-write of the atomic_t on its cache line: a
    // hit on the CPU that owns the line, else FIFO waiting and a miss
    // (sim::CacheLine). Costs time in performance runs only.
    active_trans_line_.access();
    if (increment) {
        active_trans_++;
        return;
    }
    active_trans_--;
}

void Xfs::trans_roll(Transaction& tp) {
    // xfs_trans_roll (v5.7 xfs_trans.c): "*tpp = xfs_trans_dup(trans);
    // error = __xfs_trans_commit(trans, true);" then xfs_trans_reserve of the
    // new handle. xfs_trans_dup: "ntp->t_flags = ... (tp->t_flags &
    // XFS_TRANS_NO_WRITECOUNT); /* We gave our writer reference to the new
    // transaction */ tp->t_flags |= XFS_TRANS_NO_WRITECOUNT;" ... and
    // "atomic_inc(&tp->t_mountp->m_active_trans);" (v5.7). The old handle's
    // commit frees it: atomic_dec, and no sb_end_intwrite.
    SIM_ASSERT(tp.id != 0 && !tp.holds_agf);
    touch(points::parts().log);
    Transaction ntp;
    ntp.id = next_transaction_id_++;
    ntp.kind = tp.kind;
    ntp.op = tp.op;
    ntp.no_writecount = tp.no_writecount;
    tp.no_writecount = true;
    active_trans_add(true);
    emit(transaction_event(EventKind::trans_alloc, ntp.id, ntp.kind, ntp.no_writecount, true));
    counters_.rolls++;
    trans_commit(tp);
    tp = std::move(ntp);
}

void Xfs::trans_cancel(Transaction& tp) {
    SIM_ASSERT(tp.id != 0);
    counters_.transactions_cancelled++;
    emit(transaction_event(EventKind::trans_cancel, tp.id, tp.kind));
    trans_free(tp);
    tp.id = 0;
    if (tp.holds_agf) agf_lock_.unlock();
    tp.holds_agf = false;
}

auto Xfs::trans_commit(Transaction& tp) -> bool {
    SIM_ASSERT(tp.id != 0);
    if (shutdown_) {
        // xfs_trans_commit on a shut down file system aborts its items: -EIO.
        trans_cancel(tp);
        return false;
    }
    emit(transaction_event(EventKind::trans_commit, tp.id, tp.kind));
    if (tp.inodes.empty() && !tp.free_space && !tp.superblock) {
        SIM_ASSERT(!tp.holds_agf);
        trans_free(tp);
        tp.id = 0;  // a clean transaction logs nothing
        return true;
    }
    sim::cpu(cpu_cost::transaction_commit);
    // The CIL; the logged inodes' images (their cores and forks) and pins;
    // the free-space map it copies; the busy extents it adds.
    const points::Parts& parts = points::parts();
    touch(parts.log);
    if (!tp.inodes.empty()) touch(parts.inode | parts.data_fork);
    if (tp.free_space) touch(parts.allocator);
    if (!tp.busy.empty()) touch(parts.busy);
    LoggedTransaction logged{tp.id, tp.kind, {}, std::nullopt, tp.superblock};
    for (std::uint32_t file : tp.inodes) {
        logged.inodes.emplace_back(file, image_of(file));
        inodes_[file].last_commit_seq = cil_sequence_;  // ili_last_lsn; the inode is pinned
    }
    if (tp.free_space) logged.free_space = free_space_;
    for (const auto& [start, end] : tp.busy) busy_.push_back({start, end, cil_sequence_});
    cil_.push_back(std::move(logged));
    counters_.transactions++;
    counters_.by_op[tp.op].transactions++;
    // xfs_log_commit_cil frees the transaction (before a sync commit's force).
    trans_free(tp);
    tp.id = 0;
    if (tp.holds_agf) agf_lock_.unlock();
    tp.holds_agf = false;
    return true;
}

void Xfs::log_force(const char* why) {
    touch(points::parts().logging);
    if (shutdown_) return;
    SIM_LIVE(why);
    log_force_lock_.lock();
    const bool wrote = push_cil(why);
    log_force_lock_.unlock();
    if (wrote) sim::yield(points::log_record_durable);
}

auto Xfs::log_force_seq(std::uint64_t sequence, const char* why) -> bool {
    // xfs_log_force_lsn (v5.7): xlog_cil_force_lsn returns NULLCOMMITLSN
    // (nothing to do) when that checkpoint is on disk already, and the force
    // fails with -EIO on a shut down log (XLOG_FORCED_SHUTDOWN).
    // __xfs_log_force_lsn sets *log_flushed only when this caller switches
    // and releases the ACTIVE iclog itself.
    // Waiting for a record someone else is writing does not count as a flush
    // (log_flushed stays 0): that record's PREFLUSH may have gone out before
    // the caller's data completed, so the caller flushes the device itself.
    touch(points::parts().logging);
    if (sequence <= durable_sequence_ || shutdown_) return false;
    bool wrote = false;
    SIM_LIVE(sequence, why, wrote);
    log_force_lock_.lock();
    touch(points::parts().logging);  // after the wait: a step of its own
    if (sequence > durable_sequence_) wrote = push_cil(why);
    // The force leaves the asked checkpoint on disk (or the log shut down).
    SIM_ASSERT(sequence <= durable_sequence_ || shutdown_);
    log_force_lock_.unlock();
    if (wrote) sim::yield(points::log_record_durable);
    return wrote;
}

auto Xfs::push_cil(const char* why) -> bool {
    SIM_ASSERT(log_force_lock_.held());
    touch(points::parts().logging);
    if (cil_.empty() || shutdown_) return false;
    sim::cpu(cpu_cost::cil_push);
    // xlog_cil_push: switch the context; later commits go to the next checkpoint.
    std::vector<LoggedTransaction> checkpoint = std::move(cil_);
    cil_.clear();
    const std::uint64_t sequence = cil_sequence_++;
    std::string kinds;
    for (const auto& transaction : checkpoint) {
        kinds += (kinds.empty() ? "" : ", ") + std::string(transaction.kind);
    }
    SIM_NOTE("log force (" + std::string(why) + "): CIL checkpoint " + std::to_string(sequence) +
             " holds " + std::to_string(checkpoint.size()) + " transaction(s): " + kinds);
    // xlog_write formats the checkpoint into iclogs: xlog_iclogs_empty is
    // false until the record's completion cleans them.
    iclogs_busy_ = true;
    // XLOG_COVER_OPS: the checkpoint of a lone superblock transaction (start,
    // transaction header, buffer format, buffer data, commit: five ops) is
    // the covering dummy; any other record has more ops.
    const bool cover_record = checkpoint.size() == 1 && checkpoint[0].superblock &&
                              checkpoint[0].inodes.empty() && !checkpoint[0].free_space;
    SIM_LIVE(checkpoint, sequence, cover_record);
    sim::yield(points::log_cil_pushed);
    const std::uint64_t lsn = lsn_ + 1;
    SIM_LIVE(lsn);
    // The record goes where record lsn - log_blocks_ was; the metadata in
    // place must reflect that one before it is overwritten.
    if (lsn > home_lsn_ + log_blocks_) push_ail();
    // The record never overwrites one whose changes are not in place yet, and
    // checkpoints reach the disk in order.
    SIM_ASSERT(lsn <= home_lsn_ + log_blocks_);
    SIM_ASSERT(sequence == durable_sequence_ + 1);
    // The iclog write carries REQ_PREFLUSH and REQ_FUA.
    device_.flush_and_wait();
    LogRecord record{lsn, std::move(checkpoint)};
    replay(durable_meta_, record);
    const std::uint64_t block = log_start_ + (lsn - 1) % log_blocks_;
    const std::uint64_t object = store(std::move(record));
    device_.write_and_wait(block, 1, disk::Content::meta(object), true, "log");
    lsn_ = lsn;
    durable_sequence_ = sequence;
    std::erase_if(busy_, [&](const BusyExtent& busy) { return busy.sequence <= sequence; });
    counters_.log_forces++;
    op_counters().log_forces++;
    SIM_NOTE("PREFLUSH, then log record lsn " + std::to_string(lsn) + " with FUA at block " +
             std::to_string(block) + ": checkpoint " + std::to_string(sequence) + " is durable");
    log_write_done(lsn, true, cover_record);
    return true;
}

void Xfs::log_unmount_write() {
    // xfs_log_unmount_write (v5.7) after xfs_log_quiesce forced the log and
    // pushed the AIL: a record holding only the unmount op, written through
    // an iclog (PREFLUSH | FUA). A log that ends with it is clean.
    if (shutdown_) return;
    touch(points::parts().logging);
    log_force_lock_.lock();
    touch(points::parts().logging);  // after the wait too: a step of its own
    const std::uint64_t lsn = lsn_ + 1;
    SIM_LIVE(lsn);
    if (lsn > home_lsn_ + log_blocks_) push_ail();
    iclogs_busy_ = true;
    device_.flush_and_wait();
    LogRecord record{lsn, {}, true};
    replay(durable_meta_, record);
    const std::uint64_t block = log_start_ + (lsn - 1) % log_blocks_;
    const std::uint64_t object = store(std::move(record));
    device_.write_and_wait(block, 1, disk::Content::meta(object), true, "log");
    lsn_ = lsn;
    counters_.log_forces++;
    op_counters().log_forces++;
    SIM_NOTE("xfs_log_unmount_write: PREFLUSH, then the unmount record lsn " + std::to_string(lsn) +
             " with FUA at block " + std::to_string(block) + ": the log is clean up to here");
    // One op (the unmount magic), not XLOG_COVER_OPS: no covering record.
    log_write_done(lsn, false, false);
    log_force_lock_.unlock();
}

auto cover_state_name(CoverState state) -> const char* {
    switch (state) {
        case CoverState::idle: return "XLOG_STATE_COVER_IDLE";
        case CoverState::need: return "XLOG_STATE_COVER_NEED";
        case CoverState::done: return "XLOG_STATE_COVER_DONE";
        case CoverState::need2: return "XLOG_STATE_COVER_NEED2";
        case CoverState::done2: return "XLOG_STATE_COVER_DONE2";
    }
    return "?";
}

void Xfs::log_write_done(std::uint64_t lsn, bool items, bool cover_record) {
    touch(points::parts().logging);
    // xlog_cil_committed -> xfs_trans_committed_bulk: the checkpoint's items
    // enter the AIL at its commit lsn (they leave it when written in place).
    if (items) ail_lsn_ = lsn;
    // xlog_state_clean_iclog (v5.7): xlog_state_activate_iclog sets
    // iclogs_changed to 1 for an iclog of XLOG_COVER_OPS ops, else 2; then
    // xlog_covered_state: "case XLOG_STATE_COVER_DONE: if (iclogs_changed ==
    // 1) return XLOG_STATE_COVER_NEED2; ... case XLOG_STATE_COVER_DONE2: if
    // (iclogs_changed == 1) return XLOG_STATE_COVER_IDLE; ... return
    // XLOG_STATE_COVER_NEED;" (IDLE, NEED and NEED2 always go to NEED).
    iclogs_busy_ = false;
    const CoverState before = covered_state_;
    if (before == CoverState::done && cover_record) {
        covered_state_ = CoverState::need2;
    } else if (before == CoverState::done2 && cover_record) {
        covered_state_ = CoverState::idle;
    } else {
        covered_state_ = CoverState::need;
    }
    if (covered_state_ != before) {
        SIM_NOTE(std::string("xlog_state_clean_iclog: covering state ") + cover_state_name(before) + " -> " +
                 cover_state_name(covered_state_) +
                 (cover_record ? " (a record of XLOG_COVER_OPS ops: a lone superblock transaction)" : ""));
    }
}

void Xfs::push_ail() {
    // Write every logged change in place (block 0), so the log tail moves past
    // every record written so far and the AIL is empty. xfsaild's writes are
    // folded into the pusher: xfs_ail_push_all_sync waits for them, and
    // xfs_ail_push_all (the log worker's) is modelled as waiting too.
    touch(points::parts().logging);
    const std::uint64_t object = store(durable_meta_);
    device_.write_and_wait(0, 1, disk::Content::meta(object), true, "meta");
    home_lsn_ = durable_meta_.applied_lsn;
    counters_.ail_pushes++;
    SIM_NOTE("AIL push: the metadata in place now reflects log records up to lsn " +
             std::to_string(home_lsn_) + "; the log tail moves past them");
}

void Xfs::shutdown() {
    // xfs_fs_goingdown(XFS_FSOP_GOING_FLAGS_LOGFLUSH) -> xfs_force_shutdown
    // (SHUTDOWN_FORCE_UMOUNT, no SHUTDOWN_LOG_IO_ERROR) -> xfs_log_force_umount:
    // "if (!logerror) xfs_log_force(mp, XFS_LOG_SYNC)", then the shutdown
    // flag; commits that land between the two stay in the CIL and are lost.
    SIM_NOTE("godown -f: XFS_IOC_GOINGDOWN with XFS_FSOP_GOING_FLAGS_LOGFLUSH: force the log, "
             "then shut down");
    log_force("godown -f");
    touch(sim::footprint_all);  // every step reads the flag
    shutdown_ = true;
    std::string dirty;
    for (std::uint32_t file = 0; file < inodes_.size(); file++) {
        for (auto [start, end] : page_cache_.runs(file, 0, whole_file_end, PageState::dirty)) {
            dirty += (dirty.empty() ? "" : ", ") + name(file) + " " + range_text(start, end);
        }
    }
    SIM_NOTE("xfs_force_shutdown: no more transactions, log writes or data writeback" +
             (dirty.empty() ? std::string() : "; dirty pages never written: " + dirty));
    sim::yield(points::shutdown_done);
}

}  // namespace model::xfs
