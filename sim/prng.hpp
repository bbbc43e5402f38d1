#pragma once
// Deterministic pseudo-random streams. No floating point, no global state:
// every component receives its own stream, derived from the run's seed and a
// name, so that adding draws in one component leaves the others unchanged.
#include <cstdint>
#include <string_view>

#include "sim/assert.hpp"

namespace sim {

/// Odds as an integer fraction (TigerBeetle's Ratio): chance(Ratio{1, 4}).
struct Ratio {
    std::uint64_t numerator;
    std::uint64_t denominator;
};

inline auto splitmix64(std::uint64_t& state) -> std::uint64_t {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// FNV-1a over a name: stable across compilers and runs.
constexpr auto hash_name(std::string_view name) -> std::uint64_t {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (char c : name) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

/// xoshiro256** seeded through splitmix64.
class Prng {
public:
    explicit Prng(std::uint64_t seed = 0) { reseed(seed); }

    void reseed(std::uint64_t seed) {
        std::uint64_t state = seed;
        for (auto& word : s_) word = splitmix64(state);
    }

    /// A stream derived from this one's seed material and a name; does not
    /// advance this stream.
    [[nodiscard]] auto fork(std::string_view name) const -> Prng {
        std::uint64_t material = s_[0] ^ (s_[1] << 1) ^ hash_name(name);
        return Prng(splitmix64(material));
    }

    auto next() -> std::uint64_t {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    /// Uniform in [0, bound), without modulo bias (Lemire).
    auto below(std::uint64_t bound) -> std::uint64_t {
        SIM_ASSERT(bound > 0);
        __uint128_t product = static_cast<__uint128_t>(next()) * bound;
        auto low = static_cast<std::uint64_t>(product);
        if (low < bound) {
            const std::uint64_t threshold = (0 - bound) % bound;
            while (low < threshold) {
                product = static_cast<__uint128_t>(next()) * bound;
                low = static_cast<std::uint64_t>(product);
            }
        }
        return static_cast<std::uint64_t>(product >> 64);
    }

    /// Uniform in [0, bound) up to a bias below bound / 2^64 (Lemire's
    /// multiply without the rejection loop): for picking among a handful of
    /// candidates at every step, where the loop's branch costs more than the
    /// bias is worth.
    auto below_fast(std::uint64_t bound) -> std::uint64_t {
        return static_cast<std::uint64_t>((static_cast<__uint128_t>(next()) * bound) >> 64);
    }

    auto chance(Ratio ratio) -> bool {
        SIM_ASSERT(ratio.denominator > 0);
        return below(ratio.denominator) < ratio.numerator;
    }

    auto boolean() -> bool { return (next() >> 63) != 0; }

private:
    static constexpr auto rotl(std::uint64_t x, int k) -> std::uint64_t {
        return (x << k) | (x >> (64 - k));
    }
    std::uint64_t s_[4]{};
};

}  // namespace sim
