// Memory pressure: the page cache has a limit; kswapd (and, when it falls
// behind, the allocating writer itself: direct reclaim) frees the oldest
// clean pages, offering each to btrfs_releasepage, which is where
// try_release_extent_mapping drops extent maps and, before patch 3/3 of
// seeds/btrfs-fast-fsync-vs-page-release.txt, sets NEEDS_FULL_SYNC. mm/vmscan.c
// reduced to watermarks over one LRU list: kswapd wakes above the high
// watermark (the limit) and works down to the low one, one reclaim batch
// lower; a writer a batch above the limit reclaims what it needs before it
// may allocate. The batch sets how many extent maps of each file one kswapd
// pass drops, so how often the next fsync of a file finds NEEDS_FULL_SYNC.
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "sim/assert.hpp"

namespace model::btrfs {

void Btrfs::balance_pages() {
    if (page_cache_limit_ == 0) return;
    const std::uint64_t cached = page_cache_.pages();
    if (cached <= page_cache_limit_) return;
    kswapd_wait_.wake_all();
    if (cached > page_cache_limit_ + reclaim_batch_) {
        counters_.direct_reclaims++;
        shrink_page_cache(cached - page_cache_limit_, "direct reclaim");
    }
}

void Btrfs::kswapd() {
    for (;;) {
        while (page_cache_.pages() <= page_cache_limit_) kswapd_wait_.wait();
        const std::uint64_t freed =
            shrink_page_cache(page_cache_.pages() - (page_cache_limit_ - reclaim_batch_), "kswapd");
        // Nothing reclaimable (every page dirty or under writeback): sleep
        // until the next allocation over the limit wakes it.
        if (freed == 0) kswapd_wait_.wait();
    }
}

auto Btrfs::shrink_page_cache(std::uint64_t pages, const char* who) -> std::uint64_t {
    // Oldest runs first; pages still dirty or under writeback go back to the
    // tail of the list (they are not reclaimable yet). One pass at most.
    std::uint64_t freed = 0;
    std::vector<LruRun> busy;
    std::size_t budget = 1024;  // runs looked at per call
    while (freed < pages && budget-- > 0) {
        auto taken = page_cache_.take_oldest();
        if (!taken) break;
        LruRun run = *taken;
        const std::uint64_t want = pages - freed;
        if (run.end - run.start > want) {
            page_cache_.put_front(LruRun{run.file, run.start + want, run.end});
            run.end = run.start + want;
        }
        SIM_NOTE(std::string(who) + " reclaims pages " + std::to_string(run.start) + ".." +
                 std::to_string(run.end - 1) + " of inode " + name(run.file));
        for (std::uint64_t page = run.start; page < run.end; page++) {
            const auto cached = page_cache_.find(run.file, page);
            if (!cached) continue;
            if (cached->state != PageState::clean) {
                busy.push_back(LruRun{run.file, page, page + 1});
                continue;
            }
            sim::cpu(cpu_cost::reclaim_page);
            try_release_extent_mapping(run.file, page);
            if (!page_cache_.find(run.file, page)) {
                freed++;
                counters_.pages_reclaimed++;
            } else {
                busy.push_back(LruRun{run.file, page, page + 1});
            }
        }
    }
    for (const LruRun& run : busy) page_cache_.put_back(run);
    return freed;
}

}  // namespace model::btrfs
