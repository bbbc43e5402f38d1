// The footprint check (fuzz --check-footprints, Scheduler::check_footprints):
// every task step of a bundled race changes only resources its footprint
// names, the check names a resource taken out of every footprint, and it
// leaves the search as it is.
#include <doctest/doctest.h>

#include <string>

#include "tests/runner/visited_search.hpp"

namespace {

constexpr std::uint64_t schedules = 60;

auto checked(const std::string& path, const std::string& variant, std::string left_out = {})
    -> runner::FuzzReport {
    test_support::VisitedSearch key;
    key.schedules = schedules;
    key.check_footprints = true;
    key.footprint_left_out = std::move(left_out);
    return test_support::search(path, variant, 0, key);
}

}  // namespace

TEST_CASE("footprint check: no step of a bundled race changes a resource its footprint leaves out") {
    const std::pair<const char*, const char*> races[] = {
        {"scenarios/btrfs/fast-fsync-vs-page-release.json", "fix-1"},
        {"scenarios/btrfs/enospc-write.json", "fix-3"},
        {"scenarios/btrfs/direct-write-fsync.json", "fix-2"},
        {"scenarios/btrfs/two-files-two-fsyncers.json", "fix-1"},
        {"scenarios/xfs/delalloc-writeback-race.json", "fix"},
        {"scenarios/faults/xfs-write-error-fsync.json", "fix"},
        {"scenarios/jbd2/enospc-write.json", "fix"},
        {"scenarios/jbd2/flusher-writeback.json", "fix"},
    };
    for (const auto& [path, variant] : races) {
        CAPTURE(path);
        const runner::FuzzReport report = checked(path, variant);
        CHECK(report.dfs.footprint_steps > schedules);
        for (const sim::FootprintOmission& omission : report.omissions) {
            CAPTURE(omission.task);
            CAPTURE(omission.from);
            CAPTURE(omission.to);
            CHECK(omission.resource == "");
        }
    }
}

TEST_CASE("footprint check: a resource taken out of every footprint is named, the search unchanged") {
    const std::pair<const char*, const char*> mutations[] = {
        {"scenarios/btrfs/fast-fsync-vs-page-release.json", "btrfs.em_tree"},
        {"scenarios/xfs/delalloc-writeback-race.json", "xfs.data_fork"},
        {"scenarios/jbd2/flusher-writeback.json", "buffer.state"},
    };
    for (const auto& [path, resource] : mutations) {
        CAPTURE(path);
        const loader::Scenario scenario = loader::load_scenario(path);
        const std::string variant = scenario.variants.front().name;
        const runner::FuzzReport plain = test_support::search(path, variant, 0, {.schedules = schedules});
        const runner::FuzzReport report = checked(path, variant, resource);
        REQUIRE_FALSE(report.omissions.empty());
        for (const sim::FootprintOmission& omission : report.omissions) CHECK(omission.resource == resource);
        CHECK(report.schedules == plain.schedules);
        CHECK(report.crash_states == plain.crash_states);
        CHECK(report.found == plain.found);
    }
}
