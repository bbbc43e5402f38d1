// The visited-state table (sim/visit_table.hpp).
#include "sim/visit_table.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace sim {

namespace {
constexpr std::size_t first_slots = 16;

/// `count` empty slots, mapped from the system (zeroed: every slot unused).
auto map_slots(std::size_t count) -> Visit* {
    void* memory =
        mmap(nullptr, count * sizeof(Visit), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    auto* slots = static_cast<Visit*>(memory);
    for (std::size_t i = 0; i < count; i++) new (&slots[i]) Visit{};
    return slots;
}
}  // namespace

VisitTable::VisitTable(const VisitTable& other)
    : capacity_(other.capacity_), used_(other.used_), shift_(other.shift_) {
    if (capacity_ == 0) return;
    slots_ = map_slots(capacity_);
    std::copy(other.slots_, other.slots_ + capacity_, slots_);
}

void VisitTable::release(Visit* slots, std::size_t capacity) {
    if (slots != nullptr) munmap(slots, capacity * sizeof(Visit));
}

auto VisitTable::insert(Visit visit, std::uint64_t limit) -> bool {
    if ((used_ + 1) * 4 > capacity_ * 3) {
        const std::size_t slots = capacity_ == 0 ? first_slots : capacity_ * 2;
        if (limit != 0 && slots * sizeof(Visit) > limit) return false;
        grow();
    }
    visit.ordinal = static_cast<std::uint32_t>(used_);
    visit.used = true;
    place(visit);
    used_++;
    return true;
}

void VisitTable::place(const Visit& visit) {
    std::size_t at = home(visit.key);
    while (slots_[at].used) at = (at + 1) & mask();
    slots_[at] = visit;
}

void VisitTable::grow() {
    Visit* const old = slots_;
    const std::size_t old_capacity = capacity_;
    capacity_ = old_capacity == 0 ? first_slots : old_capacity * 2;
    slots_ = map_slots(capacity_);
    shift_ = 64;
    for (std::size_t n = capacity_; n > 1; n /= 2) shift_--;
    if (old == nullptr) return;
    // No probe sequence passes an empty slot: read the old slots from one,
    // so that each key's visits are placed again in the order remembered.
    std::size_t start = 0;
    while (old[start].used) start++;
    for (std::size_t i = 1; i <= old_capacity; i++) {
        const Visit& visit = old[(start + i) % old_capacity];
        if (visit.used) place(visit);
    }
    release(old, old_capacity);
}

}  // namespace sim
