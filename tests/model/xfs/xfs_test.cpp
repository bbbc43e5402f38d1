// The xfs model's mechanisms through the public FileSystem interface
// ("xfs: force writes to delalloc regions to unwritten"):
// delalloc conversion of whole records at writeback, conversion of unwritten
// extents at I/O completion in a transaction of its own, the falloc path
// through xfs_bmapi_allocate, punch and zero range, busy extents, the log
// force as the durability point, fsync's device flush, godown, log recovery,
// the log tail moving, and the counters.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"
#include "tests/support.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/disk/content.hpp"
#include "model/filesystem.hpp"
#include "model/xfs/points.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"

// Readable failures: content tags print as their description. (The same
// definition appears in each test file that compares contents.)
namespace doctest {
template <>
struct StringMaker<model::disk::Content> {
    static auto convert(const model::disk::Content& content) -> String {
        return content.describe({"I", "J", "K"}, 4096).c_str();
    }
};
template <>
struct StringMaker<std::optional<model::disk::Content>> {
    static auto convert(const std::optional<model::disk::Content>& content) -> String {
        return content ? content->describe({"I", "J", "K"}, 4096).c_str() : "a hole";
    }
};
}  // namespace doctest

namespace {

using model::disk::Content;
using model::disk::ContentKind;

constexpr std::uint64_t block_bytes = 4096;
constexpr std::uint64_t kib = 1024;
constexpr std::uint32_t file_i = 0;
constexpr std::uint32_t file_j = 1;
constexpr std::uint32_t file_k = 2;

const std::map<std::string, bool> keep_size_flag = {{"keep_size", true}};

/// Operation builders (named after the scenario ops).
namespace op {
auto create(std::uint32_t file) -> model::OpCall { return {.name = "create", .file = file}; }
auto range(std::string_view name, std::uint32_t file, std::uint64_t offset, std::uint64_t length)
    -> model::OpCall {
    return {.name = name, .file = file, .offset = offset, .length = length, .has_range = true};
}
auto write(std::uint32_t file, std::uint64_t offset, std::uint64_t length, std::uint64_t version)
    -> model::OpCall {
    model::OpCall call = range("write", file, offset, length);
    call.version = version;
    return call;
}
auto sync_file_range(std::uint32_t file, std::uint64_t offset, std::uint64_t length)
    -> model::OpCall {
    return range("sync_file_range", file, offset, length);
}
auto writeback(std::uint32_t file) -> model::OpCall { return {.name = "writeback", .file = file}; }
auto writeback(std::uint32_t file, std::uint64_t offset, std::uint64_t length) -> model::OpCall {
    return range("writeback", file, offset, length);
}
auto falloc(std::uint32_t file, std::uint64_t offset, std::uint64_t length, bool keep_size)
    -> model::OpCall {
    model::OpCall call = range("falloc", file, offset, length);
    if (keep_size) call.flags = &keep_size_flag;
    return call;
}
auto fpunch(std::uint32_t file, std::uint64_t offset, std::uint64_t length) -> model::OpCall {
    return range("fpunch", file, offset, length);
}
auto fzero(std::uint32_t file, std::uint64_t offset, std::uint64_t length) -> model::OpCall {
    model::OpCall call = range("fzero", file, offset, length);
    call.flags = &keep_size_flag;
    return call;
}
auto fsync(std::uint32_t file) -> model::OpCall { return {.name = "fsync", .file = file}; }
auto log_force() -> model::OpCall { return {.name = "log_force"}; }
auto shutdown() -> model::OpCall { return {.name = "shutdown"}; }
}  // namespace op

/// An xfs on a 4 MiB nvme device with files I, J and K, inside a scheduler.
struct World : test_support::ModelWorld {
    explicit World(const std::string& delalloc_convert, const std::string& hint = "none",
                   std::uint64_t blocks = 1024)
        : ModelWorld("xfs", {{"delalloc_convert", delalloc_convert}, {"extent_size_hint", hint}},
                     model::Geometry{block_bytes, blocks, "nvme"}, {"I", "J", "K"}) {}
    /// Per-operation counters exist once an operation of that kind ran: absent reads as 0.
    [[nodiscard]] auto counter(const std::string& name) const -> std::uint64_t {
        const auto all = fs->counters();
        const auto found = all.find(name);
        return found == all.end() ? 0 : found->second;
    }
};

using test_support::block_of;
using test_support::check_mounted_cleanly;
using test_support::data;
using test_support::has_note;

/// Every block of [start, end) reads stale device contents.
void check_stale(const model::RecoveredFile& file, std::uint64_t start, std::uint64_t end) {
    for (std::uint64_t offset = start; offset < end; offset += block_bytes) {
        CAPTURE(offset);
        const auto block = block_of(file, offset);
        REQUIRE(block.has_value());
        CHECK(block->kind == ContentKind::stale);
    }
}

/// Every block of [start, end) reads zeros (a hole or an unwritten extent).
void check_zeros(const model::RecoveredFile& file, std::uint64_t start, std::uint64_t end) {
    for (std::uint64_t offset = start; offset < end; offset += block_bytes) {
        CAPTURE(offset);
        CHECK_FALSE(block_of(file, offset).has_value());
    }
}

}  // namespace

