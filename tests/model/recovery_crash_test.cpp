// A power cut inside recovery. Each model's mount yields
// the writes its recovery issues (btrfs: the log replay's commit; xfs: the
// recovered metadata written home); cutting after any of them, with any
// subset of the ones still in the cache kept, and mounting again must give
// what the uncut recovery gave, because of what those writes leave on disk.
// A deliberately non-idempotent recovery (the toy's replay-clear-first) must
// be caught by the engine, and only when the bound lets it cut.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"
#include "tests/support.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "checkers/oracle.hpp"
#include "loader/scenario.hpp"
#include "model/disk/block_device.hpp"
#include "model/filesystem.hpp"
#include "runner/campaign.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "runner/shrink.hpp"

namespace {

constexpr std::uint64_t kib = 1024;
using model::disk::MountRequest;

auto call(std::string_view name, std::uint32_t file = 0) -> model::OpCall {
    return {.name = name, .file = file};
}
auto write(std::uint32_t file, std::uint64_t offset, std::uint64_t length, std::uint64_t version)
    -> model::OpCall {
    return {.name = "write", .file = file, .offset = offset, .length = length, .has_range = true,
            .version = version};
}

/// What a read after mount returns, file by file (the story notes differ
/// between a first and a second mount: they say what each one found).
void check_same_files(const model::RecoveredState& expected, const model::RecoveredState& got) {
    REQUIRE(got.mounted == expected.mounted);
    CHECK(got.consistency_errors == expected.consistency_errors);
    REQUIRE(got.files.size() == expected.files.size());
    for (std::size_t file = 0; file < got.files.size(); file++) {
        CAPTURE(file);
        CHECK(got.files[file].exists == expected.files[file].exists);
        CHECK(got.files[file].size_bytes == expected.files[file].size_bytes);
        CHECK(got.files[file].blocks == expected.files[file].blocks);
        REQUIRE(got.files[file].extents.size() == expected.files[file].extents.size());
        for (std::size_t i = 0; i < got.files[file].extents.size(); i++) {
            CHECK(got.files[file].extents[i].file_block == expected.files[file].extents[i].file_block);
            CHECK(got.files[file].extents[i].blocks == expected.files[file].extents[i].blocks);
            CHECK(got.files[file].extents[i].unwritten == expected.files[file].extents[i].unwritten);
        }
    }
}

struct CutFigures {
    std::uint64_t cuts = 0;            // second mounts judged
    std::uint64_t replayed_again = 0;  // of them, mounts that had to recover again
};

/// Cuts the recovery of `image` after each of its writes, keeping every
/// subset of the recovery writes still in the cache, and mounts again: the
/// second mount reads what the first one's result says. After the whole
/// recovery, a mount has nothing left to replay.
auto check_every_cut(model::FileSystem& fs, const model::disk::Image& image,
                     const std::function<void(const model::RecoveredState&)>& also = {}) -> CutFigures {
    const model::RecoveredState pure = fs.recover(image);
    const model::Recovery first = fs.recover_with_writes(image);
    REQUIRE(first.state.mounted);
    check_same_files(pure, first.state);
    CHECK(first.state.notes == pure.notes);
    REQUIRE_FALSE(first.requests.empty());
    CutFigures figures;
    for (std::size_t issued = 1; issued <= first.requests.size(); issued++) {
        if (first.requests[issued - 1].kind != MountRequest::Kind::write) continue;
        model::disk::MountDevice device(image);
        for (std::size_t i = 0; i < issued; i++) device.issue(first.requests[i]);
        const std::size_t pending = device.pending().size();
        REQUIRE(pending <= 8);
        for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << pending); mask++) {
            std::vector<bool> keep(pending);
            for (std::size_t i = 0; i < pending; i++) keep[i] = ((mask >> i) & 1) != 0;
            CAPTURE(issued);
            CAPTURE(mask);
            const model::Recovery second = fs.recover_with_writes(device.crash_image(keep));
            check_same_files(first.state, second.state);
            if (also) also(second.state);
            figures.cuts++;
            if (!second.requests.empty()) figures.replayed_again++;
        }
    }
    model::disk::MountDevice device(image);
    for (const auto& request : first.requests) device.issue(request);
    // Every recovery ends with its writes durable (a FLUSH or a FUA last).
    CHECK(device.pending().empty());
    const model::Recovery after = fs.recover_with_writes(device.crash_image({}));
    check_same_files(first.state, after.state);
    CHECK(after.requests.empty());
    fs.forget_recovery();
    // What was stored for the recovery writes is gone; the crash image itself still mounts.
    check_same_files(pure, fs.recover(image));
    return figures;
}

