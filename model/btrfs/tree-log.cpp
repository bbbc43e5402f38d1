// The log tree (fs/btrfs/tree-log.c): btrfs_log_inode_parent,
// btrfs_log_inode, btrfs_log_changed_extents, copy_items, start_log_trans
// and btrfs_sync_log, which btrfs_sync_file (file.cpp) calls. Seeds:
// "btrfs: fix race between page release and a fast fsync" (its steps 5, 7, 8)
// and "btrfs: stop sleeping for one jiffy in non-ssd mounts during log commit" (the log commit: leader and
// followers, log_batch, log_writers, two log transactions in flight by
// parity, MULTI_LOG_TASKS and the one-jiffy sleep of btrfs_sync_log, v6.5).
// The log root tree level is folded into one step with its own mutex.
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::btrfs {

auto Btrfs::log_inode_parent(std::uint32_t file, std::uint64_t transid, std::uint64_t& log_transid)
    -> LogInodeResult {
    SIM_LIVE(file, transid);
    Inode& inode = inodes_[file];
    // btrfs_log_inode_parent skips an inode already in the log before it
    // starts the log transaction (BTRFS_NO_LOG_SYNC: end the transaction, no
    // log sync). A log commit that became durable since F5 makes it true here.
    // Its other early returns (NOTREELOG, last_trans_log_full_commit, a root
    // being deleted, check_parent_dirs_for_sync, i_nlink == 0) cannot hold in
    // the model: no mount options, directories, unlinks or log failures.
    if (inode_in_log(inode, transid)) {
        SIM_NOTE("btrfs_log_inode_parent: inode " + name(file) +
                 " is already in a durable log (BTRFS_NO_LOG_SYNC)");
        counters_.fsyncs_skipped++;
        return LogInodeResult::no_log_sync;
    }
    // F7: start_log_trans.
    log_transid = start_log_trans();
    SIM_NOTE("fsync of inode " + name(file) + " joins transaction " + std::to_string(transid) +
             " and starts the log (log transaction " + std::to_string(log_transid) + ")");
    sim::yield(points::fsync_after_join);
    // F8 to F11.
    const bool logged = log_inode(file, transid);
    // end_log_trans
    SIM_ASSERT(log_writers_ > 0);
    if (--log_writers_ == 0) log_writer_wait_.wake_all();
    return logged ? LogInodeResult::logged : LogInodeResult::commit;
}

auto Btrfs::log_inode(std::uint32_t file, std::uint64_t transid) -> bool {
    SIM_LIVE(file, transid);
    Inode& inode = inodes_[file];
    inode.log_mutex.lock();
    // F8: the full-sync decision, taken before btrfs_log_changed_extents
    // locks the extent map tree.
    const bool full = inode.needs_full_sync;
    // What this fsync logs, as a layer over what earlier fsyncs logged.
    InodeItems logged;
    SIM_LIVE(full, logged);
    SIM_NOTE(
        "btrfs_log_inode: NEEDS_FULL_SYNC is " + std::string(full ? "set" : "clear") + ": " +
        (full ? "full path (copy every item of the inode)" : "fast path (log the list of modified extents)"));
    sim::yield(points::fsync_after_full_sync_check);
    sim::cpu(costs_.log_inode);
    if (full) {
        inode.needs_full_sync = false;
        log_inode_full(file, transid, logged);
    } else {
        // F9: the inode item, with the live i_size.
        logged.size_bytes = inode.size_bytes;
        SIM_NOTE("inode item logged with i_size " + std::to_string(inode.size_bytes));
        sim::yield(points::fsync_before_changed_extents_lock);
        if (!log_changed_extents(file, transid, logged)) {
            // The error path of btrfs_log_inode sets neither logged_trans nor
            // last_log_commit. The kernel's log keeps the inode item logged so
            // far and btrfs_set_log_full_commit turns every log sync of this
            // transaction into a commit; the model leaves the inode's items
            // of this fsync out of the log instead (the same durable result).
            inode.log_mutex.unlock();
            return false;
        }
    }
    auto& head = log_tree_.inodes[file];
    head = std::make_shared<const LogLayer>(std::move(logged), full ? nullptr : head);
    // F11: the end of btrfs_log_inode (LOG_INODE_ALL): the inode is in this
    // log transaction, durable once root->last_log_commit reaches it.
    inode.logged_trans = transid;
    inode.last_log_commit = inode.last_sub_trans;
    inode.log_mutex.unlock();
    return true;
}

void Btrfs::set_inode_last_trans(Inode& inode, std::uint64_t transid) {
    // btrfs_set_inode_last_trans (transaction.h, v5.7), called when the
    // inode item is updated in a transaction (btrfs_update_inode_item): the
    // inode now needs logging in the root's current log transaction.
    inode.last_trans = transid;
    inode.last_sub_trans = static_cast<std::int64_t>(log_transid_);
    inode.last_log_commit = last_log_commit_;
}

auto Btrfs::inode_in_log(const Inode& inode, std::uint64_t generation) const -> bool {
    // btrfs_inode_in_log (btrfs_inode.h, v5.7), the whole condition:
    //   logged_trans == generation &&
    //   last_sub_trans <= inode->last_log_commit &&
    //   last_sub_trans <= root->last_log_commit &&
    //   list_empty(&extent_tree.modified_extents)
    // v5.13 dropped the list_empty test (ranged fsyncs were gone) and later
    // kernels read root->last_log_commit with READ_ONCE
    // (btrfs_get_root_last_log_commit); the model follows v5.7.
    return inode.logged_trans == generation && inode.last_sub_trans <= inode.last_log_commit &&
           inode.last_sub_trans <= last_log_commit_ && inode.em_tree.listed.empty();
}

void Btrfs::log_inode_full(std::uint32_t file, std::uint64_t transid, InodeItems& logged) {
    SIM_LIVE(file, transid);
    Inode& inode = inodes_[file];
    // Drop the inode's items from the log and copy its items from the
    // subvolume tree: btrfs_search_forward with min_trans = transid visits
    // the leaves changed in this transaction, so these are the extent items
    // of this transaction (older ones are in the committed tree); copy_items
    // looks up the checksums of each (F8).
    logged.size_bytes = inode.size_bytes;
    std::uint64_t items = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sums;  // disk block, blocks
    const InodeItems& source = fs_tree_.inodes[file];
    source.extents.for_each([&](std::uint64_t start, std::uint64_t end, const FileExtentItem& item) {
        if (item.generation < transid) return;
        logged.extents.assign(start, end, item);
        sums.emplace_back(item.disk_block, end - start);
        items++;
    });
    std::size_t copied = 0;
    SIM_LIVE(items, sums, copied);
    for (; copied < sums.size(); copied++) {
        sim::cpu(costs_.copy_item);
        lookup_checksums(sums[copied].first, sums[copied].second);
    }
    // Every map of the inode leaves the list of modified extents.
    inode.em_tree.lock.lock();
    for (std::uint64_t start : inode.em_tree.listed) inode.em_tree.maps.at(start).on_modified_list = false;
    inode.em_tree.listed.clear();
    inode.em_tree.lock.unlock();
    counters_.fsyncs_full++;
    SIM_NOTE("full fsync copies " + std::to_string(items) +
             " file extent item(s) from the subvolume tree into the log, i_size " +
             std::to_string(inode.size_bytes));
}

auto Btrfs::log_changed_extents(std::uint32_t file, std::uint64_t transid, InodeItems& logged)
    -> bool {
    SIM_LIVE(file, transid);
    Inode& inode = inodes_[file];
    // F10: lock the tree; walk the list, unlinking each map; keep those newer
    // than the last committed transaction, marked LOGGING.
    inode.em_tree.lock.lock();
    const std::uint64_t test_gen = last_trans_committed_;
    std::vector<ExtentMap> to_log;
    std::uint64_t listed = 0;
    const std::set<std::uint64_t> on_list = std::move(inode.em_tree.listed);
    inode.em_tree.listed.clear();
    const std::uint64_t num = walk_modified_list(inode, on_list, test_gen, to_log, listed);
    if (num > log_changed_extents_max) {
        for (std::uint64_t start : on_list) inode.em_tree.maps.at(start).on_modified_list = false;
        for (const ExtentMap& em : to_log) clear_em_logging(file, em);
        inode.em_tree.lock.unlock();
        SIM_NOTE("btrfs_log_changed_extents: more than " + std::to_string(log_changed_extents_max) +
                 " on the list of modified extents (" + std::to_string(on_list.size()) +
                 "): -EFBIG, the list is emptied and nothing is logged");
        return false;
    }
    SIM_NOTE("btrfs_log_changed_extents locks the extent map tree: " + std::to_string(listed) +
             " extent map(s) on the list of modified extents, " + std::to_string(to_log.size()) +
             " newer than generation " + std::to_string(test_gen) + " to log" + extents_text(to_log));
    std::size_t next = 0;
    SIM_LIVE(test_gen, to_log, next);
    for (; next < to_log.size(); next++) {
        const ExtentMap& em = to_log[next];
        inode.em_tree.lock.unlock();
        sim::yield(points::fsync_logging_extent);
        log_one_extent(em, logged);
        inode.em_tree.lock.lock();
        clear_em_logging(file, em);
    }
    inode.em_tree.lock.unlock();
    counters_.fsyncs_fast++;
    SIM_MAYBE(transid > test_gen);
    return true;
}

auto Btrfs::walk_modified_list(Inode& inode, const std::set<std::uint64_t>& on_list, std::uint64_t test_gen,
                               std::vector<ExtentMap>& to_log, std::uint64_t& listed) -> std::uint64_t {
    // btrfs_log_changed_extents' filters (v5.7): every map visited leaves the
    // list; one at most as old as the last committed transaction is skipped;
    // the rest are taken (LOGGING). The count passes the limit on visits and
    // again on each map taken, as the kernel's num does; past it the whole
    // list is emptied and nothing is logged (-EFBIG). Not modelled, as no map
    // is PREALLOC: prealloc maps past i_size are skipped (and logged later by
    // btrfs_log_prealloc_extents). v5.7 logs the whole file, as every fsync of
    // the model asks.
    std::uint64_t num = 0;
    for (std::uint64_t start : on_list) {
        ExtentMap& em = inode.em_tree.maps.at(start);
        listed++;
        em.on_modified_list = false;
        if (++num > log_changed_extents_max) break;
        if (em.generation <= test_gen) continue;
        em.logging = true;
        to_log.push_back(em);
        num++;
    }
    return num;
}

auto Btrfs::extents_text(const std::vector<ExtentMap>& to_log) const -> std::string {
    if (to_log.empty()) return ": logs no file extent item";
    std::string names;
    for (const auto& em : to_log) {
        names += " " + range_text(bytes(em.start), bytes(em.end()));
    }
    return ":" + names;
}

void Btrfs::log_one_extent(const ExtentMap& em, InodeItems& logged) {
    // log_one_extent: a file extent item built from the map, plus the
    // checksums of that range only.
    logged.extents.assign(em.start, em.end(), FileExtentItem{em.block_start, em.generation, em.id});
    lookup_checksums(em.block_start, em.length);
}

void Btrfs::clear_em_logging(std::uint32_t file, const ExtentMap& em) {
    // clear_em_logging, on the live map if it is still the one the fsync
    // took: the map may merge now that it is off the list.
    ExtentMapTree& tree = inodes_[file].em_tree;
    auto live = tree.maps.find(em.start);
    if (live == tree.maps.end() || live->second.id != em.id) return;
    live->second.logging = false;
    try_merge_map(file, em.start);
}

auto Btrfs::start_log_trans() -> std::uint64_t {
    const sim::TaskId self = sim::current_scheduler().current();
    root_log_mutex_.lock();
    // MULTI_LOG_TASKS: a second task logging in the same log transaction.
    if (log_root_exists_) {
        if (log_start_task_ == sim::no_task) {
            multi_log_tasks_ = false;
            log_start_task_ = self;
        } else if (log_start_task_ != self) {
            multi_log_tasks_ = true;
        }
    } else {
        // btrfs_add_log_tree: a new log tree restarts the root's log
        // transactions at 0; last_log_commit 0 (not -1, unlike
        // log_transid_committed).
        log_root_exists_ = true;
        log_transid_ = 0;
        log_transid_committed_ = -1;
        last_log_commit_ = 0;
        multi_log_tasks_ = false;
        log_start_task_ = self;
    }
    // start_log_trans counts itself in log_batch too.
    log_batch_++;
    log_writers_++;
    const std::uint64_t log_transid = log_transid_;
    root_log_mutex_.unlock();
    return log_transid;
}

void Btrfs::wait_for_writer() {
    // Called with log_mutex held; drops it while waiting.
    SIM_ASSERT(root_log_mutex_.held());
    while (log_writers_ > 0) {
        root_log_mutex_.unlock();
        log_writer_wait_.wait();
        root_log_mutex_.lock();
    }
}

void Btrfs::wait_log_commit(std::uint64_t log_transid) {
    SIM_LIVE(log_transid);
    // Called with log_mutex held; drops it while waiting.
    SIM_ASSERT(root_log_mutex_.held());
    const std::size_t index = log_transid % 2;
    while (log_committing_[index] && log_transid_committed_ < static_cast<std::int64_t>(log_transid)) {
        root_log_mutex_.unlock();
        log_commit_wait_[index].wait();
        root_log_mutex_.lock();
    }
}

void Btrfs::jiffy_sleep() {
    // A one-jiffy timeout lands one timer-wheel bucket late so it never fires
    // early: the task wakes on the second tick after the call, (1, 2] jiffies.
    const sim::Duration jiffy = sim::seconds / knobs_.hz;
    const sim::Instant now = sim::now();
    const sim::Duration delay = knobs_.jiffy_tick_aligned ? (now / jiffy + 2) * jiffy - now : jiffy;
    counters_.jiffy_sleeps++;
    SIM_NOTE("btrfs_sync_log: MULTI_LOG_TASKS is set on a non-ssd mount: the leader drops "
             "log_mutex and sleeps one jiffy (" + std::to_string(delay / sim::microseconds) + " us)");
    sim::current_scheduler().sleep(delay);
}

void Btrfs::sync_log(std::uint64_t log_transid) {
    SIM_LIVE(log_transid);
    root_log_mutex_.lock();
    // S1: a later commit already covered this log transaction.
    if (log_transid_committed_ >= static_cast<std::int64_t>(log_transid)) {
        root_log_mutex_.unlock();
        return;
    }
    const std::size_t index = log_transid % 2;
    // S2: someone leads this log transaction's commit: follow it.
    if (log_committing_[index]) {
        counters_.log_followers++;
        SIM_NOTE("btrfs_sync_log: log transaction " + std::to_string(log_transid) +
                 " is being committed by another task; waiting for it (follower)");
        wait_log_commit(log_transid);
        root_log_mutex_.unlock();
        return;
    }
    // S3: lead it; the previous log transaction commits first.
    log_committing_[index] = true;
    if (log_transid > 0 && log_committing_[(index + 1) % 2]) wait_log_commit(log_transid - 1);
    // S4: let more fsyncs join while they keep arriving.
    wait_log_batch();
    // S6: start writing the log tree; S7: later fsyncs belong to the next
    // log transaction. The leader writes the log transaction it leads, the
    // running one, with no writer left in it.
    SIM_ASSERT(log_root_exists_ && log_transid_ == log_transid);
    SIM_ASSERT(log_writers_ == 0 && log_committing_[index]);
    sim::cpu(costs_.log_commit);
    const std::uint64_t object = store(log_tree_);
    const std::uint64_t block = allocate_meta_block();
    sim::Completion written("log");
    SIM_LIVE(object, block, written);
    device_.submit_write(block, 1, disk::Content::meta(object), false, "log",
                         [&written] { written.complete(); });
    // The log tree's blocks are written (BTRFS_HEADER_FLAG_WRITTEN): the next
    // change to each copies it first (should_cow_block).
    log_csum_tree_.generation++;
    log_transid_++;
    log_start_task_ = sim::no_task;
    root_log_mutex_.unlock();
    sim::yield(points::sync_log_root_released);
    // S8 to S11 (the log root tree level, folded).
    write_log_root_tree(block, object, written);
    // S12
    end_log_commit(log_transid);
    counters_.log_commits++;
    SIM_NOTE("btrfs_sync_log: W(log) of log transaction " + std::to_string(log_transid) +
             ", FLUSH, superblock FUA: the log is durable");
    sim::yield(points::sync_log_super_durable);
}

void Btrfs::wait_log_batch() {
    // btrfs_sync_log's loop (called with log_mutex held): while the batch
    // grew since the last look, sleep a jiffy when MULTI_LOG_TASKS is set on
    // a non-ssd mount, then wait for the writers of the log transaction.
    for (;;) {
        const std::uint64_t batch = log_batch_;
        SIM_LIVE(batch);
        if (!ssd_ && multi_log_tasks_ && knobs_.log_commit_sleep) {
            root_log_mutex_.unlock();
            jiffy_sleep();
            root_log_mutex_.lock();
        }
        wait_for_writer();
        if (batch == log_batch_) break;
    }
}

void Btrfs::write_log_root_tree(std::uint64_t block, std::uint64_t object, sim::Completion& written) {
    SIM_LIVE(block, object, written);
    // Wait for the log blocks, FLUSH, then the superblock with FUA naming
    // this log.
    log_root_tree_mutex_.lock();
    written.wait();
    sim::yield(points::sync_log_after_log_write);
    device_.flush_and_wait();
    log_block_ = block;
    log_object_ = object;
    write_superblock(true, last_trans_committed_);
    log_root_tree_mutex_.unlock();
}

void Btrfs::end_log_commit(std::uint64_t log_transid) {
    SIM_LIVE(log_transid);
    // The log transaction is durable: root->last_log_commit (v5.10 guards it
    // with "if (root->last_log_commit < log_transid)"; newer kernels assert
    // it instead); then hand the result to the followers.
    const std::size_t index = log_transid % 2;
    root_log_mutex_.lock();
    // Only the leader clears its slot, and log transactions commit in order
    // (S3 waited for the previous one): none newer is committed yet.
    SIM_ASSERT(log_committing_[index]);
    SIM_ASSERT(log_transid_committed_ < static_cast<std::int64_t>(log_transid));
    last_log_commit_ = std::max(last_log_commit_, static_cast<std::int64_t>(log_transid));
    if (log_transid_committed_ < static_cast<std::int64_t>(log_transid)) {
        log_transid_committed_ = static_cast<std::int64_t>(log_transid);
    }
    log_committing_[index] = false;
    log_commit_wait_[index].wake_all();
    root_log_mutex_.unlock();
}

}  // namespace model::btrfs
