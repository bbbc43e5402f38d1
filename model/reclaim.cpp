// Page reclaim shared by models (model/reclaim.hpp): kswapd, direct reclaim
// and one pass over the LRU list (mm/vmscan.c shrink_page_list reduced to
// clean pages and the release hook).
#include "model/reclaim.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/assert.hpp"
#include "sim/live.hpp"
#include "sim/scheduler.hpp"

namespace model {

PageReclaim::PageReclaim(const Geometry& geometry, std::uint32_t block_size)
    : limit_(geometry.page_cache_bytes / block_size),
      batch_(std::min(limit_ / 2, geometry.reclaim_batch_bytes / block_size)) {}

void PageReclaim::balance(const ReclaimTarget& target) {
    if (limit_ == 0) return;
    const std::uint64_t cached = target.cache.pages();
    if (cached <= limit_) return;
    kswapd_wait_.wake_all();
    if (cached > limit_ + batch_) {
        sim::current_scheduler().touch(target.footprint);
        direct_reclaims_++;
        shrink(target, cached - limit_, "direct reclaim");
    }
}

void PageReclaim::kswapd(const ReclaimTarget& target) {
    const PageCache& cache = target.cache;
    for (;;) {
        while (cache.pages() <= limit_) kswapd_wait_.wait();
        // From its wake-up to the hook's first yield point, or to its next
        // sleep when it frees nothing.
        sim::cover(target.footprint);
        const std::uint64_t freed = shrink(target, cache.pages() - (limit_ - batch_), "kswapd");
        // Nothing reclaimable (every page dirty or under writeback): sleep
        // until the next allocation over the limit wakes it.
        if (freed == 0) kswapd_wait_.wait();
    }
}

auto PageReclaim::shrink(const ReclaimTarget& target, std::uint64_t pages, const char* who) -> std::uint64_t {
    PageCache& cache = target.cache;
    // Oldest runs first; pages still dirty or under writeback go back to the
    // tail of the list (they are not reclaimable yet). One pass at most.
    std::uint64_t freed = 0;
    std::vector<LruRun> busy;
    std::size_t budget = 1024;  // runs looked at per call
    LruRun run{};
    std::uint64_t page = 0;
    SIM_LIVE(pages, who, freed, busy, budget, run, page);
    while (freed < pages && budget-- > 0) {
        auto taken = cache.take_oldest();
        if (!taken) break;
        run = *taken;
        const std::uint64_t want = pages - freed;
        if (run.end - run.start > want) {
            cache.put_front(LruRun{run.file, run.start + want, run.end});
            run.end = run.start + want;
        }
        SIM_NOTE(std::string(who) + " reclaims pages " + std::to_string(run.start) + ".." +
                 std::to_string(run.end - 1) + " of inode " + target.file_names[run.file]);
        for (page = run.start; page < run.end; page++) {
            const auto cached = cache.find(run.file, page);
            if (!cached) continue;
            if (cached->state != PageState::clean) {
                busy.push_back(LruRun{run.file, page, page + 1});
                continue;
            }
            sim::cpu(cpu_cost::reclaim_page);
            if (target.release_folio(run.file, page)) {
                freed++;
                pages_reclaimed_++;
            } else {
                busy.push_back(LruRun{run.file, page, page + 1});
            }
        }
    }
    for (const LruRun& run : busy) cache.put_back(run);
    return freed;
}

}  // namespace model
