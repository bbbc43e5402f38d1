#pragma once
// The visited-state table of the bounded search (VisitedKey::reads and
// locals, sim/visited.cpp): one fixed-size entry per visit, in one flat
// array with open addressing, as SPIN's and TLC's state stores keep a
// fingerprint. A state reached again under a budget or sleep set the first
// visits do not cover is remembered again, so a key may have several
// entries; they are found in the order they were remembered.
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace sim {

/// One visit of a state: its fingerprint and what the search had left there.
struct Visit {
    std::uint64_t key = 0;  // the state's fingerprint (StateParts::key)
    std::uint32_t steps = 0;
    // Steps since an operation completed (ResourceHasher::
    // steps_without_progress): what is left of the liveness window.
    std::uint32_t without_progress = 0;
    std::uint32_t ordinal = 0;  // how many visits the table held before it
    // The tasks asleep on arrival (sleep set), one bit per task id.
    std::uint32_t sleep = 0;
    std::uint8_t preemptions = 0;
    // The charged choices spent (Scheduler::io_reorders_used,
    // daemon_wakeups_used, io_errors_used): a budget, as preemptions.
    std::array<std::uint8_t, 3> charges{};
    // A visit that slept on a timer (whose key names another timer on
    // another path) or on a task past the mask's width, or whose figures
    // pass their fields' widths, covers no revisit.
    bool covers_none = false;
    bool used = false;  // the slot holds a visit

    /// Whether this first visit had every choice `revisit` has (Godefroid's
    /// rule, with the charged choices and the liveness window as budgets).
    /// Steps are a budget only against the step bound: `steps_free` says
    /// that this visit's subtree is explored and no run stopped at the bound,
    /// so a revisit with fewer steps spent would reach nothing more.
    [[nodiscard]] auto covers(const Visit& revisit, bool steps_free = false) const -> bool {
        if (covers_none) return false;
        for (std::size_t i = 0; i < charges.size(); i++) {
            if (charges[i] > revisit.charges[i]) return false;
        }
        // A first visit with no more of the liveness window left ran every
        // path the revisit can into the same liveness violation or further.
        return without_progress >= revisit.without_progress && preemptions <= revisit.preemptions &&
               (steps <= revisit.steps || steps_free) && (sleep & ~revisit.sleep) == 0;
    }
};

static_assert(sizeof(Visit) == 32, "two visits to a cache line");

/// The slots are mapped from the system and returned to it whole (mmap,
/// munmap): the table's memory is its array, which --max-memory bounds.
class VisitTable {
public:
    VisitTable() = default;
    VisitTable(const VisitTable& other);
    auto operator=(const VisitTable& other) -> VisitTable& {
        VisitTable copy(other);
        swap(copy);
        return *this;
    }
    VisitTable(VisitTable&& other) noexcept { swap(other); }
    auto operator=(VisitTable&& other) noexcept -> VisitTable& {
        VisitTable gone(std::move(other));
        swap(gone);
        return *this;
    }
    ~VisitTable() { release(slots_, capacity_); }

    /// The first visit of `key` that `pick` accepts, in the order they were
    /// remembered, or nullptr.
    template <class Pick>
    [[nodiscard]] auto find(std::uint64_t key, Pick&& pick) const -> const Visit* {
        if (capacity_ == 0) return nullptr;
        for (std::size_t at = home(key);; at = (at + 1) & mask()) {
            const Visit& slot = slots_[at];
            if (!slot.used) return nullptr;
            if (slot.key == key && pick(slot)) return &slot;
        }
    }
    /// Remembers `visit` (its ordinal set here), unless the table would grow
    /// past `limit` bytes (0: no bound): then nothing is kept and it says so.
    auto insert(Visit visit, std::uint64_t limit) -> bool;
    [[nodiscard]] auto size() const -> std::size_t { return used_; }
    /// The bytes the table's slots take.
    [[nodiscard]] auto bytes() const -> std::uint64_t { return capacity_ * sizeof(Visit); }
    void clear() {
        release(slots_, capacity_);
        slots_ = nullptr;
        capacity_ = 0;
        used_ = 0;
        shift_ = 64;
    }

private:
    void swap(VisitTable& other) noexcept {
        std::swap(slots_, other.slots_);
        std::swap(capacity_, other.capacity_);
        std::swap(used_, other.used_);
        std::swap(shift_, other.shift_);
    }
    static void release(Visit* slots, std::size_t capacity);
    [[nodiscard]] auto mask() const -> std::size_t { return capacity_ - 1; }
    [[nodiscard]] auto home(std::uint64_t key) const -> std::size_t {
        // Fibonacci hashing: keys narrowed to their low bits (tests) spread too.
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
    }
    void place(const Visit& visit);
    /// Doubles the slots, keeping each key's visits in the order remembered.
    void grow();

    Visit* slots_ = nullptr;  // capacity_ of them, a power of two, at most 3/4 used
    std::size_t capacity_ = 0;
    std::size_t used_ = 0;
    unsigned shift_ = 64;
};

}  // namespace sim
