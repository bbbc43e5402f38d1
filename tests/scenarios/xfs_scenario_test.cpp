// Scenario-level tests of the xfs scenarios (xfs_bmapi_convert_delalloc's whole-record
// conversion, "xfs: force writes to delalloc regions to unwritten"; xfs_quiesce_attr against
// the log worker, "xfs: remove the m_active_trans counter"): generic/042's scripted run tells
// the story step by step and violates no_stale_data before the fix, the fix holds and shows
// the unwritten conversion at I/O completion, extent size hints and preallocated files hold
// before the fix too, runs are deterministic, the writeback race's and the freeze race's
// scripted stories give each variant its verdict, fuzzing the race finds the exposure before
// the fix and not after it, and every shipped variant meets its expectation. Paths are
// relative to the source root.
#include <doctest/doctest.h>

#include "tests/support.hpp"

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/campaign.hpp"
#include "sim/yield_point.hpp"
#include "runner/runner.hpp"
#include "loader/scenario.hpp"
#include "sim/strategy.hpp"

namespace {

using test_support::check_in_order;
using test_support::has_checker;
using test_support::spec_of;

constexpr const char* generic_042 = "scenarios/xfs/generic-042.json";
constexpr const char* generic_042_prealloc = "scenarios/xfs/generic-042-prealloc.json";
constexpr const char* falloc_sized = "scenarios/xfs/falloc-k-over-sized-file.json";
constexpr const char* race = "scenarios/xfs/delalloc-writeback-race.json";
constexpr const char* freeze_race = "scenarios/xfs/freeze-vs-log-worker.json";

auto variant_of(const loader::Scenario& scenario, const std::string& name)
    -> const loader::Variant& {
    const loader::Variant* variant = scenario.find_variant(name);
    REQUIRE(variant != nullptr);
    return *variant;
}

auto run_scripted(const char* path, const std::string& variant) -> runner::RunOutcome {
    const auto scenario = loader::load_scenario(path);
    runner::Simulation simulation(scenario, variant_of(scenario, variant));
    return simulation.run_scripted(true);
}

auto fixed_clock() -> double { return 0.0; }

/// The times the run reached the yield point `name`.
auto hits_of(const runner::RunOutcome& outcome, const char* name) -> std::uint64_t {
    const sim::YieldPoint* point = sim::find_yield_point(name);
    REQUIRE(point != nullptr);
    REQUIRE(point->id < outcome.hits.size());
    return outcome.hits[point->id];
}

/// The variant's must_reach points (the scenario's and its own), each reached
/// by the scripted run.
void check_reaches_must_reach(const char* path, const std::string& variant,
                              const runner::RunOutcome& outcome) {
    const auto scenario = loader::load_scenario(path);
    const std::vector<std::string>& must_reach = variant_of(scenario, variant).must_reach;
    REQUIRE_FALSE(must_reach.empty());
    for (const std::string& name : must_reach) {
        CAPTURE(name);
        CHECK(hits_of(outcome, name.c_str()) > 0);
    }
}

// What the run of generic/042 before the fix tells, in order.
const std::vector<std::string> generic_042_before_fix_story = {
    // falloc -k: the whole record is converted, but nothing is written and di_size stays 0.
    "falloc_k  write [0, 65536) of inode I: xfs_bmapi_reserve_delalloc: delalloc record "
    "[0, 65536)",
    "falloc -k [61440, 65536) of inode I",
    "xfs_bmapi_allocate (wasdel) converts the whole record, not just [61440, 65536): NORM "
    "extent [0, 65536)",
    // fpunch: the whole record converted, one page written, di_size raised.
    "fpunch    write [0, 65536) of inode J: xfs_bmapi_reserve_delalloc: delalloc record "
    "[0, 65536); 16 page(s) dirtied; i_size 65536, di_size 0",
    "fpunch [61440, 65536) of inode J (xfs_file_fallocate)",
    "xfs_map_blocks: the block at 61440 of inode J lies in delalloc record [0, 65536)",
    "xfs_bmapi_convert_delalloc converts the whole delalloc record [0, 65536) of inode J, not "
    "just the block at 61440: NORM extent [0, 65536)",
    "(xfs_bmapi_convert_delalloc) committed to the CIL, in memory only",
    "submit W(data) of 1 page(s) [61440, 65536) of inode J",
    "ioend #0 NORM, past di_size 0: size update transaction allocated",
    "15 dirty page(s) of the mapping [0, 65536) are not written",
    "bio of ioend #0 completes: queued to the ioend workqueue",
    "xfs_setfilesize for ioend #0: di_size of inode J 0 -> 65536",
    "xfs_bunmapi unmaps NORM extent [61440, 65536)",
    // fzero -k: the same, then preallocation.
    "fzero -k [61440, 65536) of inode K",
    "xfs_setfilesize for ioend #1: di_size of inode K 0 -> 65536",
    "allocates UNWRITTEN extent [61440, 65536)",
    // Step 6: godown -f.
    "godown -f: XFS_IOC_GOINGDOWN",
    "log record lsn 1 with FUA",
    "xfs_force_shutdown: no more transactions, log writes or data writeback; dirty pages "
    "never written: I [0, 65536), J [0, 61440), K [0, 61440)",
    // Step 7: mount.
    "power cut after step",
    "log recovery replays lsn 1..1",
    "inode I: di_size 0, data fork: NORM extent [0, 65536)",
    "a read of inode I returns nothing (size 0)",
    "inode J: di_size 65536, data fork: NORM extent [0, 61440)",
    "hole [61440, 65536)",
    "a read of inode J returns [0, 61440) stale contents of device block",
    "a read of inode K returns [0, 61440) stale contents of device block",
};

}  // namespace

