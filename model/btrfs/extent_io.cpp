// fs/btrfs/extent_io.c: page release, btrfs_releasepage ->
// try_release_extent_mapping, the code the three patches of
// "btrfs: fix race between page release and a fast fsync" change (steps 4 and 6 of patch
// 1/3's story happen here); writeback (extent_write_cache_pages,
// writepage_delalloc, submit_extent_page, end_bio_extent_writepage) and the
// io tree's EXTENT_LOCKED ranges (lock_extent, unlock_extent).
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "model/btrfs/points.hpp"
#include "model/writeback.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::btrfs {
namespace {
auto em_text(const ExtentMap& em, std::uint32_t block_size) -> std::string {
    return "extent map " + range_text(em.start * block_size, em.end() * block_size) + " generation " +
           (em.generation == generation_pinned ? std::string("(u64)-1")
                                               : std::to_string(em.generation));
}
}  // namespace

void Btrfs::release_pages(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    // Reclaim walks the clean pages it found cached; each is offered to the
    // file system's release hook and freed if the hook agrees.
    const auto clean = page_cache_.runs(file, start, end, PageState::clean);
    std::size_t run = 0;
    std::uint64_t page = 0;
    SIM_LIVE(file, clean, run, page);
    for (; run < clean.size(); run++) {
        for (page = clean[run].first; page < clean[run].second; page++) {
            try_release_extent_mapping(file, page);
        }
    }
}

void Btrfs::try_release_extent_mapping(std::uint32_t file, std::uint64_t page) {
    SIM_LIVE(file, page);
    Inode& inode = inodes_[file];
    // R0 (btrfs_releasepage): "if (PageWriteback(page) || PageDirty(page))
    // return 0": never a dirty page or one under writeback.
    const auto cached = page_cache_.find(file, page);
    if (!cached || cached->state != PageState::clean) return;
    SIM_NOTE("page release (btrfs_releasepage) invoked for clean page " + std::to_string(page) +
             " of inode " + name(file));
    sim::yield(points::release_before_em_lock);
    // R1 (try_release_extent_mapping): "gfpflags_allow_blocking(mask) &&
    // page->mapping->host->i_size > SZ_16M". Every caller here may block:
    // kswapd reclaims with GFP_KERNEL, and a writer's direct reclaim with
    // the mapping's mask less __GFP_FS, which keeps __GFP_DIRECT_RECLAIM.
    if (inode.size_bytes > release_gate_bytes) {
        std::uint64_t start = page;
        const std::uint64_t end = page + 1;
        SIM_LIVE(start);
        while (start < end) {
            // R2: under em_tree.lock, the map covering the page; stop if none,
            // "if (test_bit(EXTENT_FLAG_PINNED, &em->flags) || em->start !=
            // start)". The loop runs "while (start <= end)" over the page: a
            // map is at least a page, so one map ends it.
            inode.em_tree.lock.lock();
            ExtentMap* em = inode.em_tree.lookup(start);
            if (em == nullptr || em->pinned || em->start != start) {
                inode.em_tree.lock.unlock();
                break;
            }
            const ExtentMap seen = *em;
            release_one(file, *em);
            start = seen.end();
            inode.em_tree.lock.unlock();
            sim::yield(points::release_after_em_unlock);
        }
    }
    // R5 (try_release_extent_state): the page goes unless its range is
    // LOCKED in the io tree; its other io-tree bits are cleared.
    if (inode.range_locked(page, page + 1)) return;
    const auto now_cached = page_cache_.find(file, page);
    if (now_cached && now_cached->state == PageState::clean) {
        page_cache_.remove(file, page, page + 1);
    }
}

