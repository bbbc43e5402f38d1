// Tests of the loader (loader/load*.cpp): the shipped btrfs scenario loads as written, the documented
// defaults are filled in, and every file in tests/bad_input fails with its exact message.
// Paths are relative to the source root, where the test binary runs.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "loader/scenario.hpp"
#include "sim/yield_point.hpp"
#include "tests/support.hpp"

namespace {

using Json = nlohmann::ordered_json;
using loader::ScheduleStep;
using loader::UnflushedPolicy;

auto error_of_load(const std::string& path) -> std::string {
    return test_support::input_error_of([&] { loader::load_scenario(path); });
}

auto error_of_parse(const std::string& text) -> std::string {
    return test_support::input_error_of([&] { loader::parse_scenario(text, "inline.json"); });
}

// A small valid scenario; tests change one thing in it.
auto minimal() -> Json {
    return Json::parse(R"({
      "name": "minimal",
      "model": "btrfs",
      "device": {"block_size": 4096, "blocks": 1024},
      "setup": [{"op": "create", "file": "I"}],
      "tasks": [
        {"name": "app", "ops": [{"op": "create", "file": "J"},
                                {"op": "write", "file": "J", "offset": 0, "length": 8192}]},
        {"name": "fsyncer", "ops": [{"op": "writeback", "file": "I"}, {"op": "fsync", "file": "I"}]}
      ],
      "checkers": ["fsync_durability"],
      "variants": [{"name": "fix", "expect": "holds"}]
    })");
}

auto parse(const Json& document) -> loader::Scenario {
    return loader::parse_scenario(document.dump(), "inline.json");
}

void check_step(const ScheduleStep& step, const std::string& task, const std::string& until) {
    CHECK(step.kind == ScheduleStep::Kind::run);
    CHECK(step.task == task);
    CHECK(step.until == until);
    CHECK(step.count == 1);
}

void check_op(const loader::Op& op, const std::string& name, const std::string& file) {
    CHECK(op.name == name);
    CHECK(op.file == file);
    CHECK(op.flags.empty());
}

void check_range(const loader::Op& op, std::uint64_t offset, std::uint64_t length) {
    CHECK(op.has_offset);
    CHECK(op.has_length);
    CHECK(op.offset == offset);
    CHECK(op.length == length);
}

}  // namespace

TEST_CASE("load_scenario: btrfs/fast-fsync-vs-page-release loads as written") {
    const auto scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    CHECK(scenario.path == "scenarios/btrfs/fast-fsync-vs-page-release.json");
    CHECK(scenario.name == "btrfs/fast-fsync-vs-page-release");
    CHECK(scenario.about.starts_with("Patch 1/3 of the page-release series"));
    CHECK(scenario.model == "btrfs");
    CHECK(scenario.device.block_size == 4096);
    CHECK(scenario.device.blocks == 16384);
    CHECK(scenario.device.profile == "nvme");
    CHECK(scenario.files == std::vector<std::string>{"I"});
    CHECK(scenario.file_id("I") == 0);

    REQUIRE(scenario.setup.size() == 4);
    check_op(scenario.setup[0], "create", "I");
    CHECK_FALSE(scenario.setup[0].has_offset);
    check_op(scenario.setup[1], "write", "I");
    check_range(scenario.setup[1], 0, 20971520);
    CHECK(scenario.setup[1].json_path == "$.setup[1]");
    check_op(scenario.setup[2], "fsync", "I");
    check_op(scenario.setup[3], "sync", "");

    REQUIRE(scenario.tasks.size() == 4);
    const std::vector<std::string> names = {"app", "flusher", "reclaim", "fsyncer"};
    for (std::size_t index = 0; index < names.size(); index++) {
        CHECK(scenario.tasks[index].name == names[index]);
        CHECK(scenario.tasks[index].ops.size() == 1);
    }
    check_op(scenario.tasks[0].ops[0], "write", "I");
    check_range(scenario.tasks[0].ops[0], 20971520, 4096);
    check_op(scenario.tasks[1].ops[0], "writeback", "I");
    CHECK_FALSE(scenario.tasks[1].ops[0].has_offset);
    CHECK_FALSE(scenario.tasks[1].ops[0].has_length);
    check_op(scenario.tasks[2].ops[0], "release_pages", "I");
    check_range(scenario.tasks[2].ops[0], 20971520, 4096);
    check_op(scenario.tasks[3].ops[0], "fsync", "I");
    CHECK(scenario.tasks[3].ops[0].json_path == "$.tasks[3].ops[0]");
    CHECK(scenario.crash.unflushed == UnflushedPolicy::any_subset);
}

TEST_CASE("load_scenario: btrfs/fast-fsync-vs-page-release schedule and variants") {
    const auto scenario =
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json");
    const auto& schedule = scenario.schedule;
    REQUIRE(schedule.size() == 8);
    check_step(schedule[0], "app", "");
    check_step(schedule[1], "flusher", "");
    check_step(schedule[2], "endio", "");
    check_step(schedule[3], "reclaim", "btrfs.release.before_em_lock");
    check_step(schedule[4], "fsyncer", "btrfs.fsync.after_full_sync_check");
    check_step(schedule[5], "reclaim", "");
    check_step(schedule[6], "fsyncer", "");
    CHECK(schedule[7].kind == ScheduleStep::Kind::crash);
    CHECK(schedule[7].unflushed == UnflushedPolicy::none);
    CHECK(schedule[7].json_path == "$.schedule[7]");
    CHECK(scenario.checkers ==
          std::vector<std::string>{"fsync_durability", "no_stale_data", "fs_consistency"});

    REQUIRE(scenario.variants.size() == 4);
    const auto& before_fix = scenario.variants[0];
    CHECK(before_fix.name == "before-fix");
    CHECK(before_fix.config ==
          std::map<std::string, std::string>{{"release_extent_maps", "before-fix"},
                                             {"log_commit_sleep", "none"},
                                             {"hz", "250"},
                                             {"jiffy_timer", "tick-aligned"},
                                             {"commit_interval", "30"},
                                             {"nodesize", "16384"}});
    CHECK(before_fix.expect.kind == loader::Expectation::Kind::violates);
    CHECK(before_fix.expect.checker == "fsync_durability");
    CHECK(test_support::strategy_texts(before_fix.expect.fuzz.strategies) ==
          std::vector<std::string>{"random", "pct:3", "dfs:2"});
    CHECK(before_fix.expect.fuzz.schedules == 10000);
    CHECK(before_fix.expect.fuzz.seed == 0);
    const auto* fix_2 = scenario.find_variant("fix-2");
    REQUIRE(fix_2 != nullptr);
    CHECK(fix_2->config.at("release_extent_maps") == "fix-2");
    CHECK(fix_2->expect.kind == loader::Expectation::Kind::holds);
    CHECK(fix_2->expect.checker.empty());
    CHECK(fix_2->expect.fuzz.schedules == 100000);
    CHECK(scenario.find_variant("fix-1") == &scenario.variants[1]);
    CHECK(scenario.find_variant("fix-3") == &scenario.variants[3]);
    CHECK(scenario.find_variant("fix-4") == nullptr);
}

