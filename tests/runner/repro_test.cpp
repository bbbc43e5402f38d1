// Repro files and shrinking: every verb reads a repro through
// load_repro, which refuses an edited one with its JSON path (never an
// internal assertion); a repro written before the step bounds still reads;
// shrinking says when a bounded search was capped, and when it was
// interrupted (what it reached is marked so).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "loader/scenario.hpp"
#include "runner/campaign.hpp"
#include "runner/repro.hpp"
#include "runner/runner.hpp"
#include "runner/shrink.hpp"
#include "tests/support.hpp"

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* btrfs_path = "scenarios/btrfs/fast-fsync-vs-page-release.json";

/// A temporary directory, removed at the end of the test.
struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    TempDir(const TempDir&) = delete;
    auto operator=(const TempDir&) -> TempDir& = delete;
    [[nodiscard]] auto file(const std::string& name) const -> std::string { return (path / name).string(); }
};

/// The before-fix race as `strategy` (seed 0) finds it, unshrunk.
auto found_repro(const char* strategy = "pct:3") -> runner::Repro {
    const std::string text = loader::read_text_file(btrfs_path);
    const loader::Scenario scenario = loader::parse_scenario(text, btrfs_path);
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of(strategy);
    request.schedules = 10000;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    REQUIRE(report.found);
    return runner::make_repro(report, request, btrfs_path, text, "before-fix");
}

/// The repro file with one edit made to its JSON.
auto edited(const std::string& path, const std::string& out, const std::function<void(Json&)>& edit)
    -> std::string {
    Json document = Json::parse(loader::read_text_file(path));
    edit(document);
    runner::write_text_file_atomically(out, document.dump(2) + "\n");
    return out;
}

auto load_error(const std::string& path) -> std::string {
    try {
        static_cast<void>(runner::load_repro(path));
    } catch (const loader::InputError& error) {
        return error.what();
    }
    return "no error";
}

/// Torn writes: malformed, and one the scenario's fault budget (none) forbids.
void check_torn_edits_refused(const TempDir& dir, const std::string& good) {
    const std::string torn_type =
        edited(good, dir.file("torn_type.json"), [](Json& j) { j["crash"]["torn"] = 5; });
    CHECK(load_error(torn_type) == torn_type + ": $.crash.torn: expected an array, got a number");
    const std::string torn_zero = edited(good, dir.file("torn_zero.json"), [](Json& j) {
        j["crash"]["torn"] = Json::array({Json{{"write", 0}, {"sectors", 0}}});
    });
    CHECK(load_error(torn_zero) ==
          torn_zero + ": $.crash.torn[0].sectors: expected an unsigned integer from 1 to 1000000, got 0");
    const std::string torn_key = edited(good, dir.file("torn_key.json"), [](Json& j) {
        j["crash"]["torn"] = Json::array({Json{{"write", 0}, {"sector", 1}}});
    });
    CHECK(load_error(torn_key) ==
          torn_key + ": $.crash.torn[0].sector: expected one of the keys write, sectors, got an unknown key");
    const std::string torn_budget = edited(good, dir.file("torn_budget.json"), [](Json& j) {
        j["crash"]["torn"] = Json::array({Json{{"write", 0}, {"sectors", 1}}});
    });
    CHECK(load_error(torn_budget)
              .find(torn_budget + ": $.crash.torn: expected at most 0 torn write(s) (faults.budget)") == 0);
}

/// Misdirected writes: malformed, and one the fault budget (none) forbids.
void check_misdirected_edits_refused(const TempDir& dir, const std::string& good) {
    const std::string mis_type =
        edited(good, dir.file("mis_type.json"), [](Json& j) { j["crash"]["misdirected"] = "x"; });
    CHECK(load_error(mis_type) == mis_type + ": $.crash.misdirected: expected an array, got a string");
    const std::string mis_key = edited(good, dir.file("mis_key.json"), [](Json& j) {
        j["crash"]["misdirected"] = Json::array({Json{{"write", 0}, {"block", 1}}});
    });
    CHECK(load_error(mis_key) ==
          mis_key +
              ": $.crash.misdirected[0].block: expected one of the keys write, victim, got an unknown key");
    const std::string mis_victim = edited(good, dir.file("mis_victim.json"), [](Json& j) {
        j["crash"]["misdirected"] = Json::array({Json{{"write", 0}, {"victim", -1}}});
    });
    CHECK(load_error(mis_victim) ==
          mis_victim + ": $.crash.misdirected[0].victim: expected an unsigned integer, got -1");
    const std::string mis_budget = edited(good, dir.file("mis_budget.json"), [](Json& j) {
        j["crash"]["misdirected"] = Json::array({Json{{"write", 0}, {"victim", 1}}});
    });
    CHECK(
        load_error(mis_budget)
            .find(mis_budget +
                  ": $.crash.misdirected: expected at most 0 faults, torn and misdirected (faults.budget)") ==
        0);
}

