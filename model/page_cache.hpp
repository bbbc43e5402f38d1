#pragma once
// The page cache: per file, which pages are cached and whether they are dirty,
// under writeback or clean, with the contents they hold. Reclaim asks the file
// system's release hook before dropping a clean page. It counts the pages it
// holds and keeps them on an LRU list (oldest first, as they entered the
// cache), so a model with a memory limit knows when reclaim must run and which
// pages it would pick.
#include <cstdint>
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "model/disk/content.hpp"
#include "sim/range_map.hpp"

namespace model {

enum class PageState : std::uint8_t { dirty, writeback, clean };

struct Page {
    PageState state;
    disk::Content content;
    [[nodiscard]] auto shifted(std::uint64_t pages) const -> Page {
        return {state, content.shifted(pages)};
    }
    auto operator==(const Page&) const -> bool = default;
    void hash_into(sim::StateHash& out) const {
        out.add(static_cast<std::uint64_t>(state));
        content.hash_into(out);
    }
};

/// A run of pages that entered the cache together.
struct LruRun {
    std::uint32_t file;
    std::uint64_t start;
    std::uint64_t end;
};
/// A live local's hash (sim/live.hpp).
inline void hash_value(sim::StateHash& out, const LruRun& run) {
    out.add(run.file);
    out.add(run.start);
    out.add(run.end);
}

class PageCache {
public:
    explicit PageCache(std::size_t files = 0) : files_(files), dirty_(files) {}

    void add_file() {
        files_.emplace_back();
        dirty_.emplace_back();
    }
    /// A buffered write: [start, end) becomes dirty with the given contents.
    /// Pages not cached before enter the LRU list at its tail.
    void dirty(std::uint32_t file, std::uint64_t start, std::uint64_t end, disk::Content content) {
        std::uint64_t cursor = start;
        files_[file].for_each(start, end, [&](std::uint64_t s, std::uint64_t e, const Page&) {
            if (cursor < s) enter(file, cursor, s);
            cursor = e;
        });
        if (cursor < end) enter(file, cursor, end);
        files_[file].assign(start, end, Page{PageState::dirty, content});
        mark_dirty(file, start, end);
    }
    /// Changes the state of every cached page in [start, end), keeping contents.
    void set_state(std::uint32_t file, std::uint64_t start, std::uint64_t end, PageState state) {
        std::vector<std::pair<std::uint64_t, Page>> pieces;
        std::vector<std::uint64_t> ends;
        files_[file].for_each(start, end, [&](std::uint64_t s, std::uint64_t e, const Page& page) {
            pieces.emplace_back(s, Page{state, page.content});
            ends.push_back(e);
        });
        for (std::size_t i = 0; i < pieces.size(); i++) {
            files_[file].assign(pieces[i].first, ends[i], pieces[i].second);
            if (state == PageState::dirty) {
                mark_dirty(file, pieces[i].first, ends[i]);
            } else {
                clear_dirty(file, pieces[i].first, ends[i]);
            }
        }
    }
    void remove(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
        files_[file].for_each(start, end,
                              [&](std::uint64_t s, std::uint64_t e, const Page&) { pages_ -= e - s; });
        files_[file].erase(start, end);
        clear_dirty(file, start, end);
    }
    /// Pages cached, over every file.
    [[nodiscard]] auto pages() const -> std::uint64_t { return pages_; }
    /// Dirty pages, over every file (btrfs's delalloc bytes_may_use).
    [[nodiscard]] auto dirty_pages() const -> std::uint64_t { return dirty_pages_; }
    /// The oldest run of pages on the LRU list, taken off it; reclaim looks
    /// at what is still cached there and puts back (put_back) what it could
    /// not free. Runs of pages removed meanwhile are skipped.
    auto take_oldest() -> std::optional<LruRun> {
        if (lru_.empty()) return std::nullopt;
        const LruRun run = lru_.front();
        lru_.pop_front();
        return run;
    }
    void put_back(const LruRun& run) { lru_.push_back(run); }
    /// The part of a run reclaim did not get to stays the oldest.
    void put_front(const LruRun& run) { lru_.push_front(run); }
    [[nodiscard]] auto find(std::uint32_t file, std::uint64_t page) const -> std::optional<Page> {
        return files_[file].find(page);
    }
    /// fn(start, end, page_at_start) over cached pieces of [start, end).
    template <typename Fn>
    void for_each(std::uint32_t file, std::uint64_t start, std::uint64_t end, Fn&& fn) const {
        files_[file].for_each(start, end, std::forward<Fn>(fn));
    }
    /// Contiguous runs of pages in `state` within [start, end).
    [[nodiscard]] auto runs(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                            PageState state) const
        -> std::vector<std::pair<std::uint64_t, std::uint64_t>> {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
        if (state == PageState::dirty) {
            // From the index of dirty runs: writeback and fsync ask for the
            // dirty pages of a whole file that may have many clean ones.
            const auto& runs = dirty_[file];
            auto it = runs.upper_bound(start);
            if (it != runs.begin()) --it;
            for (; it != runs.end() && it->first < end; ++it) {
                const std::uint64_t s = std::max(start, it->first);
                const std::uint64_t e = std::min(end, it->second);
                if (s < e) out.emplace_back(s, e);
            }
            return out;
        }
        for_each(file, start, end, [&](std::uint64_t s, std::uint64_t e, const Page& page) {
            if (page.state != state) return;
            if (!out.empty() && out.back().second == s) {
                out.back().second = e;
            } else {
                out.emplace_back(s, e);
            }
        });
        return out;
    }

