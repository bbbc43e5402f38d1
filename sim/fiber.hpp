#pragma once
// Mechanism only: Boost.Context fibers on pooled, fixed-size stacks with a
// guard page. The scheduler decides who runs; this file only switches.
#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#ifdef SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace sim {

/// The stack a fiber switch leaves or enters. AddressSanitizer must be told of
/// every switch (Boost.Context's fcontext does not tell it), or it takes the
/// fiber's frames for overflows of the thread's stack; in other builds the
/// calls below are empty.
struct StackBounds {
    const void* bottom = nullptr;
    std::size_t size = 0;
};

namespace asan {
/// Before a switch to `to`; `fake_stack` keeps this stack's fake frames, or is
/// nullptr when this stack is left for good (the fiber finishes).
inline void start_switch([[maybe_unused]] void** fake_stack, [[maybe_unused]] StackBounds to) {
#ifdef SIM_ASAN
    __sanitizer_start_switch_fiber(fake_stack, to.bottom, to.size);
#endif
}
/// On arrival after a switch; `from`, when given, receives the stack left.
inline void finish_switch([[maybe_unused]] void* fake_stack, [[maybe_unused]] StackBounds* from) {
#ifdef SIM_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, from != nullptr ? &from->bottom : nullptr,
                                    from != nullptr ? &from->size : nullptr);
#endif
}
}  // namespace asan

/// A per-thread pool of fixed-size stacks. Stacks are mapped once and reused,
/// so creating a fiber per task per schedule costs no system call.
class StackPool {
public:
#ifdef SIM_ASAN
    static constexpr std::size_t stack_bytes = 512 * 1024;  // redzones make frames larger
#else
    static constexpr std::size_t stack_bytes = 128 * 1024;
#endif

    StackPool() = default;
    StackPool(const StackPool&) = delete;
    auto operator=(const StackPool&) -> StackPool& = delete;
    ~StackPool();

    auto allocate() -> boost::context::stack_context;
    void deallocate(boost::context::stack_context& stack);

    /// The calling thread's pool.
    static auto local() -> StackPool&;

private:
    std::vector<void*> free_;  // base (lowest address, guard page) of each free mapping
};

/// Boost.Context StackAllocator handle onto a StackPool; `bounds` receives
/// the stack given out (for the switch annotations above).
struct PooledStack {
    StackPool* pool;
    StackBounds* bounds;
    auto allocate() -> boost::context::stack_context {
        boost::context::stack_context stack = pool->allocate();
        bounds->bottom = static_cast<const char*>(stack.sp) - stack.size;
        bounds->size = stack.size;
        return stack;
    }
    void deallocate(boost::context::stack_context& stack) { pool->deallocate(stack); }
};

using Fiber = boost::context::fiber;

}  // namespace sim
