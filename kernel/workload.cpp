#include "kernel/workload.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "kernel/host.hpp"
#include "kernel/pattern.hpp"
#include "model/info.hpp"
#include "sim/assert.hpp"

// Not in every distribution's uapi headers: the values of include/uapi/linux.
#ifndef XFS_IOC_GOINGDOWN
#define XFS_IOC_GOINGDOWN _IOR('X', 125, std::uint32_t)
#endif
#ifndef EXT4_IOC_SHUTDOWN
#define EXT4_IOC_SHUTDOWN _IOR('X', 125, std::uint32_t)
#endif
#ifndef EXT4_IOC_CHECKPOINT
#define EXT4_IOC_CHECKPOINT _IOW('f', 43, std::uint32_t)
#endif
#ifndef BTRFS_IOC_START_SYNC
#define BTRFS_IOC_START_SYNC _IOR(0x94, 24, std::uint64_t)
#define BTRFS_IOC_WAIT_SYNC _IOW(0x94, 22, std::uint64_t)
#endif

namespace kernel {
namespace {

constexpr std::uint32_t going_flags_logflush = 1;  // XFS_FSOP_GOING_FLAGS_LOGFLUSH, EXT4_GOING_FLAGS_LOGFLUSH

auto flag(const loader::Op& op, const std::string& name) -> bool {
    const auto found = op.flags.find(name);
    return found != op.flags.end() && found->second;
}

/// Operations without a real counterpart, and why, by file system.
auto unmapped(const std::string& name, FsType type) -> std::string {
    if (name == "shrink") {
        return "the jbd2 checkpoint shrinker runs only under memory pressure, and drop_caches would also "
               "evict "
               "every clean inode and dentry";
    }
    if (name == "log_force" && type != FsType::xfs) return "it is xfs's log worker";
    if (name == "shutdown" && type == FsType::btrfs) return "btrfs rejects XFS_IOC_GOINGDOWN";
    static const std::vector<std::string> known{
        "create", "write",  "fsync",    "sync",       "writeback", "sync_file_range", "release_pages",
        "falloc", "fpunch", "fzero",    "truncate",   "unlink",    "mkdir",           "rmdir",
        "freeze", "thaw",   "shutdown", "checkpoint", "commit",    "log_force"};
    if (std::find(known.begin(), known.end(), name) == known.end())
        return "the harness maps no system call to it";
    return {};
}

/// open(2), failing the operation with errno.
auto open_file(const std::string& path, int flags, RanOp& ran) -> int {
    const int fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) ran.error = "open " + path + ": " + std::strerror(errno);
    return fd;
}

/// Runs `call` on an open file descriptor and closes it; ok when it returns 0.
template <class Call>
void with_fd(const std::string& path, int flags, RanOp& ran, Call&& call) {
    const int fd = open_file(path, flags, ran);
    if (fd < 0) return;
    const int result = call(fd);
    if (result != 0) ran.error = std::strerror(errno);
    ran.ok = result == 0;
    close(fd);
}

void real_write(const loader::Op& op, const std::string& path, std::uint32_t file,
                std::uint32_t block_size, RanOp& ran) {
    const bool direct = flag(op, "direct");
    void* raw = nullptr;
    if (posix_memalign(&raw, 4096, std::max<std::uint64_t>(op.length, 8)) != 0) return;
    std::unique_ptr<void, decltype(&std::free)> buffer(raw, &std::free);
    auto* bytes = static_cast<std::uint8_t*>(raw);
    fill_data({bytes, op.length}, file, op.offset, ran.version, block_size);
    with_fd(path, O_WRONLY | (direct ? O_DIRECT : 0), ran, [&](int fd) {
        const ssize_t wrote = pwrite(fd, bytes, op.length, static_cast<off_t>(op.offset));
        if (wrote >= 0 && static_cast<std::uint64_t>(wrote) != op.length) errno = ENOSPC;
        return wrote == static_cast<ssize_t>(op.length) ? 0 : -1;
    });
}

auto range_length(const loader::Op& op) -> off_t {
    return op.has_length ? static_cast<off_t>(op.length) : 0;  // 0: to the end of the file
}

}  // namespace

auto fs_type_of(const std::string& model) -> FsType {
    if (model == "xfs") return FsType::xfs;
    if (model == "btrfs") return FsType::btrfs;
    return FsType::ext4;
}

auto fs_name(FsType type) -> std::string {
    switch (type) {
        case FsType::ext4:
            return "ext4";
        case FsType::xfs:
            return "xfs";
        case FsType::btrfs:
            return "btrfs";
    }
    return "ext4";
}

