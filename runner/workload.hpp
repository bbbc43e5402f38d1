#pragma once
// The workload: a scenario's tasks running their operations against the
// model, and the oracle told what each operation promises. It lives outside
// the model (Simulation::execute spawns one fiber per task).
#include <cstdint>
#include <vector>

#include "checkers/oracle.hpp"
#include "loader/scenario.hpp"
#include "model/filesystem.hpp"
#include "model/info.hpp"
#include "runner/runner.hpp"
#include "sim/assert.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"

namespace runner {

/// The resource of the oracle's promises (a yield point's footprint).
auto oracle_resource() -> sim::Footprint;

/// Runs a task's operations against the model and tells the oracle what was
/// done and acknowledged.
struct Workload {
    const loader::Scenario& scenario;
    model::FileSystem& fs;
    checkers::Oracle& oracle;
    std::vector<bool>& created;
    std::uint64_t fsyncs = 0;
    std::uint64_t completed = 0;  // operations completed: what progress is
    const model::ModelInfo* info = model::find_model(scenario.model);
    PerfOutcome* perf = nullptr;  // set for performance runs

    [[nodiscard]] auto op_info(const loader::Op& op) const -> const model::OpInfo& {
        const model::OpInfo* found = model::find_op(*info, op.name);
        SIM_ASSERT(found != nullptr && "operation validated by the loader");
        return *found;
    }
    [[nodiscard]] auto effect_of(const loader::Op& op) const -> model::OracleEffect {
        return op_info(op).effect;
    }
    [[nodiscard]] auto is_create(const loader::Op& op) const -> bool { return op_info(op).creates_file; }

    /// Runs a task's operations; between two of them the task yields (a task
    /// start is already a step boundary).
    void run_all(const std::vector<loader::Op>& ops);

    /// A task's operations: its list, or those it generates as it runs.
    void run_task(const loader::Task& task);

    // GeneratedOps: tasks that reached the unlink phase, and where they wait
    // for the others.
    std::size_t phase_arrivals = 0;
    sim::WaitQueue phase_wait{"workload.phase", oracle_resource()};

    /// Creates the task's files, then (GeneratedOps::unlink) waits for every
    /// generated task to have created its own and unlinks them; each
    /// operation made when it runs, none stored.
    void run_generated(const loader::GeneratedOps& generated);

    /// The model runs `call`. An error returned to the task, on a scenario
    /// with write errors, may be a writeback error reported to it: the
    /// oracle is told (Oracle::error_reported; over-telling only promises less).
    auto execute(const model::OpCall& call) -> model::OpResult;

    /// The model's call for `op` (the loader validated its fields).
    [[nodiscard]] auto make_call(const loader::Op& op) const -> model::OpCall {
        model::OpCall call;
        call.name = op.name;
        call.op = model::op_id(*info, op_info(op));
        call.file = op.file_index != loader::Op::no_file_index ? op.file_index
                    : op.file.empty()                  ? 0
                                                       : scenario.file_id(op.file);
        call.offset = op.offset;
        call.length = op.length;
        call.has_range = op.has_offset || op.has_length;
        if (op.has_offset && !op.has_length) call.length = ~std::uint64_t{0} - op.offset;
        call.flags = &op.flags;
        return call;
    }

    /// Runs one operation, telling the oracle what it promises by what the
    /// operation means (its OracleEffect), not by its name.
    void run(const loader::Op& op);

    [[nodiscard]] auto first_block(const loader::Op& op) const -> std::uint64_t {
        return op.offset / scenario.device.block_size;
    }
    [[nodiscard]] auto end_block(const loader::Op& op) const -> std::uint64_t {
        // The block holding the last byte (equal for block multiples; ext4's
        // byte-granular writes dirty their partial last block).
        return (op.offset + op.length + scenario.device.block_size - 1) / scenario.device.block_size;
    }

    void run_write(const loader::Op& op, model::OpCall& call);

    /// A hole punch never changes the size; a zero range raises it unless keep_size.
    void run_zero(const loader::Op& op, model::OpCall& call);

    /// truncate: the size becomes `length`; what lay past it reads zeros.
    void run_set_size(const loader::Op& op, model::OpCall& call);

    /// fallocate without keep_size raises the size to max(size, offset + length).
    void run_extend_size(const loader::Op& op, const model::OpCall& call);

    void run_fsync(const loader::Op& op, const model::OpCall& call, sim::Scheduler& scheduler);

    /// sync(2) promises every file that exists when it starts.
    void run_sync_all(const model::OpCall& call, sim::Scheduler& scheduler);
};

}  // namespace runner
