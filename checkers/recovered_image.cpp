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

/// What is wrong with the extents of an existing file: one mapping no block,
/// ending past the device, lying in the metadata area or overlapping the
/// extent before it. Adds the file's device ranges to `mappings`.
auto extents_error(const model::RecoveredState& state, std::uint32_t file, const std::string& name,
                   std::uint32_t block_size, std::vector<Mapping>& mappings) -> std::optional<std::string> {
    const model::RecoveredFile& recovered = state.files[file];
    std::uint64_t previous_end = 0;
    for (std::size_t i = 0; i < recovered.extents.size(); i++) {
        const model::RecoveredExtent& extent = recovered.extents[i];
        // Formatted only for an error: this runs on every extent of every crash state.
        const auto what = [&] { return extent_text(name, extent, block_size); };
        if (extent.blocks == 0) return what() + " maps no block";
        if (extent.device_block >= state.device_blocks ||
            extent.blocks > state.device_blocks - extent.device_block) {
            return what() + " ends past the device's " + std::to_string(state.device_blocks) + " blocks";
        }
        if (extent.device_block < state.metadata_end) {
            return what() + " lies in the metadata area [0, " + std::to_string(state.metadata_end) + ")";
        }
        if (i > 0 && extent.file_block < previous_end) {
            return what() + " overlaps the extent before it in the file";
        }
        previous_end = extent.file_block + extent.blocks;
        mappings.push_back({extent.device_block, extent.device_block + extent.blocks, file, i});
    }
    return std::nullopt;
}

/// The extent that maps file block `block`, if any (extents sorted by file block).
auto covering_extent(const std::vector<model::RecoveredExtent>& extents, std::uint64_t block)
    -> const model::RecoveredExtent* {
    // The last extent starting at or before the block.
    const auto after = std::upper_bound(extents.begin(), extents.end(), block,
                                        [](std::uint64_t cursor, const model::RecoveredExtent& extent) {
                                            return cursor < extent.file_block;
                                        });
    if (after == extents.begin()) return nullptr;
    const model::RecoveredExtent& candidate = *(after - 1);
    return block < candidate.file_block + candidate.blocks ? &candidate : nullptr;
}

/// What is wrong with the reads of an existing file: nothing past its size;
/// anything but zeros comes from a written extent (a hole or an unwritten
/// extent reads zeros).
auto reads_error(const model::RecoveredFile& recovered, const std::string& name, const CheckContext& context)
    -> std::optional<std::string> {
    const std::uint32_t block_size = context.block_size;
    const std::uint64_t size_blocks = (recovered.size_bytes + block_size - 1) / block_size;
    if (recovered.blocks.end_key() > size_blocks) {
        return "file " + name + " reads content at block " + std::to_string(size_blocks) +
               " or later, past its size " + std::to_string(recovered.size_bytes);
    }
    std::optional<std::string> error;
    recovered.blocks.for_each([&](std::uint64_t start, std::uint64_t end,
                                  const model::disk::Content& content) {
        if (error || content.kind == model::disk::ContentKind::zeros) return;
        std::uint64_t cursor = start;
        while (cursor < end) {
            const model::RecoveredExtent* covering = covering_extent(recovered.extents, cursor);
            if (covering == nullptr || covering->unwritten) {
                error = "file " + name + " offset " + std::to_string(cursor * block_size) + " reads " +
                        content.describe(context.file_names, block_size) + " but " +
                        (covering == nullptr ? "no extent maps it" : "its extent is unwritten (reads zeros)");
                return;
            }
            cursor = std::min(end, covering->file_block + covering->blocks);
        }
    });
    return error;
}

/// A device block that two extents map (of one file or of two).
auto mapped_twice_error(const model::RecoveredState& state, std::vector<Mapping> mappings,
                        const CheckContext& context) -> std::optional<std::string> {
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
                   extent_text(context.file_names[earlier.file], a, context.block_size) + " and by " +
                   extent_text(context.file_names[later.file], b, context.block_size);
        }
        if (later.device_end > earlier.device_end) furthest = i;
    }
    return std::nullopt;
}

}  // namespace

auto recovered_image_error(const model::RecoveredState& state, const CheckContext& context)
    -> std::optional<std::string> {
    if (!state.mounted) return std::nullopt;
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
        if (auto error = extents_error(state, file, name, context.block_size, mappings)) return error;
        if (auto error = reads_error(recovered, name, context)) return error;
    }
    return mapped_twice_error(state, std::move(mappings), context);
}

}  // namespace checkers
