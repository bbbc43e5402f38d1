#include "runner/judge.hpp"

#include <algorithm>

#include "sim/assert.hpp"
#include "sim/strategy.hpp"

namespace runner {

namespace {

auto describe_position(const sim::Scheduler& scheduler) -> std::string {
    const sim::TaskId task = scheduler.last_ran();
    if (task == sim::no_task && scheduler.last_daemon_woken() != sim::no_task) {
        return scheduler.task_name(scheduler.last_daemon_woken()) + "'s timer";
    }
    if (task == sim::no_task) return "a device completion";
    const std::string& name = scheduler.task_name(task);
    if (scheduler.task_state(task) == sim::TaskState::finished) return name + " returned";
    if (scheduler.task_state(task) == sim::TaskState::blocked) {
        return name + " blocked on " + scheduler.blocked_on(task);
    }
    return name + " at " + std::string(scheduler.last_point(task)->name);
}

auto describe_kept(const std::vector<model::disk::PendingWrite>& pending, const std::vector<bool>& keep,
                   const CrashFaults& faults) -> std::string {
    const std::vector<TornWrite>& torn = faults.torn;
    std::size_t kept = 0;
    std::string list;
    for (std::size_t i = 0; i < pending.size(); i++) {
        if (keep[i]) kept++;
        const bool tore =
            std::any_of(torn.begin(), torn.end(), [i](const TornWrite& t) { return t.write == i; });
        const bool landed = std::any_of(faults.misdirected.begin(), faults.misdirected.end(),
                                        [i](const MisdirectedWrite& m) { return m.write == i; });
        list += (list.empty() ? "" : ", ") + std::string(pending[i].what) + "@" +
                std::to_string(pending[i].block) + (pending[i].completed ? "" : " in flight") +
                (keep[i] ? " kept" : tore ? " torn" : landed ? " misdirected" : " lost");
    }
    std::string text = std::to_string(kept) + " of " + std::to_string(pending.size()) +
                       " unflushed write(s) kept";
    if (!list.empty()) text += " (" + list + ")";
    return text;
}

/// "0 of 1 unflushed recovery write(s) kept (meta@12 lost)".
auto describe_recovery_kept(const std::vector<model::disk::PendingWrite>& pending,
                            const std::vector<bool>& keep) -> std::string {
    std::size_t kept = 0;
    std::string list;
    for (std::size_t i = 0; i < pending.size(); i++) {
        if (keep[i]) kept++;
        list += (list.empty() ? "" : ", ") + std::string(pending[i].what) + "@" +
                std::to_string(pending[i].block) + (keep[i] ? " kept" : " lost");
    }
    std::string text =
        std::to_string(kept) + " of " + std::to_string(pending.size()) + " unflushed recovery write(s) kept";
    if (!list.empty()) text += " (" + list + ")";
    return text;
}

/// A crash image as words, a key of the mounts of one crash state
/// (RunState::mounts_judged): every segment, DurableBlock::sequence kept
/// though recovery reads only content, object ids as they are (one run's).
auto image_words(const model::disk::Image& image) -> model::KeyWords {
    model::KeyWords words;
    words.reserve(9 * image.blocks().segment_count());
    image.blocks().for_each(
        [&](std::uint64_t start, std::uint64_t end, const model::disk::DurableBlock& block) {
            words.insert(words.end(), {start, end, block.sequence});
            model::encode_content(words, block.content);
        });
    return words;
}

}  // namespace

auto RunState::judge(model::RecoveredState& state, std::vector<checkers::Violation>& found) -> bool {
    // The crash's faults and the run's write errors so far.
    state.faults_injected = static_cast<std::uint32_t>(faults.size() + fs.device().counters().write_errors);
    checkers::CheckContext at_cut = context;
    at_cut.frozen = frozen;
    for (std::size_t i = 0; i < checkers.size(); i++) {
        checkers[i]->check(oracle, state, at_cut, found);
        if (checkers[i]->at_stake(oracle, state, at_cut)) outcome.judged[i]++;
    }
    if (cuts.empty()) {
        const model::disk::BlockDevice& device = fs.device();
        for (const TornWrite& tear : faults.torn) {
            const model::disk::PendingWrite& write = device.pending()[tear.write];
            fault_lines.push_back(
                fault_outcome(device.describe_tear(tear), write.block, write.count, state, found));
        }
        for (const MisdirectedWrite& misdirect : faults.misdirected) {
            fault_lines.push_back(
                fault_outcome(device.describe_misdirect(misdirect), misdirect.victim, 1, state, found));
        }
        for (const std::uint64_t block : faults.unreadable) {
            fault_lines.push_back(fault_outcome(describe_unreadable(block), block, 1, state, found));
        }
        if (device.counters().write_errors > 0) fault_lines.push_back(write_error_outcome(found));
    }
    return !found.empty();
}

auto RunState::write_error_outcome(const std::vector<checkers::Violation>& found) -> std::string {
    const std::uint64_t errors = fs.device().counters().write_errors;
    outcome.faults.injected += errors;
    const std::string what = std::to_string(errors) + " data write(s) completed with EIO before the cut: ";
    if (!found.empty()) return what + "not survived: " + found.front().checker + " is violated";
    if (oracle.errors_reported() > 0) {
        outcome.faults.detected += errors;
        return what + "detected: the application was told (" + std::to_string(oracle.errors_reported()) +
               " operation(s) returned EIO), and no later fsync promised the lost writes";
    }
    outcome.faults.survived += errors;
    return what + "survived: no error reported yet, and no checker is violated (nothing promised them)";
}

auto RunState::describe_unreadable(std::uint64_t block) -> std::string {
    return "latent sector error: the media of block " + std::to_string(block) +
           " is unreadable, its reads return EIO";
}

auto RunState::faulted_image(const std::vector<bool>& keep, const CrashFaults& injected) const
    -> model::disk::Image {
    model::disk::Image image = fs.device().crash_image(keep, injected.torn, injected.misdirected);
    image.set_unreadable(injected.unreadable);
    return image;
}

auto RunState::checked_reads(const std::vector<bool>& keep, const CrashFaults& injected) const
    -> std::vector<std::uint64_t> {
    if (!fs.device().faults().latent_errors || injected.size() >= fs.device().faults().budget) return {};
    const model::disk::Image image = faulted_image(keep, injected);
    (void)fs.recover(image);
    return image.checked_reads();
}

auto RunState::draw_crash_faults(const std::vector<bool>& keep) -> CrashFaults {
    CrashFaults drawn = draw_faults(fs.device(), keep, fault_prng);
    const std::vector<std::uint64_t> reads = checked_reads(keep, drawn);
    if (reads.empty()) return drawn;
    const std::uint64_t pick = fault_prng.below(reads.size() + 1);
    if (pick > 0) drawn.unreadable.push_back(reads[pick - 1]);
    return drawn;
}

auto RunState::fault_outcome(const std::string& described, std::uint64_t first, std::uint64_t count,
                             const model::RecoveredState& state,
                             const std::vector<checkers::Violation>& found) -> std::string {
    const auto in_write = [&](std::uint64_t block) { return block >= first && block < first + count; };
    const bool caught = std::any_of(state.checksum_failed.begin(), state.checksum_failed.end(), in_write);
    outcome.faults.injected++;
    const std::string what = described + ": ";
    if (!state.mounted && caught) {
        outcome.faults.detected++;
        return what + "detected: the mount refuses it with an error the user sees (" + state.mount_error +
               ")";
    }
    if (!found.empty()) return what + "not survived: " + found.front().checker + " is violated";
    if (!state.mounted) return what + "not judged: the mount failed for another reason";
    if (const std::string read = torn_read(state); !read.empty()) {
        outcome.faults.detected++;
        return what + "detected: " + read;
    }
    outcome.faults.survived++;
    return what + (caught ? "survived: its checksum failed and recovery went on without it"
                          : "survived: recovery holds every checker");
}

auto RunState::torn_read(const model::RecoveredState& state) const -> std::string {
    if (!state.data_checksums) return "";
    for (std::size_t file = 0; file < state.files.size(); file++) {
        std::string text;
        state.files[file].blocks.for_each(
            [&](std::uint64_t start, std::uint64_t, const model::disk::Content& content) {
                if (!text.empty() || !content.faulty()) return;
                text = "a read of " + context.file_names[file] + " at " +
                       std::to_string(start * context.block_size) +
                       " fails its data checksum (btrfs_check_data_csum): EIO";
            });
        if (!text.empty()) return text;
    }
    return "";
}

void RunState::blame_lies(const std::vector<bool>& keep, std::vector<checkers::Violation>& found) {
    const model::disk::BlockDevice& device = fs.device();
    if (!device.faults().lying_cache) return;
    const std::vector<std::string> lies = device.lies_exposed(keep, faults.torn);
    for (const auto& lie : lies) tell("device", "the write cache lied: " + lie);
    if (lies.empty()) return;
    const std::string more = lies.size() > 1 ? " (and " + std::to_string(lies.size() - 1) + " more)" : "";
    for (auto& violation : found) {
        violation.message += "; the device lied, not the file system: " + lies.front() + more;
    }
}

auto RunState::evaluate(const std::vector<bool>& keep, const CrashFaults& injected, bool narrate,
                        CutChoice choice, const std::vector<RecoveryCut>& recorded) -> bool {
    model::disk::BlockDevice& device = fs.device();
    SIM_ASSERT(keep.size() == device.pending().size());
    story.clear();
    cuts.clear();
    faults = injected;
    fault_lines.clear();
    outcome.crash_states++;
    std::vector<checkers::Violation> found;
    const std::uint32_t levels = choice == CutChoice::recorded ? static_cast<std::uint32_t>(recorded.size())
                                                               : recovery_crashes;
    const model::disk::Image image = faulted_image(keep, faults);
    // No memo where the device has a fault model: a fault's outcome is
    // counted per state (fault_outcome), and latent errors change the mount.
    // Nor in a traced run (a story, --verify-determinism's reruns): it
    // judges every crash state itself, so a rerun repeats the work.
    const bool memoized = memo && !narrate && !trace.enabled() && choice == CutChoice::every &&
                          device.faults().budget == 0 && !device.faults().lying_cache &&
                          device.counters().write_errors == 0;
    const bool keyed = memoized && memo_key(image);
    if (keyed && reuse_verdict(memo_words)) return false;
    const Verdict before{outcome.judged, outcome.recovery_crash_states};
    mount_and_judge(image, levels, "mount", choice, recorded, found);
    if (keyed && found.empty()) keep_verdict(memo_words, before);
    fs.forget_recovery();
    mounts_judged.clear();  // recovery's object ids are free again
    for (auto& line : fault_lines) tell("fault_outcome", std::move(line));
    blame_lies(keep, found);
    if (narrate || !found.empty()) tell_cut(keep);
    story.clear();
    if (found.empty()) return false;
    outcome.violations = std::move(found);
    outcome.crash = CrashRecord{scheduler.steps(), describe_position(scheduler), keep, cuts, faults.torn,
                                faults.misdirected, faults.unreadable};
    return true;
}

void RunState::tell_cut(const std::vector<bool>& keep) {
    const model::disk::BlockDevice& device = fs.device();
    // Told only now: most crash states are never narrated.
    trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "power",
               "power cut after step " + std::to_string(scheduler.steps()) + " (" +
                   describe_position(scheduler) + "): " + describe_kept(device.pending(), keep, faults)});
    for (const TornWrite& tear : faults.torn) {
        trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                   device.describe_tear(tear)});
    }
    for (const MisdirectedWrite& misdirect : faults.misdirected) {
        trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                   device.describe_misdirect(misdirect)});
    }
    for (const std::uint64_t block : faults.unreadable) {
        trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                   describe_unreadable(block)});
    }
    for (auto& line : story) trace.add(std::move(line));
}

