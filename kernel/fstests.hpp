#pragma once
// fstests generic/042 as the test itself runs it, on the running kernel:
// for each of `falloc -k`, `fpunch` and `fzero -k`, a 25 MiB image filled
// with 0xCD, mkfs.xfs on it, a loop mount, `xfs_io -f -c "pwrite -S 1 0
// 64k" -c "CMD 60k 4k"`, `xfs_io -x -c "shutdown -f"` (godown -f), unmount,
// mount (log recovery) and a look for 0xCD in the file: the test fails on
// any, which is stale data exposed.
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/host.hpp"

namespace kernel {

struct Generic042Case {
    std::string command;  // "falloc -k"
    std::uint64_t size = 0;
    std::uint64_t stale_bytes = 0;  // 0xCD bytes the file reads
    std::uint64_t ones = 0;         // bytes of the test's own pattern (0x01)
    bool mounted = false;
    std::string error;
    [[nodiscard]] auto passed() const -> bool { return mounted && error.empty() && stale_bytes == 0; }
};

auto run_generic_042() -> std::vector<Generic042Case>;

}  // namespace kernel
