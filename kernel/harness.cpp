#include "kernel/harness.hpp"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernel/device.hpp"
#include "kernel/host.hpp"
#include "kernel/pattern.hpp"
#include "runner/runner.hpp"
#include "sim/dfs.hpp"
#include "sim/stop.hpp"

namespace kernel {
namespace {

constexpr std::uint64_t mib = 1024 * 1024;

/// The device's size: the scenario's, at least what mkfs accepts
/// (mkfs.btrfs: 114294784 bytes per device).
auto image_bytes(const loader::Scenario& scenario, FsType type) -> std::uint64_t {
    const std::uint64_t wanted = scenario.device.blocks * scenario.device.block_size;
    const std::uint64_t least = type == FsType::btrfs ? 128 * mib : 32 * mib;
    return (std::max(wanted, least) + mib - 1) / mib * mib;
}

void write_canary(const std::string& path, std::uint64_t bytes, std::uint32_t block_size) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw HostError("open " + path + ": " + std::strerror(errno));
    std::vector<std::uint8_t> chunk(mib);
    for (std::uint64_t at = 0; at < bytes; at += mib) {
        fill_canary(chunk, at / block_size, block_size);
        if (pwrite(fd, chunk.data(), chunk.size(), static_cast<off_t>(at)) !=
            static_cast<ssize_t>(chunk.size())) {
            close(fd);
            throw HostError("write " + path + ": " + std::strerror(errno));
        }
    }
    close(fd);
}

/// mkfs without discard (a discard would punch the canary), lazy init off
/// for ext4 (no background inode-table writes after mount).
auto mkfs_argv(FsType type, const std::string& device) -> std::vector<std::string> {
    switch (type) {
        case FsType::ext4:
            return {"mkfs.ext4",
                    "-q",
                    "-F",
                    "-b",
                    "4096",
                    "-E",
                    "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
                    device};
        case FsType::xfs:
            return {"mkfs.xfs", "-q", "-f", "-K", device};
        case FsType::btrfs:
            return {"mkfs.btrfs", "-q", "-f", "-K", device};
    }
    return {};
}

auto mount_options(FsType type) -> std::string {
    switch (type) {
        case FsType::ext4:
            return "data=ordered";
        case FsType::xfs:
            return "";
        case FsType::btrfs:
            return "nodiscard";  // discard=async since 6.2 would punch freed blocks
    }
    return "";
}

auto joined(const std::vector<std::string>& words) -> std::string {
    std::string text;
    for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
    return text;
}

/// The workload part of the real log as requests.
auto real_traffic(const std::vector<LogRecord>& records, std::uint64_t from_marker, std::uint64_t to_marker)
    -> Traffic {
    Traffic traffic;
    bool inside = false;
    for (const LogRecord& record : records) {
        if (record.kind == LogRecord::Kind::marker) {
            if (record.offset == from_marker) inside = true;
            if (record.offset == to_marker) break;
            continue;
        }
        if (!inside) continue;
        if (record.kind == LogRecord::Kind::flush) {
            traffic.flushes++;
            traffic.requests.push_back("FLUSH");
        } else {
            traffic.writes++;
            traffic.bytes += record.length;
            const char* what = record.kind == LogRecord::Kind::write     ? "W "
                               : record.kind == LogRecord::Kind::discard ? "DISCARD "
                                                                         : "ZEROES ";
            traffic.requests.push_back(what + std::to_string(record.length) + "@" +
                                       std::to_string(record.offset / 4096));
        }
    }
    return traffic;
}

auto uses_op(const loader::Scenario& scenario, const std::string& name) -> bool {
    bool used = false;
    for (const loader::Op& op : scenario.setup) used = used || op.name == name;
    for (const loader::Task& task : scenario.tasks) {
        for (const loader::Op& op : task.ops) used = used || op.name == name;
    }
    return used;
}

/// fs.xfs.xfssyncd_centisecs at log_worker_centisecs, restored at undo: the
/// log worker is queued at mount with the value then in force.
void quicken_log_worker(Host& host) {
    const std::string path = "/proc/sys/fs/xfs/xfssyncd_centisecs";
    std::string before = must_run({"cat", path});
    while (!before.empty() && (before.back() == '\n' || before.back() == ' ')) before.pop_back();
    if (before.empty() || before.find_first_not_of("0123456789") != std::string::npos) {
        throw HostError(path + ": expected a number, got " + before);
    }
    must_run({"sh", "-c", "echo " + std::to_string(log_worker_centisecs) + " > " + path});
    host.made("fs.xfs.xfssyncd_centisecs at " + std::to_string(log_worker_centisecs), [path, before] {
        run_command({"sh", "-c", "echo " + before + " > " + path});
    });
}

auto release() -> std::string {
    utsname name{};
    uname(&name);
    return name.release;
}

}  // namespace

