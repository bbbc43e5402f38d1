// The oracle and the checkers alone: hand-built promises and recovered states,
// no model run (a checker's verdict must not depend on a model being right).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "checkers/oracle.hpp"
#include "model/filesystem.hpp"

namespace {

using model::RecoveredState;
using model::disk::Content;

const std::vector<std::string> names = {"I", "J"};
const checkers::CheckContext context{names, 4096};

/// I was written [0, 4) blocks with version 1 (16 KiB), then fsynced; the
/// fsync returned when `returned`.
auto written_and_fsynced(bool returned) -> checkers::Oracle {
    checkers::Oracle oracle(2);
    // A write past EOF raises the size: the workload records both.
    const std::size_t grow = oracle.begin_size(0, false, 4 * 4096);
    const std::uint64_t version = oracle.begin_write();
    oracle.end_write(0, 0, 4, version, 4 * 4096);
    oracle.end_size(0, grow);
    const std::size_t fsync = oracle.begin_fsync(0, 10, "fsync #1 of I");
    if (returned) oracle.end_fsync(fsync, 12);
    return oracle;
}

/// A mounted image where I has 4 blocks reading a run starting with `first`,
/// J absent.
auto state_with(Content first, std::uint64_t size_bytes = 4 * 4096) -> RecoveredState {
    RecoveredState state;
    state.mounted = true;
    state.device_blocks = 100;
    state.files.resize(2);
    state.files[0].exists = true;
    state.files[0].size_bytes = size_bytes;
    state.files[0].blocks.assign(0, 4, first);  // a run: block b reads first.shifted(b)
    state.files[0].extents.push_back({0, 20, 4, false});
    return state;
}

auto check(const std::string& checker, const checkers::Oracle& oracle, const RecoveredState& state)
    -> std::vector<checkers::Violation> {
    std::vector<checkers::Violation> found;
    checkers::make_checker(checker)->check(oracle, state, context, found);
    return found;
}

}  // namespace

TEST_CASE("oracle: an fsync's promise is the completed writes at its start, and binds when it returns") {
    checkers::Oracle oracle(2);
    const std::uint64_t v1 = oracle.begin_write();
    oracle.end_write(0, 0, 2, v1, 2 * 4096);
    const std::uint64_t epoch = oracle.epoch();
    const std::size_t fsync = oracle.begin_fsync(0, 5, "fsync #1 of I");
    // A write that completes after the fsync began is not part of its promise.
    const std::uint64_t v2 = oracle.begin_write();
    oracle.end_write(0, 2, 4, v2, 4 * 4096);
    REQUIRE(oracle.promises().size() == 1);
    const checkers::Promise& promise = oracle.promises()[0];
    CHECK_FALSE(promise.returned);
    CHECK(oracle.epoch() == epoch);  // nothing binds yet
    oracle.end_fsync(fsync, 9);
    CHECK(oracle.promises()[0].returned);
    CHECK(oracle.promises()[0].returned_step == 9);
    CHECK(oracle.epoch() > epoch);
    CHECK(promise.size_bytes == 2 * 4096);
    CHECK(promise.contents.find(1).has_value());
    CHECK_FALSE(promise.contents.find(2).has_value());
    CHECK(v2 > v1);
}

TEST_CASE("fsync_durability: the fsynced data, or newer, survives; zeros or an older version do not") {
    const checkers::Oracle oracle = written_and_fsynced(true);
    CHECK(check("fsync_durability", oracle, state_with(Content::data(0, 0, 1))).empty());
    // A later write's version is newer than the promise: fine.
    CHECK(check("fsync_durability", oracle, state_with(Content::data(0, 0, 2))).empty());
    const auto lost = check("fsync_durability", oracle, state_with(Content::zeros()));
    REQUIRE_FALSE(lost.empty());
    CHECK(lost[0].checker == "fsync_durability");
    CHECK(lost[0].file == "I");
    CHECK(lost[0].offset == 0);
    CHECK(lost[0].message.find("found zeros") != std::string::npos);
    CHECK(lost[0].message.find("fsync #1 of I") != std::string::npos);
    // A size below the promised one loses the data past it.
    CHECK_FALSE(check("fsync_durability", oracle, state_with(Content::data(0, 0, 1), 4096)).empty());
}

