// Scenario-level tests on scenarios/btrfs/fast-fsync-vs-page-release.json: the
// scripted race tells patch 1/3's story and violates fsync_durability before the
// fix, both fixes hold, runs are deterministic, fuzzing finds the race and its
// repro replays byte for byte, and the CI gate's verdicts are right (including
// when they must fail). Paths are relative to the source root, where the test
// binary runs.
#include <doctest/doctest.h>

#include "tests/support.hpp"

#include <algorithm>
#include <fstream>
#include <cstdint>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/campaign.hpp"
#include "report/chrome_trace.hpp"
#include "report/report.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "loader/scenario.hpp"
#include "runner/shrink.hpp"
#include "sim/strategy.hpp"

namespace {

using test_support::check_in_order;
using test_support::has_checker;
using test_support::spec_of;

using Json = nlohmann::ordered_json;

constexpr const char* scenario_path = "scenarios/btrfs/fast-fsync-vs-page-release.json";

auto load() -> loader::Scenario { return loader::load_scenario(scenario_path); }

auto variant_of(const loader::Scenario& scenario, const std::string& name)
    -> const loader::Variant& {
    const loader::Variant* variant = scenario.find_variant(name);
    REQUIRE(variant != nullptr);
    return *variant;
}

auto random_spec() -> sim::StrategySpec {
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy("random", spec));
    return spec;
}

auto pct_spec(std::uint32_t depth) -> sim::StrategySpec {
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy("pct:" + std::to_string(depth), spec));
    return spec;
}

auto fixed_clock() -> double { return 0.0; }

// The shipped scenario's JSON, for tests that change one thing in it.
auto scenario_json() -> Json { return Json::parse(loader::read_text_file(scenario_path)); }

auto error_of_scripted(const Json& document, const std::string& variant_name) -> std::string {
    const loader::Scenario scenario = loader::parse_scenario(document.dump(), "inline.json");
    runner::Simulation simulation(scenario, variant_of(scenario, variant_name));
    try {
        const runner::RunOutcome outcome = simulation.run_scripted(true);
        return "no error (violated: " + std::string(outcome.violated() ? "yes" : "no") + ")";
    } catch (const loader::InputError& error) {
        return error.what();
    }
}

}  // namespace

TEST_CASE("scenario: before-fix scripted schedule violates fsync_durability and tells the race") {
    const auto scenario = load();
    runner::Simulation simulation(scenario, variant_of(scenario, "before-fix"));
    const runner::RunOutcome outcome = simulation.run_scripted(true);

    REQUIRE(outcome.violated());
    REQUIRE(has_checker(outcome, "fsync_durability"));
    for (const auto& violation : outcome.violations) {
        if (violation.checker != "fsync_durability") continue;
        CHECK(violation.file == "I");
        CHECK(violation.offset == 20971520);
        CHECK(violation.found == "zeros");
        CHECK(violation.message.find("file I offset 20971520") != std::string::npos);
    }
    REQUIRE(outcome.crash.has_value());
    CHECK(outcome.crash->after == "fsyncer returned");
    CHECK(outcome.crash->step == outcome.steps);
    CHECK(outcome.crash_states == 1);

    check_in_order(outcome.story, {
        "app       write [20971520, 20975616) of inode I: 1 page(s) from 5120 dirtied",
        "extent map [20971520, 20975616) created PINNED",
        "ordered extent completes: extent map [20971520, 20975616) unpinned, generation 3",
        "page release (btrfs_releasepage) invoked",
        "NEEDS_FULL_SYNC is clear: fast path",
        "try_release_extent_mapping removes extent map [20971520, 20975616) generation 3 from the "
        "extent map tree and from the list of modified extents",
        "btrfs_log_changed_extents locks the extent map tree: 0 extent map(s) on the list of "
        "modified extents",
        "logs no file extent item",
        "the log is durable",
        "fsync of inode I returns 0",
        "power cut after step",
        "log replay: inode I i_size 20975616, 0 file extent item(s) replayed",
    });
    // The story is numbered and the trace holds at least every story line.
    CHECK(outcome.story.starts_with("  1. "));
    CHECK(outcome.trace.size() >= outcome.story.size() / 2);
    CHECK(outcome.trace_hash != 0);
}

