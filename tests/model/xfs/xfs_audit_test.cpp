// xfs: early returns and error paths carry the kernel's
// conditions (v5.7). A buffered write reserves its delalloc blocks from the
// free counter, so the writeback that allocates them never finds
// the device full; a write that cannot reserve returns -ENOSPC and the oracle
// records no promise the kernel never made.
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

TEST_CASE("xfs audit: a write the free blocks cannot reserve fails; writeback never meets a full device") {
    // 64 blocks: block 0, an 8-block log, 55 data blocks. A 64-block write
    // into a hole cannot take its delalloc reservation from the free counter
    // (xfs_bmapi_reserve_delalloc -> xfs_mod_fdblocks): -ENOSPC, after
    // xfs_flush_inodes and one retry, and nothing dirtied.
    test_support::ModelWorld world("xfs", {}, model::Geometry{4096, 64, "nvme"}, {"I"});
    CHECK(run_one(world, {.name = "create"}) == model::OpResult::ok);
    CHECK(run_one(world, {.name = "write", .offset = 0, .length = 64 * 4096, .has_range = true,
                          .version = 1}) == model::OpResult::failed);
    CHECK(run_one(world, {.name = "fsync"}) == model::OpResult::ok);
    // 55 blocks fit exactly, and their writeback finds them all.
    CHECK(run_one(world, {.name = "write", .offset = 0, .length = 55 * 4096, .has_range = true,
                          .version = 2}) == model::OpResult::ok);
    CHECK(run_one(world, {.name = "fsync"}) == model::OpResult::ok);
    CHECK(run_one(world, {.name = "sync_file_range", .offset = 0, .length = 55 * 4096,
                          .has_range = true}) == model::OpResult::ok);
    // Nothing is left: one more block fails.
    CHECK(run_one(world, {.name = "write", .offset = 55 * 4096, .length = 4096, .has_range = true,
                          .version = 3}) == model::OpResult::failed);
}
