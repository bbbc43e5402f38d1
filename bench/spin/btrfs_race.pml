/*
 * btrfs_race.pml: the race of "btrfs: fix race between page release and a fast fsync"
 * (patch 1/3, "fix race between page release and a fast fsync") in Promela,
 * for bench/spin/compare.sh. It mirrors scenarios/btrfs/fast-fsync-vs-page-release.json
 * as crashsim's model (model/btrfs/*.cpp) runs it, step for step:
 *
 *   - one d_step per crashsim step: the code a task runs from one yield
 *     point (or wake-up) to the next yield point, blocking call or its end;
 *     a device completion (a timer in crashsim) is one step of `Device`;
 *   - a task is runnable (st == RUN), blocked (BLK, on a mutex, the io tree
 *     LOCKED range, the ordered extent or an I/O) or finished, exactly as
 *     crashsim's scheduler sees it, and a waker sets the waiter runnable;
 *   - the disk has a volatile cache: a write is in flight, then completed
 *     (in the cache), then durable after a later FLUSH (or at completion if
 *     FUA); after every step that changed the disk or acknowledged the fsync,
 *     every subset of the writes not yet durable is "kept" in turn, the image
 *     is mounted (superblock, log replay) and the fsync's promise is checked,
 *     as crashsim's runner does with crash policy any-subset.
 *
 * Compile-time knobs (spin -a -D...):
 *   VARIANT   0 before-fix, 1 fix-1, 2 fix-2 (release_extent_maps); release
 *             always sets NEEDS_FULL_SYNC, as those three kernels do
 *   PB        if defined: preemption bound, as crashsim's dfs --preemptions:
 *             switching away from the task that ran last while it is still
 *             runnable (to another task or to a device completion) costs one
 *   CRASH     1 (default): any-subset crash states after every disk/oracle
 *             change; 0: one check when the fsync returns, every write
 *             taken as durable (no disk cache)
 *
 * The state of the scenario after its set-up (create I, write 20 MiB, fsync,
 * sync): transaction 2 committed (last_trans_committed = 2), none running,
 * NEEDS_FULL_SYNC clear, the log empty, the file's old extent maps off the
 * list of modified extents. Only page X (offset 20 MiB) and its extent map
 * take part; the old maps never meet it (no merging, no overlap), so they are
 * left out.
 */

#ifndef VARIANT
#define VARIANT 0
#endif
#ifndef CRASH
#define CRASH 1
#endif

/* tasks, in crashsim's spawn order; endio is spawned at bio completion */
#define APP      0
#define FLUSHER  1
#define RECLAIM  2
#define FSYNCER  3
#define ENDIO    4
#define NOTASK   7

/* task states */
#define RUN    0
#define BLK    1
#define FIN    2
#define UNBORN 3

/* page X in the page cache */
#define P_NONE  0
#define P_DIRTY 1
#define P_WB    2
#define P_CLEAN 3
#define P_FREED 4

/* an I/O on the device */
#define IO_NONE     0
#define IO_INFLIGHT 1
#define IO_CACHED   2   /* completed, in the volatile cache */
#define IO_DURABLE  3

/* the ordered extent */
#define OE_NONE     0
#define OE_PENDING  1
#define OE_COMPLETE 2

#define GEN_PINNED 255  /* (u64)-1 while the extent map is pinned */
#define COMMITTED  2    /* last_trans_committed: set-up committed transaction 2 */
#define DONE       99   /* a task's pc once it finished */

byte st_app = RUN, st_fl = RUN, st_rc = RUN, st_fs = RUN, st_eio = UNBORN;

/* inode I */
byte page = P_NONE;
bit  isize_big;            /* in-memory i_size covers X */
byte inode_lock = NOTASK;  /* i_rwsem holder (hand-off on unlock, as sim::Mutex) */
bit  app_waits_inode, fs_waits_inode;
bit  needs_full_sync;      /* BTRFS_INODE_NEEDS_FULL_SYNC, clear after the set-up */
byte last_trans = 2, logged_trans = 2;
/* the extent map of X */
bit  em_exists, em_pinned, em_listed, em_logging;
byte em_gen;
/* the io tree: X's range LOCKED, and who sleeps on io_tree_wait */
bit  io_locked, fl_waits_io, fs_waits_io, eio_waits_io;
/* the ordered extent of X; the fsync waiting for it */
byte oe = OE_NONE;
bit  fs_waits_ordered;
/* fs_info and the running transaction */
byte gen = 2;              /* fs_info->generation */
bit  trans_running;
byte trans_writers;
/* the subvolume tree (in memory, dirty in the running transaction) */
bit  fs_X, fs_size_big;
/* the log tree of the running transaction */
bit  log_has_inode, log_size_big, log_X;
byte log_writers;

