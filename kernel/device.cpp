#define FUSE_USE_VERSION 31
#include "kernel/device.hpp"

#include <fcntl.h>
#include <fuse.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace kernel {
namespace {

/// The server's state (the child process has nothing else).
struct Server {
    int image = -1;
    int log = -1;
    int payload = -1;
    std::uint64_t size = 0;
    std::uint64_t payload_end = 0;
};

auto server() -> Server& {
    return *static_cast<Server*>(fuse_get_context()->private_data);
}

void append(const LogRecord& record) {
    Server& s = server();
    [[maybe_unused]] const ssize_t wrote = write(s.log, &record, sizeof record);
}

auto op_getattr(const char* path, struct stat* st, fuse_file_info* /*fi*/) -> int {
    std::memset(st, 0, sizeof *st);
    const std::string name = path;
    if (name == "/") {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
    } else if (name == "/disk" || name == "/ctl") {
        st->st_mode = S_IFREG | 0600;
        st->st_nlink = 1;
        st->st_size = name == "/disk" ? static_cast<off_t>(server().size) : 0;
    } else {
        return -ENOENT;
    }
    return 0;
}

auto op_open(const char* path, fuse_file_info* fi) -> int {
    const std::string name = path;
    if (name != "/disk" && name != "/ctl") return -ENOENT;
    fi->direct_io = 1;  // no page cache of the FUSE file between the loop device and the log
    fi->keep_cache = 0;
    return 0;
}

auto op_read(const char* path, char* buffer, size_t size, off_t offset, fuse_file_info* /*fi*/) -> int {
    if (std::string(path) != "/disk") return 0;
    const ssize_t got = pread(server().image, buffer, size, offset);
    return got < 0 ? -errno : static_cast<int>(got);
}

auto op_write(const char* path, const char* buffer, size_t size, off_t offset, fuse_file_info* /*fi*/)
    -> int {
    Server& s = server();
    if (std::string(path) == "/ctl") {
        std::uint64_t number = 0;
        std::memcpy(&number, buffer, std::min(size, sizeof number));
        append({LogRecord::Kind::marker, 0, number, 0, 0});
        return static_cast<int>(size);
    }
    if (pwrite(s.image, buffer, size, offset) != static_cast<ssize_t>(size)) return -EIO;
    if (pwrite(s.payload, buffer, size, static_cast<off_t>(s.payload_end)) != static_cast<ssize_t>(size))
        return -EIO;
    append({LogRecord::Kind::write, 0, static_cast<std::uint64_t>(offset), size, s.payload_end});
    s.payload_end += size;
    return static_cast<int>(size);
}

auto op_fsync(const char* path, int /*datasync*/, fuse_file_info* /*fi*/) -> int {
    if (std::string(path) == "/disk") append({LogRecord::Kind::flush, 0, 0, 0, 0});
    return 0;
}

auto op_fallocate(const char* path, int mode, off_t offset, off_t length, fuse_file_info* /*fi*/) -> int {
    if (std::string(path) != "/disk") return -EOPNOTSUPP;
    const bool zeroes = (mode & FALLOC_FL_ZERO_RANGE) != 0;
    if (fallocate(server().image, mode, offset, length) != 0) return -errno;
    append({zeroes ? LogRecord::Kind::zeroes : LogRecord::Kind::discard, 0,
            static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(length), 0});
    return 0;
}

auto op_readdir(const char* /*path*/, void* buffer, fuse_fill_dir_t fill, off_t /*offset*/,
                fuse_file_info* /*fi*/, fuse_readdir_flags /*flags*/) -> int {
    for (const char* name : {".", "..", "disk", "ctl"}) fill(buffer, name, nullptr, 0, fuse_fill_dir_flags{});
    return 0;
}

auto op_init(fuse_conn_info* conn, fuse_config* config) -> void* {
    conn->max_write = 1U << 20;  // one FUSE write per loop request up to 1 MiB
    config->direct_io = 1;
    config->kernel_cache = 0;
    return fuse_get_context()->private_data;
}

/// The child: serve until the mount goes away, one request at a time (the
/// order of the log is the order served).
[[noreturn]] void serve(const std::string& mount_point, Server state) {
    signal(SIGINT, SIG_IGN);  // the parent unmounts it once what runs over it is gone
    signal(SIGTERM, SIG_IGN);
    fuse_operations ops{};
    ops.getattr = op_getattr;
    ops.open = op_open;
    ops.read = op_read;
    ops.write = op_write;
    ops.fsync = op_fsync;
    ops.fallocate = op_fallocate;
    ops.readdir = op_readdir;
    ops.init = op_init;
    std::vector<std::string> words{"crashsim-kernel-device"};
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
    fuse* f = fuse_new(&args, &ops, sizeof ops, &state);
    if (f == nullptr || fuse_mount(f, mount_point.c_str()) != 0) _exit(3);
    const int code = fuse_loop(f);
    fuse_unmount(f);
    fuse_destroy(f);
    _exit(code == 0 ? 0 : 4);
}

auto open_or_throw(const std::string& path, int flags) -> int {
    const int fd = open(path.c_str(), flags | O_CLOEXEC, 0600);
    if (fd < 0) throw HostError("open " + path + ": " + std::strerror(errno));
    return fd;
}

}  // namespace

