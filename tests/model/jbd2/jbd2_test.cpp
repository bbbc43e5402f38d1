// The ext4/jbd2 model's mechanisms through the public FileSystem interface
// ("jbd2: fix checkpoint cleanup performance regression"): commits and
// recovery, checkpoint lists, the commit-time cleanup of each tree, the
// checkpointer and the tail, and the re-logged buffer race of patch 2/3.
// Without start_daemons() the caller of fsync commits (as the set-up does).
#include <doctest/doctest.h>

#include "tests/model/world.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "checkers/oracle.hpp"
#include "model/filesystem.hpp"
#include "model/jbd2/points.hpp"

namespace {

constexpr std::uint32_t file_a = 0;
constexpr std::uint32_t file_b = 1;

namespace op {
auto create(std::uint32_t file) -> model::OpCall {
    return {.name = "create", .file = file};
}
auto fsync(std::uint32_t file) -> model::OpCall {
    return {.name = "fsync", .file = file};
}
auto write(std::uint32_t file, std::uint64_t offset, std::uint64_t length, std::uint64_t version)
    -> model::OpCall {
    return {.name = "write",
            .file = file,
            .offset = offset,
            .length = length,
            .has_range = true,
            .version = version};
}
auto checkpoint() -> model::OpCall {
    return {.name = "checkpoint"};
}
auto shrink() -> model::OpCall {
    return {.name = "shrink"};
}
}  // namespace op

struct World : test_support::ModelWorld {
    explicit World(const std::string& tree)
        : ModelWorld("ext4", {{"checkpoint_cleanup", tree}}, model::Geometry{4096, 6400, "nvme"},
                     {"A", "B"}) {}
    [[nodiscard]] auto counter(const std::string& name) const -> std::uint64_t {
        const auto all = fs->counters();
        const auto found = all.find(name);
        return found == all.end() ? 0 : found->second;
    }
};

auto journal_violations(const model::RecoveredState& state) -> std::vector<checkers::Violation> {
    const std::vector<std::string> names = {"A", "B"};
    const checkers::CheckContext context{names, 4096};
    const checkers::Oracle oracle(2);
    std::vector<checkers::Violation> out;
    checkers::make_checker("journal_integrity")->check(oracle, state, context, out);
    return out;
}

}  // namespace

TEST_CASE("ext4: a fresh file system mounts with an empty journal and no files") {
    World world("patch-2");
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    for (const auto& file : state.files) CHECK_FALSE(file.exists);
    CHECK(test_support::has_note(state, "PASS_SCAN found 0 complete transactions"));
    REQUIRE(state.journal.has_value());
    CHECK(state.journal->durable.empty());
}

TEST_CASE("ext4: an fsynced create is replayed from the log; the buffers stay dirty on the checkpoint list") {
    World world("patch-2");
    world.run({op::create(file_a), op::fsync(file_a)});
    CHECK(world.counter("commits") == 1);
    CHECK(world.counter("checkpoint_writes") == 0);
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    CHECK(state.files[file_a].exists);
    CHECK_FALSE(state.files[file_b].exists);
    CHECK(test_support::has_note(state, "PASS_SCAN found 1 complete transactions (1..1)"));
    REQUIRE(state.journal->durable.size() == 1);
    CHECK(state.journal->durable[0].replayed);
    CHECK(state.journal->durable[0].updates.size() == 3);  // inode bitmap, inode table, directory
    CHECK(journal_violations(state).empty());
}

TEST_CASE("ext4: a create not yet committed is lost, and nothing committed is") {
    World world("patch-2");
    world.run({op::create(file_a), op::fsync(file_a), op::create(file_b)});
    const auto state = world.crash(true);
    CHECK(state.files[file_a].exists);
    CHECK_FALSE(state.files[file_b].exists);
}

TEST_CASE("ext4: ordered-mode data is written before the commit and read back after recovery") {
    World world("patch-2");
    world.run({op::create(file_a), op::write(file_a, 0, 8192, 7), op::fsync(file_a)});
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    REQUIRE(state.files[file_a].exists);
    CHECK(state.files[file_a].size_bytes == 8192);
    CHECK(test_support::block_of(state.files[file_a], 4096) == test_support::data(file_a, 4096, 7));
}

TEST_CASE("ext4: the checkpoint writes the buffers home, FLUSHes, then moves the tail") {
    World world("patch-2");
    world.run({op::create(file_a), op::fsync(file_a)});
    const auto flushes = world.counter("disk_flushes");
    world.run({op::checkpoint()});
    CHECK(world.counter("checkpoint_writes") == 3);
    CHECK(world.counter("tail_updates") == 1);
    CHECK(world.counter("disk_flushes") > flushes);
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    CHECK(state.files[file_a].exists);
    REQUIRE(state.journal->durable.size() == 1);
    CHECK_FALSE(state.journal->durable[0].replayed);  // before the tail: at home
    CHECK(journal_violations(state).empty());
}

