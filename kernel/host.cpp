#include "kernel/host.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace kernel {
namespace {

/// The child's side of run_command: output to the pipe, the environment, exec.
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                             int out) {
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    for (const std::string& pair : env) putenv(const_cast<char*>(pair.c_str()));
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
}

auto joined(const std::vector<std::string>& argv) -> std::string {
    std::string text;
    for (const std::string& arg : argv) text += (text.empty() ? "" : " ") + arg;
    return text;
}

}  // namespace

auto run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env) -> CommandResult {
    std::array<int, 2> pipe_fds{};
    if (pipe2(pipe_fds.data(), O_CLOEXEC) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) exec_child(argv, env, pipe_fds[1]);
    close(pipe_fds[1]);
    CommandResult result;
    std::array<char, 4096> buffer{};
    for (;;) {
        const ssize_t got = read(pipe_fds[0], buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        result.output.append(buffer.data(), static_cast<std::size_t>(got));
    }
    close(pipe_fds[0]);
    int status = 0;
    if (pid < 0) return result;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

auto must_run(const std::vector<std::string>& argv, const std::vector<std::string>& env) -> std::string {
    CommandResult result = run_command(argv, env);
    if (!result.ok()) {
        throw HostError(joined(argv) + " failed (status " + std::to_string(result.status) +
                        "): " + result.output);
    }
    return result.output;
}

auto missing_requirements() -> std::string {
    std::string missing;
    const auto lack = [&](const std::string& what) { missing += (missing.empty() ? "" : ", ") + what; };
    if (geteuid() != 0) lack("root");
    if (access("/dev/fuse", R_OK | W_OK) != 0) lack("/dev/fuse");
    if (access("/dev/loop-control", R_OK | W_OK) != 0) lack("/dev/loop-control");
    for (const char* tool :
         {"losetup", "mkfs.ext4", "e2fsck", "mkfs.xfs", "xfs_repair", "mkfs.btrfs", "btrfs"}) {
        if (run_command({"sh", "-c", std::string("command -v ") + tool}).status != 0) lack(tool);
    }
    if (missing.empty() && !run_command({"losetup", "-f"}).ok()) lack("a free loop device");
    return missing;
}

auto Host::made(std::string what, std::function<void()> undo) -> std::size_t {
    made_.push_back({std::move(what), std::move(undo), false});
    return made_.size() - 1;
}

void Host::undo(std::size_t handle) {
    Made& thing = made_[handle];
    if (thing.done) return;
    thing.done = true;
    thing.undo();
}

void Host::undo_all() {
    for (std::size_t i = made_.size(); i-- > 0;) undo(i);
}

auto make_scratch(Host& host) -> std::string {
    std::string pattern = (std::filesystem::temp_directory_path() / "crashsim-kernel-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
        throw HostError("mkdtemp " + pattern + ": " + std::strerror(errno));
    host.made("scratch directory " + pattern, [pattern] {
        std::error_code ignored;
        std::filesystem::remove_all(pattern, ignored);
    });
    // Crash images are copied whole for every state: in memory, a 128 MiB
    // copy takes tens of milliseconds.
    if (mount("crashsim-kernel", pattern.c_str(), "tmpfs", 0, "size=2g,mode=0700") != 0) {
        throw HostError("mount tmpfs at " + pattern + ": " + std::strerror(errno));
    }
    host.made("tmpfs at " + pattern, [pattern] {
        if (umount2(pattern.c_str(), 0) != 0) umount2(pattern.c_str(), MNT_DETACH);
    });
    return pattern;
}

auto make_dir(const std::string& dir, const std::string& name) -> std::string {
    const std::string path = dir + "/" + name;
    if (mkdir(path.c_str(), 0755) != 0) throw HostError("mkdir " + path + ": " + std::strerror(errno));
    return path;
}

auto attach_loop(Host& host, const std::string& file, bool direct_io) -> std::pair<std::string, std::size_t> {
    std::vector<std::string> argv{"losetup", "--find", "--show"};
    if (direct_io) argv.emplace_back("--direct-io=on");
    argv.push_back(file);
    std::string device = must_run(argv);
    while (!device.empty() && (device.back() == '\n' || device.back() == ' ')) device.pop_back();
    const std::size_t handle = host.made("loop device " + device, [device] {
        run_command({"losetup", "-d", device});
    });
    return {device, handle};
}

auto mount_fs(Host& host, const std::string& device, const std::string& dir, const std::string& type,
              const std::string& options, std::size_t& handle, std::string& error) -> bool {
    if (mount(device.c_str(), dir.c_str(), type.c_str(), 0, options.empty() ? nullptr : options.c_str()) !=
        0) {
        error = "mount -t " + type + (options.empty() ? "" : " -o " + options) + ": " + std::strerror(errno);
        return false;
    }
    handle = host.made("mount " + dir, [dir] {
        if (umount2(dir.c_str(), 0) != 0) umount2(dir.c_str(), MNT_DETACH);
    });
    return true;
}

}  // namespace kernel
