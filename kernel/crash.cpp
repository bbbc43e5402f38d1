#include "kernel/crash.hpp"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <memory>

#include "kernel/pattern.hpp"
#include "sim/stop.hpp"

namespace kernel {
namespace {

using Kind = LogRecord::Kind;

/// One crash point: records [0, durable_end) durable, `unflushed` (record
/// indices) in the cache, the oracle as of marker `marker`.
struct Point {
    std::size_t at = 0;
    std::size_t durable_end = 0;
    std::vector<std::size_t> unflushed;
    std::uint64_t marker = 0;
    std::string label;
};

auto changes_disk(const LogRecord& record) -> bool {
    return record.kind == Kind::write || record.kind == Kind::discard || record.kind == Kind::zeroes;
}

/// Every flush after the set-up and the crash marker, as crash points.
auto crash_points(const CrashInput& input) -> std::vector<Point> {
    std::vector<Point> points;
    std::size_t last_flush_end = 0;
    std::uint64_t marker = 0;
    bool workload = false;
    std::uint64_t flushes = 0;
    std::vector<std::size_t> unflushed;
    for (std::size_t i = 0; i < input.records.size(); i++) {
        const LogRecord& record = input.records[i];
        if (record.kind == Kind::marker) {
            marker = record.offset;
            workload = workload || marker >= input.workload_marker;
            if (marker == input.crash_marker) {
                points.push_back({i, last_flush_end, unflushed, marker, "at the crash point"});
                break;
            }
        } else if (record.kind == Kind::flush) {
            flushes++;
            const bool same = !points.empty() && unflushed.empty() && points.back().marker == marker &&
                              points.back().durable_end == last_flush_end;
            if (workload && !same) {
                points.push_back(
                    {i, last_flush_end, unflushed, marker, "before flush " + std::to_string(flushes)});
            }
            last_flush_end = i + 1;
            unflushed.clear();
        } else if (changes_disk(record)) {
            unflushed.push_back(i);
        }
    }
    return points;
}

/// The subsets of a point's unflushed writes to keep, by the scenario's policy.
auto subsets(std::size_t n, loader::UnflushedPolicy policy, bool& capped)
    -> std::vector<std::vector<bool>> {
    using P = loader::UnflushedPolicy;
    std::vector<std::vector<bool>> out;
    if (n == 0 || policy == P::none) return {std::vector<bool>(n, false)};
    if (policy == P::all) return {std::vector<bool>(n, true)};
    if (policy == P::prefix) {
        for (std::size_t k = 0; k <= n && out.size() < subsets_per_point_max; k++) {
            std::vector<bool> keep(n, false);
            std::fill(keep.begin(), keep.begin() + static_cast<std::ptrdiff_t>(k), true);
            out.push_back(keep);
        }
        capped = capped || n + 1 > subsets_per_point_max;
        return out;
    }
    if (n <= any_subset_writes_max) {
        for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << n); mask++) {
            std::vector<bool> keep(n);
            for (std::size_t i = 0; i < n; i++) keep[i] = ((mask >> i) & 1) != 0;
            out.push_back(keep);
        }
        return out;
    }
    out.push_back(std::vector<bool>(n, false));
    out.push_back(std::vector<bool>(n, true));
    for (std::size_t i = 0; i < n && out.size() < subsets_per_point_max; i++) {
        std::vector<bool> keep(n, true);
        keep[i] = false;
        out.push_back(keep);
    }
    capped = true;
    return out;
}

auto open_or_throw(const std::string& path, int flags) -> int {
    const int fd = open(path.c_str(), flags | O_CLOEXEC, 0600);
    if (fd < 0) throw HostError("open " + path + ": " + std::strerror(errno));
    return fd;
}

void copy_file(const std::string& from, const std::string& to) {
    const int in = open_or_throw(from, O_RDONLY);
    const int out = open_or_throw(to, O_WRONLY | O_CREAT | O_TRUNC);
    struct stat st {};
    fstat(in, &st);
    off_t left = st.st_size;
    while (left > 0) {
        const ssize_t copied = copy_file_range(in, nullptr, out, nullptr, static_cast<std::size_t>(left), 0);
        if (copied <= 0) break;
        left -= copied;
    }
    close(in);
    close(out);
    if (left != 0) throw HostError("copy " + from + " to " + to + " failed");
}