TEST_CASE("xfs scenario: generic/042 before the fix tells the race and exposes stale blocks") {
    const runner::RunOutcome outcome = run_scripted(generic_042, "before-fix");
    REQUIRE(has_checker(outcome, "no_stale_data"));
    const auto& violation = outcome.violations.front();
    CHECK(violation.checker == "no_stale_data");
    CHECK(violation.file == "J");
    CHECK(violation.offset == 0);
    CHECK(violation.found.starts_with("stale contents of device block"));
    CHECK(violation.message.ends_with("offsets that read what this workload never wrote there: "
                                      "J [0, 61440), K [0, 61440)"));
    REQUIRE(outcome.crash.has_value());
    CHECK(outcome.crash->after == "godown returned");
    CHECK(outcome.crash_states == 1);

    check_in_order(outcome.story, generic_042_before_fix_story);
    CHECK(outcome.counters.at("delalloc_conversions") == 3);
    CHECK(outcome.counters.at("size_updates") == 2);
    CHECK(outcome.counters.at("unwritten_conversions") == 0);
    CHECK(outcome.counters.at("log_forces") == 1);
    CHECK(outcome.counters.at("log_forces.shutdown") == 1);
    CHECK(outcome.counters.at("data_ios.fpunch") == 1);
    // Allocation, size update (counted against the op that submitted the I/O),
    // unmap, prealloc flags.
    CHECK(outcome.counters.at("transactions.fpunch") == 4);
}

