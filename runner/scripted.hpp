#pragma once
// The scripted strategy: a scenario's `schedule`, step by step (crashsim
// run, and the golden traces).
#include <cstdint>
#include <span>
#include <string>

#include "loader/scenario.hpp"
#include "sim/strategy.hpp"

namespace runner {

/// Follows the scenario's schedule: each step binds to the first unfinished
/// task of that name and runs it (firing timers while it waits for I/O) until
/// it reaches the step's yield point or ends.
class ScriptedStrategy final : public sim::Strategy {
public:
    ScriptedStrategy(const loader::Scenario& scenario, std::string variant)
        : scenario_(scenario), variant_(std::move(variant)) {}

    [[nodiscard]] auto wants_every_step() const -> bool override { return true; }
    [[nodiscard]] auto at_crash() const -> bool {
        return position_ < scenario_.schedule.size() &&
               scenario_.schedule[position_].kind == loader::ScheduleStep::Kind::crash;
    }
    [[nodiscard]] auto crash_step() const -> const loader::ScheduleStep& {
        return scenario_.schedule[position_];
    }
    [[nodiscard]] auto exhausted() const -> bool { return position_ >= scenario_.schedule.size(); }

    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override;

    /// After each step: has the current schedule step reached its end?
    void after_step(const sim::Scheduler& scheduler) override;

    /// The run ended (every task finished) while steps remain.
    void check_done() const;

private:
    void bind(const sim::Scheduler& scheduler, const loader::ScheduleStep& step);
    void advance();

    const loader::Scenario& scenario_;
    std::string variant_;
    std::size_t position_ = 0;
    sim::TaskId bound_ = sim::no_task;
    std::uint32_t reached_ = 0;
    std::uint64_t last_seen_step_ = ~std::uint64_t{0};
};

}  // namespace runner