/* the device: the data bio of X, the log tree block, the FLUSH, the superblock (FUA) */
byte dD = IO_NONE, dL = IO_NONE, dF = IO_NONE, dS = IO_NONE;
bit  flush_covers_D, flush_covers_L;

/* the oracle */
bit  write_done;           /* the app's write returned */
bit  promise_X;            /* the fsync began after it: X and its i_size are promised */
bit  fsync_returned;

#ifdef PB
byte cur = NOTASK;         /* the task that ran the last task step */
byte npre;                 /* preemptions spent */
#endif

/* the crash checker's scratch (not part of the state) */
hidden byte kD, kL, kS, mD, mL, mS;
hidden byte data_ok, super_log, size_ok, x_present;

#define RUNNABLE(t) ((t) == APP && st_app == RUN || (t) == FLUSHER && st_fl == RUN || \
                     (t) == RECLAIM && st_rc == RUN || (t) == FSYNCER && st_fs == RUN || \
                     (t) == ENDIO && st_eio == RUN)

#ifdef PB
#define MAY(t)   (cur == (t) || cur == NOTASK || !RUNNABLE(cur) || npre < PB)
#define TAKE(t)  if :: (cur != (t) && cur != NOTASK && RUNNABLE(cur)) -> npre++ :: else -> skip fi; cur = (t)
#define MAY_IO   (cur == NOTASK || !RUNNABLE(cur) || npre < PB)
#define TAKE_IO  if :: (cur != NOTASK && RUNNABLE(cur)) -> npre++ :: else -> skip fi
#else
#define MAY(t)   true
#define TAKE(t)  skip
#define MAY_IO   true
#define TAKE_IO  skip
#endif

#define INFLIGHT ((dD == IO_INFLIGHT) + (dL == IO_INFLIGHT) + (dF == IO_INFLIGHT) + (dS == IO_INFLIGHT))

/* ---- crash and recovery ------------------------------------------------ */

/* One crash state: the durable image plus the kept writes; mount it. */
inline check_one() {
    data_ok = (dD == IO_DURABLE || kD);
    super_log = (dS == IO_DURABLE || kS);
    /* fs_consistency: a superblock naming the log needs the log block */
    if
    :: super_log -> assert(dL == IO_DURABLE || kL)
    :: else -> skip
    fi;
    /* recovery: transaction 3 never commits (no committer), so the fs tree
       is transaction 2's: no extent at X, i_size 20 MiB; log replay sets the
       logged i_size and adds the logged file extent items */
    size_ok = (super_log && log_size_big);
    x_present = (super_log && log_X);
    /* fsync_durability: X's data and i_size, if the fsync returned and
       began after the write returned */
    assert(!(fsync_returned && promise_X) || (size_ok && x_present && data_ok));
    /* no_stale_data holds by construction: X reads v2 or zeros */
}

/* After a step that changed the disk or the oracle: every subset of the
   writes that are not durable (in flight or only in the cache). */
inline crash_check() {
#if CRASH
    mD = (dD == IO_INFLIGHT || dD == IO_CACHED);
    mL = (dL == IO_INFLIGHT || dL == IO_CACHED);
    mS = (dS == IO_INFLIGHT);
    kD = 0;
    do
    :: kD <= mD ->
        kL = 0;
        do
        :: kL <= mL ->
            kS = 0;
            do
            :: kS <= mS -> check_one(); kS++
            :: else -> break
            od;
            kL++
        :: else -> break
        od;
        kD++
    :: else -> break
    od;
    kD = 0    /* a statement after the loop, so that its break stays in the d_step */
#else
    skip
#endif
}

