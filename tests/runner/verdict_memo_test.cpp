// The verdict memo (RunState::memo_key in runner/judge.cpp): a
// crash state judged earlier by any run of the same Simulation, with the same
// image (object ids by the content they name), oracle (by content) and
// freeze level, reuses that verdict instead of mounting again; so does a
// mount inside one crash state's recovery crashes whose image that crash
// state judged already. It must change
// nothing a search reports: the same schedules, crash states (each still
// counted), recovery crash states, judged counts and violations as the same
// search with the memo off.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "model/btrfs/btrfs.hpp"
#include "model/metadata_store.hpp"
#include "runner/campaign.hpp"
#include "runner/verdict_memo.hpp"
#include "tests/support.hpp"

namespace {

constexpr const char* race = "scenarios/btrfs/fast-fsync-vs-page-release.json";

auto search(runner::Simulation& simulation, std::uint32_t preemptions, bool memo, std::uint64_t cap)
    -> runner::FuzzReport {
    simulation.set_verdict_memo(memo);
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = preemptions;
    request.schedules = cap;
    request.stop_at_first = false;
    return runner::fuzz(simulation, request);
}

/// Every figure and finding of two searches, compared exactly.
void same_search(const runner::FuzzReport& with, const runner::FuzzReport& without) {
    CHECK(with.complete == without.complete);
    CHECK(with.schedules == without.schedules);
    CHECK(with.crash_states == without.crash_states);
    CHECK(with.recovery_crash_states == without.recovery_crash_states);
    CHECK(with.steps == without.steps);
    CHECK(with.judged == without.judged);
    CHECK(with.found == without.found);
    CHECK(with.index == without.index);
    REQUIRE(with.violations.size() == without.violations.size());
    for (std::size_t i = 0; i < with.violations.size(); i++) {
        CHECK(with.violations[i].index == without.violations[i].index);
        CHECK(with.violations[i].violation.checker == without.violations[i].violation.checker);
        CHECK(with.violations[i].violation.message == without.violations[i].violation.message);
    }
    CHECK(with.failing.trace_hash == without.failing.trace_hash);
}

/// Runs a whole dfs by hand: crash states evaluated and those reused.
struct Walk {
    std::uint64_t schedules = 0;
    std::uint64_t crash_states = 0;
    std::uint64_t reused = 0;
    std::uint64_t mounts_reused = 0;
    std::uint64_t points_reused = 0;
};
auto walk(runner::Simulation& simulation, std::uint32_t preemptions) -> Walk {
    sim::DfsTree tree(preemptions, true);
    Walk out;
    do {
        const runner::RunOutcome outcome = simulation.run_dfs(tree, false);
        out.schedules++;
        out.crash_states += outcome.crash_states;
        out.reused += outcome.crash_states_reused;
        out.mounts_reused += outcome.mounts_reused;
        out.points_reused += outcome.points_reused;
        CHECK(outcome.crash_states_reused <= outcome.crash_states);
    } while (tree.backtrack());
    return out;
}

}  // namespace

