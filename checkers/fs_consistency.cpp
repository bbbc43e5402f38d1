// fs_consistency: the model's own metadata invariants as found while
// mounting the crashed image (a superblock that names a tree block the crash
// lost, a block owned twice, an extent outside the device), which the model
// computes about itself; then the same kind of rules checked here, outside
// the model, on the extents and sizes recovery reported
// (checkers/recovered_image.hpp), so that a model bug in its own check cannot
// hide a broken image.
#include "checkers/checker.hpp"
#include "checkers/recovered_image.hpp"

namespace checkers {
namespace {

class FsConsistency final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "fs_consistency"; }

    void check(const Oracle&, const model::RecoveredState& state, const CheckContext& context,
               std::vector<Violation>& out) const override {
        if (state.consistency_errors.empty()) {
            if (const auto error = recovered_image_error(state, context)) {
                out.push_back({"fs_consistency", "", 0, "consistent extents", *error,
                               "recovered image: " + *error});
            }
            return;
        }
        const std::string& first = state.consistency_errors.front();
        out.push_back({"fs_consistency", "", 0, "consistent metadata", first,
                       (state.mounted ? "" : "mount fails: ") + first});
    }

    /// At stake: the model found a broken invariant, or the image mounted
    /// with at least one extent (something that can be mapped twice or
    /// outside the device).
    [[nodiscard]] auto at_stake(const Oracle&, const model::RecoveredState& state, const CheckContext&) const
        -> bool override {
        if (!state.consistency_errors.empty()) return true;
        if (!state.mounted) return false;
        for (const model::RecoveredFile& file : state.files) {
            if (file.exists && !file.extents.empty()) return true;
        }
        return false;
    }
};

}  // namespace

auto make_fs_consistency() -> std::unique_ptr<Checker> { return std::make_unique<FsConsistency>(); }

}  // namespace checkers
