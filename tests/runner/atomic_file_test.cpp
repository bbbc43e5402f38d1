// Report files are published whole through a unique temporary name.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "loader/scenario.hpp"
#include "runner/atomic_file.hpp"

namespace {

auto read_all(const std::filesystem::path& path) -> std::string {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

auto entries(const std::filesystem::path& directory) -> std::size_t {
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(directory)) count++;
    return count;
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string name = (std::filesystem::temp_directory_path() / "crashsim-atomic-XXXXXX").string();
        REQUIRE(::mkdtemp(name.data()) != nullptr);
        path = name;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("write_text_file_atomically publishes the whole text and leaves no temporary") {
    TempDir dir;
    const std::string file = (dir.path / "report.json").string();
    runner::write_text_file_atomically(file, "first\n");
    CHECK(read_all(file) == "first\n");
    runner::write_text_file_atomically(file, "second, longer\n");
    CHECK(read_all(file) == "second, longer\n");
    CHECK(entries(dir.path) == 1);
    // Not the fixed name of before: a stale path.tmp of another writer is left alone.
    std::ofstream(dir.path / "report.json.tmp") << "another writer's";
    runner::write_text_file_atomically(file, "third\n");
    CHECK(read_all(file) == "third\n");
    CHECK(read_all(dir.path / "report.json.tmp") == "another writer's");
    CHECK(entries(dir.path) == 2);
    // Readable as any file the user writes, not mkstemp's 0600.
    struct stat info {};
    REQUIRE(::stat(file.c_str(), &info) == 0);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    CHECK((info.st_mode & 0777) == (0666 & ~mask));
}

TEST_CASE("write_text_file_atomically names the path it cannot write") {
    TempDir dir;
    const std::string file = (dir.path / "missing" / "report.json").string();
    try {
        runner::write_text_file_atomically(file, "x");
        FAIL("expected an InputError");
    } catch (const loader::InputError& error) {
        CHECK(std::string(error.what()).rfind(file + ": expected a writable path, got ", 0) == 0);
    }
    CHECK(entries(dir.path) == 0);
}