auto RunState::oracle_key() -> bool {
    if (oracle.revision() != oracle_revision) {
        model::KeyWords words;
        oracle.encode(words);
        oracle_id = verdicts->oracles.intern(std::move(words));
        oracle_revision = oracle.revision();
    }
    return oracle_id != model::ContentTable::none;
}

auto RunState::point_key() -> bool {
    const model::disk::BlockDevice& device = fs.device();
    if (!memo || trace.enabled() || verdicts == nullptr || verdicts->dropped()) return false;
    if (device.faults().budget != 0 || device.faults().lying_cache || device.counters().write_errors != 0) {
        return false;
    }
    if (!oracle_key() || !device_key_id()) return false;
    point_words.assign({oracle_id, static_cast<std::uint64_t>(frozen), recovery_crashes,
                        static_cast<std::uint64_t>(policy), device_id});
    return true;
}

auto RunState::device_key_id() -> bool {
    const model::disk::BlockDevice& device = fs.device();
    if (device.epoch() != device_epoch) {
        const model::MetadataIndex* index = fs.metadata_index();
        device_words.clear();
        device_id = index != nullptr && device_key(device, *index, device_words, key_objects)
                        ? verdicts->devices.intern_copy(device_words)
                        : model::ContentTable::none;
        device_epoch = device.epoch();
    }
    return device_id != model::ContentTable::none;
}

