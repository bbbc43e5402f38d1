#pragma once
// The page cache: per file, which pages are cached and whether they are dirty,
// under writeback or clean, with the contents they hold. Reclaim asks the file
// system's release hook before dropping a clean page.
#include <cstdint>
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
};

class PageCache {
public:
    explicit PageCache(std::size_t files = 0) : files_(files) {}

    void add_file() { files_.emplace_back(); }
    /// A buffered write: [start, end) becomes dirty with the given contents.
    void dirty(std::uint32_t file, std::uint64_t start, std::uint64_t end, disk::Content content) {
        files_[file].assign(start, end, Page{PageState::dirty, content});
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
        }
    }
    void remove(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
        files_[file].erase(start, end);
    }
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

private:
    std::vector<sim::RangeMap<Page>> files_;
};

}  // namespace model
