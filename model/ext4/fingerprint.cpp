// The ext4/jbd2 model's state, hashed per footprint resource
// (sim/fingerprint.hpp) for a search that remembers visited states: each
// piece goes to the resource model/jbd2/points.hpp names for it (jbd2.journal,
// jbd2.checkpoint, jbd2.log, buffer.state, ext4.inode), each lock and wait
// queue to its own. Metadata blocks and stored objects are hashed by content.
#include <algorithm>
#include "model/ext4/ext4.hpp"
#include "model/key_words.hpp"
#include "sim/assert.hpp"

namespace model::ext4 {

namespace {

struct Resources {
    sim::Footprint journal = sim::resource(points::journal);
    sim::Footprint checkpoint = sim::resource(points::checkpoint);
    sim::Footprint log = sim::resource(points::log);
    sim::Footprint objects = sim::resource(points::objects);
    sim::Footprint buffer = sim::resource(points::buffer);
    sim::Footprint inode = sim::resource(points::inode);
};

auto resources() -> const Resources& {
    static const Resources named;
    return named;
}

void hash_blocks(sim::StateHash& out, const std::vector<std::uint64_t>& blocks) {
    out.add(blocks.size());
    for (const std::uint64_t block : blocks) out.add(block);
}

auto content_hash(KeyWords& words, const MetaBlock& meta) -> std::uint64_t {
    words.clear();
    encode_object(words, meta);
    return sim::hash_words(words);
}

bool verify_kept_hashes = false;  // verify_meta_block_hashes

auto kept_content_hash(KeyWords& words, const MetaBlock& meta) -> std::uint64_t {
    // A block's hash is kept until its version changes.
    if (meta.hashed_version != meta.version) {
        meta.content_hash = content_hash(words, meta);
        meta.hashed_version = meta.version;
    } else if (verify_kept_hashes) {
        SIM_ASSERT(meta.content_hash == content_hash(words, meta));
    }
    return meta.content_hash;
}

auto block_term(KeyWords& words, std::uint64_t block, const MetaBlock& meta) -> std::uint64_t {
    sim::StateHash term(block);
    term.add(kept_content_hash(words, meta));
    return term.value();
}

void hash_meta_blocks(sim::StateHash& out, const std::map<std::uint64_t, MetaBlock>& blocks,
                      MetaBlocksHash& kept) {
    KeyWords words;
    if (!kept.primed) {
        kept.sum = 0;
        for (const auto& [block, meta] : blocks) kept.count(meta, block_term(words, block, meta));
        kept.primed = true;
    } else {
        for (const std::uint64_t block : kept.changed) {
            const auto found = blocks.find(block);
            if (found == blocks.end()) continue;
            kept.forget(found->second);
            kept.count(found->second, block_term(words, block, found->second));
        }
    }
    kept.changed.clear();
    if (verify_kept_hashes) {
        std::uint64_t sum = 0;
        for (const auto& [block, meta] : blocks) {
            SIM_ASSERT(meta.in_sum);
            sum += block_term(words, block, meta);
        }
        SIM_ASSERT(sum == kept.sum);
    }
    out.add(blocks.size());
    out.add(kept.sum);
}

}  // namespace

void verify_meta_block_hashes(bool on) {
    verify_kept_hashes = on;
    disk::verify_kept_durable_hash = on;
}

void Ext4::hash_journal(sim::ResourceHashes& out) const {
    // journal_t's transactions and sequences (jbd2.journal) and the
    // checkpoint lists (jbd2.checkpoint).
    const Resources& named = resources();
    const sim::Instant now = sim::now();
    sim::StateHash journal(running_);
    for (const std::uint64_t word :
         {committing_, j_transaction_sequence_, j_commit_sequence_, j_commit_request_}) {
        journal.add(word);
    }
    journal.add_bool(kjournald2_running_);
    sim::StateHash checkpoint(j_shrink_transaction_);
    hash_blocks(checkpoint, checkpoint_transactions_);
    journal.add(transactions_.size());
    for (const auto& [tid, transaction] : transactions_) {
        for (const std::uint64_t word : {tid, static_cast<std::uint64_t>(transaction.state),
                                         std::uint64_t{transaction.t_updates}, transaction.t_log_start}) {
            journal.add(word);
        }
        // t_start is read only by the commit timer, of the running
        // transaction, as whether its age has reached commit_interval.
        if (tid == running_) {
            const sim::Duration age = std::min<sim::Duration>(now - transaction.t_start, commit_interval);
            journal.add(static_cast<std::uint64_t>(age));
        }
        for (const auto* list : {&transaction.t_buffers, &transaction.t_reserved, &transaction.t_forget,
                                 &transaction.t_revoke}) {
            hash_blocks(journal, *list);
        }
        journal.add(transaction.t_inode_list.size());
        for (const std::uint32_t file : transaction.t_inode_list) journal.add(file);
        // Only the checkpoint lists: a transaction starting (journal_start)
        // changes the journal, not them.
        if (transaction.t_checkpoint_list.empty()) continue;
        checkpoint.add(tid);
        hash_blocks(checkpoint, transaction.t_checkpoint_list);
    }
    journal.add(task_op_.size());
    for (const auto& [task, op] : task_op_) {
        journal.add(task);
        journal.add(sim::hash_name(op));
    }
    out.add(named.journal, journal.value());
    out.add(named.checkpoint, checkpoint.value());
    j_list_lock_.hash_into(out);
    j_checkpoint_mutex_.hash_into(out);
    for (const sim::WaitQueue* queue :
         {&j_wait_commit_, &j_wait_done_commit_, &j_wait_updates_, &j_wait_transaction_locked_}) {
        queue->hash_into(out);
    }
}

void Ext4::hash_buffers(sim::ResourceHashes& out) const {
    // The buffer cache, b_data (live and frozen copies) and the allocator's
    // state beside the bitmaps (buffer.state).
    sim::StateHash buffers;
    bcache_.hash_into(buffers, out, sim::now(), dirty_expire_interval);
    hash_meta_blocks(buffers, live_, live_hash_);
    hash_meta_blocks(buffers, frozen_, frozen_hash_);
    buffers.add(groups_.size());
    for (const Group& group : groups_) buffers.add(group.used_dirs);
    buffers.add(dirs_.size());
    for (const auto& [path, dir] : dirs_) {
        buffers.add(sim::hash_name(path));
        buffers.add(dir.ino);
        buffers.add_bool(dir.dead);
        hash_blocks(buffers, dir.blocks);
        dir.i_rwsem.hash_into(out);
    }
    buffers.add(freed_pending_.size());
    for (const auto& [tid, blocks] : freed_pending_) {
        buffers.add(tid);
        hash_blocks(buffers, blocks);
    }
    // freed_pending_tid_ is freed_pending_ by block.
    buffers.add(buddy_used_.size());
    for (const std::uint64_t block : buddy_used_) buffers.add(block);
    out.add(resources().buffer, buffers.value());
}

void Ext4::keep_state_hashes() {
    sim::StateHash ignored;
    hash_meta_blocks(ignored, live_, live_hash_);
    hash_meta_blocks(ignored, frozen_, frozen_hash_);
    device_.keep_durable_hash();
}

auto Ext4::commuting_parts() const -> sim::Footprint { return resources().objects; }

auto Ext4::hash_resources(sim::ResourceHashes& out) const -> bool {
    const Resources& named = resources();
    hash_journal(out);
    hash_buffers(out);
    sim::StateHash log(j_head_);
    log.add(j_tail_);
    log.add(j_tail_sequence_);
    out.add(named.log, log.value());
    // The objects the device's contents name (Content::meta ids).
    sim::StateHash objects;
    if (!meta_objects_.hash_into(objects)) return false;
    out.add(named.objects, objects.value());
    sim::StateHash inodes(data_in_flight_);
    for (const Inode& inode : inodes_) {
        inodes.add(inode.ino);
        inodes.add(inode.i_sync_tid);
        inodes.add(inode.dirty_pages.size());
        for (const auto& [block, content] : inode.dirty_pages) {
            inodes.add(block);
            content.hash_into(inodes);
        }
    }
    out.add(named.inode, inodes.value());
    data_wait_.hash_into(out);
    return true;
}

}  // namespace model::ext4
