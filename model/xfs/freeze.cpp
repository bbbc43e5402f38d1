// The log worker, xfs_sync_sb and freezing: xfs_log_worker,
// xfs_log_need_covered, xfs_log_work_queue and xfs_log_quiesce (xfs_log.c),
// xfs_sync_sb (libxfs/xfs_sb.c), xfs_log_sbcount and xfs_fs_writable
// (xfs_mount.c), xfs_quiesce_attr, xfs_fs_freeze and xfs_fs_unfreeze
// (xfs_super.c), freeze_super and thaw_super (fs/super.c), v5.7, with the knob
// `active_trans` selecting the patch of "xfs: remove the m_active_trans counter"
// (steps L1..L4, Z1..Z4, Q1..Q6).
//
// The covering state machine is kept (xfs_log_need_covered's whole test: not
// freezing, the CIL empty, the state NEED or NEED2, the AIL empty and the
// iclogs empty), so a worker covers only a log that has been idle for a run:
// after a write that logged, one run pushes the AIL and a later one covers.
//
// Left out on purpose: the grant heads (every transaction
// has log space), inode reclaim (Q3 is an AIL push: the model's inodes are
// written in place with the rest of the metadata), xfsaild as a thread of its
// own (an AIL push writes in place before it returns), block reaping and
// reserved blocks (xfs_stop_block_reaping, xfs_save_resvblks and their thaw
// counterparts change nothing the model keeps), remount-ro, xfs_wait_buftarg
// (every model write is waited for), s_active (the file system is never
// unmounted while frozen).
#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model::xfs {

void Xfs::start_daemons() {
    // xfs_log_mount_finish -> xfs_log_work_queue: l_work armed at mount.
    log_work_.queue();
    // Asleep at the start: what the worker does when it wakes does not
    // depend on how long ago it was armed.
    sim::current_scheduler().spawn_daemon("xfs-sync",
                                          [this] {
                                              log_work_.run([this] {
                                                  log_worker();
                                                  // L4 xfs_log_work_queue: re-arm (a
                                                  // cancel holding the pending bit makes
                                                  // it fail).
                                                  log_work_.queue();
                                              });
                                          },
                                          sim::Scheduler::DaemonStart::asleep);
}

auto Xfs::fs_writable(FreezeLevel level) const -> bool {
    // xfs_fs_writable: "if ((mp->m_super->s_writers.frozen >= level) ||
    // XFS_FORCED_SHUTDOWN(mp) || (mp->m_flags & XFS_MOUNT_RDONLY)) return false;"
    return sb_.frozen() < level && !shutdown_;
}

auto Xfs::log_need_covered() -> bool {
    // L1, xfs_log_need_covered (v5.7 xfs_log.c): "if (!xfs_fs_writable(mp,
    // SB_FREEZE_WRITE)) return 0; if (!xlog_cil_empty(log)) return 0;" then,
    // under l_icloglock, "case XLOG_STATE_COVER_NEED: case
    // XLOG_STATE_COVER_NEED2: if (xfs_ail_min_lsn(log->l_ailp)) break; if
    // (!xlog_iclogs_empty(log)) break; needed = 1; if (log->l_covered_state ==
    // XLOG_STATE_COVER_NEED) log->l_covered_state = XLOG_STATE_COVER_DONE;
    // else log->l_covered_state = XLOG_STATE_COVER_DONE2;" (IDLE, DONE and
    // DONE2: 0).
    if (!cover_refusal().empty()) return false;
    covered_state_ = covered_state_ == CoverState::need ? CoverState::done : CoverState::done2;
    return true;
}

auto Xfs::cover_refusal() const -> std::string {
    if (!fs_writable(FreezeLevel::write)) return "freezing or shut down";
    if (!cil_.empty()) return "the CIL holds commits";
    if (covered_state_ != CoverState::need && covered_state_ != CoverState::need2) {
        return std::string("covering state ") + cover_state_name(covered_state_);
    }
    if (!ail_empty()) return "the AIL holds items logged up to lsn " + std::to_string(ail_lsn_);
    if (iclogs_busy_) return "an iclog holds a record being written";
    return {};
}

void Xfs::log_worker() {
    // xfs_log_worker (v5.7), L1..L3; the daemon re-arms (L4). The daemon's
    // wake-up reaches here through no yield point of its own.
    sim::cover(points::parts().logging);
    const std::string refusal = cover_refusal();
    const bool need_covered = log_need_covered();
    SIM_LIVE(need_covered);
    SIM_NOTE(need_covered
                 ? std::string("xfs_log_worker: xfs_log_need_covered says yes (writable, CIL, AIL and "
                               "iclogs empty; covering state now ") +
                       cover_state_name(covered_state_) + ")"
                 : "xfs_log_worker: xfs_log_need_covered says no (" + refusal +
                       "): an asynchronous log force");
    sim::yield(points::logworker_after_need_covered);
    if (need_covered) {
        // L2: "xfs_sync_sb(mp, true)", a dummy transaction to cover the log.
        sync_sb("xfs_log_worker", &points::logworker_in_trans);
    } else {
        log_force("xfs_log_worker");  // xfs_log_force(mp, 0)
    }
    // L3 xfs_ail_push_all: "threshold_lsn = xfs_ail_max_lsn(ailp); if
    // (threshold_lsn) xfs_ail_push(ailp, threshold_lsn);": xfsaild writes
    // every logged item in place and the AIL drains.
    if (!shutdown_ && !ail_empty()) push_ail();
}