/// Latent sector errors: malformed, and one on a scenario without latent_errors.
void check_unreadable_edits_refused(const TempDir& dir, const std::string& good) {
    const std::string eio_type = edited(good, dir.file("eio_type.json"), [](Json& j) {
        j["crash"]["unreadable"] = Json::array({"0"});
    });
    CHECK(load_error(eio_type) ==
          eio_type + ": $.crash.unreadable[0]: expected an unsigned integer, got a string");
    const std::string eio_off = edited(good, dir.file("eio_off.json"), [](Json& j) {
        j["crash"]["unreadable"] = Json::array({0});
    });
    CHECK(load_error(eio_off).find(eio_off +
                                   ": $.crash.unreadable: expected at most one latent sector error within "
                                   "faults.budget, on a scenario with faults.latent_errors") == 0);
}

}  // namespace

TEST_CASE("repro: load_repro refuses an edited repro with its JSON path, as every verb reads it") {
    const TempDir dir("crashsim-repro-test");
    const std::string good = dir.file("good.json");
    runner::write_repro(found_repro(), good);
    const runner::LoadedRepro loaded = runner::load_repro(good);
    CHECK(loaded.replayed.trace_hash == loaded.repro.trace_hash);
    CHECK(loaded.variant().name == "before-fix");

    const std::string hash =
        edited(good, dir.file("hash.json"), [](Json& j) { j["trace_hash"] = "0000000000000001"; });
    CHECK(load_error(hash).find(hash + ": $.trace_hash: expected ") == 0);
    CHECK(load_error(hash).find("the replay does not reproduce the recorded run") != std::string::npos);

    const std::string checker =
        edited(good, dir.file("checker.json"), [](Json& j) { j["violation"]["checker"] = "no_stale_data"; });
    CHECK(load_error(checker).find(checker + ": $.violation.checker: expected fsync_durability") == 0);

    // A crash that keeps more writes than are unflushed: the run diverges.
    const std::string keep = edited(good, dir.file("keep.json"), [](Json& j) {
        j["crash"]["keep"] = j["crash"]["keep"].get<std::string>() + "1";
    });
    CHECK(load_error(keep).find(keep +
                                ": $.crash.keep: expected one flag per write unflushed at crash step") == 0);

    // A crash step the run never reaches.
    const std::string step = edited(good, dir.file("step.json"), [](Json& j) { j["crash"]["step"] = 99999; });
    CHECK(load_error(step).find(step + ": $") == 0);

    check_torn_edits_refused(dir, good);
    check_misdirected_edits_refused(dir, good);
    check_unreadable_edits_refused(dir, good);
}

TEST_CASE("repro: a repro without the step bounds (written before them) still reads, with the defaults") {
    const TempDir dir("crashsim-repro-old-test");
    const std::string good = dir.file("good.json");
    runner::write_repro(found_repro(), good);
    const std::string old = edited(good, dir.file("old.json"), [](Json& j) {
        j["explore"].erase("steps");
        j["explore"].erase("progress_steps");
    });
    const runner::Repro repro = runner::read_repro(old);
    CHECK(repro.bounds.steps == loader::explore_steps_default);
    CHECK(repro.bounds.progress_steps == loader::progress_steps_default);
    REQUIRE(repro.crash.has_value());
    CHECK(runner::load_repro(old).replayed.trace_hash == repro.trace_hash);
}

TEST_CASE("shrink: a bounded search capped before it completed is said, never read as none failing") {
    const runner::Repro repro = found_repro();
    // One schedule per search: no search at any bound can complete.
    const runner::ShrinkResult shrunk = runner::shrink(repro, runner::ShrinkOptions{3, 1});
    CHECK_FALSE(shrunk.interrupted);
    bool said = false;
    for (const auto& line : shrunk.log) {
        CAPTURE(line);
        CHECK(line.find("no schedule with at most 3 preemptions fails the same way;") == std::string::npos);
        if (line.find("capped at 1 schedules") != std::string::npos) said = true;
    }
    CHECK(said);
    CHECK(shrunk.outcome.violations.front().checker == "fsync_durability");
}

