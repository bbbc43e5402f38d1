#include "kernel/pattern.hpp"

#include <algorithm>
#include <cstring>

namespace kernel {
namespace {

auto load_word(const std::uint8_t* bytes) -> std::uint64_t {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes, sizeof word);
    return word;
}

void store_word(std::uint8_t* bytes, std::uint64_t word) {
    std::memcpy(bytes, &word, sizeof word);
}

}  // namespace

auto data_word(std::uint32_t file, std::uint64_t block, std::uint64_t version) -> std::uint64_t {
    return data_magic << 56 | std::uint64_t{file} << 48 | (version & versions_max) << 24 |
           (block & (file_blocks_max - 1));
}

void fill_data(std::span<std::uint8_t> out, std::uint32_t file, std::uint64_t offset, std::uint64_t version,
               std::uint32_t block_size) {
    for (std::size_t i = 0; i + 8 <= out.size(); i += 8) {
        store_word(out.data() + i, data_word(file, (offset + i) / block_size, version));
    }
}

void fill_canary(std::span<std::uint8_t> out, std::uint64_t first, std::uint32_t block_size) {
    for (std::size_t i = 0; i + 8 <= out.size(); i += 8) {
        store_word(out.data() + i, canary_magic << 56 | (first + i / block_size));
    }
}

auto decode_block(std::span<const std::uint8_t> block, std::uint32_t file, std::uint64_t file_block)
    -> model::disk::Content {
    std::uint64_t newest = 0;
    for (std::size_t i = 0; i + 8 <= block.size(); i += 8) {
        const std::uint64_t word = load_word(block.data() + i);
        if (word == 0) continue;
        if (word >> 56 == canary_magic)
            return model::disk::Content::stale(word & ((std::uint64_t{1} << 56) - 1));
        const bool ours = word >> 56 == data_magic && ((word >> 48) & 0xff) == file &&
                          (word & (file_blocks_max - 1)) == (file_block & (file_blocks_max - 1));
        if (!ours) {
            // Another file's data, another block's, or bytes no data word
            // makes (metadata): content this file never had here.
            if (word >> 56 == data_magic) {
                return model::disk::Content::data((word >> 48) & 0xff, word & (file_blocks_max - 1),
                                                  (word >> 24) & versions_max);
            }
            return model::disk::Content::meta(0);
        }
        newest = std::max(newest, (word >> 24) & versions_max);
    }
    if (newest == 0) return model::disk::Content::zeros();
    return model::disk::Content::data(file, file_block, newest);
}

auto tag_of(std::span<const std::uint8_t> block) -> DataTag {
    DataTag tag;
    for (std::size_t i = 0; i + 8 <= block.size(); i += 8) {
        const std::uint64_t word = load_word(block.data() + i);
        if (word == 0) continue;
        if (word >> 56 != data_magic) return {};
        const auto file = static_cast<std::uint32_t>((word >> 48) & 0xff);
        const std::uint64_t file_block = word & (file_blocks_max - 1);
        if (tag.data && (file != tag.file || file_block != tag.block)) return {};
        tag = {true, file, file_block, std::max(tag.version, (word >> 24) & versions_max)};
    }
    return tag;
}

}  // namespace kernel
