// btrfs_inode_in_log and the knob values of release_extent_maps: an fsync may skip logging only
// once the inode's log transaction is durable (scenarios/btrfs/two-fsyncs-one-file.json), and each
// knob value is one kernel of the series of "btrfs: fix race between page release and a fast
// fsync"; a hypothetical value says so in the story.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "runner/campaign.hpp"
#include "runner/runner.hpp"
#include "loader/scenario.hpp"
#include "sim/strategy.hpp"

namespace {

constexpr const char* two_fsyncs = "scenarios/btrfs/two-fsyncs-one-file.json";
constexpr std::uint64_t block_bytes = 4096;
constexpr std::uint64_t mib = 1024 * 1024;
constexpr std::uint32_t file_i = 0;
constexpr std::uint32_t file_j = 1;

auto write(std::uint32_t file, std::uint64_t offset, std::uint64_t length, std::uint64_t version)
    -> model::OpCall {
    return {.name = "write", .file = file, .offset = offset, .length = length, .has_range = true,
            .version = version};
}
auto op(const char* name, std::uint32_t file = 0) -> model::OpCall {
    return {.name = name, .file = file};
}

struct World : test_support::ModelWorld {
    explicit World(const std::string& release)
        : ModelWorld("btrfs", {{"release_extent_maps", release}},
                     model::Geometry{block_bytes, 16384, "nvme"}, {"I", "J"}) {}
};

auto variant_named(const loader::Scenario& scenario, const std::string& name)
    -> const loader::Variant& {
    const loader::Variant* variant = scenario.find_variant(name);
    REQUIRE(variant != nullptr);
    return *variant;
}

auto position(const std::string& story, const std::string& text) -> std::size_t {
    const std::size_t at = story.find(text);
    CHECK_MESSAGE(at != std::string::npos, "story lacks: " << text);
    return at;
}

}  // namespace

TEST_CASE(
    "btrfs two fsyncs of one file: the second waits for the first's log commit instead of "
    "returning early" * doctest::test_suite("campaign")) {
    // Task A's log commit is in flight (root log released, superblock not
    // yet written) when task B fsyncs: btrfs_inode_in_log must say no, since
    // last_sub_trans is above the root's last_log_commit.
    const auto scenario = loader::load_scenario(two_fsyncs);
    for (const char* name : {"before-fix", "fix-1", "fix-2", "fix-3"}) {
        CAPTURE(name);
        runner::Simulation simulation(scenario, variant_named(scenario, name));
        const runner::RunOutcome outcome = simulation.run_scripted(true);
        CHECK_FALSE(outcome.violated());
        const auto b_logs = position(outcome.story, "task-b    fsync of inode I joins transaction");
        const auto a_durable = position(outcome.story, "task-a    btrfs_sync_log: W(log) of log "
                                                       "transaction 0, FLUSH, superblock FUA");
        const auto b_returns = position(outcome.story, "task-b    fsync of inode I returns 0");
        CHECK(b_logs < a_durable);
        CHECK(a_durable < b_returns);
        CHECK(outcome.story.find("nothing to log") == std::string::npos);
    }
}

TEST_CASE("btrfs two fsyncs of one file: no schedule loses the write either fsync promised" *
          doctest::test_suite("campaign")) {
    const auto scenario = loader::load_scenario(two_fsyncs);
    for (const char* strategy : {"random", "pct:3", "dfs:2"}) {
        CAPTURE(strategy);
        runner::Simulation simulation(scenario, variant_named(scenario, "fix-3"));
        runner::FuzzRequest request;
        REQUIRE(sim::parse_strategy(strategy, request.strategy));
        request.schedules = 3000;
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        CHECK_FALSE(report.found);
        CHECK(report.crash_states > report.schedules);
    }
}

TEST_CASE("btrfs: an fsync skips logging once the inode's log transaction is durable") {
    World world("fix-3");
    world.run({op("create", file_i), write(file_i, 0, block_bytes, 1), op("fsync", file_i),
               write(file_i, block_bytes, block_bytes, 2), op("fsync", file_i)});
    CHECK(world.counter("log_commits") == 2);
    CHECK(world.counter("fsyncs_skipped") == 0);
    // Nothing changed since, and log transaction 1 is durable: in the log.
    world.run({op("fsync", file_i)});
    CHECK(world.counter("fsyncs_skipped") == 1);
    CHECK(world.counter("log_commits") == 2);
    // A write after the log commit raises last_sub_trans (btrfs_file_write_iter)
    // and lists a new extent map: the next fsync logs again.
    world.run({write(file_i, 2 * block_bytes, block_bytes, 3), op("fsync", file_i)});
    CHECK(world.counter("fsyncs_skipped") == 1);
    CHECK(world.counter("log_commits") == 3);
}

