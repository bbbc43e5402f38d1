// Visited states on the bundled ext4/jbd2 scenarios (fuzz --states locals):
// the model hashes its journal, checkpoint lists, log, buffers and inodes
// (model/ext4/fingerprint.cpp) and declares the locals its journal code
// keeps across a suspension (SIM_LIVE). A search that cuts revisits must
// reach the same distinct crash states as the stateless one in fewer
// schedules, still find the unfixed kernels' violation, and check mode must
// see no merge that parts; a piece of state left out of the key is caught.
#include <doctest/doctest.h>

#include <string>

#include "model/ext4/ext4.hpp"
#include "runner/campaign.hpp"
#include "tests/runner/visited_search.hpp"

namespace {

using test_support::search;

constexpr const char* relogged = "scenarios/jbd2/relogged-buffer-checkpoint.json";
constexpr const char* sync_durability = "scenarios/jbd2/sync-durability.json";

}  // namespace

TEST_CASE("jbd2 visited states: the same distinct crash states in fewer schedules" *
          doctest::test_suite("campaign")) {
    // ENOSPC's commits free blocks while writes wait for them: a stateless
    // dfs:0 of it completes in seconds with the kernel's own nondeterminism
    // off (with it on, its estimate passes 1e8 schedules).
    constexpr const char* enospc = "scenarios/jbd2/enospc-write.json";
    const std::uint64_t cap = 2'000'000;
    const runner::FuzzReport full =
        search(enospc, "fix", 0, {.schedules = cap, .kernel_nondeterminism = false});
    const runner::FuzzReport cached = search(
        enospc, "fix", 0,
        {.states = sim::VisitedKey::locals, .schedules = cap, .kernel_nondeterminism = false});
    REQUIRE(full.complete);
    REQUIRE(cached.complete);
    CHECK(!cached.found);
    CHECK(cached.dfs.unhashed == 0);
    CHECK(cached.crash_states_distinct == full.crash_states_distinct);
    CHECK(cached.dfs.cut_visited > 0);
    CHECK(cached.schedules < full.schedules);
}

TEST_CASE("jbd2 visited states: charged choices are a budget, not a part of the key" *
          doctest::test_suite("campaign")) {
    // With one I/O reordering allowed, a state the search reaches again with
    // the reordering spent was first reached with it unspent: cut there, and
    // no distinct crash state is lost.
    constexpr const char* enospc = "scenarios/jbd2/enospc-write.json";
    const test_support::VisitedSearch reorders{.kernel_nondeterminism = false, .io_reorders_only = true};
    test_support::VisitedSearch cached_reorders = reorders;
    cached_reorders.states = sim::VisitedKey::locals;
    const runner::FuzzReport full = search(enospc, "fix", 0, reorders);
    const runner::FuzzReport cached = search(enospc, "fix", 0, cached_reorders);
    REQUIRE(full.complete);
    REQUIRE(cached.complete);
    CHECK(cached.crash_states_distinct == full.crash_states_distinct);
    CHECK(cached.dfs.cut_fewer_charges > 0);
    CHECK(cached.schedules * 4 < full.schedules);
}

TEST_CASE("jbd2 visited states: a metadata block's kept hash is its contents' at every decision" *
          doctest::test_suite("campaign")) {
    // hash_meta_blocks keeps a block's hash for its version; with the check
    // on, every kept hash is recomputed, and a change that did not bump the
    // version fails an assertion (an internal error).
    struct Verify {
        Verify() { model::ext4::verify_meta_block_hashes(true); }
        ~Verify() { model::ext4::verify_meta_block_hashes(false); }
        Verify(const Verify&) = delete;
        auto operator=(const Verify&) -> Verify& = delete;
    } verify;
    for (const char* path : {relogged, sync_durability, "scenarios/jbd2/enospc-write.json",
                             "scenarios/jbd2/unlink-reuse.json", "scenarios/jbd2/rmdir-revoke.json",
                             "scenarios/jbd2/flusher-writeback.json"}) {
        CAPTURE(path);
        const runner::FuzzReport report =
            search(path, "fix", 0, {.states = sim::VisitedKey::locals, .schedules = 3'000});
        CHECK(report.schedules == 3'000);
        CHECK(report.dfs.unhashed == 0);
    }
}

TEST_CASE("jbd2 visited states: the unfixed kernels still fail with the key on") {
    for (const char* variant : {"before-2-3", "v6.5"}) {
        CAPTURE(variant);
        const runner::FuzzReport cached = search(relogged, variant, 0, {.states = sim::VisitedKey::locals});
        CHECK(cached.found);
    }
}

TEST_CASE("jbd2 visited states: check mode finds no merge that parts" * doctest::test_suite("campaign")) {
    const struct {
        std::string path;
        std::string variant;
    } cases[] = {
        {relogged, "fix"},
        {relogged, "hybrid-v5.8"},
        {sync_durability, "fix"},
        {"scenarios/jbd2/rmdir-revoke.json", "fix"},
        {"scenarios/jbd2/unlink-reuse.json", "fix"},
        {"scenarios/jbd2/flusher-writeback.json", "fix"},
    };
    for (const auto& one : cases) {
        CAPTURE(one.path);
        CAPTURE(one.variant);
        const runner::FuzzReport checked =
            search(one.path, one.variant, 0,
                   {.states = sim::VisitedKey::locals, .check = true, .schedules = 10'000});
        CHECK(checked.dfs.merges_followed > 0);
        CHECK(checked.dfs.decisions_compared > 0);
        CHECK(checked.dfs.mismatches == 0);
    }
}

TEST_CASE("jbd2 visited states: check mode names a resource or a live local left out of the key") {
    const struct {
        std::string path;
        std::string omit;
        std::string named;  // what the first report names
    } cases[] = {
        // The buffers' state bits and b_data: a checkpoint's trylock reads them.
        {relogged, "buffer.state", "resource buffer.state differs"},
        // sync's walk over the dirty buffers: which one it waits on.
        {sync_durability, "block", "live locals of task"},
    };
    for (const auto& one : cases) {
        CAPTURE(one.path);
        CAPTURE(one.omit);
        const runner::FuzzReport checked = search(
            one.path, "fix", 0,
            {.states = sim::VisitedKey::locals, .check = true, .omit = one.omit, .schedules = 3'000});
        CHECK(checked.dfs.mismatches > 0);
        REQUIRE(!checked.mismatches.empty());
        CHECK(checked.mismatches.front().what.find(one.named) != std::string::npos);
    }
}