auto task_order(const loader::Scenario& scenario) -> std::vector<const loader::Task*> {
    std::vector<const loader::Task*> order;
    const auto add = [&](const std::string& name) {
        for (const loader::Task& task : scenario.tasks) {
            if (task.name == name && std::find(order.begin(), order.end(), &task) == order.end()) {
                order.push_back(&task);
            }
        }
    };
    for (const loader::ScheduleStep& step : scenario.schedule) {
        if (step.kind == loader::ScheduleStep::Kind::run) add(step.task);
    }
    for (const loader::Task& task : scenario.tasks) add(task.name);
    return order;
}

auto refusal(const loader::Scenario& scenario) -> std::string {
    if (scenario.fio || scenario.fs_mark || scenario.create_unlink) {
        return "a generated workload (fio, fs_mark, create_unlink) is a performance run: the harness runs "
               "listed "
               "operations only";
    }
    if (scenario.faults.budget > 0 || scenario.device.lying_cache) {
        return "injected device faults and a lying write cache are the model's: the real device has neither";
    }
    if (scenario.files.size() > files_max) return "more than " + std::to_string(files_max) + " files";
    const FsType type = fs_type_of(scenario.model);
    const auto check = [&](const loader::Op& op) -> std::string {
        if (const std::string why = unmapped(op.name, type); !why.empty()) {
            return op.json_path + ": operation `" + op.name + "` has no real counterpart on " +
                   fs_name(type) + ": " + why;
        }
        if ((op.offset % 8 != 0 || op.length % 8 != 0) && op.name == "write") {
            return op.json_path +
                   ": a write's offset and length must be multiples of 8 bytes (the data pattern's word)";
        }
        if (op.name == "write" && (op.offset + op.length) / scenario.device.block_size >= file_blocks_max) {
            return op.json_path + ": a write past file block " + std::to_string(file_blocks_max);
        }
        return {};
    };
    for (const loader::Op& op : scenario.setup) {
        if (std::string why = check(op); !why.empty()) return why;
    }
    for (const loader::Task& task : scenario.tasks) {
        for (const loader::Op& op : task.ops) {
            if (std::string why = check(op); !why.empty()) return why;
        }
    }
    return {};
}

auto mapping_text() -> std::string {
    return "create: open(O_CREAT); write: pwrite of a pattern naming file, block and version (direct: "
           "O_DIRECT); "
           "fsync: fsync; sync: syncfs on the mount; writeback: sync_file_range(WRITE); sync_file_range: "
           "sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER); release_pages: posix_fadvise(DONTNEED), which "
           "starts "
           "writeback of dirty pages first; falloc: fallocate (keep_size: KEEP_SIZE); fpunch: "
           "fallocate(PUNCH_HOLE|KEEP_SIZE); fzero: fallocate(ZERO_RANGE, keep_size: |KEEP_SIZE); truncate: "
           "truncate; unlink, mkdir, rmdir: the same calls; freeze, thaw: FIFREEZE, FITHAW; shutdown: "
           "XFS_IOC_GOINGDOWN (ext4: EXT4_IOC_SHUTDOWN) with LOGFLUSH, as godown -f; checkpoint (ext4): "
           "EXT4_IOC_CHECKPOINT (jbd2_journal_flush: a commit, then every transaction checkpointed); commit "
           "(btrfs): BTRFS_IOC_START_SYNC then BTRFS_IOC_WAIT_SYNC; log_force (xfs): a wait of " +
           std::to_string(log_worker_wait_ms) +
           " ms for xfs_log_worker, which runs xfs_log_force(mp, 0) and "
           "xfs_ail_push_all every fs.xfs.xfssyncd_centisecs, set to " +
           std::to_string(log_worker_centisecs) +
           " (its least) while the harness runs. Refused: shrink, shutdown on btrfs";
}

RealWorkload::RealWorkload(const loader::Scenario& scenario, FsType type, std::string root)
    : scenario_(scenario), type_(type), root_(std::move(root)) {}

