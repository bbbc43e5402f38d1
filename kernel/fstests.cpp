#include "kernel/fstests.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kernel {
namespace {

constexpr std::uint64_t image_size = 25 * 1024 * 1024;  // generic/042's size=25M

void fill_cd(const std::string& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw HostError("open " + path + ": " + std::strerror(errno));
    const std::vector<std::uint8_t> chunk(1024 * 1024, 0xCD);
    for (std::uint64_t at = 0; at < image_size; at += chunk.size()) {
        if (pwrite(fd, chunk.data(), chunk.size(), static_cast<off_t>(at)) !=
            static_cast<ssize_t>(chunk.size())) {
            close(fd);
            throw HostError("write " + path + ": " + std::strerror(errno));
        }
    }
    close(fd);
}

/// The file's size and its 0xCD and 0x01 bytes.
void read_back(const std::string& path, Generic042Case& result) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        result.error = "open " + path + ": " + std::strerror(errno);
        return;
    }
    std::vector<std::uint8_t> buffer(65536);
    for (;;) {
        const ssize_t got = read(fd, buffer.data(), buffer.size());
        if (got <= 0) break;
        result.size += static_cast<std::uint64_t>(got);
        for (ssize_t i = 0; i < got; i++) {
            result.stale_bytes += buffer[static_cast<std::size_t>(i)] == 0xCD ? 1 : 0;
            result.ones += buffer[static_cast<std::size_t>(i)] == 0x01 ? 1 : 0;
        }
    }
    close(fd);
}

/// One _crashtest CMD of generic/042.
auto crashtest(const std::string& scratch, const std::string& command) -> Generic042Case {
    Generic042Case result;
    result.command = command;
    Host host;
    const std::string image = scratch + "/042.img";
    const std::string mnt = scratch + "/042.mnt";
    fill_cd(image);
    must_run({"mkfs.xfs", "-q", "-f", image}, {"TEST_DIR=/tmp", "TEST_DEV=" + image, "QA_CHECK_FS=1"});
    const auto [loop, loop_handle] = attach_loop(host, image, false);
    std::size_t mount_handle = 0;
    if (!mount_fs(host, loop, mnt, "xfs", "", mount_handle, result.error)) return result;
    must_run({"xfs_io", "-f", "-c", "pwrite -S 1 0 64k", "-c", command + " 60k 4k", mnt + "/file"});
    must_run({"xfs_io", "-x", "-c", "shutdown -f", mnt});
    host.undo(mount_handle);
    result.mounted = mount_fs(host, loop, mnt, "xfs", "", mount_handle, result.error);
    if (result.mounted) read_back(mnt + "/file", result);
    return result;
}

}  // namespace

auto run_generic_042() -> std::vector<Generic042Case> {
    Host host;
    const std::string scratch = make_scratch(host);
    make_dir(scratch, "042.mnt");
    std::vector<Generic042Case> cases;
    for (const char* command : {"falloc -k", "fpunch", "fzero -k"})
        cases.push_back(crashtest(scratch, command));
    return cases;
}

}  // namespace kernel