TEST_CASE("xfs scenario: generic/042 with the fix holds; the ioend converts exactly the page") {
    const runner::RunOutcome outcome = run_scripted(generic_042, "fix");
    CHECK_FALSE(outcome.violated());
    CHECK(outcome.crash_states == 1);
    check_in_order(outcome.story, {
        "xfs_bmapi_allocate (wasdel) converts the whole record, not just [61440, 65536): "
        "UNWRITTEN extent [0, 65536)",
        "xfs_bmapi_convert_delalloc converts the whole delalloc record [0, 65536) of inode J, not "
        "just the block at 61440: UNWRITTEN extent [0, 65536)",
        "submit W(data) of 1 page(s) [61440, 65536) of inode J",
        "ioend #0 UNWRITTEN",
        "bio of ioend #0 completes: queued to the ioend workqueue",
        "xfs_iomap_write_unwritten converts exactly [61440, 65536) of inode J to NORM; di_size 0 "
        "-> 65536",
        "xfs_bunmapi unmaps NORM extent [61440, 65536)",
        "xfs_iomap_write_unwritten converts exactly [61440, 65536) of inode K to NORM",
        "log record lsn 1 with FUA",
        "inode J: di_size 65536, data fork: UNWRITTEN extent [0, 61440)",
        "a read of inode J returns [0, 65536) zeros",
        "a read of inode K returns [0, 65536) zeros",
    });
    CHECK(outcome.story.find("xfs_setfilesize") == std::string::npos);
    CHECK(outcome.counters.at("unwritten_conversions") == 2);
    CHECK(outcome.counters.at("size_updates") == 0);
}

TEST_CASE("xfs scenario: extent size hints and preallocated files take the unwritten path") {
    for (const char* name : {"hint-before", "hint-fix"}) {
        CAPTURE(name);
        const runner::RunOutcome outcome = run_scripted(generic_042, name);
        CHECK_FALSE(outcome.violated());
        CHECK(outcome.counters.at("delalloc_conversions") == 0);
        CHECK(outcome.story.find("xfs_bmapi_reserve_delalloc") == std::string::npos);
        CHECK(outcome.story.find("a read of inode J returns [0, 65536) zeros") !=
              std::string::npos);
    }
    for (const char* name : {"before-fix", "fix"}) {
        CAPTURE(name);
        const runner::RunOutcome outcome = run_scripted(generic_042_prealloc, name);
        CHECK_FALSE(outcome.violated());
        CHECK(outcome.counters.at("delalloc_conversions") == 0);
        check_in_order(outcome.story, {
            "write [0, 65536) of inode J: over existing UNWRITTEN extent [0, 65536)",
            "xfs_iomap_write_unwritten converts exactly [61440, 65536) of inode J to NORM",
            "a read of inode J returns [0, 65536) zeros",
        });
    }
}

TEST_CASE("xfs scenario: falloc -k exposes stale blocks before the fix once di_size covers them") {
    const runner::RunOutcome before = run_scripted(falloc_sized, "before-fix");
    REQUIRE(has_checker(before, "no_stale_data"));
    CHECK(before.violations.front().message.ends_with("I [0, 65536)"));
    CHECK(before.counters.at("data_ios") == 0);  // nothing was ever written back
    const runner::RunOutcome after = run_scripted(falloc_sized, "fix");
    CHECK_FALSE(after.violated());
    CHECK(after.story.find("a read of inode I returns [0, 69632) zeros") != std::string::npos);
}

TEST_CASE("xfs scenario: runs are deterministic and the variants tell different stories") {
    const runner::RunOutcome first = run_scripted(generic_042, "before-fix");
    const runner::RunOutcome second = run_scripted(generic_042, "before-fix");
    CHECK(first.trace_hash == second.trace_hash);
    CHECK(first.trace == second.trace);
    CHECK(first.counters == second.counters);
    CHECK(run_scripted(generic_042, "fix").trace_hash != first.trace_hash);

    const auto scenario = loader::load_scenario(race);
    runner::Simulation simulation(scenario, variant_of(scenario, "fix"));
    for (std::uint64_t seed : {1, 2, 3}) {
        const auto a = simulation.run_strategy(spec_of("random"), seed, true);
        const auto b = simulation.run_strategy(spec_of("random"), seed, true);
        CHECK(a.trace_hash == b.trace_hash);
        CHECK(a.choices == b.choices);
    }
}