TEST_CASE("parse_scenario: fills in the defaults the format documents") {
    const auto scenario = parse(minimal());
    CHECK(scenario.about.empty());
    CHECK(scenario.device.profile == "nvme");
    CHECK(scenario.crash.unflushed == UnflushedPolicy::any_subset);
    CHECK(scenario.schedule.empty());
    REQUIRE(scenario.variants.size() == 1);
    const auto& variant = scenario.variants[0];
    CHECK(variant.config ==
          std::map<std::string, std::string>{{"release_extent_maps", "fix-3"},
                                             {"log_commit_sleep", "none"},
                                             {"hz", "250"},
                                             {"jiffy_timer", "tick-aligned"},
                                             {"commit_interval", "30"},
                                             {"nodesize", "16384"}});
    CHECK(variant.expect.kind == loader::Expectation::Kind::holds);
    CHECK(test_support::strategy_texts(variant.expect.fuzz.strategies) == std::vector<std::string>{"random"});
    CHECK(variant.expect.fuzz.schedules == 10000);
    CHECK(variant.expect.fuzz.seed == 0);
}

TEST_CASE("parse_scenario: variant config overrides top-level config, which overrides defaults") {
    auto document = minimal();
    document["config"] = {{"release_extent_maps", "fix-1"}, {"log_commit_sleep", "jiffy"}};
    document["variants"][0]["config"] = {{"release_extent_maps", "fix-2"}};
    document["variants"].push_back({{"name", "base"}, {"expect", {{"holds", true}}}});
    const auto scenario = parse(document);
    CHECK(scenario.variants[0].config.at("release_extent_maps") == "fix-2");
    CHECK(scenario.variants[0].config.at("log_commit_sleep") == "jiffy");
    CHECK(scenario.variants[1].config.at("release_extent_maps") == "fix-1");
    CHECK(scenario.variants[0].config.at("hz") == "250");
}

TEST_CASE("parse_scenario: files are numbered in order of creation, setup first") {
    const auto scenario = parse(minimal());
    CHECK(scenario.files == std::vector<std::string>{"I", "J"});
    CHECK(scenario.file_id("J") == 1);
    CHECK(scenario.tasks[0].ops[1].json_path == "$.tasks[0].ops[1]");
    check_range(scenario.tasks[0].ops[1], 0, 8192);
}

TEST_CASE("parse_scenario: a fuzz budget in an expectation overrides the scenario's") {
    auto document = minimal();
    document["fuzz"] = {{"strategies", {"pct:16"}}, {"schedules", 5}, {"seed", 7}};
    document["variants"][0]["expect"] = {
        {"violates", "fsync_durability"},
        {"fuzz", {{"strategies", {"random", "pct:1"}}, {"schedules", 9}}}};
    document["variants"].push_back({{"name", "other"}, {"expect", "holds"}});
    const auto scenario = parse(document);
    const auto& own = scenario.variants[0].expect.fuzz;
    CHECK(test_support::strategy_texts(own.strategies) == std::vector<std::string>{"random", "pct:1"});
    CHECK(own.schedules == 9);
    CHECK(own.seed == 0);
    const auto& inherited = scenario.variants[1].expect.fuzz;
    CHECK(test_support::strategy_texts(inherited.strategies) == std::vector<std::string>{"pct:16"});
    CHECK(inherited.schedules == 5);
    CHECK(inherited.seed == 7);
}

TEST_CASE("parse_scenario: schedule steps take until, count and both crash spellings") {
    auto document = minimal();
    document["crash"] = {{"unflushed", "all"}};
    document["schedule"] = {
        {{"run", "fsyncer"}, {"until", "btrfs.fsync.after_full_sync_check"}, {"count", 2}},
        {{"run", "endio"}},
        {{"crash", {{"unflushed", "prefix"}}}}};
    const auto scenario = parse(document);
    CHECK(scenario.crash.unflushed == UnflushedPolicy::all);
    REQUIRE(scenario.schedule.size() == 3);
    CHECK(scenario.schedule[0].count == 2);
    CHECK(scenario.schedule[2].kind == ScheduleStep::Kind::crash);
    CHECK(scenario.schedule[2].unflushed == UnflushedPolicy::prefix);

    document["schedule"][0]["count"] = 0;
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.schedule[0].count: expected an unsigned integer from 1 to 4294967295, "
          "got 0");
}

TEST_CASE("parse_scenario: a syntax error names the line and column of the offending byte") {
    const std::string prefix = "inline.json: $: expected valid JSON, got a syntax error at ";
    CHECK(error_of_parse("") == "inline.json: $: expected valid JSON, got an empty file");
    CHECK(error_of_parse(" \n") == "inline.json: $: expected valid JSON, got only white space");
    CHECK(error_of_parse("{") == prefix + "line 1, column 2");
    CHECK(error_of_parse("{\n") == prefix + "line 2, column 1");
    CHECK(error_of_parse("{\n  \"a\": 1,\n}") == prefix + "line 3, column 1");
    CHECK(error_of_parse("{\"a\": tru}") == prefix + "line 1, column 10");
    // A raw newline inside a string is the offending byte itself, at the end of line 1.
    CHECK(error_of_parse("{\"a\": \"x\n\"}") == prefix + "line 1, column 9");
}

