#pragma once
// Helpers shared by the test files: driving one task of a scheduler by hand,
// and reading outcomes and stories.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/campaign.hpp"
#include "runner/runner.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"

namespace test_support {

/// The message of the loader::InputError `action` throws, or "no error".
template <typename Action>
auto input_error_of(Action&& action) -> std::string {
    try {
        action();
    } catch (const loader::InputError& error) {
        return error.what();
    }
    return "no error";
}

/// What drive() does when the task is blocked and no timer can unblock it.
enum class WhenStuck { fail, stop };

/// Runs `task` alone, firing timers and running the other tasks that are not
/// in `held` (model workers such as endio or ioend) while it is blocked, until
/// it stops at `point` (nullptr: until it finishes).
inline void drive(sim::Scheduler& scheduler, sim::TaskId task, const sim::YieldPoint* point,
                  const std::vector<sim::TaskId>& held, WhenStuck when_stuck = WhenStuck::fail) {
    for (int i = 0; i < 100000; i++) {
        if (scheduler.task_state(task) == sim::TaskState::finished) {
            REQUIRE(point == nullptr);
            return;
        }
        if (scheduler.task_state(task) == sim::TaskState::runnable) {
            scheduler.execute(sim::Candidate{task});
            if (point != nullptr && scheduler.task_state(task) == sim::TaskState::runnable &&
                scheduler.last_point(task) == point) {
                return;
            }
            continue;
        }
        bool ran = false;
        for (sim::TaskId other = 0; other < scheduler.task_count() && !ran; other++) {
            if (other == task || std::find(held.begin(), held.end(), other) != held.end()) continue;
            if (scheduler.task_state(other) != sim::TaskState::runnable) continue;
            scheduler.execute(sim::Candidate{other});
            ran = true;
        }
        if (ran) continue;
        if (!scheduler.has_timers() && when_stuck == WhenStuck::stop) return;
        REQUIRE_MESSAGE(scheduler.has_timers(), scheduler.describe_blocked());
        scheduler.execute(sim::Candidate{sim::no_task});
    }
    FAIL("the task made no progress");
}

inline auto spec_of(const std::string& text) -> sim::StrategySpec {
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy(text, spec));
    return spec;
}

/// A fuzz budget's strategies as spelled, and spellings parsed into one.
inline auto strategy_texts(const std::vector<sim::StrategySpec>& specs) -> std::vector<std::string> {
    std::vector<std::string> texts;
    for (const auto& spec : specs) texts.push_back(spec.text());
    return texts;
}
inline auto strategy_specs(const std::vector<std::string>& texts) -> std::vector<sim::StrategySpec> {
    std::vector<sim::StrategySpec> specs;
    for (const auto& text : texts) specs.push_back(spec_of(text));
    return specs;
}

inline auto has_checker(const runner::RunOutcome& outcome, const std::string& checker) -> bool {
    return std::any_of(outcome.violations.begin(), outcome.violations.end(),
                       [&](const auto& violation) { return violation.checker == checker; });
}

/// Checks that every needle occurs in `story`, each after the previous one,
/// and says which one is missing or out of order.
inline void check_in_order(const std::string& story, const std::vector<std::string>& needles) {
    std::size_t position = 0;
    for (const auto& needle : needles) {
        const std::size_t found = story.find(needle, position);
        INFO("expected, after position ", position, ": ", needle);
        INFO("story:\n", story);
        CHECK(found != std::string::npos);
        if (found == std::string::npos) return;
        position = found + needle.size();
    }
}

/// Every bundled scenario file (scenarios/, the schema aside), sorted.
inline auto bundled_scenarios() -> std::vector<std::string> {
    std::vector<std::string> paths;
    for (const auto& entry : std::filesystem::recursive_directory_iterator("scenarios")) {
        const std::string path = entry.path().string();
        if (entry.path().extension() == ".json" && path.find("/schema/") == std::string::npos)
            paths.push_back(path);
    }
    std::sort(paths.begin(), paths.end());
    return paths;
}

/// A stop request (runner::request_stop, as SIGINT makes) for its
/// lifetime: the test cases after it run unstopped even if the code under
/// test throws.
struct StopRequested {
    StopRequested() { runner::request_stop(); }
    ~StopRequested() { runner::clear_stop_request(); }
    StopRequested(const StopRequested&) = delete;
    auto operator=(const StopRequested&) -> StopRequested& = delete;
};

}  // namespace test_support
