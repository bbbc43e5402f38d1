// ENOSPC and short writes on btrfs, xfs and ext4: a write that
// cannot reserve space returns -ENOSPC and acknowledges nothing, one that
// copied some pages first returns that count and the oracle holds only
// those bytes, and a write that reserved is always allocated at writeback.
// Paths are relative to the source root.
#include <doctest/doctest.h>

#include "tests/support.hpp"
#include "tests/model/world.hpp"

#include <string>

#include <nlohmann/json.hpp>

#include "loader/json_reader.hpp"
#include "loader/scenario.hpp"
#include "runner/campaign.hpp"
#include "runner/runner.hpp"
#include "sim/strategy.hpp"

namespace {

using Json = nlohmann::json;

auto scripted(const Json& document, const char* path, const char* variant) -> runner::RunOutcome {
    const auto scenario = loader::parse_scenario(document.dump(), path);
    const loader::Variant* found = scenario.find_variant(variant);
    REQUIRE(found != nullptr);
    runner::Simulation simulation(scenario, *found);
    return simulation.run_scripted(true);
}

auto contains(const std::string& story, const std::string& needle) -> bool {
    return story.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("btrfs ENOSPC: a short write promises the pages it copied; a write with no room changes nothing") {
    constexpr const char* path = "scenarios/btrfs/enospc-write.json";
    Json document = Json::parse(loader::read_text_file(path));
    // The shipped schedule: the app first. Its first pass reserves 32 of the
    // 40 free pages; the second (16) flushes, commits and gives up: a short
    // write. The writer's 16 pages then find 8 free: -ENOSPC.
    const runner::RunOutcome outcome = scripted(document, path, "fix-3");
    CHECK_FALSE(outcome.violated());
    test_support::check_in_order(
        outcome.story,
        {"btrfs_alloc_data_chunk_ondemand flushes delalloc, waits for ordered extents and commits",
         "joins the transaction (nothing pinned to free: no commit)",
         "short write: 131072 of 196608 bytes (-ENOSPC for the rest)",
         "of inode C: returns -ENOSPC and changes nothing"});
    CHECK(outcome.crash_states >= 1);
    // The writer first: C fits; B's first pass (32) finds 24 free: -ENOSPC.
    document["schedule"] = Json::array({Json{{"run", "writer"}, {"until", "btrfs.flusher.after_submit"}},
                                        Json{{"run", "endio"}}, Json{{"run", "writer"}}, Json{{"run", "app"}},
                                        Json{{"crash", "none"}}});
    const runner::RunOutcome reversed = scripted(document, path, "fix-3");
    CHECK_FALSE(reversed.violated());
    CHECK(contains(reversed.story, "of inode B: returns -ENOSPC and changes nothing"));
    CHECK_FALSE(contains(reversed.story, "short write"));
}

TEST_CASE("btrfs ENOSPC: no schedule reaches a full allocator or a violation") {
    const auto scenario = loader::load_scenario("scenarios/btrfs/enospc-write.json");
    for (const char* variant : {"fix-3", "before-fix"}) {
        CAPTURE(variant);
        const loader::Variant* found = scenario.find_variant(variant);
        REQUIRE(found != nullptr);
        runner::Simulation simulation(scenario, *found);
        runner::FuzzRequest request;
        request.strategy = test_support::spec_of("random");
        request.schedules = 200;
        CHECK_FALSE(runner::fuzz(simulation, request).found);
    }
}

TEST_CASE("btrfs ENOSPC: an O_DIRECT write that cannot reserve returns -ENOSPC; a buffered one is short") {
    // 64 blocks: 9 of superblock and metadata, 55 of data.
    test_support::ModelWorld world("btrfs", {}, model::Geometry{4096, 64, "nvme"}, {"I"});
    const std::map<std::string, bool> direct{{"direct", true}};
    auto run_one = [&world](const model::OpCall& call) {
        model::OpResult result = model::OpResult::ok;
        world.scheduler.spawn("app", [&] { result = world.execute(call); });
        world.settle();
        return result;
    };
    CHECK(run_one({.name = "create"}) == model::OpResult::ok);
    CHECK(run_one({.name = "write", .offset = 0, .length = 56 * 4096, .has_range = true, .version = 1,
                   .flags = &direct}) == model::OpResult::failed);
    // 64 pages: the first pass (32) fits, the second does not.
    CHECK(run_one({.name = "write", .offset = 0, .length = 64 * 4096, .has_range = true, .version = 2}) ==
          model::OpResult::short_write);
    CHECK(run_one({.name = "fsync"}) == model::OpResult::ok);
    // 23 data blocks left: a 23-block O_DIRECT write fits exactly.
    CHECK(run_one({.name = "write", .offset = 0, .length = 23 * 4096, .has_range = true, .version = 3,
                   .flags = &direct}) == model::OpResult::ok);
}

TEST_CASE("xfs ENOSPC: the delalloc reservation makes a write short or whole, never a failed writeback") {
    constexpr const char* path = "scenarios/xfs/enospc-write.json";
    Json document = Json::parse(loader::read_text_file(path));
    // The app first: A still holds its blocks, 7 are free, the 16-block hole
    // cannot be reserved: the write stops after B's 8 mapped blocks.
    const runner::RunOutcome outcome = scripted(document, path, "fix");
    CHECK_FALSE(outcome.violated());
    CHECK(contains(outcome.story, "short write: 32768 of 98304 bytes (-ENOSPC for the rest)"));
    CHECK_FALSE(contains(outcome.story, "writeback could not allocate"));
    // The unlink first: its blocks are free to the reservation, the write is whole.
    // fsync's writeback submits three ioends; the two over unwritten extents
    // complete in the ioend workqueue.
    document["schedule"] = Json::array({Json{{"run", "cleaner"}},
                                        Json{{"run", "app"}, {"until", "xfs.wb.submit"}, {"count", 3}},
                                        Json{{"run", "ioend"}}, Json{{"run", "ioend"}}, Json{{"run", "app"}},
                                        Json{{"crash", "none"}}});
    const runner::RunOutcome reversed = scripted(document, path, "fix");
    CHECK_FALSE(reversed.violated());
    CHECK_FALSE(contains(reversed.story, "short write"));
    CHECK_FALSE(contains(reversed.story, "-ENOSPC"));
    // A write into a hole only: nothing copied, so xfs_flush_inodes and one
    // retry, then -ENOSPC.
    document["tasks"][0]["ops"][0]["offset"] = 32768;
    document["tasks"][0]["ops"][0]["length"] = 65536;
    document["schedule"] =
        Json::array({Json{{"run", "app"}}, Json{{"run", "cleaner"}}, Json{{"crash", "none"}}});
    const runner::RunOutcome hole = scripted(document, path, "fix");
    CHECK_FALSE(hole.violated());
    test_support::check_in_order(hole.story, {"-ENOSPC: xfs_flush_inodes writes back every inode",
                                              "returns -ENOSPC and changes nothing"});
}

TEST_CASE("ext4 ENOSPC: a write that found blocks for some of its holes is short") {
    constexpr const char* path = "scenarios/jbd2/enospc-write.json";
    Json document = Json::parse(loader::read_text_file(path));
    // One free block: a two-block write copies the first and stops; with no
    // block waiting for a commit, ext4_should_retry_alloc gives up.
    document["tasks"][0]["ops"] =
        Json::array({Json{{"op", "write"}, {"file", "B"}, {"offset", 0}, {"length", 8192}},
                     Json{{"op", "fsync"}, {"file", "B"}}});
    document["schedule"] =
        Json::array({Json{{"run", "app"}}, Json{{"run", "cleaner"}}, Json{{"crash", "none"}}});
    const runner::RunOutcome outcome = scripted(document, path, "fix");
    CHECK_FALSE(outcome.violated());
    test_support::check_in_order(outcome.story, {"write B: ENOSPC (no free block for 1 hole(s) of 2)",
                                                 "write B: short write: 4096 of 8192 bytes"});
    CHECK(outcome.crash_states >= 1);
}