TEST_CASE("scenario: fix-1 and fix-2 scripted schedules hold; page release leaves the extent map") {
    const auto scenario = load();
    for (const char* name : {"fix-1", "fix-2"}) {
        CAPTURE(name);
        runner::Simulation simulation(scenario, variant_of(scenario, name));
        const runner::RunOutcome outcome = simulation.run_scripted(true);
        CHECK_FALSE(outcome.violated());
        CHECK_FALSE(outcome.crash.has_value());
        CHECK(outcome.crash_states == 1);
        check_in_order(outcome.story, {
            "page release (btrfs_releasepage) invoked",
            "NEEDS_FULL_SYNC is clear: fast path",
            "try_release_extent_mapping leaves extent map [20971520, 20975616) generation 3 alone",
            "1 newer than generation 2 to log: [20971520, 20975616)",
            "the log is durable",
            "fsync of inode I returns 0",
            "power cut after step",
            "log replay: inode I i_size 20975616, 1 file extent item(s) replayed",
        });
        CHECK(outcome.story.find("removes extent map") == std::string::npos);
    }
}

TEST_CASE("scenario: the three variants tell different stories (different trace hashes)") {
    const auto scenario = load();
    std::vector<std::uint64_t> hashes;
    for (const char* name : {"before-fix", "fix-1", "fix-2"}) {
        runner::Simulation simulation(scenario, variant_of(scenario, name));
        hashes.push_back(simulation.run_scripted(true).trace_hash);
    }
    CHECK(hashes[0] != hashes[1]);
    CHECK(hashes[0] != hashes[2]);
    CHECK(hashes[1] != hashes[2]);
}

TEST_CASE("scenario: runs are deterministic, byte for byte") {
    const auto scenario = load();
    for (const char* name : {"before-fix", "fix-1"}) {
        CAPTURE(name);
        const auto& variant = variant_of(scenario, name);
        runner::Simulation first(scenario, variant);
        runner::Simulation second(scenario, variant);

        SUBCASE("scripted") {
            const auto a = first.run_scripted(true);
            const auto b = first.run_scripted(true);  // same simulation again
            const auto c = second.run_scripted(true);  // a fresh simulation
            CHECK(!a.trace.empty());
            CHECK(a.trace == b.trace);
            CHECK(a.trace == c.trace);
            CHECK(a.story == c.story);
            CHECK(a.trace_hash == b.trace_hash);
            CHECK(a.trace_hash == c.trace_hash);
            CHECK(a.choices == c.choices);
        }
        SUBCASE("run_strategy with the same seed") {
            for (const auto& spec : {random_spec(), pct_spec(3)}) {
                CAPTURE(spec.text());
                for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xdeadbeefULL}) {
                    CAPTURE(seed);
                    const auto a = first.run_strategy(spec, seed, true);
                    const auto b = first.run_strategy(spec, seed, true);
                    const auto c = second.run_strategy(spec, seed, true);
                    CHECK(!a.trace.empty());
                    CHECK(a.trace == b.trace);
                    CHECK(a.trace == c.trace);
                    CHECK(a.trace_hash == b.trace_hash);
                    CHECK(a.trace_hash == c.trace_hash);
                    CHECK(a.choices == c.choices);
                    CHECK(a.crash_states == c.crash_states);
                    CHECK(a.violated() == c.violated());
                    // Tracing does not change the run.
                    const auto untraced = first.run_strategy(spec, seed, false);
                    CHECK(untraced.choices == a.choices);
                    CHECK(untraced.violated() == a.violated());
                    CHECK(untraced.crash_states == a.crash_states);
                }
            }
        }
    }
}

TEST_CASE("scenario: different seeds of a random strategy explore different schedules") {
    const auto scenario = load();
    runner::Simulation simulation(scenario, variant_of(scenario, "before-fix"));
    for (const auto& spec : {random_spec(), pct_spec(3)}) {
        CAPTURE(spec.text());
        const auto base = simulation.run_strategy(spec, 0, false);
        bool differs = false;
        for (std::uint64_t seed = 1; seed <= 8 && !differs; seed++) {
            differs = simulation.run_strategy(spec, seed, false).choices != base.choices;
        }
        CHECK(differs);
    }
    CHECK(runner::schedule_seed(0, 0) != runner::schedule_seed(0, 1));
    CHECK(runner::schedule_seed(0, 1) != runner::schedule_seed(1, 1));
    CHECK(runner::schedule_seed(7, 3) == runner::schedule_seed(7, 3));
}

