// mount: recovery must mount the crashed image. A refused mount is a
// violation of its own (reported with the crash step like any other), never
// a state the other checkers silently skip. Always on, unless the scenario
// says a failed mount is expected (crash.mount: may-fail).
#include "checkers/checker.hpp"

namespace checkers {
namespace {

class Mount final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "mount"; }

    void check(const Oracle&, const model::RecoveredState& state, const CheckContext&,
               std::vector<Violation>& out) const override {
        if (state.mounted) return;
        // A checksum caught a device fault the crash injected:
        // the user sees the error; fault_outcome judges it (detected).
        if (!state.checksum_failed.empty()) return;
        const std::string error = state.mount_error.empty() ? "no reason given" : state.mount_error;
        out.push_back({"mount", "", 0, "a mountable image", error, "mount fails: " + error});
    }

    /// Every crash state: a mount is always at stake.
    [[nodiscard]] auto at_stake(const Oracle&, const model::RecoveredState&, const CheckContext&) const
        -> bool override {
        return true;
    }
};

}  // namespace

auto make_mount() -> std::unique_ptr<Checker> { return std::make_unique<Mount>(); }

}  // namespace checkers