TEST_CASE("fsync_durability: an fsync that has not returned promises nothing") {
    const checkers::Oracle oracle = written_and_fsynced(false);
    CHECK(check("fsync_durability", oracle, state_with(Content::zeros(), 0)).empty());
    CHECK_FALSE(
        checkers::make_checker("fsync_durability")->at_stake(oracle, state_with(Content::zeros()), context));
    CHECK(checkers::make_checker("fsync_durability")
              ->at_stake(written_and_fsynced(true), state_with(Content::zeros()), context));
}

TEST_CASE("no_stale_data: a file reads its own data or zeros, never an earlier owner's block") {
    const checkers::Oracle oracle = written_and_fsynced(true);
    CHECK(check("no_stale_data", oracle, state_with(Content::data(0, 0, 1))).empty());
    CHECK(check("no_stale_data", oracle, state_with(Content::zeros())).empty());
    const auto stale = check("no_stale_data", oracle, state_with(Content::stale(55)));
    REQUIRE_FALSE(stale.empty());
    CHECK(stale[0].checker == "no_stale_data");
    CHECK(stale[0].file == "I");
    // Another file's data is stale for this one too.
    CHECK_FALSE(check("no_stale_data", oracle, state_with(Content::data(1, 0, 1))).empty());
}

TEST_CASE("frozen_image: a frozen image replays at most the final superblock transaction") {
    const checkers::Oracle oracle(2);
    checkers::CheckContext frozen = context;
    frozen.frozen = model::FreezeLevel::complete;
    const auto record = [](std::uint64_t lsn, bool unmount, std::uint32_t transactions, bool superblock_only,
                           const char* kinds) {
        return model::LogRecordFound{lsn, unmount, transactions, superblock_only, kinds};
    };
    const auto judge = [&](const checkers::CheckContext& at_cut, std::vector<model::LogRecordFound> records) {
        RecoveredState state = state_with(Content{});
        state.log_records = std::move(records);
        std::vector<checkers::Violation> found;
        const auto checker = checkers::make_checker("frozen_image");
        REQUIRE(checker != nullptr);
        checker->check(oracle, state, at_cut, found);
        CHECK(checker->at_stake(oracle, state, at_cut) == (at_cut.frozen == model::FreezeLevel::complete));
        return found;
    };
    // xfs_fs_freeze's own shape: the unmount record, then its xfs_sync_sb.
    CHECK(judge(frozen, {record(7, true, 0, false, ""), record(8, false, 1, true, "xfs_sync_sb")}).empty());
    CHECK(judge(frozen, {}).empty());
    SUBCASE("a record that changes an inode") {
        const auto found =
            judge(frozen, {record(7, false, 1, false, "xfs_create"), record(8, true, 0, false, "")});
        REQUIRE(found.size() == 1);
        CHECK(found[0].message ==
              "a frozen image's log needs replay of record lsn 7 (xfs_create), which changes more than the "
              "superblock");
    }
    SUBCASE("a second superblock transaction after the unmount record") {
        const auto found =
            judge(frozen, {record(7, true, 0, false, ""), record(8, false, 1, true, "xfs_sync_sb"),
                           record(9, false, 1, true, "xfs_sync_sb")});
        REQUIRE(found.size() == 1);
        CHECK(found[0].found == "2 superblock transactions");
    }
    SUBCASE("not frozen at the cut, or frozen only to SB_FREEZE_FS: nothing at stake") {
        CHECK(judge(context, {record(7, false, 1, false, "xfs_create")}).empty());
        checkers::CheckContext freezing = context;
        freezing.frozen = model::FreezeLevel::fs;
        CHECK(judge(freezing, {record(7, false, 1, false, "xfs_create")}).empty());
    }
}