    /// Every page, the dirty runs and the LRU list, in order
    /// (sim/fingerprint.hpp).
    void hash_into(sim::StateHash& out) const {
        for (const auto& file : files_) {
            out.add(file.segment_count());
            file.for_each([&](std::uint64_t start, std::uint64_t end, const Page& page) {
                out.add(start);
                out.add(end);
                page.hash_into(out);
            });
        }
        for (const Runs& runs : dirty_) {
            out.add(runs.size());
            for (const auto& [start, end] : runs) {
                out.add(start);
                out.add(end);
            }
        }
        out.add(lru_.size());
        for (const LruRun& run : lru_) {
            out.add(run.file);
            out.add(run.start);
            out.add(run.end);
        }
    }

private:
    using Runs = std::map<std::uint64_t, std::uint64_t>;  // start -> end, disjoint, not touching

    void mark_dirty(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
        Runs& runs = dirty_[file];
        auto it = runs.upper_bound(start);
        if (it != runs.begin() && std::prev(it)->second >= start) --it;
        while (it != runs.end() && it->first <= end) {
            start = std::min(start, it->first);
            end = std::max(end, it->second);
            dirty_pages_ -= it->second - it->first;
            it = runs.erase(it);
        }
        runs.emplace(start, end);
        dirty_pages_ += end - start;
    }
    void clear_dirty(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
        Runs& runs = dirty_[file];
        auto it = runs.upper_bound(start);
        if (it != runs.begin() && std::prev(it)->second > start) --it;
        while (it != runs.end() && it->first < end) {
            const auto [s, e] = *it;
            it = runs.erase(it);
            dirty_pages_ -= e - s;
            if (s < start) {
                runs.emplace(s, start);
                dirty_pages_ += start - s;
            }
            if (e > end) {
                runs.emplace(end, e);
                dirty_pages_ += e - end;
            }
        }
    }

    void enter(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
        pages_ += end - start;
        constexpr std::uint64_t run_pages_max = 256;
        if (!lru_.empty() && lru_.back().file == file && lru_.back().end == start &&
            lru_.back().end - lru_.back().start + (end - start) <= run_pages_max) {
            lru_.back().end = end;  // a sequential writer extends its own run
        } else {
            lru_.push_back(LruRun{file, start, end});
        }
    }

    std::vector<sim::RangeMap<Page>> files_;
    std::vector<Runs> dirty_;  // the dirty pages of each file, as runs
    std::uint64_t pages_ = 0;
    std::uint64_t dirty_pages_ = 0;  // the pages in dirty_
    std::deque<LruRun> lru_;
};

}  // namespace model
