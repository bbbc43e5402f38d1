// The ext4/jbd2 model's registration (fs/ext4/super.c registers ext4 and
// parses its mount options): its description, its knob, its factory.
//
// Why the model is named "ext4": a scenario mounts and runs ext4 (create,
// write, fsync are ext4's file operations); jbd2 is the journal layer inside
// it, and the folder is named after fs/jbd2, where the seed's code lives.
#include "model/declare.hpp"
#include "model/disk_counters.hpp"
#include "model/jbd2/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "model/registry.hpp"

namespace model::jbd2 {
namespace {

auto json_text(const std::string& value) -> std::string { return "\"" + value + "\""; }

// "jbd2: fix checkpoint cleanup performance regression" and its series. Two knobs,
// commit_cleanup (v5.8 | v6.5 | busy-stop) and relogged_busy (no | yes);
// read in the kernel, only four of their combinations are trees that existed:
// - v5.8: journal_clean_one_cp_list returns at the first buffer that
//   __try_to_free_cp_buf cannot free, and __try_to_free_cp_buf requires
//   jh->b_transaction == NULL: "v5.8, relogged_busy no" is no kernel. v5.8 has
//   no checkpoint shrinker (jbd2_journal_shrink_checkpoint_list, v5.16).
// - v6.5: b98dba273a0e merged the cleanup into journal_shrink_one_cp_list,
//   which skips busy buffers, and 46f881b5b175 replaced __cp_buffer_busy
//   (which tested b_transaction) with jbd2_journal_try_remove_checkpoint
//   (trylock_buffer and buffer_dirty only).
// - patch 1/3 ("jbd2: fix checkpoint cleanup performance regression"):
//   SHRINK_BUSY_STOP at commit; still no b_transaction test.
// - patch 2/3 ("jbd2: Check 'jh->b_transaction' before removing it from
//   checkpoint"), on top of 1/3: a buffer with b_transaction set is busy.
// So the knob is one cumulative value per tree; a tree with 2/3 and not 1/3
// was never published.
const Knob<Tree> checkpoint_tree{
    "checkpoint_cleanup",
    {{"v5.8", Tree::v5_8}, {"v6.5", Tree::v6_5}, {"patch-1", Tree::patch_1}, {"patch-2", Tree::patch_2}},
    "patch-2",
    "the jbd2 checkpoint-list cleanup of a real tree: v5.8 (stop at the first buffer that cannot be "
    "freed; b_transaction set is busy; no shrinker), v6.5 (journal_shrink_one_cp_list skips busy "
    "buffers at commit; b_transaction not tested), patch-1 (v6.5 + patch 1/3: SHRINK_BUSY_STOP at "
    "commit), patch-2 (+ patch 2/3: a buffer re-logged by a running transaction is busy)"};

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
          "the log is short of space: advance the tail (FLUSH, journal superblock) or write the "
          "oldest transaction's buffers home in batches of 64, then advance the tail",
          {}}},
        {Op::shrink,
         {"shrink",
          "the checkpoint shrinker (ext4_journal_scan_objects -> "
          "jbd2_journal_shrink_checkpoint_list, SHRINK_BUSY_SKIP over every list); nothing on v5.8",
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

auto counters() -> std::vector<CounterInfo> {
    return {
        {"commits", "jbd2_journal_commit_transaction runs", true},
        {"cp_scan_steps", "checkpoint buffers visited by the commit-time cleanup (C2)", true},
        {"cp_scan_longest", "the most checkpoint buffers one commit's cleanup visited", true},
        {"shrink_scan_steps", "checkpoint buffers visited by the shrinker", false},
        {"checkpoint_writes", "buffers written home by jbd2_log_do_checkpoint", true},
        {"flusher_writes", "buffers written home by background writeback", false},
        {"tail_updates", "journal superblock writes (tail moves)", true},
        {"transactions", "transactions started", false},
        {"transactions_dropped", "transactions dropped (checkpointed or nothing to checkpoint)", false},
        disk_counter_info(DiskCounter::writes),
        disk_counter_info(DiskCounter::flushes),
        {"ops.", "operations of each kind (ops.create, ops.fsync...)", false},
    };
}

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
    info.costs = {{"cp_scan_step_ns", static_cast<std::uint64_t>(cpu_cost::cp_scan_step),
                   "CPU time of one journal_shrink_one_cp_list iteration under j_list_lock (a trylock and two "
                   "cold cache lines), ns; 570 derived from the seed's figures: (1/2107.1 - "
                   "1/8558.4) s per file over ~626 buffers scanned per commit"}};
    info.ops = ops();
    info.byte_granular = true;  // i_size in bytes; a partial block is written as its whole page
    info.counters = counters();
    return info;
}

const ModelRegistrar registrar{{
    info(),
    [](const Config& config, const Geometry& geometry,
       const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem> {
        return std::make_unique<Ext4>(
            Knobs{checkpoint_tree.parse(config), journal_size.parse(config), revoke_records.parse(config)}, geometry,
            file_names);
    },
    // The data area with the scaled journal (a larger journal leaves less;
    // the model's writes then fail with ENOSPC, a story note).
    [](const Geometry& geometry) { return Ext4::data_blocks(geometry.block_size, geometry.blocks, 0); },
    [](const Config& config, const Geometry& geometry) -> std::optional<LayoutError> {
        // ext2fs_add_journal_inode refuses a journal over half the file
        // system; group 0 must hold its bitmaps, inode table, the root
        // directory and a data block.
        const std::uint64_t journal = Ext4::journal_length(geometry.block_size, geometry.blocks,
                                                           journal_size.parse(config));
        if (journal <= geometry.blocks / 2 && Ext4::data_blocks(geometry.block_size, geometry.blocks,
                                                                journal_size.parse(config)) > 0)
            return std::nullopt;
        return LayoutError{"journal_size",
                           "a journal of at most half the device (" + std::to_string(geometry.blocks / 2) +
                               " blocks; mkfs.ext4 refuses more) that leaves room for block group 0",
                           json_text(config.at("journal_size")) + " (" + std::to_string(journal) +
                               " blocks) on a device of " + std::to_string(geometry.blocks) + " blocks"};
    },
}};

}  // namespace
}  // namespace model::jbd2
