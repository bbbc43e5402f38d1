#include "model/info.hpp"

#include "model/btrfs/points.hpp"
#include "model/xfs/points.hpp"

namespace model {
namespace {

void set_effect(ModelInfo& info, const std::string& op, OracleEffect effect) {
    for (auto& entry : info.ops) {
        if (entry.name == op) entry.effect = effect;
    }
}

auto file_field() -> FieldInfo { return {"file", FieldKind::file, true}; }
/// write's optional `direct` flag: O_DIRECT (fio's direct=1).
auto direct_flag(std::vector<FieldInfo> fields) -> std::vector<FieldInfo> {
    fields.push_back({"direct", FieldKind::flag, false});
    return fields;
}
auto range_fields(bool required) -> std::vector<FieldInfo> {
    return {file_field(), {"offset", FieldKind::offset, required},
            {"length", FieldKind::length, required}};
}

// seeds/btrfs-fast-fsync-vs-page-release.txt: each patch of the series is a knob.
auto btrfs_info() -> ModelInfo {
    ModelInfo info;
    info.name = "btrfs";
    info.about =
        "btrfs data path: extent maps and the list of modified extents, ordered extents, "
        "transactions, the per-root log tree with fast and full fsync, page release, log replay";
    info.model_tasks = {"endio", "kswapd", "transaction_kthread"};
    info.yield_points.assign(std::begin(btrfs::points::all), std::end(btrfs::points::all));
    info.knobs = {
        {"release_extent_maps",
         {"before-fix", "fix-1", "fix-2", "fix-3", "hypothetical-before-fix-without-full-sync"},
         "fix-3",
         "try_release_extent_mapping, one value per kernel of the 2020 series (cumulative): "
         "before-fix (v5.7.14) drops any unpinned, unlocked extent map and sets "
         "NEEDS_FULL_SYNC; fix-1 (patch 1/3, as in v5.8.18 stable) keeps a map on the list of "
         "modified extents unless it is being logged; fix-2 (patches 1/3 and 2/3) also drops a "
         "listed map older than the running transaction; fix-3 (all three, current kernels) "
         "never sets NEEDS_FULL_SYNC. hypothetical-before-fix-without-full-sync is no real "
         "kernel: v5.7's release without the flag, for tests that show what the flag does"},
        {"log_commit_sleep",
         {"jiffy", "none"},
         "none",
         "btrfs_sync_log: the leader of a log commit on a non-ssd mount sleeps one jiffy while "
         "MULTI_LOG_TASKS is set (jiffy, before the 2025 patch) or never (none, after it)"},
        {"hz", {"100", "250", "300", "1000"}, "250", "timer ticks per second: one jiffy is 1/HZ"},
        {"jiffy_timer",
         {"tick-aligned", "hypothetical-exact"},
         "tick-aligned",
         "a one-jiffy timeout wakes on the second tick after the call, (1, 2] jiffies "
         "(tick-aligned, as every kernel's timer wheel does), or after exactly one jiffy "
         "(hypothetical-exact: no real kernel, for comparison only)"},
        {"commit_interval",
         {"1", "5", "30", "300"},
         "30",
         "transaction_kthread (disk-io.c) commits the running transaction once it is this many "
         "seconds old (mount -o commit=, kernel default 30). The kthread always runs, as in every "
         "kernel; in exploration its wake-ups while tasks can run are bounded choices "
         "(explore.daemon_wakeups)"},
        {"nodesize",
         {"4096", "8192", "16384", "32768", "65536"},
         "16384",
         "mkfs.btrfs -n: bytes per btree node and leaf (default 16384); sets how many checksums "
         "a leaf of the checksum tree holds, so how often full fsyncs' lookups and ordered-extent "
         "completions' inserts meet at one leaf"},
    };
    info.ops = {
        {"create", "create an empty regular file", {file_field()}, true},
        {"write",
         "buffered write: dirty the pages, mark the range delalloc, raise i_size; with direct: "
         "O_DIRECT (write back and drop the range's pages, allocate the extent and its pinned "
         "extent map and ordered extent, send the bio and wait for it)",
         direct_flag(range_fields(true))},
        {"writeback",
         "writeback not started by fsync (memory pressure, periodic flush) of the dirty pages "
         "in range (default: the whole file); does not wait for ordered extents",
         range_fields(false)},
        {"release_pages",
         "memory reclaim calls btrfs_releasepage on each clean page in range (default: all)",
         range_fields(false)},
        {"fsync", "btrfs_sync_file on the whole file: log the inode, commit the log",
         {file_field()}},
        {"commit", "commit the running transaction (btrfs_commit_transaction)", {}},
        {"sync", "sync(2): write back every dirty page, wait for ordered extents, commit", {}},
    };
    set_effect(info, "write", OracleEffect::write_data);
    set_effect(info, "fsync", OracleEffect::fsync_file);
    set_effect(info, "sync", OracleEffect::sync_all);
    return info;
}

// seeds/xfs-delalloc-unwritten-stale-data.txt: the patch is one knob.
auto xfs_info() -> ModelInfo {
    ModelInfo info;
    info.name = "xfs";
    info.about =
        "xfs data path: data fork extent records (delalloc, unwritten, written), writeback that "
        "converts whole delalloc records, I/O completion that converts unwritten extents and "
        "raises di_size, fallocate, hole punch and zero range, the CIL and log forces, godown, "
        "log recovery";
    info.model_tasks = {"ioend"};
    info.yield_points.assign(std::begin(xfs::points::all), std::end(xfs::points::all));
    info.knobs = {
        {"delalloc_convert",
         {"written", "unwritten"},
         "unwritten",
         "how xfs_bmapi_allocate maps a delalloc record of the data fork that writeback "
         "(xfs_bmapi_convert_delalloc) or fallocate converts: written (XFS_EXT_NORM, v5.7) or "
         "unwritten (XFS_BMAPI_PREALLOC, converted to written when its I/O completes; \"xfs: "
         "force writes to delalloc regions to unwritten\", v5.8)"},
        {"extent_size_hint",
         {"none", "64k", "1m"},
         "none",
         "extent size hint every new file inherits (mkfs.xfs -d extszinherit): buffered writes "
         "into holes then allocate unwritten extents aligned to it (xfs_iomap_write_direct) "
         "instead of reserving delalloc"},
    };
    auto keep_size = [](std::vector<FieldInfo> fields) {
        fields.push_back({"keep_size", FieldKind::flag, false});
        return fields;
    };
    info.ops = {
        {"create", "create an empty regular file (a transaction)", {file_field()}, true},
        {"write",
         "buffered write: reserve delalloc over holes (with an extent size hint: allocate "
         "unwritten), dirty the pages, raise i_size (not di_size); with direct: O_DIRECT (write "
         "back and drop the range's pages, allocate unwritten extents over holes, send the bios "
         "and wait, then convert them or log the new size)",
         direct_flag(range_fields(true))},
        {"writeback",
         "background writeback (WB_SYNC_NONE) of the dirty pages in range (default: the whole "
         "file): xfs_map_blocks, delalloc conversion, ioend submission; does not wait",
         range_fields(false)},
        {"sync_file_range",
         "sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER): write back the range and wait; no "
         "log force, so no durability promise",
         range_fields(true)},
        {"fsync",
         "xfs_file_fsync: write back and wait for the whole file, then force the log up to the "
         "inode's last transaction (or FLUSH the device if it is not pinned)",
         {file_field()}},
        {"falloc",
         "fallocate, FALLOC_FL_KEEP_SIZE with keep_size: xfs_alloc_file_space "
         "(xfs_bmapi_write with XFS_BMAPI_PREALLOC; a delalloc record in range is converted "
         "whole); without keep_size, raises i_size and di_size past the range; no writeback",
         keep_size(range_fields(true))},
        {"fpunch",
         "FALLOC_FL_PUNCH_HOLE: xfs_flush_unmap_range (write back, wait, drop the pages), then "
         "xfs_free_file_space (the range may extend past EOF)",
         range_fields(true)},
        {"fzero",
         "FALLOC_FL_ZERO_RANGE (with keep_size: | FALLOC_FL_KEEP_SIZE): flush and unmap as "
         "fpunch, free the range, then preallocate it unwritten",
         keep_size(range_fields(true))},
        {"truncate",
         "truncate to `length` bytes (xfs_setattr_size): up, a sparse pre-sized file; down, "
         "drop the pages past it and unmap its blocks (xfs_itruncate_extents) in the "
         "transaction that logs the new di_size and the ones that follow",
         {file_field(), {"length", FieldKind::length, true}}},
        {"log_force",
         "the log worker (xfs_log_worker): xfs_log_force(mp, 0) pushes the CIL to disk; the kernel "
         "does not wait for the record, the model's worker does (nothing waits for the worker)",
         {}},
        {"shutdown",
         "godown -f: force the log, then shut down: no more transactions, log writes or data "
         "writeback; later operations fail with EIO",
         {}},
    };
    set_effect(info, "write", OracleEffect::write_data);
    set_effect(info, "fsync", OracleEffect::fsync_file);
    set_effect(info, "fpunch", OracleEffect::zero_range);
    set_effect(info, "fzero", OracleEffect::zero_range);
    set_effect(info, "falloc", OracleEffect::extend_size);
    set_effect(info, "truncate", OracleEffect::set_size);
    return info;
}

}  // namespace

auto models() -> const std::vector<ModelInfo>& {
    static const std::vector<ModelInfo> all = {btrfs_info(), xfs_info()};
    return all;
}

auto hypothetical_notes(const ModelInfo& info, const std::map<std::string, std::string>& config)
    -> std::vector<std::string> {
    std::vector<std::string> notes;
    for (const auto& knob : info.knobs) {
        const auto value = config.find(knob.name);
        if (value == config.end() || !value->second.starts_with(hypothetical_prefix)) continue;
        notes.push_back(knob.name + " = " + value->second +
                        ": a hypothetical setting, not a real kernel; verdicts of this run say "
                        "nothing about any released kernel");
    }
    return notes;
}

auto find_model(const std::string& name) -> const ModelInfo* {
    for (const auto& info : models()) {
        if (info.name == name) return &info;
    }
    return nullptr;
}

}  // namespace model
