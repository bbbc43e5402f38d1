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
// id (who added it and that adder's count: Scheduler::Timer::id), the same in
// every schedule that shares the prefix and in every schedule of one class:
// the id, not the order of additions, breaks ties between timers due at one
// instant, so two commuting task steps that each add one cannot decide which
// fires first by the order they ran in. Timer steps touch everything
// (footprint_all), so a timer never stays asleep past another step and
// nothing stays asleep past a timer: the I/O-reordering and
// daemon-wake-up budgets (spent only by timers, enforced by the scheduler,
// which lists a charged timer only while its budget lasts) are the same
// wherever a sleeping transition prunes and where it was explored.
//
// A split search (--jobs, --shard on dfs) cuts the tree at a depth D: the
// schedules whose first D choices agree form one unit, units numbered in the
// order the search reaches them. Every worker walks the whole tree above D,
// the same way in every worker, so a unit's sleep sets and fresh branch
// points are those of the unsplit search; below D it explores only the units
// it claims, and runs into the others only to depth D (no counts). The
// counts of the units sum to the unsplit search's.
//
// Dynamic partial-order reduction (dpor, opt-in: --dpor): source-set
// DPOR (Abdulla, Aronis, Jonsson, Sagonas, JACM 2017) over the same step
// footprints. After each schedule, the happens-before order of its steps
// (footprint dependence, program order, and the step that made a task
// runnable) gives its races; each race (e, e') adds at the decision before e
// one initial of notdep(e).e' unless one is there already. A node explores
// only its backtrack set. Under the preemption bound a reversal may not be
// affordable at e itself, so each addition is also made at the latest
// context switch and the latest free switch at or before e (Coons,
// Musuvathi, McKinley, OOPSLA 2013, "Bounded Partial-Order Reduction").
// Sleep sets stay on with dpor only without a bound: under one, this
// engine's budget rule for sleeping transitions (above) lets them prune a
// class dpor's conservative points rely on (tests/sim/dpor_test.cpp found
// such task sets), so bounded dpor runs without them.
// Crash states are evaluated at every fresh step where the disk changed, so
// the steps that change what a crash sees (the `visible` footprint: disk and
// oracle) are made mutually dependent (the visibility condition of ample
// sets): every class then passes through the same crash-visible states.
// A split search applies dpor only below the split depth (every worker
// must walk the same tree above it), so its counts depend on the depth.
#include <cstddef>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "sim/prng.hpp"

#include "sim/scheduler.hpp"
#include "sim/visit_table.hpp"