TEST_CASE("parse_scenario: a JSON path quotes a key that is not an identifier") {
    auto document = minimal();
    document["device"]["block size"] = 4096;
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.device[\"block size\"]: expected one of the keys block_size, blocks, "
          "profile, write_latency_us, flush_latency_us, bandwidth, write_cache, got an unknown key");
}

TEST_CASE("parse_scenario: numbers that are not unsigned integers are named as written") {
    auto document = minimal();
    document["device"]["blocks"] = 1.5;
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.device.blocks: expected an unsigned integer, got 1.5");
    document["device"]["blocks"] = nullptr;
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.device.blocks: expected an unsigned integer, got null");
}

// A scenario whose only work is the given fs_mark job.
auto fs_mark_document(const Json& job) -> Json {
    auto document = minimal();
    document.erase("setup");
    document.erase("tasks");
    document["workload"] = {{"fs_mark", job}};
    return document;
}

TEST_CASE("parse_scenario: an fs_mark job expands into one task per thread that creates, writes "
          "and fsyncs each file") {
    const auto scenario = parse(fs_mark_document({{"threads", 2}, {"files", 3}, {"size", 8192}}));
    REQUIRE(scenario.fs_mark.has_value());
    CHECK(scenario.fs_mark->dirs == 1);
    CHECK(scenario.fs_mark->fsync);
    CHECK(scenario.setup.empty());  // fs_mark creates its files while it is measured
    REQUIRE(scenario.tasks.size() == 2);
    CHECK(scenario.files == std::vector<std::string>{"d0/t0.f0", "d0/t0.f1", "d0/t0.f2", "d0/t1.f0",
                                                     "d0/t1.f1", "d0/t1.f2"});
    for (std::size_t thread = 0; thread < 2; thread++) {
        const auto& task = scenario.tasks[thread];
        CHECK(task.name == "thread" + std::to_string(thread));
        REQUIRE(task.ops.size() == 9);
        for (std::size_t file = 0; file < 3; file++) {
            const auto name = "d0/t" + std::to_string(thread) + ".f" + std::to_string(file);
            check_op(task.ops[3 * file], "create", name);
            check_op(task.ops[3 * file + 1], "write", name);
            check_range(task.ops[3 * file + 1], 0, 8192);
            check_op(task.ops[3 * file + 2], "fsync", name);
        }
    }
}

TEST_CASE("parse_scenario: on a model with mkdir, fs_mark makes each directory before its first file "
          "(setup_file_name); user_cpu_us goes on each create") {
    auto document = fs_mark_document({{"files", 3}, {"size", 4096}, {"dirs", 2}, {"user_cpu_us", 5}});
    document["model"] = "ext4";
    document["checkers"] = {"journal_integrity"};
    document["variants"] = {{{"name", "fix"}, {"expect", "holds"}}};
    const auto scenario = parse(document);
    CHECK(scenario.setup.empty());
    CHECK(scenario.files == std::vector<std::string>{"d0", "d0/t0.f0", "d1", "d1/t0.f1", "d0/t0.f2"});
    REQUIRE(scenario.tasks.size() == 1);
    const auto& ops = scenario.tasks[0].ops;
    REQUIRE(ops.size() == 11);
    check_op(ops[0], "mkdir", "d0");
    check_op(ops[1], "create", "d0/t0.f0");
    check_op(ops[4], "mkdir", "d1");
    check_op(ops[8], "create", "d0/t0.f2");  // d0 exists: no second mkdir
    CHECK(ops[0].user_cpu_ns == 0);
    CHECK(ops[1].user_cpu_ns == 5000);
    CHECK(ops[2].user_cpu_ns == 0);  // the write: fs_mark's time is charged once per file
}

TEST_CASE("parse_scenario: fs_mark's previous_files is an earlier run in the set-up: the directories "
          "and a sync, its files created, written and fsynced, then all unlinked") {
    auto document = fs_mark_document(
        {{"files", 2}, {"size", 4096}, {"dirs", 2}, {"previous_files", 3}, {"user_cpu_us", 5}});
    document["model"] = "ext4";
    document["checkers"] = {"journal_integrity"};
    document["variants"] = {{{"name", "fix"}, {"expect", "holds"}}};
    const auto scenario = parse(document);
    const auto& setup = scenario.setup;
    REQUIRE(setup.size() == 3 + 9 + 3);
    check_op(setup[0], "mkdir", "d0");
    check_op(setup[1], "mkdir", "d1");
    CHECK(setup[2].name == "sync");
    check_op(setup[3], "create", "d0/p0.f0");
    check_op(setup[5], "fsync", "d0/p0.f0");
    check_op(setup[9], "create", "d0/p0.f2");
    check_op(setup[12], "unlink", "d0/p0.f0");
    check_op(setup[14], "unlink", "d0/p0.f2");
    REQUIRE(scenario.tasks.size() == 1);
    REQUIRE(scenario.tasks[0].ops.size() == 6);  // no mkdir: the directories exist
    check_op(scenario.tasks[0].ops[0], "create", "d0/t0.f0");
    check_op(scenario.tasks[0].ops[3], "create", "d1/t0.f1");
}

