#pragma once
// Judging: one run's world and the crash states evaluated on it, each
// mounted (with power cuts inside its recovery, within the bound) and put
// through every checker, verdicts reused across schedules by the verdict memo.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkers/checker.hpp"
#include "checkers/oracle.hpp"
#include "model/filesystem.hpp"
#include "model/key_words.hpp"
#include "runner/crash_faults.hpp"
#include "runner/runner.hpp"
#include "runner/verdict_memo.hpp"
#include "sim/scheduler.hpp"
#include "sim/trace.hpp"

namespace runner {

/// How the power cuts inside recovery are chosen (CrashPlan's kind).
enum class CutChoice : std::uint8_t {
    draw,      // one cut per level, drawn (random, PCT)
    every,     // every write of the recovery, every subset the policy allows (DFS)
    recorded,  // the repro's cuts (replay)
};

struct RunState {
    RunOutcome& outcome;
    sim::Trace& trace;
    sim::Scheduler& scheduler;
    model::FileSystem& fs;
    checkers::Oracle& oracle;
    const std::vector<std::unique_ptr<checkers::Checker>>& checkers;
    const checkers::CheckContext& context;
    loader::UnflushedPolicy policy;
    std::uint32_t recovery_crashes = 0;  // ExploreBounds::recovery_crashes
    sim::Prng recovery_prng;             // CutChoice::draw's stream
    sim::Prng fault_prng;                // draw_faults's stream
    std::uint64_t seen_disk = 0;
    std::uint64_t seen_oracle = 0;
    /// The story of the crash state being judged, written to the trace when
    /// it is narrated or violated.
    std::vector<sim::TraceLine> story{};
    /// The cuts inside recovery that led to the mount being judged.
    std::vector<RecoveryCut> cuts{};
    /// The crash state's device faults, and what became of each (told after
    /// the first mount's story).
    CrashFaults faults{};
    std::vector<std::string> fault_lines{};
    bool tears_capped_told = false;
    /// The freeze level the run's events last set: the level at a cut.
    model::FreezeLevel frozen = model::FreezeLevel::unfrozen;
    model::FreezeLevel seen_frozen = model::FreezeLevel::unfrozen;
    /// Crash states judged by this Simulation's runs without a violation
    /// (memo_key); used where nothing else reaches the outcome: no story
    /// asked for, no device fault, no lying cache, every cut inside recovery
    /// enumerated.
    bool memo = false;
    VerdictMemo* verdicts = nullptr;
    /// Lists the memo entries the run reaches (RunOutcome::memo_reached):
    /// only a dfs run's, which a search counts.
    bool list_reached = false;
    /// The oracle's canonical id at oracle_revision (Oracle::encode is
    /// redone only when the oracle changed).
    std::uint64_t oracle_revision = ~std::uint64_t{0};
    std::uint64_t oracle_id = model::ContentTable::none;
    model::KeyWords memo_words{};  // memo_key's key, reused: a key allocates nothing once warm
    KeyObjects key_objects{};      // memo_key's scratch
    model::KeyWords point_words{};  // point_key's key, reused
    /// The device's canonical id (device_key interned) at device_epoch:
    /// an evaluation point after a step that changed only the promises or
    /// the freeze level keys the device again without encoding it.
    std::uint64_t device_epoch = ~std::uint64_t{0};
    std::uint64_t device_id = model::ContentTable::none;
    model::KeyWords device_words{};  // device_key's words, reused
    /// The point being judged for the memo: each crash state's verdict id.
    PointVerdict* recording = nullptr;
    std::uint64_t points_reused = 0;
    std::uint64_t memo_hits = 0;
    std::uint64_t mounts_reused = 0;
    /// The mounts of the crash state being evaluated, by image: what their
    /// judge added to RunOutcome::judged (none violated). A power cut inside
    /// recovery that keeps none of its writes leaves the image it recovered,
    /// and recover() gives what recover_with_writes() did (model/filesystem.hpp);
    /// the oracle, freeze level and tears are those of the same crash state,
    /// and the ids of recovery's own objects stay until forget_recovery().
    std::map<model::KeyWords, std::vector<std::uint64_t>> mounts_judged{};

