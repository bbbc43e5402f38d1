// The ext4/jbd2 model's registration (fs/ext4/super.c registers ext4 and
// parses its mount options): its description, its knob, its factory.
//
// Why the model is named "ext4": a scenario mounts and runs ext4 (create,
// write, fsync are ext4's file operations); jbd2 is the journal layer inside
// it (model/jbd2/), where the seed's code lives; the scenarios' folder is
// scenarios/jbd2/, after it. The model's entry point, its daemons, its mount.
#include <algorithm>
#include <optional>
#include <set>

#include "model/cpu_cost.hpp"
#include "model/declare.hpp"
#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "model/registry.hpp"

namespace model::ext4 {

auto Ext4::clone() const -> std::unique_ptr<FileSystem> {
    return std::make_unique<Ext4>(*this);
}

void Ext4::start_daemons() {
    auto& scheduler = sim::current_scheduler();
    kjournald2_running_ = true;
    scheduler.spawn_daemon("kjournald2", [this] { kjournald2(); });
    scheduler.spawn_daemon("jbd2_commit_timer", [this] { commit_timer(); });
    scheduler.spawn_daemon("flusher", [this] { flusher(); });
}

auto Ext4::op_name() const -> std::string {
    const auto found = task_op_.find(sim::current_scheduler().current());
    return found == task_op_.end() ? std::string("kernel") : found->second;
}

auto Ext4::op_footprint(const OpCall& call) const -> sim::Footprint {
    // The stretch from the operation's start to its first yield point,
    // through any wait on the way, is covered by no point.
    using namespace points;
    switch (op_of<Op>(call)) {
        case Op::create:
        case Op::mkdir:
        case Op::unlink:
        case Op::rmdir:
        case Op::write:
            return footprint_of({journal, buffer, inode, log});
        case Op::fsync:
        case Op::sync:
            return footprint_of({journal, buffer, inode});
        case Op::checkpoint:
            return footprint_of({journal, checkpoint, buffer, log});
        case Op::shrink:
            return footprint_of({journal, checkpoint, buffer});
    }
    return sim::footprint_all;
}

auto Ext4::file_op(const OpCall& call) -> OpResult {
    // write, fsync and unlink of a file: one whose create failed (ENOENT,
    // ENOSPC), or that was unlinked, has no inode: EBADF, or ENOENT for unlink.
    if (inodes_[call.file].ino == 0) {
        SIM_NOTE(std::string(call.name) + " " + name(call.file) +
                 (op_of<Op>(call) == Op::unlink ? ": ENOENT" : ": no such file (its create failed)"));
        return OpResult::failed;
    }
    if (op_of<Op>(call) == Op::fsync) {
        fsync(call.file);
        return OpResult::ok;
    }
    if (op_of<Op>(call) == Op::unlink) {
        unlink(call.file);
        return OpResult::ok;
    }
    // ENOSPC: the write returns the error and acknowledges nothing, or the
    // bytes it copied before it.
    const std::uint64_t copied = write(call);
    if (copied == 0) return OpResult::failed;
    if (copied >= call.length) return OpResult::ok;
    call.copied = copied;
    return OpResult::short_write;
}

auto Ext4::execute(const OpCall& call) -> OpResult {
    task_op_[sim::current_scheduler().current()] = std::string(call.name);
    counters_.ops[std::string(call.name)]++;
    OpResult result = OpResult::ok;
    switch (op_of<Op>(call)) {
        case Op::create:
            if (inodes_[call.file].ino == 0) create(call.file);
            if (inodes_[call.file].ino == 0) result = OpResult::failed;
            break;
        case Op::write:
        case Op::fsync:
        case Op::unlink:
            result = file_op(call);
            break;
        case Op::checkpoint: {
            // jbd2_journal_flush's and __jbd2_log_wait_for_space's call, under j_checkpoint_mutex.
            sim::MutexGuard guard(j_checkpoint_mutex_);
            do_checkpoint();
            break;
        }
        case Op::shrink:
            shrink_checkpoint_list();
            break;
        case Op::mkdir:
            if (live_dir(name(call.file)) == nullptr) mkdir(call.file);
            if (live_dir(name(call.file)) == nullptr) result = OpResult::failed;
            break;
        case Op::rmdir:
            if (!rmdir(call.file)) result = OpResult::failed;
            break;
        case Op::sync:
            sync();
            break;
    }
    task_op_.erase(sim::current_scheduler().current());
    return result;
}

auto Ext4::counters() const -> std::map<std::string, std::uint64_t> {
    return counter_values(counter_table, *this, counters_, device_.counters());
}

void Ext4::flusher() {
    // wb_workfn every dirty_writeback_interval: write back the block device's
    // dirty buffers older than dirty_expire_interval (__block_write_full_page,
    // WB_SYNC_NONE: trylock_buffer, clear BH_Dirty at submission, unlock at
    // completion). JBDDirty buffers are not dirty to writeback.
    for (;;) {
        sim::current_scheduler().sleep(dirty_writeback_interval);
        cover({points::buffer});  // woken by its timer: no yield point covers this stretch
        std::uint64_t submitted = 0;
        for (const auto& [block, buffer] : bcache_.buffers()) {
            BufferHead& bh = bcache_.get(block);
            // A buffer the set-up dirtied carries the set-up's clock: not expired before it.
            if (!bh.dirty || sim::now() < bh.dirtied_at + dirty_expire_interval) continue;
            if (!BufferCache::trylock_buffer(bh)) continue;
            if (!BufferCache::test_clear_buffer_dirty(bh)) {
                bcache_.unlock_buffer(bh);
                continue;
            }
            bcache_.submit_write(device_, bh, store(live_.at(block)), "meta");
            counters_.flusher_writes++;
            submitted++;
        }
        if (submitted > 0) {
            SIM_NOTE("flusher: " + std::to_string(submitted) + " expired metadata buffers submitted");
            sim::yield(points::flusher_submitted);
        }
    }
}

auto Ext4::recover(const disk::Image& image) const -> RecoveredState {
    return mount(image, nullptr);
}

auto Ext4::mount(const disk::Image& image, ReplayPlan* plan) const -> RecoveredState {
    RecoveredState state;
    state.device_blocks = device_.block_count();
    state.metadata_end = groups_[0].data_start;  // group 0's; later groups' bitmaps and tables lie past it
    state.files.resize(file_names_.size());
    HomeBlocks home;
    for (const Group& group : groups_) {
        for (std::uint64_t block = group.block_bitmap; block < group.data_start; block++)
            home[block] = home_block(image, block);
    }
    std::map<std::uint64_t, disk::Content> replayed;
    recover_journal(image, home, replayed, state, plan);
    if (!state.mount_error.empty()) return state;
    state.mounted = true;
    std::set<std::uint64_t> dir_blocks;
    recover_names(image, home, replayed, state, dir_blocks);
    // Logged subdirectory blocks no recovered directory maps any more.
    for (const JournalTransaction& transaction : state.journal->durable) {
        for (const JournalUpdate& update : transaction.updates) {
            if (!is_static_meta(update.block) && dir_blocks.count(update.block) == 0)
                state.journal->not_metadata.insert(update.block);
        }
    }
    return state;
}

auto Ext4::home_block(const disk::Image& image, std::uint64_t block) const -> const MetaBlock* {
    const MetaBlock* meta = meta_objects_.find<MetaBlock>(image.read(block));
    SIM_ASSERT(meta != nullptr && meta->block == block);  // mkfs wrote every metadata block
    return meta;
}

auto Ext4::block_free(const HomeBlocks& home, std::uint64_t device_block) const -> bool {
    // Free in the recovered block bitmap, or outside every group's data.
    if (device_block < groups_[0].block_bitmap) return true;
    const Group& group = groups_[group_of_block(device_block)];
    const auto& bits = home.at(group.block_bitmap)->bits;
    return device_block < group.data_start || device_block - group.data_start >= bits.size() ||
           !bits[device_block - group.data_start];
}

void Ext4::recover_file(const disk::Image& image, const std::map<std::uint64_t, disk::Content>& replayed,
                        const InodeRecord& record, RecoveredFile& recovered) const {
    recovered.exists = true;
    recovered.size_bytes = record.size;
    for (const auto& [file_block, device_block] : record.blocks) {
        recovered.extents.push_back({file_block, device_block, 1, false});
        // A block PASS_REPLAY wrote reads as the log copy it wrote there.
        const auto copy = replayed.find(device_block);
        if (copy != replayed.end()) {
            recovered.blocks.assign(file_block, file_block + 1, copy->second);
        } else {
            recovered.read_mapped(image, file_block, device_block, 1);
        }
    }
}

void Ext4::recover_names(const disk::Image& image, const HomeBlocks& home,
                         const std::map<std::uint64_t, disk::Content>& replayed, RecoveredState& state,
                         std::set<std::uint64_t>& dir_blocks) const {
    // ext4: names in the root directory and its subdirectories, inodes in the
    // tables, blocks in the bitmaps. A subdirectory's block is metadata that
    // mkfs did not write: after replay, or at home, or never written (empty).
    std::map<std::string, std::uint32_t> by_path;
    for (std::uint32_t file = 0; file < file_names_.size(); file++) by_path[file_names_[file]] = file;
    const auto inode_of = [&](std::uint64_t ino) -> const InodeRecord& {
        return home.at(inode_block(ino))->inodes[ino % inodes_per_block];
    };
    static const MetaBlock never_written;
    const auto dir_block = [&](std::uint64_t block) -> const MetaBlock* {
        const auto replayed = home.find(block);
        if (replayed != home.end()) return replayed->second;
        const MetaBlock* meta = meta_objects_.find<MetaBlock>(image.read(block));
        return meta != nullptr && meta->block == block ? meta : &never_written;
    };
    std::vector<std::pair<std::string, const MetaBlock*>> directories;  // path prefix, block
    for (std::uint64_t block = dir_start_; block < groups_[0].data_start; block++)
        directories.emplace_back("", home.at(block));
    for (std::size_t d = 0; d < directories.size(); d++) {
        const std::string prefix = directories[d].first;
        const auto& entries = directories[d].second->entries;  // a stored block: never moves
        for (const auto& [entry, ino] : entries) {
            const InodeRecord& record = inode_of(ino);
            if (!record.used) {
                state.consistency_errors.push_back("directory entry " + prefix + entry + " names inode " +
                                                   std::to_string(ino) + ", which is not in use");
                continue;
            }
            if (!home.at(groups_[ino / inodes_per_group].inode_bitmap)->bits[ino % inodes_per_group]) {
                state.consistency_errors.push_back("inode " + std::to_string(ino) + " (" + prefix + entry +
                                                   ") is in use but free in the inode bitmap");
            }
            for (const auto& [file_block, device_block] : record.blocks) {
                if (block_free(home, device_block)) {
                    state.consistency_errors.push_back("inode " + std::to_string(ino) + " maps block " +
                                                       std::to_string(device_block) +
                                                       ", which is free in the block bitmap");
                }
                if (!record.directory) continue;
                directories.emplace_back(prefix + entry + "/", dir_block(device_block));
                dir_blocks.insert(device_block);
            }
            const auto file = by_path.find(prefix + entry);
            if (file == by_path.end()) continue;
            // A directory is found as stat finds it after the mount: it exists, and holds no
            // data of a file (the real kernel's crash states read it so: kernel/crash.cpp).
            state.files[file->second].exists = true;
            if (!record.directory) recover_file(image, replayed, record, state.files[file->second]);
        }
    }
}

namespace {

auto json_text(const std::string& value) -> std::string {
    return "\"" + value + "\"";
}

// The series "jbd2: fix checkpoint cleanup performance regression": one value per tree, cumulative, as
// read in the kernel:
// - hybrid-v5.8: v5.8's commit-time cleanup, journal_clean_one_cp_list,
//   which returns at the first buffer __try_to_free_cp_buf cannot free
//   (jh->b_transaction == NULL && !buffer_locked && !buffer_dirty), and
//   v5.8's jbd2_journal_forget (!buffer_dirty), with no checkpoint shrinker
//   (jbd2_journal_shrink_checkpoint_list came in v5.16); its
//   jbd2_log_do_checkpoint is v6.5's, one checkpoint list per transaction,
//   where v5.8 also kept t_checkpoint_io_list and drained it in a second
//   loop (restart2). No kernel is this mixture: the name says so.
// - v6.5: b98dba273a0e ("jbd2: remove journal_clean_one_cp_list()") merged
//   the cleanup into journal_shrink_one_cp_list, which skips busy buffers,
//   and 46f881b5b175 ("jbd2: fix a race when checking checkpoint buffer
//   busy") replaced __cp_buffer_busy (which tested b_transaction) with
//   jbd2_journal_try_remove_checkpoint (trylock_buffer and buffer_dirty).
// - patch-1: mainline at 373ac521799d ("jbd2: fix checkpoint cleanup
//   performance regression", patch 1/3): SHRINK_BUSY_STOP at commit, still
//   no b_transaction test. The next commit, 590a809ff743 (patch 2/3), came
//   in the same v6.6-rc1 merge, and the stable backports took the two
//   together: no release has 1/3 without 2/3.
// - patch-2: 590a809ff743 ("jbd2: Check 'jh->b_transaction' before
//   removing it from checkpoint"), v6.6: a buffer with b_transaction set
//   is busy.
// A tree with 2/3 and not 1/3 was never published.
const Knob<Tree> checkpoint_tree{
    "checkpoint_cleanup",
    {{"hybrid-v5.8", Tree::v5_8},
     {"v6.5", Tree::v6_5},
     {"patch-1", Tree::patch_1},
     {"patch-2", Tree::patch_2}},
    "patch-2",
    "the jbd2 checkpoint-list cleanup of a tree: hybrid-v5.8 (v5.8's journal_clean_one_cp_list, stopping at "
    "the first buffer that cannot be freed, b_transaction set busy, no shrinker; in v6.5's "
    "jbd2_log_do_checkpoint with one checkpoint list, not v5.8's checkpoint and io lists: no kernel), "
    "v6.5 (journal_shrink_one_cp_list skips busy buffers at commit; b_transaction not tested), patch-1 "
    "(mainline 373ac521799d, v6.5 + patch 1/3: SHRINK_BUSY_STOP at commit; no release has it without "
    "2/3), patch-2 (590a809ff743, v6.6: + patch 2/3, a buffer re-logged by a running transaction is busy)"};

// mkfs.ext4 -J size=: the journal's size. "scaled" is the model's own small
// journal (a eighth of the device, 64..1024 blocks), which keeps the race
// scenario's log short; the others are the sizes ext2fs_default_journal_size
// (e2fsprogs lib/ext2fs/mkjournal.c) picks by file system size, 1G from 128 GiB
// up. In bytes.
const Knob<std::uint64_t> journal_size{
    "journal_size",
    {{"scaled", 0},
     {"4M", std::uint64_t{4} << 20},
     {"16M", std::uint64_t{16} << 20},
     {"32M", std::uint64_t{32} << 20},
     {"64M", std::uint64_t{64} << 20},
     {"128M", std::uint64_t{128} << 20},
     {"256M", std::uint64_t{256} << 20},
     {"512M", std::uint64_t{512} << 20},
     {"1G", std::uint64_t{1} << 30}},
    "scaled",
    "mkfs.ext4 -J size=: scaled (the model's small journal, device/8 within 64..1024 "
    "blocks), or one of the sizes mkfs picks by file system size (4M .. 1G; 1G from 128 GiB up)"};

// Revoke records (fs/jbd2/revoke.c) are in every kernel with jbd2; the only
// other value is a hypothetical kernel whose ext4_forget treats a freed
// directory block as it treats a data block (jbd2_journal_forget, no record),
// which shows what the records protect: recovery then replays an older copy
// of the block over what it holds after reuse.
const Knob<bool> revoke_records{
    "revoke",
    {{"yes", true}, {"hypothetical-none", false}},
    "yes",
    "yes (jbd2_journal_revoke writes a revoke record for each freed metadata block: every real kernel), or "
    "hypothetical-none (no kernel: freed directory blocks are forgotten without a record)"};

auto ops() -> std::vector<OpInfo> {
    return op_table<Op>({
        {Op::create,
         {"create",
          "ext4_create in one handle: a bit of the inode bitmap, the inode in its inode-table block, "
          "the name in a directory block (do_get_write_access and jbd2_journal_dirty_metadata on each); "
          "a name \"D/NAME\" goes into directory D (made by mkdir), its inode in D's group",
          {file_field()},
          true}},
        {Op::write,
         {"write",
          "buffered write: allocate holes in the block bitmap, log the inode's block map and size, "
          "dirty the pages (written before the commit: data=ordered)",
          range_fields(true), false, OracleEffect::write_data}},
        {Op::fsync,
         {"fsync",
          "ext4_sync_file: write and wait for the file's dirty pages, then force the commit of the "
          "inode's transaction and wait (or FLUSH when it already committed)",
          {file_field()},
          false,
          OracleEffect::fsync_file}},
        {Op::checkpoint,
         {"checkpoint",
          "jbd2_log_do_checkpoint under j_checkpoint_mutex, as __jbd2_log_wait_for_space runs it when "
          "the log is short of space, run as if it were: the op does not make __jbd2_log_wait_for_space's "
          "test (jbd2_log_space_left below j_max_transaction_buffers; a handle's start makes it, "
          "journal_start) and stands for a task that found the log short: advance the tail (FLUSH, "
          "journal superblock) or write the oldest transaction's buffers home in batches of 64, then "
          "advance the tail",
          {}}},
        {Op::shrink,
         {"shrink",
          "one scan of the checkpoint shrinker (ext4_journal_scan_objects -> "
          "jbd2_journal_shrink_checkpoint_list, SHRINK_BUSY_SKIP): nr_to_scan is SHRINK_BATCH (128) or "
          "the checkpoint buffers' count if fewer, counted down by the buffers freed; the walk resumes at "
          "the transaction the last scan stopped before (j_shrink_transaction); nothing on hybrid-v5.8",
          {}}},
        {Op::mkdir,
         {"mkdir",
          "ext4_mkdir in the root directory, in one handle: find_group_orlov spreads the directories "
          "over the block groups (the group with the fewest); the inode bitmap, the inode, the "
          "directory's first block (block bitmap) and its name in the root. A created file named "
          "\"D/NAME\" goes into directory D: find_group_other puts its inode in D's group",
          {file_field()},
          true,
          OracleEffect::none,
          true}},
        {Op::unlink,
         {"unlink",
          "ext4_unlink and the final iput's ext4_evict_inode in one handle: the name leaves its "
          "directory block, the file's blocks are cleared in the block bitmap (reusable once this "
          "transaction commits), the inode is cleared in its inode-table block and its bit in the "
          "inode bitmap (the number is reusable at once)",
          {file_field()},
          false,
          OracleEffect::remove_file}},
        {Op::sync,
         {"sync",
          "sync(2): the files' dirty pages written and waited, ext4_sync_fs forces the running "
          "transaction's commit and waits, then every dirty metadata buffer is written home and waited "
          "(the buffers stay on their checkpoint lists, clean); once it returns, every file that existed "
          "when it began is durable",
          {},
          false,
          OracleEffect::sync_all}},
        {Op::rmdir,
         {"rmdir",
          "ext4_rmdir of an empty subdirectory of the root and its final iput, in one handle, under the "
          "directory's i_rwsem: its name leaves the root, its blocks are freed as metadata (ext4_forget -> "
          "jbd2_journal_revoke: the buffer leaves the journal unwritten and a revoke record is logged at "
          "commit; the blocks are reusable once this transaction commits), its inode is cleared; ENOTEMPTY "
          "while it holds a name",
          {file_field()},
          false}},
    });
}

}  // namespace

// Every counter, registered once (model/counter_table.hpp); the perf table
// shows the perf_column ones in this order.
const CounterTable<Ext4, Counters> Ext4::counter_table = {
    {{"commits", "jbd2_journal_commit_transaction runs", true}, &Counters::commits},
    {{"cp_scan_steps", "checkpoint buffers visited by the commit-time cleanup (C2)", true},
     &Counters::cp_scan_steps},
    {{"cp_scan_longest", "the most checkpoint buffers one commit's cleanup visited", true,
      CounterKind::maximum},
     &Counters::cp_scan_longest},
    {{"shrink_scan_steps", "checkpoint buffers visited by the shrinker", false},
     &Counters::shrink_scan_steps},
    {{"checkpoint_writes", "buffers written home by jbd2_log_do_checkpoint", true},
     &Counters::checkpoint_writes},
    {{"flusher_writes", "buffers written home by background writeback", false}, &Counters::flusher_writes},
    {{"tail_updates", "journal superblock writes (tail moves)", true}, &Counters::tail_updates},
    {{"transactions", "transactions started", false}, &Counters::transactions},
    {{"transactions_dropped", "transactions dropped (checkpointed or nothing to checkpoint)", false},
     &Counters::transactions_dropped},
    DiskCounter::writes,
    DiskCounter::flushes,
    {{"ops.", "operations of each kind (ops.create, ops.fsync...)", false},
     [](const Ext4& fs) -> CounterValues { return fs.counters_.ops; }},
};

namespace {

auto info() -> ModelInfo {
    ModelInfo info;
    info.name = "ext4";
    info.about =
        "ext4 on jbd2: metadata buffers (Lock, Dirty, JBDDirty, journal heads), handles, kjournald2's "
        "commit (C1..C11), checkpoint lists and their cleanup, jbd2_log_do_checkpoint, the shrinker, "
        "the flusher, and journal recovery (scan, revoke, replay)";
    info.model_tasks = {"flusher", "jbd2_commit_timer", "kjournald2"};
    info.yield_points.assign(std::begin(points::all), std::end(points::all));
    info.knobs = {checkpoint_tree.info(), journal_size.info(), revoke_records.info()};
    info.costs = {
        {"cp_scan_step_ns", static_cast<std::uint64_t>(cpu_cost::cp_scan_step),
         "CPU time of one journal_shrink_one_cp_list iteration under j_list_lock, ns: 400, an estimate "
         "(three cold cache lines, the journal head, the buffer head and unlock_buffer's bit wait-queue "
         "bucket, and two atomics), not fitted to the seed's rates (which would give 570)"}};
    info.ops = ops();
    info.byte_granular = true;  // i_size in bytes; a partial block is written as its whole page
    info.counters = counter_infos(Ext4::counter_table);
    return info;
}

const ModelRegistrar registrar{{
    info(),
    [](const Config& config, const Geometry& geometry,
       const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem> {
        return std::make_unique<Ext4>(
            Knobs{checkpoint_tree.parse(config), journal_size.parse(config), revoke_records.parse(config)},
            geometry, file_names);
    },
    // The data area with the scaled journal (a larger journal leaves less;
    // the model's writes then fail with ENOSPC, a story note).
    [](const Geometry& geometry) { return Ext4::data_blocks(geometry.block_size, geometry.blocks, 0); },
    [](const Config& config, const Geometry& geometry) -> std::optional<LayoutError> {
        // ext2fs_add_journal_inode refuses a journal over half the file
        // system; group 0 must hold its bitmaps, inode table, the root
        // directory and a data block.
        const std::uint64_t journal =
            Ext4::journal_length(geometry.block_size, geometry.blocks, journal_size.parse(config));
        if (journal <= geometry.blocks / 2 &&
            Ext4::data_blocks(geometry.block_size, geometry.blocks, journal_size.parse(config)) > 0)
            return std::nullopt;
        return LayoutError{"journal_size",
                           "a journal of at most half the device (" + std::to_string(geometry.blocks / 2) +
                               " blocks; mkfs.ext4 refuses more) that leaves room for block group 0",
                           json_text(config.at("journal_size")) + " (" + std::to_string(journal) +
                               " blocks) on a device of " + std::to_string(geometry.blocks) + " blocks"};
    },
}};

}  // namespace
}  // namespace model::ext4