auto RunState::evaluate_point(std::size_t pending) -> bool {
    const bool keyed = point_key();
    if (keyed && reuse_point()) return false;
    PointVerdict point{outcome.crash_states, outcome.judged, outcome.recovery_crash_states, {}};
    recording = keyed ? &point : nullptr;
    for (const auto& keep : every_keep(policy, pending)) {
        if (evaluate_every_tear(keep)) {
            recording = nullptr;
            return true;
        }
    }
    recording = nullptr;
    if (keyed) keep_point(std::move(point));
    return false;
}

auto RunState::reuse_point() -> bool {
    const PointVerdict* point = verdicts->find_point(point_words);
    if (point == nullptr) return false;
    outcome.crash_states += point->crash_states;
    for (std::size_t i = 0; i < outcome.judged.size(); i++) outcome.judged[i] += point->judged[i];
    outcome.recovery_crash_states += point->recovery_crash_states;
    memo_hits += point->crash_states;
    for (const std::uint64_t id : point->ids) list(id);
    points_reused++;
    return true;
}

void RunState::keep_point(PointVerdict point) {
    point.crash_states = outcome.crash_states - point.crash_states;
    for (std::size_t i = 0; i < point.judged.size(); i++) {
        point.judged[i] = outcome.judged[i] - point.judged[i];
    }
    point.recovery_crash_states = outcome.recovery_crash_states - point.recovery_crash_states;
    // Every crash state found or kept in the verdict memo, none dropped
    // since: a later run would reuse each verdict.
    if (point.ids.size() != point.crash_states || verdicts->dropped()) return;
    verdicts->keep_point(point_words, std::move(point));
}

