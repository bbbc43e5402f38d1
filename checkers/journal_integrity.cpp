// journal_integrity: for a journaling model (RecoveredState::journal), every
// update of every transaction whose commit block the crashed image holds is
// present after recovery: the metadata block at home holds that version or a
// later one. For a transaction recovery replayed this checks the replay; for
// one before the recorded tail it checks that the checkpoint wrote it home
// before the tail moved past it (nothing before the tail may depend on a
// buffer never written home).
//
// What it does not check: transactions whose log blocks a later transaction
// overwrote after the log wrapped (the image no longer holds them, so no
// reader can tell); updates a durable revoke record covers (a revoke in
// transaction R frees the block: no copy from R or earlier is owed, and
// whether replay honoured the revoke shows in the data the block now holds,
// which fsync_durability and no_stale_data judge); updates of blocks that are
// no longer metadata after recovery (freed, or reused as file data: what
// would make them metadata again is an update of its own); data blocks
// (fsync_durability and no_stale_data judge those); transactions whose commit
// block is not durable (they are not promised). A model that reports no
// journal has nothing at stake here, and `crashsim check` fails a "holds"
// that never had anything at stake.
#include <algorithm>
#include <map>

#include "checkers/checker.hpp"

namespace checkers {
namespace {

class JournalIntegrity final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "journal_integrity"; }

    void check(const Oracle&, const model::RecoveredState& state, const CheckContext&,
               std::vector<Violation>& out) const override {
        if (!state.mounted || !state.journal) return;
        const model::JournalAudit& journal = *state.journal;
        std::map<std::uint64_t, std::uint64_t> revoked;  // block -> the latest durable revoke of it
        for (const model::JournalTransaction& transaction : journal.durable) {
            for (const std::uint64_t block : transaction.revoked)
                revoked[block] = std::max(revoked[block], transaction.sequence);
        }
        for (const model::JournalTransaction& transaction : journal.durable) {
            for (const model::JournalUpdate& update : transaction.updates) {
                const auto revoke = revoked.find(update.block);
                if (revoke != revoked.end() && transaction.sequence <= revoke->second) continue;
                if (journal.not_metadata.count(update.block) != 0) continue;
                const auto home = journal.home_versions.find(update.block);
                const std::uint64_t found = home == journal.home_versions.end() ? 0 : home->second;
                if (found >= update.version) continue;
                const auto named = journal.block_names.find(update.block);
                const std::string what = named == journal.block_names.end()
                                             ? "block " + std::to_string(update.block)
                                             : named->second;
                const std::string where = transaction.replayed ? "recovery replayed it but"
                                                               : "it is before the journal tail (sequence " +
                                                                     std::to_string(journal.tail_sequence) +
                                                                     "), so recovery did not replay it, and";
                out.push_back({"journal_integrity", "", 0,
                               what + " at version " + std::to_string(update.version) + " or later",
                               "version " + std::to_string(found),
                               "transaction " + std::to_string(transaction.sequence) +
                                   " committed (its commit block is durable) but its update to " + what +
                                   " is lost: " + where + " the block at home holds version " +
                                   std::to_string(found) + ", older than the committed version " +
                                   std::to_string(update.version)});
                return;
            }
        }
    }

    /// At stake: the image holds at least one committed transaction.
    [[nodiscard]] auto at_stake(const Oracle&, const model::RecoveredState& state, const CheckContext&) const
        -> bool override {
        return state.mounted && state.journal && !state.journal->durable.empty();
    }
};

}  // namespace

auto make_journal_integrity() -> std::unique_ptr<Checker> {
    return std::make_unique<JournalIntegrity>();
}

}  // namespace checkers
