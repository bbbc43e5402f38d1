// Misdirected writes: a lost self-describing write lands on
// another block of its area; btrfs's header checks detect it where a mount
// reads the victim, and nothing reads a victim no superblock names.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "model/disk/block_device.hpp"
#include "runner/runner.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "tests/model/disk/device_support.hpp"
#include "tests/model/world.hpp"
#include "tests/support.hpp"

namespace {

using model::disk::BlockDevice;
using model::disk::Content;
using model::disk::MisdirectedWrite;

using test_support::nvme;
using test_support::run_on;

auto misdirecting(bool on) -> model::disk::FaultSettings {
    model::disk::FaultSettings faults;
    faults.budget = 1;
    faults.misdirected_writes = on;
    return faults;
}

/// The faults of random schedules seeds 0..seeds-1, none of which may violate.
auto random_faults(runner::Simulation& simulation, std::uint64_t seeds) -> runner::FaultCounts {
    runner::FaultCounts counts;
    for (std::uint64_t seed = 0; seed < seeds; seed++) {
        sim::StrategySpec spec;
        REQUIRE(sim::parse_strategy("random", spec));
        const runner::RunOutcome outcome = simulation.run_strategy(spec, seed, false);
        CHECK_FALSE(outcome.violated());
        counts += outcome.faults;
    }
    return counts;
}

}  // namespace

TEST_CASE(
    "misdirected writes: only self-describing one-block writes, onto blocks of the area that hold metadata") {
    BlockDevice device{64, nvme()};
    device.format(0, 1, Content::meta(0));
    device.format(3, 1, Content::meta(1));
    device.format(40, 1, Content::data(0, 0, 1));
    device.declare_self_describing({16, {"super", "meta", "log"}});
    run_on(device, [](BlockDevice& d) {
        d.write_and_wait(5, 1, Content::meta(2), false, "meta");
        d.write_and_wait(6, 2, Content::meta(3), false, "meta");   // two blocks: not offered
        d.write_and_wait(41, 1, Content::data(0, 1, 1), false, "data");  // data: no header
        d.write_and_wait(20, 1, Content::meta(4), false, "meta");  // past the area
    });
    REQUIRE(device.pending().size() == 4);
    CHECK(device.misdirect_victims(0).empty());  // fault kind off
    device.set_faults(misdirecting(true));
    // Blocks 0 and 3 hold metadata, 6-7 will: never block 5 itself, never the data area.
    CHECK(device.misdirect_victims(0) == std::vector<std::uint64_t>{0, 3, 6, 7});
    CHECK(device.misdirect_victims(1).empty());
    CHECK(device.misdirect_victims(2).empty());
    CHECK(device.misdirect_victims(3).empty());
    // A model that declares no self-describing area is offered none.
    BlockDevice plain{64, nvme()};
    plain.set_faults(misdirecting(true));
    run_on(plain, [](BlockDevice& d) { d.write_and_wait(5, 1, Content::meta(2), false, "meta"); });
    CHECK(plain.misdirect_victims(0).empty());
}

TEST_CASE("misdirected writes: the own block keeps its old contents, the victim holds the new, marked") {
    BlockDevice device{64, nvme()};
    device.format(3, 1, Content::meta(1));
    device.declare_self_describing({16, {"meta"}});
    device.set_faults(misdirecting(true));
    run_on(device, [](BlockDevice& d) { d.write_and_wait(5, 1, Content::meta(2), false, "meta"); });
    const MisdirectedWrite misdirect{0, 3};
    const model::disk::Image image = device.crash_image({false}, {}, {misdirect});
    CHECK(image.read(5) == Content::stale(5));
    const Content landed = image.read(3);
    CHECK(landed.misdirected);
    CHECK(landed.home == 5);
    CHECK(landed.faulty());
    CHECK_FALSE(landed.torn());
    CHECK(landed.describe({}, 4096) == "metadata object #2 written for block 5 (a misdirected write)");
    CHECK(device.describe_misdirect(misdirect) ==
          "misdirected write: meta@5 landed on block 3 (in the cache); block 5 keeps its old contents");
}

