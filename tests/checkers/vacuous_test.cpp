// No vacuous verdicts: a refused mount is a violation of its own,
// the recovered image is checked outside the model (checkers/recovered_image),
// each checker says when a crash state gave it something at stake, and
// campaigns count those states and the yield points they reached.
#include <doctest/doctest.h>

#include "tests/model/world.hpp"

#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "checkers/oracle.hpp"
#include "checkers/recovered_image.hpp"
#include "model/filesystem.hpp"
#include "runner/campaign.hpp"
#include "runner/coverage.hpp"
#include "runner/runner.hpp"
#include "loader/scenario.hpp"

namespace {

using model::RecoveredExtent;
using model::RecoveredState;
using model::disk::Content;

const std::vector<std::string> names = {"I", "J"};
const checkers::CheckContext context{names, 4096};

/// A mounted image of 100 blocks, metadata in [0, 10), I of 4 blocks mapped
/// at device blocks 20..23 and reading its own data, J absent.
auto clean_state() -> RecoveredState {
    RecoveredState state;
    state.mounted = true;
    state.device_blocks = 100;
    state.metadata_end = 10;
    state.files.resize(2);
    model::RecoveredFile& file = state.files[0];
    file.exists = true;
    file.size_bytes = 4 * 4096;
    file.extents.push_back({0, 20, 4, false});
    file.blocks.assign(0, 4, Content::data(0, 0, 1));
    return state;
}

auto error_of(const RecoveredState& state) -> std::string {
    const auto error = checkers::recovered_image_error(state, context);
    return error ? *error : "";
}

auto run_checker(const std::string& name, const checkers::Oracle& oracle, const RecoveredState& state)
    -> std::vector<checkers::Violation> {
    std::vector<checkers::Violation> found;
    checkers::make_checker(name)->check(oracle, state, context, found);
    return found;
}

auto at_stake(const std::string& name, const checkers::Oracle& oracle, const RecoveredState& state) -> bool {
    return checkers::make_checker(name)->at_stake(oracle, state, context);
}

}  // namespace

TEST_CASE("recovered image: a clean image breaks no rule") {
    CHECK(error_of(clean_state()) == "");
    RecoveredState unmounted;
    CHECK(error_of(unmounted) == "");  // the mount checker reports it
}

TEST_CASE("recovered image: a device block mapped by two files, or twice in one file") {
    RecoveredState two_files = clean_state();
    two_files.files[1].exists = true;
    two_files.files[1].size_bytes = 4096;
    two_files.files[1].extents.push_back({0, 22, 1, true});
    CHECK(error_of(two_files) ==
          "device block 22 is mapped twice: by file I extent at offset 0 (4 block(s) at device block 20) and "
          "by file J extent at offset 0 (1 block(s) at device block 22, unwritten)");
    RecoveredState one_file = clean_state();
    one_file.files[0].size_bytes = 8 * 4096;
    one_file.files[0].extents.push_back({6, 21, 2, false});
    CHECK(error_of(one_file).starts_with("device block 21 is mapped twice"));
    // A later extent that overlaps an earlier, longer one but not its neighbour.
    RecoveredState nested = clean_state();
    nested.files[0].extents = {{0, 20, 10, false}, {10, 22, 1, false}, {11, 28, 1, false}};
    nested.files[0].size_bytes = 12 * 4096;
    CHECK(error_of(nested).starts_with("device block 22 is mapped twice"));
}

TEST_CASE("recovered image: extents outside the device or over the metadata area") {
    RecoveredState past_end = clean_state();
    past_end.files[0].extents[0].device_block = 98;
    CHECK(error_of(past_end) ==
          "file I extent at offset 0 (4 block(s) at device block 98) ends past the device's 100 blocks");
    RecoveredState in_metadata = clean_state();
    in_metadata.files[0].extents[0].device_block = 8;
    CHECK(error_of(in_metadata) ==
          "file I extent at offset 0 (4 block(s) at device block 8) lies in the metadata area [0, 10)");
    RecoveredState no_area = in_metadata;
    no_area.metadata_end = 0;  // the model declares none: only the device bounds
    CHECK(error_of(no_area) == "");
    RecoveredState empty = clean_state();
    empty.files[0].extents[0].blocks = 0;
    CHECK(error_of(empty).ends_with("maps no block"));
}