TEST_CASE("btrfs release_extent_maps: each kernel's page release and its effect on the next fsync") {
    // A listed extent map from a committed transaction is released (or kept)
    // while a new transaction runs; then a new extent and an fsync. Kernels
    // before patch 3/3 set NEEDS_FULL_SYNC when they drop a map.
    // Every kernel drops the first map (a full fsync took it off the list);
    // fix-1 keeps the listed one, fix-2 drops it (older than the running
    // transaction).
    struct Kernel {
        std::string release;
        bool keeps_listed;
        bool next_fsync_full;
    };
    for (const Kernel& kernel : {Kernel{"before-fix", false, true}, Kernel{"fix-1", true, true},
                                 Kernel{"fix-2", false, true}, Kernel{"fix-3", false, false},
                                 Kernel{"hypothetical-before-fix-without-full-sync", false, false}}) {
        CAPTURE(kernel.release);
        World world(kernel.release);
        world.run({op("create", file_i), write(file_i, 0, 16 * mib + block_bytes, 1),
                   op("fsync", file_i), write(file_i, 16 * mib + block_bytes, block_bytes, 2),
                   op("sync"), op("create", file_j), op("release_pages", file_i)});
        CHECK(world.counter("extent_maps_released") == (kernel.keeps_listed ? 1 : 2));
        CHECK((world.counter("extent_maps_kept") > 0) == kernel.keeps_listed);
        world.run({write(file_i, 16 * mib + 2 * block_bytes, block_bytes, 3), op("fsync", file_i)});
        CHECK(world.counter("fsyncs_full") == (kernel.next_fsync_full ? 2 : 1));
        CHECK(world.counter("fsyncs_fast") == (kernel.next_fsync_full ? 0 : 1));
        const auto state = world.crash(false);
        test_support::check_mounted_cleanly(state);
        CHECK(test_support::block_of(state.files[file_i], 16 * mib + 2 * block_bytes) ==
              test_support::data(file_i, 16 * mib + 2 * block_bytes, 3));
    }
}

TEST_CASE("btrfs knobs: a hypothetical value opens the story with a note that it is no real kernel") {
    auto scenario = loader::load_scenario(two_fsyncs);
    loader::Variant variant = variant_named(scenario, "fix-3");
    const std::string note = "not a real kernel";
    {
        runner::Simulation simulation(scenario, variant);
        CHECK(simulation.run_scripted(true).story.find(note) == std::string::npos);
    }
    for (const auto& [knob, value] :
         std::vector<std::pair<std::string, std::string>>{
             {"jiffy_timer", "hypothetical-exact"},
             {"release_extent_maps", "hypothetical-before-fix-without-full-sync"}}) {
        CAPTURE(value);
        variant.config = variant_named(scenario, "fix-3").config;
        variant.config[knob] = value;
        runner::Simulation simulation(scenario, variant);
        const std::string story = simulation.run_scripted(true).story;
        CHECK(story.starts_with("  1. config    " + knob + " = " + value));
        CHECK(story.find(note) != std::string::npos);
    }
}

TEST_CASE(
    "btrfs: a fast fsync past btrfs_log_changed_extents' limit commits the transaction instead" *
          doctest::test_suite("campaign")) {
    // The kernel's count rises once per map visited and once more per map
    // taken, so 16385 new maps pass 32768. Every other block is written, so
    // that each write is an extent map of its own.
    test_support::ModelWorld world("btrfs", {}, model::Geometry{block_bytes, 65536, "nvme"}, {"I"});
    world.run({op("create", file_i), write(file_i, 0, block_bytes, 1), op("fsync", file_i)});
    constexpr std::uint64_t maps = 16385;
    std::vector<model::OpCall> writes;
    for (std::uint64_t i = 1; i <= maps; i++)
        writes.push_back(write(file_i, 2 * i * block_bytes, block_bytes, 2));
    writes.push_back(op("fsync", file_i));
    const std::uint64_t commits = world.counter("transactions_committed");
    world.run(writes);
    CHECK(world.counter("fsyncs_committed") == 1);
    CHECK(world.counter("fsyncs_fast") == 0);
    CHECK(world.counter("transactions_committed") == commits + 1);
    const auto state = world.crash(false);
    test_support::check_mounted_cleanly(state);
    const auto& file = state.files[file_i];
    CHECK(file.size_bytes == (2 * maps + 1) * block_bytes);
    CHECK(test_support::block_of(file, 2 * maps * block_bytes) ==
          test_support::data(file_i, 2 * maps * block_bytes, 2));
    // One map fewer stays under the limit: a fast fsync logs them all.
    test_support::ModelWorld under("btrfs", {}, model::Geometry{block_bytes, 65536, "nvme"}, {"I"});
    under.run({op("create", file_i), write(file_i, 0, block_bytes, 1), op("fsync", file_i)});
    writes.erase(writes.end() - 2);
    under.run(writes);
    CHECK(under.counter("fsyncs_committed") == 0);
    CHECK(under.counter("fsyncs_fast") == 1);
}
