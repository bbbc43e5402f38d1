// Source-set dynamic partial-order reduction for DfsTree (see sim/dfs.hpp):
// the races of the schedule just run and the backtrack points they add
// (Abdulla et al., JACM 2017, Algorithm 1, with the race analysis done once
// per schedule as in Nidhugg), bounded as Coons, Musuvathi, McKinley
// (OOPSLA 2013) describe.
#include <algorithm>
#include <array>

#include "sim/dfs.hpp"

namespace sim {
namespace {

/// The happens-before order of a schedule's steps: past(j) is the set of
/// steps before j that happen before it, one bit per step.
class PastSets {
public:
    explicit PastSets(std::size_t steps) : words_((steps + 63) / 64), bits_(steps * words_, 0) {}
    [[nodiscard]] auto has(std::size_t step, std::size_t earlier) const -> bool {
        return ((bits_[step * words_ + earlier / 64] >> (earlier % 64)) & 1) != 0;
    }
    /// past(step) gains `earlier` and its past.
    void join(std::size_t step, std::size_t earlier) {
        for (std::size_t w = 0; w < words_; w++) bits_[step * words_ + w] |= bits_[earlier * words_ + w];
        bits_[step * words_ + earlier / 64] |= std::uint64_t{1} << (earlier % 64);
    }
    /// past(step) is empty again.
    void clear(std::size_t step) {
        std::fill_n(bits_.begin() + static_cast<std::ptrdiff_t>(step * words_), words_, 0);
    }
    /// Whether past(step) meets `set` (words_ words).
    [[nodiscard]] auto meets(std::size_t step, const std::vector<std::uint64_t>& set) const -> bool {
        for (std::size_t w = 0; w < words_; w++) {
            if ((bits_[step * words_ + w] & set[w]) != 0) return true;
        }
        return false;
    }
    [[nodiscard]] auto words() const -> std::size_t { return words_; }

private:
    std::size_t words_;
    std::vector<std::uint64_t> bits_;
};

auto contains(const std::vector<std::uint64_t>& keys, std::uint64_t key) -> bool {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// The tasks (keys) that can start notdep(e).later: the steps after e that
/// do not happen after it, then `later`; an initial has no step of that
/// sequence in its past.
auto initials(const std::vector<DfsTree::Event>& events, const PastSets& past, std::size_t e,
              std::size_t later) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> sequence(past.words(), 0);  // notdep(e).later so far
    std::vector<std::uint64_t> keys;
    for (std::size_t k = e + 1; k <= later; k++) {
        if (k != later && past.has(k, e)) continue;
        if (!past.meets(k, sequence) && !contains(keys, events[k].key)) keys.push_back(events[k].key);
        sequence[k / 64] |= std::uint64_t{1} << (k % 64);
    }
    return keys;
}

}  // namespace

void DfsTree::add_backtrack(std::size_t index, const std::vector<std::uint64_t>& initials,
                            std::uint64_t preferred) {
    Node& node = nodes_[index];
    if (std::any_of(initials.begin(), initials.end(), [&](std::uint64_t key) {
            return contains(node.backtrack, key) && affordable(node, key);
        })) {
        return;  // a source set already has one
    }
    auto listed = [&](std::uint64_t key) { return contains(node.candidates, key); };
    std::uint64_t pick = no_candidate_key;
    if (contains(initials, preferred) && listed(preferred) && affordable(node, preferred)) pick = preferred;
    for (const std::uint64_t key : initials) {
        if (pick == no_candidate_key && listed(key) && affordable(node, key)) pick = key;
    }
    for (const std::uint64_t key : initials) {
        if (pick == no_candidate_key && listed(key)) pick = key;
    }
    add_at(node, pick);
    if (preemptions_max_ == unbounded) return;
    // Bounded: the reversal may need a preemption at this node that the
    // bound forbids, while switching at the start of the running task's
    // stretch (the latest context switch at or before it), or where the
    // running task had blocked (the latest free switch), costs nothing more
    // (Coons, Musuvathi, McKinley, OOPSLA 2013, section 4).
    const std::uint64_t key = pick == no_candidate_key ? preferred : pick;
    bool switch_found = false;
    for (std::size_t c = index + 1; c-- > 0;) {
        Node& earlier = nodes_[c];
        const bool switched = earlier.candidates[earlier.chosen] != earlier.current;
        if (!switch_found && switched) {
            switch_found = true;
            if (c != index) add_at(earlier, key);
        }
        if (earlier.current == no_candidate_key) {
            if (c != index) add_at(earlier, key);
            return;
        }
    }
}

void DfsTree::add_at(Node& node, std::uint64_t key) {
    if (key != no_candidate_key && contains(node.candidates, key)) {
        if (!contains(node.backtrack, key)) node.backtrack.push_back(key);
        return;
    }
    // Not runnable there: every candidate (Flanagan, Godefroid, POPL 2005).
    for (const std::uint64_t candidate : node.candidates) {
        if (!contains(node.backtrack, candidate)) node.backtrack.push_back(candidate);
    }
}

void DfsTree::analyze_races() {
    const std::size_t n = events_.size();
    // One row more: the next step of a task the run left listed (below).
    PastSets past(n + 1);
    std::array<std::size_t, footprint_bits> last{};  // per footprint bit: the last step that touched it
    last.fill(no_cut);
    std::vector<std::pair<std::uint64_t, std::size_t>> last_of_key;  // program order
    // The bits some name has taken, and bit 0: a bit no name has taken is
    // touched only by steps that touch everything (footprint_all), which
    // touch bit 0 and every taken bit too, so leaving the rest out loses no
    // dependence. Walking all 256 bits of each timer step made xfs delalloc
    // fix dfs:1 --dpor 37% slower (2.60 s, then 3.57).
    const Footprint live = Footprint::first(std::max<std::size_t>(1, resource_count()));
    Footprint touched;  // the bits some step touched: last[bit] is a step
    std::vector<std::size_t> dependent;
    std::vector<std::size_t> before;
    // Set membership in O(1): mark[i] == stamp while step i is in `before`
    // (the stand-in steps below share one index, so a stamp per call).
    std::vector<std::uint64_t> mark(n, 0);
    std::uint64_t stamp = 0;
    auto races = [&](std::size_t j) {
        const Event& event = events_[j];
        stamp++;
        dependent.clear();
        // Steps touching one bit are mutually dependent, so they are ordered:
        // the last one stands for all the earlier ones.
        (event.footprint & touched).for_each_bit([&](std::size_t bit) {
            const std::size_t i = last[bit];
            if (mark[i] != stamp) {
                mark[i] = stamp;
                dependent.push_back(i);
            }
        });
        before = dependent;
        auto add_before = [&](std::size_t i) {
            if (i != no_cut && mark[i] != stamp) {
                mark[i] = stamp;
                before.push_back(i);
            }
        };
        const auto own = std::find_if(last_of_key.begin(), last_of_key.end(),
                                      [&](const auto& k) { return k.first == event.key; });
        if (own != last_of_key.end()) add_before(own->second);
        add_before(event.waker);
        for (const std::size_t d : before) past.join(j, d);
        for (const std::size_t i : dependent) {
            // A race: dependent, of different tasks, not ordered through a
            // third step, and reversible (i did not make j's task runnable).
            if (events_[i].key == event.key || i == event.waker) continue;
            const bool through = std::any_of(before.begin(), before.end(),
                                             [&](std::size_t d) { return d != i && past.has(d, i); });
            if (!through && events_[i].node != no_cut)
                add_backtrack(events_[i].node, initials(events_, past, i, j), event.key);
        }
        return own;
    };
    for (std::size_t j = 0; j < n; j++) {
        const Event& event = events_[j];
        const auto own = races(j);
        const Footprint footprint = event.footprint & live;
        footprint.for_each_bit([&](std::size_t bit) { last[bit] = j; });
        touched |= footprint;
        if (own != last_of_key.end()) {
            own->second = j;
        } else {
            last_of_key.emplace_back(event.key, j);
        }
    }
    // A run ends with candidates still listed whose next steps never ran,
    // so no race with them was seen: their reversals with the steps before
    // would be lost, and with them every class whose prefix takes such a
    // candidate first. A run ends so at a violation, a deadlock or a bound
    // (xfs/freeze-vs-log-worker: the freezer's own superblock transaction
    // before the log worker's), and whenever its tasks have all finished
    // while daemons or their timers are listed (the scheduler does not run
    // daemons on their own: xfs/falloc-k-over-sized-file fix, where dpor took
    // no daemon wake-up and judged 3 of the unreduced search's 15 distinct
    // crash states at dfs:1). Each is given its next step touching
    // everything, as a step of unknown footprint must be. A task the last
    // step made runnable was not listed before it and gets none: its next
    // step can run only after that step, which ends every run it is in (a
    // violation found at a step is found again wherever the steps before it
    // in happens-before order ran first; a cut at the step bound claims
    // nothing past it; a run whose tasks finished ends at that step), so no
    // class puts it earlier (tests/sim/dpor_test.cpp, the lock handed over
    // by the last step).
    if (n == 0) return;
    for (const std::uint64_t key : last_keys_) {
        if (key == events_.back().key) continue;
        const auto waker =
            std::find_if(wakers_.begin(), wakers_.end(), [&](const auto& w) { return w.first == key; });
        events_.push_back(Event{key, footprint_all, no_cut, waker != wakers_.end() ? waker->second : no_cut});
        past.clear(n);
        races(n);
        events_.pop_back();
    }
}

}  // namespace sim