TEST_CASE("recovered image: reads past the size, outside extents, and from unwritten extents") {
    RecoveredState past_size = clean_state();
    past_size.files[0].size_bytes = 2 * 4096;
    CHECK(error_of(past_size) == "file I reads content at block 2 or later, past its size 8192");
    RecoveredState unmapped = clean_state();
    unmapped.files[0].extents[0].blocks = 2;
    CHECK(error_of(unmapped).starts_with("file I offset 8192 reads "));
    CHECK(error_of(unmapped).ends_with("but no extent maps it"));
    RecoveredState unwritten = clean_state();
    unwritten.files[0].extents = {{0, 20, 2, false}, {2, 22, 2, true}};
    CHECK(error_of(unwritten).ends_with("but its extent is unwritten (reads zeros)"));
    RecoveredState zeros = unwritten;
    zeros.files[0].blocks.assign(2, 4, Content::zeros());
    CHECK(error_of(zeros) == "");
    RecoveredState ghost = clean_state();
    ghost.files[1].extents.push_back({0, 50, 1, false});
    CHECK(error_of(ghost) == "file J does not exist but recovery maps blocks to it");
}

TEST_CASE("fs_consistency reports what the model missed, and what it found first") {
    const checkers::Oracle oracle(2);
    RecoveredState state = clean_state();
    CHECK(run_checker("fs_consistency", oracle, state).empty());
    CHECK(at_stake("fs_consistency", oracle, state));
    state.files[0].extents[0].device_block = 5;
    auto found = run_checker("fs_consistency", oracle, state);
    REQUIRE(found.size() == 1);
    CHECK(found[0].checker == "fs_consistency");
    CHECK(found[0].message.starts_with("recovered image: file I extent"));
    state.consistency_errors.push_back("the model's own finding");
    found = run_checker("fs_consistency", oracle, state);
    REQUIRE(found.size() == 1);
    CHECK(found[0].message == "the model's own finding");
    RecoveredState no_extent = clean_state();
    no_extent.files[0] = model::RecoveredFile{true, 0, {}, {}};
    CHECK_FALSE(at_stake("fs_consistency", oracle, no_extent));
}

TEST_CASE("mount: a refused mount is a violation, and the other checkers have nothing at stake") {
    checkers::Oracle oracle(2);
    const std::size_t id = oracle.begin_fsync(0, 1, "fsync #1 of I");
    oracle.end_fsync(id, 2);
    RecoveredState refused;
    refused.mount_error = "no valid superblock at block 0";
    const auto found = run_checker("mount", oracle, refused);
    REQUIRE(found.size() == 1);
    CHECK(found[0].checker == "mount");
    CHECK(found[0].message == "mount fails: no valid superblock at block 0");
    CHECK(at_stake("mount", oracle, refused));
    CHECK(run_checker("fsync_durability", oracle, refused).empty());
    CHECK_FALSE(at_stake("fsync_durability", oracle, refused));
    CHECK_FALSE(at_stake("no_stale_data", oracle, refused));
    CHECK_FALSE(at_stake("fs_consistency", oracle, refused));
    CHECK(at_stake("fsync_durability", oracle, clean_state()));
}

TEST_CASE("stakes: fsync_durability needs a returned promise, no_stale_data a mapped or readable block") {
    checkers::Oracle oracle(2);
    const RecoveredState state = clean_state();
    CHECK_FALSE(at_stake("fsync_durability", oracle, state));
    const std::size_t id = oracle.begin_fsync(0, 1, "fsync #1 of I");
    CHECK_FALSE(at_stake("fsync_durability", oracle, state));  // not returned yet
    oracle.end_fsync(id, 2);
    CHECK(at_stake("fsync_durability", oracle, state));
    CHECK(at_stake("no_stale_data", oracle, state));
    RecoveredState holes = clean_state();
    holes.files[0].extents.clear();
    holes.files[0].blocks = {};
    CHECK_FALSE(at_stake("no_stale_data", oracle, holes));
    RecoveredState unwritten = holes;
    unwritten.files[0].extents.push_back({1, 30, 1, true});  // reads zeros, over old device blocks
    CHECK(at_stake("no_stale_data", oracle, unwritten));
    RecoveredState past_size = holes;
    past_size.files[0].extents.push_back({4, 30, 1, true});  // beyond EOF: not readable
    CHECK_FALSE(at_stake("no_stale_data", oracle, past_size));
}