// ---- Mount, log force, recovery ----

TEST_CASE("xfs: a freshly formatted file system mounts with no files and consistent free space") {
    World world("unwritten");
    const auto state = world.crash(false);
    check_mounted_cleanly(state);
    REQUIRE(state.files.size() == 3);
    for (const auto& file : state.files) CHECK_FALSE(file.exists);
    CHECK(has_note(state, "nothing to replay"));
}

TEST_CASE("xfs: transactions sit in the CIL until a log force; a crash before it loses them") {
    World world("unwritten");
    world.run({op::create(file_i), op::write(file_i, 0, 16 * kib, 1),
               op::sync_file_range(file_i, 0, 16 * kib)});
    CHECK(world.counter("transactions") >= 3);  // create, allocation, unwritten conversion
    CHECK(world.counter("log_forces") == 0);
    // The data reached the device, which does not help: nothing on disk maps it.
    const auto state = world.crash(true);
    check_mounted_cleanly(state);
    CHECK_FALSE(state.files[file_i].exists);
    // Recovery tells what the image holds, not the lost CIL.
    CHECK(has_note(state, "nothing to replay"));
    // The log worker's run (the log_force op): its force writes the record...
    const sim::TaskId worker = world.spawn({op::log_force()});
    test_support::drive(world.scheduler, worker, &model::xfs::points::log_record_durable, {},
                        test_support::WhenStuck::stop);
    CHECK(world.counter("log_forces") == 1);
    const auto forced = world.crash(false);
    check_mounted_cleanly(forced);
    REQUIRE(forced.files[file_i].exists);
    CHECK(forced.files[file_i].size_bytes == 16 * kib);
    CHECK(block_of(forced.files[file_i], 0) == data(file_i, 0, 1));
    CHECK(has_note(forced, "log recovery replays record lsn 1"));
    // ...then its xfs_ail_push_all writes the items in place: nothing left to replay.
    world.settle();
    CHECK(world.counter("ail_pushes") == 1);
    const auto pushed = world.crash(false);
    check_mounted_cleanly(pushed);
    REQUIRE(pushed.files[file_i].exists);
    CHECK(block_of(pushed.files[file_i], 0) == data(file_i, 0, 1));
    CHECK(has_note(pushed, "nothing to replay"));
}

TEST_CASE("xfs: a fsynced file survives a crash that keeps nothing unflushed") {
    for (const char* knob : {"written", "unwritten"}) {
        CAPTURE(knob);
        World world(knob);
        world.run({op::create(file_i), op::write(file_i, 0, 8 * kib, 1), op::fsync(file_i)});
        CHECK(world.counter("log_forces") == 1);
        CHECK(world.counter("log_forces.fsync") == 1);
        CHECK(world.counter("data_ios") == 1);
        CHECK(world.counter("data_ios.fsync") == 1);
        CHECK(world.counter("ops.fsync") == 1);
        CHECK(world.counter("delalloc_conversions") == 1);
        const auto state = world.crash(false);
        check_mounted_cleanly(state);
        const auto& file = state.files[file_i];
        REQUIRE(file.exists);
        CHECK(file.size_bytes == 8 * kib);
        CHECK(block_of(file, 0) == data(file_i, 0, 1));
        CHECK(block_of(file, 4 * kib) == data(file_i, 4 * kib, 1));
    }
}

