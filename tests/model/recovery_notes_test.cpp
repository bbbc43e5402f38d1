// The story lines recovery writes (RecoveredState::notes) come
// only from what it read from the image, never from in-memory state a crash
// would lose. Each test takes one crash image, lets the file system run on
// (its in-memory state changes: a transaction commits, the CIL fills and
// empties), and mounts the same image again: every note must be the same.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "model/disk/block_device.hpp"
#include "model/filesystem.hpp"

namespace {

constexpr std::uint64_t kib = 1024;

auto call(std::string_view name, std::uint32_t file = 0) -> model::OpCall {
    return {.name = name, .file = file};
}
auto write(std::uint32_t file, std::uint64_t offset, std::uint64_t length, std::uint64_t version)
    -> model::OpCall {
    return {.name = "write", .file = file, .offset = offset, .length = length, .has_range = true,
            .version = version};
}

/// Every unflushed write kept or none: the image a crash leaves now.
auto image_now(const test_support::ModelWorld& world, bool keep) -> model::disk::Image {
    const auto& device = world.fs->device();
    return device.crash_image(std::vector<bool>(device.pending().size(), keep));
}

void check_same_notes(const model::RecoveredState& before, const model::RecoveredState& after) {
    CHECK(before.mounted == after.mounted);
    REQUIRE(before.notes.size() == after.notes.size());
    for (std::size_t i = 0; i < before.notes.size(); i++) {
        CAPTURE(i);
        CHECK(before.notes[i] == after.notes[i]);
    }
}

/// Takes the crash image of `world` now (every unflushed write kept, then
/// none), lets a copy of the file system run each batch of `later` operations
/// (its in-memory state moves on, the image does not) and mounts the same
/// image after each batch, and once more from the file system that crashed:
/// every note must be the same.
void check_notes_from_image(test_support::ModelWorld& world, const std::string& model,
                            const model::Geometry& geometry,
                            const std::vector<std::vector<model::OpCall>>& later) {
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const model::disk::Image image = image_now(world, keep);
        const model::RecoveredState first = world.fs->recover(image);
        REQUIRE(first.mounted);
        test_support::ModelWorld moved(model, {}, geometry, {"I", "J"});
        moved.fs = world.fs->clone();
        for (const auto& batch : later) {
            moved.run(batch);
            check_same_notes(first, moved.fs->recover(image));
        }
        check_same_notes(first, world.fs->recover(image));
    }
}

}  // namespace

TEST_CASE("recovery notes: xfs tells only what the image holds, not the CIL in memory") {
    const model::Geometry geometry{4096, 1024, "nvme"};
    test_support::ModelWorld world("xfs", {}, geometry, {"I", "J"});
    // Committed transactions sit in the CIL: nothing on disk says so.
    world.run({call("create"), write(0, 0, 16 * kib, 1), call("log_force"),
               write(0, 16 * kib, 8 * kib, 2), {.name = "sync_file_range", .file = 0, .offset = 0,
                                                .length = 32 * kib, .has_range = true}});
    // The in-memory state moves on: the CIL empties, more transactions commit.
    check_notes_from_image(world, "xfs", geometry,
                           {{call("log_force"), call("create", 1), write(1, 0, 8 * kib, 3), call("fsync", 1),
                             write(0, 0, 4 * kib, 4), call("writeback")}});
}

TEST_CASE("recovery notes: btrfs tells only what the image holds, not the running transaction") {
    const model::Geometry geometry{4096, 16384, "nvme"};
    test_support::ModelWorld world("btrfs", {}, geometry, {"I", "J"});
    world.run({call("create"), write(0, 0, 8 * kib, 1), call("fsync"), write(0, 8 * kib, 4 * kib, 2)});
    // Commit the running transaction and start another: in-memory
    // transaction state changes, the image does not.
    check_notes_from_image(world, "btrfs", geometry,
                           {{call("commit"), call("create", 1), write(1, 0, 4 * kib, 3), call("fsync", 1)},
                            {call("commit")}});
}
