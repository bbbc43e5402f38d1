#pragma once
// Scheduling strategies (policy), separate from the scheduler (mechanism).
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/prng.hpp"
#include "sim/scheduler.hpp"

namespace sim {

/// Picks uniformly among the candidates at every step.
class RandomStrategy final : public Strategy {
public:
    explicit RandomStrategy(Prng prng) : prng_(prng) {}
    auto choose(const Scheduler& scheduler, std::span<const Candidate> candidates)
        -> std::size_t override;

private:
    Prng prng_;
};

/// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): random
/// distinct priorities, always run the highest, and at d-1 random steps drop
/// the running task below every initial priority. Finds any bug of depth d
/// with probability at least 1/(n k^(d-1)). The next timer is one more
/// "task" with a priority of its own; each charged timer (an I/O completion
/// out of time order, a daemon's early wake-up) gets a priority of its own
/// when first seen. Tasks spawned mid-run get a fresh random priority when
/// first seen.
class PctStrategy final : public Strategy {
public:
    PctStrategy(Prng prng, std::uint32_t depth, std::uint64_t steps_estimate);
    auto choose(const Scheduler& scheduler, std::span<const Candidate> candidates)
        -> std::size_t override;

private:
    auto priority_of(const Candidate& candidate) -> std::uint64_t&;

    Prng prng_;
    std::uint32_t depth_;
    std::vector<std::uint64_t> change_points_;  // decision numbers, ascending
    std::vector<std::uint64_t> task_priorities_;  // by task id; 0 = not yet seen
    std::uint64_t timer_priority_ = 0;
    std::map<std::uint64_t, std::uint64_t> charged_priorities_;  // by timer id
    std::uint64_t decisions_ = 0;
};

/// Thrown when a recorded run (its choice list, its crash) does not fit the run
/// it is replayed on. `field` names the recorded value that does not fit, as
/// the JSON path of a repro file ("$.choices", "$.crash.step", "$.crash.keep");
/// `expected` and what() complete the message "expected X, got Y".
class ReplayDiverged : public std::runtime_error {
public:
    explicit ReplayDiverged(const std::string& got)
        : ReplayDiverged("$.choices", "a choice list this scenario can replay",
                         "one that diverges: " + got) {}
    ReplayDiverged(std::string field, std::string expected, const std::string& got)
        : std::runtime_error(got), field_(std::move(field)), expected_(std::move(expected)) {}
    [[nodiscard]] auto field() const -> const std::string& { return field_; }
    [[nodiscard]] auto expected() const -> const std::string& { return expected_; }

private:
    std::string field_;
    std::string expected_;
};

/// Replays a recorded choice list; asking past its end means the run diverged.
class ReplayStrategy final : public Strategy {
public:
    explicit ReplayStrategy(std::vector<std::uint32_t> choices) : choices_(std::move(choices)) {}
    auto choose(const Scheduler& scheduler, std::span<const Candidate> candidates)
        -> std::size_t override;
    [[nodiscard]] auto consumed() const -> std::size_t { return position_; }

private:
    std::vector<std::uint32_t> choices_;
    std::size_t position_ = 0;
};

/// Always the first candidate: the lowest task id, timers last. Used for
/// set-up and to measure a scenario's length.
class FirstStrategy final : public Strategy {
public:
    auto choose(const Scheduler&, std::span<const Candidate>) -> std::size_t override { return 0; }
};

/// A strategy as spelled in scenarios and on the command line: "random",
/// "pct:D" (D in 1..16) or "dfs:P" (bounded exhaustive, P preemptions, 0..8).
struct StrategySpec {
    enum class Kind : std::uint8_t { random, pct, dfs };
    Kind kind = Kind::random;
    std::uint32_t depth = 3;        // pct
    std::uint32_t preemptions = 2;  // dfs
    [[nodiscard]] auto text() const -> std::string;
};
inline constexpr std::uint32_t pct_depth_max = 16;
inline constexpr std::uint32_t dfs_preemptions_max = 8;
inline constexpr const char* strategy_spellings =
    "random, pct:D with D from 1 to 16, or dfs:P with P from 0 to 8";
/// Parses a canonical spelling (no leading zeros); false on anything else.
auto parse_strategy(const std::string& text, StrategySpec& spec) -> bool;

}  // namespace sim
