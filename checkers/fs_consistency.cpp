// fs_consistency: the model's own metadata invariants as found while
// mounting the crashed image (a superblock that names a tree block the crash
// lost, a block owned twice, an extent outside the device). The model
// computes them; this checker turns them into violations.
#include "checkers/checker.hpp"

namespace checkers {
namespace {

class FsConsistency final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "fs_consistency"; }

    void check(const Oracle&, const model::RecoveredState& state, const CheckContext&,
               std::vector<Violation>& out) const override {
        if (state.consistency_errors.empty()) return;
        const std::string& first = state.consistency_errors.front();
        out.push_back({"fs_consistency", "", 0, "consistent metadata", first,
                       (state.mounted ? "" : "mount fails: ") + first});
    }
};

}  // namespace

auto make_fs_consistency() -> std::unique_ptr<Checker> { return std::make_unique<FsConsistency>(); }

}  // namespace checkers