    /// A story line; dropped unformatted where no trace keeps it (a disabled
    /// sim::Trace drops every line it is given).
    void tell(const char* who, std::string text) {
        if (!trace.enabled()) return;
        story.push_back(
            {sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), who, std::move(text)});
    }

    /// Every checker on one mount's result; true on a violation.
    auto judge(model::RecoveredState& state, std::vector<checkers::Violation>& found) -> bool;

    /// What became of the run's write errors so far
    /// (faults.write_errors), counted together: detected once an error was
    /// returned to the application (an fsync's EIO), else survived when
    /// every checker holds (nothing promised what the failed writes held).
    auto write_error_outcome(const std::vector<checkers::Violation>& found) -> std::string;

    static auto describe_unreadable(std::uint64_t block) -> std::string;

    /// The crash image of `keep` and `injected`, its unreadable blocks set.
    auto faulted_image(const std::vector<bool>& keep, const CrashFaults& injected) const
        -> model::disk::Image;

    /// The blocks the first mount of that image reads through a checked
    /// path (Image::read_checked), in read order: where a latent sector
    /// error is offered (none without faults.latent_errors). A mount
    /// without them, its result discarded.
    auto checked_reads(const std::vector<bool>& keep, const CrashFaults& injected) const
        -> std::vector<std::uint64_t>;

    /// Random and PCT's faults for one crash state: the writes' (draw_faults),
    /// then no latent sector error or one on a block the mount reads.
    auto draw_crash_faults(const std::vector<bool>& keep) -> CrashFaults;

    /// What became of one fault on the first mount: `described`
    /// by the device, its damage in blocks [first, first + count) (a torn
    /// write's own blocks, a misdirected write's victim).
    auto fault_outcome(const std::string& described, std::uint64_t first, std::uint64_t count,
                       const model::RecoveredState& state, const std::vector<checkers::Violation>& found)
        -> std::string;

    /// A torn block a file maps on a model that verifies data checksums.
    auto torn_read(const model::RecoveredState& state) const -> std::string;

    /// A lying cache: the lost writes it had called durable, told,
    /// and each violation attributed to the device.
    void blame_lies(const std::vector<bool>& keep, std::vector<checkers::Violation>& found);

    /// Recovery and every checker on one crash state, then (within the
    /// recovery_crashes bound) power cuts inside that recovery and a mount
    /// again; true on a violation.
    auto evaluate(const std::vector<bool>& keep, const CrashFaults& injected, bool narrate, CutChoice choice,
                  const std::vector<RecoveryCut>& recorded = {}) -> bool;

    /// The power cut's story, told into the trace: the position, the writes
    /// kept, the faults, then the mounts' lines.
    void tell_cut(const std::vector<bool>& keep);

    /// Sets memo_words to the key of a crash state in the verdict memo across
    /// schedules; false where it cannot be formed (a model without a metadata
    /// index, a full content table). What a verdict depends on:
    /// - recovery (FileSystem::recover, recover_with_writes) reads the image
    ///   and the metadata objects its blocks name, besides geometry fixed at
    ///   mkfs (FileSystem::metadata_index says which models qualify). The
    ///   key holds every segment's content but DurableBlock::sequence (no
    ///   model reads it; MountDevice only orders recovery's writes after
    ///   every block of the image), segment boundaries kept as they are.
    ///   An object id is a per-run name: the key holds its position among
    ///   the ids the image names, first seen first, and after the segments
    ///   each named object's canonical id (its content, MetadataStore::
    ///   canonical) and the positions of the ids it holds (btrfs's
    ///   Superblock names its trees). Recovery compares ids only for
    ///   equality (read_meta's "parent transid verify failed") and follows
    ///   them, so equal keys mean images alike up to renaming the objects.
    ///   Recovery's own objects (mark_recovery) are never in a key: it is
    ///   made before the mount, from the run's image.
    /// - the checkers read the recovered state, the oracle by content
    ///   (Oracle::encode: interned, its id cached per revision) and the
    ///   check context, of which only the freeze level changes between runs.
    /// - the cuts inside recovery (CutChoice::every) come from the image,
    ///   the policy and the recovery_crashes bound, which set_bounds may
    ///   change between runs: both in the key. No prng is drawn.
    /// - judge()'s faults_injected: no fault, no write error (evaluate's
    ///   condition for the memo).
    auto memo_key(const model::disk::Image& image) -> bool;