void RealWorkload::execute(const loader::Op& op, RanOp& ran) {
    const model::ModelInfo* info = model::find_model(scenario_.model);
    const model::OpInfo* op_info = model::find_op(*info, op.name);
    const model::OracleEffect effect = op_info->effect;
    if (effect == model::OracleEffect::write_data || effect == model::OracleEffect::zero_range ||
        effect == model::OracleEffect::punch_hole || effect == model::OracleEffect::set_size) {
        ran.version = ++versions_;
    }
    const std::string file = path(op);
    const std::string& name = op.name;
    const auto status = [&](int result) {
        ran.ok = result == 0;
        if (!ran.ok) ran.error = std::strerror(errno);
    };
    const auto on_root = [&](auto&& call) { with_fd(root_, O_RDONLY | O_DIRECTORY, ran, call); };
    if (op_info->creates_file && !op_info->makes_directory) {
        with_fd(file, O_WRONLY | O_CREAT | O_EXCL, ran, [](int) { return 0; });
    } else if (op_info->makes_directory || name == "mkdir") {
        status(mkdir(file.c_str(), 0755));
    } else if (name == "write") {
        real_write(op, file, scenario_.file_id(op.file), scenario_.device.block_size, ran);
    } else if (name == "fsync") {
        with_fd(file, O_RDONLY, ran, [](int fd) { return fsync(fd); });
    } else if (name == "sync") {
        on_root([](int fd) { return syncfs(fd); });
    } else if (name == "writeback" || name == "sync_file_range") {
        const unsigned flags = name == "writeback" ? SYNC_FILE_RANGE_WRITE
                                                   : SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                                         SYNC_FILE_RANGE_WAIT_AFTER;
        with_fd(file, O_RDONLY, ran, [&](int fd) {
            return sync_file_range(fd, static_cast<off_t>(op.offset), range_length(op), flags);
        });
    } else if (name == "release_pages") {
        with_fd(file, O_RDONLY, ran, [&](int fd) {
            const int error =
                posix_fadvise(fd, static_cast<off_t>(op.offset), range_length(op), POSIX_FADV_DONTNEED);
            errno = error;
            return error;
        });
    } else {
        execute_more(op, ran, file);
    }
}