TEST_CASE("xfs scenario: the writeback race's script exposes stale blocks before the fix only") {
    // The targeted writeback converts the whole record and submits one page,
    // its ioend raises di_size, the log worker's force makes both durable
    // while the flusher has not written [0, 60k); the power is cut.
    const runner::RunOutcome before = run_scripted(race, "before-fix");
    REQUIRE(has_checker(before, "no_stale_data"));
    CHECK(before.violations.front().file == "I");
    CHECK(before.violations.front().offset == 0);
    CHECK(before.violations.front().message.ends_with("never wrote there: I [0, 61440)"));
    CHECK(before.crash_states == 1);
    check_in_order(before.story, {
        "writer    write [0, 65536) of inode I: xfs_bmapi_reserve_delalloc: delalloc record [0, 65536)",
        "syncer    sync_file_range: writeback of inode I [61440, 65536)",
        "xfs_bmapi_convert_delalloc converts the whole delalloc record [0, 65536) of inode I, not just "
        "the block at 61440: NORM extent [0, 65536)",
        "submit W(data) of 1 page(s) [61440, 65536) of inode I",
        "15 dirty page(s) of the mapping [0, 65536) are not written",
        "ioend     xfs_setfilesize for ioend #0: di_size of inode I 0 -> 65536",
        "logworker xfs_log_worker: xfs_log_need_covered says no (the CIL holds commits)",
        "CIL checkpoint 2 holds 2 transaction(s): xfs_bmapi_convert_delalloc, xfs_setfilesize",
        "power cut after step 22",
        "inode I: di_size 65536, data fork: NORM extent [0, 65536)",
        "a read of inode I returns [0, 61440) stale contents of device block",
    });
    check_reaches_must_reach(race, "before-fix", before);

    const runner::RunOutcome fixed = run_scripted(race, "fix");
    CHECK_FALSE(fixed.violated());
    CHECK(fixed.crash_states == 1);
    check_in_order(fixed.story, {
        "not just the block at 61440: UNWRITTEN extent [0, 65536)",
        "submit W(data) of 1 page(s) [61440, 65536) of inode I",
        "ioend     xfs_iomap_write_unwritten converts exactly [61440, 65536) of inode I to NORM; "
        "di_size 0 -> 65536",
        "CIL checkpoint 2 holds 2 transaction(s): xfs_bmapi_convert_delalloc, xfs_iomap_write_unwritten",
        "power cut after step 22",
        "UNWRITTEN extent [0, 61440) at disk blocks 801..815, NORM extent [61440, 65536)",
        "a read of inode I returns [0, 61440) zeros",
    });
    check_reaches_must_reach(race, "fix", fixed);
}