TEST_CASE("scenario: fuzzing before-fix finds fsync_durability, and the repro replays") {
    const auto scenario = load();
    runner::Simulation simulation(scenario, variant_of(scenario, "before-fix"));
    for (const auto& spec : {random_spec(), pct_spec(3)}) {
        CAPTURE(spec.text());
        runner::FuzzRequest request;
        request.strategy = spec;
        request.seed = 0;
        request.schedules = 10000;
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        REQUIRE(report.found);
        CHECK(has_checker(report.failing, "fsync_durability"));
        CHECK(report.schedules == report.index + 1);  // stops at the first
        CHECK(report.schedule_seed == runner::schedule_seed(0, report.index));
        CHECK(report.crash_states >= report.schedules);
        REQUIRE(report.failing.crash.has_value());
        CHECK(!report.failing.trace.empty());

        // The failing schedule alone, by its seed, is the same run.
        const auto again = simulation.run_strategy(spec, report.schedule_seed, true);
        CHECK(again.trace_hash == report.failing.trace_hash);

        // Replayed from its choices and crash record, byte for byte.
        const auto replayed = simulation.replay(report.failing.choices, *report.failing.crash, true);
        CHECK(replayed.trace_hash == report.failing.trace_hash);
        CHECK(replayed.trace == report.failing.trace);
        CHECK(has_checker(replayed, "fsync_durability"));
        REQUIRE(replayed.crash.has_value());
        CHECK(replayed.crash->step == report.failing.crash->step);
        CHECK(replayed.crash->keep == report.failing.crash->keep);
        CHECK(replayed.violations.front().message == report.failing.violations.front().message);

        // A fresh simulation replays it too (as `crashsim replay` does).
        runner::Simulation fresh(scenario, variant_of(scenario, "before-fix"));
        CHECK(fresh.replay(report.failing.choices, *report.failing.crash, true).trace_hash ==
              report.failing.trace_hash);

        // The same campaign again finds the same schedule.
        const runner::FuzzReport second = runner::fuzz(simulation, request);
        CHECK(second.found);
        CHECK(second.index == report.index);
        CHECK(second.failing.trace_hash == report.failing.trace_hash);
    }
}

TEST_CASE("scenario: fix-1 and fix-2 survive fuzzing") {
    const auto scenario = load();
    for (const char* name : {"fix-1", "fix-2"}) {
        runner::Simulation simulation(scenario, variant_of(scenario, name));
        for (const auto& spec : {random_spec(), pct_spec(3)}) {
            CAPTURE(name);
            CAPTURE(spec.text());
            runner::FuzzRequest request;
            request.strategy = spec;
            request.seed = 0;
            request.schedules = 3000;
            const runner::FuzzReport report = runner::fuzz(simulation, request);
            CHECK_FALSE(report.found);
            if (report.found) MESSAGE(report.failing.violations.front().message);
            CHECK(report.schedules == 3000);
            CHECK(report.crash_states >= report.schedules);
        }
    }
}

TEST_CASE("scenario: check_variant meets every variant's expectation (reduced budget)" *
          doctest::test_suite("campaign")) {
    const auto scenario = load();
    REQUIRE(scenario.variants.size() == 4);
    for (const auto& shipped : scenario.variants) {
        CAPTURE(shipped.name);
        loader::Variant variant = shipped;
        REQUIRE(!variant.expect.fuzz.strategies.empty());
        // For dfs the budget is a cap on an exhaustive search, which 5000 does
        // not cover at three preemptions; the dfs tests below run it whole.
        std::erase_if(variant.expect.fuzz.strategies, [](const auto& s) { return s.text() == "dfs:3"; });
        variant.expect.fuzz.schedules = 5000;
        const runner::CheckRow row = runner::check_variant(scenario, variant, fixed_clock);
        INFO(row.detail);
        CHECK(row.met);
        CHECK(row.scenario == "btrfs/fast-fsync-vs-page-release");
        CHECK(row.variant == shipped.name);
        CHECK(row.schedules >= 1);
        CHECK(row.crash_states >= 1);
        CHECK(row.seconds == 0.0);
        if (variant.expect.kind == loader::Expectation::Kind::violates) {
            CHECK(row.expectation == "violates fsync_durability");
        } else {
            CHECK(row.expectation == "holds");
            // The scripted schedule plus every strategy's full budget.
            CHECK(row.schedules == 1 + 5000 * variant.expect.fuzz.strategies.size());
        }
    }
}

