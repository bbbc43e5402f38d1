// The btrfs model's state, hashed per footprint resource (sim/fingerprint.hpp)
// for a search that remembers visited states: each piece goes to the
// resource its yield points name for the code that reads it (points.hpp),
// each lock and wait queue to its own. Metadata objects are hashed by content.
#include "model/btrfs/btrfs.hpp"
#include "model/key_words.hpp"

namespace model::btrfs {

namespace {

struct Resources {
    sim::Footprint inode = sim::resource("btrfs.inode");
    sim::Footprint em_tree = sim::resource("btrfs.em_tree");
    sim::Footprint io_tree = sim::resource("btrfs.io_tree");
    sim::Footprint ordered = sim::resource("btrfs.ordered");
    sim::Footprint page_cache = sim::resource("btrfs.page_cache");
    sim::Footprint allocator = sim::resource("btrfs.allocator");
    sim::Footprint meta = sim::resource("btrfs.meta");
    sim::Footprint transaction = sim::resource("btrfs.transaction");
    sim::Footprint fs_tree = sim::resource("btrfs.fs_tree");
    sim::Footprint log = sim::resource("btrfs.log");
};

auto resources() -> const Resources& {
    static const Resources named;
    return named;
}

void hash_csum_tree(const CsumTree& tree, sim::ResourceHashes& out) {
    sim::StateHash hash(tree.generation);
    for (const auto& leaf : tree.leaves) {
        hash.add(leaf->first);
        hash.add(leaf->used);
        hash.add(leaf->cowed);
        hash.add(leaf->items.size());
        for (const auto& [block, sums] : leaf->items) {
            hash.add(block);
            hash.add(sums);
        }
        leaf->lock.hash_into(out);
    }
    for (const auto& [key, node] : tree.nodes) {
        hash.add((std::uint64_t{key.first} << 48) ^ key.second);
        hash.add(node.cowed);
        node.lock.hash_into(out);
    }
    out.add(tree.footprint, hash.value());
}

}  // namespace

void Btrfs::hash_inodes(sim::ResourceHashes& out) const {
    const Resources& named = resources();
    sim::StateHash inode_hash;
    sim::StateHash em_hash(next_extent_map_id_);
    sim::StateHash io_hash;
    sim::StateHash pending_hash;
    for (const Inode& inode : inodes_) {
        inode_hash.add_bool(inode.exists);
        for (const std::uint64_t word :
             {inode.size_bytes, inode.last_trans, inode.logged_trans, inode.generation}) {
            inode_hash.add(word);
        }
        inode_hash.add_bool(inode.needs_full_sync);
        inode_hash.add(static_cast<std::uint64_t>(inode.last_sub_trans));
        inode_hash.add(static_cast<std::uint64_t>(inode.last_log_commit));
        em_hash.add(inode.em_tree.maps.size());
        for (const auto& [start, em] : inode.em_tree.maps) hash_value(em_hash, em);
        em_hash.add(inode.em_tree.listed.size());
        for (const std::uint64_t start : inode.em_tree.listed) em_hash.add(start);
        io_hash.add(inode.locked.size());
        for (const auto& [start, end] : inode.locked) {
            io_hash.add(start);
            io_hash.add(end);
        }
        pending_hash.add(inode.ordered_pending.size());
        for (const std::uint64_t id : inode.ordered_pending) pending_hash.add(id);
        inode.em_tree.lock.hash_into(out);
        inode.inode_lock.hash_into(out);
        inode.log_mutex.hash_into(out);
    }
    out.add(named.inode, inode_hash.value());
    out.add(named.em_tree, em_hash.value());
    out.add(named.io_tree, io_hash.value());
    out.add(named.ordered, pending_hash.value());
}

void Btrfs::hash_log(sim::ResourceHashes& out) const {
    sim::StateHash log_hash(log_transid_);
    log_hash.add_bool(log_root_exists_);
    log_hash.add(log_writers_);
    log_hash.add(static_cast<std::uint64_t>(log_transid_committed_));
    log_hash.add(static_cast<std::uint64_t>(last_log_commit_));
    log_hash.add((log_committing_[0] ? 1U : 0U) | (log_committing_[1] ? 2U : 0U));
    log_hash.add(log_start_task_);
    log_hash.add((multi_log_tasks_ ? 1U : 0U) | (ssd_ ? 2U : 0U));
    for (const std::uint64_t word : {log_batch_, log_block_, log_object_}) log_hash.add(word);
    // A tick-aligned jiffy sleep lasts to the next tick but one: the clock's
    // phase within a jiffy decides when the sleeper wakes (jiffy_sleep).
    if (knobs_.jiffy_tick_aligned) {
        log_hash.add(static_cast<std::uint64_t>(sim::now() % (sim::seconds / knobs_.hz)));
    }
    KeyWords words;
    encode_object(words, log_tree_);
    log_hash.add(sim::hash_words(words));
    out.add(resources().log, log_hash.value());
    root_log_mutex_.hash_into(out);
    log_writer_wait_.hash_into(out);
    for (const sim::WaitQueue& queue : log_commit_wait_) queue.hash_into(out);
    log_root_tree_mutex_.hash_into(out);
}

auto Btrfs::hash_resources(sim::ResourceHashes& out) const -> bool {
    const Resources& named = resources();
    hash_inodes(out);
    hash_log(out);
    sim::StateHash transaction(generation_);
    for (const std::uint64_t word : {last_trans_committed_, root_block_, root_object_}) transaction.add(word);
    transaction.add((transaction_running_ ? 1U : 0U) | (commit_in_progress_ ? 2U : 0U));
    transaction.add(static_cast<std::uint64_t>(sim::now() - transaction_start_));
    transaction.add(transaction_writers_);
    out.add(named.transaction, transaction.value());
    transaction_wait_.hash_into(out);
    KeyWords words;
    encode_object(words, fs_tree_);
    out.add(named.fs_tree, sim::hash_words(words));
    sim::StateHash ordered(ordered_.size());
    for (const OrderedExtent& extent : ordered_) {
        for (const std::uint64_t word : {extent.id, std::uint64_t{extent.file}, extent.start, extent.length,
                                         extent.disk_block, std::uint64_t{extent.bios_pending}}) {
            ordered.add(word);
        }
        ordered.add_bool(extent.complete);
    }
    out.add(named.ordered, ordered.value());
    ordered_wait_.hash_into(out);
    io_tree_wait_.hash_into(out);
    out.add(named.allocator, data_cursor_);
    sim::StateHash meta(meta_cursor_);
    meta.add(meta_area_end_);
    if (!meta_objects_.hash_into(meta)) return false;
    out.add(named.meta, meta.value());
    sim::StateHash pages;
    page_cache_.hash_into(pages);
    out.add(named.page_cache, pages.value());
    reclaim_.hash_into(out);
    hash_csum_tree(csum_tree_, out);
    hash_csum_tree(log_csum_tree_, out);
    return true;
}

}  // namespace model::btrfs
