// The xfs model's state, hashed per footprint resource (sim/fingerprint.hpp)
// for a search that remembers visited states. The xfs yield points declare
// no resources, so every step touches them all; the state is still split
// over named resources so that check mode's report names the part two
// merged states differ in: the in-core inodes, their data forks, the page
// cache, the log (CIL, checkpoints, the metadata as of the last record,
// the covering state), the allocator, the ioends, inode chunks, freezing,
// the log worker, the open files' error cursors and the metadata objects by
// content. Each lock and wait queue hashes itself into its own resource.
// The counters are statistics that decide nothing, and the cache line of
// m_active_trans costs time in performance runs only: neither is hashed.
#include "model/key_words.hpp"
#include "model/xfs/xfs.hpp"

namespace model::xfs {

namespace {

struct Resources {
    sim::Footprint inode = sim::resource("xfs.inode");
    sim::Footprint data_fork = sim::resource("xfs.data_fork");
    sim::Footprint ialloc = sim::resource("xfs.ialloc");
    sim::Footprint page_cache = sim::resource("xfs.page_cache");
    sim::Footprint log = sim::resource("xfs.log");
    sim::Footprint allocator = sim::resource("xfs.allocator");
    sim::Footprint ioend = sim::resource("xfs.ioend");
    sim::Footprint freeze = sim::resource("xfs.freeze");
    sim::Footprint log_work = sim::resource("xfs.log_work");
    sim::Footprint mount = sim::resource("xfs.mount");
    sim::Footprint open_files = sim::resource("xfs.open_files");
    sim::Footprint meta = sim::resource("xfs.meta");
};

auto resources() -> const Resources& {
    static const Resources named;
    return named;
}

}  // namespace

void Xfs::hash_inodes(sim::ResourceHashes& out) const {
    const Resources& named = resources();
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
    out.add(resources().log, sim::hash_words(words));
    log_force_lock_.hash_into(out);
}

void Xfs::hash_io(sim::ResourceHashes& out) const {
    const Resources& named = resources();
    KeyWords free;
    encode_free(free, free_space_);
    sim::StateHash allocator(sim::hash_words(free));
    for (const std::uint64_t word : {free_blocks_, delalloc_blocks_, std::uint64_t{busy_.size()}}) {
        allocator.add(word);
    }
    for (const BusyExtent& busy : busy_) {
        for (const std::uint64_t word : {busy.start, busy.end, busy.sequence}) allocator.add(word);
    }
    out.add(named.allocator, allocator.value());
    agf_lock_.hash_into(out);
    sim::StateHash ioends;
    sim::hash_value(ioends, ioends_);
    out.add(named.ioend, ioends.value());
    writeback_wait_.hash_into(out);
    sim::StateHash pages;
    page_cache_.hash_into(pages);
    out.add(named.page_cache, pages.value());
}

auto Xfs::hash_resources(sim::ResourceHashes& out) const -> bool {
    const Resources& named = resources();
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
