#include "model/writeback.hpp"

#include <utility>
#include <vector>

#include "sim/assert.hpp"

namespace model {

namespace {
struct Piece {
    std::uint64_t start;
    std::uint64_t end;
    disk::Content content;
};

auto pieces_of(PageCache& page_cache, std::uint32_t file, std::uint64_t start, std::uint64_t end)
    -> std::vector<Piece> {
    std::vector<Piece> pieces;
    page_cache.for_each(file, start, end, [&](std::uint64_t s, std::uint64_t e, const Page& page) {
        SIM_ASSERT(page.state == PageState::writeback);
        pieces.push_back({s, e, page.content});
    });
    SIM_ASSERT(!pieces.empty());
    return pieces;
}
}  // namespace

auto submit_writeback_pages(PageCache& page_cache, disk::BlockDevice& device, std::uint32_t file,
                            std::uint64_t start, std::uint64_t end, std::uint64_t disk_block,
                            const std::function<void()>& on_end) -> std::uint32_t {
    const std::vector<Piece> pieces = pieces_of(page_cache, file, start, end);
    for (const Piece& piece : pieces) {
        device.submit_write(disk_block + (piece.start - start), piece.end - piece.start, piece.content, false,
                            "data", on_end);
    }
    return static_cast<std::uint32_t>(pieces.size());
}

auto submit_failable_writeback_pages(PageCache& page_cache, disk::BlockDevice& device, std::uint32_t file,
                                     std::uint64_t start, std::uint64_t end, std::uint64_t disk_block,
                                     const std::function<void(bool)>& on_end) -> std::uint32_t {
    const std::vector<Piece> pieces = pieces_of(page_cache, file, start, end);
    for (const Piece& piece : pieces) {
        device.submit_failable_write(disk_block + (piece.start - start), piece.end - piece.start,
                                     piece.content, "data", on_end);
    }
    return static_cast<std::uint32_t>(pieces.size());
}

}  // namespace model
