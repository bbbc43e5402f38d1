#include "runner/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "loader/scenario.hpp"

namespace runner {
namespace {

auto failure(const std::string& path, const std::string& what) -> loader::InputError {
    return loader::InputError(path + ": expected a writable path, got " + what);
}

void write_all(int fd, const std::string& text, const std::string& path) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw failure(path, n < 0 ? std::strerror(errno) : "a short write");
        done += static_cast<std::size_t>(n);
    }
}

/// The rename is durable once the directory holding the name is synced.
void sync_directory(const std::string& path) {
    std::string directory = std::filesystem::path(path).parent_path().string();
    if (directory.empty()) directory = ".";
    const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;  // the file is in place; a directory we cannot open cannot be synced
    ::fsync(fd);
    ::close(fd);
}

}  // namespace

void write_text_file_atomically(const std::string& path, const std::string& text) {
    std::string name = path + ".tmp-XXXXXX";
    std::vector<char> temporary(name.begin(), name.end());
    temporary.push_back('\0');
    const int fd = ::mkstemp(temporary.data());
    if (fd < 0) throw failure(path, std::strerror(errno));
    try {
        write_all(fd, text, path);
        if (::fsync(fd) != 0) throw failure(path, std::strerror(errno));
        // mkstemp creates the file 0600; a report is as readable as any file the user writes.
        const mode_t mask = ::umask(0);
        ::umask(mask);
        ::fchmod(fd, 0666 & ~mask);
    } catch (...) {
        ::close(fd);
        ::unlink(temporary.data());
        throw;
    }
    if (::close(fd) != 0) {
        ::unlink(temporary.data());
        throw failure(path, std::strerror(errno));
    }
    if (std::rename(temporary.data(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temporary.data());
        throw failure(path, std::strerror(error));
    }
    sync_directory(path);
}

}  // namespace runner
