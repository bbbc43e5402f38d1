#include "checkers/recovered_image.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

namespace checkers {
namespace {

auto extent_text(const std::string& name, const model::RecoveredExtent& extent,
                 std::uint32_t block_size) -> std::string {
    return "file " + name + " extent at offset " + std::to_string(extent.file_block * block_size) +
           " (" + std::to_string(extent.blocks) + " block(s) at device block " +
           std::to_string(extent.device_block) + (extent.unwritten ? ", unwritten" : "") + ")";
}

/// A device range mapped by one extent, for the search of blocks mapped twice.
struct Mapping {
    std::uint64_t device_start;
    std::uint64_t device_end;
    std::uint32_t file;
    std::size_t extent;
};

}  // namespace

auto recovered_image_error(const model::RecoveredState& state, const CheckContext& context)
    -> std::optional<std::string> {
    if (!state.mounted) return std::nullopt;
    const std::uint32_t block_size = context.block_size;
    std::vector<Mapping> mappings;
    for (std::uint32_t file = 0; file < state.files.size(); file++) {
        const model::RecoveredFile& recovered = state.files[file];
        const std::string& name = context.file_names[file];
        if (!recovered.exists) {
            if (!recovered.extents.empty() || recovered.blocks.end_key() > 0) {
                return "file " + name + " does not exist but recovery maps blocks to it";
            }
            continue;
        }
        std::uint64_t previous_end = 0;
        for (std::size_t i = 0; i < recovered.extents.size(); i++) {
            const model::RecoveredExtent& extent = recovered.extents[i];
            const std::string what = extent_text(name, extent, block_size);
            if (extent.blocks == 0) return what + " maps no block";
            if (extent.device_block >= state.device_blocks ||
                extent.blocks > state.device_blocks - extent.device_block) {
                return what + " ends past the device's " + std::to_string(state.device_blocks) + " blocks";
            }
            if (extent.device_block < state.metadata_end) {
                return what + " lies in the metadata area [0, " + std::to_string(state.metadata_end) + ")";
            }
            if (i > 0 && extent.file_block < previous_end) {
                return what + " overlaps the extent before it in the file";
            }
            previous_end = extent.file_block + extent.blocks;
            mappings.push_back({extent.device_block, extent.device_block + extent.blocks, file, i});
        }
        // Reads: nothing past the size; anything but zeros comes from a
        // written extent (a hole or an unwritten extent reads zeros).
        const std::uint64_t size_blocks = (recovered.size_bytes + block_size - 1) / block_size;
        if (recovered.blocks.end_key() > size_blocks) {
            return "file " + name + " reads content at block " + std::to_string(size_blocks) +
                   " or later, past its size " + std::to_string(recovered.size_bytes);
        }
        std::optional<std::string> error;
        recovered.blocks.for_each([&](std::uint64_t start, std::uint64_t end, const model::disk::Content& content) {
            if (error || content.kind == model::disk::ContentKind::zeros) return;
            std::uint64_t cursor = start;
            while (cursor < end) {
                // The last extent starting at or before the cursor.
                const auto after = std::upper_bound(
                    recovered.extents.begin(), recovered.extents.end(), cursor,
                    [](std::uint64_t block, const model::RecoveredExtent& extent) { return block < extent.file_block; });
                const model::RecoveredExtent* covering = nullptr;
                if (after != recovered.extents.begin()) {
                    const model::RecoveredExtent& candidate = *(after - 1);
                    if (cursor < candidate.file_block + candidate.blocks) covering = &candidate;
                }
                if (covering == nullptr || covering->unwritten) {
                    error = "file " + name + " offset " + std::to_string(cursor * block_size) + " reads " +
                            content.describe(context.file_names, block_size) + " but " +
                            (covering == nullptr ? "no extent maps it"
                                                 : "its extent is unwritten (reads zeros)");
                    return;
                }
                cursor = std::min(end, covering->file_block + covering->blocks);
            }
        });
        if (error) return error;
    }
    std::sort(mappings.begin(), mappings.end(), [](const Mapping& a, const Mapping& b) {
        return std::tie(a.device_start, a.file, a.extent) < std::tie(b.device_start, b.file, b.extent);
    });
    // Sorted by start: a block mapped twice lies in the furthest-reaching
    // earlier mapping.
    std::size_t furthest = 0;
    for (std::size_t i = 1; i < mappings.size(); i++) {
        const Mapping& earlier = mappings[furthest];
        const Mapping& later = mappings[i];
        if (later.device_start < earlier.device_end) {
            const auto& a = state.files[earlier.file].extents[earlier.extent];
            const auto& b = state.files[later.file].extents[later.extent];
            return "device block " + std::to_string(later.device_start) + " is mapped twice: by " +
                   extent_text(context.file_names[earlier.file], a, block_size) + " and by " +
                   extent_text(context.file_names[later.file], b, block_size);
        }
        if (later.device_end > earlier.device_end) furthest = i;
    }
    return std::nullopt;
}

}  // namespace checkers