namespace sim {

struct DfsStats {
    std::uint64_t schedules = 0;        // runs started
    std::uint64_t pruned_sleep = 0;     // alternatives skipped because asleep
    std::uint64_t pruned_bound = 0;     // alternatives beyond the preemption bound
    std::uint64_t abandoned = 0;        // runs cut where every choice was asleep
    std::uint64_t cut_visited = 0;      // runs cut at a visited state (VisitedKey)
    // Of cut_visited: at a state first reached with fewer charged choices
    // spent (I/O reorderings, daemon wake-ups, I/O errors), compared as a
    // budget rather than keyed.
    std::uint64_t cut_fewer_charges = 0;
    // Of cut_visited: at a state first reached with more steps spent, whose
    // subtree was explored with no run at the step bound (Visit::covers).
    std::uint64_t cut_more_steps = 0;
    std::uint64_t unhashed = 0;         // decisions whose state could not be hashed (never cut)
    std::uint64_t states = 0;           // distinct states remembered (VisitedKey::reads, locals)
    // States not remembered because the table had reached its memory bound
    // (DfsTree::limit_visited): their revisits run again, never cut.
    std::uint64_t dropped = 0;
    // Check mode (DfsTree::check_fingerprints): revisits followed instead of
    // cut, decisions compared with the first visit's run, and those at which
    // the two runs parted (a key that left something out).
    std::uint64_t merges_followed = 0;
    std::uint64_t decisions_compared = 0;
    std::uint64_t mismatches = 0;
    // Check mode: key hits whose states differ in what the key hashes (a
    // 64-bit collision), neither cut nor followed.
    std::uint64_t collisions = 0;
    // Footprint check mode (DfsTree::check_footprints): task steps compared.
    std::uint64_t footprint_steps = 0;
    auto operator+=(const DfsStats& other) -> DfsStats&;
};

inline constexpr std::size_t no_cut = ~std::size_t{0};

/// What the search keys the states it calls visited by. `locals` and
/// `reads` are search modes (fuzz --states, sim/visited.cpp); `positions`
/// and `histories` are measurements of what pruning visited states could
/// save (`crashsim bench --visited`). A run is cut at a fresh decision with
/// an awake choice whose key an earlier one had. The key is a 64-bit hash,
/// not the state: a collision can only add a cut (its probability is printed
/// with the search's figures).
/// - positions: every task's state and last yield point, the timers listed,
///   the clock, the preemptions spent and the running task, with no model
///   state and no task's locals: UNSOUND (it merges states whose futures
///   differ), so its schedule count bounds from below what any sound
///   fingerprint of the same states could reach.
/// - histories: the same, plus per task the sequence of those keys at
///   each of its own steps (a measurement: it merges runs that differ in the
///   order of timer steps between task steps).
/// - reads: the positions, the engine's state (Scheduler::hash_state:
///   timers, budgets, each task's history of the hashes of the resources its
///   steps touched, and its declared live locals), every resource's hash and
///   what lies outside the footprints (ResourceHasher). A task's locals are a
///   function of what it read, so this needs no declared locals.
/// - locals: the same without the histories: each task's declared live
///   locals (sim/live.hpp) stand for its stack, so a model that leaves one
///   out merges states whose futures differ (check mode names it).
/// With reads and locals a revisit is cut only when the first visit had
/// spent no more preemptions and charged choices and its sleep set held no
/// task the revisit's does not (Godefroid's rule), so the first visit
/// explored at least what the revisit would; more steps spent only while no
/// run met the step bound (Visit::covers). A run whose hashes fail (a model
/// without them) is never cut.
enum class VisitedKey : std::uint8_t { none, positions, histories, reads, locals };

/// One state split into the parts its key hashes, for check mode's report of
/// which part two merged states differ in.
struct StateParts {
    std::uint64_t signature = 0;  // positions, timers listed, the running task
    // The task that ran last, runnable or not: when it wakes, going on with
    // it costs no preemption and switching away does.
    std::uint64_t running = 0;
    std::uint64_t listed = 0;  // the timers listed, by charge (check mode's report)
    std::vector<std::uint64_t> tasks;  // per task: Scheduler::hash_task, less omit_from_key's local
    // With a local omitted (omit_from_key): the tasks' whole hashes, which
    // check mode compares; the key leaves the local out.
    std::vector<std::uint64_t> tasks_whole;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> resources;  // (bit, hash), nonzero only
    Footprint omitted;  // resources the key leaves out (omit_from_key); check mode compares them
    // Check mode: ResourceHasher::hash_fields, shared by consecutive states
    // whose fields are equal. Derived from the resources' hashes, so left out
    // of the comparison.
    std::shared_ptr<const std::vector<ResourceField>> fields;
    std::uint64_t outside = 0;  // ResourceHasher::hash_outside
    std::uint64_t engine = 0;   // Scheduler::hash_engine
    [[nodiscard]] auto key() const -> std::uint64_t;
    /// Whether the two agree in everything key() hashes: check mode tells a
    /// collision of 64-bit keys from a merge with it.
    [[nodiscard]] auto same_key(const StateParts& other) const -> bool;
    auto operator==(const StateParts& other) const -> bool {
        return signature == other.signature && running == other.running && listed == other.listed &&
               tasks == other.tasks && tasks_whole == other.tasks_whole && resources == other.resources &&
               omitted == other.omitted && outside == other.outside && engine == other.engine;
    }
};

/// What --check-fingerprints found: a merge of two states whose runs parted
/// when both took the same choices from there.
struct FingerprintMismatch {
    std::uint64_t schedule = 0;   // the revisit's run: the search's runs before it
    std::uint64_t decisions = 0;  // decisions after the merge at which they parted
    std::string what;             // the task, its yield point, the part that differs
};

/// Decisions past a merge that check mode compares.
inline constexpr std::size_t check_decisions = 8;
/// Mismatches check mode describes.
inline constexpr std::size_t check_described_max = 4;
/// Footprint omissions a report describes.
inline constexpr std::size_t omissions_described_max = 16;
/// A preemption bound that never bites (dpor adds no conservative points).
inline constexpr std::uint32_t unbounded = ~std::uint32_t{0};

struct ProbeRun;
struct ProbeWalk;

/// The search tree: one node per decision of the current schedule.
class DfsTree {
public:
    struct Explored {
        std::uint64_t key;  // Candidate::key()
        Footprint footprint;
        std::uint32_t preemptions_after;  // spent once it had run, where it was explored
    };
    static constexpr std::uint32_t no_visit = ~std::uint32_t{0};
    struct Node {
        std::vector<std::uint64_t> candidates;  // keys
        std::uint64_t current = no_candidate_key;  // the task that may run on without a preemption
        std::uint32_t preemptions = 0;  // spent before this decision
        std::vector<Explored> sleep;    // asleep on arrival
        std::vector<Explored> explored; // chosen here in earlier schedules
        std::vector<std::uint64_t> backtrack;  // dpor: the keys to explore here
        // The visit of this decision's state the table remembered (its
        // ordinal), or none: while the node is on the path, that visit's
        // subtree is still being explored.
        std::uint32_t visit = no_visit;
        std::size_t chosen = 0;
        bool chosen_recorded = false;
        /// Where every task stands at this decision (its state and last
        /// yield point), the timers listed and the preemptions spent: the
        /// strata of stratified_probe.
        std::uint64_t signature = 0;
    };

