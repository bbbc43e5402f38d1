// fs/jbd2/revoke.c: jbd2_journal_revoke and jbd2_journal_write_revoke_records.
#include <algorithm>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"
#include "sim/live.hpp"

namespace model::ext4 {

void Ext4::journal_revoke(std::uint64_t tid, std::uint64_t block) {
    // ext4_forget of a metadata block (is_metadata, data=ordered) ->
    // jbd2_journal_revoke: the buffer, if cached, is forgotten, and a revoke
    // record for the block goes into the running transaction's table
    // (insert_revoke_hash), to be written at its commit.
    SIM_LIVE(tid, block);
    if (bcache_.find(block) != nullptr) journal_forget(tid, block);
    if (!knobs_.revoke) return;  // the hypothetical kernel: forgotten as a data block, no record
    Transaction& transaction = tx(tid);
    if (std::find(transaction.t_revoke.begin(), transaction.t_revoke.end(), block) ==
        transaction.t_revoke.end())
        transaction.t_revoke.push_back(block);
    SIM_NOTE("jbd2_journal_revoke: " + block_name(block) + " freed: revoke record in transaction " +
             std::to_string(tid));
}

void Ext4::write_revoke_records(std::uint64_t tid, LogWrites& log) {
    // jbd2_journal_write_revoke_records (commit phase 2a, before the
    // metadata's descriptor): the table of the transaction being committed.
    const std::vector<std::uint64_t>& revoked = tx(tid).t_revoke;
    if (revoked.empty()) return;
    submit_log_block(log, store(RevokeBlock{tid, revoked}));
    SIM_NOTE("kjournald2: transaction " + std::to_string(tid) + ": revoke block with " +
             std::to_string(revoked.size()) + " records");
}

}  // namespace model::ext4