TEST_CASE("xfs scenario: the freeze race's script breaches quiescence in counter and cancel-last only") {
    // The worker's first run pushes the AIL, its second passes
    // xfs_log_need_covered while writable; the freezer drains, then
    // xfs_quiesce_attr decides whether the worker's transaction lands late.
    const std::map<std::string, std::string> quiesce = {
        {"counter", "xfs_quiesce_attr: m_active_trans is 0"},
        {"cancel-last", "xfs_quiesce_attr: no counter to wait for, the log worker is not cancelled yet"},
        {"cancel-first", "xfs_quiesce_attr: cancel_delayed_work_sync(l_work) returned"},
    };
    for (const auto& [variant, drained] : quiesce) {
        CAPTURE(variant);
        const runner::RunOutcome outcome = run_scripted(freeze_race, variant);
        CHECK(outcome.daemon_wakeups == 2);
        CHECK(hits_of(outcome, "xfs.logworker.after_need_covered") == 2);
        CHECK(hits_of(outcome, "xfs.quiesce.drained") == 1);
        check_in_order(outcome.story, {
            "xfs-sync's timer fires while tasks can run (daemon wake-up 1 of at most 2)",
            "xfs_log_need_covered says no (the AIL holds items logged up to lsn 1)",
            "xfs-sync's timer fires while tasks can run (daemon wake-up 2 of at most 2)",
            "xfs_log_need_covered says yes (writable, CIL, AIL and iclogs empty",
            "freezer   freeze_super: SB_FREEZE_WRITE, writers drained",
            "freezer   freeze_super: synced, SB_FREEZE_FS",
        });
        const std::size_t drain = outcome.story.find(drained);
        REQUIRE(drain != std::string::npos);
        const std::size_t worker =
            outcome.story.find("xfs-sync  xfs_log_worker: xfs_sync_sb allocates transaction");
        REQUIRE(worker != std::string::npos);
        if (variant == "cancel-first") {
            // The cancel waited for the running worker: its transaction comes first.
            CHECK_FALSE(outcome.violated());
            CHECK(worker < drain);
            check_reaches_must_reach(freeze_race, variant, outcome);
            check_in_order(outcome.story.substr(drain), {"freeze_super: SB_FREEZE_COMPLETE", "thaw_super"});
            continue;
        }
        // A quiescence breach with no crash-visible effect: no other checker
        // fails. The watch reports it while the run goes on, which ends there.
        REQUIRE(outcome.violated());
        CHECK(hits_of(outcome, "xfs.freeze.complete") == 0);
        for (const auto& violation : outcome.violations) CHECK(violation.checker == "freeze_quiescence");
        CHECK(outcome.violations.front().message.find(
                  "transaction #3 (xfs_sync_sb, task xfs-sync) is allocated "
                  "after the drain point") != std::string::npos);
        CHECK(drain < worker);
    }
}

TEST_CASE("xfs scenario: fuzzing the race finds the exposure before the fix only") {
    const auto scenario = loader::load_scenario(race);
    for (const char* strategy : {"random", "pct:3"}) {
        CAPTURE(strategy);
        runner::FuzzRequest request;
        request.strategy = spec_of(strategy);
        request.schedules = 3000;
        runner::Simulation before(scenario, variant_of(scenario, "before-fix"));
        const runner::FuzzReport found = runner::fuzz(before, request);
        REQUIRE(found.found);
        CHECK(has_checker(found.failing, "no_stale_data"));
        CHECK(found.failing.story.find("xfs_bmapi_convert_delalloc converts the whole delalloc "
                                       "record [0, 65536)") != std::string::npos);
        const auto replayed = before.replay(found.failing.choices, *found.failing.crash, true);
        CHECK(replayed.trace_hash == found.failing.trace_hash);

        runner::Simulation fixed(scenario, variant_of(scenario, "fix"));
        const runner::FuzzReport none = runner::fuzz(fixed, request);
        CHECK_FALSE(none.found);
        if (none.found) MESSAGE(none.failing.violations.front().message);
        CHECK(none.schedules == 3000);
    }
}

// Slow (about 15 s): the quick loop skips it (`crashsim_tests -tse=slow,campaign`), tools/test runs it.
auto race_dfs(const std::string& variant, bool sleep_sets) -> runner::FuzzReport {
    const auto scenario = loader::load_scenario(race);
    runner::Simulation simulation(scenario, variant_of(scenario, variant));
    runner::FuzzRequest request;
    request.strategy.kind = sim::StrategySpec::Kind::dfs;
    request.strategy.preemptions = 0;
    request.schedules = 100000;
    request.sleep_sets = sleep_sets;
    request.dpor = false;
    return runner::fuzz(simulation, request);
}

TEST_CASE("xfs scenario: the race's footprints prune and lose no crash state the unpruned search reaches" *
          doctest::test_suite("campaign")) {
    // The data path and the log touch different parts (model/xfs/points.hpp): the log worker's force
    // commutes with the writer's buffered write, so sleep sets skip orders the unpruned search runs.
    const runner::FuzzReport unpruned = race_dfs("fix", false);
    const runner::FuzzReport pruned = race_dfs("fix", true);
    REQUIRE(unpruned.complete);
    REQUIRE(pruned.complete);
    CHECK(pruned.schedules < unpruned.schedules);
    REQUIRE(pruned.crash_states_distinct.has_value());
    CHECK(pruned.crash_states_distinct == unpruned.crash_states_distinct);
    CHECK_FALSE(pruned.found);
    const runner::FuzzReport exposed = race_dfs("before-fix", true);
    REQUIRE(exposed.found);
    CHECK(exposed.failing.violations.front().checker == "no_stale_data");
}

