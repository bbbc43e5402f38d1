// CPUs with identity and the single-owner cache line (sim::CacheLine): hits on
// the owning CPU, FIFO waiting and a miss's cost otherwise, remote misses across sockets, and the knee that
// queueing on the line puts into a closed loop of CPUs.
#include "sim/scheduler.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/strategy.hpp"

namespace {

constexpr std::uint64_t steps_bound = 1'000'000;
constexpr sim::CacheLineCosts costs{.hit = 10, .miss = 1000, .miss_remote = 3000};

auto perf_options(std::uint32_t cpus, std::uint32_t cores_per_socket) -> sim::Scheduler::Options {
    return {.timers_race_tasks = false, .steps_max = steps_bound, .cpu_costs = true, .cpus = cpus,
            .cores_per_socket = cores_per_socket, .line = costs};
}

auto run_all(sim::Scheduler& scheduler) -> sim::StepOutcome {
    sim::FirstStrategy first;
    for (;;) {
        const auto outcome = scheduler.step(first);
        if (outcome == sim::StepOutcome::finished || outcome == sim::StepOutcome::deadlock) return outcome;
    }
}

/// `tasks` tasks each doing `rounds` of (compute `work`, one line access);
/// the virtual time it takes and the line's counts.
struct LoopResult {
    sim::Instant elapsed = 0;
    sim::CacheLineCounts counts;
};
auto closed_loop(std::uint32_t cpus, std::uint32_t cores_per_socket, std::uint32_t tasks, sim::Duration work,
                 int rounds) -> LoopResult {
    sim::Scheduler scheduler(perf_options(cpus, cores_per_socket), nullptr);
    sim::CacheLine line("test.line");
    for (std::uint32_t t = 0; t < tasks; t++) {
        scheduler.spawn("t" + std::to_string(t), [&line, work, rounds] {
            for (int i = 0; i < rounds; i++) {
                sim::cpu(work);
                line.access();
            }
        });
    }
    REQUIRE(run_all(scheduler) == sim::StepOutcome::finished);
    return {scheduler.now(), line.counts()};
}

}  // namespace

TEST_CASE("cache line: the owning CPU hits, the first access misses") {
    sim::Scheduler scheduler(perf_options(4, 0), nullptr);
    sim::CacheLine line("test.line.one");
    scheduler.spawn("alone", [&] {
        for (int i = 0; i < 5; i++) line.access();
    });
    REQUIRE(run_all(scheduler) == sim::StepOutcome::finished);
    CHECK(line.counts().misses == 1);
    CHECK(line.counts().hits == 4);
    CHECK(line.counts().remote_misses == 0);
    CHECK(scheduler.now() == costs.miss + 4 * costs.hit);
    CHECK(line.owner() == 0);
}

TEST_CASE("cache line: accesses from other CPUs wait in FIFO order and each pays a miss") {
    sim::Scheduler scheduler(perf_options(4, 0), nullptr);
    sim::CacheLine line("test.line.fifo");
    std::vector<std::string> order;
    std::vector<sim::Instant> done;
    for (int t = 0; t < 3; t++) {
        scheduler.spawn("t" + std::to_string(t), [&, t] {
            line.access();
            order.push_back("t" + std::to_string(t));
            done.push_back(sim::now());
        });
    }
    REQUIRE(run_all(scheduler) == sim::StepOutcome::finished);
    CHECK(order == std::vector<std::string>{"t0", "t1", "t2"});
    // All three arrive at time 0: the second waits for the first, the third
    // for both, and every one pulls the line from another CPU.
    CHECK(done == std::vector<sim::Instant>{costs.miss, 2 * costs.miss, 3 * costs.miss});
    CHECK(line.counts().misses == 3);
    CHECK(line.counts().hits == 0);
    CHECK(line.counts().waited == costs.miss + 2 * costs.miss);
}

