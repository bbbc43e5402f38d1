// Reads the crash policies (the scenario's and a crash step's), the yield points a run
// must reach, the schedule's run and crash steps, and the exploration bounds.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "loader/json_reader.hpp"
#include "loader/loader_impl.hpp"
#include "loader/scenario.hpp"
#include "model/info.hpp"
#include "sim/yield_point.hpp"

namespace loader {
namespace {

constexpr std::uint32_t schedule_count_max = std::numeric_limits<std::uint32_t>::max();

auto unflushed_names() -> const Names& {
    static const Names names = {"none", "all", "any-subset", "prefix"};
    return names;
}

}  // namespace

auto Loader::read_unflushed(const Json& value, const std::string& json_path) const
    -> UnflushedPolicy {
    const auto name = read_choice(value, json_path, unflushed_names(), "");
    const auto index = std::find(unflushed_names().begin(), unflushed_names().end(), name) -
                       unflushed_names().begin();
    return static_cast<UnflushedPolicy>(index);
}

auto Loader::read_crash(const Json& value, const std::string& json_path) const -> UnflushedPolicy {
    check_keys(value, json_path, {"unflushed"}, {"unflushed"});
    return read_unflushed(value.at("unflushed"), json_path + ".unflushed");
}

// The scenario's own crash policy: the schedule's crash steps take only "unflushed".
void Loader::read_scenario_crash(const Json& value) {
    check_keys(value, "$.crash", {"unflushed", "mount"}, {"unflushed"});
    scenario_.crash.unflushed = read_unflushed(value.at("unflushed"), "$.crash.unflushed");
    if (value.contains("mount")) {
        scenario_.crash.mount_may_fail =
            read_choice(value.at("mount"), "$.crash.mount", {"must-succeed", "may-fail"}, "") == "may-fail";
    }
}

auto Loader::is_model_point(const std::string& name) const -> bool {
    return std::any_of(model_->yield_points.begin(), model_->yield_points.end(),
                       [&](const sim::YieldPoint* point) { return point->name == name; });
}

// must_reach: yield points of this model, each once (`before`: the scenario's, for a variant).
auto Loader::read_must_reach(const Json& value, const std::string& json_path, const Names& before) const
    -> Names {
    check_array(value, json_path);
    Names points = before;
    for (std::size_t index = 0; index < value.size(); index++) {
        const auto point_path = index_path(json_path, index);
        auto point = read_name(value[index], point_path);
        if (!is_model_point(point)) {
            fail(point_path, "a yield point of model " + model_->name + " (crashsim list prints them)",
                 json_quoted(point));
        }
        if (contains(points, point)) {
            fail(point_path, "a yield point not listed before" +
                                 std::string(before.empty() ? "" : " (here or in $.must_reach)"),
                 json_quoted(point));
        }
        points.push_back(std::move(point));
    }
    return points;
}

void Loader::read_schedule(const Json& value) {
    check_array(value, "$.schedule");
    for (std::size_t index = 0; index < value.size(); index++) {
        const auto step_path = index_path("$.schedule", index);
        scenario_.schedule.push_back(read_step(value[index], step_path));
        const std::size_t steps_after = value.size() - index - 1;
        if (scenario_.schedule.back().kind == ScheduleStep::Kind::crash && steps_after > 0) {
            fail(step_path, "the crash step to be the last step",
                 std::to_string(steps_after) + (steps_after == 1 ? " step" : " steps") +
                     " after it");
        }
    }
}

auto Loader::read_step(const Json& value, const std::string& json_path) const -> ScheduleStep {
    check_keys(value, json_path, {"run", "until", "count", "crash"}, {});
    if (value.empty()) fail(json_path, "one of the keys run, crash", "an empty object");
    const bool is_run = value.contains("run");
    const bool is_crash = value.contains("crash");
    if (is_run && is_crash) fail(json_path, "exactly one of the keys run, crash", "both");
    if (!is_run && !is_crash) fail(json_path, "one of the keys run, crash", "neither");
    if (is_run) return read_run_step(value, json_path);
    for (const char* key : {"until", "count"}) {
        if (value.contains(key)) {
            fail(key_path(json_path, key), "only the key crash in a crash step",
                 "a key of a run step");
        }
    }
    ScheduleStep step;
    step.kind = ScheduleStep::Kind::crash;
    step.json_path = json_path;
    const auto& crash = value.at("crash");
    const auto crash_path = json_path + ".crash";
    if (crash.is_object()) {
        step.unflushed = read_crash(crash, crash_path);
    } else if (crash.is_string()) {
        step.unflushed = read_unflushed(crash, crash_path);
    } else {
        fail(crash_path, "one of " + join(unflushed_names()) + " or an object", type_name(crash));
    }
    return step;
}

auto Loader::read_run_step(const Json& value, const std::string& json_path) const -> ScheduleStep {
    Names tasks;
    for (const auto& task : scenario_.tasks) tasks.push_back(task.name);
    tasks.insert(tasks.end(), model_->model_tasks.begin(), model_->model_tasks.end());
    ScheduleStep step;
    step.json_path = json_path;
    step.task = read_choice(value.at("run"), json_path + ".run", tasks, "the tasks ");
    if (value.contains("until")) {
        const auto until_path = json_path + ".until";
        step.until = read_name(value.at("until"), until_path);
        // A point of this model, or the workload's own (between two operations).
        const bool ours =
            step.until == "workload.op_begin" ||
            std::any_of(model_->yield_points.begin(), model_->yield_points.end(),
                        [&](const sim::YieldPoint* point) { return point->name == step.until; });
        if (!ours) {
            fail(until_path,
                 "a yield point of model " + model_->name + " (crashsim list prints them)",
                 json_quoted(step.until));
        }
    }
    if (value.contains("count")) {
        const auto count_path = json_path + ".count";
        if (step.until.empty()) fail(count_path, "until next to count", "count without until");
        step.count = static_cast<std::uint32_t>(
            read_unsigned_in(value.at("count"), count_path, 1, schedule_count_max));
    }
    return step;
}

// Bounds on I/O completion order and daemon wake-ups.
void Loader::read_explore(const Json& value) {
    check_keys(value, "$.explore",
               {"io_reorders", "daemon_wakeups", "steps", "progress_steps", "recovery_crashes"}, {});
    // Power cuts nested inside recovery.
    if (value.contains("recovery_crashes")) {
        scenario_.explore.recovery_crashes = static_cast<std::uint32_t>(read_unsigned_in(
            value.at("recovery_crashes"), "$.explore.recovery_crashes", 0, recovery_crashes_max));
    }
    if (value.contains("io_reorders")) {
        scenario_.explore.io_reorders = static_cast<std::uint32_t>(
            read_unsigned_in(value.at("io_reorders"), "$.explore.io_reorders", 0, explore_bound_max));
    }
    if (value.contains("daemon_wakeups")) {
        scenario_.explore.daemon_wakeups = static_cast<std::uint32_t>(
            read_unsigned_in(value.at("daemon_wakeups"), "$.explore.daemon_wakeups", 0, explore_bound_max));
    }
    // The step bound and the liveness bound, named and settable.
    if (value.contains("steps")) {
        scenario_.explore.steps =
            read_unsigned_in(value.at("steps"), "$.explore.steps", 1, explore_steps_max);
    }
    if (value.contains("progress_steps")) {
        scenario_.explore.progress_steps =
            read_unsigned_in(value.at("progress_steps"), "$.explore.progress_steps", 1, explore_steps_max);
    }
}

}  // namespace loader
