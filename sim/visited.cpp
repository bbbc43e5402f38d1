// Visited states for the bounded search (VisitedKey::reads and locals,
// sim/dfs.hpp): the key of a state from its parts, the cut by Godefroid's
// rule, and check mode (--check-fingerprints), which follows a revisit
// beside the first visit's run instead of cutting it and names the first
// part in which the two differ.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "sim/assert.hpp"
#include "sim/dfs.hpp"

namespace sim {

namespace {

/// Where `task` stands, for check mode's report: its last yield point.
auto point_text(const Scheduler& scheduler, TaskId task) -> std::string {
    const YieldPoint* point = scheduler.last_point(task);
    return point == nullptr ? std::string("its start") : std::string(point->name);
}

/// The live locals `task` declares where it stands, frame by frame.
auto locals_text(const Scheduler& scheduler, TaskId task) -> std::string {
    std::string names;
    for (const LiveFrame* frame : scheduler.live_frames(task)) {
        names += names.empty() ? "" : "; ";
        names += frame->names();
    }
    return names.empty() ? std::string("none") : names;
}

/// The named parts of resource `bit` whose hashes differ between two states,
/// as " (its pending writes, sequence)", or nothing where the world names none.
auto fields_text(const std::vector<ResourceField>& first, const std::vector<ResourceField>& now,
                 std::uint32_t bit) -> std::string {
    std::string names;
    for (const ResourceField& field : now) {
        if (field.bit != bit) continue;
        const bool same = std::any_of(first.begin(), first.end(), [&](const ResourceField& other) {
            return other == field;
        });
        if (same) continue;
        names += names.empty() ? "" : ", ";
        names += field.name;
    }
    return names.empty() ? std::string() : " (in its " + names + ")";
}

/// `value` in a field of type T: saturated, and whether it fitted below
/// the field's largest value (a first visit whose figure does not covers
/// nothing; a revisit's saturated figure compares as its own would).
template <class T>
auto narrow(std::uint64_t value, bool& fits) -> T {
    constexpr std::uint64_t most = std::numeric_limits<T>::max();
    if (value >= most) fits = false;
    return static_cast<T>(std::min(value, most));
}

/// The visit of the state keyed `key`, at `node`, as the table keeps it.
auto visit_of(const Scheduler& scheduler, const DfsTree::Node& node, std::uint64_t key) -> Visit {
    Visit visit;
    visit.key = key;
    bool fits = true;
    visit.preemptions = narrow<std::uint8_t>(node.preemptions, fits);
    visit.steps = narrow<std::uint32_t>(scheduler.steps(), fits);
    const std::uint64_t without_progress = scheduler.resource_hasher()->steps_without_progress();
    visit.without_progress = narrow<std::uint32_t>(without_progress, fits);
    const std::array<std::uint32_t, 3> charges{scheduler.io_reorders_used(),
                                               scheduler.daemon_wakeups_used(), scheduler.io_errors_used()};
    for (std::size_t i = 0; i < charges.size(); i++) {
        visit.charges[i] = narrow<std::uint8_t>(charges[i], fits);
    }
    for (const DfsTree::Explored& asleep : node.sleep) {
        // A timer's key (top bit) names a different timer on another path.
        if ((asleep.key >> 63) != 0 || asleep.key >= 32) {
            fits = false;
        } else {
            visit.sleep |= std::uint32_t{1} << asleep.key;
        }
    }
    visit.covers_none = !fits;
    return visit;
}

}  // namespace

auto DfsTree::on_path(std::uint32_t ordinal) const -> bool {
    // The path's visits were remembered in its order: their ordinals rise with depth.
    for (auto node = nodes_.rbegin(); node != nodes_.rend(); ++node) {
        if (node->visit == no_visit) continue;
        if (node->visit == ordinal) return true;
        if (node->visit < ordinal) return false;
    }
    return false;
}

auto StateParts::key() const -> std::uint64_t {
    StateHash hash(signature);
    hash.add(running);
    for (const std::uint64_t task : tasks) hash.add(task);
    for (const auto& [bit, value] : resources) {
        if (omitted.has(bit)) continue;
        hash.add(bit);
        hash.add(value);
    }
    hash.add(outside);
    hash.add(engine);
    return hash.value();
}

auto StateParts::same_key(const StateParts& other) const -> bool {
    const auto kept = [](const StateParts& parts) {
        std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
        for (const auto& entry : parts.resources) {
            if (!parts.omitted.has(entry.first)) out.push_back(entry);
        }
        return out;
    };
    return signature == other.signature && running == other.running && tasks == other.tasks &&
           kept(*this) == kept(other) && outside == other.outside && engine == other.engine;
}

void DfsTree::resolve_omit() {
    omit_resolved_ = true;
    if (omit_.empty()) return;
    const std::vector<std::string> names = resource_names();
    if (std::find(names.begin(), names.end(), omit_) != names.end()) {
        omit_resources_ = resource(omit_);
    } else {
        omit_local_ = omit_;
    }
}

auto DfsStrategy::state_parts(const Scheduler& scheduler, std::span<const Candidate> candidates,
                              const DfsTree::Node& node, StateParts& parts) const -> bool {
    ResourceHasher* hasher = scheduler.resource_hasher();
    if (hasher == nullptr || !scheduler.reads_known()) return false;
    ResourceHashes hashes;
    StateHash outside;
    if (!hasher->hash_resources(hashes) || !hasher->hash_outside(outside)) return false;
    if (!tree_.omit_resolved_) tree_.resolve_omit();
    // The preemptions are left out: they are compared as a budget.
    parts.signature = signature(scheduler, candidates, node.current, 0);
    // A task that finished never runs again: which one it was decides nothing.
    const bool ended = current_ != no_task && scheduler.task_state(current_) == TaskState::finished;
    parts.running = ended ? no_task : current_;
    StateHash listed;
    for (const Candidate& candidate : candidates) {
        if (candidate.is_timer()) listed.add(1 + static_cast<std::uint64_t>(candidate.charge));
    }
    parts.listed = listed.value();
    parts.tasks.clear();
    for (TaskId task = 0; task < scheduler.task_count(); task++) {
        StateHash hash;
        scheduler.hash_task(task, hash, tree_.omit_local_);
        parts.tasks.push_back(hash.value());
    }
    parts.resources.clear();
    for (std::size_t bit = 0; bit < footprint_bits; bit++) {
        if (hashes.bits[bit] == 0) continue;
        parts.resources.emplace_back(static_cast<std::uint32_t>(bit), hashes.bits[bit]);
    }
    parts.omitted = tree_.omit_resources_;
    parts.tasks_whole.clear();
    if (!tree_.omit_local_.empty() && tree_.checking_) {
        for (TaskId task = 0; task < scheduler.task_count(); task++) {
            StateHash hash;
            scheduler.hash_task(task, hash);
            parts.tasks_whole.push_back(hash.value());
        }
    }
    parts.fields = nullptr;
    if (tree_.checking_) {
        std::vector<ResourceField> fields;
        hasher->hash_fields(fields);
        if (last_fields_ == nullptr || *last_fields_ != fields) {
            last_fields_ = std::make_shared<const std::vector<ResourceField>>(std::move(fields));
        }
        parts.fields = last_fields_;
    }
    parts.outside = outside.value();
    StateHash engine;
    scheduler.hash_engine(engine);
    parts.engine = engine.value();
    return true;
}

auto DfsStrategy::visited_state(const Scheduler& scheduler, std::span<const Candidate> candidates,
                                const DfsTree::Node& node) -> bool {
    parts_known_ = state_parts(scheduler, candidates, node, parts_);
    if (!parts_known_) {
        if (tree_.owned_) tree_.stats_.unhashed++;
        return false;
    }
    if (tree_.checking_) check_decision(scheduler, parts_);
    const Visit visit = visit_of(scheduler, node, parts_.key() & tree_.key_mask_);
    bool fresh = true;
    const Visit* covering = tree_.visits_.find(visit.key, [&](const Visit& first) {
        fresh = false;
        const bool steps_free =
            first.steps > visit.steps && !tree_.step_bound_reached_ && !tree_.on_path(first.ordinal);
        if (!first.covers(visit, steps_free)) return false;
        if (!tree_.checking_) return true;
        // Check mode compares the parts, not their 64-bit key: a first
        // visit that differs in what the key hashes is a collision.
        const DfsTree::VisitMark& marked = tree_.visit_marks_[first.ordinal];
        if (!tree_.marks_[marked.run][marked.mark].parts.same_key(parts_)) {
            if (tree_.owned_) tree_.stats_.collisions++;
            return false;
        }
        // Follow the first visit's run from its mark of this state (not a
        // visit of this same run: that is a cycle). Only with the same
        // charged choices spent: with fewer, the first run may list a
        // charged timer the revisit cannot, which is the budget, not the key.
        if (following_ == DfsTree::no_trail && marked.run != run_ && first.charges == visit.charges &&
            first.without_progress == visit.without_progress) {
            following_ = marked.run;
            followed_ = marked.mark;
            follow_end_ = marked.mark + check_decisions + 1;
            if (tree_.owned_) tree_.stats_.merges_followed++;
        }
        return true;
    });
    if (covering == nullptr) {
        remember(visit, fresh);
        return false;
    }
    if (tree_.checking_) return false;
    if (tree_.owned_ && covering->charges != visit.charges) tree_.stats_.cut_fewer_charges++;
    if (tree_.owned_ && covering->steps > visit.steps) tree_.stats_.cut_more_steps++;
    return true;
}

void DfsStrategy::remember(const Visit& visit, bool fresh) {
    if (!tree_.visits_.insert(visit, tree_.visited_limit_)) {
        if (tree_.owned_) tree_.stats_.dropped++;
        return;
    }
    if (fresh && tree_.owned_) tree_.stats_.states++;
    remembered_ = static_cast<std::uint32_t>(tree_.visits_.size() - 1);
    if (tree_.checking_) {
        tree_.visit_marks_.push_back({run_, static_cast<std::uint32_t>(tree_.marks_[run_].size() - 1)});
    }
}

void DfsStrategy::check_decision(const Scheduler& scheduler, const StateParts& parts) {
    if (run_ == DfsTree::no_trail) {
        run_ = static_cast<std::uint32_t>(tree_.marks_.size());
        tree_.marks_.emplace_back();
    }
    tree_.marks_[run_].push_back({parts, no_candidate_key, {}});
    if (following_ == DfsTree::no_trail) return;
    const std::vector<DfsTree::Mark>& trail = tree_.marks_[following_];
    if (followed_ >= trail.size() || followed_ >= follow_end_) {
        following_ = DfsTree::no_trail;
        return;
    }
    DfsStats& stats = tree_.stats_;
    if (tree_.owned_) stats.decisions_compared++;
    if (trail[followed_].parts == parts) return;
    if (tree_.owned_) stats.mismatches++;
    if (tree_.mismatches_.size() < check_described_max) {
        const std::uint64_t after = followed_ - (follow_end_ - check_decisions - 1);
        std::string text = describe_mismatch(scheduler, trail[followed_ - 1], trail[followed_].parts, parts);
        tree_.mismatches_.push_back({tree_.runs_, after, std::move(text)});
    }
    following_ = DfsTree::no_trail;
}

void DfsStrategy::note_choice(const Scheduler& scheduler, std::span<const Candidate> candidates,
                              std::size_t pick) {
    if (!tree_.checking_ || run_ == DfsTree::no_trail || !parts_known_) return;
    DfsTree::Mark& mark = tree_.marks_[run_].back();
    const Candidate& chosen = candidates[pick];
    mark.chosen = chosen.key();
    if (chosen.is_timer()) {
        mark.step = "a timer's step (a device completion or a sleep's end)";
    } else {
        mark.step = "task " + scheduler.task_name(chosen.task) + "'s step from " +
                    point_text(scheduler, chosen.task) +
                    " (live locals declared there: " + locals_text(scheduler, chosen.task) + ")";
    }
    if (following_ == DfsTree::no_trail) return;
    const std::vector<DfsTree::Mark>& trail = tree_.marks_[following_];
    if (trail[followed_].chosen != mark.chosen) {
        following_ = DfsTree::no_trail;  // the runs part by choice: nothing to compare
        return;
    }
    followed_++;
}

auto DfsStrategy::describe_mismatch(const Scheduler& scheduler, const DfsTree::Mark& before,
                                    const StateParts& first, const StateParts& now) const -> std::string {
    std::string part;
    // Every task whose position or live locals part, with where it stands
    // now and what it declares there: a timer's step (a completion, a
    // wake-up) parts the tasks it wakes, not the one that ran.
    const bool whole = !first.tasks_whole.empty() && !now.tasks_whole.empty();
    const std::vector<std::uint64_t>& first_tasks = whole ? first.tasks_whole : first.tasks;
    const std::vector<std::uint64_t>& now_tasks = whole ? now.tasks_whole : now.tasks;
    const std::size_t tasks = std::min(first_tasks.size(), now_tasks.size());
    for (std::size_t task = 0; task < tasks; task++) {
        if (first_tasks[task] == now_tasks[task]) continue;
        const auto id = static_cast<TaskId>(task);
        part += part.empty() ? "" : ", ";
        part += "task " + scheduler.task_name(id) + " (now at " + point_text(scheduler, id) +
                ", live locals: " + locals_text(scheduler, id) + ")";
    }
    if (!part.empty()) part = "the position or live locals of " + part;
    if (part.empty() && first.running != now.running) {
        part = "the task that ran last (a choice away from it, once it is runnable, is a preemption)";
    }
    if (part.empty() && first.listed != now.listed) {
        part = "the timers that may fire now (a sleep's end against how long runnable tasks have waited)";
    }
    if (part.empty() && first.signature != now.signature) {
        part = "where the tasks stand (their states and yield points)";
    }
    if (part.empty() && first.resources != now.resources) {
        const std::vector<std::string> names = resource_names();
        std::size_t i = 0;
        const std::size_t common = std::min(first.resources.size(), now.resources.size());
        while (i < common && first.resources[i] == now.resources[i]) i++;
        const std::uint32_t bit =
            i < first.resources.size() ? first.resources[i].first : now.resources[i].first;
        part = "resource " + (bit < names.size() ? names[bit] : "#" + std::to_string(bit));
        if (first.fields != nullptr && now.fields != nullptr) {
            part += fields_text(*first.fields, *now.fields, bit);
        }
    }
    if (part.empty() && first.outside != now.outside) {
        part = "what lies outside the footprints (oracle, freeze)";
    }
    if (part.empty()) part = "the engine's timers, clock or budgets";
    return "two states merged under one key part after " + before.step + ": " + part +
           " differs. That step read something the key leaves out: a live local of the task there "
           "not declared (SIM_LIVE), or state of a resource it touched that the model does not hash";
}

}  // namespace sim