/* Without the disk cache: the fsync's log, replayed, must hold X. */
inline fsync_return_check() {
#if !CRASH
    assert(!promise_X || (log_size_big && log_X))
#else
    skip
#endif
}

/* ---- shared code ------------------------------------------------------- */

/* unlock_extent: wake everyone on io_tree_wait (they re-check the range) */
inline unlock_extent() {
    io_locked = 0;
    if :: fl_waits_io -> fl_waits_io = 0; st_fl = RUN :: else -> skip fi;
    if :: fs_waits_io -> fs_waits_io = 0; st_fs = RUN :: else -> skip fi;
    if :: eio_waits_io -> eio_waits_io = 0; st_eio = RUN :: else -> skip fi
}

/* cow_file_range under the LOCKED range: a PINNED extent map on the list of
   modified extents, an ordered extent, the page under writeback */
inline cow_file_range() {
    assert(!em_exists);
    em_exists = 1; em_pinned = 1; em_gen = GEN_PINNED; em_listed = 1; em_logging = 0;
    assert(oe == OE_NONE);
    oe = OE_PENDING;
    page = P_WB
}

inline submit_data() {
    assert(dD == IO_NONE);
    dD = IO_INFLIGHT
}

/* join_transaction (no commit ever runs here, so it never waits) */
inline join_transaction() {
    if
    :: !trans_running -> gen++; trans_running = 1
    :: else -> skip
    fi;
    trans_writers++
}

/* inode lock release, handing it to a waiter (sim::Mutex::unlock) */
inline unlock_inode() {
    if
    :: app_waits_inode -> app_waits_inode = 0; inode_lock = APP; st_app = RUN
    :: fs_waits_inode -> fs_waits_inode = 0; inode_lock = FSYNCER; st_fs = RUN
    :: else -> inode_lock = NOTASK
    fi
}

/* ---- app: one buffered write of page X ----------------------------------- */

inline app_write() {
    /* lock_and_cleanup_extent_if_need: no ordered extent can be pending yet */
    assert(oe != OE_PENDING);
    page = P_DIRTY;
    isize_big = 1;
    unlock_inode()
}

active proctype App() {
    byte pc = 0;
    do
    :: d_step { st_app == RUN && pc == 0 && MAY(APP) -> TAKE(APP);
        if
        :: inode_lock == NOTASK -> inode_lock = APP; app_write(); pc = 2   /* yield write.after_dirty */
        :: else -> app_waits_inode = 1; st_app = BLK; pc = 1
        fi }
    :: d_step { st_app == RUN && pc == 1 && MAY(APP) -> TAKE(APP);
        assert(inode_lock == APP); app_write(); pc = 2 }
    :: d_step { st_app == RUN && pc == 2 && MAY(APP) -> TAKE(APP);
        write_done = 1;           /* oracle end_write: the write returned */
        st_app = FIN; pc = DONE }
    :: pc == DONE -> break
    od
}

/* ---- flusher: writeback not started by fsync ----------------------------- */

/* writeback_run from lock_extent on (also after a wake-up) */
inline flusher_lock_attempt() {
    if
    :: !io_locked ->
        io_locked = 1;
        if
        :: page == P_DIRTY -> cow_file_range(); pc = 2      /* yield flusher.after_delalloc */
        :: else -> unlock_extent(); st_fl = FIN; pc = DONE  /* someone else took the page */
        fi
    :: else -> fl_waits_io = 1; st_fl = BLK; pc = 1
    fi
}

active proctype Flusher() {
    byte pc = 0;
    do
    :: d_step { st_fl == RUN && pc == 0 && MAY(FLUSHER) -> TAKE(FLUSHER);
        if
        :: page != P_DIRTY -> st_fl = FIN; pc = DONE        /* nothing dirty */
        :: else -> flusher_lock_attempt()
        fi }
    :: d_step { st_fl == RUN && pc == 1 && MAY(FLUSHER) -> TAKE(FLUSHER);
        flusher_lock_attempt() }
    :: d_step { st_fl == RUN && pc == 2 && MAY(FLUSHER) -> TAKE(FLUSHER);
        unlock_extent(); submit_data(); crash_check(); pc = 3 }   /* yield flusher.after_submit */
    :: d_step { st_fl == RUN && pc == 3 && MAY(FLUSHER) -> TAKE(FLUSHER);
        st_fl = FIN; pc = DONE }
    :: pc == DONE -> break
    od
}