TEST_CASE("scenario: expect.fuzz.dfs_schedules caps the dfs strategy only") {
    const auto scenario = load();
    loader::Variant variant = *scenario.find_variant("fix-1");
    variant.expect.fuzz.strategies = test_support::strategy_specs({"random", "dfs:1"});
    variant.expect.fuzz.schedules = 50;
    variant.expect.fuzz.dfs_schedules = 0;  // the file's 1,000,000: none
    variant.expect.fuzz.states = sim::VisitedKey::none;
    // The dfs:1 proof takes 14,871 schedules: 50 would leave it incomplete
    // (not met), the dfs cap lets it finish while random still runs 50.
    const runner::CheckRow capped = runner::check_variant(scenario, variant, fixed_clock);
    INFO(capped.detail);
    CHECK_FALSE(capped.met);
    variant.expect.fuzz.dfs_schedules = 100000;
    const runner::CheckRow row = runner::check_variant(scenario, variant, fixed_clock);
    INFO(row.detail);
    CHECK(row.met);
    CHECK(row.schedules == 1 + 50 + 14871);
}

TEST_CASE("scenario: check_variant is not met when the expectation is wrong" *
          doctest::test_suite("campaign")) {
    const auto scenario = load();
    SUBCASE("holds expected of the before-fix config") {
        loader::Variant variant = variant_of(scenario, "before-fix");
        variant.name = "before-fix-claims-holds";
        variant.expect = loader::Expectation{};
        variant.expect.kind = loader::Expectation::Kind::holds;
        variant.expect.fuzz.strategies = test_support::strategy_specs({"random", "pct:3"});
        variant.expect.fuzz.schedules = 2000;
        variant.expect.fuzz.seed = 0;
        const auto row = runner::check_variant(scenario, variant, fixed_clock);
        CHECK_FALSE(row.met);
        CHECK(row.expectation == "holds");
        CHECK(row.detail.find("scripted schedule violated") != std::string::npos);
        CHECK(row.detail.find("file I offset 20971520") != std::string::npos);
    }
    SUBCASE("holds expected of the before-fix config, fuzzing alone") {
        // Without the scripted schedule's help the fuzzer must catch it.
        loader::Scenario unscripted = scenario;
        unscripted.schedule.clear();
        loader::Variant variant = variant_of(scenario, "before-fix");
        variant.expect = loader::Expectation{};
        variant.expect.kind = loader::Expectation::Kind::holds;
        variant.expect.fuzz.strategies = test_support::strategy_specs({"random"});
        variant.expect.fuzz.schedules = 10000;
        const auto row = runner::check_variant(unscripted, variant, fixed_clock);
        CHECK_FALSE(row.met);
        CHECK(row.detail.find("random schedule") != std::string::npos);
    }
    SUBCASE("violates expected of the fix-1 config") {
        loader::Variant variant = variant_of(scenario, "fix-1");
        variant.name = "fix-1-claims-violates";
        variant.expect.kind = loader::Expectation::Kind::violates;
        variant.expect.checker = "fsync_durability";
        variant.expect.fuzz.strategies = test_support::strategy_specs({"random", "pct:3"});
        variant.expect.fuzz.schedules = 2000;
        const auto row = runner::check_variant(scenario, variant, fixed_clock);
        CHECK_FALSE(row.met);
        CHECK(row.expectation == "violates fsync_durability");
        CHECK(row.detail.find("did not violate fsync_durability") != std::string::npos);
    }
    SUBCASE("a different checker expected of the before-fix config") {
        loader::Variant variant = variant_of(scenario, "before-fix");
        variant.expect.checker = "no_stale_data";
        variant.expect.fuzz.schedules = 2000;
        const auto row = runner::check_variant(scenario, variant, fixed_clock);
        CHECK_FALSE(row.met);
    }
}

