#include "model/writeback.hpp"

#include <utility>
#include <vector>

#include "sim/assert.hpp"

namespace model {

auto submit_writeback_pages(PageCache& page_cache, disk::BlockDevice& device, std::uint32_t file,
                            std::uint64_t start, std::uint64_t end, std::uint64_t disk_block,
                            const std::function<void()>& on_end) -> std::uint32_t {
    struct Piece {
        std::uint64_t start;
        std::uint64_t end;
        disk::Content content;
    };
    std::vector<Piece> pieces;
    page_cache.for_each(file, start, end, [&](std::uint64_t s, std::uint64_t e, const Page& page) {
        SIM_ASSERT(page.state == PageState::writeback);
        pieces.push_back({s, e, page.content});
    });
    SIM_ASSERT(!pieces.empty());
    for (const Piece& piece : pieces) {
        device.submit_write(disk_block + (piece.start - start), piece.end - piece.start, piece.content, false,
                            "data", on_end);
    }
    return static_cast<std::uint32_t>(pieces.size());
}

}  // namespace model
