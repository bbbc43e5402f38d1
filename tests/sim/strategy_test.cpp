// The strategies and determinism: random, PCT, first, replay and
// parse_strategy (sim/strategy.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/prng.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "sim/sync.hpp"
#include "sim/trace.hpp"
#include "sim/yield_point.hpp"
#include "tests/sim/engine_support.hpp"

using namespace engine_test;

// ---- Strategies and determinism ----

TEST_CASE("determinism: the same random seed gives the same choices and the same trace") {
    for (std::uint64_t seed : {1ULL, 7ULL, 12345ULL}) {
        sim::RandomStrategy first_random{sim::Prng(seed)};
        sim::RandomStrategy second_random{sim::Prng(seed)};
        const RunRecord first_run = run_workload(first_random);
        const RunRecord second_run = run_workload(second_random);
        CHECK(first_run.outcome == sim::StepOutcome::finished);
        CHECK_FALSE(first_run.choices.empty());
        CHECK(first_run.choices == second_run.choices);
        CHECK(first_run.trace_hash == second_run.trace_hash);
        CHECK(first_run.log == second_run.log);
    }
}

TEST_CASE("determinism: different random seeds explore different schedules") {
    std::set<std::uint64_t> hashes;
    for (std::uint64_t seed = 1; seed <= 10; seed++) {
        sim::RandomStrategy random{sim::Prng(seed)};
        hashes.insert(run_workload(random).trace_hash);
    }
    CHECK(hashes.size() > 1);
}

TEST_CASE("determinism: the trace records steps, notes and virtual time") {
    sim::Trace trace(true);
    Workload workload;
    sim::Scheduler scheduler({}, &trace);
    workload.spawn(scheduler);
    sim::FirstStrategy first;
    REQUIRE(run_to_end(scheduler, first) == sim::StepOutcome::finished);
    const std::string full = trace.full();
    CHECK(full.find("step") != std::string::npos);
    CHECK(full.find("test.scheduler_test.b") != std::string::npos);
    CHECK(full.find("(blocked on workload.mutex)") != std::string::npos);
    CHECK(full.find("(finished)") != std::string::npos);
    CHECK(trace.story().find("worker 2 holds the mutex") != std::string::npos);
    CHECK(trace.hash() == sim::hash_name(full));
    // A disabled trace records nothing, and notes are not even formatted.
    sim::Trace disabled(false);
    Workload quiet;
    sim::Scheduler quiet_scheduler({}, &disabled);
    quiet.spawn(quiet_scheduler);
    REQUIRE(run_to_end(quiet_scheduler, first) == sim::StepOutcome::finished);
    CHECK(disabled.lines().empty());
}

TEST_CASE("replay: replaying a random run's choices reproduces its trace") {
    for (std::uint64_t seed : {3ULL, 99ULL}) {
        sim::RandomStrategy random{sim::Prng(seed)};
        const RunRecord original = run_workload(random);
        REQUIRE_FALSE(original.choices.empty());
        sim::ReplayStrategy replay(original.choices);
        const RunRecord replayed = run_workload(replay);
        CHECK(replayed.choices == original.choices);
        CHECK(replayed.trace_hash == original.trace_hash);
        CHECK(replayed.log == original.log);
        CHECK(replay.consumed() == original.choices.size());
    }
}

TEST_CASE("replay: a choice beyond the candidates throws ReplayDiverged") {
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("a", [] { sim::yield(point_a); });
    scheduler.spawn("b", [] { sim::yield(point_a); });
    sim::ReplayStrategy replay({1, 2});
    CHECK(scheduler.step(replay) == sim::StepOutcome::ran_task);
    CHECK(scheduler.last_ran() == 1);
    CHECK_THROWS_AS(scheduler.step(replay), sim::ReplayDiverged);
}

TEST_CASE("replay: a run that asks for more choices than recorded throws ReplayDiverged") {
    sim::Scheduler scheduler({}, nullptr);
    scheduler.spawn("a", [] { sim::yield(point_a); });
    scheduler.spawn("b", [] { sim::yield(point_a); });
    sim::ReplayStrategy replay({1});
    CHECK(scheduler.step(replay) == sim::StepOutcome::ran_task);
    CHECK(scheduler.last_ran() == 1);
    CHECK(replay.consumed() == 1);
    CHECK_THROWS_AS(scheduler.step(replay), sim::ReplayDiverged);
}

namespace {
/// Wraps a strategy and counts decisions where the task chosen last time was
/// still a candidate but another was chosen: a preemption.
class PreemptionCounter final : public sim::Strategy {
public:
    explicit PreemptionCounter(sim::Strategy& inner) : inner_(inner) {}
    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        const std::size_t index = inner_.choose(scheduler, candidates);
        if (previous_ != no_choice) {
            const bool previous_listed = std::any_of(
                candidates.begin(), candidates.end(),
                [&](const sim::Candidate& candidate) { return candidate.task == previous_; });
            if (previous_listed && candidates[index].task != previous_) preemptions++;
        }
        previous_ = candidates[index].task;
        return index;
    }
    std::uint64_t preemptions = 0;

private:
    static constexpr sim::TaskId no_choice = sim::no_task - 1;
    sim::Strategy& inner_;
    sim::TaskId previous_ = no_choice;
};

