// Every fuzz target (tests/fuzz/harness.hpp) over the seed corpus: each
// bundled scenario, each bad-input case, and every file in
// tests/fuzz/corpus/ (inputs a fuzzer found or that seed the repro and
// result readers). A target that throws anything but InputError, or
// stops on an internal assertion, fails the suite; tools/fuzz explores
// beyond this corpus.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "runner/repro.hpp"
#include "tests/fuzz/harness.hpp"

namespace {

auto corpus() -> std::vector<std::filesystem::path> {
    std::vector<std::filesystem::path> files;
    for (const char* dir : {"scenarios", "tests/bad_input", "tests/fuzz/corpus"}) {
        if (!std::filesystem::is_directory(dir)) continue;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
            if (entry.is_regular_file()) files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

auto read(const std::filesystem::path& path) -> std::string {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

TEST_CASE("fuzz corpus: every target takes every seed input without a crash" * doctest::test_suite("slow")) {
    const auto files = corpus();
    // scenarios/ and tests/bad_input/ are there (the suite runs from the root).
    REQUIRE(files.size() > 50);
    REQUIRE(fuzz::targets().size() == 4);
    for (const auto& target : fuzz::targets()) {
        for (const auto& file : files) {
            CAPTURE(target.name);
            CAPTURE(file.string());
            CHECK_NOTHROW(target.run(read(file)));
        }
    }
}

TEST_CASE("fuzz corpus: targets are found by name") {
    CHECK(fuzz::find_target("scenario_loader") != nullptr);
    CHECK(fuzz::find_target("nothing") == nullptr);
}

// The corpus' repro and campaign result are the fuzzers' valid seeds: they
// must still load (a model change that moves the repro's trace hash means
// writing it again: crashsim fuzz scenarios/btrfs/fast-fsync-vs-page-release.json
// --variant before-fix --strategy pct:3 --no-shrink, and a --shard 0/2 result).
TEST_CASE("fuzz corpus: the seed repro replays and the seed result reads") {
    CHECK_NOTHROW((void)runner::load_repro("tests/fuzz/corpus/repro-btrfs-race.json"));
    CHECK_NOTHROW((void)report::read_campaign_result("tests/fuzz/corpus/result-xfs-shard.json"));
}