LoggingDevice::LoggingDevice(Host& host, const std::string& dir, const std::string& image, std::uint64_t size)
    : host_(host), mount_(make_dir(dir, "device")), log_path_(dir + "/device.log"),
      payload_path_(dir + "/device.payload") {
    Server state;
    state.size = size;
    state.image = open_or_throw(image, O_RDWR);
    state.log = open_or_throw(log_path_, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
    state.payload = open_or_throw(payload_path_, O_WRONLY | O_CREAT | O_TRUNC);
    const pid_t pid = fork();
    if (pid < 0) throw HostError(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) serve(mount_, state);
    close(state.image);
    close(state.log);
    close(state.payload);
    const std::string mount_point = mount_;
    handle_ = host_.made("FUSE server (pid " + std::to_string(pid) + ") at " + mount_, [mount_point, pid] {
        if (umount2(mount_point.c_str(), 0) != 0) umount2(mount_point.c_str(), MNT_DETACH);
        int status = 0;
        for (int i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (waitpid(pid, &status, WNOHANG) == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
    });
    struct stat st {};
    for (int i = 0; i < 500; i++) {
        if (stat(disk_path().c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) == size) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw HostError("the FUSE server did not come up at " + mount_);
}

void LoggingDevice::mark(std::uint64_t number) const {
    const int fd = open_or_throw(mount_ + "/ctl", O_WRONLY);
    const ssize_t wrote = pwrite(fd, &number, sizeof number, 0);
    close(fd);
    if (wrote != static_cast<ssize_t>(sizeof number))
        throw HostError("marker write to " + mount_ + "/ctl failed");
}

void LoggingDevice::stop() {
    host_.undo(handle_);
}

auto LoggingDevice::records() const -> std::vector<LogRecord> {
    const int fd = open_or_throw(log_path_, O_RDONLY);
    std::vector<LogRecord> records;
    LogRecord record;
    while (read(fd, &record, sizeof record) == static_cast<ssize_t>(sizeof record)) records.push_back(record);
    close(fd);
    return records;
}

auto LoggingDevice::payload(const LogRecord& record) const -> std::vector<std::uint8_t> {
    std::vector<std::uint8_t> bytes(record.length);
    const int fd = open_or_throw(payload_path_, O_RDONLY);
    const ssize_t got = pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(record.payload));
    close(fd);
    if (got != static_cast<ssize_t>(bytes.size())) throw HostError("short read of the device payload log");
    return bytes;
}

}  // namespace kernel