TEST_CASE("scenario: a schedule step that can never complete is an InputError naming $.schedule[i]") {
    SUBCASE("until a yield point reached fewer times than count") {
        Json document = scenario_json();
        document["schedule"] = Json::parse(R"([
          {"run": "fsyncer", "until": "btrfs.sync_log.super_durable", "count": 5}
        ])");
        const std::string message = error_of_scripted(document, "fix-1");
        CAPTURE(message);
        CHECK(message.starts_with("inline.json: $.schedule[0]: expected task fsyncer to reach "
                                  "btrfs.sync_log.super_durable"));
        CHECK(message.find("got the task ended first") != std::string::npos);
    }
    SUBCASE("running a task that already ended") {
        Json document = scenario_json();
        document["schedule"] = Json::parse(R"([{"run": "app"}, {"run": "app"}])");
        const std::string message = error_of_scripted(document, "before-fix");
        CAPTURE(message);
        CHECK(message.starts_with("inline.json: $.schedule[1]: expected task app"));
        CHECK(message.find(", got ") != std::string::npos);
    }
    SUBCASE("a task that blocks forever") {
        // The flusher stops with the range locked and its bio not submitted;
        // the fsync must then wait for it forever.
        Json document = scenario_json();
        document["schedule"] = Json::parse(R"([
          {"run": "app"},
          {"run": "flusher", "until": "btrfs.flusher.after_delalloc"},
          {"run": "fsyncer"}
        ])");
        const std::string message = error_of_scripted(document, "before-fix");
        CAPTURE(message);
        CHECK(message.starts_with("inline.json: $.schedule[2]: expected task fsyncer to run to its end"));
        CHECK(message.find("got it blocked on") != std::string::npos);
    }
    SUBCASE("steps left when every task ended") {
        Json document = scenario_json();
        document["schedule"] = Json::parse(R"([
          {"run": "app"}, {"run": "flusher"}, {"run": "endio"}, {"run": "reclaim"},
          {"run": "fsyncer"}, {"run": "endio", "until": "btrfs.endio.after_join"}
        ])");
        const std::string message = error_of_scripted(document, "fix-2");
        CAPTURE(message);
        CHECK(message.starts_with("inline.json: $.schedule[5]: expected task endio"));
        CHECK(message.find(", got ") != std::string::npos);
    }
}

TEST_CASE("dfs: two preemptions find the before-fix race and prove both fixes within the bound" *
          doctest::test_suite("campaign")) {
    const auto scenario = load();
    for (const auto& variant : scenario.variants) {
        CAPTURE(variant.name);
        runner::Simulation simulation(scenario, variant);
        runner::FuzzRequest request;
        REQUIRE(sim::parse_strategy("dfs:2", request.strategy));
        request.schedules = 1'000'000;
        request.dpor = false;  // sleep sets alone; dpor: dpor_soundness_test.cpp
        const runner::FuzzReport report = runner::fuzz(simulation, request);
        if (variant.name == "before-fix") {
            REQUIRE(report.found);
            CHECK(report.failing.violations.front().checker == "fsync_durability");
        } else {
            CHECK_FALSE(report.found);
            CHECK(report.complete);
            CHECK(report.dfs.pruned_sleep > 0);
        }
    }
}

TEST_CASE("dfs: without preemptions the race cannot happen, and the search completes") {
    const auto scenario = load();
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    runner::FuzzRequest request;
    REQUIRE(sim::parse_strategy("dfs:0", request.strategy));
    request.schedules = 1'000'000;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    CHECK_FALSE(report.found);
    CHECK(report.complete);
}

// Slow (about 110 s): the quick loop skips it (`crashsim_tests -tse=slow,campaign`), tools/test runs it.
TEST_CASE("dfs: sleep-set pruning hides no violation the unpruned search finds" *
          doctest::test_suite("campaign")) {
    const auto scenario = load();
    for (const char* variant_name : {"before-fix", "fix-1", "fix-2"}) {
        CAPTURE(variant_name);
        for (std::uint32_t preemptions = 0; preemptions <= 3; preemptions++) {
            CAPTURE(preemptions);
            // One Simulation per search: its verdict memo then counts the
            // distinct crash states that search judged.
            runner::Simulation unpruned_world(scenario, *scenario.find_variant(variant_name));
            runner::Simulation pruned_world(scenario, *scenario.find_variant(variant_name));
            runner::FuzzRequest request;
            request.strategy.kind = sim::StrategySpec::Kind::dfs;
            request.strategy.preemptions = preemptions;
            request.schedules = 1'000'000;
            request.dpor = false;  // sleep sets against none; dpor: dpor_soundness_test.cpp
            request.sleep_sets = false;
            const runner::FuzzReport unpruned = runner::fuzz(unpruned_world, request);
            request.sleep_sets = true;
            const runner::FuzzReport pruned = runner::fuzz(pruned_world, request);
            CHECK(pruned.found == unpruned.found);
            if (pruned.found && unpruned.found) {
                CHECK(pruned.failing.violations.front().checker ==
                      unpruned.failing.violations.front().checker);
                CHECK(pruned.failing.violations.front().offset ==
                      unpruned.failing.violations.front().offset);
            }
            if (!unpruned.found) {
                CHECK(pruned.complete);
                CHECK(pruned.schedules <= unpruned.schedules);
                // The same crash states, not only no violation (the race's
                // searches judged them all even before a step that adds a
                // timer touched the clock; the kthread scenario did not:
                // kthread_scenario_test.cpp).
                REQUIRE(unpruned.crash_states_distinct.has_value());
                CHECK(pruned.crash_states_distinct == unpruned.crash_states_distinct);
            }
        }
    }
}