TEST_CASE("both models report their extents, and a destroyed superblock is a refused mount") {
    for (const std::string model_name : {"btrfs", "xfs"}) {
        CAPTURE(model_name);
        test_support::ModelWorld world(model_name, {}, model::Geometry{4096, 4096, "nvme"}, {"I", "J"});
        world.run(
            {{.name = "create", .file = 0},
             {.name = "write", .file = 0, .offset = 0, .length = 3 * 4096, .has_range = true, .version = 1},
             {.name = "fsync", .file = 0}});
        const RecoveredState state = world.crash(false);
        REQUIRE(state.mounted);
        CHECK(state.device_blocks == 4096);
        CHECK(state.metadata_end > 0);
        const model::RecoveredFile& file = state.files[0];
        REQUIRE(file.exists);
        std::uint64_t written = 0;
        for (const RecoveredExtent& extent : file.extents) {
            CHECK(extent.device_block >= state.metadata_end);
            if (!extent.unwritten) written += extent.blocks;
        }
        CHECK(written == 3);
        CHECK(error_of(state) == "");
        // The same image without its superblock.
        const auto& device = world.fs->device();
        auto blocks = device.crash_image(std::vector<bool>(device.pending().size(), false)).blocks();
        blocks.assign(0, 1, model::disk::DurableBlock{Content::zeros(), 0});
        const RecoveredState refused = world.fs->recover(model::disk::Image(blocks));
        CHECK_FALSE(refused.mounted);
        checkers::Oracle oracle(2);
        const auto found = run_checker("mount", oracle, refused);
        REQUIRE(found.size() == 1);
        CHECK(found[0].message.starts_with("mount fails: no valid superblock"));
    }
}

// ---- Campaigns: stake counts, coverage, must_reach ----

namespace {

/// A btrfs scenario: one task writes I, then fsyncs it (or, without
/// `fsync`, writes it back, which changes the disk but promises nothing).
auto small_scenario(bool fsync, const std::string& extra) -> std::string {
    return std::string(R"({"name": "inline/vacuous", "model": "btrfs",
      "device": {"block_size": 4096, "blocks": 2048, "profile": "nvme"},
      "setup": [{"op": "create", "file": "I"}],
      "tasks": [{"name": "app", "ops": [{"op": "write", "file": "I", "offset": 0, "length": 4096})") +
           (fsync ? R"(, {"op": "fsync", "file": "I"})" : R"(, {"op": "writeback", "file": "I"})") + R"(]}],
      "checkers": ["fsync_durability", "no_stale_data", "fs_consistency"],)" +
           extra + R"(
      "variants": [{"name": "v",
                    "expect": {"holds": true, "fuzz": {"strategies": ["random"], "schedules": 20}}}]})";
}

auto count_of(const runner::Counts& counts, const std::string& name) -> std::uint64_t {
    for (const auto& [entry, count] : counts) {
        if (entry == name) return count;
    }
    FAIL("no count named " << name);
    return 0;
}

auto no_clock() -> double { return 0; }

}  // namespace

TEST_CASE("check: a holds whose checker never had anything at stake fails, and says so") {
    const auto scenario = loader::parse_scenario(small_scenario(false, ""), "inline.json");
    const auto row = runner::check_variant(scenario, scenario.variants.front(), no_clock);
    CHECK_FALSE(row.met);
    // Nothing fsynced: no promise; and the written-back data never becomes
    // part of the file (no commit): nothing could read stale, no extent.
    CAPTURE(row.detail);
    CHECK(row.detail.starts_with(
        "vacuous: fsync_durability, no_stale_data, fs_consistency never judged a crash "
        "state with something at stake in "));
    CHECK(count_of(row.judged, "fsync_durability") == 0);
    CHECK(count_of(row.judged, "no_stale_data") == 0);
    CHECK(count_of(row.judged, "mount") == row.crash_states);
    CHECK(row.crash_states > 0);
}