auto image_now(const test_support::ModelWorld& world, bool keep) -> model::disk::Image {
    const auto& device = world.fs->device();
    return device.crash_image(std::vector<bool>(device.pending().size(), keep));
}

}  // namespace

TEST_CASE("recovery crash: btrfs log replay cut at every write mounts again to the same files") {
    const model::Geometry geometry{4096, 16384, "nvme"};
    test_support::ModelWorld world("btrfs", {}, geometry, {"I", "J"});
    world.run({call("create"), write(0, 0, 8 * kib, 1), call("fsync"), call("create", 1),
               write(1, 0, 4 * kib, 2), call("fsync", 1), write(0, 8 * kib, 4 * kib, 3), call("fsync")});
    const model::disk::Image image = image_now(world, false);
    const model::Recovery first = world.fs->recover_with_writes(image);
    // The replay's commit: the fs tree copy-on-write, FLUSH, the superblock with FUA.
    REQUIRE(first.requests.size() == 3);
    CHECK(first.requests[0].kind == MountRequest::Kind::write);
    CHECK_FALSE(first.requests[0].fua);
    CHECK(first.requests[1].kind == MountRequest::Kind::flush);
    CHECK(first.requests[2].fua);
    CHECK(first.requests[2].block == 0);
    world.fs->forget_recovery();
    const CutFigures figures = check_every_cut(*world.fs, image);
    // The tree write lost or kept, each with the old superblock: the log is replayed again.
    CHECK(figures.cuts == 3);
    CHECK(figures.replayed_again == 2);
}

TEST_CASE("recovery crash: a btrfs image without a log issues no recovery write") {
    const model::Geometry geometry{4096, 16384, "nvme"};
    test_support::ModelWorld world("btrfs", {}, geometry, {"I"});
    world.run({call("create"), write(0, 0, 8 * kib, 1), call("commit")});
    const model::Recovery recovery = world.fs->recover_with_writes(image_now(world, false));
    CHECK(recovery.state.mounted);
    CHECK(recovery.requests.empty());
    world.fs->forget_recovery();
}

TEST_CASE("recovery crash: xfs log recovery cut at every write mounts again to the same files") {
    const model::Geometry geometry{4096, 1024, "nvme"};
    test_support::ModelWorld world("xfs", {}, geometry, {"I", "J"});
    world.run({call("create"), write(0, 0, 16 * kib, 1), call("fsync"), call("create", 1),
               write(1, 0, 8 * kib, 2), call("fsync", 1)});
    const model::disk::Image image = image_now(world, false);
    const model::Recovery first = world.fs->recover_with_writes(image);
    // The recovered metadata home (no FUA), then the FLUSH that lets the tail move.
    REQUIRE(first.requests.size() == 2);
    CHECK(first.requests[0].kind == MountRequest::Kind::write);
    CHECK(first.requests[0].block == 0);
    CHECK_FALSE(first.requests[0].fua);
    CHECK(first.requests[1].kind == MountRequest::Kind::flush);
    world.fs->forget_recovery();
    const CutFigures figures = check_every_cut(*world.fs, image);
    CHECK(figures.cuts == 2);
    CHECK(figures.replayed_again == 1);  // the home write lost: the same records again
}