/* ---- reclaim: btrfs_releasepage -> try_release_extent_mapping ------------ */

/* R5: clear the page's io-tree state unless LOCKED; the page is freed */
inline release_page_end() {
    if
    :: !io_locked && page == P_CLEAN -> page = P_FREED
    :: else -> skip
    fi;
    st_rc = FIN; pc = DONE
}

/* R3 by variant, under em_tree.lock */
inline release_one() {
    if
    :: io_locked -> skip                                    /* LOCKED: keep */
#if VARIANT == 1
    :: !io_locked && em_listed && !em_logging -> skip       /* 1/3: keep a listed map */
#endif
#if VARIANT == 2
    :: !io_locked && em_listed && !em_logging && em_gen >= gen -> skip  /* 2/3 */
#endif
    :: else ->
        needs_full_sync = 1;                                /* before patch 3/3 */
        em_exists = 0; em_listed = 0; em_logging = 0        /* remove_extent_mapping */
    fi
}

active proctype Reclaim() {
    byte pc = 0;
    do
    :: d_step { st_rc == RUN && pc == 0 && MAY(RECLAIM) -> TAKE(RECLAIM);
        if
        :: page != P_CLEAN -> st_rc = FIN; pc = DONE       /* no clean page to offer */
        :: else -> pc = 1                                   /* yield release.before_em_lock */
        fi }
    :: d_step { st_rc == RUN && pc == 1 && MAY(RECLAIM) -> TAKE(RECLAIM);
        /* i_size > 16 MiB: lock em_tree, look up X's map */
        if
        :: !em_exists || em_pinned -> release_page_end()
        :: else -> release_one(); pc = 2                    /* yield release.after_em_unlock */
        fi }
    :: d_step { st_rc == RUN && pc == 2 && MAY(RECLAIM) -> TAKE(RECLAIM);
        release_page_end() }
    :: pc == DONE -> break
    od
}

/* ---- fsyncer: btrfs_sync_file -------------------------------------------- */

inline fs_wait_ordered() {
    if
    :: oe == OE_PENDING -> fs_waits_ordered = 1; st_fs = BLK; pc = 15
    :: else -> pc = 20                                      /* yield fsync.after_wait_ordered */
    fi
}

/* writeback_run from lock_extent on; second: the writeback of F4 */
inline fs_lock_attempt(second) {
    if
    :: !io_locked ->
        io_locked = 1;
        if
        :: page == P_DIRTY -> cow_file_range();
            if :: second -> pc = 12 :: else -> pc = 2 fi   /* yield flusher.after_delalloc */
        :: else -> unlock_extent();
            if :: second -> fs_wait_ordered() :: else -> pc = 10 fi
        fi
    :: else -> fs_waits_io = 1; st_fs = BLK;
        if :: second -> pc = 11 :: else -> pc = 1 fi
    fi
}

/* F4: writeback again, then wait for the ordered extent */
inline fs_second_writeback() {
    if
    :: page != P_DIRTY -> fs_wait_ordered()
    :: else -> fs_lock_attempt(1)
    fi
}

/* F11, F12 up to the log write: end the log transaction, drop the inode
   lock, btrfs_sync_log writes the log tree and waits for it */
inline fs_log_done() {
    logged_trans = gen;
    log_writers--;
    unlock_inode();
    assert(log_writers == 0);
    assert(dL == IO_NONE);
    dL = IO_INFLIGHT;
    crash_check();
    st_fs = BLK; pc = 25
}

