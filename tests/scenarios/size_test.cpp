// Sizes an fsync promises: truncate sets the size, fallocate
// without keep_size and writes past EOF raise it, and fsync_durability checks
// the recovered size against the sizes the file could legitimately have
// (Oracle::legitimate_sizes). The rule in isolation, a model mutation it
// catches (a model that never applies, so never logs, a truncate), the
// unmutated xfs model holding on the same workload, and the scenario's
// variants.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "checkers/oracle.hpp"
#include "model/filesystem.hpp"
#include "runner/campaign.hpp"
#include "runner/runner.hpp"
#include "loader/scenario.hpp"

namespace {

constexpr std::uint32_t block = 4096;
constexpr std::uint64_t kib = 1024;

auto contains(const std::vector<checkers::SizeRange>& ranges, std::uint64_t size) -> bool {
    for (const auto& range : ranges) {
        if (range.low <= size && size <= range.high) return true;
    }
    return false;
}

/// A write that raises the size to `end` and returns.
void raise(checkers::Oracle& oracle, std::uint64_t end) {
    oracle.end_size(0, oracle.begin_size(0, false, end));
}
/// A truncate to `size` that returns.
void truncate(checkers::Oracle& oracle, std::uint64_t size) {
    oracle.begin_truncate(0, size, block);
    const std::size_t id = oracle.begin_size(0, true, size);
    oracle.end_size(0, id);
    oracle.end_truncate(0, size, block);
}

/// A model mutation: the file system ignores truncate (returns 0 and does
/// nothing, so no new di_size is ever logged); everything else is xfs.
class IgnoresTruncate final : public model::FileSystem {
public:
    explicit IgnoresTruncate(std::unique_ptr<model::FileSystem> inner) : inner_(std::move(inner)) {}
    [[nodiscard]] auto clone() const -> std::unique_ptr<model::FileSystem> override {
        return std::make_unique<IgnoresTruncate>(inner_->clone());
    }
    auto execute(const model::OpCall& call) -> model::OpResult override {
        if (call.name == "truncate") return model::OpResult::ok;
        return inner_->execute(call);
    }
    auto device() -> model::disk::BlockDevice& override { return inner_->device(); }
    [[nodiscard]] auto recover(const model::disk::Image& image) const -> model::RecoveredState override {
        return inner_->recover(image);
    }
    [[nodiscard]] auto counters() const -> std::map<std::string, std::uint64_t> override {
        return inner_->counters();
    }

private:
    std::unique_ptr<model::FileSystem> inner_;
};

/// write 64 KiB, fsync, truncate to 16 KiB, fsync, crash keeping nothing
/// unflushed; the oracle is told what the workload did, as the runner does.
auto truncate_workload(test_support::ModelWorld& world) -> std::vector<checkers::Violation> {
    checkers::Oracle oracle(1);
    const std::uint64_t version = oracle.begin_write();
    const std::size_t raise_id = oracle.begin_size(0, false, 64 * kib);
    model::OpCall write{.name = "write", .file = 0, .offset = 0, .length = 64 * kib, .has_range = true,
                        .version = version};
    model::OpCall cut{.name = "truncate", .file = 0, .length = 16 * kib};
    world.run({{.name = "create"}, write});
    oracle.end_size(0, raise_id);
    oracle.end_write(0, 0, 16, version, 64 * kib);
    const std::size_t first = oracle.begin_fsync(0, 1, "fsync #1 of I");
    world.run({{.name = "fsync"}});
    oracle.end_fsync(first, 2);
    oracle.begin_truncate(0, 16 * kib, block);
    const std::size_t cut_id = oracle.begin_size(0, true, 16 * kib);
    world.run({cut});
    oracle.end_size(0, cut_id);
    oracle.end_truncate(0, 16 * kib, block);
    const std::size_t second = oracle.begin_fsync(0, 3, "fsync #2 of I");
    world.run({{.name = "fsync"}});
    oracle.end_fsync(second, 4);
    const model::RecoveredState state = world.crash(false);
    REQUIRE(state.mounted);
    CHECK(state.consistency_errors.empty());  // the unmapped blocks are free again
    std::vector<checkers::Violation> out;
    const std::vector<std::string> names = {"I"};
    checkers::make_checker("fsync_durability")->check(oracle, state, {names, block}, out);
    return out;
}

auto fixed_clock() -> double { return 0.0; }

}  // namespace

TEST_CASE("sizes: a returned truncate before the fsync leaves exactly its size") {
    checkers::Oracle oracle(1);
    raise(oracle, 64 * kib);
    truncate(oracle, 16 * kib);
    const std::size_t id = oracle.begin_fsync(0, 1, "fsync");
    oracle.end_fsync(id, 2);
    const auto ranges = oracle.legitimate_sizes(oracle.promises()[id]);
    CHECK(contains(ranges, 16 * kib));
    CHECK_FALSE(contains(ranges, 64 * kib));
    CHECK_FALSE(contains(ranges, 12 * kib));
    CHECK_FALSE(contains(ranges, 0));
}

