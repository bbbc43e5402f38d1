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
    if (candidate.is_timer() && candidate.charge != Charge::none) {
        // A failing twin (io_error) has a priority of its own, apart from its completion's.
        auto& priority =
            charged_priorities_[candidate.charge == Charge::io_error ? candidate.key() : candidate.timer];
        if (priority == 0) priority = fresh();
        return priority;
    }
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
    switch (kind) {
        case Kind::random:
            return "random";
        case Kind::pct:
            return "pct:" + std::to_string(depth);
        case Kind::dfs:
            return "dfs:" + std::to_string(preemptions);
    }
    return "";
}

namespace {
// "12" -> 12; false on empty, non-digits, leading zeros or more than two digits.
auto parse_small_number(const std::string& digits, std::uint32_t& value) -> bool {
    if (digits.empty() || digits.size() > 2) return false;
    if (digits.size() > 1 && digits[0] == '0') return false;
    value = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return true;
}
}  // namespace

auto parse_strategy(const std::string& text, StrategySpec& spec) -> bool {
    std::uint32_t number = 0;
    if (text == "random") {
        spec = StrategySpec{};
        spec.kind = StrategySpec::Kind::random;
        return true;
    }
    if (text.starts_with("pct:")) {
        if (!parse_small_number(text.substr(4), number) || number < 1 || number > pct_depth_max) return false;
        spec = StrategySpec{};
        spec.kind = StrategySpec::Kind::pct;
        spec.depth = number;
        return true;
    }
    if (text.starts_with("dfs:")) {
        if (!parse_small_number(text.substr(4), number) || number > dfs_preemptions_max) return false;
        spec = StrategySpec{};
        spec.kind = StrategySpec::Kind::dfs;
        spec.preemptions = number;
        return true;
    }
    return false;
}

}  // namespace sim
