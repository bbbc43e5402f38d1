// The xfs model's state, hashed per footprint resource (sim/fingerprint.hpp)
// for a search that remembers visited states, in the parts the yield points
// declare (points.hpp), which also lets check mode's report name the part two
// merged states differ in: the in-core inodes, their data forks, the page
// cache, the log (CIL, checkpoints, the metadata as of the last record,
// the covering state), the allocator, busy extents, the ioends, inode chunks,
// freezing, the log worker, the open files' error cursors and the metadata
// objects by content. Each lock and wait queue hashes itself into its own resource.
// The counters are statistics that decide nothing, and the cache line of
// m_active_trans costs time in performance runs only: neither is hashed.
#include "model/key_words.hpp"
#include "model/xfs/points.hpp"
#include "model/xfs/xfs.hpp"

namespace model::xfs {

void Xfs::hash_inodes(sim::ResourceHashes& out) const {
    const points::Parts& named = points::parts();
    sim::StateHash inode_hash(inodes_.size());
    KeyWords forks;
    for (const Inode& inode : inodes_) {
        inode_hash.add((inode.exists ? 1U : 0U) | (inode.writeback_error ? 2U : 0U) |
                       (inode.errors.as_eio ? 4U : 0U));
        for (const std::uint64_t word : {std::uint64_t{inode.nlink}, inode.size_bytes, inode.di_size,
                                         inode.extsize_blocks, inode.if_seq, inode.last_commit_seq,
                                         std::uint64_t{inode.errors.wb_err.value()}}) {
            inode_hash.add(word);
        }
        encode_range_map(forks, inode.data_fork, [&](const Extent& extent) {
            forks.insert(forks.end(), {static_cast<std::uint64_t>(extent.state), extent.start_block});
        });
        inode.iolock.hash_into(out);
        inode.ilock.hash_into(out);
    }
    out.add(named.inode, inode_hash.value());
    out.add(named.data_fork, sim::hash_words(forks));
    sim::StateHash chunks(chunk_free_);
    sim::hash_value(chunks, chunk_of_);
    sim::hash_value(chunks, chunk_in_use_);
    out.add(named.ialloc, chunks.value());
}

void Xfs::hash_log(sim::ResourceHashes& out) const {
    KeyWords words;
    for (const std::uint64_t word : {next_transaction_id_, cil_sequence_, durable_sequence_, lsn_, home_lsn_,
                                     ail_lsn_, std::uint64_t{iclogs_busy_},
                                     static_cast<std::uint64_t>(covered_state_), cil_.size()}) {
        words.push_back(word);
    }
    for (const LoggedTransaction& transaction : cil_) encode_transaction(words, transaction);
    encode_object(words, durable_meta_);
    out.add(points::parts().log, sim::hash_words(words));
    log_force_lock_.hash_into(out);
}

void Xfs::hash_io(sim::ResourceHashes& out) const {
    const points::Parts& named = points::parts();
    KeyWords free;
    encode_free(free, free_space_);
    sim::StateHash allocator(sim::hash_words(free));
    for (const std::uint64_t word : {free_blocks_, delalloc_blocks_}) allocator.add(word);
    out.add(named.allocator, allocator.value());
    sim::StateHash busy(busy_.size());
    for (const BusyExtent& extent : busy_) {
        for (const std::uint64_t word : {extent.start, extent.end, extent.sequence}) busy.add(word);
    }
    out.add(named.busy, busy.value());
    agf_lock_.hash_into(out);
    sim::StateHash ioends;
    sim::hash_value(ioends, ioends_);
    out.add(named.ioend, ioends.value());
    writeback_wait_.hash_into(out);
    sim::StateHash pages;
    page_cache_.hash_into(pages);
    out.add(named.page_cache, pages.value());
}

auto Xfs::commuting_parts() const -> sim::Footprint {
    // The freeze levels' writer counts, m_active_trans and each task's own
    // operation: their updates commute, and the freezer and godown, which
    // read the counts, touch everything (points.hpp, Parts).
    return points::parts().freeze | points::parts().mount;
}

auto Xfs::hash_resources(sim::ResourceHashes& out) const -> bool {
    const points::Parts& named = points::parts();
    hash_inodes(out);
    hash_log(out);
    hash_io(out);
    sb_.hash_into(out, named.freeze);
    s_umount_.hash_into(out);
    log_work_.hash_into(out, named.log_work);
    sim::StateHash mount(task_op_.size());
    mount.add((shutdown_ ? 1U : 0U));
    mount.add(active_trans_);
    for (const auto& [task, op] : task_op_) {
        mount.add(task);
        mount.add(sim::hash_name(op));
    }
    out.add(named.mount, mount.value());
    sim::StateHash open_files;
    open_files_.hash_into(open_files);
    out.add(named.open_files, open_files.value());
    sim::StateHash meta;
    if (!meta_objects_.hash_into(meta)) return false;
    out.add(named.meta, meta.value());
    return true;
}

}  // namespace model::xfs
