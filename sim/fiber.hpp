#pragma once
// Mechanism only: Boost.Context fibers on pooled, fixed-size stacks with a
// guard page. The scheduler decides who runs; this file only switches.
#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <vector>

namespace sim {

/// A per-thread pool of fixed-size stacks. Stacks are mapped once and reused,
/// so creating a fiber per task per schedule costs no system call.
class StackPool {
public:
    static constexpr std::size_t stack_bytes = 128 * 1024;

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

/// Boost.Context StackAllocator handle onto a StackPool.
struct PooledStack {
    StackPool* pool;
    auto allocate() -> boost::context::stack_context { return pool->allocate(); }
    void deallocate(boost::context::stack_context& stack) { pool->deallocate(stack); }
};

using Fiber = boost::context::fiber;

}  // namespace sim
