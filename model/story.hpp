#pragma once
// Text that every model's story notes share, so that the same thing reads
// the same whichever model tells it.
#include <cstdint>
#include <string>

namespace model {

/// A byte range in a story note: "[start, end)", half open, in bytes (a
/// write of 4096 bytes at 8192 reads "[8192, 12288)").
inline auto range_text(std::uint64_t start_bytes, std::uint64_t end_bytes) -> std::string {
    return "[" + std::to_string(start_bytes) + ", " + std::to_string(end_bytes) + ")";
}

}  // namespace model
