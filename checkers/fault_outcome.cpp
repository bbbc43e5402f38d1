// fault_outcome (the device's fault model): a fault the crash
// injected is survived (the other checkers hold on what recovery produced),
// detected (a checksum refused the mount or the read: an error the user sees)
// or silently wrong. Silently wrong is what this checker reports: a file
// reads a torn block and the model verifies no data checksum that would turn
// the read into EIO (btrfs_check_data_csum does; xfs and ext4 verify none).
// The runner tells survived and detected in the story, fault by fault.
// A write I/O error (faults.write_errors) leaves no faulty block: what the
// failed write held is simply not on the media. It is silently wrong only
// when a promise breaks (an fsync returned 0 with no error reported on the
// file since the write), which fsync_durability reports: the oracle takes no
// promise for what the kernel reported lost (Oracle::error_reported).
#include "checkers/checker.hpp"

namespace checkers {
namespace {

class FaultOutcome final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "fault_outcome"; }

    void check(const Oracle&, const model::RecoveredState& state, const CheckContext& context,
               std::vector<Violation>& out) const override {
        if (state.faults_injected == 0 || !state.mounted || state.data_checksums) return;
        for (std::size_t file = 0; file < state.files.size() && out.empty(); file++) {
            const model::RecoveredFile& recovered = state.files[file];
            if (!recovered.exists) continue;
            recovered.blocks.for_each(
                [&](std::uint64_t start, std::uint64_t, const model::disk::Content& content) {
                    if (!out.empty() || !content.faulty()) return;
                    const std::string& name = context.file_names[file];
                    const std::uint64_t offset = start * context.block_size;
                    const std::string found = content.describe(context.file_names, context.block_size);
                    out.push_back({"fault_outcome", name, offset,
                                   "whole blocks or an error (a checksum refusing the read)", found,
                                   "silently wrong: a read of " + name + " at " + std::to_string(offset) +
                                       " returns " + found + ", and no checksum refuses it"});
                });
        }
    }

    /// At stake: the crash injected a fault.
    [[nodiscard]] auto at_stake(const Oracle&, const model::RecoveredState& state, const CheckContext&) const
        -> bool override {
        return state.faults_injected > 0;
    }
};

}  // namespace

auto make_fault_outcome() -> std::unique_ptr<Checker> { return std::make_unique<FaultOutcome>(); }

}  // namespace checkers