TEST_CASE("verdict memo: the btrfs race's fix-1 at dfs:1 reports the same with and without it, "
          "and it is used" *
          doctest::test_suite("campaign")) {
    const loader::Scenario scenario = loader::load_scenario(race);
    runner::Simulation simulation(scenario, *scenario.find_variant("fix-1"));
    const runner::FuzzReport with = search(simulation, 1, true, 100'000);
    runner::Simulation fresh(scenario, *scenario.find_variant("fix-1"));
    const runner::FuzzReport without = search(fresh, 1, false, 100'000);
    REQUIRE(with.complete);
    CHECK_FALSE(with.found);
    same_search(with, without);
    // Different schedules reach the same crash states: most are reused.
    CHECK(with.crash_states_reused * 2 > with.crash_states);
    CHECK(without.crash_states_reused == 0);
    // Reuse happens, and only with the memo on.
    runner::Simulation on_world(scenario, *scenario.find_variant("fix-1"));
    on_world.set_verdict_memo(true);
    const Walk on = walk(on_world, 1);
    runner::Simulation off_world(scenario, *scenario.find_variant("fix-1"));
    off_world.set_verdict_memo(false);
    const Walk off = walk(off_world, 1);
    CHECK(on.schedules == with.schedules);
    CHECK(on.crash_states == with.crash_states);
    CHECK(off.crash_states == on.crash_states);
    CHECK(on.reused == with.crash_states_reused);
    CHECK(off.reused == 0);
    // A cut inside recovery that keeps none of its writes mounts the image
    // recovery started from (the race's scenario explores one such cut).
    CHECK(on.mounts_reused > 0);
    CHECK(off.mounts_reused == 0);
    // Most evaluation points repeat an earlier run's: reused whole.
    CHECK(on.points_reused * 2 > on.schedules);
    CHECK(off.points_reused == 0);
    // The memo outlives the runs: the same search again on the same world
    // judges nothing itself.
    const Walk again = walk(on_world, 1);
    CHECK(again.crash_states == on.crash_states);
    CHECK(again.reused == again.crash_states);
    CHECK(again.mounts_reused == 0);
    CHECK(again.points_reused > on.points_reused);
}

// The canonical ids behind the memo's keys (model/metadata_store.hpp): a
// clone's objects are named by content, so two runs whose images hold the
// same object id for different objects never share a verdict, and two ids
// of equal objects are the same object to the memo.
TEST_CASE("verdict memo: an object id is keyed by the object it names, shared across clones") {
    using model::btrfs::FsTree;
    using model::btrfs::MetaObject;
    using model::btrfs::Superblock;
    model::MetadataStore<MetaObject> prototype;
    const std::uint64_t mkfs = prototype.store(FsTree{});
    auto tree_of = [](std::uint64_t size) {
        FsTree tree;
        tree.inodes[0].size_bytes = size;
        return tree;
    };
    // Two runs branch: each stores its own tree under the same next id.
    model::MetadataStore<MetaObject> run_a = prototype;
    model::MetadataStore<MetaObject> run_b = prototype;
    const std::uint64_t id_a = run_a.store(tree_of(4096));
    const std::uint64_t id_b = run_b.store(tree_of(8192));
    REQUIRE(id_a == id_b);
    CHECK(run_a.canonical(id_a) != run_b.canonical(id_b));
    CHECK(run_a.canonical(mkfs) == run_b.canonical(mkfs));
    // A third run stores a's tree under another id: the same object.
    model::MetadataStore<MetaObject> run_c = prototype;
    (void)run_c.store(Superblock{1, 1, mkfs, false, 0, 0, 0});
    const std::uint64_t id_c = run_c.store(tree_of(4096));
    CHECK(id_c != id_a);
    CHECK(run_c.canonical(id_c) == run_a.canonical(id_a));
    // A member in the object's every field takes part: the extent items too.
    FsTree mapped = tree_of(4096);
    mapped.inodes[0].extents.assign(0, 1, model::btrfs::FileExtentItem{100, 1, 0});
    const std::uint64_t id_mapped = run_c.store(mapped);
    CHECK(run_c.canonical(id_mapped) != run_a.canonical(id_a));
    // A superblock's tree ids are references, not content.
    const std::uint64_t super_a = run_a.store(Superblock{2, 5, id_a, false, 0, 0, 1});
    const std::uint64_t super_c = run_c.store(Superblock{2, 5, id_c, false, 0, 0, 1});
    CHECK(run_a.canonical(super_a) == run_c.canonical(super_c));
    std::vector<std::uint64_t> held;
    run_c.references(super_c, held);
    CHECK(held == std::vector<std::uint64_t>{id_c, 0});
    // No object behind an id: no canonical id (the memo then judges the state).
    CHECK(run_a.canonical(1000) == model::ContentTable::none);
}

TEST_CASE(
    "verdict memo: the btrfs race's before-fix at dfs:1 finds the same violations at the same schedules") {
    const loader::Scenario scenario = loader::load_scenario(race);
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    const runner::FuzzReport with = search(simulation, 1, true, 100'000);
    const runner::FuzzReport without = search(simulation, 1, false, 100'000);
    REQUIRE(with.found);
    CHECK(with.violations.size() > 1);
    same_search(with, without);
}

TEST_CASE("verdict memo: the distinct crash states a capped search reports are those of the "
          "schedules it counted" *
          doctest::test_suite("campaign")) {
    // Runs a search does not count judge crash states too: the first line's
    // timing runs (estimate_search with a clock; the first schedules of the
    // search) and a run cut short by a stop request. They fill the memo but
    // must not reach the count (before: a search stopped after one schedule
    // reported every state those runs had judged).
    const loader::Scenario scenario = loader::load_scenario(race);
    const loader::Variant& fix = *scenario.find_variant("fix-1");
    runner::Simulation alone(scenario, fix);
    const runner::FuzzReport one = search(alone, 2, true, 1);
    REQUIRE(one.schedules == 1);
    const auto counted = alone.crash_states_distinct();
    REQUIRE(counted.has_value());

    runner::Simulation after(scenario, fix);
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("dfs:2");
    const runner::SearchEstimate estimate = runner::estimate_search(after, request, [] { return 0.0; });
    CHECK(estimate.timed);
    // Runs no search counts: every schedule of dfs:1 (they reach 36
    // distinct crash states, the one schedule above fewer), and a dfs run a
    // crash-state cap cut short.
    {
        sim::DfsTree tree(1, true);
        for (bool more = true; more; more = tree.backtrack()) after.run_dfs(tree, false);
    }
    {
        sim::DfsTree tree(2, true);
        CHECK(after.run_dfs(tree, false, 1).interrupted);
    }
    CHECK_FALSE(after.crash_states_distinct().has_value());  // none counted yet
    const runner::FuzzReport capped = search(after, 2, true, 1);
    REQUIRE(capped.schedules == 1);
    CHECK(after.crash_states_distinct().value_or(0) == *counted);
    // The whole search reaches them all, as before.
    runner::Simulation whole(scenario, fix);
    const runner::FuzzReport complete = search(whole, 2, true, 1'000'000);
    REQUIRE(complete.complete);
    CHECK(whole.crash_states_distinct().value_or(0) > *counted);
}

namespace {

/// An image of whole metadata blocks: block i holds object ids[i].
auto meta_image(const std::vector<std::uint64_t>& ids) -> model::disk::Image {
    sim::RangeMap<model::disk::DurableBlock> blocks;
    for (std::size_t i = 0; i < ids.size(); i++) {
        blocks.assign(i, i + 1, model::disk::DurableBlock{model::disk::Content::meta(ids[i]), i + 1});
    }
    return model::disk::Image(std::move(blocks));
}

auto key_of(const model::disk::Image& image, const model::MetadataIndex& index) -> model::KeyWords {
    model::KeyWords key;
    runner::KeyObjects objects;
    REQUIRE(runner::image_key(image, index, key, objects));
    return key;
}

}  // namespace

TEST_CASE("verdict memo: two runs' images holding one id for different objects have different keys") {
    using model::btrfs::FsTree;
    using model::btrfs::Superblock;
    model::MetadataStore<model::btrfs::MetaObject> prototype;
    (void)prototype.store(FsTree{});
    FsTree small;
    small.inodes[0].size_bytes = 4096;
    FsTree large;
    large.inodes[0].size_bytes = 8192;
    model::MetadataStore<model::btrfs::MetaObject> run_a = prototype;
    model::MetadataStore<model::btrfs::MetaObject> run_b = prototype;
    const std::uint64_t tree_a = run_a.store(small);
    const std::uint64_t tree_b = run_b.store(large);
    REQUIRE(tree_a == tree_b);
    const std::uint64_t super_a = run_a.store(Superblock{2, 1, tree_a, false, 0, 0, 1});
    const std::uint64_t super_b = run_b.store(Superblock{2, 1, tree_b, false, 0, 0, 1});
    REQUIRE(super_a == super_b);
    // The same ids in the same blocks, different trees behind them.
    CHECK(key_of(meta_image({super_a, tree_a}), run_a) != key_of(meta_image({super_b, tree_b}), run_b));
    // Another run with the same objects under other ids, and other write
    // sequences: the same key.
    model::MetadataStore<model::btrfs::MetaObject> run_c = prototype;
    (void)run_c.store(large);
    const std::uint64_t tree_c = run_c.store(small);
    const std::uint64_t super_c = run_c.store(Superblock{2, 1, tree_c, false, 0, 0, 1});
    REQUIRE(tree_c != tree_a);
    sim::RangeMap<model::disk::DurableBlock> blocks;
    blocks.assign(0, 1, model::disk::DurableBlock{model::disk::Content::meta(super_c), 7});
    blocks.assign(1, 2, model::disk::DurableBlock{model::disk::Content::meta(tree_c), 3});
    CHECK(key_of(model::disk::Image(std::move(blocks)), run_c) ==
          key_of(meta_image({super_a, tree_a}), run_a));
    // A superblock naming an equal tree under another id than the block
    // holds fails the mount (read_meta: parent transid verify failed): the
    // key tells it from one naming the tree the block holds.
    const std::uint64_t twin = run_c.store(small);
    const std::uint64_t super_twin = run_c.store(Superblock{2, 1, twin, false, 0, 0, 1});
    CHECK(key_of(meta_image({super_twin, tree_c}), run_c) != key_of(meta_image({super_c, tree_c}), run_c));
    CHECK(key_of(meta_image({super_twin, twin}), run_c) == key_of(meta_image({super_c, tree_c}), run_c));
}

// Slow: the quick loop skips it (`crashsim_tests -tse=slow,campaign`), tools/test runs it.
TEST_CASE("verdict memo: every bundled scenario reports the same with and without it, bounds 0-2" *
          doctest::test_suite("campaign")) {
    constexpr std::uint64_t cap = 300;  // schedules per search: the ext4 scenarios run ~100 a second
    std::uint64_t compared = 0;
    for (const std::string& path : test_support::bundled_scenarios()) {
        const loader::Scenario scenario = loader::load_scenario(path);
        if (scenario.perf) continue;  // a workload far past a dfs
        for (const auto& variant : scenario.variants) {
            // One world each for all three bounds: the memo carries verdicts
            // from one search to the next, as it does between schedules.
            runner::Simulation with_memo(scenario, variant);
            runner::Simulation without_memo(scenario, variant);
            for (std::uint32_t preemptions = 0; preemptions <= 2; preemptions++) {
                CAPTURE(path);
                CAPTURE(variant.name);
                CAPTURE(preemptions);
                const runner::FuzzReport with = search(with_memo, preemptions, true, cap);
                same_search(with, search(without_memo, preemptions, false, cap));
                compared++;
                if (!with.complete) break;  // capped: a higher bound only repeats the first 300
            }
        }
    }
    MESSAGE("compared " << compared << " searches");
    CHECK(compared > 0);
}
