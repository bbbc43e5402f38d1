// Mount after a crash: fs/jbd2/recovery.c jbd2_journal_recover (PASS_SCAN,
// PASS_REVOKE, PASS_REPLAY) over the journal superblock's start and sequence,
// then ext4 reads its directory and inodes. A pure function of the image.
#include <optional>

#include "model/jbd2/ext4.hpp"

namespace model::jbd2 {

auto Ext4::home_block(const disk::Image& image, std::uint64_t block) const -> MetaBlock {
    const MetaBlock* meta = meta_objects_.find<MetaBlock>(image.read(block));
    SIM_ASSERT(meta != nullptr && meta->block == block);  // mkfs wrote every metadata block
    return *meta;
}

void Ext4::recover_journal(const disk::Image& image, std::map<std::uint64_t, MetaBlock>& home,
                           RecoveredState& state) const {
    const JournalSuper* super = meta_objects_.find<JournalSuper>(image.read(1));
    if (super == nullptr) {
        fail_mount(state, "no journal superblock at block 1");
        return;
    }
    JournalAudit audit;
    audit.tail_sequence = super->s_start == 0 ? 0 : super->s_sequence;
    const std::uint64_t length = j_last_ - j_first_;
    // A transaction at log block `at`: its descriptor, copies and commit block
    // with sequence `sequence`, or nothing.
    struct Found {
        std::vector<const MetaBlock*> copies;
        std::uint64_t next = 0;
    };
    const auto read_transaction = [&](std::uint64_t at, std::uint64_t sequence) -> std::optional<Found> {
        const Descriptor* descriptor = meta_objects_.find<Descriptor>(image.read(at));
        if (descriptor == nullptr || descriptor->sequence != sequence ||
            descriptor->tags.size() + 2 > length) {
            return std::nullopt;
        }
        Found found;
        std::uint64_t block = log_next(at);
        for (const std::uint64_t tag : descriptor->tags) {
            const MetaBlock* copy = meta_objects_.find<MetaBlock>(image.read(block));
            if (copy == nullptr || copy->block != tag) return std::nullopt;
            found.copies.push_back(copy);
            block = log_next(block);
        }
        const CommitBlock* commit = meta_objects_.find<CommitBlock>(image.read(block));
        if (commit == nullptr || commit->sequence != sequence) return std::nullopt;
        found.next = log_next(block);
        return found;
    };
    // PASS_SCAN from s_start/s_sequence to the last complete transaction.
    std::vector<Found> replay;
    std::uint64_t last = 0;
    if (super->s_start != 0) {
        std::uint64_t at = super->s_start;
        std::uint64_t sequence = super->s_sequence;
        while (replay.size() < length) {
            auto found = read_transaction(at, sequence);
            if (!found) break;
            at = found->next;
            replay.push_back(std::move(*found));
            last = sequence++;
        }
        state.notes.push_back(
            "jbd2 recovery: journal superblock start block " + std::to_string(super->s_start) +
            ", sequence " + std::to_string(super->s_sequence) + "; PASS_SCAN found " +
            std::to_string(replay.size()) + " complete transactions" +
            (replay.empty() ? ""
                            : " (" + std::to_string(super->s_sequence) + ".." + std::to_string(last) + ")"));
    } else {
        state.notes.push_back("jbd2 recovery: the journal is clean (s_start 0)");
    }
    // PASS_REVOKE: the model writes no revoke records (no operation frees
    // metadata blocks), so there is nothing to gather.
    // PASS_REPLAY: later transactions win.
    for (const Found& found : replay) {
        for (const MetaBlock* copy : found.copies) home[copy->block] = *copy;
    }
    // The journal as a forensic reader sees it (journal_integrity): every
    // descriptor whose copies and commit block follow it.
    std::map<std::uint64_t, JournalTransaction> durable;
    for (std::uint64_t at = j_first_; at < j_last_; at++) {
        const Descriptor* descriptor = meta_objects_.find<Descriptor>(image.read(at));
        if (descriptor == nullptr) continue;
        const auto found = read_transaction(at, descriptor->sequence);
        if (!found) continue;
        JournalTransaction transaction;
        transaction.sequence = descriptor->sequence;
        transaction.replayed = super->s_start != 0 && transaction.sequence >= super->s_sequence &&
                               transaction.sequence <= last && !replay.empty();
        for (const MetaBlock* copy : found->copies)
            transaction.updates.push_back({copy->block, copy->version});
        durable[transaction.sequence] = std::move(transaction);
    }
    for (auto& [sequence, transaction] : durable) audit.durable.push_back(std::move(transaction));
    for (const auto& [block, meta] : home) {
        audit.home_versions[block] = meta.version;
        audit.block_names[block] = block_name(block);
    }
    state.journal = std::move(audit);
}

auto Ext4::recover(const disk::Image& image) const -> RecoveredState {
    RecoveredState state;
    state.device_blocks = device_.block_count();
    state.metadata_end = groups_[0].data_start;  // group 0's; later groups' bitmaps and tables lie past it
    state.files.resize(file_names_.size());
    std::map<std::uint64_t, MetaBlock> home;
    for (const Group& group : groups_) {
        for (std::uint64_t block = group.block_bitmap; block < group.data_start; block++)
            home[block] = home_block(image, block);
    }
    recover_journal(image, home, state);
    if (!state.mount_error.empty()) return state;
    state.mounted = true;
    recover_names(image, home, state);
    return state;
}

void Ext4::recover_names(const disk::Image& image, const std::map<std::uint64_t, MetaBlock>& home,
                         RecoveredState& state) const {
    // ext4: names in the root directory and its subdirectories, inodes in the
    // tables, blocks in the bitmaps. A subdirectory's block is metadata that
    // mkfs did not write: after replay, or at home, or never written (empty).
    std::map<std::string, std::uint32_t> by_path;
    for (std::uint32_t file = 0; file < file_names_.size(); file++) by_path[file_names_[file]] = file;
    const auto inode_of = [&](std::uint64_t ino) -> const InodeRecord& {
        return home.at(inode_block(ino)).inodes[ino % inodes_per_block];
    };
    const auto block_free = [&](std::uint64_t device_block) {
        if (device_block < groups_[0].block_bitmap) return true;
        const Group& group = groups_[group_of_block(device_block)];
        const auto& bits = home.at(group.block_bitmap).bits;
        return device_block < group.data_start || device_block - group.data_start >= bits.size() ||
               !bits[device_block - group.data_start];
    };
    const auto dir_block = [&](std::uint64_t block) -> MetaBlock {
        const auto replayed = home.find(block);
        if (replayed != home.end()) return replayed->second;
        const MetaBlock* meta = meta_objects_.find<MetaBlock>(image.read(block));
        return meta != nullptr && meta->block == block ? *meta : MetaBlock{};
    };
    std::vector<std::pair<std::string, MetaBlock>> directories;  // path prefix, block
    for (std::uint64_t block = dir_start_; block < groups_[0].data_start; block++)
        directories.emplace_back("", home.at(block));
    for (std::size_t d = 0; d < directories.size(); d++) {
        const std::string prefix = directories[d].first;
        const auto entries = directories[d].second.entries;  // directories grows below
        for (const auto& [entry, ino] : entries) {
            const InodeRecord& record = inode_of(ino);
            if (!record.used) {
                state.consistency_errors.push_back("directory entry " + prefix + entry + " names inode " +
                                                   std::to_string(ino) + ", which is not in use");
                continue;
            }
            if (!home.at(groups_[ino / inodes_per_group].inode_bitmap).bits[ino % inodes_per_group]) {
                state.consistency_errors.push_back("inode " + std::to_string(ino) + " (" + prefix + entry +
                                                   ") is in use but free in the inode bitmap");
            }
            for (const auto& [file_block, device_block] : record.blocks) {
                if (block_free(device_block)) {
                    state.consistency_errors.push_back("inode " + std::to_string(ino) + " maps block " +
                                                       std::to_string(device_block) +
                                                       ", which is free in the block bitmap");
                }
                if (record.directory) directories.emplace_back(prefix + entry + "/", dir_block(device_block));
            }
            const auto file = by_path.find(prefix + entry);
            if (record.directory || file == by_path.end()) continue;
            RecoveredFile& recovered = state.files[file->second];
            recovered.exists = true;
            recovered.size_bytes = record.size;
            for (const auto& [file_block, device_block] : record.blocks) {
                recovered.extents.push_back({file_block, device_block, 1, false});
                recovered.read_mapped(image, file_block, device_block, 1);
            }
        }
    }
}

}  // namespace model::jbd2