/// Applies one logged record to an image file.
void apply(int fd, const LogRecord& record, const LoggingDevice& device) {
    if (record.kind == Kind::write) {
        const std::vector<std::uint8_t> bytes = device.payload(record);
        if (pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(record.offset)) !=
            static_cast<ssize_t>(bytes.size())) {
            throw HostError("write to a crash image failed");
        }
    } else if (record.kind == Kind::discard || record.kind == Kind::zeroes) {
        const std::vector<std::uint8_t> zeros(record.length, 0);
        [[maybe_unused]] const ssize_t wrote =
            pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(record.offset));
    }
}

}  // namespace

namespace {

/// The extents FIEMAP reports, in file blocks. An inline extent (data in a
/// btree leaf or the inode) has no device block: it gets one of its own past
/// the device's blocks, so no two are taken for the same block.
auto extents_of(int fd, std::uint32_t block_size, std::uint64_t& inline_next)
    -> std::vector<model::RecoveredExtent> {
    constexpr std::uint32_t count = 512;
    std::vector<std::uint8_t> buffer(sizeof(fiemap) + count * sizeof(fiemap_extent), 0);
    auto* map = reinterpret_cast<fiemap*>(buffer.data());
    map->fm_start = 0;
    map->fm_length = FIEMAP_MAX_OFFSET;
    map->fm_flags = FIEMAP_FLAG_SYNC;
    map->fm_extent_count = count;
    std::vector<model::RecoveredExtent> extents;
    if (ioctl(fd, FS_IOC_FIEMAP, map) != 0) return extents;
    for (std::uint32_t i = 0; i < map->fm_mapped_extents; i++) {
        const fiemap_extent& e = map->fm_extents[i];
        model::RecoveredExtent extent;
        extent.file_block = e.fe_logical / block_size;
        extent.blocks = (e.fe_logical + e.fe_length + block_size - 1) / block_size - extent.file_block;
        extent.unwritten = (e.fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0;
        const bool no_block = (e.fe_flags & (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED)) != 0;
        extent.device_block = no_block ? inline_next : e.fe_physical / block_size;
        if (no_block) inline_next += extent.blocks;
        extents.push_back(extent);
    }
    return extents;
}

/// One file as mounted: size, content tags per block, extents.
auto read_file(const std::string& path, std::uint32_t id, std::uint32_t block_size,
               std::uint64_t& inline_next) -> model::RecoveredFile {
    model::RecoveredFile file;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return file;
    file.exists = true;
    if (!S_ISREG(st.st_mode)) return file;
    file.size_bytes = static_cast<std::uint64_t>(st.st_size);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return file;
    std::vector<std::uint8_t> block(block_size);
    for (std::uint64_t b = 0; b * block_size < file.size_bytes; b++) {
        std::fill(block.begin(), block.end(), 0);
        const ssize_t got = pread(fd, block.data(), block_size, static_cast<off_t>(b * block_size));
        if (got < 0) {
            file.blocks.assign(b, b + 1, model::disk::Content::meta(0));  // EIO: nothing this file was given
            continue;
        }
        const model::disk::Content content = decode_block(block, id, b);
        if (content.kind != model::disk::ContentKind::zeros) file.blocks.assign(b, b + 1, content);
    }
    file.extents = extents_of(fd, block_size, inline_next);
    close(fd);
    return file;
}

/// The file system's own checker on the unmounted image; the first lines of
/// what it printed when it found a problem.
auto fsck(FsType type, const std::string& image) -> std::optional<std::string> {
    std::vector<std::string> argv;
    switch (type) {
        case FsType::ext4:
            argv = {"e2fsck", "-fn", image};
            break;
        case FsType::xfs:
            argv = {"xfs_repair", "-n", "-f", image};
            break;
        case FsType::btrfs:
            argv = {"btrfs", "check", "--readonly", image};
            break;
    }
    const CommandResult result = run_command(argv);
    if (result.ok()) return std::nullopt;
    std::string text = result.output.substr(0, 400);
    std::replace(text.begin(), text.end(), '\n', ' ');
    return argv[0] + " " + argv[1] + " (status " + std::to_string(result.status) + "): " + text;
}

}  // namespace

/// Mounts `image` (recovery runs), reads every file, unmounts, runs fsck.
auto recover_real(Host& host, const CrashInput& input, const std::string& image) -> model::RecoveredState {
    model::RecoveredState state;
    const std::uint32_t block_size = input.scenario.device.block_size;
    struct stat st {};
    stat(image.c_str(), &st);
    state.device_blocks = input.type == FsType::btrfs
                              ? std::uint64_t{1} << 40  // FIEMAP gives logical addresses
                              : static_cast<std::uint64_t>(st.st_size) / block_size;
    std::uint64_t inline_next = state.device_blocks;
    if (input.type == FsType::btrfs) state.device_blocks += std::uint64_t{1} << 30;
    const auto [loop, loop_handle] = attach_loop(host, image, false);
    const std::string dir = input.scratch + "/state";
    std::size_t mount_handle = 0;
    state.mounted =
        mount_fs(host, loop, dir, fs_name(input.type), input.mount_options, mount_handle, state.mount_error);
    if (state.mounted) {
        for (std::uint32_t id = 0; id < input.scenario.files.size(); id++) {
            state.files.push_back(
                read_file(dir + "/" + input.scenario.files[id], id, block_size, inline_next));
        }
        host.undo(mount_handle);
    }
    host.undo(loop_handle);
    if (input.type == FsType::btrfs) run_command({"btrfs", "device", "scan", "--forget"});
    if (auto error = fsck(input.type, image)) state.consistency_errors.push_back(*error);
    if (!state.mounted) state.files.resize(input.scenario.files.size());
    return state;
}

namespace {

struct Judge {
    const CrashInput& input;
    std::vector<std::unique_ptr<checkers::Checker>> checkers;
    CrashJudgement result;