auto RunState::memo_key(const model::disk::Image& image) -> bool {
    const model::MetadataIndex* index = fs.metadata_index();
    if (index == nullptr || verdicts == nullptr) return false;
    if (!oracle_key()) return false;
    memo_words.assign({oracle_id, static_cast<std::uint64_t>(frozen), recovery_crashes,
                       static_cast<std::uint64_t>(policy)});
    return image_key(image, *index, memo_words, key_objects);
}

void RunState::list(std::uint64_t id) {
    if (list_reached && (outcome.memo_reached.empty() || outcome.memo_reached.back() != id)) {
        outcome.memo_reached.push_back(id);
    }
}

auto RunState::reuse_verdict(const model::KeyWords& key) -> bool {
    const Verdict* verdict = verdicts->find(key);
    if (verdict == nullptr) return false;
    for (std::size_t i = 0; i < outcome.judged.size(); i++) outcome.judged[i] += verdict->judged[i];
    outcome.recovery_crash_states += verdict->recovery_crash_states;
    memo_hits++;
    list(verdict->id);
    if (recording != nullptr) recording->ids.push_back(verdict->id);
    story.clear();
    return true;
}

void RunState::keep_verdict(const model::KeyWords& key, const Verdict& before) {
    Verdict added{outcome.judged, outcome.recovery_crash_states - before.recovery_crash_states};
    for (std::size_t i = 0; i < added.judged.size(); i++) added.judged[i] -= before.judged[i];
    const std::uint64_t id = verdicts->keep(key, std::move(added));
    list(id);
    if (recording != nullptr) recording->ids.push_back(id);
}

auto RunState::reuse_mount(const model::KeyWords& key) -> bool {
    const auto it = mounts_judged.find(key);
    if (it == mounts_judged.end()) return false;
    for (std::size_t i = 0; i < outcome.judged.size(); i++) outcome.judged[i] += it->second[i];
    mounts_reused++;
    return true;
}

void RunState::keep_mount(model::KeyWords key, const std::vector<std::uint64_t>& before) {
    std::vector<std::uint64_t> added = outcome.judged;
    for (std::size_t i = 0; i < added.size(); i++) added[i] -= before[i];
    mounts_judged.emplace(std::move(key), std::move(added));
}

