#pragma once
// Page reclaim, shared by models: mm/vmscan.c reduced to watermarks
// over the page cache's one LRU list. The page cache has a limit (the machine
// profile's memory, `machine.page_cache`); kswapd wakes above the high
// watermark (the limit) and works down to the low one, one reclaim batch
// (`machine.reclaim_batch`) lower; a writer a batch above the limit reclaims
// what it needs itself before it may allocate (direct reclaim). Each clean
// page reclaim picks is offered to the model's release hook, the
// address_space_operations' release_folio (btrfs_releasepage ->
// try_release_extent_mapping, "btrfs: fix race between page release and a fast fsync");
// the page is freed if the hook let it go.
//
// Left out: dirty limits (balance_dirty_pages: no machine profile sets
// dirty_ratio or dirty_bytes, and no bundled scenario throttles a writer on
// them), the active/inactive split and referenced bits (one list, oldest
// first), and shrinkers other than the page cache's.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/filesystem.hpp"
#include "model/page_cache.hpp"
#include "sim/sync.hpp"

namespace model {

namespace cpu_cost {
/// shrink_page_list for one clean page, besides the release hook.
inline constexpr sim::Duration reclaim_page = 500;  // ns
}  // namespace cpu_cost

/// The hook a model implements: release_folio for one clean cached page.
/// It returns whether the page is gone from the page cache.
using ReleaseFolio = std::function<bool(std::uint32_t file, std::uint64_t page)>;

/// What reclaim works on: a model's page cache, its files' names (for the
/// story) and its release hook, and what the two touch (the footprint of a
/// reclaim pass that reaches no yield point of the hook's).
struct ReclaimTarget {
    PageCache& cache;
    const std::vector<std::string>& file_names;
    ReleaseFolio release_folio;
    sim::Footprint footprint;
};

class PageReclaim {
public:
    PageReclaim() = default;
    /// The limit and kswapd's pass from the machine profile, in pages of `block_size`.
    PageReclaim(const Geometry& geometry, std::uint32_t block_size);

    /// A limit is set: the model spawns kswapd (kswapd()) and calls balance()
    /// before it allocates pages.
    [[nodiscard]] auto enabled() const -> bool { return limit_ > 0; }
    /// A writer about to allocate pages (__alloc_pages' slow path): wakes
    /// kswapd over the high watermark, reclaims itself a batch above it.
    void balance(const ReclaimTarget& target);
    /// kswapd's loop (a kernel thread of the model's; never returns).
    void kswapd(const ReclaimTarget& target);

    [[nodiscard]] auto pages_reclaimed() const -> std::uint64_t { return pages_reclaimed_; }
    [[nodiscard]] auto direct_reclaims() const -> std::uint64_t { return direct_reclaims_; }
    /// kswapd's wait queue (sim/fingerprint.hpp); the limits are fixed.
    void hash_into(sim::ResourceHashes& out) const { kswapd_wait_.hash_into(out); }

private:
    /// Frees up to `pages` clean pages, oldest first; `who` names the
    /// reclaimer in the story. Returns how many it freed.
    auto shrink(const ReclaimTarget& target, std::uint64_t pages, const char* who) -> std::uint64_t;

    std::uint64_t limit_ = 0;  // pages; 0: unlimited
    std::uint64_t batch_ = 0;  // pages between kswapd's high and low watermarks
    sim::WaitQueue kswapd_wait_{"kswapd.wait"};
    std::uint64_t pages_reclaimed_ = 0;
    std::uint64_t direct_reclaims_ = 0;  // writers that had to reclaim themselves
};

}  // namespace model