namespace {
auto count_lines(const std::string& text) -> std::size_t {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}
}  // namespace

TEST_CASE("shrink: a fuzzed before-fix repro shrinks to the seed's steps and still fails the same way" *
          doctest::test_suite("campaign")) {
    const std::string text = loader::read_text_file(scenario_path);
    const auto scenario = loader::parse_scenario(text, scenario_path);
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    runner::FuzzRequest request;
    REQUIRE(sim::parse_strategy("random", request.strategy));
    request.schedules = 10000;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    REQUIRE(report.found);
    runner::Repro repro;
    repro.scenario_path = scenario_path;
    repro.scenario_text = text;
    repro.variant = "before-fix";
    repro.strategy = "random";
    repro.choices = report.failing.choices;
    repro.crash = *report.failing.crash;
    repro.checker = report.failing.violations.front().checker;
    repro.trace_hash = report.failing.trace_hash;
    const runner::ShrinkResult shrunk =
        runner::shrink(repro, runner::ShrinkOptions{3, 50000, ~std::uint64_t{0}});
    CHECK(shrunk.changed);
    const auto& violation = shrunk.outcome.violations.front();
    CHECK(violation.checker == "fsync_durability");
    CHECK(violation.file == "I");
    CHECK(violation.offset == 20971520);
    // The flusher is not needed (fsync's own writeback dirties nothing more),
    // nor is the 20 MiB of set-up data (the new write alone passes 16 MiB).
    const auto shrunk_scenario = loader::parse_scenario(shrunk.repro.scenario_text, scenario_path);
    CHECK(shrunk_scenario.tasks.size() == 3);
    CHECK(shrunk_scenario.setup.size() < scenario.setup.size());
    CHECK(count_lines(shrunk.outcome.story) <= count_lines(report.failing.story));
    CHECK(shrunk.outcome.story.find(" flusher ") == std::string::npos);
    CHECK(shrunk.outcome.story.find("writeback not triggered by fsync") == std::string::npos);
    // Still the race: release removes the map between the fast path's check and its walk.
    const auto& story = shrunk.outcome.story;
    const auto fast = story.find("NEEDS_FULL_SYNC is clear");
    const auto removes = story.find("try_release_extent_mapping removes");
    const auto walk = story.find("btrfs_log_changed_extents locks");
    REQUIRE(fast != std::string::npos);
    REQUIRE(removes != std::string::npos);
    REQUIRE(walk != std::string::npos);
    CHECK(fast < removes);
    CHECK(removes < walk);
    // The shrunk repro replays to the same trace.
    const auto replay_scenario = loader::parse_scenario(shrunk.repro.scenario_text, scenario_path);
    runner::Simulation replay_simulation(replay_scenario, *replay_scenario.find_variant("before-fix"));
    const auto replayed = replay_simulation.replay(shrunk.repro.choices, shrunk.repro.crash, true);
    CHECK(replayed.trace_hash == shrunk.repro.trace_hash);
}

TEST_CASE("chrome trace: one track per task, blocked slices, I/O in flight and the power cut") {
    const auto scenario = load();
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    const auto outcome = simulation.run_scripted(true);
    const auto document = nlohmann::json::parse(report::chrome_trace_json(outcome, "title"));
    std::set<std::string> tracks;
    std::size_t blocked = 0;
    std::size_t power = 0;
    std::map<std::uint64_t, int> io_open;
    for (const auto& event : document["traceEvents"]) {
        const std::string phase = event["ph"];
        if (phase == "M" && event["name"] == "thread_name") tracks.insert(event["args"]["name"]);
        if (phase == "X" && event["name"] == "blocked") {
            blocked++;
            CHECK(event["dur"].get<double>() >= 0);
        }
        if (phase == "i" && event["name"] == "power cut") {
            power++;
            CHECK(event["s"] == "g");
        }
        if (phase == "b") io_open[event["id"].get<std::uint64_t>()]++;
        if (phase == "e") io_open[event["id"].get<std::uint64_t>()]--;
    }
    for (const char* task : {"app", "flusher", "reclaim", "fsyncer", "endio", "device"}) {
        CHECK_MESSAGE(tracks.count(task) == 1, task);
    }
    CHECK(blocked >= 1);
    CHECK(power == 1);
    CHECK(io_open.size() >= 4);  // data, log, flush, superblock
    for (const auto& [id, open] : io_open) CHECK(open == 0);
}

