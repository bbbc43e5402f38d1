// Memory pressure (model/reclaim.hpp, shared by models): btrfs hooks into
// page reclaim through btrfs_releasepage, which is where
// try_release_extent_mapping drops extent maps and, before patch 3/3 of
// "btrfs: fix race between page release and a fast fsync", sets NEEDS_FULL_SYNC. The
// reclaim batch sets how many extent maps of each file one kswapd pass
// drops, so how often the next fsync of a file finds NEEDS_FULL_SYNC.
#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"

namespace model::btrfs {

auto Btrfs::reclaim_target() -> ReclaimTarget {
    // btrfs_releasepage (release_folio): the page is freed when
    // try_release_extent_mapping let it go.
    static const sim::Footprint touched = points::release_before_em_lock.touches;
    return {page_cache_, file_names_,
            [this](std::uint32_t file, std::uint64_t page) {
                try_release_extent_mapping(file, page);
                return !page_cache_.find(file, page).has_value();
            },
            touched};
}

void Btrfs::balance_pages() {
    if (!reclaim_.enabled()) return;
    // Direct reclaim may yield at the release hook's points, which declare
    // none of what the write read before it (the ordered extents).
    sim::current_scheduler().touch(write_footprint());
    reclaim_.balance(reclaim_target());
}

void Btrfs::kswapd() { reclaim_.kswapd(reclaim_target()); }

}  // namespace model::btrfs
