// Issue 9 §1 for xfs: early returns and error paths carry the kernel's
// conditions (v5.7). A writeback that cannot allocate records the error on
// the mapping, and the next fsync / sync_file_range returns it
// (file_write_and_wait_range -> filemap_check_errors) instead of 0, so the
// oracle records no promise the kernel never made.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"

#include <cstdint>
#include <vector>

#include "model/filesystem.hpp"

namespace {

auto run_one(test_support::ModelWorld& world, const model::OpCall& call) -> model::OpResult {
    model::OpResult result = model::OpResult::ok;
    world.scheduler.spawn("app", [&] { result = world.execute(call); });
    world.settle();
    return result;
}

}  // namespace

TEST_CASE("xfs audit: fsync returns the writeback's ENOSPC once, as filemap_check_errors does") {
    // 64 blocks: block 0, an 8-block log, 55 data blocks; a 64-block write
    // reserves delalloc (no reservation accounting) and cannot be allocated whole.
    test_support::ModelWorld world("xfs", {}, model::Geometry{4096, 64, "nvme"}, {"I"});
    CHECK(run_one(world, {.name = "create"}) == model::OpResult::ok);
    CHECK(run_one(world, {.name = "write", .offset = 0, .length = 64 * 4096, .has_range = true,
                          .version = 1}) == model::OpResult::ok);
    CHECK(run_one(world, {.name = "fsync"}) == model::OpResult::failed);
    // The error was reported; the pages that could not be written stay dirty
    // and fail again at the next writeback.
    CHECK(run_one(world, {.name = "sync_file_range", .offset = 0, .length = 64 * 4096,
                          .has_range = true}) == model::OpResult::failed);
    // A file that fits is fsynced normally.
    test_support::ModelWorld roomy("xfs", {}, model::Geometry{4096, 1024, "nvme"}, {"I"});
    CHECK(run_one(roomy, {.name = "create"}) == model::OpResult::ok);
    CHECK(run_one(roomy, {.name = "write", .offset = 0, .length = 64 * 4096, .has_range = true,
                          .version = 1}) == model::OpResult::ok);
    CHECK(run_one(roomy, {.name = "fsync"}) == model::OpResult::ok);
}
