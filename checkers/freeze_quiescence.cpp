// freeze_quiescence: between the drain point of a freeze (xfs_quiesce_attr's
// first step, Q1) and SB_FREEZE_COMPLETE, no transaction but the freezer's own
// may be live, allocated or committed; and once frozen, no transaction may
// hold log space (the race "xfs: remove the m_active_trans counter" closes:
// freeze_super drains writers, xfs_quiesce_attr waits for the counter, and a
// transaction allocated or committed after the drain, or holding log space at
// SB_FREEZE_COMPLETE, is what the frozen image must not see). An event checker: it judges the
// events of the run (checkers/event_watch.hpp), never a crash state.
//
// The freezer is the task that set SB_FREEZE_WRITE; its transactions
// (xfs_log_sbcount's and xfs_fs_freeze's xfs_sync_sb) are its own.
//
// What it does not check: whether the frozen image is clean and mountable
// (crash states after the freeze do: mount, fs_consistency and the others);
// transactions that hold freeze protection (sb_start_intwrite) are drained by
// freeze_super before Q1 and so never reach the window, which this checker
// relies on rather than re-checks; writes other than transactions (data
// writeback, AIL pushes) during the window; a thaw that races a freeze (a
// second freeze_super returns EBUSY in the model); models that emit no
// freeze events have nothing at stake.
#include <map>
#include <string>

#include "checkers/event_watch.hpp"

namespace checkers {
namespace {

class FreezeQuiescence final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "freeze_quiescence"; }
    void check(const Oracle&, const model::RecoveredState&, const CheckContext&,
               std::vector<Violation>&) const override {}
    /// Crash states give it nothing: its stake is counted by its watch.
    [[nodiscard]] auto at_stake(const Oracle&, const model::RecoveredState&, const CheckContext&) const
        -> bool override {
        return false;
    }
};

class FreezeQuiescenceWatch final : public EventWatch {
public:
    void on_event(const model::Event& event, std::vector<Violation>& out) override {
        switch (event.kind) {
            case model::EventKind::freeze_level: level_changed(event, out); break;
            case model::EventKind::quiesce_drained:
                window_ = true;
                drains_++;
                for (const auto& [id, live] : live_) {
                    if (live.task != freezer_)
                        return report(out, id, live, "is live at the drain point", event);
                }
                break;
            case model::EventKind::trans_alloc: {
                const Live live{event.what, event.task_name, event.log_space};
                live_[event.transaction] = live;
                if (window_ && live.task != freezer_) {
                    return report(out, event.transaction, live, "is allocated after the drain point", event);
                }
                if (frozen_ && live.log_space) {
                    return report(out, event.transaction, live, "reserves log space while frozen", event);
                }
                break;
            }
            case model::EventKind::trans_commit: {
                const auto found = live_.find(event.transaction);
                if (window_ && found != live_.end() && found->second.task != freezer_) {
                    return report(out, event.transaction, found->second, "commits after the drain point",
                                  event);
                }
                break;
            }
            case model::EventKind::trans_cancel: break;
            case model::EventKind::trans_free: live_.erase(event.transaction); break;
        }
    }
    [[nodiscard]] auto at_stake() const -> std::uint64_t override { return drains_; }

private:
    struct Live {
        std::string what;
        std::string task;
        bool log_space = false;
    };

    void level_changed(const model::Event& event, std::vector<Violation>& out) {
        switch (event.level) {
            case model::FreezeLevel::write: freezer_ = event.task_name; break;
            case model::FreezeLevel::complete:
                window_ = false;
                frozen_ = true;
                for (const auto& [id, live] : live_) {
                    if (live.log_space)
                        return report(out, id, live, "holds log space at SB_FREEZE_COMPLETE", event);
                }
                break;
            case model::FreezeLevel::unfrozen:
                window_ = false;
                frozen_ = false;
                freezer_.clear();
                break;
            case model::FreezeLevel::pagefault:
            case model::FreezeLevel::fs: break;
        }
    }

    void report(std::vector<Violation>& out, std::uint64_t id, const Live& live, const std::string& what,
                const model::Event& event) const {
        const std::string who =
            "transaction #" + std::to_string(id) + " (" + live.what + ", task " + live.task + ")";
        const std::string expected = frozen_ ? "no transaction holding log space while frozen"
                                             : "no transaction but the freezer's (" + freezer_ +
                                                   ") between the drain point and SB_FREEZE_COMPLETE";
        out.push_back({"freeze_quiescence", "", 0, expected, who + " " + what,
                       "freeze not quiescent: " + who + " " + what + " (step " + std::to_string(event.step) +
                           (frozen_ ? ", frozen)" : ", freeze by task " + freezer_ + ")")});
    }

    std::map<std::uint64_t, Live> live_;  // allocated, not freed yet
    std::string freezer_;                 // the task that set SB_FREEZE_WRITE
    bool window_ = false;                 // between the drain point and SB_FREEZE_COMPLETE
    bool frozen_ = false;                 // SB_FREEZE_COMPLETE
    std::uint64_t drains_ = 0;
};

}  // namespace

auto make_freeze_quiescence() -> std::unique_ptr<Checker> { return std::make_unique<FreezeQuiescence>(); }

auto make_watch(std::string_view checker) -> std::unique_ptr<EventWatch> {
    if (checker == "freeze_quiescence") return std::make_unique<FreezeQuiescenceWatch>();
    return nullptr;
}

}  // namespace checkers
