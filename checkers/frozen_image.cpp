// frozen_image: a file system frozen to SB_FREEZE_COMPLETE is clean on disk.
// xfs_fs_freeze runs xfs_quiesce_attr (log force, AIL push, xfs_log_sbcount,
// xfs_log_quiesce with its unmount record), then logs one more superblock
// transaction, so "a frozen image's log ends with the unmount record followed
// by the final superblock transaction, so mounting a snapshot replays only
// that" (for "xfs: remove the m_active_trans counter").
//
// For a crash state cut while frozen, the log records recovery finds after
// the tail hold at most one transaction, which logs only the superblock.
// Anything else (an inode,
// free space, a second superblock transaction: the log worker let loose after
// the unmount record) is work a snapshot would have to replay.
//
// What it does not check: that the frozen image mounts (the mount checker
// judges every crash state); that the replayed superblock is the freezer's own
// rather than another task's (both log the same buffer); data (fsync_durability
// and no_stale_data judge it in the same states); crash states cut while the
// freeze is still in progress (every other checker judges those); models whose
// recovery gives no account of the log records it found (btrfs, ext4) have
// nothing at stake.
#include <string>

#include "checkers/checker.hpp"

namespace checkers {
namespace {

class FrozenImage final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "frozen_image"; }

    void check(const Oracle& oracle, const model::RecoveredState& state, const CheckContext& context,
               std::vector<Violation>& out) const override {
        if (!at_stake(oracle, state, context)) return;
        std::uint32_t transactions = 0;
        for (const model::LogRecordFound& record : *state.log_records) {
            if (record.unmount) continue;
            transactions += record.transactions;
            if (!record.superblock_only) {
                return report(out, "only the final superblock transaction after the tail",
                              "record lsn " + std::to_string(record.lsn) + " (" + record.kinds + ")",
                              "a frozen image's log needs replay of record lsn " +
                                  std::to_string(record.lsn) + " (" + record.kinds +
                                  "), which changes more than the superblock");
            }
        }
        if (transactions > 1) {
            return report(out, "at most one transaction after the tail",
                          std::to_string(transactions) + " superblock transactions",
                          "a frozen image's log holds " + std::to_string(transactions) +
                              " superblock transactions after its tail; xfs_fs_freeze logs one after the "
                              "unmount record");
        }
    }

    /// A mounted image cut while frozen, by a model that accounts for its log
    /// records (a refused mount gives no account: the mount checker's).
    [[nodiscard]] auto at_stake(const Oracle&, const model::RecoveredState& state,
                                const CheckContext& context) const -> bool override {
        return context.frozen == model::FreezeLevel::complete && state.log_records.has_value();
    }

private:
    static void report(std::vector<Violation>& out, std::string expected, std::string found,
                       std::string message) {
        out.push_back({"frozen_image", "", 0, std::move(expected), std::move(found), std::move(message)});
    }
};

}  // namespace

auto make_frozen_image() -> std::unique_ptr<Checker> { return std::make_unique<FrozenImage>(); }

}  // namespace checkers