TEST_CASE("cache line: a miss from another socket costs the remote figure") {
    // Two CPUs, one core per socket: CPU 1 is on socket 1.
    sim::Scheduler scheduler(perf_options(2, 1), nullptr);
    sim::CacheLine line("test.line.remote");
    for (int t = 0; t < 2; t++) scheduler.spawn("t" + std::to_string(t), [&] { line.access(); });
    REQUIRE(run_all(scheduler) == sim::StepOutcome::finished);
    CHECK(scheduler.socket_of(0) == 0);
    CHECK(scheduler.socket_of(1) == 1);
    CHECK(line.counts().misses == 1);  // the cold miss
    CHECK(line.counts().remote_misses == 1);
    CHECK(scheduler.now() == costs.miss + costs.miss_remote);
}

TEST_CASE("cpus with identity: a task stays on its CPU, a waiter takes the freed one") {
    sim::Scheduler scheduler(perf_options(2, 0), nullptr);
    std::vector<std::vector<std::uint32_t>> seen(3);
    for (int t = 0; t < 3; t++) {
        scheduler.spawn("t" + std::to_string(t), [&, t] {
            for (int i = 0; i < 3; i++) {
                sim::cpu(100);
                seen[static_cast<std::size_t>(t)].push_back(sim::current_scheduler().current_cpu());
            }
        });
    }
    REQUIRE(run_all(scheduler) == sim::StepOutcome::finished);
    for (const auto& cpus : seen) {
        REQUIRE(cpus.size() == 3);
        for (auto cpu : cpus) CHECK(cpu < 2);
    }
    CHECK(seen[0][0] == 0);
    CHECK(seen[1][0] == 1);
}

TEST_CASE("cache line: costs nothing and takes no step outside performance runs") {
    sim::Scheduler scheduler({.timers_race_tasks = false, .steps_max = steps_bound, .line = costs}, nullptr);
    sim::CacheLine line("test.line.free");
    scheduler.spawn("t", [&] {
        for (int i = 0; i < 3; i++) line.access();
    });
    REQUIRE(run_all(scheduler) == sim::StepOutcome::finished);
    CHECK(scheduler.now() == 0);
    CHECK(scheduler.steps() == 1);
    CHECK(line.counts().misses + line.counts().hits == 0);
}

TEST_CASE("cache line: the knee comes from queueing on the line") {
    // 8 CPUs each computing `work` per access. The line serves one access per
    // miss (1 us): it caps the loop at one round per us. With 64 us of work,
    // 8 CPUs ask for one access per 8 us: the line is lightly used and the
    // loop is CPU-bound. With 2 us, they ask for 4 per us: line-bound.
    constexpr int rounds = 200;
    const auto light = closed_loop(8, 0, 8, 64 * sim::microseconds, rounds);
    const auto heavy = closed_loop(8, 0, 8, 2 * sim::microseconds, rounds);
    const double line_bound = 8.0 * rounds * static_cast<double>(costs.miss);
    // Line-bound: the run takes about as long as the line's serial misses.
    CHECK(static_cast<double>(heavy.elapsed) >= 0.95 * line_bound);
    CHECK(heavy.counts.waited > heavy.elapsed);  // accesses mostly wait
    // CPU-bound: about rounds * work (jitter averages 1), far above the line's time.
    CHECK(static_cast<double>(light.elapsed) > 4 * line_bound);
    CHECK(static_cast<double>(light.counts.waited) < 0.5 * static_cast<double>(light.elapsed) * 8);
}

TEST_CASE("cache line: the same inputs and seed give the same run") {
    const auto a = closed_loop(4, 2, 6, 3000, 50);
    const auto b = closed_loop(4, 2, 6, 3000, 50);
    CHECK(a.elapsed == b.elapsed);
    CHECK(a.counts.waited == b.counts.waited);
    CHECK(a.counts.remote_misses == b.counts.remote_misses);
    CHECK(a.counts.remote_misses > 0);
}