    /// Sets oracle_id to the oracle's canonical id (interned once per
    /// revision); false when the content table is full.
    auto oracle_key() -> bool;

    /// Sets point_words to the key of this evaluation point (evaluate_point):
    /// the oracle, freeze level, recovery bound and policy as memo_key has
    /// them, then the device's canonical id (device_key's words interned:
    /// equal ids, equal words). False where a crash state of the point would
    /// not be memoized (evaluate's conditions), the memo dropped verdicts,
    /// or a content table is full.
    auto point_key() -> bool;
    /// Sets device_id to the device's canonical id (interned once per
    /// device epoch); false as device_key, or when the table is full.
    auto device_key_id() -> bool;

    /// Every crash state of this step (every subset the policy allows, every
    /// fault set): judged, or, when an earlier run judged an evaluation point
    /// with the same key, that point's counts again (each of its crash
    /// states a verdict reused, as evaluate would find them one by one).
    /// True on a violation.
    auto evaluate_point(std::size_t pending) -> bool;

    /// The point judged before under point_words: its counts again.
    auto reuse_point() -> bool;

    /// Keeps what judging this point added since `point` was taken.
    void keep_point(PointVerdict point);

    void list(std::uint64_t id);

    /// A crash state judged before by this Simulation: its counts again, no mount.
    auto reuse_verdict(const model::KeyWords& key) -> bool;

    /// Keeps what judging the crash state `key` added since `before`.
    void keep_verdict(const model::KeyWords& key, const Verdict& before);

    /// A mount of this crash state judged before (mounts_judged): its counts again.
    auto reuse_mount(const model::KeyWords& key) -> bool;

    void keep_mount(model::KeyWords key, const std::vector<std::uint64_t>& before);

    /// Every tear set of one kept subset (DFS), saying once when capped.
    auto evaluate_every_tear(const std::vector<bool>& keep) -> bool;

    /// Mounts `image`, judges the result and, with `levels` left, cuts the
    /// power inside that mount's recovery and recurses; true on a
    /// violation, with `cuts` the path to it.
    auto mount_and_judge(const model::disk::Image& image, std::uint32_t levels, const char* who,
                         CutChoice choice, const std::vector<RecoveryCut>& recorded,
                         std::vector<checkers::Violation>& found) -> bool;

    /// The device under a mount of `image` once it issued the first `issued` requests of `recovery`.
    static auto issued_device(const model::disk::Image& image, const model::Recovery& recovery,
                              std::size_t issued) -> model::disk::MountDevice;

    /// The power cut on `device`, after `issued` requests of `recovery`
    /// (keeping `keep`, or a subset drawn by the policy), then the next mount.
    auto cut_and_mount(const model::disk::MountDevice& device, const model::Recovery& recovery,
                       std::size_t issued, const std::vector<bool>* keep, std::uint32_t levels,
                       CutChoice choice, const std::vector<RecoveryCut>& recorded,
                       std::vector<checkers::Violation>& found) -> bool;

    /// The crash states `exhaustive` evaluates after one step (dfs estimates).
    auto count_states(loader::UnflushedPolicy policy, std::size_t pending) const -> std::uint64_t;

    /// Has the disk, what the oracle was promised or the freeze level (which
    /// frozen_image judges by) changed since last seen?
    auto changed() const -> bool;
    void see();

    /// A replay's crash at its recorded step: its subset and faults checked
    /// against what the run offers there, then judged and narrated.
    void crash_at_recorded(const CrashRecord& recorded_crash, std::size_t pending);

    /// The crash states the plan takes after one step; true: the run stops.
    auto crash_after_step(const CrashPlan& plan, const sim::Strategy& strategy,
                          loader::UnflushedPolicy policy, sim::Prng& crash_prng) -> bool;
};

}  // namespace runner
