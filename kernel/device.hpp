#pragma once
// The logging device: a FUSE server in a child process that exposes one
// image file, `disk`, and a control file, `ctl`. A loop device with direct
// I/O over `disk` passes the file system's every write and flush to it in
// completion order (the loop device reports a write-back cache and no FUA,
// so a flush reaches the file as fsync: a PREFLUSH write arrives as fsync
// then write, a FUA write as write then fsync). The server logs each write
// with its offset, length and payload (the payload in a side file), each
// fsync as a flush, each fallocate (discard, write-zeroes) as such, and each
// write to `ctl` as a marker, in the order it serves them.
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/host.hpp"

namespace kernel {

struct LogRecord {
    enum class Kind : std::uint32_t { write = 1, flush = 2, discard = 3, zeroes = 4, marker = 5 };
    Kind kind = Kind::write;
    std::uint32_t unused = 0;
    std::uint64_t offset = 0;   // bytes; marker: its number
    std::uint64_t length = 0;   // bytes
    std::uint64_t payload = 0;  // write: where its bytes start in the payload file
};

class LoggingDevice {
public:
    /// Starts the server over `image` (already the device's size) in `dir`;
    /// stopped at the Host's undo.
    LoggingDevice(Host& host, const std::string& dir, const std::string& image, std::uint64_t size);
    /// The device file the loop device goes over.
    [[nodiscard]] auto disk_path() const -> std::string { return mount_ + "/disk"; }
    /// Logs marker `number` after everything served so far.
    void mark(std::uint64_t number) const;
    /// Stops the server (the mount goes, the child exits); idempotent.
    void stop();
    /// The log, once stopped.
    [[nodiscard]] auto records() const -> std::vector<LogRecord>;
    /// The bytes of a write record.
    [[nodiscard]] auto payload(const LogRecord& record) const -> std::vector<std::uint8_t>;
    [[nodiscard]] auto payload_path() const -> const std::string& { return payload_path_; }

private:
    Host& host_;
    std::string mount_;
    std::string log_path_;
    std::string payload_path_;
    std::size_t handle_ = 0;
};

}  // namespace kernel