    /// One step of the current schedule, for dpor's race analysis.
    struct Event {
        std::uint64_t key;             // Candidate::key()
        Footprint footprint;
        std::size_t node = no_cut;     // the decision that chose it (none: a lone candidate)
        std::size_t waker = no_cut;    // the step that made its task runnable
    };

    /// dpor under a finite bound goes without sleep sets (see above).
    DfsTree(std::uint32_t preemptions_max, bool sleep_sets, bool dpor = false, Footprint visible = {})
        : preemptions_max_(preemptions_max),
          sleep_sets_(sleep_sets && !(dpor && preemptions_max != unbounded)),
          dpor_(dpor),
          visible_(visible) {}

    /// After a schedule: move to the next unexplored branch; false when none is left.
    auto backtrack() -> bool;
    [[nodiscard]] auto stats() const -> const DfsStats& { return stats_; }
    /// The stats counted since the last call (of the units this tree owns).
    auto take_stats() -> DfsStats;

    /// Splits the search at `depth` decisions (1 or more): `claim(unit)` is
    /// asked once per unit, in order, whether this tree explores it; unit 0
    /// at once. Stats count only claimed units (a backtrack counts for the
    /// unit it leaves).
    void split(std::size_t depth, std::function<bool(std::uint64_t)> claim);
    [[nodiscard]] auto unit() const -> std::uint64_t { return unit_; }
    [[nodiscard]] auto owned() const -> bool { return owned_; }