/// Three tasks that only yield (no timers): every decision has all unfinished
/// tasks as candidates.
auto run_yielders(sim::Strategy& strategy, std::vector<sim::TaskId>& order) -> sim::StepOutcome {
    sim::Scheduler scheduler({}, nullptr);
    for (int id = 0; id < 3; id++) {
        scheduler.spawn(numbered("t", id), [] {
            for (int round = 0; round < 5; round++) sim::yield(point_a);
        });
    }
    for (std::uint64_t i = 0; i < steps_bound; i++) {
        const sim::StepOutcome outcome = scheduler.step(strategy);
        if (outcome != sim::StepOutcome::ran_task) return outcome;
        order.push_back(scheduler.last_ran());
    }
    return sim::StepOutcome::deadlock;
}
}  // namespace

TEST_CASE("pct: depth 1 never preempts a running task") {
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        CAPTURE(seed);
        sim::PctStrategy pct(sim::Prng(seed), 1, 18);
        PreemptionCounter counter(pct);
        std::vector<sim::TaskId> order;
        REQUIRE(run_yielders(counter, order) == sim::StepOutcome::finished);
        CHECK(counter.preemptions == 0);
        // Each task runs all of its stretches in one go.
        std::vector<sim::TaskId> blocks;
        for (sim::TaskId task : order) {
            if (blocks.empty() || blocks.back() != task) blocks.push_back(task);
        }
        CHECK(blocks.size() == 3);
    }
}

namespace {
/// Wraps a strategy and records, at every decision, that the chosen candidate
/// won over each other candidate; counts pairs decided both ways.
class PriorityOrderAudit final : public sim::Strategy {
public:
    explicit PriorityOrderAudit(sim::Strategy& inner) : inner_(inner) {}
    auto choose(const sim::Scheduler& scheduler, std::span<const sim::Candidate> candidates)
        -> std::size_t override {
        const std::size_t index = inner_.choose(scheduler, candidates);
        for (std::size_t i = 0; i < candidates.size(); i++) {
            if (i == index) continue;
            const auto won = std::make_pair(candidates[index].task, candidates[i].task);
            if (wins_.contains({won.second, won.first})) contradictions++;
            wins_.insert(won);
        }
        return index;
    }
    std::uint64_t contradictions = 0;

private:
    sim::Strategy& inner_;
    std::set<std::pair<sim::TaskId, sim::TaskId>> wins_;
};
}  // namespace

TEST_CASE("pct: depth 1 with blocking and timers keeps one fixed priority order") {
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        CAPTURE(seed);
        sim::PctStrategy pct(sim::Prng(seed), 1, 40);
        PriorityOrderAudit audit(pct);
        const RunRecord record = run_workload(audit);
        CHECK(record.outcome == sim::StepOutcome::finished);
        CHECK(audit.contradictions == 0);
    }
}

TEST_CASE("pct: depth 3 changes the priority order on some seeds") {
    std::uint64_t schedules_with_change = 0;
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        sim::PctStrategy pct(sim::Prng(seed), 3, 40);
        PriorityOrderAudit audit(pct);
        CHECK(run_workload(audit).outcome == sim::StepOutcome::finished);
        if (audit.contradictions > 0) schedules_with_change++;
    }
    CHECK(schedules_with_change > 0);
}

TEST_CASE("pct: a larger depth does preempt on some seeds") {
    std::uint64_t schedules_with_preemption = 0;
    for (std::uint64_t seed = 1; seed <= 30; seed++) {
        sim::PctStrategy pct(sim::Prng(seed), 3, 18);
        PreemptionCounter counter(pct);
        std::vector<sim::TaskId> order;
        REQUIRE(run_yielders(counter, order) == sim::StepOutcome::finished);
        if (counter.preemptions > 0) schedules_with_preemption++;
    }
    CHECK(schedules_with_preemption > 0);
}

TEST_CASE("pct: the same seed gives the same schedule") {
    sim::PctStrategy first_pct(sim::Prng(5), 3, 40);
    sim::PctStrategy second_pct(sim::Prng(5), 3, 40);
    const RunRecord first_run = run_workload(first_pct);
    const RunRecord second_run = run_workload(second_pct);
    CHECK(first_run.choices == second_run.choices);
    CHECK(first_run.trace_hash == second_run.trace_hash);
}

TEST_CASE("first strategy: always the lowest task id, timers last") {
    std::vector<sim::TaskId> order;
    sim::FirstStrategy first;
    REQUIRE(run_yielders(first, order) == sim::StepOutcome::finished);
    CHECK(order == std::vector<sim::TaskId>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
}

TEST_CASE("parse_strategy: accepts random and pct:1..16, rejects everything else") {
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy("random", spec));
    CHECK(spec.kind == sim::StrategySpec::Kind::random);
    CHECK(spec.text() == "random");
    REQUIRE(sim::parse_strategy("pct:3", spec));
    CHECK(spec.kind == sim::StrategySpec::Kind::pct);
    CHECK(spec.depth == 3);
    CHECK(spec.text() == "pct:3");
    REQUIRE(sim::parse_strategy("pct:16", spec));
    CHECK(spec.depth == 16);
    REQUIRE(sim::parse_strategy("pct:1", spec));
    CHECK(spec.depth == 1);
    const sim::StrategySpec before = spec;
    for (const char* bad : {"", "Random", "dfs", "pct", "pct:", "pct:0", "pct:17", "pct:x",
                            "pct:-1", "pct:1000", "pct 3", "pct:3 "}) {
        CAPTURE(bad);
        CHECK_FALSE(sim::parse_strategy(bad, spec));
        // A failed parse leaves the spec alone.
        CHECK(spec.kind == before.kind);
        CHECK(spec.depth == before.depth);
    }
}
