#include "runner/workload.hpp"

#include "sim/live.hpp"

namespace runner {

namespace {

// A task may be preempted between two system calls; yielding here also keeps
// every stretch between yield points inside one operation (or the start of a
// task and its first operation), which is what yield points' footprint
// declarations cover.
const sim::YieldPoint op_begin = sim::register_yield_point(
    "workload.op_begin", "a task is about to issue its next operation", {"oracle"}, false);


}  // namespace

auto oracle_resource() -> sim::Footprint {
    static const sim::Footprint footprint = sim::resource("oracle");
    return footprint;
}

void Workload::run_all(const std::vector<loader::Op>& ops) {
    std::size_t i = 0;
    SIM_LIVE(i);
    for (; i < ops.size(); i++) {
        if (i > 0) sim::yield(op_begin);
        run(ops[i]);
        completed++;
    }
}

void Workload::run_task(const loader::Task& task) {
    if (task.generated) {
        run_generated(*task.generated);
    } else {
        run_all(task.ops);
    }
}

void Workload::run_generated(const loader::GeneratedOps& generated) {
    loader::Op op;
    op.json_path = generated.json_path;
    op.user_cpu_ns = generated.user_cpu_ns;
    const auto run_phase = [&](const std::string& name, bool first_phase) {
        op.name = name;
        std::uint64_t i = 0;
        SIM_LIVE(first_phase, i);
        for (; i < generated.files; i++) {
            if (i > 0 || !first_phase) sim::yield(op_begin);
            op.file_index = static_cast<std::uint32_t>(generated.first_file + i);
            op.file = scenario.files[op.file_index];
            run(op);
            completed++;
        }
    };
    run_phase(generated.create_op, true);
    if (!generated.unlink) return;
    const std::size_t generators = generated.phase_tasks;
    if (++phase_arrivals == generators) {
        if (perf != nullptr) perf->create_phase_ns = sim::now();
        phase_wait.wake_all();
    }
    while (phase_arrivals < generators) phase_wait.wait();
    run_phase(generated.unlink_op, false);
}

auto Workload::execute(const model::OpCall& call) -> model::OpResult {
    const model::OpResult result = fs.execute(call);
    // A short write returns a count, not an error: nothing was reported.
    if (result == model::OpResult::failed && scenario.faults.write_errors) oracle.error_reported(call.file);
    return result;
}

void Workload::run(const loader::Op& op) {
    // The task's own time before the call (fs_mark's per-file overhead).
    sim::cpu(static_cast<sim::Duration>(op.user_cpu_ns));
    model::OpCall call = make_call(op);
    auto& scheduler = sim::current_scheduler();
    scheduler.touch(oracle_resource());
    scheduler.cover(fs.op_footprint(call));
    switch (effect_of(op)) {
        case model::OracleEffect::write_data:
            run_write(op, call);
            break;
        case model::OracleEffect::zero_range:
        case model::OracleEffect::punch_hole:
            run_zero(op, call);
            break;
        case model::OracleEffect::set_size:
            run_set_size(op, call);
            break;
        case model::OracleEffect::extend_size:
            run_extend_size(op, call);
            break;
        case model::OracleEffect::fsync_file:
            run_fsync(op, call, scheduler);
            break;
        case model::OracleEffect::sync_all:
            run_sync_all(call, scheduler);
            break;
        case model::OracleEffect::remove_file:
            // Told before the call: the unlink may be durable before it returns.
            oracle.remove_file(call.file);
            if (execute(call) == model::OpResult::ok) {
                created[call.file] = false;
                if (perf != nullptr) perf->unlinks++;
            }
            break;
        case model::OracleEffect::none: {
            const bool ok = execute(call) == model::OpResult::ok;
            if (ok && is_create(op)) created[call.file] = true;
            if (ok && is_create(op) && perf != nullptr) perf->creates++;
            break;
        }
    }
    scheduler.touch(oracle_resource());
}

void Workload::run_write(const loader::Op& op, model::OpCall& call) {
    call.version = oracle.begin_write();
    const std::size_t size_id = oracle.begin_size(call.file, false, op.offset + op.length);
    SIM_LIVE(call.version, size_id);
    const model::OpResult result = execute(call);
    if (result == model::OpResult::failed) return;
    // A short write (ENOSPC partway) promises only the bytes it copied.
    const std::uint64_t length = result == model::OpResult::short_write ? call.copied : op.length;
    const std::uint32_t block_size = scenario.device.block_size;
    oracle.end_size(call.file, size_id, op.offset + length);
    oracle.end_write(call.file, first_block(op), (op.offset + length + block_size - 1) / block_size,
                     call.version, op.offset + length);
    if (perf != nullptr) {
        perf->bytes_written += length;
        perf->writes++;
    }
}

void Workload::run_zero(const loader::Op& op, model::OpCall& call) {
    const auto keep_size = op.flags.find("keep_size");
    const bool extends = effect_of(op) == model::OracleEffect::zero_range &&
                         (keep_size == op.flags.end() || !keep_size->second);
    call.version = oracle.begin_zero(call.file, first_block(op), end_block(op));
    const std::size_t size_id = extends ? oracle.begin_size(call.file, false, op.offset + op.length) : 0;
    SIM_LIVE(call.version, size_id);
    if (execute(call) != model::OpResult::ok) return;
    if (extends) oracle.end_size(call.file, size_id);
    oracle.end_zero(call.file, first_block(op), end_block(op), call.version,
                    extends ? op.offset + op.length : 0);
}

void Workload::run_set_size(const loader::Op& op, model::OpCall& call) {
    const std::uint32_t block_size = scenario.device.block_size;
    call.version = oracle.begin_truncate(call.file, op.length, block_size);
    const std::size_t size_id = oracle.begin_size(call.file, true, op.length);
    SIM_LIVE(call.version, size_id);
    if (execute(call) != model::OpResult::ok) return;
    oracle.end_size(call.file, size_id);
    oracle.end_truncate(call.file, op.length, block_size);
}

void Workload::run_extend_size(const loader::Op& op, const model::OpCall& call) {
    const auto keep_size = op.flags.find("keep_size");
    const bool extends = keep_size == op.flags.end() || !keep_size->second;
    const std::size_t size_id = extends ? oracle.begin_size(call.file, false, op.offset + op.length) : 0;
    SIM_LIVE(size_id);
    if (execute(call) == model::OpResult::ok && extends) oracle.end_size(call.file, size_id);
}

void Workload::run_fsync(const loader::Op& op, const model::OpCall& call, sim::Scheduler& scheduler) {
    const sim::Instant began = scheduler.now();
    if (perf != nullptr) {
        // No crash is checked in a performance run: no promise
        // (it would copy the file's contents at every fsync).
        if (execute(call) == model::OpResult::ok) {
            perf->fsyncs++;
            perf->fsync_latencies_ns.push_back(scheduler.now() - began);
        }
        return;
    }
    const std::size_t id = oracle.begin_fsync(call.file, scheduler.steps(),
                                              "fsync #" + std::to_string(++fsyncs) + " of " + op.file);
    SIM_LIVE(id);
    if (execute(call) == model::OpResult::ok) oracle.end_fsync(id, scheduler.steps());
}

void Workload::run_sync_all(const model::OpCall& call, sim::Scheduler& scheduler) {
    std::vector<std::size_t> ids;
    for (std::uint32_t file = 0; file < created.size(); file++) {
        if (!created[file]) continue;
        ids.push_back(oracle.begin_fsync(file, scheduler.steps(), "sync of " + scenario.files[file]));
    }
    SIM_LIVE(ids);
    if (execute(call) == model::OpResult::ok) {
        for (std::size_t id : ids) oracle.end_fsync(id, scheduler.steps());
    }
}
}  // namespace runner
