#pragma once
// An interval map over [start, end) of 64-bit keys (blocks, pages) whose
// values know how to shift: the value at key k of a segment that starts at s
// is value.shifted(k - s). A 20 MiB file written at once is one segment, not
// 5120, which keeps a world cheap to copy for every schedule. Adjacent
// segments that continue each other are merged.
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

#include "sim/assert.hpp"

namespace sim {

template <typename Value>
class RangeMap {
public:
    struct Segment {
        std::uint64_t end;
        Value value;  // value at the segment's start
    };

    /// Sets [start, end) to value (value is the one at `start`).
    void assign(std::uint64_t start, std::uint64_t end, const Value& value) {
        SIM_ASSERT(start < end);
        erase(start, end);
        auto [it, inserted] = segments_.emplace(start, Segment{end, value});
        SIM_ASSERT(inserted);
        merge_around(it);
    }

    void erase(std::uint64_t start, std::uint64_t end) {
        SIM_ASSERT(start <= end);
        if (start == end) return;
        split(start);
        split(end);
        auto first = segments_.lower_bound(start);
        auto last = segments_.lower_bound(end);
        segments_.erase(first, last);
    }

    [[nodiscard]] auto find(std::uint64_t key) const -> std::optional<Value> {
        auto it = segments_.upper_bound(key);
        if (it == segments_.begin()) return std::nullopt;
        --it;
        if (key >= it->second.end) return std::nullopt;
        return it->second.value.shifted(key - it->first);
    }

    /// Calls fn(start, end, value_at_start) for each mapped piece of [start, end).
    template <typename Fn>
    void for_each(std::uint64_t start, std::uint64_t end, Fn&& fn) const {
        auto it = segments_.upper_bound(start);
        if (it != segments_.begin()) {
            auto previous = std::prev(it);
            if (previous->second.end > start) it = previous;
        }
        for (; it != segments_.end() && it->first < end; ++it) {
            const std::uint64_t piece_start = it->first < start ? start : it->first;
            const std::uint64_t piece_end = it->second.end > end ? end : it->second.end;
            if (piece_start >= piece_end) continue;
            fn(piece_start, piece_end, it->second.value.shifted(piece_start - it->first));
        }
    }

    template <typename Fn>
    void for_each(Fn&& fn) const {
        for (const auto& [start, segment] : segments_) fn(start, segment.end, segment.value);
    }

    /// Calls fn(start, end) for each unmapped piece (hole) of [start, end).
    template <typename Fn>
    void for_each_hole(std::uint64_t start, std::uint64_t end, Fn&& fn) const {
        std::uint64_t cursor = start;
        for_each(start, end, [&](std::uint64_t piece_start, std::uint64_t piece_end, const Value&) {
            if (piece_start > cursor) fn(cursor, piece_start);
            cursor = piece_end;
        });
        if (cursor < end) fn(cursor, end);
    }

    [[nodiscard]] auto empty() const -> bool { return segments_.empty(); }
    [[nodiscard]] auto segment_count() const -> std::size_t { return segments_.size(); }
    /// One past the last mapped key, 0 when empty.
    [[nodiscard]] auto end_key() const -> std::uint64_t {
        return segments_.empty() ? 0 : std::prev(segments_.end())->second.end;
    }
    void clear() { segments_.clear(); }

    auto operator==(const RangeMap& other) const -> bool {
        if (segments_.size() != other.segments_.size()) return false;
        auto a = segments_.begin();
        auto b = other.segments_.begin();
        for (; a != segments_.end(); ++a, ++b) {
            if (a->first != b->first || a->second.end != b->second.end) return false;
            if (!(a->second.value == b->second.value)) return false;
        }
        return true;
    }

private:
    using Map = std::map<std::uint64_t, Segment>;

    void split(std::uint64_t at) {
        auto it = segments_.upper_bound(at);
        if (it == segments_.begin()) return;
        --it;
        if (it->first == at || it->second.end <= at) return;
        Segment tail{it->second.end, it->second.value.shifted(at - it->first)};
        it->second.end = at;
        segments_.emplace_hint(std::next(it), at, std::move(tail));
    }

    void merge_around(typename Map::iterator it) {
        auto next = std::next(it);
        if (next != segments_.end() && continues(it, next)) {
            it->second.end = next->second.end;
            segments_.erase(next);
        }
        if (it != segments_.begin()) {
            auto previous = std::prev(it);
            if (continues(previous, it)) {
                previous->second.end = it->second.end;
                segments_.erase(it);
            }
        }
    }

    static auto continues(typename Map::iterator left, typename Map::iterator right) -> bool {
        if (left->second.end != right->first) return false;
        return left->second.value.shifted(right->first - left->first) == right->second.value;
    }

    Map segments_;
};

}  // namespace sim
