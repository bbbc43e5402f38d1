#pragma once
// A file-system model inside a scheduler, driven by hand in mechanism tests,
// and helpers to read what a crash left. Shared by the btrfs and xfs tests.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/disk/content.hpp"
#include "model/filesystem.hpp"
#include "model/info.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"

namespace test_support {

inline constexpr std::uint64_t model_block_bytes = 4096;

/// The file system is declared first so that the scheduler (and any fiber it
/// still holds) is destroyed first.
struct ModelWorld {
    std::unique_ptr<model::FileSystem> fs;
    sim::Scheduler scheduler{{.timers_race_tasks = true, .steps_max = 10'000'000}, nullptr};
    sim::FirstStrategy first;
    std::uint32_t tasks = 0;

    const model::ModelInfo* info;

    ModelWorld(const std::string& model_name, const model::Config& config, const model::Geometry& geometry,
               const std::vector<std::string>& files)
        : fs(model::make_filesystem(model_name, config, geometry, files)),
          info(model::find_model(model_name)) {}

    /// Spawns a task running `ops` in order; returns its id. Tests name each
    /// call's operation; its typed id comes from the model's op table.
    auto spawn(std::vector<model::OpCall> ops) -> sim::TaskId {
        for (model::OpCall& op : ops) resolve(op);
        return scheduler.spawn("app" + std::to_string(tasks++), [this, ops] {
            for (const model::OpCall& op : ops) fs->execute(op);
        });
    }
    /// Runs `ops` in a task and steps until every task (the model's workers
    /// included) and every timer is done.
    void run(std::vector<model::OpCall> ops) {
        spawn(std::move(ops));
        settle();
    }
    /// Sets the typed id of a call that names its operation.
    void resolve(model::OpCall& call) const {
        const model::OpInfo* op = model::find_op(*info, call.name);
        REQUIRE_MESSAGE(op != nullptr, "no operation " << call.name);
        call.op = model::op_id(*info, *op);
    }
    [[nodiscard]] auto resolved(model::OpCall call) const -> model::OpCall {
        resolve(call);
        return call;
    }
    /// Runs one named operation in the calling fiber.
    auto execute(model::OpCall call) const -> model::OpResult {
        resolve(call);
        return fs->execute(call);
    }
    void settle() {
        for (int i = 0; i < 1'000'000; i++) {
            const sim::StepOutcome outcome = scheduler.step(first);
            if (outcome == sim::StepOutcome::finished) return;
            REQUIRE_MESSAGE(outcome != sim::StepOutcome::deadlock, scheduler.describe_blocked());
        }
        FAIL("the file system did not settle");
    }
    [[nodiscard]] auto counter(const std::string& name) const -> std::uint64_t {
        return fs->counters().at(name);
    }
    /// Mounts the image a crash leaves when it keeps every unflushed write or none.
    [[nodiscard]] auto crash(bool keep) const -> model::RecoveredState {
        const auto& device = fs->device();
        return fs->recover(device.crash_image(std::vector<bool>(device.pending().size(), keep)));
    }
};

/// One operation for `world`, its typed id resolved; a range when `length` is set.
inline auto op_call(const ModelWorld& world, const char* name, std::uint32_t file, std::uint64_t offset = 0,
                    std::uint64_t length = 0, std::uint64_t version = 0) -> model::OpCall {
    model::OpCall op{.name = name, .file = file, .offset = offset, .length = length};
    op.has_range = length != 0;
    op.version = version;
    return world.resolved(op);
}

inline auto block_of(const model::RecoveredFile& file, std::uint64_t offset_bytes)
    -> std::optional<model::disk::Content> {
    return file.blocks.find(offset_bytes / model_block_bytes);
}

inline auto data(std::uint32_t file, std::uint64_t offset_bytes, std::uint64_t version)
    -> model::disk::Content {
    return model::disk::Content::data(file, offset_bytes / model_block_bytes, version);
}

inline void check_mounted_cleanly(const model::RecoveredState& state) {
    CHECK(state.mounted);
    CHECK(state.mount_error.empty());
    CHECK(state.consistency_errors.empty());
}

inline auto has_note(const model::RecoveredState& state, const std::string& text) -> bool {
    return std::any_of(state.notes.begin(), state.notes.end(),
                       [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

}  // namespace test_support