TEST_CASE("recovery crash: jbd2 replay cut at every write keeps every committed transaction (ext4)") {
    const model::Geometry geometry{4096, 6400, "nvme"};
    test_support::ModelWorld world("ext4", {}, geometry, {"A", "B"});
    // No kernel threads: each fsync commits in the caller; both transactions
    // stay on the checkpoint list, their buffers dirty and never written home.
    world.run({call("create"), write(0, 0, 8 * kib, 1), call("fsync"), call("create", 1),
               write(1, 0, 4 * kib, 2), call("fsync", 1)});
    const model::disk::Image image = image_now(world, false);
    const model::Recovery first = world.fs->recover_with_writes(image);
    // PASS_REPLAY's buffers home (block bitmap, inode bitmap, inode table,
    // directory; no FUA), the FLUSH, then journal_reset's superblock and
    // jbd2_mark_journal_empty's, both FUA.
    REQUIRE(first.requests.size() == 7);
    for (std::size_t i = 0; i < 4; i++) {
        CHECK(first.requests[i].kind == MountRequest::Kind::write);
        CHECK_FALSE(first.requests[i].fua);
        CHECK(first.requests[i].block > 1);
        if (i > 0) CHECK(first.requests[i].block > first.requests[i - 1].block);
    }
    CHECK(first.requests[4].kind == MountRequest::Kind::flush);
    for (std::size_t i = 5; i < 7; i++) {
        CHECK(first.requests[i].fua);
        CHECK(first.requests[i].block == 1);
    }
    REQUIRE(first.state.journal.has_value());
    CHECK(first.state.journal->durable.size() == 2);
    world.fs->forget_recovery();
    const std::vector<std::string> names = {"A", "B"};
    const checkers::CheckContext context{names, 4096};
    const checkers::Oracle oracle(2);
    const auto integrity = checkers::make_checker("journal_integrity");
    const CutFigures figures = check_every_cut(*world.fs, image, [&](const model::RecoveredState& state) {
        // Both committed transactions reach home, whichever replay writes the cut kept.
        std::vector<checkers::Violation> out;
        integrity->check(oracle, state, context, out);
        CHECK(out.empty());
        CHECK(integrity->at_stake(oracle, state, context));
    });
    // Cut after replay write k (k = 1..4) keeping any of the k in the cache:
    // 2 + 4 + 8 + 16 mounts with the old superblock, which replay the same two
    // transactions again; after journal_reset's superblock the log restarts
    // empty (recovery runs, finds nothing, rewrites the superblock); after
    // jbd2_mark_journal_empty's the journal is clean.
    CHECK(figures.cuts == 32);
    CHECK(figures.replayed_again == 31);
}

TEST_CASE("recovery crash: jbd2 writes the journal superblock only after the replayed blocks are flushed") {
    const model::Geometry geometry{4096, 6400, "nvme"};
    test_support::ModelWorld world("ext4", {}, geometry, {"A"});
    world.run({call("create"), call("fsync")});
    const model::Recovery first = world.fs->recover_with_writes(image_now(world, false));
    std::size_t flush = first.requests.size();
    for (std::size_t i = 0; i < first.requests.size(); i++) {
        CAPTURE(i);
        if (first.requests[i].kind == MountRequest::Kind::flush) flush = std::min(flush, i);
        // s_start moves (journal superblock, block 1) only after the FLUSH.
        if (first.requests[i].block == 1 && first.requests[i].kind == MountRequest::Kind::write)
            CHECK(i > flush);
    }
    CHECK(flush == 3);  // three home writes: inode bitmap, inode table, directory
    world.fs->forget_recovery();
}

TEST_CASE("mount device: a cut keeps FUA writes and flushed ones, and any subset of the rest") {
    model::disk::BlockDevice disk(64, *model::disk::find_profile("nvme"));
    disk.format(0, 64, model::disk::Content::zeros());
    const model::disk::Image image = disk.crash_image({});
    model::disk::MountDevice device(image);
    const auto meta = [](std::uint64_t block, std::uint64_t id, bool fua) {
        return MountRequest{
            MountRequest::Kind::write, block, 1, model::disk::Content::meta(id), fua, "meta", ""};
    };
    device.issue(meta(1, 1, false));
    device.issue(meta(2, 2, false));
    CHECK(device.pending().size() == 2);
    device.issue({MountRequest::Kind::flush, 0, 0, {}, false, "flush", ""});
    CHECK(device.pending().empty());
    device.issue(meta(3, 3, false));
    device.issue(meta(0, 4, true));
    REQUIRE(device.pending().size() == 1);
    const model::disk::Image lost = device.crash_image({false});
    CHECK(lost.read(1) == model::disk::Content::meta(1));
    CHECK(lost.read(0) == model::disk::Content::meta(4));
    CHECK(lost.read(3) == model::disk::Content::zeros());
    CHECK(device.crash_image({true}).read(3) == model::disk::Content::meta(3));
}

