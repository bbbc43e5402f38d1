#pragma once
// Helpers shared by the block device tests: the nvme profile, and a device
// driven by one task until its completions are done.
#include <doctest/doctest.h>

#include <functional>

#include "model/disk/block_device.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"

namespace test_support {

inline auto nvme() -> const model::disk::DeviceProfile& {
    const auto* profile = model::disk::find_profile("nvme");
    REQUIRE(profile != nullptr);
    return *profile;
}

/// Runs `body` in a task on `device` until every task and timer is done.
inline void run_on(model::disk::BlockDevice& device,
                   const std::function<void(model::disk::BlockDevice&)>& body) {
    sim::Scheduler scheduler{{}, nullptr};
    sim::FirstStrategy first;
    scheduler.spawn("io", [&device, body] { body(device); });
    for (int i = 0; i < 10000; i++) {
        const sim::StepOutcome outcome = scheduler.step(first);
        if (outcome == sim::StepOutcome::finished) return;
        REQUIRE(outcome != sim::StepOutcome::deadlock);
    }
    FAIL("the device did not settle");
}

}  // namespace test_support