TEST_CASE("xfs: an fsync with nothing to log flushes the data device instead of forcing the log") {
    World world("unwritten");
    world.run({op::create(file_i), op::write(file_i, 0, 8 * kib, 1), op::fsync(file_i)});
    const auto forces = world.counter("log_forces");
    const auto flushes = world.counter("disk_flushes");
    // An overwrite of written blocks inside di_size needs no transaction.
    world.run({op::write(file_i, 0, 4 * kib, 2), op::fsync(file_i)});
    CHECK(world.counter("log_forces") == forces);
    CHECK(world.counter("disk_flushes") == flushes + 1);
    CHECK(world.counter("transactions.fsync") == 2);  // both from the first fsync's ioend
    const auto state = world.crash(false);
    check_mounted_cleanly(state);
    CHECK(block_of(state.files[file_i], 0) == data(file_i, 0, 2));
}

// ---- Delalloc conversion at writeback (the seed) ----

TEST_CASE("xfs: targeted writeback converts the whole delalloc record but writes one page") {
    for (const char* knob : {"written", "unwritten"}) {
        CAPTURE(knob);
        World world(knob);
        world.run({op::create(file_i), op::write(file_i, 0, 64 * kib, 1),
                   op::sync_file_range(file_i, 60 * kib, 4 * kib), op::log_force()});
        CHECK(world.counter("delalloc_conversions") == 1);
        CHECK(world.counter("data_ios") == 1);
        CHECK(world.counter("data_blocks_written") == 1);
        const auto state = world.crash(true);
        check_mounted_cleanly(state);
        const auto& file = state.files[file_i];
        REQUIRE(file.exists);
        CHECK(file.size_bytes == 64 * kib);  // the ioend raised di_size
        CHECK(block_of(file, 60 * kib) == data(file_i, 60 * kib, 1));
        if (std::string(knob) == "written") {
            // Mapped written, never written: an earlier owner's contents.
            check_stale(file, 0, 60 * kib);
            CHECK(world.counter("size_updates") == 1);
            CHECK(world.counter("unwritten_conversions") == 0);
            CHECK(has_note(state, "NORM extent [0, 65536)"));
        } else {
            check_zeros(file, 0, 60 * kib);
            CHECK(world.counter("size_updates") == 0);
            CHECK(world.counter("unwritten_conversions") == 1);
            CHECK(has_note(state, "UNWRITTEN extent [0, 61440)"));
            CHECK(has_note(state, "NORM extent [61440, 65536)"));
        }
    }
}

namespace {
void drive(World& world, sim::TaskId task, const sim::YieldPoint* point,
           const std::vector<sim::TaskId>& held) {
    test_support::drive(world.scheduler, task, point, held, test_support::WhenStuck::stop);
}
}  // namespace

TEST_CASE("xfs: unwritten conversion commits at I/O completion, after the allocation's force") {
    // The allocation transaction commits before the data I/O is submitted;
    // the conversion commits in the ioend worker once the write completed, so
    // a log force pushed in between carries the allocation (unwritten, di_size
    // 0) but not the conversion.
    World world("unwritten");
    world.run({op::create(file_i), op::log_force()});
    const sim::TaskId task =
        world.spawn({op::write(file_i, 0, 64 * kib, 1), op::writeback(file_i, 60 * kib, 4 * kib),
                     op::log_force(), op::log_force()});
    drive(world, task, &model::xfs::points::log_record_durable, {});
    const auto first = world.crash(true);
    check_mounted_cleanly(first);
    CHECK(first.files[file_i].size_bytes == 0);
    CHECK(has_note(first, "UNWRITTEN extent [0, 65536)"));
    CHECK(has_note(first, "(xfs_bmapi_convert_delalloc)"));
    CHECK_FALSE(has_note(first, "xfs_iomap_write_unwritten"));
    // The second worker run's force carries the conversion (a crash before
    // its AIL push replays it).
    drive(world, task, &model::xfs::points::log_record_durable, {});
    const auto second = world.crash(true);
    check_mounted_cleanly(second);
    CHECK(second.files[file_i].size_bytes == 64 * kib);
    CHECK(has_note(second, "(xfs_iomap_write_unwritten)"));
    CHECK(block_of(second.files[file_i], 60 * kib) == data(file_i, 60 * kib, 1));
    check_zeros(second.files[file_i], 0, 60 * kib);
}