void RealWorkload::execute_more(const loader::Op& op, RanOp& ran, const std::string& file) {
    const std::string& name = op.name;
    const auto status = [&](int result) {
        ran.ok = result == 0;
        if (!ran.ok) ran.error = std::strerror(errno);
    };
    const auto falloc = [&](int mode) {
        with_fd(file, O_WRONLY, ran, [&](int fd) {
            return fallocate(fd, mode, static_cast<off_t>(op.offset), static_cast<off_t>(op.length));
        });
    };
    const int keep = flag(op, "keep_size") ? FALLOC_FL_KEEP_SIZE : 0;
    if (name == "falloc") {
        falloc(keep);
    } else if (name == "fpunch") {
        falloc(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
    } else if (name == "fzero") {
        falloc(FALLOC_FL_ZERO_RANGE | keep);
    } else if (name == "truncate") {
        status(truncate(file.c_str(), static_cast<off_t>(op.length)));
    } else if (name == "unlink") {
        status(unlink(file.c_str()));
    } else if (name == "rmdir") {
        status(rmdir(file.c_str()));
    } else {
        execute_on_root(op, ran);
    }
}

/// The operations on the whole file system: ioctls on its root, and the log worker.
void RealWorkload::execute_on_root(const loader::Op& op, RanOp& ran) {
    const std::string& name = op.name;
    const auto on_root = [&](auto&& call) { with_fd(root_, O_RDONLY | O_DIRECTORY, ran, call); };
    if (name == "freeze" || name == "thaw") {
        on_root([&](int fd) { return ioctl(fd, name == "freeze" ? FIFREEZE : FITHAW, 0); });
    } else if (name == "shutdown") {
        on_root([&](int fd) {
            std::uint32_t flags = going_flags_logflush;
            return ioctl(fd, type_ == FsType::xfs ? XFS_IOC_GOINGDOWN : EXT4_IOC_SHUTDOWN, &flags);
        });
    } else if (name == "checkpoint") {
        on_root([](int fd) {
            std::uint32_t flags = 0;
            return ioctl(fd, EXT4_IOC_CHECKPOINT, &flags);
        });
    } else if (name == "log_force") {
        // No system call forces the xfs log alone: the log worker itself
        // does, every fs.xfs.xfssyncd_centisecs, which the harness sets to
        // its least (log_worker_centisecs) before the mount.
        std::this_thread::sleep_for(std::chrono::milliseconds(log_worker_wait_ms));
        ran.ok = true;
    } else if (name == "commit") {
        on_root([](int fd) {
            std::uint64_t transid = 0;
            if (ioctl(fd, BTRFS_IOC_START_SYNC, &transid) != 0) return -1;
            return ioctl(fd, BTRFS_IOC_WAIT_SYNC, &transid);
        });
    } else {
        throw HostError(op.json_path + ": operation `" + name +
                        "` has no real counterpart");  // refusal() said so
    }
}

namespace {

/// The oracle's side of one operation, split where the real call ran: what
/// the runner's Workload::run tells before the model's call and after it.
struct OracleReplay {
    const loader::Scenario& scenario;
    const model::ModelInfo& info;
    checkers::Oracle oracle;
    std::vector<bool> created;
    std::uint64_t fsyncs = 0;
    std::size_t size_id = 0;
    std::vector<std::size_t> fsync_ids;

    [[nodiscard]] auto first_block(const loader::Op& op) const -> std::uint64_t {
        return op.offset / scenario.device.block_size;
    }
    [[nodiscard]] auto end_block(const loader::Op& op) const -> std::uint64_t {
        return (op.offset + op.length + scenario.device.block_size - 1) / scenario.device.block_size;
    }
    [[nodiscard]] auto extends(const loader::Op& op) const -> bool { return !flag(op, "keep_size"); }

    void begin(const RanOp& ran, model::OracleEffect effect, std::uint32_t file) {
        const loader::Op& op = *ran.op;
        const std::uint32_t block_size = scenario.device.block_size;
        std::uint64_t version = 0;
        switch (effect) {
            case model::OracleEffect::write_data:
                version = oracle.begin_write();
                SIM_ASSERT(version == ran.version);
                size_id = oracle.begin_size(file, false, op.offset + op.length);
                break;
            case model::OracleEffect::zero_range:
            case model::OracleEffect::punch_hole:
                version = oracle.begin_zero(file, first_block(op), end_block(op));
                SIM_ASSERT(version == ran.version);
                if (effect == model::OracleEffect::zero_range && extends(op)) {
                    size_id = oracle.begin_size(file, false, op.offset + op.length);
                }
                break;
            case model::OracleEffect::set_size:
                version = oracle.begin_truncate(file, op.length, block_size);
                SIM_ASSERT(version == ran.version);
                size_id = oracle.begin_size(file, true, op.length);
                break;
            case model::OracleEffect::extend_size:
                if (extends(op)) size_id = oracle.begin_size(file, false, op.offset + op.length);
                break;
            case model::OracleEffect::fsync_file:
                fsync_ids = {oracle.begin_fsync(file, ran.begin_marker,
                                                "fsync #" + std::to_string(++fsyncs) + " of " + op.file)};
                break;
            case model::OracleEffect::sync_all:
                fsync_ids.clear();
                for (std::uint32_t f = 0; f < created.size(); f++) {
                    if (created[f])
                        fsync_ids.push_back(
                            oracle.begin_fsync(f, ran.begin_marker, "sync of " + scenario.files[f]));
                }
                break;
            case model::OracleEffect::remove_file:
                oracle.remove_file(file);  // before the call: the unlink may be durable before it returns
                break;
            case model::OracleEffect::none:
                break;
        }
    }

    void end(const RanOp& ran, model::OracleEffect effect, std::uint32_t file, const model::OpInfo& op_info) {
        const loader::Op& op = *ran.op;
        const std::uint32_t block_size = scenario.device.block_size;
        if (!ran.ok) return;
        switch (effect) {
            case model::OracleEffect::write_data:
                oracle.end_size(file, size_id, op.offset + op.length);
                oracle.end_write(file, first_block(op), end_block(op), ran.version, op.offset + op.length);
                break;
            case model::OracleEffect::zero_range:
            case model::OracleEffect::punch_hole: {
                const bool raises = effect == model::OracleEffect::zero_range && extends(op);
                if (raises) oracle.end_size(file, size_id);
                oracle.end_zero(file, first_block(op), end_block(op), ran.version,
                                raises ? op.offset + op.length : 0);
                break;
            }
            case model::OracleEffect::set_size:
                oracle.end_size(file, size_id);
                oracle.end_truncate(file, op.length, block_size);
                break;
            case model::OracleEffect::extend_size:
                if (extends(op)) oracle.end_size(file, size_id);
                break;
            case model::OracleEffect::fsync_file:
            case model::OracleEffect::sync_all:
                for (std::size_t id : fsync_ids) oracle.end_fsync(id, ran.end_marker);
                break;
            case model::OracleEffect::remove_file:
                created[file] = false;
                break;
            case model::OracleEffect::none:
                if (op_info.creates_file) created[file] = true;
                break;
        }
    }
};

}  // namespace

auto oracle_at(const loader::Scenario& scenario, const std::vector<RanOp>& ran, std::uint64_t marker)
    -> checkers::Oracle {
    const model::ModelInfo& info = *model::find_model(scenario.model);
    OracleReplay replay{scenario,
                        info,
                        checkers::Oracle(scenario.files.size()),
                        std::vector<bool>(scenario.files.size(), false),
                        0,
                        0,
                        {}};
    for (const RanOp& op : ran) {
        if (op.begin_marker > marker) break;
        const model::OpInfo& op_info = *model::find_op(info, op.op->name);
        const std::uint32_t file = op.op->file.empty() ? 0 : scenario.file_id(op.op->file);
        replay.begin(op, op_info.effect, file);
        if (op.end_marker <= marker) replay.end(op, op_info.effect, file, op_info);
    }
    return std::move(replay.oracle);
}

}  // namespace kernel
