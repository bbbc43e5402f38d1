#include "sim/dfs.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace sim {

auto DfsTree::asleep(const std::vector<Explored>& set, std::uint64_t key) -> bool {
    return std::any_of(set.begin(), set.end(), [key](const Explored& e) { return e.key == key; });
}

auto DfsTree::prunes(const std::vector<Explored>& set, std::uint64_t key, std::uint32_t preemptions_after)
    -> bool {
    return std::any_of(set.begin(), set.end(), [&](const Explored& e) {
        return e.key == key && preemptions_after >= e.preemptions_after;
    });
}

auto DfsTree::cost(const Node& node, std::uint64_t key) const -> std::uint32_t {
    return node.current != no_candidate_key && key != node.current ? 1 : 0;
}

auto DfsTree::backtrack() -> bool {
    stats_.schedules++;
    while (!nodes_.empty()) {
        Node& node = nodes_.back();
        for (std::size_t i = 0; i < node.candidates.size(); i++) {
            const std::uint64_t task = node.candidates[i];
            if (asleep(node.explored, task)) continue;
            if (i == node.chosen) continue;
            const std::uint32_t after = node.preemptions + cost(node, task);
            if (sleep_sets_ && prunes(node.sleep, task, after)) {
                // Counted once: mark it explored so later passes skip it silently.
                node.explored.push_back({task, footprint_all, after});
                stats_.pruned_sleep++;
                continue;
            }
            if (after > preemptions_max_) {
                node.explored.push_back({task, footprint_all, after});
                stats_.pruned_bound++;
                continue;
            }
            node.chosen = i;
            node.chosen_recorded = false;
            prefix_ = nodes_.size();
            return true;
        }
        nodes_.pop_back();
    }
    return false;
}

DfsStrategy::DfsStrategy(DfsTree& tree) : tree_(tree), fresh_(tree.prefix_ == 0) {}

auto DfsStrategy::choose(const Scheduler& scheduler, std::span<const Candidate> candidates)
    -> std::size_t {
    if (candidates.size() == 1) return 0;
    const std::uint64_t running =
        current_ != no_task && scheduler.task_state(current_) == TaskState::runnable ? current_ : no_candidate_key;
    if (decision_ < tree_.nodes_.size()) {
        // Replaying the prefix: the same state, so the same candidates.
        DfsTree::Node& node = tree_.nodes_[decision_++];
        SIM_ASSERT(node.candidates.size() == candidates.size());
        for (std::size_t i = 0; i < candidates.size(); i++) SIM_ASSERT(node.candidates[i] == candidates[i].key());
        sleep_ = node.sleep;
        for (const auto& e : node.explored) {
            if (e.footprint != footprint_all || !DfsTree::asleep(sleep_, e.key)) sleep_.push_back(e);
        }
        pending_ = &node;
        preemptions_ = node.preemptions + tree_.cost(node, candidates[node.chosen].key());
        if (decision_ == tree_.prefix_) fresh_ = true;
        return node.chosen;
    }
    DfsTree::Node node;
    for (const auto& candidate : candidates) node.candidates.push_back(candidate.key());
    node.current = running;
    node.preemptions = preemptions_;
    node.sleep = tree_.sleep_sets_ ? sleep_ : std::vector<DfsTree::Explored>{};
    // The cheapest awake choice: go on with the running task, else the first.
    std::size_t pick = candidates.size();
    for (std::size_t i = 0; i < candidates.size(); i++) {
        const std::uint64_t task = candidates[i].key();
        const std::uint32_t after = node.preemptions + tree_.cost(node, task);
        if (DfsTree::prunes(node.sleep, task, after)) continue;
        if (after > tree_.preemptions_max_) continue;
        if (pick == candidates.size() || task == running) pick = i;
        if (task == running) break;
    }
    if (pick == candidates.size()) {
        // Every affordable continuation is asleep: whatever follows was
        // reached by another branch.
        abandoned_ = true;
        tree_.stats_.abandoned++;
        return 0;
    }
    node.chosen = pick;
    tree_.nodes_.push_back(std::move(node));
    pending_ = &tree_.nodes_.back();
    decision_++;
    preemptions_ += tree_.cost(*pending_, candidates[pick].key());
    sleep_ = pending_->sleep;
    return pick;
}

void DfsStrategy::after_step(const Scheduler& scheduler) {
    const Footprint footprint = scheduler.last_footprint();
    if (scheduler.last_ran() != no_task) current_ = scheduler.last_ran();
    if (pending_ != nullptr && !pending_->chosen_recorded) {
        const std::uint64_t task = pending_->candidates[pending_->chosen];
        pending_->explored.push_back({task, footprint, pending_->preemptions + tree_.cost(*pending_, task)});
        pending_->chosen_recorded = true;
    }
    pending_ = nullptr;
    // Transitions that conflict with what just ran wake up.
    std::erase_if(sleep_, [footprint](const DfsTree::Explored& e) { return !independent(e.footprint, footprint); });
}

}  // namespace sim
