// The btrfs model's registration (fs/btrfs/super.c registers the file system
// type and parses mount options): its description, its knobs as tables of
// typed values, its factory, and the blocks left for data.
#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"
#include "model/declare.hpp"
#include "model/counter_table.hpp"
#include "model/registry.hpp"

namespace model::btrfs {
namespace {

/// The kernel a value of release_extent_maps names: both fields of Knobs it sets.
struct ReleaseKernel {
    ReleasePolicy release;
    bool full_sync_on_release;
};

// "btrfs: fix race between page release and a fast fsync": each patch of the series is a knob value.
const Knob<ReleaseKernel> release_extent_maps{
    "release_extent_maps",
    {{"before-fix", {ReleasePolicy::before_fix, true}},
     {"fix-1", {ReleasePolicy::keep_modified, true}},
     {"fix-2", {ReleasePolicy::keep_current_generation, true}},
     {"fix-3", {ReleasePolicy::keep_current_generation, false}},
     {"hypothetical-before-fix-without-full-sync", {ReleasePolicy::before_fix, false}}},
    "fix-3",
    "try_release_extent_mapping, one value per kernel of the 2020 series (cumulative): "
    "before-fix (v5.7.14) drops any unpinned, unlocked extent map and sets "
    "NEEDS_FULL_SYNC; fix-1 (patch 1/3, as in v5.8.18 stable) keeps a map on the list of "
    "modified extents unless it is being logged; fix-2 (patches 1/3 and 2/3) also drops a "
    "listed map older than the running transaction; fix-3 (all three, current kernels) "
    "never sets NEEDS_FULL_SYNC. hypothetical-before-fix-without-full-sync is no real "
    "kernel: v5.7's release without the flag, for tests that show what the flag does"};

// "btrfs: stop sleeping for one jiffy in non-ssd mounts during log commit"
const Knob<bool> log_commit_sleep{
    "log_commit_sleep",
    {{"jiffy", true}, {"none", false}},
    "none",
    "btrfs_sync_log: the leader of a log commit on a non-ssd mount sleeps one jiffy while "
    "MULTI_LOG_TASKS is set (jiffy, before the 2025 patch) or never (none, after it)"};

const Knob<std::uint32_t> hz{
    "hz", {{"100", 100}, {"250", 250}, {"300", 300}, {"1000", 1000}}, "250",
    "timer ticks per second: one jiffy is 1/HZ"};

const Knob<bool> jiffy_timer{
    "jiffy_timer",
    {{"tick-aligned", true}, {"hypothetical-exact", false}},
    "tick-aligned",
    "a one-jiffy timeout wakes on the second tick after the call, (1, 2] jiffies "
    "(tick-aligned, as every kernel's timer wheel does), or after exactly one jiffy "
    "(hypothetical-exact: no real kernel, for comparison only)"};

const Knob<sim::Duration> commit_interval{
    "commit_interval",
    {{"1", 1 * sim::seconds}, {"5", 5 * sim::seconds}, {"30", 30 * sim::seconds},
     {"300", 300 * sim::seconds}},
    "30",
    "transaction_kthread (disk-io.c) commits the running transaction once it is this many "
    "seconds old (mount -o commit=, kernel default 30). The kthread always runs, as in every "
    "kernel; in exploration its wake-ups while tasks can run are bounded choices "
    "(explore.daemon_wakeups)"};

const Knob<std::uint32_t> nodesize{
    "nodesize",
    {{"4096", 4096}, {"8192", 8192}, {"16384", 16384}, {"32768", 32768}, {"65536", 65536}},
    "16384",
    "mkfs.btrfs -n: bytes per btree node and leaf (default 16384); sets how many checksums "
    "a leaf of the checksum tree holds, so how often full fsyncs' lookups and ordered-extent "
    "completions' inserts meet at one leaf"};

auto parse_knobs(const Config& config) -> Knobs {
    Knobs knobs;
    const ReleaseKernel release = release_extent_maps.parse(config);
    knobs.release = release.release;
    knobs.full_sync_on_release = release.full_sync_on_release;
    knobs.log_commit_sleep = log_commit_sleep.parse(config);
    knobs.hz = hz.parse(config);
    knobs.jiffy_tick_aligned = jiffy_timer.parse(config);
    knobs.commit_interval = commit_interval.parse(config);
    knobs.nodesize = nodesize.parse(config);
    return knobs;
}

auto ops() -> std::vector<OpInfo> {
    auto write_fields = with_flag(range_fields(true), "direct");  // O_DIRECT (fio's direct=1)
    return op_table<Op>({
        {Op::create, {"create", "create an empty regular file", {file_field()}, true}},
        {Op::write,
         {"write",
          "buffered write: dirty the pages, mark the range delalloc, raise i_size; with direct: "
          "O_DIRECT (write back and drop the range's pages, allocate the extent and its pinned "
          "extent map and ordered extent, send the bio and wait for it)",
          write_fields, false, OracleEffect::write_data}},
        {Op::writeback,
         {"writeback",
          "writeback not started by fsync (memory pressure, periodic flush) of the dirty pages "
          "in range (default: the whole file); does not wait for ordered extents",
          range_fields(false)}},
        {Op::release_pages,
         {"release_pages",
          "memory reclaim calls btrfs_releasepage on each clean page in range (default: all)",
          range_fields(false)}},
        {Op::fsync,
         {"fsync", "btrfs_sync_file on the whole file: log the inode, commit the log", {file_field()}, false,
          OracleEffect::fsync_file}},
        {Op::commit, {"commit", "commit the running transaction (btrfs_commit_transaction)", {}}},
        {Op::sync,
         {"sync", "sync(2): write back every dirty page, wait for ordered extents, commit", {}, false,
          OracleEffect::sync_all}},
    });
}

}  // namespace

// Every counter, registered once (model/counter_table.hpp); the perf table
// shows the perf_column ones in this order.
const CounterTable<Btrfs, Counters> Btrfs::counter_table = {
    {{"log_commits", "log tree commits (btrfs_sync_log)", true}, &Counters::log_commits},
    {{"log_followers", "fsyncs whose log commit another task led", true}, &Counters::log_followers},
    {{"jiffy_sleeps", "one-jiffy sleeps of a log commit's leader (log_commit_sleep = jiffy)", true},
     &Counters::jiffy_sleeps},
    {{"fsyncs_fast", "fsyncs that logged the list of modified extents", true}, &Counters::fsyncs_fast},
    {{"fsyncs_full", "fsyncs that copied every item of the inode (NEEDS_FULL_SYNC)", true},
     &Counters::fsyncs_full},
    {{"checksum_lookups", "checksum tree lookups of full fsyncs", true}, &Counters::checksum_lookups},
    {{"checksum_lock_waits", "checksum tree locks (any leaf or node) found taken", true},
     &Counters::checksum_lock_waits},
    {{"checksum_leaf_waits", "of those, at a leaf", true}, &Counters::checksum_leaf_waits},
    {{"log_tree_lock_waits", "log tree locks (any leaf or node) log_csums found taken", true},
     &Counters::log_tree_lock_waits},
    {{"extent_maps_released", "extent maps page release dropped", true}, &Counters::extent_maps_released},
    {{"extent_maps_merged", "extent maps merged into a neighbour", true}, &Counters::extent_maps_merged},
    {{"pages_reclaimed", "clean pages reclaim freed", true},
     [](const Btrfs& fs) -> std::uint64_t { return fs.reclaim_.pages_reclaimed(); }},
    {{"transactions_committed", "transaction commits", true}, &Counters::transactions_committed},
    DiskCounter::writes,
    DiskCounter::flushes,
    {{"fsyncs_skipped", "fsyncs that found the inode already logged", false}, &Counters::fsyncs_skipped},
    {{"fsyncs_committed", "fsyncs whose logging failed and which committed the transaction", false},
     &Counters::fsyncs_committed},
    {{"extent_maps_kept", "extent maps page release kept", false}, &Counters::extent_maps_kept},
    {{"ordered_extents", "ordered extents created", false}, &Counters::ordered_extents},
    {{"checksum_leaves", "leaves of the checksum tree", false},
     [](const Btrfs& fs) -> std::uint64_t { return fs.csum_tree_.leaves.size(); }},
    {{"log_tree_leaf_waits", "log tree locks log_csums found taken at a leaf", false},
     &Counters::log_tree_leaf_waits},
    {{"direct_reclaims", "writers that had to reclaim pages themselves", false},
     [](const Btrfs& fs) -> std::uint64_t { return fs.reclaim_.direct_reclaims(); }},
    {{"direct_writes", "O_DIRECT writes", false}, &Counters::direct_writes},
    DiskCounter::fua_writes,
};

namespace {

// The model's own CPU costs (model/btrfs/btrfs.hpp), each a scenario may
// set: the name, the member, the default and where it comes from.
struct CostEntry {
    const char* name;
    sim::Duration Costs::*member;
    sim::Duration default_ns;
    const char* about;
};

constexpr const char* estimate =
    ", ns; an order-of-magnitude estimate for a 2020s x86 core, not a measurement";

const std::vector<CostEntry>& cost_table() {
    static const std::vector<CostEntry> table = {
        {"fsync_entry_ns", &Costs::fsync_entry, cpu_cost::fsync_entry,
         "btrfs_sync_file's own work before logging (flags, locks, the skip tests)"},
        {"log_inode_ns", &Costs::log_inode, cpu_cost::log_inode,
         "btrfs_log_inode besides its items: the inode item, the log tree's paths, log_batch"},
        {"checksum_lookup_ns", &Costs::checksum_lookup, cpu_cost::checksum_lookup,
         "btrfs_lookup_csums_range for one extent, besides the tree's locks and node searches"},
        {"log_commit_ns", &Costs::log_commit, cpu_cost::log_commit,
         "btrfs_sync_log's leader work: btrfs_write_marked_extents' set-up, the log root tree"},
        {"checksum_insert_ns", &Costs::checksum_insert, cpu_cost::checksum_insert,
         "btrfs_csum_file_blocks for one ordered extent at its completion: search, COW, fill or split a "
         "leaf, under the leaf's write lock"},
        {"copy_item_ns", &Costs::copy_item, cpu_cost::copy_item,
         "copy_items: one file extent item copied from the subvolume tree into the log (full fsync)"},
        {"log_checksums_ns", &Costs::log_checksums, cpu_cost::log_checksums,
         "log_csums: one extent's checksums inserted into the log tree, under its write lock"},
        {"btree_node_search_ns", &Costs::btree_node_search, cpu_cost::btree_node_search,
         "btrfs_search_slot at one internal node: a binary search over ~500 key pointers, then the "
         "child's lock"},
    };
    return table;
}

auto info() -> ModelInfo {
    ModelInfo info;
    info.name = "btrfs";
    info.about =
        "btrfs data path: extent maps and the list of modified extents, ordered extents, "
        "transactions, the per-root log tree with fast and full fsync, page release, log replay";
    info.model_tasks = {"endio", "kswapd", "transaction_kthread"};
    info.faults =
        "torn writes: the superblock's checksum (open_ctree: btrfs_check_super_csum) and every tree "
        "block's (btrfs_validate_extent_buffer) are verified at mount, a data block's on read "
        "(btrfs_check_data_csum)";
    info.misdirected_writes =
        "the superblock and every tree block name their own bytenr: btrfs_read_dev_one_super and "
        "btrfs_validate_extent_buffer (bad tree block start, -EIO) refuse one that landed elsewhere; "
        "only writes of the metadata area, onto blocks of it that hold metadata";
    info.yield_points.assign(std::begin(points::all), std::end(points::all));
    info.knobs = {release_extent_maps.info(), log_commit_sleep.info(), hz.info(),
                  jiffy_timer.info(),         commit_interval.info(),  nodesize.info()};
    info.ops = ops();
    info.counters = counter_infos(Btrfs::counter_table);
    for (const CostEntry& entry : cost_table()) {
        info.costs.push_back(
            {entry.name, static_cast<std::uint64_t>(entry.default_ns), std::string(entry.about) + estimate});
    }
    return info;
}

}  // namespace

auto Costs::from(const Geometry& geometry) -> Costs {
    Costs costs{};
    for (const CostEntry& entry : cost_table()) {
        costs.*entry.member = static_cast<sim::Duration>(
            geometry.cost(entry.name, static_cast<std::uint64_t>(entry.default_ns)));
    }
    return costs;
}

namespace {

const ModelRegistrar registrar{{
    info(),
    [](const Config& config, const Geometry& geometry,
       const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem> {
        return std::make_unique<Btrfs>(parse_knobs(config), geometry, file_names);
    },
    [](const Geometry& geometry) { return geometry.blocks - metadata_area_end(geometry.blocks); },
}};

}  // namespace
}  // namespace model::btrfs
