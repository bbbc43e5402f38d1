// The shared page reclaim (model/reclaim.hpp): watermarks, direct reclaim,
// kswapd's pass, the LRU order, and the model's release_folio hook deciding
// which clean pages go. Dirty pages and pages the hook keeps stay cached.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/filesystem.hpp"
#include "model/page_cache.hpp"
#include "model/reclaim.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"

namespace {

constexpr std::uint32_t block = 4096;

/// A page cache of two files, `clean` clean pages of file 0 then `dirty`
/// dirty pages of file 1, each entering the LRU in that order.
auto filled(std::uint64_t clean, std::uint64_t dirty) -> model::PageCache {
    model::PageCache cache(2);
    if (clean > 0) {
        cache.dirty(0, 0, clean, model::disk::Content::data(0, 0, 1));
        cache.set_state(0, 0, clean, model::PageState::clean);
    }
    cache.dirty(1, 0, dirty, model::disk::Content::data(1, 0, 2));
    return cache;
}

/// Runs `body` in a task of a fresh scheduler until everything settles.
template <typename Body>
void in_task(Body&& body) {
    sim::Scheduler scheduler{{.timers_race_tasks = true, .steps_max = 1'000'000}, nullptr};
    sim::FirstStrategy first;
    scheduler.spawn("writer", std::forward<Body>(body));
    for (int i = 0; i < 100'000; i++) {
        const sim::StepOutcome outcome = scheduler.step(first);
        if (outcome == sim::StepOutcome::finished) return;
        REQUIRE(outcome != sim::StepOutcome::deadlock);
    }
    FAIL("did not settle");
}

}  // namespace

TEST_CASE("page reclaim: no limit, no reclaim") {
    model::PageReclaim reclaim(model::Geometry{block, 1024, "nvme"}, block);
    CHECK_FALSE(reclaim.enabled());
}

TEST_CASE(
    "page reclaim: a writer a batch above the limit reclaims the oldest clean pages itself, through the "
    "hook") {
    // Limit 64 pages, batch 8: 100 cached is more than 72.
    model::Geometry geometry{block, 1024, "nvme", 64 * block, 8 * block};
    model::PageReclaim reclaim(geometry, block);
    REQUIRE(reclaim.enabled());
    model::PageCache cache = filled(60, 40);
    const std::vector<std::string> names = {"clean", "dirty"};
    std::vector<std::uint64_t> offered;
    const model::ReclaimTarget target{cache, names, [&](std::uint32_t file, std::uint64_t page) {
                                          offered.push_back(page);
                                          CHECK(file == 0);
                                          // The hook keeps page 3; the rest go.
                                          if (page == 3) return false;
                                          cache.remove(file, page, page + 1);
                                          return true;
                                      },
                                      sim::footprint_all};
    in_task([&] { reclaim.balance(target); });
    CHECK(reclaim.direct_reclaims() == 1);
    // Down to the limit: 36 pages freed, the oldest first, page 3 kept.
    CHECK(reclaim.pages_reclaimed() == 36);
    CHECK(cache.pages() == 64);
    REQUIRE(offered.size() == 37);
    CHECK(offered.front() == 0);
    CHECK(offered.back() == 36);
    CHECK(cache.find(0, 3).has_value());
    CHECK_FALSE(cache.find(0, 0).has_value());
    // Dirty pages are never offered.
    CHECK(cache.runs(1, 0, 40, model::PageState::dirty).size() == 1);
}

TEST_CASE(
    "page reclaim: within a batch of the limit the writer only wakes kswapd; nothing reclaimable frees "
    "nothing") {
    model::Geometry geometry{block, 1024, "nvme", 64 * block, 8 * block};
    model::PageReclaim reclaim(geometry, block);
    model::PageCache cache = filled(0, 70);  // over the limit, under limit + batch, all dirty
    const std::vector<std::string> names = {"clean", "dirty"};
    bool offered = false;
    const model::ReclaimTarget target{cache, names, [&](std::uint32_t, std::uint64_t) {
                                          offered = true;
                                          return true;
                                      },
                                      sim::footprint_all};
    in_task([&] { reclaim.balance(target); });
    CHECK(reclaim.direct_reclaims() == 0);
    CHECK(reclaim.pages_reclaimed() == 0);
    CHECK_FALSE(offered);
    CHECK(cache.pages() == 70);
}