TEST_CASE("shrink: interrupted shrinking says so and keeps a repro that replays") {
    const TempDir dir("crashsim-shrink-stop-test");
    const runner::Repro repro = found_repro();
    const runner::ShrinkResult shrunk = [&] {
        const test_support::StopRequested stopped;
        return runner::shrink(repro, runner::ShrinkOptions{});
    }();
    CHECK(shrunk.interrupted);
    REQUIRE_FALSE(shrunk.log.empty());
    CHECK(shrunk.log.back().find("interrupted: shrinking stopped before it finished") == 0);
    for (const auto& line : shrunk.log) CHECK(line.find("no schedule with at most") == std::string::npos);
    CHECK(shrunk.repro.shrink_log == shrunk.log);
    const std::string path = dir.file("stopped.json");
    runner::write_repro(shrunk.repro, path);
    const runner::LoadedRepro loaded = runner::load_repro(path);
    CHECK(loaded.repro.shrink_log.back().find("interrupted") == 0);
    CHECK(loaded.replayed.violations.front().checker == "fsync_durability");
}

TEST_CASE("shrink: the total budget stops shrinking, says so and keeps a repro that replays") {
    const TempDir dir("crashsim-shrink-budget-test");
    const runner::Repro repro = found_repro();
    const runner::ShrinkResult whole =
        runner::shrink(repro, runner::ShrinkOptions{3, 50000, ~std::uint64_t{0}});
    CHECK_FALSE(whole.budget_spent);
    CHECK(whole.schedules > 3);
    for (const auto& line : whole.log) CHECK(line.find("budget") == std::string::npos);
    // Three schedules in all: the first search cannot finish within them.
    const runner::ShrinkResult cut = runner::shrink(repro, runner::ShrinkOptions{3, 50000, 3});
    CHECK(cut.budget_spent);
    CHECK_FALSE(cut.interrupted);
    CHECK(cut.schedules <= 3);
    REQUIRE_FALSE(cut.log.empty());
    CHECK(cut.log.back() ==
          "budget: shrinking stopped on its total budget of 3 schedules (--shrink-budget); shrunk "
          "as far as the budget allowed, not minimal");
    for (const auto& line : cut.log) CHECK(line.find("no schedule with at most") == std::string::npos);
    const std::string path = dir.file("budget.json");
    runner::write_repro(cut.repro, path);
    const runner::LoadedRepro loaded = runner::load_repro(path);
    CHECK(loaded.replayed.violations.front().checker == "fsync_durability");
}

TEST_CASE("shrink: the btrfs race found by dfs:2 shrinks to its three tasks well within the default budget") {
    // Task removals are tried before the set-up's and a removal is searched
    // at the story's preemptions only (runner/shrink.cpp removable_ops,
    // search): before, rejecting the set-up fsync's removal spent the whole
    // budget of 3,000 and the shrink stopped short of minimal.
    const runner::Repro repro = found_repro("dfs:2");
    const runner::ShrinkResult shrunk = runner::shrink(repro, runner::ShrinkOptions{});
    CHECK_FALSE(shrunk.budget_spent);
    CHECK_FALSE(shrunk.interrupted);
    CHECK(shrunk.schedules < runner::shrink_schedules_total_default * 2 / 3);
    CHECK(std::find(shrunk.log.begin(), shrunk.log.end(),
                    R"(removed task flusher operation {"op":"writeback","file":"I"})") != shrunk.log.end());
    CHECK(std::find(shrunk.log.begin(), shrunk.log.end(), "fewest preemptions: 1") != shrunk.log.end());
    const Json document = Json::parse(shrunk.repro.scenario_text);
    CHECK(document["tasks"].size() == 3);
    CHECK(document["setup"].size() == 2);  // the create and the fsync that makes the next one fast
    CHECK(shrunk.outcome.violations.front().checker == "fsync_durability");
}

TEST_CASE("shrink: a generated workload (fio jobs, no op lists) stays whole and the rest shrinks") {
    // xfs/dsync-unwritten-cost's tasks come from "workload": {"fio": ...}:
    // there is no op list to take an op from, and shrinking goes on to the
    // preemptions and the kept writes.
    constexpr const char* path = "scenarios/xfs/dsync-unwritten-cost.json";
    const std::string text = loader::read_text_file(path);
    const loader::Scenario scenario = loader::parse_scenario(text, path);
    runner::Simulation simulation(scenario, *scenario.find_variant("before-fix"));
    runner::FuzzRequest request;
    request.strategy = test_support::spec_of("dfs:0");
    request.schedules = 1000;
    const runner::FuzzReport report = runner::fuzz(simulation, request);
    REQUIRE(report.found);
    const runner::Repro repro = runner::make_repro(report, request, path, text, "before-fix");
    const runner::ShrinkResult shrunk = runner::shrink(repro, runner::ShrinkOptions{});
    CHECK(Json::parse(shrunk.repro.scenario_text).contains("workload"));
    for (const auto& line : shrunk.log) CHECK(line.find("removed task") == std::string::npos);
    REQUIRE_FALSE(shrunk.outcome.violations.empty());
    CHECK(shrunk.outcome.violations.front().checker == report.violations.front().violation.checker);
}