active proctype Fsyncer() {
    byte pc = 0;
    bit full_path;
    do
    :: d_step { st_fs == RUN && pc == 0 && MAY(FSYNCER) -> TAKE(FSYNCER);
        promise_X = write_done;               /* oracle begin_fsync */
        if                                    /* F1: start writeback */
        :: page != P_DIRTY -> pc = 10         /* yield fsync.after_start_writeback */
        :: else -> fs_lock_attempt(0)
        fi }
    :: d_step { st_fs == RUN && pc == 1 && MAY(FSYNCER) -> TAKE(FSYNCER);
        fs_lock_attempt(0) }
    :: d_step { st_fs == RUN && pc == 2 && MAY(FSYNCER) -> TAKE(FSYNCER);
        unlock_extent(); submit_data(); crash_check(); pc = 3 }
    :: d_step { st_fs == RUN && pc == 3 && MAY(FSYNCER) -> TAKE(FSYNCER);
        pc = 10 }                             /* yield fsync.after_start_writeback */
    :: d_step { st_fs == RUN && pc == 10 && MAY(FSYNCER) -> TAKE(FSYNCER);
        if                                    /* F2: the inode lock */
        :: inode_lock == NOTASK -> inode_lock = FSYNCER; fs_second_writeback()
        :: else -> fs_waits_inode = 1; st_fs = BLK; pc = 14
        fi }
    :: d_step { st_fs == RUN && pc == 14 && MAY(FSYNCER) -> TAKE(FSYNCER);
        assert(inode_lock == FSYNCER); fs_second_writeback() }
    :: d_step { st_fs == RUN && pc == 11 && MAY(FSYNCER) -> TAKE(FSYNCER);
        fs_lock_attempt(1) }
    :: d_step { st_fs == RUN && pc == 12 && MAY(FSYNCER) -> TAKE(FSYNCER);
        unlock_extent(); submit_data(); crash_check(); pc = 13 }
    :: d_step { st_fs == RUN && pc == 13 && MAY(FSYNCER) -> TAKE(FSYNCER);
        fs_wait_ordered() }
    :: d_step { st_fs == RUN && pc == 15 && MAY(FSYNCER) -> TAKE(FSYNCER);
        fs_wait_ordered() }
    :: d_step { st_fs == RUN && pc == 20 && MAY(FSYNCER) -> TAKE(FSYNCER);
        /* F5: nothing to log? */
        if
        :: (trans_running && logged_trans == gen && !(em_exists && em_listed)) ||
           last_trans <= COMMITTED ->
            unlock_inode();
            fsync_returned = 1;               /* oracle end_fsync */
            fsync_return_check();
            crash_check();
            st_fs = FIN; pc = DONE
        :: else ->                            /* F6, F7: join, start_log_trans */
            join_transaction();
            log_writers++;
            pc = 21                           /* yield fsync.after_join */
        fi }
    :: d_step { st_fs == RUN && pc == 21 && MAY(FSYNCER) -> TAKE(FSYNCER);
        full_path = needs_full_sync;               /* F8, under I.log_mutex */
        pc = 22 }                             /* yield fsync.after_full_sync_check */
    :: d_step { st_fs == RUN && pc == 22 && MAY(FSYNCER) -> TAKE(FSYNCER);
        log_has_inode = 1;
        log_size_big = isize_big;             /* the live i_size */
        if
        :: full_path ->                          /* full path: copy the subvolume tree's items */
            needs_full_sync = 0;
            log_X = fs_X;
            em_listed = 0;
            fs_log_done()
        :: else -> pc = 23                    /* yield fsync.before_changed_extents_lock */
        fi }
    :: d_step { st_fs == RUN && pc == 23 && MAY(FSYNCER) -> TAKE(FSYNCER);
        /* F10: btrfs_log_changed_extents under em_tree.lock */
        if
        :: em_exists && em_listed ->
            em_listed = 0;
            if
            :: em_gen > COMMITTED -> em_logging = 1; pc = 24   /* yield fsync.logging_extent */
            :: else -> fs_log_done()
            fi
        :: else -> fs_log_done()
        fi }
    :: d_step { st_fs == RUN && pc == 24 && MAY(FSYNCER) -> TAKE(FSYNCER);
        log_X = 1;                            /* log_one_extent from its copy of the map */
        if :: em_exists -> em_logging = 0 :: else -> skip fi;
        fs_log_done() }
    :: d_step { st_fs == RUN && pc == 25 && MAY(FSYNCER) -> TAKE(FSYNCER);
        pc = 26 }                             /* yield sync_log.after_log_write */
    :: d_step { st_fs == RUN && pc == 26 && MAY(FSYNCER) -> TAKE(FSYNCER);
        flush_covers_D = (dD == IO_CACHED);   /* FLUSH covers what completed */
        flush_covers_L = (dL == IO_CACHED);
        dF = IO_INFLIGHT;
        st_fs = BLK; pc = 27 }
    :: d_step { st_fs == RUN && pc == 27 && MAY(FSYNCER) -> TAKE(FSYNCER);
        dS = IO_INFLIGHT;                     /* superblock naming the log, FUA */
        crash_check();
        st_fs = BLK; pc = 28 }
    :: d_step { st_fs == RUN && pc == 28 && MAY(FSYNCER) -> TAKE(FSYNCER);
        pc = 29 }                             /* yield sync_log.super_durable */
    :: d_step { st_fs == RUN && pc == 29 && MAY(FSYNCER) -> TAKE(FSYNCER);
        trans_writers--;                      /* F13 */
        fsync_returned = 1;                   /* oracle end_fsync */
        fsync_return_check();
        crash_check();
        st_fs = FIN; pc = DONE }
    :: pc == DONE -> break
    od
}