auto RunState::evaluate_every_tear(const std::vector<bool>& keep) -> bool {
    bool capped = false;
    for (const auto& set : every_faults(fs.device(), keep, capped)) {
        if (evaluate(keep, set, false, CutChoice::every)) return true;
        for (const std::uint64_t block : checked_reads(keep, set)) {
            CrashFaults unreadable = set;
            unreadable.unreadable.push_back(block);
            if (evaluate(keep, unreadable, false, CutChoice::every)) return true;
        }
    }
    if (capped && !tears_capped_told) {
        tears_capped_told = true;
        trace.add({sim::TraceLine::Kind::note, scheduler.steps(), scheduler.now(), "device",
                   "not explored: fault sets (torn and misdirected writes) past the first " +
                       std::to_string(tear_sets_max) +
                       " of a crash state (faults.budget; a bound, no claim about the rest)"});
    }
    return false;
}

auto RunState::mount_and_judge(const model::disk::Image& image, std::uint32_t levels, const char* who,
                               CutChoice choice, const std::vector<RecoveryCut>& recorded,
                               std::vector<checkers::Violation>& found) -> bool {
    // No story is kept without a trace, so a mount judged before tells nothing new.
    const bool reusable = memo && choice == CutChoice::every && !trace.enabled();
    model::KeyWords key = reusable ? image_words(image) : model::KeyWords{};
    if (reusable && levels == 0 && reuse_mount(key)) return false;
    const std::vector<std::uint64_t> before = reusable ? outcome.judged : std::vector<std::uint64_t>{};
    model::Recovery recovery =
        levels == 0 ? model::Recovery{fs.recover(image), {}} : fs.recover_with_writes(image);
    const bool violated = judge(recovery.state, found);
    for (auto& note : recovery.state.notes) tell(who, std::move(note));
    if (violated) return true;
    if (reusable) keep_mount(std::move(key), before);
    if (levels == 0) return false;
    // Cut after each write (a cut right after a FLUSH keeps what the cut
    // after the write before it keeps when it keeps everything).
    std::vector<std::size_t> writes;
    for (std::size_t i = 0; i < recovery.requests.size(); i++) {
        if (recovery.requests[i].kind == model::disk::MountRequest::Kind::write) writes.push_back(i + 1);
    }
    if (choice == CutChoice::recorded) {
        const RecoveryCut& cut = recorded[cuts.size()];
        if (cut.requests == 0 || cut.requests > recovery.requests.size()) {
            throw sim::ReplayDiverged("$.crash.recovery",
                                      "a cut after one of the " + std::to_string(recovery.requests.size()) +
                                          " request(s) the recovery issues",
                                      "a cut after request " + std::to_string(cut.requests));
        }
        return cut_and_mount(issued_device(image, recovery, cut.requests), recovery, cut.requests, &cut.keep,
                             levels, choice, recorded, found);
    }
    if (writes.empty()) return false;  // recovery wrote nothing: nothing to cut
    if (choice == CutChoice::draw) {
        const std::size_t issued = writes[recovery_prng.below(writes.size())];
        return cut_and_mount(issued_device(image, recovery, issued), recovery, issued, nullptr, levels,
                             choice, recorded, found);
    }
    for (const std::size_t issued : writes) {
        const model::disk::MountDevice device = issued_device(image, recovery, issued);
        for (const auto& keep : every_keep(policy, device.pending().size())) {
            const std::size_t told = story.size();
            if (cut_and_mount(device, recovery, issued, &keep, levels, choice, recorded, found)) return true;
            story.resize(told);
        }
    }
    return false;
}

auto RunState::issued_device(const model::disk::Image& image, const model::Recovery& recovery,
                             std::size_t issued) -> model::disk::MountDevice {
    model::disk::MountDevice device(image);
    for (std::size_t i = 0; i < issued; i++) device.issue(recovery.requests[i]);
    return device;
}

