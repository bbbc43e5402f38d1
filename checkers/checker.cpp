#include "checkers/checker.hpp"

#include <algorithm>

namespace checkers {

auto make_fsync_durability() -> std::unique_ptr<Checker>;
auto make_no_stale_data() -> std::unique_ptr<Checker>;
auto make_fs_consistency() -> std::unique_ptr<Checker>;
auto make_mount() -> std::unique_ptr<Checker>;
auto make_journal_integrity() -> std::unique_ptr<Checker>;
auto make_freeze_quiescence() -> std::unique_ptr<Checker>;
auto make_fault_outcome() -> std::unique_ptr<Checker>;
auto make_frozen_image() -> std::unique_ptr<Checker>;

namespace {

// The registration of every checker: a checker added to checkers/ is one
// entry here (and, if a scenario may name it, one word of the schema's
// checker enum). mount comes first: the real-kernel harness reports a
// refused mount before what the other checkers found. Constant-initialised,
// so that it holds before any static object asks.
constexpr CheckerEntry table[] = {
    {"mount", make_mount,
     "recovery mounts the crashed image (always on, unless the scenario's crash.mount is "
     "may-fail)",
     false, true},
    {"fsync_durability", make_fsync_durability,
     "data and size that a returned fsync covered survive recovery (or newer data of "
     "the same file and offset)",
     true, true},
    {"no_stale_data", make_no_stale_data,
     "every readable block holds zeros or data this workload wrote to that file and "
     "offset, never stale device contents or another file's data",
     true, true},
    {"fs_consistency", make_fs_consistency,
     "after recovery, the model's own metadata invariants, and checks made outside the "
     "model on the extents recovery reported: no device block mapped twice, extents inside "
     "the device and outside its metadata area, nothing read past the size or outside a "
     "written extent",
     true, true},
    {"journal_integrity", make_journal_integrity,
     "journaling models: every update of every transaction whose commit block is durable "
     "is at home after recovery (replayed, or written home before the tail passed it); "
     "models without a journal have nothing at stake",
     true, false},
    {"freeze_quiescence", make_freeze_quiescence,
     "while the run goes on (an event checker): between a freeze's drain point "
     "(xfs_quiesce_attr's first step) and SB_FREEZE_COMPLETE no transaction but the "
     "freezer's own is live, allocated or committed, and once frozen no transaction holds log "
     "space; models that never freeze have nothing at stake",
     true, false},
    {"frozen_image", make_frozen_image,
     "a crash state cut while the file system is frozen (SB_FREEZE_COMPLETE) needs no log "
     "replay but the final superblock transaction xfs_fs_freeze logs after the unmount record; "
     "models that never freeze, or whose recovery gives no account of its log records, have "
     "nothing at stake",
     true, false},
    {"fault_outcome", make_fault_outcome,
     "device faults (a scenario's faults): each fault a crash injected is survived (every other "
     "checker holds), detected (a checksum refuses the mount or the read: an error the user sees) "
     "or silently wrong: a file reads a torn block that no checksum refused (a violation); on by "
     "itself when the scenario sets a fault budget",
     false, false},
};

auto find_entry(std::string_view name) -> const CheckerEntry* {
    for (const CheckerEntry& entry : table) {
        if (entry.name == name) return &entry;
    }
    return nullptr;
}

/// The names of the entries `keep` selects, in table order.
auto names_where(bool (*keep)(const CheckerEntry&)) -> std::vector<std::string> {
    std::vector<std::string> names;
    for (const CheckerEntry& entry : table) {
        if (keep(entry)) names.emplace_back(entry.name);
    }
    return names;
}

auto sorted(std::vector<std::string> names) -> std::vector<std::string> {
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

auto checker_table() -> std::span<const CheckerEntry> { return table; }

auto make_checker(std::string_view name) -> std::unique_ptr<Checker> {
    const CheckerEntry* entry = find_entry(name);
    return entry == nullptr ? nullptr : entry->make();
}

auto checker_names() -> std::vector<std::string> {
    return sorted(names_where([](const CheckerEntry&) { return true; }));
}

auto checker_about(std::string_view name) -> std::string {
    const CheckerEntry* entry = find_entry(name);
    return entry == nullptr ? "" : std::string(entry->about);
}

auto scenario_checker_names() -> const std::vector<std::string>& {
    static const std::vector<std::string> names =
        sorted(names_where([](const CheckerEntry& entry) { return entry.scenario_nameable; }));
    return names;
}

auto real_kernel_checker_names() -> const std::vector<std::string>& {
    static const std::vector<std::string> names =
        names_where([](const CheckerEntry& entry) { return entry.real_kernel; });
    return names;
}

}  // namespace checkers