TEST_CASE("ext4: the commit-time cleanup skips busy buffers on v6.5 and stops at the first with patch 1/3") {
    // Transaction 1 (create A) leaves three dirty buffers on its list, head
    // first: the directory block, the inode table block, the inode bitmap.
    // Transaction 2 (a write to A) re-logs the inode table block.
    std::map<std::string, std::uint64_t> steps;
    for (const char* tree : {"v6.5", "patch-1", "patch-2", "hybrid-v5.8"}) {
        CAPTURE(tree);
        World world(tree);
        world.run({op::create(file_a), op::fsync(file_a), op::write(file_a, 0, 4096, 1), op::fsync(file_a)});
        steps[tree] = world.counter("cp_scan_steps");
    }
    CHECK(steps["v6.5"] == 3);
    CHECK(steps["patch-1"] == 1);
    CHECK(steps["patch-2"] == 1);
    CHECK(steps["hybrid-v5.8"] == 1);
}

namespace {
/// The race of "jbd2: Check 'jh->b_transaction' before removing it
/// from checkpoint" closes, by hand: T1 commits A; running T2 re-logs its
/// buffers (create B); the shrinker scans; the checkpoint runs. Returns the
/// image a crash right then leaves (every unflushed write kept).
auto race(World& world) -> model::RecoveredState {
    world.run({op::create(file_a), op::fsync(file_a)});
    // Step 2: T2 takes write access to the same three buffers and stays open.
    world.run({op::create(file_b)});
    world.run({op::shrink()});
    world.run({op::checkpoint()});
    return world.crash(true);
}
}  // namespace

TEST_CASE(
    "ext4: before patch 2/3 the shrinker drops T1 and the checkpoint moves the tail past it: A is lost") {
    for (const char* tree : {"v6.5", "patch-1"}) {
        CAPTURE(tree);
        World world(tree);
        const auto state = race(world);
        CHECK(world.counter("commits") == 1);  // T2 never committed
        CHECK(world.counter("tail_updates") == 1);
        CHECK(state.mounted);
        CHECK_FALSE(state.files[file_a].exists);
        CHECK_FALSE(state.files[file_b].exists);
        const auto violations = journal_violations(state);
        REQUIRE(violations.size() == 1);
        CHECK(violations[0].message.find("transaction 1 committed") != std::string::npos);
        CHECK(violations[0].message.find("before the journal tail (sequence 2)") != std::string::npos);
    }
}

TEST_CASE("ext4: with patch 2/3 the re-logged buffers are busy; the checkpoint forces T2's commit") {
    for (const char* tree : {"patch-2", "hybrid-v5.8"}) {
        CAPTURE(tree);
        World world(tree);
        const auto state = race(world);
        CHECK(world.counter("commits") == 2);
        test_support::check_mounted_cleanly(state);
        CHECK(state.files[file_a].exists);
        CHECK(state.files[file_b].exists);
        CHECK(journal_violations(state).empty());
    }
}

TEST_CASE("ext4: journal_integrity has nothing at stake without a journal or a committed transaction") {
    const std::vector<std::string> names = {"A"};
    const checkers::CheckContext context{names, 4096};
    const checkers::Oracle oracle(1);
    const auto checker = checkers::make_checker("journal_integrity");
    model::RecoveredState state;
    state.mounted = true;
    CHECK_FALSE(checker->at_stake(oracle, state, context));
    state.journal = model::JournalAudit{};
    CHECK_FALSE(checker->at_stake(oracle, state, context));
    state.journal->durable.push_back({1, false, {{10, 3}}, {}});
    state.journal->home_versions[10] = 2;
    CHECK(checker->at_stake(oracle, state, context));
    std::vector<checkers::Violation> out;
    checker->check(oracle, state, context, out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].message.find("block 10") != std::string::npos);
    // A revoke of the block in an earlier transaction covers nothing later;
    // one in the same or a later durable transaction frees it: nothing owed.
    state.journal->durable.insert(state.journal->durable.begin(), {0, false, {}, {10}});
    out.clear();
    checker->check(oracle, state, context, out);
    CHECK(out.size() == 1);
    state.journal->durable.push_back({2, false, {}, {10}});
    out.clear();
    checker->check(oracle, state, context, out);
    CHECK(out.empty());
    state.journal->durable.pop_back();
    // A block that is no longer metadata after recovery: nothing owed.
    state.journal->not_metadata.insert(10);
    out.clear();
    checker->check(oracle, state, context, out);
    CHECK(out.empty());
    state.journal->not_metadata.clear();
    state.journal->home_versions[10] = 3;
    out.clear();
    checker->check(oracle, state, context, out);
    CHECK(out.empty());
}

TEST_CASE("jbd2 yield points: every point declares what the code on either side of it touches") {
    // A point that declares nothing touches everything: sleep sets then
    // reorder no step around it (model/jbd2/points.hpp).
    for (const sim::YieldPoint* point : model::jbd2::points::all) {
        CAPTURE(point->name);
        CHECK(point->touches != sim::footprint_all);
    }
}