TEST_CASE("parse_scenario: every op that names a file carries that file's index, set-up and tasks alike") {
    auto document = fs_mark_document({{"files", 3}, {"size", 4096}, {"dirs", 2}, {"previous_files", 2}});
    document["model"] = "ext4";
    document["checkers"] = {"journal_integrity"};
    document["variants"] = {{{"name", "fix"}, {"expect", "holds"}}};
    const auto scenario = parse(document);
    std::size_t named = 0;
    const auto check_index = [&](const loader::Op& op) {
        if (op.file.empty()) {
            CHECK(op.file_index == loader::Op::no_file_index);
            return;
        }
        named++;
        REQUIRE(op.file_index < scenario.files.size());
        CHECK(scenario.files[op.file_index] == op.file);
    };
    for (const auto& op : scenario.setup) check_index(op);
    for (const auto& op : scenario.tasks[0].ops) check_index(op);
    CHECK(named == 2 + 2 * 3 + 2 + 3 * 3);  // mkdirs, the earlier run and its unlinks, the timed run
    const auto hand = parse(minimal());
    CHECK(hand.tasks[0].ops[1].file_index == hand.file_id(hand.tasks[0].ops[1].file));
}

TEST_CASE("parse_scenario: ext4 takes write offsets, lengths and fs_mark sizes in bytes; btrfs in blocks") {
    auto document = minimal();
    document["model"] = "ext4";
    document["device"]["blocks"] = 6400;
    document["checkers"] = {"journal_integrity"};
    document["tasks"] = Json::parse(R"([{"name": "app", "ops": [{"op": "create", "file": "J"},
        {"op": "write", "file": "J", "offset": 1000, "length": 24}]}])");
    const auto scenario = parse(document);
    CHECK(scenario.tasks[0].ops[1].offset == 1000);
    CHECK(scenario.tasks[0].ops[1].length == 24);
    auto fs_mark = fs_mark_document({{"files", 2}, {"size", 1024}});
    fs_mark["model"] = "ext4";
    fs_mark["device"]["blocks"] = 6400;
    fs_mark["checkers"] = {"journal_integrity"};
    CHECK(parse(fs_mark).tasks[0].ops[2].length == 1024);
    CHECK(test_support::input_error_of([] { parse(fs_mark_document({{"files", 2}, {"size", 1024}})); })
              .find("$.workload.fs_mark.size: expected a multiple of 4096, got 1024") != std::string::npos);
}

TEST_CASE("parse_scenario: fs_mark spreads files over dirs round-robin, or files_per_dir at a "
          "time") {
    const auto round_robin = parse(fs_mark_document({{"files", 5}, {"size", 4096}, {"dirs", 3}}));
    CHECK(round_robin.files == std::vector<std::string>{"d0/t0.f0", "d1/t0.f1", "d2/t0.f2",
                                                        "d0/t0.f3", "d1/t0.f4"});
    const auto grouped = parse(fs_mark_document(
        {{"files", 7}, {"size", 4096}, {"dirs", 3}, {"files_per_dir", 2}}));
    CHECK(grouped.files == std::vector<std::string>{"d0/t0.f0", "d0/t0.f1", "d1/t0.f2", "d1/t0.f3",
                                                    "d2/t0.f4", "d2/t0.f5", "d0/t0.f6"});
}

TEST_CASE("parse_scenario: fs_mark without fsync only creates and writes") {
    const auto scenario = parse(fs_mark_document({{"files", 2}, {"size", 4096}, {"fsync", false}}));
    REQUIRE(scenario.tasks.size() == 1);
    const auto& ops = scenario.tasks[0].ops;
    REQUIRE(ops.size() == 4);
    check_op(ops[0], "create", "d0/t0.f0");
    check_op(ops[1], "write", "d0/t0.f0");
    check_op(ops[2], "create", "d0/t0.f1");
    check_op(ops[3], "write", "d0/t0.f1");
}

TEST_CASE("parse_scenario: fs_mark's files and another task's are kept apart") {
    auto document = fs_mark_document({{"files", 1}, {"size", 4096}});
    document["tasks"] = Json::parse(R"([{"name": "app", "ops": [{"op": "create", "file": "d0/t0.f0"}]}])");
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.tasks[0].ops[0].file: expected a file name that no earlier op creates, "
          "got \"d0/t0.f0\"");
    document["tasks"][0]["ops"] = Json::parse(R"([{"op": "fsync", "file": "d0/t0.f0"}])");
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.tasks[0].ops[0].file: expected a file created earlier in setup or in "
          "this task, got \"d0/t0.f0\"");
    document.erase("tasks");
    document["setup"] = Json::parse(R"([{"op": "create", "file": "d0/t0.f0"}])");
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.workload.fs_mark: expected file names dD/tT.fI not created elsewhere, "
          "got \"d0/t0.f0\"");
    document = fs_mark_document(Json::object());
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.workload.fs_mark.files: expected a required key, got nothing");
    document["workload"] = Json::object();
    CHECK(error_of_parse(document.dump()) ==
          "inline.json: $.workload: expected one of the keys fio, fs_mark, create_unlink, got an empty "
          "object");
}

TEST_CASE("load_scenario: a missing file is named with the system's reason") {
    CHECK(error_of_load("tests/bad_input/no_such_file.json") ==
          "tests/bad_input/no_such_file.json: $: expected a readable scenario file, got No such "
          "file or directory");
}

