#include "sim/strategy.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace sim {

auto RandomStrategy::choose(const Scheduler&, std::span<const Candidate> candidates)
    -> std::size_t {
    return static_cast<std::size_t>(prng_.below_fast(candidates.size()));
}

PctStrategy::PctStrategy(Prng prng, std::uint32_t depth, std::uint64_t steps_estimate)
    : prng_(prng), depth_(depth) {
    SIM_ASSERT(depth >= 1);
    const std::uint64_t bound = std::max<std::uint64_t>(steps_estimate, 1);
    for (std::uint32_t i = 1; i < depth; i++) change_points_.push_back(1 + prng_.below(bound));
    std::sort(change_points_.begin(), change_points_.end());
}

auto PctStrategy::priority_of(const Candidate& candidate) -> std::uint64_t& {
    // Initial priorities sit above `depth_`, so a task lowered at change point
    // i (priority depth_ - i) runs only when nothing initial is runnable.
    auto fresh = [this] { return depth_ + 1 + (prng_.next() >> 8); };
    if (candidate.is_timer()) {
        if (timer_priority_ == 0) timer_priority_ = fresh();
        return timer_priority_;
    }
    if (candidate.task >= task_priorities_.size()) task_priorities_.resize(candidate.task + 1, 0);
    auto& priority = task_priorities_[candidate.task];
    if (priority == 0) priority = fresh();
    return priority;
}

auto PctStrategy::choose(const Scheduler&, std::span<const Candidate> candidates)
    -> std::size_t {
    decisions_++;
    std::size_t best = 0;
    for (std::size_t i = 0; i < candidates.size(); i++) {
        if (priority_of(candidates[i]) > priority_of(candidates[best])) best = i;
    }
    for (std::size_t i = 0; i < change_points_.size(); i++) {
        if (change_points_[i] == decisions_) {
            priority_of(candidates[best]) = depth_ - 1 - i;
            SIM_MAYBE(i > 0);
        }
    }
    return best;
}

auto ReplayStrategy::choose(const Scheduler&, std::span<const Candidate> candidates)
    -> std::size_t {
    if (position_ >= choices_.size()) {
        throw ReplayDiverged("the run asks for choice " + std::to_string(position_) +
                             " but the list has only " + std::to_string(choices_.size()));
    }
    const std::uint32_t choice = choices_[position_++];
    if (choice >= candidates.size()) {
        throw ReplayDiverged("choice " + std::to_string(position_ - 1) + " is " +
                             std::to_string(choice) + " but only " +
                             std::to_string(candidates.size()) + " candidates exist");
    }
    return choice;
}

auto StrategySpec::text() const -> std::string {
    return kind == Kind::random ? "random" : "pct:" + std::to_string(depth);
}

auto parse_strategy(const std::string& text, StrategySpec& spec) -> bool {
    if (text == "random") {
        spec = {StrategySpec::Kind::random, 0};
        return true;
    }
    if (text.rfind("pct:", 0) != 0 || text.size() < 5 || text.size() > 6) return false;
    std::uint32_t depth = 0;
    for (char c : text.substr(4)) {
        if (c < '0' || c > '9') return false;
        depth = depth * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (depth < 1 || depth > 16) return false;
    spec = {StrategySpec::Kind::pct, depth};
    return true;
}

}  // namespace sim
