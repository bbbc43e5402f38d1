#pragma once
// Words for the runner's verdict memo across schedules: a memo
// key, or a metadata object's or the oracle's content, as a vector of
// 64-bit words, and the encoders every model and the oracle share
// (model/metadata_store.hpp says what the memo keys on and why).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/disk/content.hpp"

namespace model {

/// An encoding in words: a key of the memo, or an object's content.
using KeyWords = std::vector<std::uint64_t>;

/// A hash of words for the memo's maps (equality always compares all words):
/// four independent lanes, so a long key hashes at several words a cycle,
/// then murmur3's fmix64.
struct KeyWordsHash {
    auto operator()(const KeyWords& words) const noexcept -> std::size_t {
        constexpr std::uint64_t k = 0x9e3779b97f4a7c15ULL;
        std::uint64_t lane[4] = {words.size(), k, k << 1, k << 2};
        std::size_t i = 0;
        for (; i + 4 <= words.size(); i += 4) {
            for (std::size_t j = 0; j < 4; j++) lane[j] = (lane[j] ^ words[i + j]) * k;
        }
        for (; i < words.size(); i++) lane[0] = (lane[0] ^ words[i]) * k;
        std::uint64_t h = lane[0] ^ (lane[1] << 17 | lane[1] >> 47) ^ (lane[2] << 31 | lane[2] >> 33) ^
                          (lane[3] << 47 | lane[3] >> 17);
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        return static_cast<std::size_t>(h);
    }
};

/// Length, then the bytes eight to a word (a const char* kind by content).
inline void encode_string(KeyWords& out, std::string_view text) {
    out.push_back(text.size());
    for (std::size_t i = 0; i < text.size(); i += 8) {
        std::uint64_t word = 0;
        for (std::size_t j = i; j < text.size() && j < i + 8; j++) {
            word |= std::uint64_t{static_cast<unsigned char>(text[j])} << (8 * (j - i));
        }
        out.push_back(word);
    }
}
inline void encode_bits(KeyWords& out, const std::vector<bool>& bits) {
    out.push_back(bits.size());
    for (std::size_t i = 0; i < bits.size(); i += 64) {
        std::uint64_t word = 0;
        for (std::size_t j = i; j < bits.size() && j < i + 64; j++) word |= std::uint64_t{bits[j]} << (j - i);
        out.push_back(word);
    }
}
/// A sim::RangeMap segment by segment, as stored (`value` encodes one value).
template <typename Map, typename Fn>
void encode_range_map(KeyWords& out, const Map& map, Fn&& value) {
    out.push_back(map.segment_count());
    map.for_each([&](std::uint64_t start, std::uint64_t end, const auto& v) {
        out.push_back(start);
        out.push_back(end);
        value(v);
    });
}

/// Every member of one disk::Content (a block's contents).
inline void encode_content(KeyWords& out, const disk::Content& c) {
    out.insert(out.end(), {static_cast<std::uint64_t>(c.kind), c.file, c.offset, c.version, c.sectors,
                           std::uint64_t{c.misdirected}, c.home});
}

}  // namespace model