namespace {

/// The image a crash keeping every write leaves, with `object_at`'s content
/// copied onto `victim` as a misdirected write (what crash_image writes).
auto misdirected_image(const model::FileSystem& fs, std::uint64_t home, std::uint64_t victim)
    -> model::disk::Image {
    const auto& device = const_cast<model::FileSystem&>(fs).device();
    sim::RangeMap<model::disk::DurableBlock> blocks =
        device.crash_image(std::vector<bool>(device.pending().size(), true)).blocks();
    model::disk::DurableBlock landed = *blocks.find(home);
    landed.content.misdirected = true;
    landed.content.home = home;
    blocks.assign(victim, victim + 1, landed);
    return model::disk::Image(std::move(blocks));
}

}  // namespace

TEST_CASE(
    "misdirected writes, btrfs: the superblock's and a tree block's header name another bytenr: refused") {
    test_support::ModelWorld world("btrfs", {{"release_extent_maps", "fix-3"}},
                                   model::Geometry{4096, 4096, "nvme"}, {"I"});
    world.run({test_support::op_call(world, "create", 0),
               test_support::op_call(world, "write", 0, 0, 4096, 1),
               test_support::op_call(world, "fsync", 0)});
    REQUIRE(world.crash(true).mounted);
    // Block 1 is mkfs's fs tree root, which the durable superblock names.
    const model::RecoveredState super = world.fs->recover(misdirected_image(*world.fs, 1, 0));
    CHECK_FALSE(super.mounted);
    CHECK(super.mount_error.starts_with(
        "no superblock at block 0 (open_ctree: btrfs_check_super_csum): its header "
        "names block 1"));
    CHECK(super.checksum_failed == std::vector<std::uint64_t>{0});
    CHECK(super.consistency_errors.empty());
    const model::RecoveredState root = world.fs->recover(misdirected_image(*world.fs, 0, 1));
    CHECK_FALSE(root.mounted);
    CHECK(root.mount_error.find("bad tree block start, want 1 have 0 (-EIO)") != std::string::npos);
    CHECK(root.checksum_failed == std::vector<std::uint64_t>{1});
}

TEST_CASE("misdirected writes scenario: detected and survived, never silently wrong, on every strategy") {
    const loader::Scenario scenario =
        loader::load_scenario("scenarios/faults/btrfs-misdirected-tree-block.json");
    runner::Simulation simulation(scenario, scenario.variants.front());
    const runner::FaultCounts random = random_faults(simulation, 60);
    CHECK(random.injected > 0);
    CHECK(random.detected > 0);
    CHECK(random.survived > 0);
    CHECK(random.neither() == 0);
}

TEST_CASE("misdirected writes: a crash with one replays byte for byte; a victim not offered diverges") {
    // With a lying cache too, so that crashes are violations and recorded.
    loader::Scenario scenario = loader::load_scenario("scenarios/faults/btrfs-misdirected-tree-block.json");
    scenario.device.lying_cache = true;
    runner::Simulation simulation(scenario, scenario.variants.front());
    bool replayed = false;
    for (std::uint64_t seed = 0; seed < 400 && !replayed; seed++) {
        sim::StrategySpec spec;
        REQUIRE(sim::parse_strategy("random", spec));
        const runner::RunOutcome outcome = simulation.run_strategy(spec, seed, true);
        if (!outcome.violated() || !outcome.crash || outcome.crash->misdirected.empty()) continue;
        const runner::RunOutcome again = simulation.replay(outcome.choices, outcome.crash, true);
        CHECK(again.trace_hash == outcome.trace_hash);
        CHECK(again.trace.find("misdirected write: ") != std::string::npos);
        CHECK(again.trace.find(" misdirected") != std::string::npos);  // in the kept list
        runner::CrashRecord edited = *outcome.crash;
        edited.misdirected.front().victim = 4000;  // the data area: never offered
        CHECK_THROWS_AS(simulation.replay(outcome.choices, edited, false), sim::ReplayDiverged);
        replayed = true;
    }
    CHECK(replayed);
}

