#pragma once
// What a kernel run does to the machine: commands it runs, and everything it
// made (mounts, loop devices, the logging device's server, its scratch
// directory), undone in reverse order on success, on failure and after
// SIGINT, and nothing it did not make.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kernel {

/// The machine cannot run the harness (not root, no /dev/fuse, a command
/// failed): one message, exit 2 from the verb.
class HostError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A command's exit status (-1: it could not start or died of a signal) and
/// its standard output and error together.
struct CommandResult {
    int status = -1;
    std::string output;
    [[nodiscard]] auto ok() const -> bool { return status == 0; }
};

/// Runs argv[0] (found on PATH) with extra environment `env` ("K=V").
auto run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env = {})
    -> CommandResult;
/// Runs it and throws HostError naming the command and its output unless it exits 0.
auto must_run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) -> std::string;

/// What the machine lacks for the harness, empty when it has it all.
auto missing_requirements() -> std::string;

class Host {
public:
    Host() = default;
    Host(const Host&) = delete;
    auto operator=(const Host&) -> Host& = delete;
    ~Host() { undo_all(); }
    /// Remembers how to undo something just made; returns its handle.
    auto made(std::string what, std::function<void()> undo) -> std::size_t;
    /// Undoes one thing now (an unmount before the next step needs it).
    void undo(std::size_t handle);
    void undo_all();

private:
    struct Made {
        std::string what;
        std::function<void()> undo;
        bool done = false;
    };
    std::vector<Made> made_;
};

/// A scratch directory made by this run (removed with everything in it).
auto make_scratch(Host& host) -> std::string;
/// `dir`/`name` made as an empty directory.
auto make_dir(const std::string& dir, const std::string& name) -> std::string;
/// A loop device over `file` (direct I/O when asked), detached at undo.
auto attach_loop(Host& host, const std::string& file, bool direct_io) -> std::pair<std::string, std::size_t>;
/// Mounts `device` at `dir`; unmounted at undo. False (and the error) when
/// the mount is refused.
auto mount_fs(Host& host, const std::string& device, const std::string& dir, const std::string& type,
              const std::string& options, std::size_t& handle, std::string& error) -> bool;

}  // namespace kernel
