// Visited states on the bundled btrfs scenarios (fuzz --states locals,
// sim/visited.cpp): the key is every task's position and declared live
// locals (sim/live.hpp), the model's resource hashes, the disk, the oracle
// and the engine. A search that cuts revisits must reach the same distinct
// crash states as the stateless one in fewer schedules, still find
// before-fix's violation, and check mode must see no merge that parts.
#include <doctest/doctest.h>

#include <string>

#include "model/disk/block_device.hpp"
#include "runner/campaign.hpp"
#include "tests/runner/visited_search.hpp"

namespace {

using test_support::search;

constexpr const char* race = "scenarios/btrfs/fast-fsync-vs-page-release.json";

}  // namespace

TEST_CASE("visited states: the btrfs race keeps every distinct crash state in fewer schedules" *
          doctest::test_suite("campaign")) {
    for (const std::uint32_t bound : {1U, 2U}) {
        CAPTURE(bound);
        const runner::FuzzReport full = search(race, "fix-1", bound, {});
        const runner::FuzzReport cached =
            search(race, "fix-1", bound, {.states = sim::VisitedKey::locals});
        REQUIRE(full.complete);
        REQUIRE(cached.complete);
        CHECK(!cached.found);
        CHECK(cached.crash_states_distinct == full.crash_states_distinct);
        CHECK(cached.dfs.cut_visited > 0);
        CHECK(cached.schedules < full.schedules);
    }
}

TEST_CASE("visited states: a first visit with more steps cuts a revisit while no run met the step bound") {
    // Steps are a budget only against the step bound: a first visit whose
    // subtree is explored saw everything a revisit with fewer steps would.
    const auto locals = sim::VisitedKey::locals;
    const runner::FuzzReport cached = search(race, "fix-1", 2, {.states = locals});
    CHECK(cached.dfs.cut_more_steps > 0);
    // Runs stopped at step 16: a revisit with fewer steps would explore further (leaving
    // the bound out of the rule loses 4 of its 25 distinct crash states).
    const runner::FuzzReport full = search(race, "fix-1", 2, {.steps = 16});
    const runner::FuzzReport bounded = search(race, "fix-1", 2, {.states = locals, .steps = 16});
    REQUIRE(bounded.complete);
    CHECK(bounded.dfs.cut_visited > 0);
    CHECK(bounded.dfs.cut_more_steps == 0);
    CHECK(bounded.crash_states_distinct == full.crash_states_distinct);
}

TEST_CASE("visited states: before-fix of the btrfs race still fails with the key on") {
    for (const std::uint32_t bound : {1U, 2U}) {
        CAPTURE(bound);
        const runner::FuzzReport cached =
            search(race, "before-fix", bound, {.states = sim::VisitedKey::locals});
        CHECK(cached.found);
    }
}

TEST_CASE("visited states: check mode finds no merge that parts on btrfs fsync scenarios" *
          doctest::test_suite("campaign")) {
    const struct {
        const char* path;
        const char* variant;
        std::uint32_t bound;
    } cases[] = {
        {race, "fix-1", 1},
        {"scenarios/btrfs/kthread-commit-in-fast-fsync.json", "fix-1", 0},
        {"scenarios/btrfs/two-fsyncs-one-file.json", "before-fix", 0},
        // ENOSPC's commits flush while a log's writes complete.
        {"scenarios/btrfs/enospc-write.json", "fix-3", 0},
    };
    for (const auto& one : cases) {
        CAPTURE(one.path);
        const runner::FuzzReport checked =
            search(one.path, one.variant, one.bound, {.states = sim::VisitedKey::locals, .check = true});
        CHECK(checked.dfs.merges_followed > 0);
        CHECK(checked.dfs.decisions_compared > 0);
        CHECK(checked.dfs.mismatches == 0);
    }
}

TEST_CASE("visited states: check mode names a resource left out of the key") {
    // The page cache's hash left out: two states whose pages differ merge,
    // and an ordered extent's completion parts them.
    for (const char* omitted : {"btrfs.page_cache", "oracle"}) {
        CAPTURE(omitted);
        const runner::FuzzReport checked =
            search(race, "fix-1", 1, {.states = sim::VisitedKey::locals, .check = true, .omit = omitted});
        CHECK(checked.dfs.mismatches > 0);
        REQUIRE(!checked.mismatches.empty());
        CHECK(checked.mismatches.front().what.find(std::string("resource ") + omitted + " differs") !=
              std::string::npos);
    }
}

TEST_CASE("visited states: the device's kept durable-blocks hash is its blocks' at every decision" *
          doctest::test_suite("campaign")) {
    // BlockDevice keeps the durable blocks' hash until a write becomes
    // durable; with the check on, it is recomputed at every state hash and
    // a change that did not bump its version fails an assertion.
    struct Verify {
        Verify() { model::disk::verify_kept_durable_hash = true; }
        ~Verify() { model::disk::verify_kept_durable_hash = false; }
        Verify(const Verify&) = delete;
        auto operator=(const Verify&) -> Verify& = delete;
    } verify;
    const struct {
        const char* path;
        const char* variant;
    } cases[] = {{race, "fix-1"},
                 {"scenarios/xfs/delalloc-writeback-race.json", "fix"},
                 {"scenarios/faults/btrfs-torn-superblock.json", "fix-3"}};
    for (const auto& [path, variant] : cases) {
        CAPTURE(path);
        const runner::FuzzReport report =
            search(path, variant, 1, {.states = sim::VisitedKey::locals, .schedules = 3'000});
        CHECK(report.schedules > 0);
        CHECK(report.dfs.unhashed == 0);
    }
}

TEST_CASE("visited states: every liveness window finds what the stateless search does" *
          doctest::test_suite("campaign")) {
    // The steps since an operation completed are left out of the key and
    // compared as a budget (DfsStrategy::covers): a revisit is cut only
    // when the first visit had no more of the window left. Around the
    // race's longest stretch without a completion, some windows fail
    // liveness on some schedules only.
    std::uint64_t failing = 0;
    for (std::uint64_t window = 18; window <= 30; window++) {
        CAPTURE(window);
        const runner::FuzzReport full = search(race, "fix-1", 1, {.progress_steps = window});
        const runner::FuzzReport cached =
            search(race, "fix-1", 1, {.states = sim::VisitedKey::locals, .progress_steps = window});
        CHECK(cached.found == full.found);
        if (full.found) {
            failing++;
            CHECK(cached.failing.violations.front().checker == "liveness");
        } else {
            CHECK(cached.crash_states_distinct == full.crash_states_distinct);
        }
    }
    CHECK(failing > 0);
    CHECK(failing < 13);
}
