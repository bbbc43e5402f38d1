// The xfs model's registration (fs/xfs/xfs_super.c registers the file system
// type and parses mount options): its description, its knobs as tables of
// typed values, its factory, and the blocks left for data.
#include "model/declare.hpp"
#include "model/counter_table.hpp"
#include "model/registry.hpp"
#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"

namespace model::xfs {
namespace {

// "xfs: force writes to delalloc regions to unwritten": the patch is one knob.
const Knob<DelallocConvert> delalloc_convert{
    "delalloc_convert",
    {{"written", DelallocConvert::written}, {"unwritten", DelallocConvert::unwritten}},
    "unwritten",
    "how xfs_bmapi_allocate maps a delalloc record of the data fork that writeback "
    "(xfs_bmapi_convert_delalloc) or fallocate converts: written (XFS_EXT_NORM, v5.7) or "
    "unwritten (XFS_BMAPI_PREALLOC, converted to written when its I/O completes; \"xfs: "
    "force writes to delalloc regions to unwritten\", v5.8)"};

/// In bytes (0: none).
const Knob<std::uint64_t> extent_size_hint{
    "extent_size_hint",
    {{"none", 0}, {"64k", 65536}, {"1m", 1048576}},
    "none",
    "extent size hint every new file inherits (mkfs.xfs -d extszinherit): buffered writes "
    "into holes then allocate unwritten extents aligned to it (xfs_iomap_write_direct) "
    "instead of reserving delalloc"};

// "xfs: remove the m_active_trans counter": the patch is one knob; one value
// is a partial backport no tree released, and its name says so.
const Knob<ActiveTrans> active_trans{
    "active_trans",
    {{"counter", ActiveTrans::counter},
     {"hypothetical-removed-cancel-last", ActiveTrans::removed_cancel_last},
     {"removed-cancel-first", ActiveTrans::removed_cancel_first}},
    "removed-cancel-first",
    "how freezing waits for transactions: counter (v5.7: every transaction counts itself in "
    "m_active_trans and xfs_quiesce_attr polls it with delay(100)), removed-cancel-first (\"xfs: "
    "remove the m_active_trans counter\", v5.8: cancel_delayed_work_sync of the log worker at the "
    "start of xfs_quiesce_attr), hypothetical-removed-cancel-last (no released kernel: the counter "
    "removed but the log worker cancelled only in xfs_log_quiesce, as a partial backport would "
    "leave it)"};

auto parse_knobs(const Config& config, const Geometry& geometry) -> Knobs {
    Knobs knobs;
    knobs.delalloc_convert = delalloc_convert.parse(config);
    knobs.active_trans = active_trans.parse(config);
    const std::uint64_t hint_bytes = extent_size_hint.parse(config);
    knobs.extent_size_hint_blocks =
        hint_bytes == 0 ? 0 : std::max<std::uint64_t>(1, hint_bytes / geometry.block_size);
    return knobs;
}

auto ops() -> std::vector<OpInfo> {
    return op_table<Op>({
        {Op::create, {"create", "create an empty regular file (a transaction)", {file_field()}, true}},
        {Op::write,
         {"write",
          "buffered write: reserve delalloc over holes (with an extent size hint: allocate "
          "unwritten), dirty the pages, raise i_size (not di_size); with direct: O_DIRECT (write "
          "back and drop the range's pages, allocate unwritten extents over holes, send the bios "
          "and wait, then convert them or log the new size)",
          with_flag(range_fields(true), "direct"), false, OracleEffect::write_data}},
        {Op::writeback,
         {"writeback",
          "background writeback (WB_SYNC_NONE) of the dirty pages in range (default: the whole "
          "file): xfs_map_blocks, delalloc conversion, ioend submission; does not wait",
          range_fields(false)}},
        {Op::sync_file_range,
         {"sync_file_range",
          "sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER): write back the range and wait; no "
          "log force, so no durability promise",
          range_fields(true)}},
        {Op::fsync,
         {"fsync",
          "xfs_file_fsync: write back and wait for the whole file, then force the log up to the "
          "inode's last transaction (or FLUSH the device if it is not pinned)",
          {file_field()}, false, OracleEffect::fsync_file}},
        {Op::falloc,
         {"falloc",
          "fallocate, FALLOC_FL_KEEP_SIZE with keep_size: xfs_alloc_file_space "
          "(xfs_bmapi_write with XFS_BMAPI_PREALLOC; a delalloc record in range is converted "
          "whole); without keep_size, raises i_size and di_size past the range; no writeback",
          with_flag(range_fields(true), "keep_size"), false, OracleEffect::extend_size}},
        {Op::fpunch,
         {"fpunch",
          "FALLOC_FL_PUNCH_HOLE: xfs_flush_unmap_range (write back, wait, drop the pages), then "
          "xfs_free_file_space (the range may extend past EOF)",
          range_fields(true), false, OracleEffect::punch_hole}},
        {Op::fzero,
         {"fzero",
          "FALLOC_FL_ZERO_RANGE (with keep_size: | FALLOC_FL_KEEP_SIZE): flush and unmap as "
          "fpunch, free the range, then preallocate it unwritten",
          with_flag(range_fields(true), "keep_size"), false, OracleEffect::zero_range}},
        {Op::truncate,
         {"truncate",
          "truncate to `length` bytes (xfs_setattr_size): up, a sparse pre-sized file; down, "
          "drop the pages past it and unmap its blocks (xfs_itruncate_extents) in the "
          "transaction that logs the new di_size and the ones that follow",
          {file_field(), {"length", FieldKind::length, true}}, false, OracleEffect::set_size}},
        {Op::log_force,
         {"log_force",
          "one run of the log worker (xfs_log_worker, the xfs-sync daemon's code): a dummy superblock "
          "transaction when xfs_log_need_covered says the idle log needs covering, else xfs_log_force(mp, 0) "
          "pushes the CIL to disk; then xfs_ail_push_all writes the logged items in place; the kernel "
          "does not wait for the record, the model's worker does (nothing waits for the worker)",
          {}}},
        {Op::shutdown,
         {"shutdown",
          "godown -f: force the log, then shut down: no more transactions, log writes or data "
          "writeback; later operations fail with EIO",
          {}}},
        {Op::freeze,
         {"freeze",
          "FIFREEZE: freeze_super (SB_FREEZE_WRITE, PAGEFAULT, sync, FS, each waiting for its "
          "writers), then xfs_fs_freeze (xfs_quiesce_attr: drain as active_trans says, log force, "
          "xfs_log_sbcount, xfs_log_quiesce with the unmount record; then one more superblock "
          "transaction), SB_FREEZE_COMPLETE; EBUSY if already frozen",
          {}}},
        {Op::thaw,
         {"thaw",
          "FITHAW: thaw_super (xfs_fs_unfreeze re-arms the log worker; SB_UNFROZEN, blocked writers "
          "go on); EINVAL if not frozen",
          {}}},
        {Op::unlink,
         {"unlink",
          "unlink(2) of the last link: xfs_remove (a transaction), then xfs_inactive at the last iput "
          "(truncate if it has blocks, xfs_inactive_ifree; the chunk's last inode frees the chunk, a "
          "deferred free that rolls the transaction); a removed file is not lost data",
          {file_field()}, false, OracleEffect::remove_file}},
    });
}

/// One per-operation family's members: `count` of each operation's counts, by the operation.
auto by_op(const std::map<std::string, OpCounters>& counts, std::uint64_t OpCounters::*count)
    -> CounterValues {
    CounterValues members;
    for (const auto& [op, counted] : counts) members[op] = counted.*count;
    return members;
}

}  // namespace

// Every counter, registered once (model/counter_table.hpp); the perf table
// shows the perf_column ones in this order.
const CounterTable<Xfs, Counters> Xfs::counter_table = {
    {{"transactions", "transactions committed with log items", true}, &Counters::transactions},
    {{"log_forces", "log records written", true}, &Counters::log_forces},
    {{"unwritten_conversions", "xfs_iomap_write_unwritten transactions", true},
     &Counters::unwritten_conversions},
    {{"data_ios", "ioends submitted (one bio each in the kernel)", true}, &Counters::data_ios},
    DiskCounter::writes,
    DiskCounter::flushes,
    {{"transactions_cancelled", "transactions cancelled", false}, &Counters::transactions_cancelled},
    {{"data_blocks_written", "data blocks written by ioends", false}, &Counters::data_blocks_written},
    {{"delalloc_conversions", "delalloc records allocated", false}, &Counters::delalloc_conversions},
    {{"size_updates", "xfs_setfilesize transactions", false}, &Counters::size_updates},
    {{"ioends_queued", "I/O completions that went through the workqueue", false},
     &Counters::ioends_queued},
    {{"ail_pushes", "AIL pushes (metadata written in place)", false}, &Counters::ail_pushes},
    {{"rolls", "xfs_trans_roll: handles duplicated (xfs_trans_dup) and the old one committed", false},
     &Counters::rolls},
    {{"inode_chunks_allocated", "inode chunks (64 inodes) allocated by creates", false},
     &Counters::inode_chunks_allocated},
    {{"inode_chunks_freed", "inode chunks freed by xfs_inactive_ifree", false},
     &Counters::inode_chunks_freed},
    {{"active_trans_line_hits", "m_active_trans accesses on the CPU that owned its cache line (perf runs)",
      false},
     [](const Xfs& fs) -> std::uint64_t { return fs.active_trans_line_.counts().hits; }},
    {{"active_trans_line_misses", "m_active_trans accesses that pulled the line from another CPU (perf runs)",
      true},
     [](const Xfs& fs) -> std::uint64_t {
         return fs.active_trans_line_.counts().misses + fs.active_trans_line_.counts().remote_misses;
     }},
    {{"active_trans_line_wait_ns", "time m_active_trans accesses waited for the line, summed (perf runs)",
      false},
     [](const Xfs& fs) -> std::uint64_t {
         return static_cast<std::uint64_t>(fs.active_trans_line_.counts().waited);
     }},
    DiskCounter::fua_writes,
    {{"ops.", "operations of each kind (ops.write, ops.fsync...)", false},
     [](const Xfs& fs) { return by_op(fs.counters_.by_op, &OpCounters::ops); }},
    {{"transactions.", "transactions by the operation that started them", false},
     [](const Xfs& fs) { return by_op(fs.counters_.by_op, &OpCounters::transactions); }},
    {{"data_ios.", "ioends by the operation that submitted them", false},
     [](const Xfs& fs) { return by_op(fs.counters_.by_op, &OpCounters::data_ios); }},
    {{"log_forces.", "log records by the operation that forced them", false},
     [](const Xfs& fs) { return by_op(fs.counters_.by_op, &OpCounters::log_forces); }},
};

namespace {

auto info() -> ModelInfo {
    ModelInfo info;
    info.name = "xfs";
    info.about =
        "xfs data path: data fork extent records (delalloc, unwritten, written), writeback that "
        "converts whole delalloc records, I/O completion that converts unwritten extents and "
        "raises di_size, fallocate, hole punch and zero range, the CIL and log forces, godown, "
        "log recovery; freeze and thaw with the log worker and m_active_trans";
    info.model_tasks = {"ioend", "xfs-sync"};
    info.faults =
        "torn writes: log record CRCs (xlog_cksum in xlog_recover_process; xlog_verify_head walks "
        "the head back past a torn record), the metadata in place's CRC (xfs_sb_read_verify); no data "
        "checksums, so only data writes to blocks that hold no data are torn";
    info.write_errors =
        "a data writeback write that completes with EIO fails its ioend (xfs_end_ioend: no unwritten "
        "conversion, xfs_setfilesize_ioend cancels the size update); xfs_finish_page_writeback sets "
        "mapping_set_error(-EIO) and ends the pages' writeback clean; each open file's next fsync or "
        "sync_file_range returns EIO once (file_check_and_advance_wb_err), xfs_flush_unmap_range once in "
        "all (AS_EIO); log and metadata writes never fail";
    info.yield_points.assign(std::begin(points::all), std::end(points::all));
    info.knobs = {delalloc_convert.info(), extent_size_hint.info(), active_trans.info()};
    info.ops = ops();
    info.counters = counter_infos(Xfs::counter_table);
    info.costs = {
        {"create_ns", static_cast<std::uint64_t>(cpu_cost::create),
         "CPU time of a create besides its transaction commits and m_active_trans (path walk, inode "
         "initialisation, directory insert), ns; 26000 calibrated: the seed's machine A with the counter "
         "removed creates 468k/s on 16 CPUs, 34 us of CPU per create, less ~8 us of commit"},
        {"unlink_ns", static_cast<std::uint64_t>(cpu_cost::unlink),
         "CPU time of an unlink besides its transaction commits and m_active_trans (path walk, "
         "directory removal, inode teardown), ns; 33000 calibrated: machine A removes 50M inodes in "
         "2m33s with the counter removed, 49 us of CPU per unlink on 16 CPUs, less two commits of ~8 us"}};
    return info;
}

const ModelRegistrar registrar{{
    info(),
    [](const Config& config, const Geometry& geometry, const std::vector<std::string>& file_names)
        -> std::unique_ptr<FileSystem> {
        return std::make_unique<Xfs>(parse_knobs(config, geometry), geometry, file_names);
    },
    [](const Geometry& geometry) { return geometry.blocks - data_area_start(geometry.blocks); },
}};

}  // namespace
}  // namespace model::xfs
