#pragma once
// A 64-bit hash as repro files, result files and messages write it.
#include <cstdint>
#include <cstdio>
#include <string>

namespace runner {

/// A 64-bit hash as repro files and messages write it: 16 hex digits.
inline auto hex(std::uint64_t value) -> std::string {
    char text[19];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

}  // namespace runner