void Btrfs::release_one(std::uint32_t file, ExtentMap& em) {
    Inode& inode = inodes_[file];
    const std::string what = em_text(em, block_size_);
    // R3, by patch. Every kernel of the series first skips a map whose range
    // is LOCKED in the io tree (test_range_bit(EXTENT_LOCKED)); v5.7 sets
    // NEEDS_FULL_SYNC only for a map it removes, as do 1/3 and 2/3.
    if (inode.range_locked(em.start, em.end())) {
        SIM_NOTE("try_release_extent_mapping keeps " + what + ": its range is LOCKED");
        counters_.extent_maps_kept++;
        return;
    }
    if (knobs_.release != ReleasePolicy::before_fix && em.on_modified_list && !em.logging) {
        // Patch 1/3 keeps a map a fast fsync may still need; patch 2/3 only
        // if it belongs to the running transaction (fs_info->generation, read
        // under trans_lock).
        const std::uint64_t current_generation = generation_;
        const bool keep = knobs_.release == ReleasePolicy::keep_modified ||
                          em.generation >= current_generation;
        if (keep) {
            SIM_NOTE("try_release_extent_mapping leaves " + what +
                     " alone: it is on the list of modified extents and not being logged" +
                     (knobs_.release == ReleasePolicy::keep_current_generation
                          ? " (generation >= current generation " +
                                std::to_string(current_generation) + ")"
                          : std::string()));
            counters_.extent_maps_kept++;
            return;
        }
    }
    // remove_extent_mapping: out of the tree, and off the list of modified
    // extents unless a fast fsync is logging it (then it sits on the fsync's
    // private list, which holds a reference).
    const bool was_listed = em.on_modified_list;
    if (knobs_.full_sync_on_release) inode.needs_full_sync = true;
    SIM_NOTE("try_release_extent_mapping removes " + what + " from the extent map tree" +
             (was_listed ? " and from the list of modified extents" : "") +
             (em.logging ? " (LOGGING: the fsync keeps its reference)" : "") +
             (knobs_.full_sync_on_release ? "; sets NEEDS_FULL_SYNC" : ""));
    counters_.extent_maps_released++;
    inode.em_tree.remove(inode.em_tree.maps.find(em.start));
}

void Btrfs::try_merge_map(std::uint32_t file, std::uint64_t start) {
    // try_merge_map (extent_map.c), with em_tree.lock held: a map merges
    // with a neighbour that ends where it starts on disk and in the file,
    // when neither is pinned, being logged or on the list of modified
    // extents (mergable_maps: it tests PINNED on the first map only, but
    // also asks prev->flags == next->flags, so neither may be pinned; no
    // COMPRESSED, PREALLOC or FILLING maps exist here). A sequential writer's maps grow into one long
    // map this way; maps of writers whose extents interleave on disk do not.
    ExtentMapTree& tree = inodes_[file].em_tree;
    auto& maps = tree.maps;
    auto mergeable = [](const ExtentMap& prev, const ExtentMap& next) {
        return !prev.pinned && !next.pinned && !prev.logging && !next.logging &&
               !prev.on_modified_list && !next.on_modified_list && prev.end() == next.start &&
               prev.block_start + prev.length == next.block_start;
    };
    auto it = maps.find(start);
    if (it == maps.end()) return;
    ExtentMap merged = it->second;
    if (it != maps.begin()) {
        auto prev = std::prev(it);
        if (mergeable(prev->second, merged)) {
            merged.start = prev->second.start;
            merged.block_start = prev->second.block_start;
            merged.length += prev->second.length;
            merged.generation = std::max(merged.generation, prev->second.generation);
            tree.remove(prev);
            counters_.extent_maps_merged++;
        }
    }
    auto next = std::next(it);
    if (next != maps.end() && mergeable(merged, next->second)) {
        merged.length += next->second.length;
        merged.generation = std::max(merged.generation, next->second.generation);
        tree.remove(next);
        counters_.extent_maps_merged++;
    }
    tree.remove(it);
    tree.add(merged);
}

auto Inode::range_locked(std::uint64_t start, std::uint64_t end) const -> bool {
    return std::any_of(locked.begin(), locked.end(),
                       [&](const auto& range) { return range.first < end && start < range.second; });
}