namespace {

// The toy journals pwrite; a mount replays the journal home. fdatasync
// flushes: the write is promised, and lives only in the journal.
constexpr const char* toy_journal = R"({
  "name": "toy/journal", "model": "toy",
  "device": {"block_size": 4096, "blocks": 1024, "profile": "nvme"},
  "setup": [{"op": "touch", "file": "A"}, {"op": "fdatasync", "file": "A"}],
  "tasks": [{"name": "app", "ops": [{"op": "pwrite", "file": "A", "offset": 0, "length": 8192},
                                   {"op": "fdatasync", "file": "A"}]}],
  "crash": {"unflushed": "any-subset"},
  "checkers": ["fsync_durability", "fs_consistency"],
  "explore": {"recovery_crashes": 1},
  "variants": [{"name": "replay", "config": {"journal": "replay"}, "expect": "holds"},
               {"name": "clear-first", "config": {"journal": "replay-clear-first"},
                "expect": {"violates": "fsync_durability"}}]
})";

auto fuzz_with(runner::Simulation& simulation, const std::string& strategy, std::uint32_t recovery_crashes)
    -> runner::FuzzReport {
    loader::ExploreBounds bounds = simulation.bounds();
    bounds.recovery_crashes = recovery_crashes;
    simulation.set_bounds(bounds);
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of(strategy);
    request.seed = 7;
    request.schedules = 50;
    return runner::fuzz(simulation, request);
}

}  // namespace

TEST_CASE("recovery crash: a non-idempotent recovery is caught by random and dfs, not with bound 0") {
    const loader::Scenario scenario = loader::parse_scenario(toy_journal, "toy-journal.json");
    CHECK(scenario.explore.recovery_crashes == 1);
    for (const std::string strategy : {"random", "dfs:2"}) {
        CAPTURE(strategy);
        runner::Simulation replay(scenario, *scenario.find_variant("replay"));
        const runner::FuzzReport holds = fuzz_with(replay, strategy, 1);
        CHECK_FALSE(holds.found);
        CHECK(holds.recovery_crash_states > 0);
        runner::Simulation clear_first(scenario, *scenario.find_variant("clear-first"));
        const runner::FuzzReport off = fuzz_with(clear_first, strategy, 0);
        CHECK_FALSE(off.found);
        CHECK(off.recovery_crash_states == 0);
        const runner::FuzzReport caught = fuzz_with(clear_first, strategy, 1);
        REQUIRE(caught.found);
        CHECK(caught.failing.violations.front().checker == "fsync_durability");
        REQUIRE(caught.failing.crash.has_value());
        REQUIRE(caught.failing.crash->recovery.size() == 1);
        test_support::check_in_order(caught.failing.story,
                                     {"power cut after step", "power cut during log replay after request ",
                                      "unflushed recovery write(s) kept"});
        // The recorded cut replays to the same run.
        const runner::RunOutcome replayed =
            clear_first.replay(caught.failing.choices, caught.failing.crash, true);
        REQUIRE(replayed.violated());
        CHECK(replayed.trace_hash == caught.failing.trace_hash);
        REQUIRE(replayed.crash.has_value());
        CHECK(replayed.crash->recovery == caught.failing.crash->recovery);
    }
}

TEST_CASE("recovery crash: a repro records the cut inside recovery, and replay and shrink keep it") {
    const loader::Scenario scenario = loader::parse_scenario(toy_journal, "toy-journal.json");
    runner::Simulation simulation(scenario, *scenario.find_variant("clear-first"));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("random");
    request.seed = 3;
    request.schedules = 50;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    REQUIRE(report.found);
    runner::Repro repro = runner::make_repro(report, request, "toy-journal.json", toy_journal, "clear-first");
    const std::string path = "recovery-crash-test-repro.json";
    runner::write_repro(repro, path);
    const runner::LoadedRepro loaded = runner::load_repro(path);
    REQUIRE(loaded.repro.crash.has_value());
    CHECK(loaded.repro.crash->recovery == report.failing.crash->recovery);
    CHECK(loaded.repro.bounds.recovery_crashes == 1);
    CHECK(loaded.replayed.trace_hash == report.failing.trace_hash);
    runner::ShrinkOptions options;
    const runner::ShrinkResult shrunk = runner::shrink(loaded.repro, options);
    REQUIRE(shrunk.repro.crash.has_value());
    REQUIRE(shrunk.repro.crash->recovery.size() == 1);
    CHECK(shrunk.outcome.violations.front().checker == "fsync_durability");
    std::remove(path.c_str());
}