    explicit Judge(const CrashInput& in) : input(in) {
        for (const std::string& name : checkers::real_kernel_checker_names()) {
            if (name == "mount" && input.scenario.crash.mount_may_fail) continue;
            checkers.push_back(checkers::make_checker(name));
            result.tallies.push_back({name, 0, 0, {}});
        }
    }

    /// Judges one state; the violations found, by checker.
    auto judge(const model::RecoveredState& state, const checkers::Oracle& oracle, const std::string& label)
        -> std::vector<checkers::Violation> {
        const checkers::CheckContext context{input.scenario.files, input.scenario.device.block_size};
        std::vector<checkers::Violation> all;
        for (std::size_t i = 0; i < checkers.size(); i++) {
            std::vector<checkers::Violation> found;
            checkers[i]->check(oracle, state, context, found);
            CheckerTally& tally = result.tallies[i];
            if (checkers[i]->at_stake(oracle, state, context)) tally.judged++;
            if (found.empty()) continue;
            tally.violated++;
            if (tally.first.empty()) tally.first = label + ": " + found.front().message;
            all.insert(all.end(), found.begin(), found.end());
        }
        return all;
    }
};

auto keep_text(const std::vector<bool>& keep) -> std::string {
    std::size_t kept = 0;
    for (bool k : keep) kept += k ? 1 : 0;
    return std::to_string(kept) + " of " + std::to_string(keep.size()) + " unflushed write(s) kept";
}

/// The newest durable write at `point` that holds data a returned fsync
/// promised (its file, block and version) of a file no unlink has begun on,
/// that no later durable record overwrites; the record index, or none.
auto promised_write(const CrashInput& input, const Point& point, const checkers::Oracle& oracle)
    -> std::optional<std::size_t> {
    const std::uint32_t block_size = input.scenario.device.block_size;
    for (std::size_t i = point.durable_end; i-- > 0;) {
        const LogRecord& record = input.records[i];
        if (record.kind != Kind::write) continue;
        const std::vector<std::uint8_t> bytes = input.device.payload(record);
        bool promised = false;
        for (std::size_t at = 0; at + block_size <= bytes.size() && !promised; at += block_size) {
            const DataTag tag = tag_of({bytes.data() + at, block_size});
            if (!tag.data) continue;
            for (const checkers::Promise& promise : oracle.promises()) {
                const auto content = promise.contents.find(tag.block);
                promised =
                    promised ||
                    (promise.returned && promise.file == tag.file && !oracle.removed(tag.file) && content &&
                     content->kind == model::disk::ContentKind::data && content->version == tag.version);
            }
        }
        if (!promised) continue;
        bool overwritten = false;
        for (std::size_t j = i + 1; j < point.durable_end; j++) {
            const LogRecord& later = input.records[j];
            overwritten =
                overwritten || (changes_disk(later) && later.offset < record.offset + record.length &&
                                record.offset < later.offset + later.length);
        }
        if (!overwritten) return i;
    }
    return std::nullopt;
}

/// The negative control: the crash point's durable image without one
/// promised write must fail fsync_durability.
void negative_control(Host& host, Judge& judge, const Point& point) {
    const CrashInput& input = judge.input;
    const checkers::Oracle oracle = oracle_at(input.scenario, input.ran, point.marker);
    const std::optional<std::size_t> dropped = promised_write(input, point, oracle);
    CrashJudgement& result = judge.result;
    if (!dropped) {
        result.control_text = "no durable write holds data a returned fsync promised: nothing for it to lose";
        return;
    }
    const std::string image = input.scratch + "/control.img";
    copy_file(input.canary_image, image);
    const int fd = open_or_throw(image, O_RDWR);
    for (std::size_t i = 0; i < point.durable_end; i++) {
        if (i != *dropped) apply(fd, input.records[i], input.device);
    }
    close(fd);
    const model::RecoveredState state = recover_real(host, input, image);
    std::unique_ptr<checkers::Checker> checker = checkers::make_checker("fsync_durability");
    std::vector<checkers::Violation> found;
    checker->check(oracle, state, {input.scenario.files, input.scenario.device.block_size}, found);
    const LogRecord& record = input.records[*dropped];
    result.control_ran = true;
    result.control_caught = !found.empty();
    result.control_text =
        "dropped durable write #" + std::to_string(*dropped) + " (" + std::to_string(record.length) +
        " bytes at " + std::to_string(record.offset) + ") " + point.label + ": " +
        (found.empty() ? "NOT caught: fsync_durability held" : "caught: " + found.front().message);
    std::remove(image.c_str());
}

}  // namespace

auto judge_crash_states(Host& host, const CrashInput& input) -> CrashJudgement {
    Judge judge(input);
    CrashJudgement& result = judge.result;
    const std::vector<Point> points = crash_points(input);
    const std::string durable = input.scratch + "/durable.img";
    const std::string image = input.scratch + "/state.img";
    make_dir(input.scratch, "state");
    copy_file(input.canary_image, durable);
    const int durable_fd = open_or_throw(durable, O_RDWR);
    std::size_t applied = 0;
    for (const Point& point : points) {
        if (sim::stop_requested()) break;
        for (; applied < point.durable_end; applied++)
            apply(durable_fd, input.records[applied], input.device);
        const checkers::Oracle oracle = oracle_at(input.scenario, input.ran, point.marker);
        result.points++;
        for (const std::vector<bool>& keep :
             subsets(point.unflushed.size(), input.scenario.crash.unflushed, result.capped)) {
            if (result.states >= crash_states_max || sim::stop_requested()) {
                result.capped = true;
                break;
            }
            copy_file(durable, image);
            const int fd = open_or_throw(image, O_RDWR);
            for (std::size_t i = 0; i < keep.size(); i++) {
                if (keep[i]) apply(fd, input.records[point.unflushed[i]], input.device);
            }
            close(fd);
            judge.judge(recover_real(host, input, image), oracle, point.label + ", " + keep_text(keep));
            result.states++;
        }
    }
    close(durable_fd);
    if (!points.empty() && !sim::stop_requested()) negative_control(host, judge, points.back());
    result.cap_text = "at most " + std::to_string(subsets_per_point_max) +
                      " subsets per crash point (every subset of up to " +
                      std::to_string(any_subset_writes_max) +
                      " unflushed writes; past it none, all, and each dropped alone) and " +
                      std::to_string(crash_states_max) + " crash states per run";
    return result;
}

}  // namespace kernel