namespace {

/// The variant to compare with, and why.
auto pick_variant(const loader::Scenario& scenario, const std::string& asked, const std::string& release,
                  std::string& why) -> const loader::Variant* {
    if (!asked.empty()) {
        const loader::Variant* variant = scenario.find_variant(asked);
        if (variant == nullptr) {
            throw loader::InputError(scenario.path +
                                     ": --variant: expected one of the scenario's variants, got " + asked);
        }
        why = "named by --variant";
        return variant;
    }
    for (const loader::Variant& variant : scenario.variants) {
        const std::string& name = variant.name;
        if (name.size() > 1 && name[0] == 'v' && release.rfind(name.substr(1) + ".", 0) == 0) {
            why = "it names the running kernel " + release;
            return &variant;
        }
    }
    const model::ModelInfo* info = model::find_model(scenario.model);
    for (const loader::Variant& variant : scenario.variants) {
        bool defaults = true;
        for (const model::KnobInfo& knob : info->knobs) {
            const auto found = variant.config.find(knob.name);
            defaults = defaults && (found == variant.config.end() || found->second == knob.default_value);
        }
        if (defaults) {
            why = "no variant names " + release +
                  "; this one sets every knob to the model's default, the model's "
                  "newest kernel";
            return &variant;
        }
    }
    why = "no variant names " + release + " and none has every knob at its default: the scenario's first";
    return &scenario.variants.front();
}

auto model_traffic(const runner::RunOutcome& outcome) -> Traffic {
    Traffic traffic;
    for (const sim::TraceLine& line : outcome.lines) {
        if (line.kind != sim::TraceLine::Kind::io_submit) continue;
        if (line.text.rfind("FLUSH", 0) == 0) {
            traffic.flushes++;
            traffic.requests.push_back("FLUSH");
            continue;
        }
        // "W(what[, FUA]) N block(s) at B"
        const bool fua = line.text.find(", FUA)") != std::string::npos;
        const std::size_t close = line.text.find(") ");
        const std::string what = line.text.substr(2, line.text.find_first_of(",)") - 2);
        const std::uint64_t count = std::stoull(line.text.substr(close + 2));
        const std::string block = line.text.substr(line.text.rfind(' ') + 1);
        traffic.writes++;
        traffic.fua += fua ? 1 : 0;
        traffic.bytes += count * 4096;
        traffic.requests.push_back(std::string(fua ? "W+FUA " : "W ") + std::to_string(count * 4096) + "@" +
                                   block + " (" + what + ")");
    }
    return traffic;
}

auto verdict_text(const runner::RunOutcome& outcome) -> std::string {
    if (outcome.violated()) {
        return "violates " + outcome.violations.front().checker + ": " + outcome.violations.front().message;
    }
    return "holds in the " + std::to_string(outcome.crash_states) + " crash state(s) it judged";
}

auto expectation_text(const loader::Variant& variant) -> std::string {
    switch (variant.expect.kind) {
        case loader::Expectation::Kind::violates:
            return "violates " + variant.expect.checker;
        case loader::Expectation::Kind::holds:
            return "holds";
        case loader::Expectation::Kind::measure:
            return "measure (a performance variant)";
    }
    return "";
}

}  // namespace

auto model_side(const loader::Scenario& scenario, const std::string& variant, const std::string& release)
    -> ModelSide {
    ModelSide side;
    const loader::Variant* chosen = pick_variant(scenario, variant, release, side.why);
    side.variant = chosen->name;
    side.expectation = expectation_text(*chosen);
    // The same sequential schedule: the tasks in the real run's order, each to its end.
    loader::Scenario sequential = scenario;
    std::vector<loader::Task> tasks;
    for (const loader::Task* task : task_order(scenario)) tasks.push_back(*task);
    sequential.tasks = std::move(tasks);
    sequential.schedule.clear();
    // The first schedule of a search without preemptions (each task runs
    // until it blocks or ends), no I/O reordering or daemon wake-up, crash
    // states after every step with the search's subsets of unflushed writes.
    runner::Simulation simulation(sequential, *chosen);
    loader::ExploreBounds bounds = sequential.explore;
    bounds.io_reorders = 0;
    bounds.daemon_wakeups = 0;
    bounds.recovery_crashes = 0;  // the real states cut no recovery either
    simulation.set_bounds(bounds);
    sim::DfsTree tree(0, true);
    const runner::RunOutcome outcome = simulation.run_dfs(tree, true);
    side.sequential = verdict_text(outcome);
    side.states = outcome.crash_states;
    const std::vector<std::string> names = simulation.checker_names();
    for (std::size_t i = 0; i < names.size(); i++) {
        std::string text =
            "holds, " + std::to_string(i < outcome.judged.size() ? outcome.judged[i] : 0) + " at stake";
        for (const checkers::Violation& violation : outcome.violations) {
            if (violation.checker == names[i]) text = "VIOLATED: " + violation.message;
        }
        side.checkers[names[i]] = text;
    }
    side.traffic = model_traffic(outcome);
    return side;
}