TEST_CASE("check: with an fsync every checker judges, and the counts and coverage are reported") {
    const auto scenario = loader::parse_scenario(small_scenario(true, ""), "inline.json");
    const auto row = runner::check_variant(scenario, scenario.variants.front(), no_clock);
    CHECK(row.met);
    CHECK(count_of(row.judged, "fsync_durability") > 0);
    CHECK(count_of(row.judged, "fsync_durability") <= row.crash_states);
    CHECK(count_of(row.judged, "fs_consistency") > 0);
    CHECK(count_of(row.reached, "btrfs.fsync.after_full_sync_check") > 0);
    CHECK(count_of(row.reached, "btrfs.release.before_em_lock") == 0);  // nothing releases pages
    CHECK(runner::coverage_text(row.reached).find("never reached: ") != std::string::npos);
}

TEST_CASE("check: must_reach fails a variant that never reached a point, per scenario or per variant") {
    auto scenario = loader::parse_scenario(
        small_scenario(true, R"( "must_reach": ["btrfs.fsync.after_full_sync_check"],)"), "inline.json");
    CHECK(scenario.variants.front().must_reach ==
          std::vector<std::string>{"btrfs.fsync.after_full_sync_check"});
    CHECK(runner::check_variant(scenario, scenario.variants.front(), no_clock).met);
    scenario.variants.front().must_reach.push_back("btrfs.release.before_em_lock");
    const auto row = runner::check_variant(scenario, scenario.variants.front(), no_clock);
    CHECK_FALSE(row.met);
    CHECK(row.detail ==
          "must_reach: never reached in 20 schedules: btrfs.release.before_em_lock "
          "(at most 1 I/O reordering and 1 daemon wake-up per schedule; crash during recovery: 1 nested "
          "power cut per crash state)");
}

TEST_CASE("runs: the mount checker is on unless the scenario expects refused mounts") {
    const auto must = loader::parse_scenario(small_scenario(true, ""), "inline.json");
    runner::Simulation checked(must, must.variants.front());
    CHECK(checked.checker_names() ==
          std::vector<std::string>{"fsync_durability", "no_stale_data", "fs_consistency", "mount"});
    const auto may = loader::parse_scenario(
        small_scenario(true, R"( "crash": {"unflushed": "any-subset", "mount": "may-fail"},)"),
        "inline.json");
    CHECK(may.crash.mount_may_fail);
    runner::Simulation unchecked(may, may.variants.front());
    CHECK(unchecked.checker_names() ==
          std::vector<std::string>{"fsync_durability", "no_stale_data", "fs_consistency"});
    const auto outcome = checked.run_scripted(false);
    REQUIRE(outcome.judged.size() == 4);
    CHECK(outcome.judged[3] == outcome.crash_states);
    CHECK(outcome.hits.size() == sim::yield_point_count());
}

TEST_CASE("coverage: counts add by name, and sum per model") {
    runner::Counts a = {{"x.one", 1}, {"x.two", 0}};
    runner::add_named(a, {{"x.two", 3}, {"x.three", 0}});
    CHECK(a == runner::Counts{{"x.one", 1}, {"x.two", 3}, {"x.three", 0}});
    CHECK(runner::coverage_text(a) == "2 of 3 reached; never reached: x.three");
    CHECK(runner::unreached(a, {"x.one", "x.three", "x.four"}) ==
          std::vector<std::string>{"x.three", "x.four"});
    const auto models = runner::coverage_by_model(
        {{"y", {{"y.a", 0}}}, {"x", {{"x.one", 0}}}, {"", {}}, {"y", {{"y.a", 2}}}});
    REQUIRE(models.size() == 2);
    CHECK(models[0].first == "x");
    CHECK(models[1].second == runner::Counts{{"y.a", 2}});
    std::vector<std::uint64_t> sum = {1, 2};
    runner::add_counts(sum, {1, 1, 5});
    CHECK(sum == std::vector<std::uint64_t>{2, 3, 5});
}