TEST_CASE("xfs: the re-lookup under the exclusive ILOCK finds a record another thread converted") {
    World world("unwritten");
    world.run({op::create(file_i), op::write(file_i, 0, 64 * kib, 1)});
    const sim::TaskId flusher = world.spawn({op::writeback(file_i, 0, 4 * kib)});
    const sim::TaskId syncer = world.spawn({op::sync_file_range(file_i, 60 * kib, 4 * kib)});
    // Both look the record up as delalloc under the shared lock ...
    drive(world, flusher, &model::xfs::points::wb_map_lookup, {syncer});
    drive(world, syncer, &model::xfs::points::wb_map_lookup, {flusher});
    // ... one converts it; the other finds it converted and cancels.
    drive(world, flusher, nullptr, {syncer});
    drive(world, syncer, nullptr, {flusher});
    world.settle();
    CHECK(world.counter("delalloc_conversions") == 1);
    CHECK(world.counter("transactions_cancelled") == 1);
    CHECK(world.counter("unwritten_conversions") == 2);
}

TEST_CASE("xfs: an extent size hint allocates unwritten at write time, so nothing is delalloc") {
    World world("written", "64k");
    world.run({op::create(file_i), op::write(file_i, 0, 16 * kib, 1),
               op::sync_file_range(file_i, 12 * kib, 4 * kib), op::log_force()});
    CHECK(world.counter("delalloc_conversions") == 0);
    CHECK(world.counter("unwritten_conversions") == 1);
    const auto state = world.crash(true);
    check_mounted_cleanly(state);
    CHECK(state.files[file_i].size_bytes == 16 * kib);
    check_zeros(state.files[file_i], 0, 12 * kib);
    // The hint's 64k was allocated unwritten; only the written page converted.
    CHECK(has_note(state, "UNWRITTEN extent [0, 12288)"));
    CHECK(has_note(state, "UNWRITTEN extent [16384, 65536)"));
}

// ---- fallocate ----

TEST_CASE("xfs: falloc over a delalloc record converts it whole through xfs_bmapi_allocate") {
    for (const char* knob : {"written", "unwritten"}) {
        CAPTURE(knob);
        World world(knob);
        // di_size already covers the range (xfs_flush_unmap_range then converts nothing stale).
        world.run({op::create(file_i), op::falloc(file_i, 64 * kib, 4 * kib, false),
                   op::write(file_i, 0, 64 * kib, 1), op::falloc(file_i, 60 * kib, 4 * kib, true),
                   op::log_force()});
        CHECK(world.counter("data_ios") == 0);
        CHECK(world.counter("delalloc_conversions") == 1);
        const auto state = world.crash(true);
        check_mounted_cleanly(state);
        CHECK(state.files[file_i].size_bytes == 68 * kib);
        if (std::string(knob) == "written") {
            check_stale(state.files[file_i], 0, 64 * kib);
        } else {
            check_zeros(state.files[file_i], 0, 68 * kib);
        }
    }
}

TEST_CASE("xfs: falloc -k over a new file's delalloc leaves di_size 0, so nothing is readable") {
    World world("written");
    world.run({op::create(file_i), op::write(file_i, 0, 64 * kib, 1),
               op::falloc(file_i, 60 * kib, 4 * kib, true), op::shutdown()});
    const auto state = world.crash(false);
    check_mounted_cleanly(state);
    CHECK(state.files[file_i].exists);
    CHECK(state.files[file_i].size_bytes == 0);
    CHECK(state.files[file_i].blocks.empty());
    CHECK(has_note(state, "NORM extent [0, 65536)"));  // mapped beyond EOF
}