    /// Estimator probes (knuth_probe): the next run stops at the fresh
    /// decision `depth`, which it records without taking it.
    void cut_at(std::size_t depth) { cut_at_ = depth; }
    /// Whether the last run stopped at the cut.
    [[nodiscard]] auto was_cut() const -> bool { return cut_; }
    [[nodiscard]] auto depth() const -> std::size_t { return nodes_.size(); }
    [[nodiscard]] auto preemptions_max() const -> std::uint32_t { return preemptions_max_; }
    [[nodiscard]] auto sleep_sets() const -> bool { return sleep_sets_; }
    [[nodiscard]] auto dpor() const -> bool { return dpor_; }
    /// Remembers visited states by `key` (VisitedKey): reads and locals cut
    /// revisits soundly (fuzz --states); positions and histories are bench
    /// --visited's measurements.
    void measure_visited(VisitedKey key) { visited_key_ = key; }
    [[nodiscard]] auto visited_key() const -> VisitedKey { return visited_key_; }
    /// Check mode (--check-fingerprints): no revisit is cut; each is
    /// followed for check_decisions decisions beside the first visit's run
    /// and their parts compared while both take the same choices.
    void check_fingerprints() { checking_ = true; }
    [[nodiscard]] auto checking_fingerprints() const -> bool { return checking_; }
    /// The first check_described_max mismatches check mode found, in order.
    [[nodiscard]] auto mismatches() const -> const std::vector<FingerprintMismatch>& { return mismatches_; }
    /// Footprint check mode (--check-footprints): every run compares each
    /// task step's footprint with the resources it changed
    /// (Scheduler::check_footprints); the search itself is unchanged.
    /// `left_out` names resources the check takes out of every step's
    /// footprint: a mutation its tests must see caught.
    void check_footprints(Footprint left_out = {}) {
        checking_footprints_ = true;
        footprint_left_out_ = left_out;
    }
    [[nodiscard]] auto checking_footprints() const -> bool { return checking_footprints_; }
    /// What it found, each (task, start, end, resource) once, in the order
    /// found (a few hundred at most: points by points by resources).
    [[nodiscard]] auto omissions() const -> const std::vector<FootprintOmission>& { return omissions_; }
    /// Leaves `bit` (a footprint bit) or the live local `local` out of every
    /// key: a mutation that check mode must catch (tests, --fingerprint-omit).
    /// `name` is a resource's when one is registered by that name at the
    /// first state hashed (models register theirs as they first hash).
    void omit_from_key(std::string name) { omit_ = std::move(name); }
    /// Bounds the visited-state table at about `bytes` (0: no bound): once
    /// full, new states are not remembered (DfsStats::dropped), so their
    /// revisits run again. Each tree (each job) has its own table, emptied
    /// per unit of a split search, so the counts do not depend on --jobs.
    void limit_visited(std::uint64_t bytes) { visited_limit_ = bytes; }
    /// Keeps only the low `bits` bits of every visited-state key, so that
    /// keys collide often: tests show with it what check mode does at a
    /// collision.
    void narrow_keys(unsigned bits) {
        key_mask_ = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    }

private:
    friend class DfsStrategy;
    [[nodiscard]] static auto asleep(const std::vector<Explored>& set, std::uint64_t key) -> bool;
    /// Asleep, and explored with at least the budget taking it now would leave.
    [[nodiscard]] static auto prunes(const std::vector<Explored>& set, std::uint64_t key,
                                     std::uint32_t preemptions_after) -> bool;
    [[nodiscard]] auto cost(const Node& node, std::uint64_t key) const -> std::uint32_t;
    /// Whether the search would take `key` at `node`: not pruned by the
    /// sleep set it arrived with, within the bound.
    [[nodiscard]] auto takes(const Node& node, std::uint64_t key) const -> bool;
    /// The candidates the search takes at `node`, in the order it takes them
    /// (the one chosen first, then the others by index).
    [[nodiscard]] auto branches(const Node& node) const -> std::vector<std::size_t>;
    void next_unit();
    /// Whether dpor restricts the node at `depth` to its backtrack set.
    [[nodiscard]] auto reduces(std::size_t depth) const -> bool {
        return dpor_ && (split_depth_ == no_cut || depth >= split_depth_);
    }
    // dpor (sim/dpor.cpp): the races of the schedule just run, and the
    // backtrack points they add.
    void analyze_races();
    /// Adds one of `initials` (the tasks that can start notdep(e).e') at
    /// the decision `node` before e, unless one is there, preferring e''s.
    void add_backtrack(std::size_t node, const std::vector<std::uint64_t>& initials, std::uint64_t preferred);
    /// Adds `key` (or every candidate, when it is not one) at `node`.
    void add_at(Node& node, std::uint64_t key);
    [[nodiscard]] auto affordable(const Node& node, std::uint64_t key) const -> bool {
        return node.preemptions + cost(node, key) <= preemptions_max_;
    }