auto Xfs::sync_sb(const char* who, const sim::YieldPoint* in_trans) -> bool {
    // xfs_sync_sb: "xfs_trans_alloc(mp, &M_RES(mp)->tr_sb, 0, 0,
    // XFS_TRANS_NO_WRITECOUNT, &tp)", xfs_log_sb, xfs_trans_set_sync, commit.
    auto tp = trans_alloc("xfs_sync_sb", true);
    if (!tp) return false;
    SIM_LIVE(who, tp);
    SIM_NOTE(std::string(who) + ": xfs_sync_sb allocates transaction #" + std::to_string(tp->id) +
             " (XFS_TRANS_NO_WRITECOUNT: no sb_start_intwrite, freeze_super does not wait for it)" +
             (knobs_.active_trans == ActiveTrans::counter
                  ? "; m_active_trans " + std::to_string(active_trans_)
                  : std::string()));
    if (in_trans != nullptr) sim::yield(*in_trans);
    tp->superblock = true;
    const std::uint64_t id = tp->id;
    const bool committed = trans_commit(*tp);
    SIM_LIVE(committed);
    // XFS_TRANS_SYNC: __xfs_trans_commit forces the log up to the commit.
    if (committed) log_force(who);
    SIM_NOTE(std::string(who) + ": xfs_sync_sb transaction #" + std::to_string(id) +
             (committed ? " committed and forced" : " failed"));
    return committed;
}

auto Xfs::takes_write_protection(Op op) -> bool {
    // mnt_want_write (create, unlink, truncate) and file_start_write (write,
    // vfs_fallocate) take sb_start_write; fsync, sync_file_range, writeback,
    // log forces, godown and the freeze ioctls do not.
    switch (op) {
        case Op::create:
        case Op::unlink:
        case Op::write:
        case Op::falloc:
        case Op::fpunch:
        case Op::fzero:
        case Op::truncate: return true;
        default: return false;
    }
}

auto Xfs::freeze_super() -> bool {
    // freeze_super (fs/super.c, v5.7): "down_write(&sb->s_umount); if
    // (sb->s_writers.frozen != SB_UNFROZEN) { deactivate_locked_super(sb);
    // return -EBUSY; }" (a read-only mount and an unborn super are left out).
    s_umount_.lock();
    if (sb_.frozen() != FreezeLevel::unfrozen) {
        s_umount_.unlock();
        SIM_NOTE("freeze_super fails with EBUSY: already frozen or freezing");
        return false;
    }
    // "sb->s_writers.frozen = SB_FREEZE_WRITE; /* Release s_umount to
    // preserve sb_start_write -> s_umount ordering */ up_write(&sb->s_umount);
    // sb_wait_write(sb, SB_FREEZE_WRITE); down_write(&sb->s_umount);": a thaw
    // in this window takes s_umount and fails with EINVAL.
    sb_.set_frozen(FreezeLevel::write);
    s_umount_.unlock();
    sb_.wait_write(WriteLevel::write);
    SIM_NOTE("freeze_super: SB_FREEZE_WRITE, writers drained");
    sim::yield(points::freeze_write);
    s_umount_.lock();
    sb_.set_frozen(FreezeLevel::pagefault);
    sb_.wait_write(WriteLevel::pagefault);
    sync_filesystem();
    sb_.set_frozen(FreezeLevel::fs);
    sb_.wait_write(WriteLevel::fs);
    SIM_NOTE("freeze_super: synced, SB_FREEZE_FS, sb_start_intwrite holders drained (transactions "
             "without a write count are not counted)");
    sim::yield(points::freeze_fs);
    fs_freeze();
    sb_.set_frozen(FreezeLevel::complete);
    // "sb->s_writers.frozen = SB_FREEZE_COMPLETE; ... up_write(&sb->s_umount);"
    s_umount_.unlock();
    SIM_NOTE("freeze_super: SB_FREEZE_COMPLETE");
    sim::yield(points::freeze_complete);
    return true;
}

void Xfs::sync_filesystem() {
    // sync_filesystem -> __sync_filesystem(sb, 0) then (sb, 1): write back
    // every inode and wait, then xfs_fs_sync_fs(wait): xfs_log_force(SYNC).
    for (std::uint32_t file = 0; file < inodes_.size(); file++) {
        SIM_LIVE(file);
        if (inodes_[file].exists) write_and_wait(file, 0, whole_file_end, "sync_filesystem");
    }
    log_force("sync_filesystem");
}