TEST_CASE("xfs: falloc without keep_size raises di_size; the extent is unwritten either way") {
    for (const char* knob : {"written", "unwritten"}) {
        World world(knob);
        world.run({op::create(file_i), op::falloc(file_i, 0, 32 * kib, false), op::log_force()});
        const auto state = world.crash(false);
        check_mounted_cleanly(state);
        CHECK(state.files[file_i].size_bytes == 32 * kib);
        check_zeros(state.files[file_i], 0, 32 * kib);
    }
}

TEST_CASE("xfs: fpunch writes back and waits first, then frees; fzero reallocates unwritten") {
    World world("unwritten");
    world.run({op::create(file_i), op::write(file_i, 0, 32 * kib, 1),
               op::fpunch(file_i, 8 * kib, 8 * kib), op::create(file_j),
               op::write(file_j, 0, 32 * kib, 2), op::fzero(file_j, 8 * kib, 8 * kib),
               op::log_force()});
    CHECK(world.counter("data_ios.fpunch") == 1);
    CHECK(world.counter("data_ios.fzero") == 1);
    const auto state = world.crash(false);
    check_mounted_cleanly(state);
    // The ioend of the flushed pages raised di_size to their end.
    CHECK(state.files[file_i].size_bytes == 16 * kib);
    check_zeros(state.files[file_i], 0, 16 * kib);  // the rest was never written back
    CHECK(has_note(state, "inode I: di_size 16384, data fork: UNWRITTEN extent [0, 8192)"));
    CHECK(has_note(state, "hole [8192, 16384), UNWRITTEN extent [16384, 32768)"));
    CHECK(state.files[file_j].size_bytes == 16 * kib);
    CHECK(has_note(state, "UNWRITTEN extent [8192, 16384)"));
}

TEST_CASE("xfs: freed blocks keep their contents and are not reused before the free is on disk") {
    World world("written");
    world.run({op::create(file_i), op::write(file_i, 0, 16 * kib, 1), op::fsync(file_i)});
    // Punch it all: the blocks are busy until the freeing transaction is on
    // disk, so J, allocated before any log force, gets other blocks.
    world.run({op::fpunch(file_i, 0, 16 * kib), op::create(file_j),
               op::write(file_j, 0, 16 * kib, 2), op::sync_file_range(file_j, 12 * kib, 4 * kib),
               op::log_force()});
    {
        const auto state = world.crash(false);
        check_mounted_cleanly(state);
        CHECK(state.files[file_i].blocks.empty());
        // J's pages never written back, [0, 12k), read stale contents, not I's data.
        for (std::uint64_t offset = 0; offset < 12 * kib; offset += block_bytes) {
            const auto block = block_of(state.files[file_j], offset);
            REQUIRE(block.has_value());
            CHECK(block->kind == ContentKind::stale);
        }
    }
    // Once the free is on disk the blocks are reused, and still hold I's data:
    // before the fix, K's record maps them written and K reads another file's data.
    world.run({op::create(file_k), op::write(file_k, 0, 16 * kib, 3),
               op::sync_file_range(file_k, 12 * kib, 4 * kib), op::log_force()});
    const auto state = world.crash(false);
    check_mounted_cleanly(state);
    const auto block = block_of(state.files[file_k], 0);
    REQUIRE(block.has_value());
    CHECK(*block == data(file_i, 0, 1));
}

// ---- fsync and concurrent log forces ----