TEST_CASE("xfs scenario: check_variant meets every shipped variant's expectation" *
          doctest::test_suite("campaign")) {
    for (const char* path : {generic_042, generic_042_prealloc, falloc_sized, race}) {
        const auto scenario = loader::load_scenario(path);
        for (const auto& variant : scenario.variants) {
            CAPTURE(path);
            CAPTURE(variant.name);
            const runner::CheckRow row =
                runner::check_variant(scenario, variant, fixed_clock);
            CHECK(row.met);
            if (!row.met) MESSAGE(row.detail);
        }
    }
}

namespace {
// A scenario text around one task's operations, on a fsynced 16 KiB file.
auto punch_scenario(const std::string& ops) -> std::string {
    return R"({"name": "inline/punch", "model": "xfs",
      "device": {"block_size": 4096, "blocks": 2048, "profile": "nvme"},
      "setup": [{"op": "create", "file": "F"},
                {"op": "write", "file": "F", "offset": 0, "length": 16384},
                {"op": "fsync", "file": "F"}],
      "tasks": [{"name": "app", "ops": [)" + ops + R"(]}],
      "crash": {"unflushed": "any-subset"},
      "checkers": ["fsync_durability", "no_stale_data", "fs_consistency"],
      "variants": [{"name": "fix", "config": {"delalloc_convert": "unwritten"}, "expect": "holds"}]})";
}
}  // namespace

TEST_CASE("oracle: a hole punched after an fsync is newer content, not lost data") {
    const auto scenario = loader::parse_scenario(
        punch_scenario(R"({"op": "fpunch", "file": "F", "offset": 4096, "length": 4096},
                          {"op": "fsync", "file": "F"})"),
        "inline.json");
    runner::Simulation simulation(scenario, scenario.variants.front());
    const auto outcome = simulation.run_scripted(true);
    CHECK_FALSE(outcome.violated());
    runner::FuzzRequest request;
    request.strategy = spec_of("random");
    request.schedules = 500;
    const auto report = runner::fuzz(simulation, request);
    CHECK_FALSE(report.found);
}

TEST_CASE("oracle: operations that fail after godown promise nothing") {
    const auto scenario = loader::parse_scenario(
        punch_scenario(R"({"op": "shutdown"},
                          {"op": "write", "file": "F", "offset": 0, "length": 4096},
                          {"op": "fsync", "file": "F"})"),
        "inline.json");
    runner::Simulation simulation(scenario, scenario.variants.front());
    const auto outcome = simulation.run_scripted(true);
    CHECK(outcome.story.find("fails with EIO") != std::string::npos);
    // The write never reached the file and the fsync returned an error: the
    // fsynced 16 KiB from the set-up must survive, nothing more is owed.
    CHECK_FALSE(outcome.violated());
}