namespace {

// The message of each bad input, keyed by file stem; each file has one
// defect, described in its "about".
const std::map<std::string, std::string> bad_input_messages = {
    {"bad_base_knob_value",
     "$.config.jiffy_timer: expected one of tick-aligned, hypothetical-exact, got \"exact\""},
    {"bad_block_size",
     "$.device.block_size: expected one of 512, 1024, 2048, 4096, 8192, 16384, 32768, "
     "65536, got 4000"},
    {"bad_crash_policy",
     "$.crash.unflushed: expected one of none, all, any-subset, prefix, got \"some\""},
    {"fuzz_dfs_schedules_without_dfs",
     "$.fuzz.dfs_schedules: expected a dfs strategy in strategies to cap, got none"},
    {"fuzz_states_without_dfs",
     "$.fuzz.states: expected a dfs strategy in strategies to remember states for, got none"},
    {"fuzz_states_unknown", "$.fuzz.states: expected one of none, locals, reads, got \"all\""},
    {"bad_fuzz_strategy",
     "$.fuzz.strategies[1]: expected one of random, pct:D with D from 1 to 16, or dfs:P "
     "with P from 0 to 8, got \"pct:0\""},
    {"bad_fuzz_strategy_name",
     "$.variants[1].expect.fuzz.strategies[0]: expected one of random, pct:D with D from 1 "
     "to 16, or dfs:P with P from 0 to 8, got \"dfs2\""},
    {"bad_knob_value",
     "$.variants[0].config.release_extent_maps: expected one of before-fix, fix-1, fix-2, "
     "fix-3, hypothetical-before-fix-without-full-sync, got \"sometimes\""},
    {"ext4_bad_checkpoint_cleanup",
     "$.variants[0].config.checkpoint_cleanup: expected one of hybrid-v5.8, v6.5, patch-1, patch-2, "
     "got \"v6.6\""},
    {"ext4_checkpoint_with_file",
     "$.tasks[0].ops[0].file: expected one of the keys op, got an unknown key"},
    {"ext4_fsync_without_file", "$.tasks[0].ops[0].file: expected a required key, got nothing"},
    {"ext4_journal_integrity_twice",
     "$.checkers[1]: expected a checker not listed before, got \"journal_integrity\""},
    {"ext4_shrink_with_length",
     "$.tasks[0].ops[0].length: expected one of the keys op, got an unknown key"},
    {"ext4_write_without_length", "$.tasks[0].ops[0].length: expected a required key, got nothing"},
    {"ext4_mkdir_without_file", "$.tasks[0].ops[0].file: expected a required key, got nothing"},
    {"ext4_rmdir_without_file", "$.tasks[0].ops[0].file: expected a required key, got nothing"},
    {"ext4_bad_revoke",
     "$.variants[0].config.revoke: expected one of yes, hypothetical-none, got \"no\""},
    {"ext4_bad_journal_size",
     "$.config.journal_size: expected one of scaled, 4M, 16M, 32M, 64M, 128M, 256M, 512M, 1G, got "
     "\"2G\""},
    {"ext4_journal_too_big",
     "$.variants[0].config.journal_size: expected a journal of at most half the device (3200 blocks; "
     "mkfs.ext4 refuses more) that leaves room for block group 0, got \"64M\" (16384 blocks) on a device "
     "of 6400 blocks"},
    {"costs_unknown",
     "$.costs.cp_scan_step: expected a cost of model ext4: cp_scan_step_ns, got an unknown key"},
    {"costs_zero", "$.costs.cp_scan_step_ns: expected an unsigned integer from 1 to 1000000000, got 0"},
    {"btrfs_costs_unknown",
     "$.costs.copy_item: expected a cost of model btrfs: fsync_entry_ns, log_inode_ns, "
     "checksum_lookup_ns, log_commit_ns, checksum_insert_ns, copy_item_ns, log_checksums_ns, "
     "btree_node_search_ns, got an unknown key"},
    {"fs_mark_user_cpu_string", "$.workload.fs_mark.user_cpu_us: expected a number, got a string"},
    {"perf_ratio_bad_metric",
     "$.perf.ratios[0].metric: expected counter:<name> for a counter of model ext4: counter:commits, "
     "counter:cp_scan_steps, counter:cp_scan_longest, counter:shrink_scan_steps, "
     "counter:checkpoint_writes, counter:flusher_writes, counter:tail_updates, counter:transactions, "
     "counter:transactions_dropped, counter:disk_writes, counter:disk_flushes, counter:ops., got "
     "\"counter:scan_steps\""},
    {"bad_profile",
     "$.device.profile: expected one of hdd, ssd, nvme, ramdisk, vm-rotational, vm-nvme, got "
     "\"floppy\""},
    {"broken_json", "$: expected valid JSON, got a syntax error at line 12, column 3"},
    {"count_without_until",
     "$.schedule[2].count: expected until next to count, got count without until"},
    {"crash_step_not_last",
     "$.schedule[2]: expected the crash step to be the last step, got 1 step after it"},
    {"duplicate_checker",
     "$.checkers[2]: expected a checker not listed before, got \"fsync_durability\""},
    {"duplicate_key",
     "$.device.block_size: expected each key once per object, got a duplicate key"},
    {"duplicate_task_name",
     "$.tasks[1].name: expected a task name not used before, got \"app\""},
    {"duplicate_variant_name",
     "$.variants[1].name: expected a variant name not used before, got \"fix\""},
    {"empty_checkers", "$.checkers: expected a non-empty array, got an empty array"},
    {"empty_file", "$: expected valid JSON, got an empty file"},
    {"empty_schedule_step",
     "$.schedule[2]: expected one of the keys run, crash, got an empty object"},
    {"empty_tasks", "$.tasks: expected a non-empty array, got an empty array"},
    {"empty_variants", "$.variants: expected a non-empty array, got an empty array"},
    {"expect_bad_string",
     "$.variants[0].expect: expected \"holds\", \"measure\" or an object, got \"violates\""},
    {"expect_violates_and_holds",
     "$.variants[0].expect: expected exactly one of the keys violates, holds, got both"},
    {"file_before_create",
     "$.tasks[0].ops[0].file: expected a file created earlier in setup or in this task, got "
     "\"J\""},
    {"file_created_twice",
     "$.setup[1].file: expected a file name that no earlier op creates, got \"I\""},
    {"file_from_other_task",
     "$.tasks[1].ops[0].file: expected a file created earlier in setup or in this task, got "
     "\"J\""},
    {"holds_false", "$.variants[1].expect.holds: expected true, got false"},
    {"missing_op_field", "$.tasks[0].ops[0].length: expected a required key, got nothing"},
    {"missing_tasks", "$.tasks: expected a required key, got nothing"},
    {"model_task_name",
     "$.tasks[1].name: expected a name other than the model's own tasks endio, kswapd, "
     "transaction_kthread, got \"endio\""},
    // No vacuous verdicts: crash.mount and must_reach.
    {"crash_mount_bad_value", "$.crash.mount: expected one of must-succeed, may-fail, got \"sometimes\""},
    {"crash_step_mount",
     "$.schedule[1].crash.mount: expected one of the keys unflushed, got an unknown key"},
    {"must_reach_not_array", "$.must_reach: expected an array, got a string"},
    {"must_reach_repeated",
     "$.variants[0].must_reach[0]: expected a yield point not listed before (here or in $.must_reach), "
     "got \"btrfs.fsync.after_full_sync_check\""},
    {"must_reach_unknown_point",
     "$.must_reach[0]: expected a yield point of model btrfs (crashsim list prints them), got "
     "\"btrfs.fsync.nowhere\""},
    {"violates_mount_may_fail",
     "$.variants[0].expect.violates: expected one of the scenario's checkers fsync_durability, got "
     "\"mount\""},
    {"number_past_double", "$.device.blocks: expected a number a double can hold, got 1e400"},
    {"integer_past_64_bits",
     "$.device.blocks: expected an integer from -9223372036854775808 to 18446744073709551615, got "
     "18446744073709551616"},
    {"float_past_64_bits", "$.device.blocks: expected an unsigned integer, got 18446744073709551616.0"},
    {"size_bad_suffix",
     "$.tasks[0].ops[0].length: expected an unsigned integer or a size such as 64k, 17m, 1g, got "
     "\"64q\""},
    {"size_suffix_only",
     "$.tasks[0].ops[0].length: expected an unsigned integer or a size such as 64k, 17m, 1g, got \"k\""},
    {"size_overflow", "$.tasks[0].ops[0].length: expected a size below 2^64 bytes, got \"16e\""},
    {"name_with_nul",
     "$.setup[0].file: expected a name of ASCII letters, digits and _-./:@+, got \"I\\u0000x\""},
    {"task_name_control",
     "$.tasks[0].name: expected a name of ASCII letters, digits and _-./:@+, got \"app\\u009b2J\""},
    {"variant_name_direction_mark",
     "$.variants[1].name: expected a name of ASCII letters, digits and _-./:@+, got \"fix\\u202e\""},
    {"negative_offset", "$.tasks[0].ops[0].offset: expected an unsigned integer, got -4096"},
    {"not_an_object", "$: expected an object, got an array"},
    {"offset_too_large",
     "$.tasks[0].ops[0].length: expected offset + length <= 17592186044416, got "
     "17592186044416 + 4096"},
    {"run_and_crash_step",
     "$.schedule[2]: expected exactly one of the keys run, crash, got both"},
    {"unaligned_length", "$.tasks[0].ops[0].length: expected a multiple of 4096, got 1000"},
    {"unaligned_offset", "$.tasks[0].ops[0].offset: expected a multiple of 4096, got 100"},
    {"undeclared_op_field",
     "$.tasks[1].ops[0].offset: expected one of the keys op, file, got an unknown key"},
    {"unknown_checker",
     "$.checkers[1]: expected one of the checkers freeze_quiescence, frozen_image, fs_consistency, "
     "fsync_durability, journal_integrity, no_stale_data, got \"no_stale_date\""},
    {"unknown_expect_checker",
     "$.variants[0].expect.violates: expected one of the scenario's checkers "
     "fsync_durability, no_stale_data, mount, got \"fs_consistency\""},
    {"unknown_key",
     "$.device.colour: expected one of the keys block_size, blocks, profile, write_latency_us, "
     "flush_latency_us, bandwidth, write_cache, got an unknown key"},
    {"unknown_knob",
     "$.variants[0].config.release_extent_map: expected one of the knobs "
     "release_extent_maps, log_commit_sleep, hz, jiffy_timer, commit_interval, nodesize, got an "
     "unknown knob"},
    {"removed_knob_release_sets_full_sync",
     "$.variants[1].config.release_sets_full_sync: expected one of the knobs "
     "release_extent_maps, log_commit_sleep, hz, jiffy_timer, commit_interval, nodesize, got an "
     "unknown knob"},
    // The unit tests link the toy model of tests/model/toy/ too.
    {"unknown_model", "$.model: expected one of the models btrfs, ext4, toy, xfs, got \"ext5\""},
    {"unknown_op",
     "$.tasks[0].ops[0].op: expected one of the ops create, write, writeback, release_pages, "
     "fsync, commit, sync, got \"pwrite\""},
    {"unknown_schedule_task",
     "$.schedule[2].run: expected one of the tasks app, fsyncer, endio, kswapd, transaction_kthread, got "
     "\"fsync\""},
    {"unknown_top_level_key",
     "$.timeout_ms: expected one of the keys name, about, model, device, machine, machines, costs, "
     "config, setup, workload, tasks, crash, schedule, checkers, fuzz, perf, sweep, variants, explore, "
     "must_reach, faults, got an unknown key"},
    {"explore_io_reorders_too_large",
     "$.explore.io_reorders: expected an unsigned integer from 0 to 8, got 9"},
    {"explore_unknown_key",
     "$.explore.daemon_wakeup: expected one of the keys io_reorders, daemon_wakeups, steps, "
     "progress_steps, recovery_crashes, got an unknown key"},
    {"explore_daemon_wakeups_negative", "$.explore.daemon_wakeups: expected an unsigned integer, got -1"},
    {"explore_recovery_crashes_too_large",
     "$.explore.recovery_crashes: expected an unsigned integer from 0 to 4, got 5"},
    {"explore_recovery_crashes_string",
     "$.explore.recovery_crashes: expected an unsigned integer, got a string"},
    {"fio_zero_jobs", "$.workload.fio.jobs: expected an unsigned integer from 1 to 256, got 0"},
    {"fio_direct", "$.workload.fio.direct: expected a boolean, got a string"},
    {"sweep_point_without_parameter", "$.sweep.points[1].jobs: expected a required key, got nothing"},
    {"sweep_point_bad_size", "$.sweep.points[1].size: expected a multiple of bs (8192), got 12288"},
    {"sweep_unknown_parameter",
     "$.sweep.parameter: expected a field set in $.workload.fio, got \"iodepth\""},
    {"sweep_repeated_value", "$.sweep.points[1].jobs: expected a value no earlier point has, got 2"},
    {"ratio_at_without_sweep",
     "$.perf.ratios[0].at: expected no \"at\" (the scenario has no sweep), got 4"},
    {"ratio_at_unknown_point", "$.perf.ratios[0].at: expected one of the sweep's values of jobs, got 4"},
    {"machine_zero_cpus", "$.machine.cpus: expected an unsigned integer from 1 to 1024, got 0"},
    {"machine_reclaim_batch_without_page_cache",
     "$.machine.reclaim_batch: expected a page_cache to reclaim from, got none"},
    {"machine_tiny_page_cache",
     "$.machine.page_cache: expected at least 64 blocks of 4096 bytes, got 65536"},
    {"fio_too_big_for_device",
     "$.workload.fio: expected a workload whose data fits in the device's data area (3583 blocks), got "
     "16384 blocks of data"},
    {"fs_mark_too_big_for_device",
     "$.workload.fs_mark: expected a workload whose data fits in the device's data area (3583 blocks), "
     "got 51200 blocks of data"},
    {"sweep_point_too_big_for_device",
     "$.workload.fio: expected a workload whose data fits in the device's data area (3583 blocks), got "
     "16384 blocks of data (at sweep point $.sweep.points[1])"},
    // Bounded before expansion: a 265-byte file cannot ask for seconds and gigabytes.
    {"fio_too_many_ops",
     "$.workload.fio: expected a workload of at most 3000000 operations once expanded (all sweep points "
     "together), got 512000256 operations"},
    {"sweep_too_many_ops",
     "$.workload.fio: expected a workload of at most 3000000 operations once expanded (all sweep points "
     "together), got 4000004 operations (at sweep point $.sweep.points[1])"},
    {"fio_io_size_not_multiple", "$.workload.fio.io_size: expected a multiple of bs (4096), got 6000"},
    {"fs_mark_and_fio",
     "$.workload: expected exactly one of the keys fio, fs_mark, create_unlink, got two"},
    {"fs_mark_fsync_not_boolean", "$.workload.fs_mark.fsync: expected a boolean, got a number"},
    {"fs_mark_task_name_taken",
     "$.tasks[0].name: expected a task name not used before, got \"thread0\""},
    {"fs_mark_too_many_files",
     "$.workload.fs_mark.files: expected files * threads <= 1000000, got 200000 * 8"},
    {"fs_mark_unaligned_size", "$.workload.fs_mark.size: expected a multiple of 4096, got 1024"},
    {"fs_mark_unknown_key",
     "$.workload.fs_mark.sync_method: expected one of the keys files, size, threads, dirs, "
     "files_per_dir, fsync, user_cpu_us, previous_files, got an unknown key"},
    {"fs_mark_previous_files_string",
     "$.workload.fs_mark.previous_files: expected an unsigned integer, got a string"},
    {"fs_mark_previous_files_no_unlink",
     "$.workload.fs_mark.previous_files: expected 0 on a model with no unlink operation (the earlier run "
     "unlinks its files), got 2"},
    {"ext4_unlink_without_file", "$.tasks[0].ops[1].file: expected a required key, got nothing"},
    {"ext4_sync_with_file", "$.tasks[0].ops[1].file: expected one of the keys op, got an unknown key"},
    {"ext4_task_named_kjournald2",
     "$.tasks[0].name: expected a name other than the model's own tasks flusher, jbd2_commit_timer, "
     "kjournald2, got \"kjournald2\""},
    {"fs_mark_zero_files",
     "$.workload.fs_mark.files: expected an unsigned integer from 1 to 1000000, got 0"},
    {"fs_mark_zero_size", "$.workload.fs_mark.size: expected a positive multiple of 4096, got 0"},
    {"measure_without_perf",
     "$.variants[0].expect: expected \"holds\" or an object (\"measure\" needs a perf key), got "
     "\"measure\""},
    {"perf_unknown_variant",
     "$.perf.ratios[0].denominator: expected one of the variants a, b, got \"c\""},
    {"unknown_yield_point",
     "$.schedule[2].until: expected a yield point of model btrfs (crashsim list prints "
     "them), got \"btrfs.fsync.no_such_point\""},
    {"yield_point_of_another_model",
     "$.schedule[0].until: expected a yield point of model btrfs (crashsim list prints "
     "them), got \"xfs.wb.map_lookup\""},
    {"wrong_type", "$.device.blocks: expected an unsigned integer, got a string"},
    {"zero_blocks",
     "$.device.blocks: expected an unsigned integer from 1 to 4294967296, got 0"},
    {"zero_fuzz_schedules",
     "$.fuzz.schedules: expected an unsigned integer greater than 0, got 0"},
    {"zero_length",
     "$.tasks[0].ops[0].length: expected an unsigned integer greater than 0, got 0"},
    {"xfs_fpunch_past_max_size",
     "$.tasks[0].ops[1].length: expected offset + length <= 17592186044416, got "
     "17592186040320 + 8192"},
    {"xfs_ioend_task_name",
     "$.tasks[1].name: expected a name other than the model's own tasks ioend, xfs-sync, got "
     "\"ioend\""},
    {"xfs_log_worker_task_name",
     "$.tasks[1].name: expected a name other than the model's own tasks ioend, xfs-sync, got "
     "\"xfs-sync\""},
    {"xfs_active_trans_not_hypothetical",
     "$.variants[0].config.active_trans: expected one of counter, hypothetical-removed-cancel-last, "
     "removed-cancel-first, got \"removed-cancel-last\""},
    {"xfs_unknown_log_worker",
     "$.variants[0].config.log_worker: expected one of the knobs delalloc_convert, extent_size_hint, "
     "active_trans, got an unknown knob"},
    {"xfs_freeze_with_file", "$.tasks[1].ops[0].file: expected one of the keys op, got an unknown key"},
    {"xfs_thaw_with_length", "$.tasks[1].ops[1].length: expected one of the keys op, got an unknown key"},
    {"xfs_keep_size_not_boolean",
     "$.tasks[0].ops[1].keep_size: expected a boolean, got a string"},
    {"xfs_keep_size_on_fpunch",
     "$.tasks[0].ops[1].keep_size: expected one of the keys op, file, offset, length, got an "
     "unknown key"},
    {"xfs_sync_file_range_without_length",
     "$.tasks[0].ops[1].length: expected a required key, got nothing"},
    {"xfs_unaligned_fpunch", "$.tasks[0].ops[1].offset: expected a multiple of 4096, got 61441"},
    {"xfs_unaligned_fzero_length",
     "$.tasks[0].ops[1].length: expected a multiple of 4096, got 100"},
    {"xfs_unknown_extent_size_hint",
     "$.variants[0].config.extent_size_hint: expected one of none, 64k, 1m, got \"4k\""},
    {"xfs_unknown_fork_state",
     "$.variants[0].config.delalloc_convert: expected one of written, unwritten, got "
     "\"delayed\""},
    {"xfs_unknown_op",
     "$.tasks[0].ops[1].op: expected one of the ops create, write, writeback, sync_file_range, fsync, "
     "falloc, fpunch, fzero, truncate, log_force, shutdown, freeze, thaw, unlink, got \"punch\""},
    // Machine profiles and the create_unlink workload.
    {"machines_zero_cpus", "$.machines.A.cpus: expected an unsigned integer from 1 to 1024, got 0"},
    {"machines_unknown_key",
     "$.machines.A.numa_nodes: expected one of the keys about, cpus, sockets, cores_per_socket, "
     "line_hit_ns, line_miss_ns, line_miss_remote_ns, costs, got an unknown key"},
    {"machines_sockets_mismatch",
     "$.machines.A: expected cpus = sockets * cores_per_socket, got 16 CPUs, 2 sockets of 4 cores"},
    {"machines_remote_below_miss",
     "$.machines.A.line_miss_remote_ns: expected at least line_miss_ns (1000), got 500"},
    {"machines_unknown_cost",
     "$.machines.A.costs.mkdir_ns: expected a cost of model xfs: create_ns, unlink_ns, got an unknown "
     "key"},
    {"machines_empty", "$.machines: expected a non-empty object, got an empty object"},
    {"variant_unknown_machine", "$.variants[0].machine: expected a machine profile: A, got \"C\""},
    {"create_unlink_zero_threads",
     "$.workload.create_unlink.threads: expected an unsigned integer from 1 to 256, got 0"},
    {"create_unlink_unknown_key",
     "$.workload.create_unlink.dirs: expected one of the keys threads, files, unlink, user_cpu_us, got "
     "an unknown key"},
    {"create_unlink_unlink_not_boolean",
     "$.workload.create_unlink.unlink: expected a boolean, got a string"},
    {"create_unlink_too_many_files",
     "$.workload.create_unlink.files: expected files * threads <= 4000000, got 1000000 * 16"},
    {"create_unlink_without_unlink_op",
     "$.workload.create_unlink: expected a model with an unlink operation, got \"btrfs\""},
    {"xfs_unlink_without_file", "$.tasks[0].ops[1].file: expected a required key, got nothing"},
    // The device's fault model.
    {"faults_budget_zero", "$.faults.budget: expected an unsigned integer from 1 to 8, got 0"},
    {"faults_budget_too_large", "$.faults.budget: expected an unsigned integer from 1 to 8, got 9"},
    {"faults_no_kind",
     "$.faults: expected at least one fault kind enabled (torn_writes, misdirected_writes, latent_errors "
     "or write_errors: true), got none"},
    {"faults_latent_errors_not_boolean", "$.faults.latent_errors: expected a boolean, got a string"},
    {"faults_torn_writes_not_boolean", "$.faults.torn_writes: expected a boolean, got a string"},
    {"faults_unknown_key",
     "$.faults.bit_rot: expected one of the keys budget, torn_writes, misdirected_writes, latent_errors, "
     "write_errors, got an unknown key"},
    {"faults_write_errors_not_boolean", "$.faults.write_errors: expected a boolean, got a number"},
    {"faults_write_errors_on_btrfs",
     "$.faults.write_errors: expected a model that reports a failed data write to the application (xfs), "
     "got model btrfs"},
    {"faults_write_errors_on_ext4",
     "$.faults.write_errors: expected a model that reports a failed data write to the application (xfs), "
     "got model ext4"},
    {"faults_misdirected_writes_not_boolean",
     "$.faults.misdirected_writes: expected a boolean, got a number"},
    {"faults_misdirected_on_xfs",
     "$.faults.misdirected_writes: expected a model whose metadata blocks name their own block in a "
     "verified header (btrfs), got model xfs"},
    {"faults_without_budget", "$.faults.budget: expected a required key, got nothing"},
    {"faults_on_ext4",
     "$.faults: expected a model whose checksums detect device faults (btrfs, xfs), got model ext4"},
    {"expect_faults_without_budget",
     "$.variants[0].expect.faults: expected a scenario with a fault budget ($.faults.budget), got a "
     "scenario without faults"},
    {"expect_faults_detected_false", "$.variants[0].expect.faults.detected: expected true, got false"},
    {"expect_faults_unknown_key",
     "$.variants[0].expect.faults.silently_wrong: expected one of the keys detected, survived, got an "
     "unknown key"},
    {"device_write_cache_unknown",
     "$.device.write_cache: expected one of honours-flush, lies-about-flush, got \"write-back\""},
    {"xfs_unknown_yield_point",
     "$.schedule[0].until: expected a yield point of model xfs (crashsim list prints them), "
     "got \"xfs.wb.submitted\""},
};

}  // namespace

TEST_CASE("load_scenario: every bad input fails with its exact message") {
    const std::map<std::string, std::string>& expected = bad_input_messages;
    // Every file on disk has an expected message, so a new bad input cannot go untested.
    std::size_t files_count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("tests/bad_input")) {
        const auto stem = entry.path().stem().string();
        CAPTURE(stem);
        CHECK(entry.path().extension() == ".json");
        const auto found = expected.find(stem);
        REQUIRE(found != expected.end());
        const auto path = "tests/bad_input/" + stem + ".json";
        CHECK(error_of_load(path) == path + ": " + found->second);
        files_count++;
    }
    CHECK(files_count == expected.size());
}