// xfs_log_force_lsn sets log_flushed only when it wrote the record itself: a
// record already being written may have sent its PREFLUSH before this fsync's
// data completed, so the fsync must flush the device after waiting for it.
TEST_CASE("xfs: an fsync that waits for another task's log force still flushes the device") {
    World world("unwritten");
    world.run({op::create(file_i), op::write(file_i, 0, 8 * kib, 1), op::fsync(file_i)});
    // A's checkpoint logs I (the falloc's prealloc flags); A stops while its
    // PREFLUSH is in flight.
    const sim::TaskId forcer = world.spawn({op::falloc(file_i, 64 * kib, 4 * kib, true),
                                            op::log_force()});
    drive(world, forcer, &model::xfs::points::log_cil_pushed, {});
    world.scheduler.execute(sim::Candidate{forcer});
    REQUIRE(world.scheduler.task_state(forcer) == sim::TaskState::blocked);
    // B overwrites I and fsyncs: its data completes after A's PREFLUSH went out.
    const sim::TaskId fsyncer = world.spawn({op::write(file_i, 0, 4 * kib, 2), op::fsync(file_i)});
    drive(world, fsyncer, nullptr, {forcer});
    world.settle();
    CHECK(world.counter("log_forces.fsync") == 1);  // only the first fsync's
    const auto state = world.crash(false);
    check_mounted_cleanly(state);
    CHECK(block_of(state.files[file_i], 0) == data(file_i, 0, 2));
}

// ---- godown, the log tail, clones ----

TEST_CASE("xfs: godown -f forces the log, then nothing more reaches the disk") {
    World world("unwritten");
    world.run({op::create(file_i), op::write(file_i, 0, 16 * kib, 1), op::shutdown()});
    const auto writes = world.counter("disk_writes");
    world.run({op::write(file_i, 0, 16 * kib, 2), op::fsync(file_i), op::writeback(file_i),
               op::log_force(), op::create(file_j)});
    CHECK(world.counter("disk_writes") == writes);
    CHECK(world.counter("log_forces.shutdown") == 1);
    const auto state = world.crash(true);
    check_mounted_cleanly(state);
    CHECK(state.files[file_i].exists);
    CHECK(state.files[file_i].size_bytes == 0);
    CHECK_FALSE(state.files[file_j].exists);
}

TEST_CASE("xfs: when the log wraps, the AIL writes the metadata in place; recovery still works") {
    World world("unwritten", "none", 64);  // an 8-block log
    world.run({op::create(file_i)});
    for (std::uint64_t round = 0; round < 20; round++) {
        world.run({op::write(file_i, round * 4 * kib, 4 * kib, round + 1), op::fsync(file_i)});
    }
    CHECK(world.counter("log_forces") >= 20);
    CHECK(world.counter("ail_pushes") >= 2);
    const auto state = world.crash(false);
    check_mounted_cleanly(state);
    CHECK(state.files[file_i].size_bytes == 80 * kib);
    for (std::uint64_t round = 0; round < 20; round++) {
        CHECK(block_of(state.files[file_i], round * 4 * kib) ==
              data(file_i, round * 4 * kib, round + 1));
    }
}

TEST_CASE("xfs: a clone of a quiescent file system evolves independently") {
    World world("unwritten");
    world.run({op::create(file_i), op::write(file_i, 0, 8 * kib, 1), op::fsync(file_i)});
    const auto copy = world.fs->clone();
    world.run({op::write(file_i, 8 * kib, 8 * kib, 2), op::fsync(file_i)});
    const auto& device = copy->device();
    const auto state =
        copy->recover(device.crash_image(std::vector<bool>(device.pending().size(), false)));
    check_mounted_cleanly(state);
    CHECK(state.files[file_i].size_bytes == 8 * kib);
    CHECK(world.crash(false).files[file_i].size_bytes == 16 * kib);
}

TEST_CASE("xfs yield points: each declares what the code on either side touches, or changes what all read") {
    // A point that declares nothing touches everything: sleep sets reorder no step around it. Only
    // godown's and the freezer's points may: they change the shutdown flag and the freeze level,
    // which every step reads (model/xfs/points.hpp).
    for (const sim::YieldPoint* point : model::xfs::points::all) {
        CAPTURE(point->name);
        const std::string_view name = point->name;
        const bool freezer = name.starts_with("xfs.freeze.") || name.starts_with("xfs.quiesce.");
        const bool global = freezer || name == "xfs.shutdown.done";
        CHECK((point->touches == sim::footprint_all) == global);
    }
}
