// ext4's directories and block groups in the ext4/jbd2 model, and the
// commit-time checkpoint scan they set up under fs_mark ("jbd2: fix
// checkpoint cleanup performance regression"): subdirectories
// spread over the groups (find_group_orlov), files in their directory's group
// (find_group_other), and the oldest checkpoint list that every commit scans.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "model/filesystem.hpp"

namespace {

auto call(const char* name, std::uint32_t file = 0) -> model::OpCall {
    return {.name = name, .file = file};
}

// Directories d0..d(n-1) are files 0..n-1; then "x" in the root, then d0/f0.
auto names(std::uint32_t dirs) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (std::uint32_t d = 0; d < dirs; d++) out.push_back("d" + std::to_string(d));
    out.emplace_back("x");
    out.emplace_back("d0/f0");
    out.emplace_back("nodir/f");
    return out;
}

struct DirWorld : test_support::ModelWorld {
    DirWorld(const std::string& tree, std::uint64_t blocks, std::uint32_t dirs)
        : ModelWorld("ext4", {{"checkpoint_cleanup", tree}}, model::Geometry{4096, blocks, "nvme"},
                     names(dirs)),
          dirs(dirs) {}
    std::uint32_t dirs;
    [[nodiscard]] auto x() const -> std::uint32_t { return dirs; }
    [[nodiscard]] auto d0_f0() const -> std::uint32_t { return dirs + 1; }
    void mkdirs() {
        std::vector<model::OpCall> ops;
        for (std::uint32_t d = 0; d < dirs; d++) ops.push_back(call("mkdir", d));
        run(ops);
    }
};

}  // namespace

TEST_CASE("ext4: a file in a subdirectory survives a crash after its fsync; a missing directory is ENOENT") {
    DirWorld world("patch-2", 6400, 2);
    world.mkdirs();
    world.run({call("create", world.d0_f0()), call("fsync", world.d0_f0())});
    world.run({call("create", world.dirs + 2)});
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    CHECK(state.files[world.d0_f0()].exists);
    CHECK_FALSE(state.files[world.x()].exists);
    CHECK_FALSE(state.files[world.dirs + 2].exists);  // "nodir/f": no directory nodir, ENOENT
    CHECK(world.counter("ops.create") == 2);
}

TEST_CASE("ext4: a directory a sync made durable is found after a crash, with no data of a file") {
    // fs_mark's set-up makes its directories and syncs; sync promises every
    // name it finds, directories too. The mount reads a directory as the real
    // kernel's crash states do (stat after the mount): present, size 0.
    DirWorld world("patch-2", 6400, 2);
    world.mkdirs();
    world.run({call("sync")});
    world.run({call("create", world.d0_f0())});  // not committed
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    for (std::uint32_t d = 0; d < world.dirs; d++) {
        CAPTURE(d);
        CHECK(state.files[d].exists);
        CHECK(state.files[d].size_bytes == 0);
        CHECK(state.files[d].extents.empty());
        CHECK(state.files[d].blocks.end_key() == 0);
    }
    CHECK_FALSE(state.files[world.d0_f0()].exists);
}

TEST_CASE("ext4: mkdir spreads directories over the block groups; each directory's files live in its group") {
    // 4 KiB blocks: 32768 blocks a group; a 4-group device after the log.
    DirWorld world("patch-2", 2 + 1024 + 4 * 32768, 3);
    world.mkdirs();
    world.run({call("create", world.d0_f0()), call("fsync", world.d0_f0())});
    // mkdir x3 (inode bitmap, inode table, block bitmap, directory block each,
    // in groups 1, 2, 3; the root's directory block once), then d0/f0 in
    // group 1: its inode and d0's inode share an inode-table block.
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    REQUIRE(state.journal.has_value());
    REQUIRE(state.journal->durable.size() == 1);
    CHECK(state.journal->durable[0].updates.size() == 3 * 4 + 1);
    std::vector<std::string> groups;
    for (const auto& [block, name] : state.journal->block_names) {
        if (name.find("inode bitmap") != std::string::npos) groups.push_back(name);
    }
    // The logged ones: groups 1 to 3's (mkdir); the audit names only logged blocks.
    CHECK(groups.size() == 3);
    std::set<std::uint64_t> groups_read;  // every group's metadata is read at mount (32768 blocks a group)
    for (const auto& [block, version] : state.journal->home_versions) groups_read.insert(block / 32768);
    CHECK(groups_read.size() == 4);
    CHECK(state.files[world.d0_f0()].exists);
}