TEST_CASE(
    "latent sector errors: a checked read of an unreadable block is EIO, and every checked read is noted") {
    BlockDevice device{64, nvme()};
    device.format(3, 1, Content::meta(1));
    model::disk::Image image = device.crash_image({});
    CHECK(image.read_checked(3) == std::optional<Content>(Content::meta(1)));
    CHECK(image.read_checked(5) == std::optional<Content>(Content::stale(5)));
    CHECK(image.read_checked(3).has_value());
    CHECK(image.checked_reads() == std::vector<std::uint64_t>{3, 5});  // each once, in read order
    image.set_unreadable({5});
    CHECK_FALSE(image.read_checked(5).has_value());
    CHECK(image.read(5) == Content::stale(5));  // a plain read is no checked path
}

TEST_CASE("latent sector errors, btrfs: an unreadable superblock or fs tree root fails the mount: detected") {
    test_support::ModelWorld world("btrfs", {{"release_extent_maps", "fix-3"}},
                                   model::Geometry{4096, 4096, "nvme"}, {"I"});
    world.run({test_support::op_call(world, "create", 0),
               test_support::op_call(world, "write", 0, 0, 4096, 1),
               test_support::op_call(world, "fsync", 0)});
    const auto& device = world.fs->device();
    const model::disk::Image whole = device.crash_image(std::vector<bool>(device.pending().size(), true));
    REQUIRE(world.fs->recover(whole).mounted);
    // The mount reads the superblock, then the roots it names (the fs tree at block 1, the log tree).
    REQUIRE(whole.checked_reads().size() == 3);
    CHECK(whole.checked_reads()[0] == 0);
    CHECK(whole.checked_reads()[1] == 1);
    for (const std::uint64_t block : whole.checked_reads()) {
        model::disk::Image bad = whole;
        bad.set_unreadable({block});
        const model::RecoveredState state = world.fs->recover(bad);
        CHECK_FALSE(state.mounted);
        CHECK(state.checksum_failed == std::vector<std::uint64_t>{block});
        CHECK(state.consistency_errors.empty());  // an error the user sees, not a broken invariant
        CHECK(state.mount_error.find("fails with EIO, a latent sector error") != std::string::npos);
    }
}

TEST_CASE(
    "latent sector errors scenario: detected; a replay with one on the superblock refuses the mount; an "
    "unread block diverges") {
    loader::Scenario scenario = loader::load_scenario("scenarios/faults/btrfs-latent-sector-error.json");
    {
        runner::Simulation simulation(scenario, scenario.variants.front());
        const runner::FaultCounts random = random_faults(simulation, 40);
        CHECK(random.injected > 0);
        CHECK(random.detected == random.injected);  // no redundancy modelled: every one refuses the mount
    }
    scenario.device.lying_cache = true;  // crashes that violate, so that one is recorded
    runner::Simulation simulation(scenario, scenario.variants.front());
    bool replayed = false;
    for (std::uint64_t seed = 0; seed < 400 && !replayed; seed++) {
        sim::StrategySpec spec;
        REQUIRE(sim::parse_strategy("random", spec));
        const runner::RunOutcome outcome = simulation.run_strategy(spec, seed, true);
        if (!outcome.violated() || !outcome.crash || !outcome.crash->unreadable.empty()) continue;
        // The same crash with its superblock unreadable: the mount refuses
        // it, the lost fsync is never judged, and the fault is detected.
        runner::CrashRecord eio = *outcome.crash;
        eio.unreadable = {0};
        const runner::RunOutcome refused = simulation.replay(outcome.choices, eio, true);
        CHECK_FALSE(refused.violated());
        CHECK(refused.faults.detected == 1);
        CHECK(refused.trace.find("latent sector error: the media of block 0 is unreadable") !=
              std::string::npos);
        CHECK(simulation.replay(outcome.choices, eio, true).trace_hash == refused.trace_hash);
        runner::CrashRecord edited = *outcome.crash;
        edited.unreadable = {4000};  // a data block no mount reads through a checked path
        CHECK_THROWS_AS(simulation.replay(outcome.choices, edited, false), sim::ReplayDiverged);
        replayed = true;
    }
    CHECK(replayed);
}