/* ---- endio: btrfs_finish_ordered_io, spawned at the bio's completion ----- */

inline endio_lock_attempt() {
    if
    :: !io_locked -> io_locked = 1; fs_X = 1; pc = 2   /* yield endio.after_extent_item */
    :: else -> eio_waits_io = 1; st_eio = BLK; pc = 1
    fi
}

active proctype Endio() {
    byte pc = 0;
end_unborn:
    d_step { st_eio == RUN && MAY(ENDIO) -> TAKE(ENDIO);
        join_transaction();                   /* E1 */
        pc = 1 };                             /* yield endio.after_join */
    do
    :: d_step { st_eio == RUN && pc == 1 && MAY(ENDIO) -> TAKE(ENDIO);
        endio_lock_attempt() }                /* E2, E3 */
    :: d_step { st_eio == RUN && pc == 2 && MAY(ENDIO) -> TAKE(ENDIO);
        if                                    /* E4: unpin_extent_cache */
        :: em_exists && em_pinned -> em_gen = gen; em_pinned = 0
        :: else -> skip
        fi;
        pc = 3 }                              /* yield endio.after_unpin */
    :: d_step { st_eio == RUN && pc == 3 && MAY(ENDIO) -> TAKE(ENDIO);
        fs_size_big = isize_big;              /* E5, E6 */
        last_trans = gen;
        unlock_extent();                      /* E7 */
        trans_writers--;
        oe = OE_COMPLETE;
        if :: fs_waits_ordered -> fs_waits_ordered = 0; st_fs = RUN :: else -> skip fi;
        st_eio = FIN; pc = DONE }
    :: pc == DONE -> break
    od
}

/* ---- the device: I/O completions (timers in crashsim) -------------------- */

active proctype Device() {
end_idle:
    do
    :: d_step { dD == IO_INFLIGHT && MAY_IO -> TAKE_IO;
        assert(INFLIGHT == 1);                /* one timer at a time, as crashsim's next timer */
        dD = IO_CACHED;
        page = P_CLEAN;                       /* end_page_writeback */
        st_eio = RUN;                         /* spawn endio */
        crash_check() }
    :: d_step { dL == IO_INFLIGHT && MAY_IO -> TAKE_IO;
        assert(INFLIGHT == 1);
        dL = IO_CACHED;
        st_fs = RUN;
        crash_check() }
    :: d_step { dF == IO_INFLIGHT && MAY_IO -> TAKE_IO;
        assert(INFLIGHT == 1);
        dF = IO_DURABLE;
        if :: flush_covers_D && dD == IO_CACHED -> dD = IO_DURABLE :: else -> skip fi;
        if :: flush_covers_L && dL == IO_CACHED -> dL = IO_DURABLE :: else -> skip fi;
        st_fs = RUN;
        crash_check() }
    :: d_step { dS == IO_INFLIGHT && MAY_IO -> TAKE_IO;
        assert(INFLIGHT == 1);
        dS = IO_DURABLE;                      /* FUA: durable at completion */
        st_fs = RUN;
        crash_check() }
    od
}
