#pragma once
// Runtime invariants: a checker may also watch the events a model
// emits while a run goes on (model/events.hpp). The runner makes one watch per
// run for each of the scenario's checkers that has one, gives it every event
// in step order, and stops the run at the first violation: the same story,
// repro (replay reproduces it: the schedule, no crash), shrinking and exit
// code 1 as a crash violation. A watch keeps its own state for the run; the
// Checker itself stays a stateless observer.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "checkers/checker.hpp"
#include "model/events.hpp"

namespace checkers {

class EventWatch {
public:
    virtual ~EventWatch() = default;
    /// Appends at most one violation: the first this event shows.
    virtual void on_event(const model::Event& event, std::vector<Violation>& out) = 0;
    /// How many times the run gave the watch something at stake so far (a
    /// "holds" whose watch never had anything at stake is vacuous, as for
    /// crash states: runner/campaign.cpp's judged counts).
    [[nodiscard]] virtual auto at_stake() const -> std::uint64_t = 0;
};

/// A fresh watch for one run of the named checker; nullptr for a checker
/// that judges crash states only.
auto make_watch(std::string_view checker) -> std::unique_ptr<EventWatch>;

}  // namespace checkers