    VisitedKey visited_key_ = VisitedKey::none;
    std::unordered_set<std::uint64_t> visited_;  // membership only: no order reaches behaviour
    /// VisitedKey::reads and locals: each visit's fingerprint and what the
    /// search had left there (looked up only: no order reaches behaviour).
    VisitTable visits_;
    // Check mode: per visit (its ordinal), its run (marks_) and the run's mark of it.
    struct VisitMark {
        std::uint32_t run;
        std::uint32_t mark;
    };
    std::vector<VisitMark> visit_marks_;
    // A run of this unit ended at the step bound (DfsStrategy::see_step_bound).
    bool step_bound_reached_ = false;
    /// Whether the visit `ordinal` is a decision of the current path (its
    /// subtree not explored yet).
    [[nodiscard]] auto on_path(std::uint32_t ordinal) const -> bool;
    std::uint64_t visited_limit_ = 0;  // limit_visited
    std::uint64_t key_mask_ = ~std::uint64_t{0};  // narrow_keys
    // Check mode: per run, its fresh decisions (the parts at each and the
    // choice taken there): a first visit's continuation is its run's marks
    // after its own.
    static constexpr std::uint32_t no_trail = ~std::uint32_t{0};
    struct Mark {
        StateParts parts;
        std::uint64_t chosen = no_candidate_key;  // the candidate taken at it
        std::string step;  // who took it and from where, for the report
    };
    std::vector<std::vector<Mark>> marks_;
    bool checking_ = false;
    std::vector<FingerprintMismatch> mismatches_;
    bool checking_footprints_ = false;
    Footprint footprint_left_out_;
    std::vector<FootprintOmission> omissions_;
    std::uint64_t runs_ = 0;  // runs ended (backtrack calls), for check mode's reports
    std::string omit_;  // omit_from_key
    void resolve_omit();
    bool omit_resolved_ = false;
    std::string omit_local_;
    Footprint omit_resources_;
    std::uint32_t preemptions_max_;
    bool sleep_sets_;
    bool dpor_;
    Footprint visible_;
    std::vector<Event> events_;  // the current schedule's steps (dpor)
    // dpor, the current schedule (DfsStrategy::record_event): the candidates
    // of its last step, and per task key listed but not run since, the step
    // that made it runnable. A run ends with candidates still listed (at a
    // violation, a bound, or with only daemons left); analyze_races gives
    // each of them its next step.
    std::vector<std::uint64_t> last_keys_;
    std::vector<std::pair<std::uint64_t, std::size_t>> wakers_;
    std::vector<Node> nodes_;
    std::size_t prefix_ = 0;  // decisions the next schedule replays
    DfsStats stats_;
    // Split (split()): units are the subtrees below depth split_depth_.
    std::size_t split_depth_ = no_cut;
    std::function<bool(std::uint64_t)> claim_;
    std::uint64_t unit_ = 0;
    bool owned_ = true;
    std::size_t cut_at_ = no_cut;  // the fresh decision at which a run stops
    bool cut_ = false;             // the last run stopped there