void Btrfs::writeback(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                      const char* who) {
    const auto runs = page_cache_.runs(file, start, end, PageState::dirty);
    if (runs.empty()) return;
    SIM_NOTE(std::string(who) + " starts for inode " + name(file));
    std::size_t run = 0;
    std::uint64_t cursor = 0;
    SIM_LIVE(file, runs, run, cursor);
    for (; run < runs.size(); run++) {
        const std::uint64_t run_end = runs[run].second;
        for (cursor = runs[run].first; cursor < run_end; cursor += extent_blocks_max) {
            writeback_run(file, cursor, std::min(run_end, cursor + extent_blocks_max));
        }
    }
}

void Btrfs::lock_extent(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    SIM_LIVE(file, start, end);
    Inode& inode = inodes_[file];
    while (inode.range_locked(start, end)) io_tree_wait_.wait();
    inode.locked.emplace_back(start, end);
}

void Btrfs::unlock_extent(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    auto& locked = inodes_[file].locked;
    auto it = std::find(locked.begin(), locked.end(), std::make_pair(start, end));
    SIM_ASSERT(it != locked.end());
    locked.erase(it);
    io_tree_wait_.wake_all();
}

void Btrfs::writeback_run(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    // FL1: lock the range in the io tree. Another writeback may have taken
    // these pages meanwhile (lock_page, clear_page_dirty_for_io): only pages
    // still dirty under the lock are written.
    SIM_LIVE(file, start, end);
    lock_extent(file, start, end);
    std::vector<std::uint64_t> ordered_ids;
    SIM_LIVE(ordered_ids);
    for (auto [run_start, run_end] : page_cache_.runs(file, start, end, PageState::dirty)) {
        ordered_ids.push_back(cow_file_range(file, run_start, run_end));
    }
    if (!ordered_ids.empty()) sim::yield(points::flusher_after_delalloc);
    // extent_clear_unlock_delalloc: the range is unlocked before the bios go.
    unlock_extent(file, start, end);
    for (std::uint64_t ordered_id : ordered_ids) submit_ordered_bios(ordered_id);
    if (!ordered_ids.empty()) sim::yield(points::flusher_after_submit);
}

void Btrfs::submit_ordered_bios(std::uint64_t ordered_id) {
    // FL3: one bio per run of pages with contiguous contents.
    const OrderedExtent ordered = ordered_[ordered_id];
    const std::uint64_t end = ordered.start + ordered.length;
    ordered_[ordered_id].bios_pending =
        submit_writeback_pages(page_cache_, device_, ordered.file, ordered.start, end, ordered.disk_block,
                               [this, ordered_id] { end_bio(ordered_id); });
    SIM_NOTE("submit W(data) of " + std::to_string(ordered.length) + " page(s) of inode " +
             name(ordered.file) + " to disk block " + std::to_string(ordered.disk_block) +
             "; pages under writeback");
}

void Btrfs::end_bio(std::uint64_t ordered_id) {
    OrderedExtent& ordered = ordered_[ordered_id];
    SIM_ASSERT(ordered.bios_pending > 0);
    if (--ordered.bios_pending > 0) return;
    // FL4: end_page_writeback makes the pages clean (releasable); the
    // ordered extent's completion is queued to a worker.
    page_cache_.set_state(ordered.file, ordered.start, ordered.start + ordered.length,
                          PageState::clean);
    SIM_NOTE("bio of ordered extent #" + std::to_string(ordered_id) + " completes: page(s) " +
             std::to_string(ordered.start) + ".." + std::to_string(ordered.start + ordered.length - 1) +
             " of inode " + name(ordered.file) + " clean; btrfs_finish_ordered_io queued");
    sim::current_scheduler().spawn("endio", [this, ordered_id] { finish_ordered_io(ordered_id); },
                                   sim::hash_of(ordered_id));
}

}  // namespace model::btrfs
