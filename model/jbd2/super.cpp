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

// seeds/jbd2-checkpoint-busy-stop.txt. The issue names two knobs,
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

auto ops() -> std::vector<OpInfo> {
    return op_table<Op>({
        {Op::create,
         {"create",
          "ext4_create in one handle: a bit of the inode bitmap, the inode in its inode-table block, "
          "the name in a directory block (do_get_write_access and jbd2_journal_dirty_metadata on each)",
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
    });
}

auto counters() -> std::vector<CounterInfo> {
    return {
        {"commits", "jbd2_journal_commit_transaction runs", true},
        {"cp_scan_steps", "checkpoint buffers visited by the commit-time cleanup (C2)", true},
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
    info.yield_points.assign(std::begin(points::all), std::end(points::all));
    info.knobs = {checkpoint_tree.info()};
    info.ops = ops();
    info.counters = counters();
    return info;
}

const ModelRegistrar registrar{{
    info(),
    [](const Config& config, const Geometry& geometry,
       const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem> {
        return std::make_unique<Ext4>(Knobs{checkpoint_tree.parse(config)}, geometry, file_names);
    },
    [](const Geometry& geometry) { return geometry.blocks - Ext4::data_start(geometry.blocks); },
}};

}  // namespace
}  // namespace model::jbd2