    // The estimators' probes (knuth_probe, stratified_probe): back up to the
    // decision at `depth` and take its next branch, which must be `expected`;
    // one run of `tree` stopped at the fresh decision `cut`, counted in `walk`
    // (`stop` set once a run asks the probe to stop).
    void to_sibling(std::size_t depth, std::size_t expected);
    static auto probe_run(DfsTree& tree, std::size_t cut, const std::function<ProbeRun(DfsTree&)>& run,
                          ProbeWalk& walk, bool& stop) -> ProbeRun;
    friend auto knuth_probe(std::uint32_t, bool, Prng&, const std::function<ProbeRun(DfsTree&)>&,
                            std::uint64_t) -> ProbeWalk;
    friend auto stratified_probe(std::uint32_t, bool, Prng&, const std::function<ProbeRun(DfsTree&)>&,
                                 std::uint64_t) -> ProbeWalk;
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
    [[nodiscard]] auto abandoned() const -> bool override { return abandoned_ || cut_; }
    [[nodiscard]] auto fresh() const -> bool override { return fresh_; }
    [[nodiscard]] auto remembers_states() const -> bool override {
        return tree_.visited_key_ == VisitedKey::reads || tree_.visited_key_ == VisitedKey::locals;
    }
    [[nodiscard]] auto needs_read_histories() const -> bool override {
        return tree_.visited_key_ == VisitedKey::reads;
    }
    [[nodiscard]] auto checks_footprints() const -> bool override { return tree_.checking_footprints_; }
    [[nodiscard]] auto footprint_left_out() const -> Footprint override { return tree_.footprint_left_out_; }
    void see_omissions(std::span<const FootprintOmission> omissions, std::uint64_t steps_checked) override;
    void see_step_bound() override { tree_.step_bound_reached_ = true; }

private:
    DfsTree& tree_;
    /// VisitedKey::reads and locals (sim/visited.cpp): whether a visit of
    /// this state with at least the budget and at most the sleep set of
    /// `node` came first (and records this one otherwise). In check mode it
    /// never cuts: it follows the first visit's trail instead.
    auto visited_state(const Scheduler& scheduler, std::span<const Candidate> candidates,
                       const DfsTree::Node& node) -> bool;
    /// Records `visit` (`fresh`: its key's first), unless the table is at
    /// its bound (DfsTree::limit_visited).
    void remember(const Visit& visit, bool fresh);
    /// The state's parts now; false when a hash failed.
    auto state_parts(const Scheduler& scheduler, std::span<const Candidate> candidates,
                     const DfsTree::Node& node, StateParts& parts) const -> bool;
    /// Check mode, at a fresh decision whose parts are `parts`: marks it in
    /// this run's trail and compares it with the run it follows.
    void check_decision(const Scheduler& scheduler, const StateParts& parts);
    /// Check mode, once the decision's choice is known.
    void note_choice(const Scheduler& scheduler, std::span<const Candidate> candidates, std::size_t pick);
    /// The report of a part that differs between `first` and `now`.
    [[nodiscard]] auto describe_mismatch(const Scheduler& scheduler, const DfsTree::Mark& before,
                                         const StateParts& first, const StateParts& now) const -> std::string;
    std::uint32_t remembered_ = DfsTree::no_visit;  // the visit this decision remembered
    std::uint32_t run_ = DfsTree::no_trail;        // this run's marks (check mode)
    std::uint32_t following_ = DfsTree::no_trail;  // the run this one is compared with
    std::size_t followed_ = 0;  // its mark that the next decision compares with
    std::size_t follow_end_ = 0;  // and the mark past the last it compares
    bool parts_known_ = false;           // this decision's parts were taken
    StateParts parts_;                   // the current decision's
    mutable std::shared_ptr<const std::vector<ResourceField>> last_fields_;  // check mode
    std::vector<std::uint64_t> histories_;  // VisitedKey::histories, per task id
    auto choose_step(const Scheduler& scheduler, std::span<const Candidate> candidates) -> std::size_t;
    /// Whether the run stops here, a state the measurement calls visited.
    auto visited(const Scheduler& scheduler, std::uint64_t signature) -> bool;
    std::size_t decision_ = 0;
    std::vector<DfsTree::Explored> sleep_;  // the current state's sleep set
    DfsTree::Node* pending_ = nullptr;      // node whose choice just ran
    /// A fresh decision: its node, and the choice (or none: abandoned).
    auto decide(const Scheduler& scheduler, std::span<const Candidate> candidates, std::uint64_t running)
        -> std::size_t;
    /// dpor: notes the step about to run, and which tasks it made runnable.
    void record_event(std::span<const Candidate> candidates, std::size_t pick, std::size_t node);
    [[nodiscard]] static auto signature(const Scheduler& scheduler, std::span<const Candidate> candidates,
                                        std::uint64_t running, std::uint32_t preemptions) -> std::uint64_t;
    bool recorded_ = false;  // the step running now is in the tree's events
    TaskId current_ = no_task;               // last task that ran a task step
    std::uint32_t preemptions_ = 0;
    bool abandoned_ = false;
    bool cut_ = false;  // stopped at the tree's cut
    bool fresh_;
};

/// What one run of a probe counted (the caller runs it: sim knows no disk).
struct ProbeRun {
    std::uint64_t crash_states = 0;  // evaluated (or counted) past the fresh branch point
    std::uint64_t steps = 0;
    bool stop = false;  // the caller asks the probe to stop here (a stop request)
};

/// A probe's product of branching factors past which it stops: 10^30
/// schedules would take 10^16 years at a microsecond each, and a deeper
/// walk's product overflows to infinity (btrfs/log-commit-jiffy-sleep at
/// dfs:2, some 8,000 decisions deep, printed "inf schedules").
inline constexpr double probe_weight_max = 1e30;

/// One random root-to-leaf walk of the tree the search explores (Knuth 1975,
/// "Estimating the efficiency of backtrack programs"): at each node the
/// branches the search would take (sleep set and bound applied, the sleep set
/// built from the siblings the search takes first, so each of those runs one
/// step), one drawn at random, and the branching factors multiplied. The
/// mean over walks of `schedules` is an unbiased estimate of the search's
/// schedules; likewise crash states (each tree edge's counted once, as the
/// search evaluates a crash state only on its fresh branch) and steps (every
/// schedule re-runs from the start).
struct ProbeWalk {
    double schedules = 0;
    double crash_states = 0;
    double steps = 0;
    /// units[d]: the walk's estimate of the units at split depth d (distinct
    /// first d choices, or fewer where a schedule ends sooner), d = 0..
    std::vector<double> units;
    std::uint64_t runs = 0;       // runs the walk took
    std::uint64_t run_steps = 0;  // and their steps
    /// The walk stopped before every path it followed reached a leaf: at its
    /// run cap, past probe_weight_max, or at a stop request. Its figures
    /// then count the tree down to `depth` decisions, each path cut there as
    /// one schedule: an estimate of less than the whole, never more (every
    /// node has a leaf below it, and its subtree's crash states and steps).
    bool stopped = false;
    std::size_t depth = 0;  // decisions below the root the walk reached
};

/// `runs_max` (0: none) caps the walk's runs; the walk stops there.
auto knuth_probe(std::uint32_t preemptions_max, bool sleep_sets, Prng& prng,
                 const std::function<ProbeRun(DfsTree&)>& run, std::uint64_t runs_max = 0) -> ProbeWalk;

/// Heuristic sampling (Chen 1992, "Heuristic sampling: a method for
/// predicting the performance of tree searching programs", SIAM J.
/// Computing 21(2)): Knuth's walk widened to one node per stratum and
/// depth. Every child of every kept node is run (the branches the search
/// takes, sleep sets built as in knuth_probe); the children are grouped by
/// stratum (the preemptions spent and the number of candidates at the
/// child's decision), one child per stratum is kept, drawn with probability
/// proportional to its weight, and carries the stratum's whole weight. The
/// sums are unbiased as Knuth's are, with far less spread where nodes of one
/// stratum have subtrees of like size. `runs` counts every run it took;
/// `runs_max` caps them as for knuth_probe.
auto stratified_probe(std::uint32_t preemptions_max, bool sleep_sets, Prng& prng,
                      const std::function<ProbeRun(DfsTree&)>& run, std::uint64_t runs_max = 0) -> ProbeWalk;

}  // namespace sim