TEST_CASE("sizes: later size changes may or may not persist; earlier ones bound the rest") {
    checkers::Oracle oracle(1);
    raise(oracle, 32 * kib);
    const std::size_t id = oracle.begin_fsync(0, 1, "fsync");
    oracle.end_fsync(id, 2);
    // After the fsync: a truncate down, then a write past the new EOF.
    truncate(oracle, 8 * kib);
    raise(oracle, 20 * kib);
    const auto ranges = oracle.legitimate_sizes(oracle.promises()[id]);
    CHECK(contains(ranges, 32 * kib));  // nothing after the fsync persisted
    CHECK(contains(ranges, 8 * kib));   // the truncate did
    CHECK(contains(ranges, 12 * kib));  // and part of the write's ioends
    CHECK(contains(ranges, 20 * kib));
    CHECK_FALSE(contains(ranges, 4 * kib));
    CHECK_FALSE(contains(ranges, 36 * kib));  // no operation ever made it larger
    CHECK_FALSE(contains(ranges, 24 * kib));  // above the promised 32 KiB only with a raise
}

TEST_CASE("sizes: a truncate racing the fsync drops the raises' floor, not the truncate's") {
    // xfs: the truncate cuts i_size while the fsync's ioends complete, so
    // xfs_new_eof keeps them from logging di_size; the disk may keep an older
    // size until the truncate's transaction commits.
    checkers::Oracle oracle(1);
    raise(oracle, 48 * kib);
    raise(oracle, 72 * kib);
    const std::size_t id = oracle.begin_fsync(0, 1, "fsync");
    oracle.begin_truncate(0, 8 * kib, block);
    const std::size_t cut = oracle.begin_size(0, true, 8 * kib);
    oracle.end_fsync(id, 2);
    const auto racing = oracle.legitimate_sizes(oracle.promises()[id]);
    CHECK(contains(racing, 48 * kib));
    CHECK(contains(racing, 8 * kib));
    CHECK_FALSE(contains(racing, 80 * kib));
    oracle.end_size(0, cut);
    // A second fsync that begins after the truncate returned owes 8 KiB exactly.
    const std::size_t after = oracle.begin_fsync(0, 3, "fsync");
    oracle.end_fsync(after, 4);
    const auto exact = oracle.legitimate_sizes(oracle.promises()[after]);
    CHECK(contains(exact, 8 * kib));
    CHECK_FALSE(contains(exact, 48 * kib));
    CHECK_FALSE(contains(exact, 72 * kib));
}

TEST_CASE("sizes: fsync_durability catches a model that never logs a truncate's size") {
    const model::Geometry geometry{block, 1024, "nvme"};
    {
        test_support::ModelWorld xfs("xfs", {}, geometry, {"I"});
        CHECK(truncate_workload(xfs).empty());
    }
    test_support::ModelWorld mutated("xfs", {}, geometry, {"I"});
    mutated.fs = std::make_unique<IgnoresTruncate>(std::move(mutated.fs));
    const auto violations = truncate_workload(mutated);
    REQUIRE(violations.size() == 1);
    CHECK(violations.front().checker == "fsync_durability");
    CHECK(violations.front().found == "size 65536");
    CHECK(violations.front().expected == "size 16384");
    CHECK(violations.front().message.find("fsync #2 of I") != std::string::npos);
}

TEST_CASE("sizes: the xfs truncate scenario meets every variant's expectation" *
          doctest::test_suite("campaign")) {
    const auto scenario = loader::load_scenario("scenarios/xfs/truncate-fsync-sizes.json");
    for (const auto& variant : scenario.variants) {
        CAPTURE(variant.name);
        const runner::CheckRow row = runner::check_variant(scenario, variant, fixed_clock);
        CHECK(row.met);
        if (!row.met) MESSAGE(row.detail);
    }
}

TEST_CASE("sizes: xfs_iomap_write_unwritten logs di_size for the whole range in its first transaction") {
    // Three extents under one O_DIRECT write: unwritten, written, unwritten.
    // The first conversion transaction already logs di_size up to the end of
    // the write (v5.7: i_size = XFS_FSB_TO_B(offset_fsb + count_fsb)).
    const auto scenario = loader::parse_scenario(R"({"name": "inline/unwritten-size", "model": "xfs",
      "device": {"block_size": 4096, "blocks": 2048, "profile": "nvme"},
      "setup": [{"op": "create", "file": "F"},
                {"op": "falloc", "file": "F", "offset": 0, "length": 4096, "keep_size": true},
                {"op": "write", "file": "F", "offset": 4096, "length": 4096},
                {"op": "fsync", "file": "F"},
                {"op": "falloc", "file": "F", "offset": 8192, "length": 4096, "keep_size": true}],
      "tasks": [{"name": "writer", "ops": [{"op": "write", "file": "F", "offset": 0, "length": 12288,
                                            "direct": true}]},
                {"name": "logworker", "ops": [{"op": "log_force"}]}],
      "crash": {"unflushed": "none"},
      "schedule": [{"run": "writer", "until": "xfs.ioend.after_convert_commit"},
                   {"run": "logworker"}, {"crash": "none"}],
      "checkers": ["fsync_durability", "no_stale_data", "fs_consistency"],
      "variants": [{"name": "fix", "config": {"delalloc_convert": "unwritten"}, "expect": "holds"}]})",
                                                    "inline.json");
    runner::Simulation simulation(scenario, scenario.variants.front());
    const auto outcome = simulation.run_scripted(true);
    CHECK_FALSE(outcome.violated());
    CHECK(outcome.story.find("converts exactly [0, 4096) of inode F to NORM; di_size 8192 -> 12288") !=
          std::string::npos);
    CHECK(outcome.story.find("inode F: di_size 12288") != std::string::npos);
}
