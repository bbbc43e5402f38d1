#pragma once
// The bytes the real workload writes and the canary the device starts with,
// and their decoding back into the model's content tags
// (model/disk/content.hpp), so that the checkers read a real file as they
// read a recovered model file.
//
// Every 8-byte word of a data block names who wrote it: top byte 0xC5, then
// the file id (8 bits), the write's oracle version (24 bits) and the file
// block (24 bits). Every word of the canary names its device block: top
// byte 0xCA, then the block number. A block read back decodes to the newest
// version its words carry when every non-zero word is data of that file and
// block; to stale when any word is the canary; to "foreign" (tagged as
// metadata) when any word is neither.
#include <cstdint>
#include <span>
#include <vector>

#include "model/disk/content.hpp"

namespace kernel {

inline constexpr std::uint64_t data_magic = 0xC5;
inline constexpr std::uint64_t canary_magic = 0xCA;
inline constexpr std::uint64_t files_max = 255;
inline constexpr std::uint64_t versions_max = (std::uint64_t{1} << 24) - 1;
inline constexpr std::uint64_t file_blocks_max = std::uint64_t{1} << 24;

/// The word at a data block's every position.
[[nodiscard]] auto data_word(std::uint32_t file, std::uint64_t block, std::uint64_t version) -> std::uint64_t;
/// Fills `out` with the bytes of file offset [offset, offset + out.size())
/// written by `version` (offset and size multiples of 8).
void fill_data(std::span<std::uint8_t> out, std::uint32_t file, std::uint64_t offset, std::uint64_t version,
               std::uint32_t block_size);
/// Fills `out` (a whole number of blocks from device block `first`) with the canary.
void fill_canary(std::span<std::uint8_t> out, std::uint64_t first, std::uint32_t block_size);
/// What one block of a file read back holds; zeros for a block of zeros.
[[nodiscard]] auto decode_block(std::span<const std::uint8_t> block, std::uint32_t file,
                                std::uint64_t file_block) -> model::disk::Content;
/// Whether a device block's bytes are data of one file block (for the
/// negative control): its file, block and newest version.
struct DataTag {
    bool data = false;
    std::uint32_t file = 0;
    std::uint64_t block = 0;
    std::uint64_t version = 0;
};
[[nodiscard]] auto tag_of(std::span<const std::uint8_t> block) -> DataTag;

}  // namespace kernel
