// Visited states on the bundled xfs scenarios (fuzz --states locals): the
// key holds the xfs model's state per resource (model/xfs/fingerprint.cpp)
// and the live locals its functions declare (SIM_LIVE). A search that cuts
// revisits must reach the same distinct crash states as the stateless one
// in fewer schedules, still find the violations of the kernels without the
// fix, and check mode must see no merge that parts; a resource or a live
// local left out of the key must be caught and named.
#include <doctest/doctest.h>

#include <string>

#include "runner/campaign.hpp"
#include "tests/runner/visited_search.hpp"

namespace {

/// Check mode follows every revisit for 8 decisions: a few tens of thousands
/// of schedules cover every scenario's merges of each kind.
constexpr std::uint64_t check_schedules = 30'000;

using Key = test_support::VisitedSearch;
using test_support::search;

auto checked(const std::string& path, const std::string& variant, std::uint32_t preemptions,
             const std::string& omit = {}, std::uint64_t schedules = check_schedules) -> runner::FuzzReport {
    const Key key{.states = sim::VisitedKey::locals, .check = true, .omit = omit, .schedules = schedules};
    return search(path, variant, preemptions, key);
}

constexpr const char* freeze = "scenarios/xfs/freeze-vs-log-worker.json";
constexpr const char* delalloc = "scenarios/xfs/delalloc-writeback-race.json";

struct Case {
    std::string path;
    std::string variant;
};

void check_clean(const Case& one) {
    CAPTURE(one.path);
    CAPTURE(one.variant);
    const runner::FuzzReport report = checked(one.path, one.variant, 0);
    CHECK(report.dfs.unhashed == 0);
    CHECK(report.dfs.merges_followed > 0);
    CHECK(report.dfs.decisions_compared > 0);
    CHECK(report.dfs.mismatches == 0);
    for (const sim::FingerprintMismatch& mismatch : report.mismatches) FAIL_CHECK(mismatch.what);
}

}  // namespace

TEST_CASE("visited states: check mode finds no merge that parts on xfs writeback and freeze scenarios" *
          doctest::test_suite("campaign")) {
    for (const Case& one : {Case{delalloc, "fix"}, Case{freeze, "cancel-first"},
                            Case{"scenarios/xfs/generic-042.json", "fix"}}) {
        check_clean(one);
    }
}

TEST_CASE("visited states: check mode finds no merge that parts on the other xfs scenarios" *
          doctest::test_suite("campaign")) {
    for (const Case& one : {Case{"scenarios/xfs/direct-write-fsync.json", "fix"},
                            Case{"scenarios/xfs/truncate-fsync-sizes.json", "fix"},
                            Case{"scenarios/xfs/falloc-k-over-sized-file.json", "fix"},
                            Case{"scenarios/xfs/enospc-write.json", "fix"},
                            Case{"scenarios/xfs/frozen-image.json", "cancel-first"},
                            // Two writes whose completions fall due at one instant: the device
                            // hashes which timer ends which.
                            Case{"scenarios/xfs/frozen-image.json", "counter"}}) {
        check_clean(one);
    }
}

TEST_CASE("visited states: the xfs freeze race keeps every distinct crash state in fewer schedules" *
          doctest::test_suite("campaign")) {
    const runner::FuzzReport full = search(freeze, "cancel-first", 1, {});
    const runner::FuzzReport cached = search(freeze, "cancel-first", 1, {.states = sim::VisitedKey::locals});
    REQUIRE(full.complete);
    REQUIRE(cached.complete);
    CHECK(!full.found);
    CHECK(!cached.found);
    CHECK(cached.dfs.unhashed == 0);
    CHECK(cached.dfs.cut_visited > 0);
    CHECK(cached.crash_states_distinct == full.crash_states_distinct);
    CHECK(cached.schedules < full.schedules);
}

TEST_CASE("visited states: the xfs kernels without the fixes still fail with the key on") {
    const Case cases[] = {{freeze, "counter"}, {freeze, "cancel-last"}, {delalloc, "before-fix"}};
    for (const Case& one : cases) {
        CAPTURE(one.path);
        CAPTURE(one.variant);
        const runner::FuzzReport cached =
            search(one.path, one.variant, 1, {.states = sim::VisitedKey::locals});
        CHECK(cached.found);
    }
}

TEST_CASE("visited states: check mode names an xfs resource left out of the key") {
    // The ioends left out: an ioend worker's conversion reads the ioend it
    // was queued for.
    const runner::FuzzReport report = checked(delalloc, "fix", 0, "xfs.ioend", 5'000);
    CHECK(report.dfs.mismatches > 0);
    REQUIRE(!report.mismatches.empty());
    CHECK(report.mismatches.front().what.find("resource xfs.ioend differs") != std::string::npos);
}

TEST_CASE("visited states: check mode names a live local left out of the key") {
    // The CIL checkpoint a log force writes, left out: two forces that took
    // different checkpoints merge at xfs.log.cil_pushed and write different
    // records.
    const runner::FuzzReport report = checked(delalloc, "fix", 0, "checkpoint", 5'000);
    CHECK(report.dfs.mismatches > 0);
    REQUIRE(!report.mismatches.empty());
    const std::string& what = report.mismatches.front().what;
    CHECK(what.find("position or live locals of task logworker") != std::string::npos);
    CHECK(what.find("checkpoint, sequence, cover_record") != std::string::npos);
}
