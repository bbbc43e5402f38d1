// Mount after a crash: fs/jbd2/recovery.c jbd2_journal_recover (PASS_SCAN,
// PASS_REVOKE, PASS_REPLAY) over the journal superblock's start and sequence,
// to the home blocks each mount reads (model/ext4/super.cpp mounts).
//
// Recovery writes (recover_with_writes; crash during recovery):
// PASS_REPLAY copies each logged block into the home block's buffer and
// marks it dirty; jbd2_journal_recover then writes them (sync_blockdev) and
// FLUSHes the fs device; only then does jbd2_journal_load's journal_reset
// write the journal superblock (FUA) with the log restarted at j_first and
// sequence end_transaction, and ext4_mark_recovery_complete's
// jbd2_journal_flush mark it empty (s_start 0, FUA). Cut before the
// superblock write is durable, the next mount finds the old start and
// replays the same transactions again over whatever reached home: replay
// writes whole blocks, so it is idempotent.
#include <algorithm>
#include <optional>

#include "model/ext4/ext4.hpp"
#include "model/jbd2/points.hpp"

namespace model::ext4 {

auto Ext4::read_transaction(const disk::Image& image, std::uint64_t at, std::uint64_t sequence) const
    -> std::optional<LoggedTransaction> {
    // do_one_pass: a revoke block (if the transaction freed metadata), a
    // descriptor with the expected sequence, the copies its tags describe,
    // then a commit block with the same sequence.
    const std::uint64_t length = j_last_ - j_first_;
    LoggedTransaction found;
    const RevokeBlock* revoke = meta_objects_.find<RevokeBlock>(image.read(at));
    if (revoke != nullptr && revoke->sequence == sequence) {
        found.revoked = revoke->blocks;
        at = log_next(at);
    }
    const Descriptor* descriptor = meta_objects_.find<Descriptor>(image.read(at));
    if (descriptor == nullptr || descriptor->sequence != sequence || descriptor->tags.size() + 2 > length) {
        return std::nullopt;
    }
    found.sequence = sequence;
    std::uint64_t block = log_next(at);
    for (const std::uint64_t tag : descriptor->tags) {
        const disk::Content content = image.read(block);
        const MetaBlock* copy = meta_objects_.find<MetaBlock>(content);
        if (copy == nullptr || copy->block != tag) return std::nullopt;
        found.copies.emplace_back(copy, content);
        block = log_next(block);
    }
    const CommitBlock* commit = meta_objects_.find<CommitBlock>(image.read(block));
    if (commit == nullptr || commit->sequence != sequence) return std::nullopt;
    found.next = log_next(block);
    return found;
}

auto Ext4::scan_pass(const disk::Image& image, const JournalSuper& super, RecoveredState& state) const
    -> std::vector<LoggedTransaction> {
    // do_one_pass(PASS_SCAN): from s_start/s_sequence to the last complete
    // transaction (info->end_transaction).
    std::vector<LoggedTransaction> replay;
    if (super.s_start == 0) {
        state.notes.push_back("jbd2 recovery: the journal is clean (s_start 0)");
        return replay;
    }
    std::uint64_t at = super.s_start;
    std::uint64_t sequence = super.s_sequence;
    while (replay.size() < j_last_ - j_first_) {
        auto found = read_transaction(image, at, sequence++);
        if (!found) break;
        at = found->next;
        replay.push_back(std::move(*found));
    }
    state.notes.push_back("jbd2 recovery: journal superblock start block " + std::to_string(super.s_start) +
                          ", sequence " + std::to_string(super.s_sequence) + "; PASS_SCAN found " +
                          std::to_string(replay.size()) + " complete transactions" +
                          (replay.empty() ? ""
                                          : " (" + std::to_string(replay.front().sequence) + ".." +
                                                std::to_string(replay.back().sequence) + ")"));
    return replay;
}

auto Ext4::revoke_pass(const std::vector<LoggedTransaction>& replay)
    -> std::map<std::uint64_t, std::uint64_t> {
    // do_one_pass(PASS_REVOKE), scan_revoke_records: each revoked block with
    // the latest sequence that revoked it (jbd2_journal_set_revoke).
    std::map<std::uint64_t, std::uint64_t> revoked;
    for (const LoggedTransaction& found : replay) {
        for (const std::uint64_t block : found.revoked)
            revoked[block] = std::max(revoked[block], found.sequence);
    }
    return revoked;
}

auto Ext4::replay_pass(const std::vector<LoggedTransaction>& replay,
                       const std::map<std::uint64_t, std::uint64_t>& revoked, HomeBlocks& home,
                       std::map<std::uint64_t, disk::Content>& replayed, ReplayPlan* plan) -> std::uint64_t {
    // do_one_pass(PASS_REPLAY): later transactions win (each copy overwrites
    // the buffer); a copy from a transaction no later than a revoke of its
    // block is skipped (jbd2_journal_test_revoke). Returns the skipped count.
    std::uint64_t skipped = 0;
    for (const LoggedTransaction& found : replay) {
        for (const auto& [copy, content] : found.copies) {
            const auto revoke = revoked.find(copy->block);
            if (revoke != revoked.end() && found.sequence <= revoke->second) {
                skipped++;
                continue;
            }
            home[copy->block] = copy;
            replayed[copy->block] = content;
            if (plan != nullptr) plan->home[copy->block] = {content, found.sequence};
        }
    }
    return skipped;
}

void Ext4::recover_journal(const disk::Image& image, HomeBlocks& home,
                           std::map<std::uint64_t, disk::Content>& replayed, RecoveredState& state,
                           ReplayPlan* plan) const {
    // jbd2_journal_recover: the three passes of do_one_pass over the log.
    const JournalSuper* super = meta_objects_.find<JournalSuper>(image.read(1));
    if (super == nullptr) {
        fail_mount(state, "no journal superblock at block 1");
        return;
    }
    const std::vector<LoggedTransaction> replay = scan_pass(image, *super, state);
    const std::map<std::uint64_t, std::uint64_t> revoked = revoke_pass(replay);
    const std::uint64_t skipped = replay_pass(replay, revoked, home, replayed, plan);
    if (!revoked.empty()) {
        state.notes.push_back("jbd2 recovery: PASS_REVOKE found " + std::to_string(revoked.size()) +
                              " revoked blocks; PASS_REPLAY skipped " + std::to_string(skipped) +
                              " revoked copies");
    }
    if (plan != nullptr && super->s_start != 0) {
        plan->needed = true;
        plan->end_transaction = super->s_sequence + replay.size();
    }
    state.journal = journal_audit(image, *super, replay);
    audit_names(image, home, *state.journal);
}

void Ext4::audit_names(const disk::Image& image, const HomeBlocks& home, JournalAudit& audit) const {
    // Each logged block: its name, for the checker's message; one neither
    // replayed nor static metadata (a subdirectory's block, written home by
    // a checkpoint): what its home holds.
    for (const auto& [block, meta] : home) audit.home_versions[block] = meta->version;
    for (const JournalTransaction& transaction : audit.durable) {
        for (const JournalUpdate& update : transaction.updates) {
            if (audit.block_names.count(update.block) != 0) continue;
            audit.block_names[update.block] = block_name(update.block);
            if (audit.home_versions.count(update.block) != 0) continue;
            const MetaBlock* meta = meta_objects_.find<MetaBlock>(image.read(update.block));
            audit.home_versions[update.block] =
                meta != nullptr && meta->block == update.block ? meta->version : 0;
        }
    }
}

auto Ext4::journal_audit(const disk::Image& image, const JournalSuper& super,
                         const std::vector<LoggedTransaction>& replay) const -> JournalAudit {
    // The journal as a forensic reader sees it (journal_integrity): every
    // descriptor whose copies and commit block follow it.
    JournalAudit audit;
    audit.tail_sequence = super.s_start == 0 ? 0 : super.s_sequence;
    std::map<std::uint64_t, JournalTransaction> durable;
    // Only a block that starts a metadata object can hold one (MetadataStore::
    // find): one per run of the image's blocks at most, so the audit visits
    // the runs, not every block of the log.
    std::vector<std::uint64_t> starts;
    image.blocks().for_each(
        j_first_, j_last_, [&](std::uint64_t start, std::uint64_t, const disk::DurableBlock& block) {
            if (block.content.kind == disk::ContentKind::meta && block.content.offset == 0)
                starts.push_back(start);
        });
    for (const std::uint64_t at : starts) {
        // A transaction starts at its revoke block, else at its descriptor.
        const disk::Content content = image.read(at);
        const RevokeBlock* revoke = meta_objects_.find<RevokeBlock>(content);
        const Descriptor* descriptor = meta_objects_.find<Descriptor>(content);
        if (revoke == nullptr && descriptor == nullptr) continue;
        const std::uint64_t sequence = revoke != nullptr ? revoke->sequence : descriptor->sequence;
        const RevokeBlock* before =
            meta_objects_.find<RevokeBlock>(image.read(at == j_first_ ? j_last_ - 1 : at - 1));
        if (descriptor != nullptr && before != nullptr && before->sequence == sequence) continue;
        const auto found = read_transaction(image, at, sequence);
        if (!found) continue;
        JournalTransaction transaction;
        transaction.sequence = sequence;
        transaction.revoked = found->revoked;
        transaction.replayed = !replay.empty() && transaction.sequence >= replay.front().sequence &&
                               transaction.sequence <= replay.back().sequence;
        for (const auto& [copy, content] : found->copies)
            transaction.updates.push_back({copy->block, copy->version});
        durable[transaction.sequence] = std::move(transaction);
    }
    for (auto& [sequence, transaction] : durable) audit.durable.push_back(std::move(transaction));
    return audit;
}

auto Ext4::recover_with_writes(const disk::Image& image) -> Recovery {
    ReplayPlan plan;
    Recovery recovery{mount(image, &plan), {}};
    // s_start 0: jbd2_journal_recover returns at once and journal_reset
    // defers the superblock update (JBD2_FLUSHED): nothing is written.
    if (!plan.needed || !recovery.state.mounted) return recovery;
    meta_objects_.mark_recovery();
    using Kind = disk::MountRequest::Kind;
    // PASS_REPLAY dirtied one buffer per home block (mark_buffer_dirty, no
    // I/O); jbd2_journal_recover's sync_blockdev writes them, by block.
    for (const auto& [block, replayed] : plan.home) {
        recovery.requests.push_back({Kind::write, block, 1, replayed.first, false, "meta",
                                     "W(meta) PASS_REPLAY: " + block_name(block) + " from transaction " +
                                         std::to_string(replayed.second) +
                                         "'s log copy, home (jbd2_journal_recover: sync_blockdev)"});
    }
    recovery.requests.push_back({Kind::flush,
                                 0,
                                 0,
                                 {},
                                 false,
                                 "flush",
                                 "FLUSH the fs device (jbd2_journal_recover: blkdev_issue_flush, \"Make sure "
                                 "all replayed data is on permanent storage\")"});
    // jbd2_journal_load -> journal_reset: j_tail = j_head = j_first (no
    // JBD2_CYCLE_RECORD), j_tail_sequence = end_transaction, written with
    // jbd2_journal_update_sb_log_tail (REQ_SYNC | REQ_FUA).
    const std::uint64_t end = plan.end_transaction;
    recovery.requests.push_back({Kind::write, 1, 1, store(JournalSuper{j_first_, end}), true, "super",
                                 "W(super) FUA journal superblock: start log block " +
                                     std::to_string(j_first_) + ", sequence " + std::to_string(end) +
                                     " (journal_reset: jbd2_journal_update_sb_log_tail)"});
    // ext4_fill_super -> ext4_mark_recovery_complete -> jbd2_journal_flush:
    // nothing to checkpoint, then jbd2_mark_journal_empty (s_start 0, FUA).
    recovery.requests.push_back({Kind::write, 1, 1, store(JournalSuper{0, end}), true, "super",
                                 "W(super) FUA journal superblock: s_start 0, sequence " +
                                     std::to_string(end) +
                                     " (ext4_mark_recovery_complete: jbd2_journal_flush -> "
                                     "jbd2_mark_journal_empty)"});
    return recovery;
}

}  // namespace model::ext4
