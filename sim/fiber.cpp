#include "sim/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include "sim/assert.hpp"

namespace sim {
namespace {
auto page_bytes() -> std::size_t { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
}  // namespace

StackPool::~StackPool() {
    for (void* base : free_) ::munmap(base, stack_bytes + page_bytes());
}

auto StackPool::allocate() -> boost::context::stack_context {
    void* base = nullptr;
    if (!free_.empty()) {
        base = free_.back();
        free_.pop_back();
    } else {
        const std::size_t mapping_bytes = stack_bytes + page_bytes();
        base = ::mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        SIM_ASSERT(base != MAP_FAILED);
        // The lowest page is a guard: a stack overflow faults instead of
        // silently corrupting the neighbouring stack.
        SIM_ASSERT(::mprotect(base, page_bytes(), PROT_NONE) == 0);
    }
    boost::context::stack_context stack;
    stack.size = stack_bytes;
    stack.sp = static_cast<char*>(base) + page_bytes() + stack_bytes;
    return stack;
}

void StackPool::deallocate(boost::context::stack_context& stack) {
    SIM_ASSERT(stack.size == stack_bytes);
    void* base = static_cast<char*>(stack.sp) - stack_bytes - page_bytes();
#ifdef SIM_ASAN
    // A fiber destroyed mid-frame (forced unwind) can leave redzones poisoned;
    // the next fiber on this stack starts clean.
    __asan_unpoison_memory_region(static_cast<char*>(base) + page_bytes(), stack_bytes);
#endif
    free_.push_back(base);
}

auto StackPool::local() -> StackPool& {
    thread_local StackPool pool;
    return pool;
}

}  // namespace sim