namespace {

/// An fsynced file A that a task unlinks while the log worker forces the
/// log: `cut` is where the cleaner stops before the force and the power cut.
auto unlink_cut(const char* until) -> runner::RunOutcome {
    nlohmann::json document = nlohmann::json::parse(R"({
      "name": "xfs/unlink-cut",
      "model": "xfs",
      "device": {"block_size": 4096, "blocks": 64, "profile": "nvme"},
      "setup": [{"op": "create", "file": "A"}, {"op": "write", "file": "A", "offset": 0, "length": 40960},
                {"op": "fsync", "file": "A"}],
      "tasks": [{"name": "cleaner", "ops": [{"op": "unlink", "file": "A"}]},
                {"name": "logworker", "ops": [{"op": "log_force"}]}],
      "schedule": [],
      "checkers": ["fsync_durability", "no_stale_data", "fs_consistency"],
      "variants": [{"name": "fix", "config": {}, "expect": "holds"}]
    })");
    nlohmann::json schedule = nlohmann::json::array();
    if (until != nullptr) schedule.push_back({{"run", "cleaner"}, {"until", until}});
    else schedule.push_back({{"run", "cleaner"}});
    // The worker's force, and the cut before its AIL push writes the items in place.
    schedule.push_back({{"run", "logworker"}, {"until", "xfs.log.record_durable"}});
    schedule.push_back({{"crash", "none"}});
    document["schedule"] = schedule;
    const auto scenario = loader::parse_scenario(document.dump(), "unlink-cut.json");
    runner::Simulation simulation(scenario, variant_of(scenario, "fix"));
    return simulation.run_scripted(true);
}

}  // namespace

TEST_CASE("xfs scenario: a cut between xfs_inactive's truncate and its ifree recovers no file A") {
    // The log force lands after xfs_inactive_truncate committed (di_size 0,
    // extents freed) and before xfs_inactive_ifree: xfs_remove is durable,
    // so A's name is gone and A is on the AGI unlinked list;
    // xlog_recover_process_iunlinks frees it. Before the model kept nlink,
    // this recovered A at size 0: a false fsync_durability alarm.
    const runner::RunOutcome truncated = unlink_cut("xfs.truncate.after_size_commit");
    CHECK_FALSE(truncated.violated());
    check_in_order(truncated.story,
                   {"log recovery replays record", "(xfs_remove, xfs_setattr_size)",
                    "xlog_recover_process_iunlinks: inode A is on the AGI unlinked list (di_nlink 0); "
                    "xfs_inactive truncates it (di_size 0 -> 0, 0 block(s) back to free space)"});
    CHECK(truncated.story.find("a read of inode A") == std::string::npos);
    // The whole unlink durable: nothing on the list, no A.
    const runner::RunOutcome whole = unlink_cut(nullptr);
    CHECK_FALSE(whole.violated());
    CHECK(whole.story.find("xlog_recover_process_iunlinks") == std::string::npos);
    CHECK(whole.story.find("a read of inode A") == std::string::npos);
}

TEST_CASE("xfs scenarios: a variant that names a kernel by one knob pins every knob that kernel had") {
    // delalloc_convert and active_trans are both kernels: v5.7 is written
    // and counter, v5.8 unwritten and removed-cancel-first; the hypothetical
    // partial backport (cancel last) sits on v5.7's delalloc conversion.
    const std::map<std::string, std::string> kernel_of = {
        {"written", "v5.7"}, {"counter", "v5.7"}, {"hypothetical-removed-cancel-last", "v5.7"},
        {"unwritten", "v5.8"}, {"removed-cancel-first", "v5.8"}};
    std::uint32_t checked = 0;
    for (const std::string& path : test_support::bundled_scenarios()) {
        std::ifstream in(path);
        const nlohmann::json document = nlohmann::json::parse(in);
        if (document.value("model", "") != "xfs") continue;
        const nlohmann::json shared = document.value("config", nlohmann::json::object());
        for (const auto& variant : document.at("variants")) {
            nlohmann::json config = shared;
            config.update(variant.value("config", nlohmann::json::object()));
            CAPTURE(path);
            CAPTURE(variant.at("name").get<std::string>());
            const bool delalloc = config.contains("delalloc_convert");
            const bool active = config.contains("active_trans");
            CHECK(delalloc == active);
            if (!delalloc || !active) continue;
            CHECK(kernel_of.at(config.at("delalloc_convert").get<std::string>()) ==
                  kernel_of.at(config.at("active_trans").get<std::string>()));
            checked++;
        }
    }
    CHECK(checked >= 30);
}
