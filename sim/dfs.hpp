#pragma once
// Bounded exhaustive search, stateless (every schedule re-runs from the
// start, as in CHESS and loom): iterative context bounding (at most P
// preemptions; a switch away from a task that could go on running costs one,
// a switch when it blocked or ended is free) with sleep sets (Godefroid) over
// step footprints. A sleep set only skips transitions into states another
// branch already reached, so every reachable state, and so every crash state,
// is still visited within the bound, except where the bound and the sleep
// set interact: a transition explored first (A, then B) may have spent more of
// the budget on the way to a state than the order it prunes (B, then A) would
// (Coons, Musuvathi, McKinley, OOPSLA 2013). A sleeping transition therefore
// prunes only where taking it would leave no more budget than it had when it
// was explored; tests compare pruned and unpruned searches.
//
// Candidates are known by Candidate::key(): a task by its id, a timer by its
// sequence number, the same in every schedule that shares the prefix. Timer
// steps touch everything (footprint_all), so a timer never stays asleep past
// another step and nothing stays asleep past a timer: the I/O-reordering and
// daemon-wake-up budgets (spent only by timers, enforced by the scheduler,
// which lists a charged timer only while its budget lasts) are the same
// wherever a sleeping transition prunes and where it was explored.
#include <cstdint>
#include <vector>

#include "sim/scheduler.hpp"

namespace sim {

struct DfsStats {
    std::uint64_t schedules = 0;        // runs started
    std::uint64_t pruned_sleep = 0;     // alternatives skipped because asleep
    std::uint64_t pruned_bound = 0;     // alternatives beyond the preemption bound
    std::uint64_t abandoned = 0;        // runs cut where every choice was asleep
};

/// The search tree: one node per decision of the current schedule.
class DfsTree {
public:
    struct Explored {
        std::uint64_t key;  // Candidate::key()
        Footprint footprint;
        std::uint32_t preemptions_after;  // spent once it had run, where it was explored
    };
    struct Node {
        std::vector<std::uint64_t> candidates;  // keys
        std::uint64_t current = no_candidate_key;  // the task that may run on without a preemption
        std::uint32_t preemptions = 0;  // spent before this decision
        std::vector<Explored> sleep;    // asleep on arrival
        std::vector<Explored> explored; // chosen here in earlier schedules
        std::size_t chosen = 0;
        bool chosen_recorded = false;
    };

    DfsTree(std::uint32_t preemptions_max, bool sleep_sets)
        : preemptions_max_(preemptions_max), sleep_sets_(sleep_sets) {}

    /// After a schedule: move to the next unexplored branch; false when none is left.
    auto backtrack() -> bool;
    [[nodiscard]] auto stats() const -> const DfsStats& { return stats_; }
    [[nodiscard]] auto preemptions_max() const -> std::uint32_t { return preemptions_max_; }
    [[nodiscard]] auto sleep_sets() const -> bool { return sleep_sets_; }

private:
    friend class DfsStrategy;
    [[nodiscard]] static auto asleep(const std::vector<Explored>& set, std::uint64_t key) -> bool;
    /// Asleep, and explored with at least the budget taking it now would leave.
    [[nodiscard]] static auto prunes(const std::vector<Explored>& set, std::uint64_t key,
                                     std::uint32_t preemptions_after) -> bool;
    [[nodiscard]] auto cost(const Node& node, std::uint64_t key) const -> std::uint32_t;

    std::uint32_t preemptions_max_;
    bool sleep_sets_;
    std::vector<Node> nodes_;
    std::size_t prefix_ = 0;  // decisions the next schedule replays
    DfsStats stats_;
};

/// Runs one schedule of a DfsTree: replays the tree's prefix, then extends it
/// with the cheapest awake choice (the current task, else the first).
class DfsStrategy final : public Strategy {
public:
    explicit DfsStrategy(DfsTree& tree);
    auto choose(const Scheduler& scheduler, std::span<const Candidate> candidates)
        -> std::size_t override;
    [[nodiscard]] auto wants_every_step() const -> bool override { return true; }
    void after_step(const Scheduler& scheduler) override;
    [[nodiscard]] auto abandoned() const -> bool override { return abandoned_; }
    [[nodiscard]] auto fresh() const -> bool override { return fresh_; }

private:
    DfsTree& tree_;
    std::size_t decision_ = 0;
    std::vector<DfsTree::Explored> sleep_;  // the current state's sleep set
    DfsTree::Node* pending_ = nullptr;      // node whose choice just ran
    TaskId current_ = no_task;               // last task that ran a task step
    std::uint32_t preemptions_ = 0;
    bool abandoned_ = false;
    bool fresh_;
};

}  // namespace sim