namespace {
auto violation_indices(const runner::FuzzReport& report) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> indices;
    for (const auto& found : report.violations) indices.push_back(found.index);
    return indices;
}
}  // namespace

TEST_CASE("campaign: the same violations and counts with any number of jobs") {
    const auto scenario = load();
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    for (const bool stop_at_first : {true, false}) {
        CAPTURE(stop_at_first);
        runner::FuzzRequest request;
        REQUIRE(sim::parse_strategy("random", request.strategy));
        request.schedules = 3000;
        request.stop_at_first = stop_at_first;
        const auto one = runner::fuzz(simulation, request);
        REQUIRE(one.found);
        for (const std::uint32_t jobs : {2U, 3U}) {
            CAPTURE(jobs);
            request.jobs = jobs;
            const auto many = runner::fuzz(simulation, request);
            CHECK(many.schedules == one.schedules);
            CHECK(many.crash_states == one.crash_states);
            CHECK(many.steps == one.steps);
            CHECK(many.index == one.index);
            CHECK(violation_indices(many) == violation_indices(one));
            CHECK(many.failing.trace_hash == one.failing.trace_hash);
        }
    }
}

TEST_CASE("campaign: shards 0..N-1 merged equal the whole campaign, for any N") {
    const auto scenario = load();
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    runner::FuzzRequest whole_request;
    REQUIRE(sim::parse_strategy("pct:3", whole_request.strategy));
    whole_request.schedules = 2000;
    whole_request.stop_at_first = false;
    const auto whole = runner::fuzz(simulation, whole_request);
    REQUIRE_FALSE(whole.violations.empty());
    const auto whole_result = runner::campaign_result(whole, whole_request, scenario, 7, "before-fix");
    for (const std::uint32_t count : {1U, 2U, 3U, 7U}) {
        CAPTURE(count);
        std::vector<runner::CampaignResult> shards;
        std::vector<std::string> names;
        for (std::uint32_t index = count; index-- > 0;) {  // any order
            runner::FuzzRequest request = whole_request;
            request.shard_index = index;
            request.shard_count = count;
            const auto report = runner::fuzz(simulation, request);
            shards.push_back(runner::campaign_result(report, request, scenario, 7, "before-fix"));
            names.push_back("shard" + std::to_string(index));
        }
        const auto merged = runner::merge_results(shards, names);
        CHECK(merged.schedules_run == whole_result.schedules_run);
        CHECK(merged.crash_states == whole_result.crash_states);
        CHECK(merged.steps == whole_result.steps);
        REQUIRE(merged.violations.size() == whole_result.violations.size());
        for (std::size_t i = 0; i < merged.violations.size(); i++) {
            CHECK(merged.violations[i].index == whole_result.violations[i].index);
            CHECK(merged.violations[i].violation.message == whole_result.violations[i].violation.message);
        }
    }
    // A missing or repeated shard is refused.
    runner::FuzzRequest request = whole_request;
    request.shard_count = 2;
    const auto only =
        runner::campaign_result(runner::fuzz(simulation, request), request, scenario, 7, "before-fix");
    CHECK_THROWS_AS(runner::merge_results({only}, {"a"}), loader::InputError);
    CHECK_THROWS_AS(runner::merge_results({only, only}, {"a", "b"}), loader::InputError);
}

