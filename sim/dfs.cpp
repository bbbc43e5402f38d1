#include "sim/dfs.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "sim/assert.hpp"

namespace sim {

namespace {

auto mix(std::uint64_t hash, std::uint64_t value) -> std::uint64_t {
    hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
    return hash;
}

}  // namespace

auto DfsStats::operator+=(const DfsStats& other) -> DfsStats& {
    schedules += other.schedules;
    pruned_sleep += other.pruned_sleep;
    pruned_bound += other.pruned_bound;
    abandoned += other.abandoned;
    cut_visited += other.cut_visited;
    cut_fewer_charges += other.cut_fewer_charges;
    cut_more_steps += other.cut_more_steps;
    unhashed += other.unhashed;
    states += other.states;
    dropped += other.dropped;
    merges_followed += other.merges_followed;
    decisions_compared += other.decisions_compared;
    mismatches += other.mismatches;
    collisions += other.collisions;
    footprint_steps += other.footprint_steps;
    return *this;
}

void DfsStrategy::see_omissions(std::span<const FootprintOmission> omissions, std::uint64_t steps_checked) {
    if (!tree_.owned_) return;
    tree_.stats_.footprint_steps += steps_checked;
    for (const FootprintOmission& omission : omissions) {
        auto& known = tree_.omissions_;
        if (std::find(known.begin(), known.end(), omission) != known.end()) continue;
        known.push_back(omission);
    }
}

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

auto DfsTree::takes(const Node& node, std::uint64_t key) const -> bool {
    const std::uint32_t after = node.preemptions + cost(node, key);
    return !(sleep_sets_ && prunes(node.sleep, key, after)) && after <= preemptions_max_;
}

auto DfsTree::branches(const Node& node) const -> std::vector<std::size_t> {
    std::vector<std::size_t> order{node.chosen};
    for (std::size_t i = 0; i < node.candidates.size(); i++) {
        if (i != node.chosen && takes(node, node.candidates[i])) order.push_back(i);
    }
    return order;
}

auto DfsTree::take_stats() -> DfsStats {
    const DfsStats taken = stats_;
    stats_ = DfsStats{};
    return taken;
}

void DfsTree::split(std::size_t depth, std::function<bool(std::uint64_t)> claim) {
    SIM_ASSERT(depth >= 1 && nodes_.empty() && unit_ == 0);
    split_depth_ = depth;
    claim_ = std::move(claim);
    owned_ = claim_(0);
    cut_at_ = owned_ ? no_cut : split_depth_;
}

void DfsTree::next_unit() {
    unit_++;
    visits_.clear();
    visit_marks_.clear();
    step_bound_reached_ = false;
    marks_.clear();
    owned_ = claim_(unit_);
    cut_at_ = owned_ ? no_cut : split_depth_;
}

auto DfsTree::backtrack() -> bool {
    if (owned_) stats_.schedules++;
    runs_++;
    if (dpor_ && !cut_) analyze_races();
    events_.clear();
    if (cut_) {
        // A run into a unit another tree explores: nothing below the cut is ours.
        nodes_.resize(std::min(nodes_.size(), cut_at_));
        cut_ = false;
    }
    while (!nodes_.empty()) {
        Node& node = nodes_.back();
        for (std::size_t i = 0; i < node.candidates.size(); i++) {
            const std::uint64_t task = node.candidates[i];
            if (asleep(node.explored, task)) continue;
            if (i == node.chosen) continue;
            if (reduces(nodes_.size() - 1) &&
                std::find(node.backtrack.begin(), node.backtrack.end(), task) == node.backtrack.end()) {
                continue;  // no race asks for it (yet)
            }
            const std::uint32_t after = node.preemptions + cost(node, task);
            if (sleep_sets_ && prunes(node.sleep, task, after)) {
                // Counted once: mark it explored so later passes skip it silently.
                node.explored.push_back({task, footprint_all, after});
                if (owned_) stats_.pruned_sleep++;
                continue;
            }
            if (after > preemptions_max_) {
                node.explored.push_back({task, footprint_all, after});
                if (owned_) stats_.pruned_bound++;
                continue;
            }
            node.chosen = i;
            node.chosen_recorded = false;
            prefix_ = nodes_.size();
            // A branch above the split depth starts the next unit.
            if (split_depth_ != no_cut && nodes_.size() - 1 < split_depth_) next_unit();
            return true;
        }
        nodes_.pop_back();
    }
    return false;
}

DfsStrategy::DfsStrategy(DfsTree& tree) : tree_(tree), fresh_(tree.prefix_ == 0) {
    tree_.cut_ = false;
    tree_.events_.clear();
    tree_.last_keys_.clear();
    tree_.wakers_.clear();
}

void DfsStrategy::record_event(std::span<const Candidate> candidates, std::size_t pick, std::size_t node) {
    std::vector<DfsTree::Event>& events = tree_.events_;
    std::vector<std::uint64_t>& previous_keys = tree_.last_keys_;
    std::vector<std::pair<std::uint64_t, std::size_t>>& wakers = tree_.wakers_;
    // A candidate listed now and not before the last step: that step made it
    // runnable (a task's wake-up, hand-off or spawn; a timer's creation, or
    // the timers or tasks ahead of it gone), so it happens before the
    // candidate's next step whatever their footprints.
    for (const Candidate& candidate : candidates) {
        const std::uint64_t key = candidate.key();
        if (events.empty() ||
            std::find(previous_keys.begin(), previous_keys.end(), key) != previous_keys.end()) {
            continue;
        }
        std::erase_if(wakers, [key](const auto& waker) { return waker.first == key; });
        wakers.emplace_back(key, events.size() - 1);
    }
    previous_keys.clear();
    for (const Candidate& candidate : candidates) previous_keys.push_back(candidate.key());
    DfsTree::Event event{candidates[pick].key(), Footprint{}, node, no_cut};
    const auto waker =
        std::find_if(wakers.begin(), wakers.end(), [&](const auto& w) { return w.first == event.key; });
    if (waker != wakers.end()) {
        event.waker = waker->second;
        wakers.erase(waker);
    }
    events.push_back(event);
    recorded_ = true;
}

[[gnu::always_inline]] inline auto DfsStrategy::choose_step(const Scheduler& scheduler,
                                                            std::span<const Candidate> candidates)
    -> std::size_t {
    if (candidates.size() == 1) {
        if (tree_.dpor_) record_event(candidates, 0, no_cut);
        return 0;
    }
    const std::uint64_t running = current_ != no_task && scheduler.task_state(current_) == TaskState::runnable
                                      ? current_
                                      : no_candidate_key;
    if (decision_ >= tree_.nodes_.size()) return decide(scheduler, candidates, running);
    // Replaying the prefix: the same state, so the same candidates.
    DfsTree::Node& node = tree_.nodes_[decision_++];
    SIM_ASSERT(node.candidates.size() == candidates.size());
    for (std::size_t i = 0; i < candidates.size(); i++) SIM_ASSERT(node.candidates[i] == candidates[i].key());
    // Only the last decision of the prefix needs its sleep set: the fresh
    // steps start from it, and no replayed step reads sleep_ before the
    // next replayed decision would set it again.
    if (decision_ == tree_.prefix_) {
        sleep_ = node.sleep;
        for (const auto& e : node.explored) {
            if (e.footprint != footprint_all || !DfsTree::asleep(sleep_, e.key)) sleep_.push_back(e);
        }
        fresh_ = true;
    }
    pending_ = &node;
    preemptions_ = node.preemptions + tree_.cost(node, candidates[node.chosen].key());
    if (tree_.dpor_) record_event(candidates, node.chosen, decision_ - 1);
    return node.chosen;
}

auto DfsStrategy::choose(const Scheduler& scheduler, std::span<const Candidate> candidates)
    -> std::size_t {
    const std::size_t pick = choose_step(scheduler, candidates);
    const bool measuring = tree_.visited_key_ == VisitedKey::histories;
    if (measuring && !abandoned_ && !cut_ && !candidates[pick].is_timer()) [[unlikely]] {
        const TaskId task = candidates[pick].task;
        if (histories_.size() <= task) histories_.resize(task + 1, 0);
        histories_[task] = mix(histories_[task], signature(scheduler, candidates, no_candidate_key, 0) ^
                                                     mix(0, static_cast<std::uint64_t>(scheduler.now())));
    }
    return pick;
}

// A 64-bit key, not the whole state: a collision can only add a cut.
auto DfsStrategy::visited(const Scheduler& scheduler, std::uint64_t signature) -> bool {
    std::uint64_t key = mix(signature, static_cast<std::uint64_t>(scheduler.now()));
    if (tree_.visited_key_ == VisitedKey::histories) {
        for (const std::uint64_t history : histories_) key = mix(key, history);
    }
    return !tree_.visited_.insert(key).second;
}

auto DfsStrategy::signature(const Scheduler& scheduler, std::span<const Candidate> candidates,
                            std::uint64_t running, std::uint32_t preemptions) -> std::uint64_t {
    std::uint64_t hash = mix(preemptions, running);
    for (TaskId task = 0; task < scheduler.task_count(); task++) {
        const YieldPoint* point = scheduler.last_point(task);
        hash = mix(hash, static_cast<std::uint64_t>(scheduler.task_state(task)));
        hash = mix(hash, point == nullptr ? ~std::uint64_t{0} : point->id);
    }
    // Timers by count and charge: their ids differ between paths.
    for (const Candidate& candidate : candidates) {
        if (candidate.is_timer()) hash = mix(hash, 1 + static_cast<std::uint64_t>(candidate.charge));
    }
    return hash;
}

auto DfsStrategy::decide(const Scheduler& scheduler, std::span<const Candidate> candidates,
                         std::uint64_t running) -> std::size_t {
    DfsTree::Node node;
    for (const auto& candidate : candidates) node.candidates.push_back(candidate.key());
    node.signature = signature(scheduler, candidates, running, preemptions_);
    node.current = running;
    node.preemptions = preemptions_;
    node.sleep = tree_.sleep_sets_ ? sleep_ : std::vector<DfsTree::Explored>{};
    // The cheapest awake choice: go on with the running task, else the first.
    std::size_t pick = candidates.size();
    for (std::size_t i = 0; i < candidates.size(); i++) {
        const std::uint64_t task = candidates[i].key();
        if (!tree_.takes(node, task)) continue;
        if (pick == candidates.size() || task == running) pick = i;
        if (task == running) break;
    }
    if (pick == candidates.size()) {
        // Every affordable continuation is asleep: whatever follows was
        // reached by another branch.
        abandoned_ = true;
        if (tree_.owned_) tree_.stats_.abandoned++;
        return 0;
    }
    // A split search remembers states within a unit only, so that its counts do
    // not depend on which worker took which unit (bench --visited: a decision some
    // earlier one had the key of; only one with an awake choice marks its key).
    const bool in_unit = tree_.split_depth_ == no_cut || tree_.nodes_.size() >= tree_.split_depth_;
    const bool seen = remembers_states() ? in_unit && visited_state(scheduler, candidates, node)
                      : tree_.visited_key_ != VisitedKey::none && visited(scheduler, node.signature);
    if (seen) [[unlikely]] {
        abandoned_ = true;
        if (tree_.owned_) tree_.stats_.cut_visited++;
        return 0;
    }
    note_choice(scheduler, candidates, pick);
    node.chosen = pick;
    node.backtrack.push_back(candidates[pick].key());
    node.visit = std::exchange(remembered_, DfsTree::no_visit);
    tree_.nodes_.push_back(std::move(node));
    if (tree_.nodes_.size() - 1 == tree_.cut_at_) {
        // Recorded, not taken: the run ends before its step counts.
        cut_ = true;
        tree_.cut_ = true;
        pending_ = nullptr;
        return pick;
    }
    pending_ = &tree_.nodes_.back();
    decision_++;
    preemptions_ += tree_.cost(*pending_, candidates[pick].key());
    sleep_ = pending_->sleep;
    if (tree_.dpor_) record_event(candidates, pick, tree_.nodes_.size() - 1);
    return pick;
}

void DfsStrategy::after_step(const Scheduler& scheduler) {
    Footprint footprint = scheduler.last_footprint();
    // dpor: the steps a crash can see are mutually dependent (see dfs.hpp).
    if (tree_.dpor_ && footprint.meets(tree_.visible_)) footprint |= tree_.visible_;
    if (recorded_) tree_.events_.back().footprint = footprint;
    recorded_ = false;
    if (scheduler.last_ran() != no_task) current_ = scheduler.last_ran();
    if (pending_ != nullptr && !pending_->chosen_recorded) {
        const std::uint64_t task = pending_->candidates[pending_->chosen];
        pending_->explored.push_back({task, footprint, pending_->preemptions + tree_.cost(*pending_, task)});
        pending_->chosen_recorded = true;
    }
    pending_ = nullptr;
    // Transitions that conflict with what just ran wake up.
    std::erase_if(sleep_,
                  [footprint](const DfsTree::Explored& e) { return !independent(e.footprint, footprint); });
}

void DfsTree::to_sibling(std::size_t depth, std::size_t expected) {
    // The sibling the search takes next, found the way its backtrack finds it.
    nodes_.resize(depth + 1);
    cut_ = false;
    const bool more = backtrack();
    SIM_ASSERT(more && nodes_.size() == depth + 1 && nodes_[depth].chosen == expected);
}

auto DfsTree::probe_run(DfsTree& tree, std::size_t cut, const std::function<ProbeRun(DfsTree&)>& run,
                        ProbeWalk& walk, bool& stop) -> ProbeRun {
    tree.cut_at_ = cut;
    const ProbeRun counted = run(tree);
    walk.runs++;
    walk.run_steps += counted.steps;
    stop = stop || counted.stop;
    return counted;
}

namespace {
/// Whether a probe that can go deeper stops here anyway: at its run cap
/// (0: none), or with a weight past probe_weight_max.
auto probe_spent(const ProbeWalk& walk, std::uint64_t runs_max, double weight) -> bool {
    return (runs_max != 0 && walk.runs >= runs_max) || weight > probe_weight_max;
}
}  // namespace

auto knuth_probe(std::uint32_t preemptions_max, bool sleep_sets, Prng& prng,
                 const std::function<ProbeRun(DfsTree&)>& run, std::uint64_t runs_max) -> ProbeWalk {
    DfsTree tree(preemptions_max, sleep_sets);
    ProbeWalk walk;
    bool stop = false;
    auto go = [&](std::size_t cut) { return DfsTree::probe_run(tree, cut, run, walk, stop); };
    double weight = 1;  // branching factors multiplied down to this depth
    ProbeRun last = go(0);
    walk.crash_states += last.crash_states;  // before the first decision: shared by all
    for (std::size_t depth = 0;; depth++) {
        walk.units.push_back(weight);
        walk.depth = depth;
        // A stop request may have ended the run early: stopped, not a leaf.
        if (stop || (tree.cut_ && probe_spent(walk, runs_max, weight))) {
            walk.stopped = true;  // the path cut here counts as one schedule
            break;
        }
        if (!tree.cut_) break;  // the run ended (or was abandoned): a leaf
        SIM_ASSERT(tree.nodes_.size() == depth + 1);
        const std::vector<std::size_t> order = tree.branches(tree.nodes_[depth]);
        const std::size_t drawn = prng.below(order.size());
        weight *= static_cast<double>(order.size());
        tree.prefix_ = depth + 1;
        for (std::size_t k = 0; k <= drawn; k++) {
            if (k > 0) tree.to_sibling(depth, order[k]);
            last = go(depth + 1);
        }
        // This edge's crash states, as many times as the tree has such edges.
        walk.crash_states += weight * static_cast<double>(last.crash_states);
    }
    walk.schedules = weight;
    walk.steps = weight * static_cast<double>(last.steps);
    return walk;
}

auto stratified_probe(std::uint32_t preemptions_max, bool sleep_sets, Prng& prng,
                      const std::function<ProbeRun(DfsTree&)>& run, std::uint64_t runs_max) -> ProbeWalk {
    struct Kept {
        DfsTree tree;
        double weight;
        std::uint64_t steps;  // of its run, cut at its decision
    };
    ProbeWalk walk;
    bool stop = false;
    auto go = [&](DfsTree& tree, std::size_t cut) { return DfsTree::probe_run(tree, cut, run, walk, stop); };
    DfsTree root(preemptions_max, sleep_sets);
    const ProbeRun first = go(root, 0);
    walk.crash_states += static_cast<double>(first.crash_states);
    std::vector<Kept> level;
    double ended = 0;  // weight of the schedules that ended above this depth
    if (root.cut_) {
        level.push_back({root, 1, first.steps});
    } else {
        walk.schedules = 1;
        walk.steps = static_cast<double>(first.steps);
        ended = 1;
    }
    for (std::size_t depth = 0; !level.empty(); depth++) {
        double here = ended;
        for (const Kept& kept : level) here += kept.weight;
        walk.units.push_back(here);
        walk.depth = depth;
        if (stop || probe_spent(walk, runs_max, here)) {
            // The paths cut here count as one schedule each.
            for (const Kept& kept : level) {
                walk.schedules += kept.weight;
                walk.steps += kept.weight * static_cast<double>(kept.steps);
            }
            walk.stopped = true;
            break;
        }
        // stratum -> the children in it (kept index among `children`)
        std::map<std::uint64_t, std::vector<std::size_t>> strata;
        std::vector<Kept> children;
        for (Kept& kept : level) {
            DfsTree& tree = kept.tree;
            const std::vector<std::size_t> order = tree.branches(tree.nodes_[depth]);
            tree.prefix_ = depth + 1;
            for (std::size_t k = 0; k < order.size(); k++) {
                if (k > 0) tree.to_sibling(depth, order[k]);
                const ProbeRun counted = go(tree, depth + 1);
                walk.crash_states += kept.weight * static_cast<double>(counted.crash_states);
                if (!tree.cut_) {
                    walk.schedules += kept.weight;
                    walk.steps += kept.weight * static_cast<double>(counted.steps);
                    ended += kept.weight;
                    continue;
                }
                const DfsTree::Node& node = tree.nodes_[depth + 1];
                strata[node.signature].push_back(children.size());
                children.push_back({tree, kept.weight, counted.steps});
            }
        }
        std::vector<Kept> next;
        for (const auto& [stratum, members] : strata) {
            double total = 0;
            for (const std::size_t i : members) total += children[i].weight;
            // One member, drawn in proportion to its weight (a draw in
            // millionths of the total: weights are products of small counts).
            double point = total * static_cast<double>(prng.below(1000000)) / 1e6;
            std::size_t pick = members.back();
            for (const std::size_t i : members) {
                if (point < children[i].weight) {
                    pick = i;
                    break;
                }
                point -= children[i].weight;
            }
            next.push_back({std::move(children[pick].tree), total, children[pick].steps});
        }
        level = std::move(next);
    }
    return walk;
}

}  // namespace sim
