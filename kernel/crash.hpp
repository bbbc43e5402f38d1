#pragma once
// Crash states from the device's log: at every flush of the workload and at
// the crash point, the image is the device as the log had it before the
// first record (the canary), every record before the last flush (durable),
// and a subset of the writes after it (the scenario's crash.unflushed
// policy, capped). Each is mounted on a loop device (recovery runs), its
// files read back and decoded into a model::RecoveredState, checked by the
// file system's own checker (fs_consistency) and judged by the checkers.
#include <cstdint>
#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "kernel/device.hpp"
#include "kernel/host.hpp"
#include "kernel/workload.hpp"

namespace kernel {

/// Subsets of one crash point's unflushed writes at most: none, all, then
/// each of the first writes dropped alone (any-subset enumerates every
/// subset of up to any_subset_writes_max writes).
inline constexpr std::size_t subsets_per_point_max = 10;
inline constexpr std::size_t any_subset_writes_max = 3;
/// Crash states one run judges at most.
inline constexpr std::size_t crash_states_max = 64;

struct CheckerTally {
    std::string name;
    std::uint64_t judged = 0;    // crash states with something at stake
    std::uint64_t violated = 0;  // crash states it found a violation in
    std::string first;           // the first violation, with its crash state
};

struct CrashJudgement {
    std::vector<CheckerTally> tallies;  // checkers::real_kernel_checker_names() order
    std::uint64_t states = 0;
    std::uint64_t points = 0;
    bool capped = false;  // crash_states_max or subsets_per_point_max left some out
    std::string cap_text;
    /// The negative control: a state that loses a write a flush made durable.
    bool control_ran = false;
    bool control_caught = false;
    std::string control_text;
};

struct CrashInput {
    const loader::Scenario& scenario;
    FsType type;
    const std::vector<RanOp>& ran;
    const std::vector<LogRecord>& records;
    const LoggingDevice& device;
    std::string canary_image;
    std::string scratch;
    std::uint64_t workload_marker;  // the set-up's last marker: states start after it
    std::uint64_t crash_marker;
    std::string mount_options;
};

auto judge_crash_states(Host& host, const CrashInput& input) -> CrashJudgement;

}  // namespace kernel