TEST_CASE("scenario: with the transaction kthread running, the fixes still hold and before-fix still fails") {
    // The seed's race without its script, with a commit every second: the
    // kthread is a daemon (its wake-up never overtakes runnable work), and a
    // commit is published only once its superblock is durable.
    std::ifstream in(scenario_path);
    nlohmann::json json = nlohmann::json::parse(in);
    json.erase("schedule");
    json["config"]["commit_interval"] = "1";
    const auto scenario = loader::parse_scenario(json.dump(), "kthread.json");
    for (const char* name : {"fix-1", "before-fix"}) {
        CAPTURE(name);
        runner::Simulation simulation(scenario, variant_of(scenario, name));
        if (std::string(name) != "fix-1") continue;
        for (const auto& spec : {random_spec(), pct_spec(2), pct_spec(3)}) {
            runner::FuzzRequest request;
            request.strategy = spec;
            request.schedules = 3000;
            CHECK_FALSE(runner::fuzz(simulation, request).found);
        }
    }
    runner::Simulation before(scenario, variant_of(scenario, "before-fix"));
    runner::FuzzRequest request;
    request.strategy = pct_spec(3);
    request.schedules = 20000;
    CHECK(runner::fuzz(before, request).found);
}

TEST_CASE(
    "ext4 ENOSPC: a failed write acknowledges nothing; a retry after the commit that frees blocks succeeds") {
    constexpr const char* path = "scenarios/jbd2/enospc-write.json";
    Json document = Json::parse(loader::read_text_file(path));
    // The shipped schedule: the unlink first, so ext4_should_retry_alloc's
    // forced commit frees A's blocks and the retried write succeeds.
    {
        const auto scenario = loader::parse_scenario(document.dump(), path);
        runner::Simulation simulation(scenario, variant_of(scenario, "fix"));
        const runner::RunOutcome outcome = simulation.run_scripted(true);
        CHECK_FALSE(outcome.violated());
        check_in_order(outcome.story, {"write B: ENOSPC (no free block for 2 hole(s))",
                                       "ext4_should_retry_alloc forces the commit of transaction 2"});
        CHECK(outcome.story.find("returns -ENOSPC") == std::string::npos);
    }
    // The app first: nothing waits for a commit, the write fails, and the
    // fsync promises B's first block only (before the fix the failed write
    // was acknowledged: B's size 12288 was promised, a false alarm).
    document["schedule"] =
        Json::array({Json{{"run", "app"}}, Json{{"run", "cleaner"}}, Json{{"crash", "none"}}});
    const auto scenario = loader::parse_scenario(document.dump(), path);
    runner::Simulation simulation(scenario, variant_of(scenario, "fix"));
    const runner::RunOutcome outcome = simulation.run_scripted(true);
    CHECK_FALSE(outcome.violated());
    CHECK(outcome.story.find("write B: returns -ENOSPC and changes nothing") != std::string::npos);
    CHECK(outcome.story.find("forces the commit") == std::string::npos);
    CHECK(outcome.crash_states >= 1);
}

TEST_CASE("scenario: two files, two fsyncers: before-fix loses file I's extent, every patch keeps both") {
    const auto scenario = loader::load_scenario("scenarios/btrfs/two-files-two-fsyncers.json");
    runner::Simulation before(scenario, variant_of(scenario, "before-fix"));
    const runner::RunOutcome lost = before.run_scripted(true);
    REQUIRE(has_checker(lost, "fsync_durability"));
    for (const auto& violation : lost.violations) {
        if (violation.checker != "fsync_durability") continue;
        CHECK(violation.file == "I");
        CHECK(violation.offset == 20971520);
        CHECK(violation.found == "zeros");
    }
    check_in_order(lost.story, {
        "NEEDS_FULL_SYNC is clear: fast path",
        "try_release_extent_mapping removes extent map [20971520, 20975616) generation 3",
        "logs no file extent item",
        "fsync of inode I returns 0",
        "fsync of inode J joins transaction 3",
        "log replay: inode I i_size 20975616, 0 file extent item(s) replayed",
    });
    for (const char* name : {"fix-1", "fix-2", "fix-3"}) {
        CAPTURE(name);
        runner::Simulation simulation(scenario, variant_of(scenario, name));
        const runner::RunOutcome outcome = simulation.run_scripted(true);
        CHECK_FALSE(outcome.violated());
        CHECK(outcome.story.find("removes extent map") == std::string::npos);
        check_in_order(outcome.story, {
            "try_release_extent_mapping leaves extent map [20971520, 20975616) generation 3 alone",
            "1 newer than generation 2 to log: [20971520, 20975616)",
            "fsync of inode I returns 0",
            "fsync of inode J returns 0",
            "log replay: inode I i_size 20975616, 1 file extent item(s) replayed",
            "log replay: inode J i_size 20975616, 1 file extent item(s) replayed",
        });
    }
}
