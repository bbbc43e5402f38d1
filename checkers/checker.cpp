#include "checkers/checker.hpp"

namespace checkers {

auto make_fsync_durability() -> std::unique_ptr<Checker>;
auto make_no_stale_data() -> std::unique_ptr<Checker>;
auto make_fs_consistency() -> std::unique_ptr<Checker>;
auto make_mount() -> std::unique_ptr<Checker>;
auto make_journal_integrity() -> std::unique_ptr<Checker>;
auto make_freeze_quiescence() -> std::unique_ptr<Checker>;
auto make_fault_outcome() -> std::unique_ptr<Checker>;
auto make_frozen_image() -> std::unique_ptr<Checker>;

auto make_checker(std::string_view name) -> std::unique_ptr<Checker> {
    if (name == "fsync_durability") return make_fsync_durability();
    if (name == "no_stale_data") return make_no_stale_data();
    if (name == "fs_consistency") return make_fs_consistency();
    if (name == "mount") return make_mount();
    if (name == "journal_integrity") return make_journal_integrity();
    if (name == "freeze_quiescence") return make_freeze_quiescence();
    if (name == "fault_outcome") return make_fault_outcome();
    if (name == "frozen_image") return make_frozen_image();
    return nullptr;
}

auto checker_names() -> std::vector<std::string> {
    return {"fault_outcome",    "freeze_quiescence", "frozen_image", "fs_consistency",
            "fsync_durability", "journal_integrity", "mount",        "no_stale_data"};
}

auto checker_about(std::string_view name) -> std::string {
    if (name == "fsync_durability") {
        return "data and size that a returned fsync covered survive recovery (or newer data of "
               "the same file and offset)";
    }
    if (name == "no_stale_data") {
        return "every readable block holds zeros or data this workload wrote to that file and "
               "offset, never stale device contents or another file's data";
    }
    if (name == "fs_consistency") {
        return "after recovery, the model's own metadata invariants, and checks made outside the "
               "model on the extents recovery reported: no device block mapped twice, extents inside "
               "the device and outside its metadata area, nothing read past the size or outside a "
               "written extent";
    }
    if (name == "journal_integrity") {
        return "journaling models: every update of every transaction whose commit block is durable "
               "is at home after recovery (replayed, or written home before the tail passed it); "
               "models without a journal have nothing at stake";
    }
    if (name == "freeze_quiescence") {
        return "while the run goes on (an event checker): between a freeze's drain point "
               "(xfs_quiesce_attr's first step) and SB_FREEZE_COMPLETE no transaction but the "
               "freezer's own is live, allocated or committed, and once frozen no transaction holds log "
               "space; models that never freeze have nothing at stake";
    }
    if (name == "frozen_image") {
        return "a crash state cut while the file system is frozen (SB_FREEZE_COMPLETE) needs no log "
               "replay but the final superblock transaction xfs_fs_freeze logs after the unmount record; "
               "models that never freeze, or whose recovery gives no account of its log records, have "
               "nothing at stake";
    }
    if (name == "fault_outcome") {
        return "device faults (a scenario's faults): each fault a crash injected is survived (every other "
               "checker holds), detected (a checksum refuses the mount or the read: an error the user sees) "
               "or silently wrong: a file reads a torn block that no checksum refused (a violation); on by "
               "itself when the scenario sets a fault budget";
    }
    if (name == "mount") {
        return "recovery mounts the crashed image (always on, unless the scenario's crash.mount is "
               "may-fail)";
    }
    return "";
}

}  // namespace checkers
