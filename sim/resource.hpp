#pragma once
// Footprints for partial-order reduction: which shared resources a step
// touches, one bit per named resource. Two steps whose footprints do not
// meet commute, so an exhaustive search need not run both orders. Locks,
// wait queues, the disk and the oracle add their bit when used; each yield
// point declares the rest of what the code next to it touches (see
// YieldPoint::touches).
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sim {

/// Words of a footprint: room for footprint_bits resource names in one
/// process (every model and test together; a name is registered once, so
/// the count is fixed by the code, not by the input). A name past that is
/// an error, never a silent coarsening (ResourceRegistry::bit).
inline constexpr std::size_t footprint_words = 4;
inline constexpr std::size_t footprint_bits = 64 * footprint_words;

class Footprint {
public:
    constexpr Footprint() = default;
    [[nodiscard]] static constexpr auto bit(std::size_t index) -> Footprint {
        Footprint footprint;
        footprint.words_[index / 64] = std::uint64_t{1} << (index % 64);
        return footprint;
    }
    /// The bits below `count`.
    [[nodiscard]] static constexpr auto first(std::size_t count) -> Footprint {
        Footprint footprint;
        for (std::size_t w = 0; w < footprint_words && count > 64 * w; w++) {
            footprint.words_[w] =
                count >= 64 * (w + 1) ? ~std::uint64_t{0} : (std::uint64_t{1} << (count % 64)) - 1;
        }
        return footprint;
    }
    /// Touches everything: depends on every other step (timers, undeclared
    /// points), whatever resources are registered later.
    [[nodiscard]] static constexpr auto all() -> Footprint {
        Footprint footprint;
        footprint.words_.fill(~std::uint64_t{0});
        return footprint;
    }
    [[nodiscard]] constexpr auto empty() const -> bool {
        for (const std::uint64_t word : words_) {
            if (word != 0) return false;
        }
        return true;
    }
    [[nodiscard]] constexpr auto meets(const Footprint& other) const -> bool {
        for (std::size_t w = 0; w < footprint_words; w++) {
            if ((words_[w] & other.words_[w]) != 0) return true;
        }
        return false;
    }
    [[nodiscard]] constexpr auto has(std::size_t index) const -> bool {
        return ((words_[index / 64] >> (index % 64)) & 1) != 0;
    }
    /// Calls visit(index) for every bit set, lowest first.
    template <class Visit>
    constexpr void for_each_bit(Visit&& visit) const {
        for (std::size_t w = 0; w < footprint_words; w++) {
            for (std::uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
                visit(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
            }
        }
    }
    constexpr auto operator|=(const Footprint& other) -> Footprint& {
        for (std::size_t w = 0; w < footprint_words; w++) words_[w] |= other.words_[w];
        return *this;
    }
    constexpr auto operator&=(const Footprint& other) -> Footprint& {
        for (std::size_t w = 0; w < footprint_words; w++) words_[w] &= other.words_[w];
        return *this;
    }
    /// These bits less `other`'s.
    [[nodiscard]] constexpr auto without(const Footprint& other) const -> Footprint {
        Footprint left = *this;
        for (std::size_t w = 0; w < footprint_words; w++) left.words_[w] &= ~other.words_[w];
        return left;
    }
    friend constexpr auto operator|(Footprint a, const Footprint& b) -> Footprint { return a |= b; }
    friend constexpr auto operator&(Footprint a, const Footprint& b) -> Footprint { return a &= b; }
    friend constexpr auto operator==(const Footprint&, const Footprint&) -> bool = default;

private:
    std::array<std::uint64_t, footprint_words> words_{};
};

inline constexpr Footprint footprint_all = Footprint::all();

/// Names to bits, in the order they are first asked for.
class ResourceRegistry {
public:
    explicit ResourceRegistry(std::size_t capacity = footprint_bits);
    /// The bit of `name`; the same name gives the same bit. Throws
    /// std::length_error, naming footprint_words, when `name` is new and
    /// every bit is taken.
    auto bit(std::string_view name) -> Footprint;
    [[nodiscard]] auto names() const -> std::vector<std::string>;
    [[nodiscard]] auto size() const -> std::size_t { return bits_.size(); }

private:
    std::size_t capacity_;
    std::map<std::string, std::size_t, std::less<>> bits_;
};

/// The bit of a named resource in the process's registry (thread-safe).
auto resource(std::string_view name) -> Footprint;
/// The names registered so far, by bit.
auto resource_names() -> std::vector<std::string>;
/// How many: no named resource has a bit at or past it.
auto resource_count() -> std::size_t;

/// Steps with these footprints may be reordered without changing the outcome.
constexpr auto independent(const Footprint& a, const Footprint& b) -> bool { return !a.meets(b); }

}  // namespace sim
