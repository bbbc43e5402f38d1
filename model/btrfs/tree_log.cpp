// fsync and the log tree: btrfs_sync_file (fs/btrfs/file.c), btrfs_log_inode,
// btrfs_log_changed_extents, copy_items, start_log_trans and btrfs_sync_log
// (tree-log.c). Seeds: btrfs-fast-fsync-vs-page-release.txt (steps 5, 7, 8)
// and btrfs-log-commit-jiffy-sleep.txt (the log commit: leader and
// followers, log_batch, log_writers, two log transactions in flight by
// parity, MULTI_LOG_TASKS and the one-jiffy sleep; FIDELITY.md 2.2, v6.5).
// The log root tree level is folded into one step with its own mutex.
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"
#include "sim/assert.hpp"

namespace model::btrfs {

void Btrfs::fsync(std::uint32_t file) {
    Inode& inode = inodes_[file];
    const std::uint64_t all = ~std::uint64_t{0} / block_size_;
    // F1: start writeback of the dirty range.
    sim::cpu(cpu_cost::fsync_entry);
    writeback(file, 0, all, "fsync: writeback");
    sim::yield(points::fsync_after_start_writeback);
    // F2, F3: the inode lock; log_batch++.
    inode.inode_lock.lock();
    log_batch_++;
    // F4: start writeback again and wait for every ordered extent in range.
    writeback(file, 0, all, "fsync: writeback");
    wait_ordered_range(file, 0, all);
    sim::yield(points::fsync_after_wait_ordered);
    // F5: nothing to log if the inode is already in the log of the running
    // transaction, or was not changed since the last committed one.
    log_batch_++;
    const bool listed = !inode.em_tree.listed.empty();
    const bool in_log = transaction_running_ && inode.logged_trans == generation_ && !listed;
    if (in_log || inode.last_trans <= last_trans_committed_) {
        SIM_NOTE("fsync of inode " + name(file) + ": nothing to log (last_trans " +
                 std::to_string(inode.last_trans) + ", last committed " +
                 std::to_string(last_trans_committed_) + ")");
        counters_.fsyncs_skipped++;
        inode.inode_lock.unlock();
        return;
    }
    // F6, F7: join the running transaction; start_log_trans.
    const std::uint64_t transid = join_transaction();
    const std::uint64_t log_transid = start_log_trans();
    SIM_NOTE("fsync of inode " + name(file) + " joins transaction " + std::to_string(transid) +
             " and starts the log (log transaction " + std::to_string(log_transid) + ")");
    sim::yield(points::fsync_after_join);
    // F8 to F11.
    log_inode(file, transid);
    // end_log_trans
    SIM_ASSERT(log_writers_ > 0);
    if (--log_writers_ == 0) log_writer_wait_.wake_all();
    // F12: drop the inode lock and make the log durable.
    inode.inode_lock.unlock();
    sync_log(log_transid);
    // F13
    end_transaction();
    SIM_NOTE("fsync of inode " + name(file) + " returns 0");
}

void Btrfs::log_inode(std::uint32_t file, std::uint64_t transid) {
    Inode& inode = inodes_[file];
    inode.log_mutex.lock();
    // F8: the full-sync decision, taken before btrfs_log_changed_extents
    // locks the extent map tree.
    const bool full = inode.needs_full_sync;
    SIM_NOTE("btrfs_log_inode: NEEDS_FULL_SYNC is " + std::string(full ? "set" : "clear") +
             ": " + (full ? "full path (copy every item of the inode)" : "fast path (log the list of modified extents)"));
    sim::yield(points::fsync_after_full_sync_check);
    sim::cpu(cpu_cost::log_inode);
    // What this fsync logs, as a layer over what earlier fsyncs logged.
    InodeItems logged;
    if (full) {
        inode.needs_full_sync = false;
        log_inode_full(file, transid, logged);
    } else {
        // F9: the inode item, with the live i_size.
        logged.size_bytes = inode.size_bytes;
        SIM_NOTE("inode item logged with i_size " + std::to_string(inode.size_bytes));
        sim::yield(points::fsync_before_changed_extents_lock);
        log_changed_extents(file, transid, logged);
    }
    auto& head = log_tree_.inodes[file];
    head = std::make_shared<const LogLayer>(std::move(logged), full ? nullptr : head);
    // F11
    inode.logged_trans = transid;
    inode.log_mutex.unlock();
}

void Btrfs::log_inode_full(std::uint32_t file, std::uint64_t transid, InodeItems& logged) {
    Inode& inode = inodes_[file];
    // Drop the inode's items from the log and copy its items from the
    // subvolume tree: btrfs_search_forward with min_trans = transid visits
    // the leaves changed in this transaction, so these are the extent items
    // of this transaction (older ones are in the committed tree); copy_items
    // looks up the checksums of each (FIDELITY.md 1.2, F8).
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
    for (const auto& [disk_block, blocks] : sums) {
        sim::cpu(cpu_cost::copy_item);
        lookup_checksums(disk_block, blocks);
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

void Btrfs::log_changed_extents(std::uint32_t file, std::uint64_t transid, InodeItems& logged) {
    Inode& inode = inodes_[file];
    // F10: lock the tree; walk the list, unlinking each map; keep those newer
    // than the last committed transaction, marked LOGGING.
    inode.em_tree.lock.lock();
    const std::uint64_t test_gen = last_trans_committed_;
    std::vector<ExtentMap> to_log;
    std::uint64_t listed = 0;
    const std::set<std::uint64_t> on_list = std::move(inode.em_tree.listed);
    inode.em_tree.listed.clear();
    for (std::uint64_t start : on_list) {
        ExtentMap& em = inode.em_tree.maps.at(start);
        listed++;
        em.on_modified_list = false;
        if (em.generation <= test_gen) continue;
        em.logging = true;
        to_log.push_back(em);
    }
    std::string names;
    for (const auto& em : to_log) {
        names += " [" + std::to_string(bytes(em.start)) + ", +" + std::to_string(bytes(em.length)) + ")";
    }
    SIM_NOTE("btrfs_log_changed_extents locks the extent map tree: " + std::to_string(listed) +
             " extent map(s) on the list of modified extents, " + std::to_string(to_log.size()) +
             " newer than generation " + std::to_string(test_gen) + " to log" +
             (to_log.empty() ? std::string(": logs no file extent item") : ":" + names));
    for (const ExtentMap& em : to_log) {
        inode.em_tree.lock.unlock();
        sim::yield(points::fsync_logging_extent);
        // log_one_extent: a file extent item built from the map, plus the
        // checksums of that range only.
        logged.extents.assign(em.start, em.end(), FileExtentItem{em.block_start, em.generation, em.id});
        lookup_checksums(em.block_start, em.length);
        inode.em_tree.lock.lock();
        // clear_em_logging: the map may merge now that it is off the list.
        auto live = inode.em_tree.maps.find(em.start);
        if (live != inode.em_tree.maps.end() && live->second.id == em.id) {
            live->second.logging = false;
            try_merge_map(file, em.start);
        }
    }
    inode.em_tree.lock.unlock();
    counters_.fsyncs_fast++;
    SIM_MAYBE(transid > test_gen);
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
        log_root_exists_ = true;
        multi_log_tasks_ = false;
        log_start_task_ = self;
    }
    log_writers_++;
    const std::uint64_t log_transid = log_transid_;
    root_log_mutex_.unlock();
    return log_transid;
}

void Btrfs::wait_for_writer() {
    // Called with log_mutex held; drops it while waiting.
    while (log_writers_ > 0) {
        root_log_mutex_.unlock();
        log_writer_wait_.wait();
        root_log_mutex_.lock();
    }
}

void Btrfs::wait_log_commit(std::uint64_t log_transid) {
    // Called with log_mutex held; drops it while waiting.
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
    for (;;) {
        const std::uint64_t batch = log_batch_;
        if (!ssd_ && multi_log_tasks_ && knobs_.log_commit_sleep) {
            root_log_mutex_.unlock();
            jiffy_sleep();
            root_log_mutex_.lock();
        }
        wait_for_writer();
        if (batch == log_batch_) break;
    }
    // S6: start writing the log tree; S7: later fsyncs belong to the next
    // log transaction.
    sim::cpu(cpu_cost::log_commit);
    const std::uint64_t object = store(log_tree_);
    const std::uint64_t block = allocate_meta_block();
    sim::Completion written("log");
    device_.submit_write(block, 1, disk::Content::meta(object), false, "log",
                         [&written] { written.complete(); });
    log_transid_++;
    log_start_task_ = sim::no_task;
    root_log_mutex_.unlock();
    sim::yield(points::sync_log_root_released);
    // S8 to S11 (the log root tree level, folded): wait for the log blocks,
    // FLUSH, then the superblock with FUA naming this log.
    log_root_tree_mutex_.lock();
    written.wait();
    sim::yield(points::sync_log_after_log_write);
    device_.flush_and_wait();
    log_block_ = block;
    log_object_ = object;
    write_superblock(true, last_trans_committed_);
    log_root_tree_mutex_.unlock();
    // S12: hand the result to the followers.
    root_log_mutex_.lock();
    if (log_transid_committed_ < static_cast<std::int64_t>(log_transid)) {
        log_transid_committed_ = static_cast<std::int64_t>(log_transid);
    }
    log_committing_[index] = false;
    log_commit_wait_[index].wake_all();
    root_log_mutex_.unlock();
    counters_.log_commits++;
    SIM_NOTE("btrfs_sync_log: W(log) of log transaction " + std::to_string(log_transid) +
             ", FLUSH, superblock FUA: the log is durable");
    sim::yield(points::sync_log_super_durable);
}

}  // namespace model::btrfs
