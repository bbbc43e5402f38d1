#pragma once
// Always-on assertions for crashsim's own bugs (never for bad input or for a
// property of the modelled file system, which are findings, not asserts).
#include <cstdio>
#include <cstdlib>

namespace sim::detail {
[[noreturn]] void assert_fail(const char* condition, const char* file, int line);
}  // namespace sim::detail

#define SIM_ASSERT(condition)                                                   \
    do {                                                                        \
        if (!(condition)) [[unlikely]] {                                        \
            ::sim::detail::assert_fail(#condition, __FILE__, __LINE__);         \
        }                                                                       \
    } while (false)

// Documents that a condition is sometimes true and sometimes false.
#define SIM_MAYBE(condition) static_cast<void>(condition)