TEST_CASE(
    "ext4: each commit's cleanup scans the oldest checkpoint list whole on v6.5, one buffer with busy-stop") {
    // 40 directories in one transaction, committed by x's fsync: their
    // directory blocks (and the shared bitmaps and inode-table blocks) stay
    // dirty on transaction 1's checkpoint list. Each later fsync commits a
    // transaction that starts by cleaning that list (C2).
    constexpr std::uint32_t dirs = 40;
    std::map<std::string, std::uint64_t> longest;
    std::map<std::string, std::uint64_t> steps;
    for (const char* tree : {"v6.5", "patch-1", "patch-2", "hybrid-v5.8"}) {
        CAPTURE(tree);
        DirWorld world(tree, 6400, dirs);
        world.mkdirs();
        world.run({call("create", world.x()), call("fsync", world.x())});
        CHECK(world.counter("cp_scan_steps") == 0);  // nothing on a checkpoint list before it
        world.run({call("create", world.d0_f0()), call("fsync", world.d0_f0())});
        steps[tree] = world.counter("cp_scan_steps");
        longest[tree] = world.counter("cp_scan_longest");
    }
    // v6.5 visits every buffer of transaction 1's list: 40 directory blocks,
    // the root's, the two bitmaps and 3 inode-table blocks (busy: dirty; or
    // re-logged by transaction 2, and then freed).
    CHECK(steps["v6.5"] == dirs + 1 + 2 + 3);
    CHECK(longest["v6.5"] == steps["v6.5"]);
    // SHRINK_BUSY_STOP (and v5.8's journal_clean_one_cp_list) stops at the
    // first busy buffer. The list is in logging order: the inode bitmap and
    // the first inode-table block lead it, and d0/f0's create re-logged both
    // (unlocked, not dirty): patch 1/3 alone removes them and stops at the
    // third, the dirty block bitmap; with b_transaction tested the head is busy.
    CHECK(steps["patch-1"] == 3);
    CHECK(steps["patch-2"] == 1);
    CHECK(steps["hybrid-v5.8"] == 1);
}

namespace {

// rmdir-revoke's story in one task, kernel threads off (the caller commits):
// d0 and its block D in transaction 1; d0/f0 unlinked, d0 removed and x
// created in transaction 2 (D revoked); x's first block written (D, reused)
// and fsynced in transaction 3; a crash keeps all three in the log.
auto revoke_story(const std::string& revoke) -> model::RecoveredState {
    test_support::ModelWorld world("ext4", {{"checkpoint_cleanup", "patch-2"}, {"revoke", revoke}},
                                   model::Geometry{4096, 6400, "nvme"}, names(1));
    const std::uint32_t d0 = 0;
    const std::uint32_t x = 1;
    const std::uint32_t d0_f0 = 2;
    world.run({call("mkdir", d0), call("create", d0_f0), call("fsync", d0_f0)});
    world.run({call("unlink", d0_f0), call("rmdir", d0), call("create", x), call("fsync", x)});
    world.run({{.name = "write", .file = x, .offset = 0, .length = 4096, .has_range = true, .version = 7},
               call("fsync", x)});
    CHECK(world.counter("ops.rmdir") == 1);
    return world.crash(false);
}

}  // namespace

TEST_CASE("ext4: rmdir revokes its directory's block, and replay does not write the old copy over new data") {
    const auto state = revoke_story("yes");
    test_support::check_mounted_cleanly(state);
    REQUIRE(state.journal.has_value());
    REQUIRE(state.journal->durable.size() == 3);
    // Transaction 1 logged d0's block D; transaction 2 revoked it; x's data went to D.
    REQUIRE(state.journal->durable[1].revoked.size() == 1);
    const std::uint64_t dir_block = state.journal->durable[1].revoked[0];
    const auto& logged = state.journal->durable[0].updates;
    CHECK(std::any_of(logged.begin(), logged.end(),
                      [&](const auto& update) { return update.block == dir_block; }));
    const auto& file = state.files[1];
    REQUIRE(file.extents.size() == 1);
    CHECK(file.extents[0].device_block == dir_block);
    CHECK(test_support::block_of(file, 0) == test_support::data(1, 0, 7));
    CHECK(test_support::has_note(state,
                                 "PASS_REVOKE found 1 revoked blocks; PASS_REPLAY skipped 1 revoked copies"));
    CHECK_FALSE(state.files[0].exists);
}

TEST_CASE(
    "ext4: without revoke records (a hypothetical kernel) replay writes the old directory block over x's "
    "data") {
    const auto state = revoke_story("hypothetical-none");
    CHECK(state.mounted);
    REQUIRE(state.journal.has_value());
    REQUIRE(state.journal->durable.size() == 3);
    CHECK(state.journal->durable[1].revoked.empty());
    CHECK_FALSE(test_support::has_note(state, "PASS_REVOKE"));
    const auto& file = state.files[1];
    REQUIRE(file.extents.size() == 1);
    CHECK(test_support::block_of(file, 0) != test_support::data(1, 0, 7));
}