namespace {

/// The markers around the workload: after the set-up, and the crash point.
struct WorkloadMarkers {
    std::uint64_t workload = 0;
    std::uint64_t crash = 0;
};

/// mkfs and mount on a loop device over the logging device, the set-up and
/// the tasks, then the unmount, the loop device's detach and the server's
/// end (what they write lies past the crash marker).
auto run_workload(Host& host, const loader::Scenario& scenario, LoggingDevice& device,
                  const std::string& scratch, KernelReport& report) -> WorkloadMarkers {
    const FsType type = fs_type_of(scenario.model);
    const auto [loop, loop_handle] = attach_loop(host, device.disk_path(), true);
    const std::vector<std::string> mkfs = mkfs_argv(type, loop);
    report.mkfs = joined(mkfs);
    must_run(mkfs, {"TEST_DIR=/tmp", "TEST_DEV=" + loop, "QA_CHECK_FS=1"});
    const std::string root = make_dir(scratch, "fs");
    if (type == FsType::xfs && uses_op(scenario, "log_force")) quicken_log_worker(host);
    std::size_t mount_handle = 0;
    std::string error;
    if (!mount_fs(host, loop, root, report.fs, report.mount_options, mount_handle, error)) {
        throw HostError(error);
    }
    std::uint64_t markers = 0;
    const auto mark = [&] {
        device.mark(++markers);
        return markers;
    };
    RealWorkload workload(scenario, type, root);
    WorkloadMarkers result;
    for (const loader::Op& op : scenario.setup) workload.run(op, "", mark);
    result.workload = mark();
    for (const loader::Task* task : task_order(scenario)) {
        for (const loader::Op& op : task->ops) {
            if (sim::stop_requested()) throw HostError("interrupted");
            workload.run(op, task->name, mark);
        }
    }
    result.crash = mark();
    host.undo(mount_handle);
    host.undo(loop_handle);
    device.stop();
    report.ran = workload.ran();
    return result;
}

}  // namespace

auto run_kernel(const loader::Scenario& scenario, const std::string& variant,
                const std::function<void(const std::string&)>& phase) -> KernelReport {
    if (const std::string why = refusal(scenario); !why.empty()) {
        throw loader::InputError(scenario.path + ": " + why);
    }
    if (const std::string missing = missing_requirements(); !missing.empty()) {
        throw HostError("the machine lacks " + missing);
    }
    KernelReport report;
    report.kernel_release = release();
    const FsType type = fs_type_of(scenario.model);
    report.fs = fs_name(type);
    report.mount_options = mount_options(type);
    report.image_bytes = image_bytes(scenario, type);
    for (const loader::Task* task : task_order(scenario)) report.task_order.push_back(task->name);
    // The model first: a refused variant or schedule stops the run before anything is made.
    phase("model");
    report.model = model_side(scenario, variant, report.kernel_release);
    Host host;
    const std::string scratch = make_scratch(host);
    const std::string canary = scratch + "/canary.img";
    const std::string disk = scratch + "/disk.img";
    write_canary(canary, report.image_bytes, scenario.device.block_size);
    write_canary(disk, report.image_bytes, scenario.device.block_size);
    phase("workload");
    LoggingDevice device(host, scratch, disk, report.image_bytes);
    const WorkloadMarkers markers = run_workload(host, scenario, device, scratch, report);
    const std::vector<LogRecord> records = device.records();
    report.log_records = records.size();
    report.traffic = real_traffic(records, markers.workload, markers.crash);
    phase("crash states");
    const CrashInput input{scenario, type,    report.ran,       records,       device,
                           canary,   scratch, markers.workload, markers.crash, report.mount_options};
    report.judgement = judge_crash_states(host, input);
    if (sim::stop_requested()) throw HostError("interrupted");
    return report;
}

}  // namespace kernel