void Xfs::fs_freeze() {
    // xfs_fs_freeze (v5.7): xfs_stop_block_reaping, xfs_save_resvblks (left
    // out), xfs_quiesce_attr, then "return xfs_sync_sb(mp, true);" (Z3): a
    // superblock transaction logged after the unmount record.
    quiesce_attr();
    sync_sb("xfs_fs_freeze", nullptr);
}

void Xfs::quiesce_drain() {
    // Q1.
    switch (knobs_.active_trans) {
        case ActiveTrans::counter:
            // "while (atomic_read(&mp->m_active_trans) > 0) delay(100);": a
            // plain poll, 400 ms between reads. The transactions it waits for
            // run meanwhile: a sleep that long never ends ahead of a runnable
            // task (sim::sched_latency), so the poll cannot starve them.
            while (active_trans_ > 0) {
                SIM_NOTE("xfs_quiesce_attr: m_active_trans " + std::to_string(active_trans_) +
                         ", delay(100)");
                sim::current_scheduler().sleep(quiesce_poll_delay);
            }
            SIM_NOTE("xfs_quiesce_attr: m_active_trans is 0");
            break;
        case ActiveTrans::removed_cancel_last:
            SIM_NOTE("xfs_quiesce_attr: no counter to wait for, the log worker is not cancelled yet");
            break;
        case ActiveTrans::removed_cancel_first:
            // "cancel_delayed_work_sync(&mp->m_log->l_work);"
            log_work_.cancel_sync();
            SIM_NOTE("xfs_quiesce_attr: cancel_delayed_work_sync(l_work) returned: the log worker is "
                     "neither queued nor running");
            break;
    }
    emit(drained_event());
    sim::yield(points::quiesce_drained);
}

void Xfs::quiesce_attr() {
    // xfs_quiesce_attr (v5.7 and the patch).
    quiesce_drain();
    log_force("xfs_quiesce_attr");  // Q2 xfs_log_force(mp, XFS_LOG_SYNC)
    push_ail();                     // Q3 xfs_reclaim_inodes(mp, 0) and (SYNC_WAIT)
    // Q4 xfs_log_sbcount: "if (!xfs_fs_writable(mp, SB_FREEZE_COMPLETE))
    // return 0;" (lazy superblock counters: v5 file systems), xfs_sync_sb.
    if (fs_writable(FreezeLevel::complete)) sync_sb("xfs_log_sbcount", nullptr);
    sim::yield(points::quiesce_sbcount);
    // Q5 (v5.7): "WARN_ON(atomic_read(&mp->m_active_trans) != 0);"
    if (knobs_.active_trans == ActiveTrans::counter && active_trans_ != 0) {
        SIM_NOTE("WARNING at xfs_quiesce_attr: m_active_trans is " + std::to_string(active_trans_));
    }
    log_quiesce();  // Q6
    sim::yield(points::quiesce_unmount_record);
}

void Xfs::log_quiesce() {
    // xfs_log_quiesce (v5.7): "cancel_delayed_work_sync(&mp->m_log->l_work);
    // xfs_log_force(mp, XFS_LOG_SYNC); xfs_ail_push_all_sync(mp->m_ail);
    // xfs_wait_buftarg(...); ... xfs_log_unmount_write(mp);"
    log_work_.cancel_sync();
    log_force("xfs_log_quiesce");
    push_ail();
    log_unmount_write();
}

auto Xfs::thaw_super() -> bool {
    // thaw_super (fs/super.c, v5.7): "down_write(&sb->s_umount); return
    // thaw_super_locked(sb);": a thaw that comes while freeze_super holds
    // s_umount waits for it and then thaws. thaw_super_locked: "if
    // (sb->s_writers.frozen != SB_FREEZE_COMPLETE) { up_write(&sb->s_umount);
    // return -EINVAL; }", then ->unfreeze_fs (xfs_fs_unfreeze:
    // xfs_restore_resvblks, xfs_log_work_queue, xfs_start_block_reaping),
    // "sb->s_writers.frozen = SB_UNFROZEN; sb_freeze_unlock(sb);", the
    // waiters woken, and deactivate_locked_super drops s_umount.
    s_umount_.lock();
    if (sb_.frozen() != FreezeLevel::complete) {
        s_umount_.unlock();
        SIM_NOTE("thaw_super fails with EINVAL: not frozen");
        return false;
    }
    log_work_.queue();
    sb_.set_frozen(FreezeLevel::unfrozen);
    sb_.unlock_all();
    s_umount_.unlock();
    SIM_NOTE("thaw_super: xfs_fs_unfreeze re-armed the log worker; SB_UNFROZEN");
    return true;
}

}  // namespace model::xfs
