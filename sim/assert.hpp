#pragma once
// Always-on assertions for crashsim's own bugs (never for bad input or for a
// property of the modelled file system, which are findings, not asserts).
// A condition must be able to fail and must have no side effect: the build
// may one day compile them out, and a reader takes them for documentation.
#include <cstdio>
#include <cstdlib>

namespace sim {

/// What the run in progress is: the runner sets one for the length of a run
/// (AssertContextScope) and a failing SIM_ASSERT prints it, so that every
/// internal bug report carries the seed, the schedule and the step that hit it.
/// Nothing is formatted until an assertion fails.
class AssertContext {
public:
    virtual ~AssertContext() = default;
    virtual void describe(std::FILE* out) const = 0;

protected:
    AssertContext() = default;
    AssertContext(const AssertContext&) = default;
    auto operator=(const AssertContext&) -> AssertContext& = default;
};

namespace detail {
/// The context of the run on this thread (each campaign job runs on its own).
inline thread_local const AssertContext* assert_context = nullptr;

[[noreturn]] void assert_fail(const char* condition, const char* file, int line);
}  // namespace detail

/// Sets the context for its lifetime, restoring the one before (runs nest:
/// shrinking replays a run inside a campaign).
class AssertContextScope {
public:
    explicit AssertContextScope(const AssertContext& context) : previous_(detail::assert_context) {
        detail::assert_context = &context;
    }
    ~AssertContextScope() { detail::assert_context = previous_; }
    AssertContextScope(const AssertContextScope&) = delete;
    auto operator=(const AssertContextScope&) -> AssertContextScope& = delete;

private:
    const AssertContext* previous_;
};

}  // namespace sim

#define SIM_ASSERT(condition)                                                   \
    do {                                                                        \
        if (!(condition)) [[unlikely]] {                                        \
            ::sim::detail::assert_fail(#condition, __FILE__, __LINE__);         \
        }                                                                       \
    } while (false)

// Documents that a condition is sometimes true and sometimes false.
#define SIM_MAYBE(condition) static_cast<void>(condition)