auto RunState::cut_and_mount(const model::disk::MountDevice& device, const model::Recovery& recovery,
                             std::size_t issued, const std::vector<bool>* keep, std::uint32_t levels,
                             CutChoice choice, const std::vector<RecoveryCut>& recorded,
                             std::vector<checkers::Violation>& found) -> bool {
    const std::vector<bool> kept =
        keep != nullptr ? *keep : draw_keep(policy, device.pending().size(), recovery_prng);
    if (kept.size() != device.pending().size()) {
        throw sim::ReplayDiverged("$.crash.recovery",
                                  "one flag per recovery write unflushed after request " +
                                      std::to_string(issued) + " (" +
                                      std::to_string(device.pending().size()) + ")",
                                  std::to_string(kept.size()) + " flags");
    }
    const std::string& after = recovery.requests[issued - 1].description;
    if (trace.enabled()) {
        tell("power", "power cut during log replay after request " + std::to_string(issued) + " of " +
                          std::to_string(recovery.requests.size()) + ", " + after + ": " +
                          describe_recovery_kept(device.pending(), kept));
    }
    outcome.recovery_crash_states++;
    cuts.push_back({issued, after, kept});
    static const char* const mounts[] = {"mount", "mount 2", "mount 3", "mount 4", "mount 5",
                                         "mount 6", "mount 7", "mount 8", "mount 9", "mount 10"};
    const std::size_t depth = std::min(cuts.size(), std::size(mounts) - 1);
    if (mount_and_judge(device.crash_image(kept), levels - 1, mounts[depth], choice, recorded, found)) {
        return true;
    }
    cuts.pop_back();
    return false;
}

auto RunState::count_states(loader::UnflushedPolicy policy, std::size_t pending) const -> std::uint64_t {
    if (fs.device().faults().budget == 0) return keep_count(policy, pending);
    std::uint64_t states = 0;
    bool capped = false;
    for (const auto& keep : every_keep(policy, pending))
        states += every_faults(fs.device(), keep, capped).size();
    return states;
}

auto RunState::changed() const -> bool {
    return fs.device().epoch() != seen_disk || oracle.epoch() != seen_oracle || frozen != seen_frozen;
}

void RunState::see() {
    seen_disk = fs.device().epoch();
    seen_oracle = oracle.epoch();
    seen_frozen = frozen;
}

void RunState::crash_at_recorded(const CrashRecord& recorded_crash, std::size_t pending) {
    if (recorded_crash.keep.size() != pending) {
        // A keep list that does not fit its step (either may have been edited).
        throw sim::ReplayDiverged("$.crash.keep",
                                  "one flag per write unflushed at crash step " +
                                      std::to_string(recorded_crash.step) + " (" +
                                      std::to_string(pending) + ")",
                                  std::to_string(recorded_crash.keep.size()) + " flags");
    }
    CrashFaults recorded{recorded_crash.torn, recorded_crash.misdirected, {}};
    check_tears(fs.device(), recorded_crash.keep, recorded_crash.torn);
    check_misdirected(fs.device(), recorded_crash.keep, recorded);
    check_unreadable(fs.device(), {recorded.torn, recorded.misdirected, recorded_crash.unreadable},
                     checked_reads(recorded_crash.keep, recorded));
    recorded.unreadable = recorded_crash.unreadable;
    evaluate(recorded_crash.keep, recorded, true, CutChoice::recorded, recorded_crash.recovery);
}

auto RunState::crash_after_step(const CrashPlan& plan, const sim::Strategy& strategy,
                                loader::UnflushedPolicy policy, sim::Prng& crash_prng) -> bool {
    // The disk and the promises only move forward.
    SIM_ASSERT(fs.device().epoch() >= seen_disk && oracle.epoch() >= seen_oracle);
    const std::size_t pending = fs.device().pending().size();
    bool stop = false;
    switch (plan.kind) {
        case CrashPlan::Kind::exhaustive:
            if (strategy.fresh() && changed()) stop = evaluate_point(pending);
            see();
            break;
        case CrashPlan::Kind::count:
            // Where `exhaustive` evaluates, as many as it evaluates.
            if (strategy.fresh() && changed()) outcome.crash_states += count_states(policy, pending);
            see();
            break;
        case CrashPlan::Kind::every_state:
            if (changed()) {
                see();
                const std::vector<bool> keep = draw_keep(policy, pending, crash_prng);
                stop = evaluate(keep, draw_crash_faults(keep), false, CutChoice::draw);
            }
            break;
        case CrashPlan::Kind::at_step:
            if (scheduler.steps() == plan.recorded.step) {
                crash_at_recorded(plan.recorded, pending);
                stop = true;
            }
            break;
        case CrashPlan::Kind::scripted:
        case CrashPlan::Kind::none:
            break;
    }
    return stop;
}
}  // namespace runner
