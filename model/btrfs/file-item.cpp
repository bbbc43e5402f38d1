// The checksum tree: csum items keyed by disk bytenr in leaves of a btree,
// each leaf and internal node with its own extent buffer lock, searched with
// lock coupling as btrfs_search_slot does (fs/btrfs/ctree.c, file-item.c of
// v5.7). Patch 3/3 of "btrfs: fix race between page release and a fast fsync": a full
// fsync looks up the checksums of every extent of the running transaction
// (btrfs_lookup_csums_range from copy_items), "which not only take some time
// but, more importantly, they also cause contention on the checksums btree
// locks due to the concurrency with checksum insertions in the btree by
// ordered extents from other inodes" (btrfs_csum_file_blocks at
// btrfs_finish_ordered_io). Leaf capacity is derived in btrfs.hpp.
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "sim/assert.hpp"
#include "sim/live.hpp"

namespace model::btrfs {

CsumTree::CsumTree(std::uint32_t nodesize, const char* footprint_name)
    : leaf_data_bytes(nodesize - header_bytes),
      node_fanout((nodesize - header_bytes) / key_ptr_bytes),
      // Every lock of the tree shares the footprint the tree's single lock
      // had: exploration orders them all against each other (coarser, sound).
      footprint(sim::resource(footprint_name)) {
    leaves.push_back(std::make_unique<Leaf>(0, footprint));
}

void CsumTree::clear() {
    leaves.clear();
    nodes.clear();
    leaves.push_back(std::make_unique<Leaf>(0, footprint));
    leaves.back()->cowed = generation;  // a new root, created in this generation
}

CsumTree::CsumTree(const CsumTree& other)
    : leaf_data_bytes(other.leaf_data_bytes),
      node_fanout(other.node_fanout),
      footprint(other.footprint),
      generation(other.generation),
      nodes(other.nodes) {
    // A copy of a quiescent file system: no task holds or waits for a lock.
    for (const auto& leaf : other.leaves) {
        auto copy = std::make_unique<Leaf>(leaf->first, footprint);
        copy->items = leaf->items;
        copy->used = leaf->used;
        copy->cowed = leaf->cowed;
        leaves.push_back(std::move(copy));
    }
}

auto CsumTree::leaf_index(std::uint64_t block) const -> std::size_t {
    // The last leaf whose first key is at or below the block.
    const auto after =
        std::upper_bound(leaves.begin(), leaves.end(), block,
                         [](std::uint64_t key, const auto& leaf) { return key < leaf->first; });
    SIM_ASSERT(after != leaves.begin());
    return static_cast<std::size_t>(after - leaves.begin()) - 1;
}

auto CsumTree::node_levels() const -> std::uint32_t {
    std::uint32_t levels = 0;
    for (std::uint64_t below = leaves.size(); below > 1; below = (below + node_fanout - 1) / node_fanout)
        levels++;
    return levels;
}

auto CsumTree::node(std::uint32_t level, std::size_t leaf) -> Node& {
    std::size_t index = leaf;
    for (std::uint32_t i = 0; i < level; i++) index /= node_fanout;
    const auto key = std::make_pair(level, index);
    auto found = nodes.find(key);
    if (found == nodes.end()) {
        // A node the tree grew (or split) into is a new block of this
        // generation: no COW until its blocks are written.
        found = nodes.emplace(key, Node{sim::RwLock("csum_node.lock", footprint,
                                                    sim::RwLock::Preference::readers),
                                        generation})
                    .first;
    }
    return found->second;
}

auto CsumTree::holds(std::uint64_t block) const -> bool {
    const Leaf& leaf = *leaves[leaf_index(block)];
    auto next = leaf.items.upper_bound(block);
    if (next == leaf.items.begin()) return false;
    const auto before = std::prev(next);
    return block < before->first + before->second;
}

void CsumTree::insert(std::uint64_t block, std::uint64_t count) {
    const std::uint64_t max_sums = (leaf_data_bytes - 2 * item_bytes) / csum_bytes - 1;  // MAX_CSUM_ITEMS
    std::size_t index = leaf_index(block);
    Leaf* leaf = leaves[index].get();
    // btrfs_lookup_csum -EFBIG: an item ends exactly at `block`; extend it
    // while the leaf has room (btrfs_extend_item).
    auto next = leaf->items.upper_bound(block);
    if (next != leaf->items.begin()) {
        auto before = std::prev(next);
        // The sums are there already (a range logged again): overwritten in
        // place (btrfs_lookup_csum found the item).
        if (block < before->first + before->second) return;
        if (before->first + before->second == block && before->second + count <= max_sums &&
            leaf->used + count * csum_bytes <= leaf_data_bytes) {
            before->second += count;
            leaf->used += static_cast<std::uint32_t>(count * csum_bytes);
            return;
        }
    }
    const auto bytes = static_cast<std::uint32_t>(item_bytes + count * csum_bytes);
    if (leaf->used + bytes > leaf_data_bytes) {
        // split_leaf: past the last item a new leaf starts at the new key;
        // inside the leaf the upper half of its items moves to a new one.
        const bool append = leaf->items.empty() || block > leaf->items.rbegin()->first;
        std::uint64_t first = block;
        if (!append) {
            auto middle = leaf->items.begin();
            std::advance(middle, static_cast<std::ptrdiff_t>(leaf->items.size() / 2));
            first = middle->first;
        }
        auto split = std::make_unique<Leaf>(first, footprint);
        split->cowed = generation;  // split_leaf allocates a new block
        for (auto it = leaf->items.lower_bound(first); it != leaf->items.end();) {
            const auto moved = static_cast<std::uint32_t>(item_bytes + it->second * csum_bytes);
            leaf->used -= moved;
            split->used += moved;
            split->items.insert(*it);
            it = leaf->items.erase(it);
        }
        leaves.insert(leaves.begin() + static_cast<std::ptrdiff_t>(index) + 1, std::move(split));
        index = leaf_index(block);
        leaf = leaves[index].get();
    }
    leaf->items.emplace(block, count);
    leaf->used += bytes;
}

namespace {

// Takes `lock` for read or write, counting a wait when it will block.
auto take(sim::RwLock& lock, bool write) -> bool {
    const bool waits = write ? lock.write_held() || lock.readers() > 0 : lock.contended();
    if (write) {
        lock.lock();
    } else {
        lock.lock_shared();
    }
    return waits;
}

void drop(sim::RwLock& lock, bool write) {
    if (write) {
        lock.unlock();
    } else {
        lock.unlock_shared();
    }
}

}  // namespace

auto Btrfs::csum_search(CsumTree& tree, std::uint64_t disk_block, std::uint64_t count, bool cow, bool insert,
                        std::uint64_t& waits, std::uint64_t& leaf_waits) -> CsumPath {
    // btrfs_search_slot (ctree.c, v5.7) from the root down, locking each
    // child before dropping its parent (unlock_up). write_lock_level: -1 for
    // a lookup (cow 0: every level read-locked); 0 for btrfs_lookup_csum
    // (cow 1, ins_len 0: only the leaf write-locked); 1 for an insert
    // (ins_len > 0: the leaf and the node above it). A block that must be
    // copied (should_cow_block) needs itself and its parent write-locked: the
    // search drops its path and starts again with write_lock_level one above
    // the block. A leaf without room for the new item is split inside the
    // search, with the parent still write-locked: the path keeps it.
    int write_lock_level = !cow ? -1 : insert ? 1 : 0;
    const bool log_tree = &tree == &log_csum_tree_;
    SIM_LIVE(log_tree, disk_block, count, cow, insert, write_lock_level);
    for (;;) {
        CsumPath path;
        SIM_LIVE(path);
        const std::uint32_t top = tree.node_levels();
        if (!csum_search_nodes(tree, disk_block, cow, top, write_lock_level, waits, path)) continue;
        if (!csum_search_leaf(tree, disk_block, cow, top, write_lock_level, waits, leaf_waits, path)) {
            continue;
        }
        const std::uint64_t room = tree.leaf_data_bytes - path.leaf->used;
        const bool splits = insert && room < CsumTree::item_bytes + count * CsumTree::csum_bytes;
        if (path.parent != nullptr && !splits) {
            drop(*path.parent, path.parent_write);
            path.parent = nullptr;
        }
        return path;
    }
}

auto Btrfs::csum_search_nodes(CsumTree& tree, std::uint64_t disk_block, bool cow, std::uint32_t top,
                              int& write_lock_level, std::uint64_t& waits, CsumPath& path) -> bool {
    std::uint32_t level = top;
    SIM_LIVE(top, level);
    for (; level >= 1; level--) {
        CsumTree::Node& node = tree.node(level, tree.leaf_index(disk_block));
        const bool write = static_cast<int>(level) <= write_lock_level;
        if (take(node.lock, write)) waits++;
        if (cow && node.cowed != tree.generation) {
            if (!write || (level < top && static_cast<int>(level) + 1 > write_lock_level)) {
                write_lock_level = static_cast<int>(level) + 1;
                drop(node.lock, write);
                csum_release(path);
                return false;
            }
            node.cowed = tree.generation;  // btrfs_cow_block
        }
        sim::cpu(costs_.btree_node_search);
        if (path.parent != nullptr) drop(*path.parent, path.parent_write);
        path.parent = &node.lock;
        path.parent_write = write;
    }
    return true;
}

auto Btrfs::csum_search_leaf(CsumTree& tree, std::uint64_t disk_block, bool cow, std::uint32_t top,
                             int& write_lock_level, std::uint64_t& waits, std::uint64_t& leaf_waits,
                             CsumPath& path) -> bool {
    CsumTree::Leaf& leaf = *tree.leaves[tree.leaf_index(disk_block)];
    const bool write = write_lock_level >= 0;
    // The leaf waited for, by position and first key: a split while the
    // task waits may move the key away from it.
    const std::size_t leaf_index = tree.leaf_index(disk_block);
    const std::uint64_t leaf_first = leaf.first;
    SIM_LIVE(leaf_index, leaf_first, write);
    if (take(leaf.lock, write)) {
        waits++;
        leaf_waits++;
    }
    path.leaf = &leaf;
    path.leaf_write = write;
    // With the root a leaf, a split while this task waited may have
    // moved the key to a new leaf: search again.
    if (tree.leaves[tree.leaf_index(disk_block)].get() != &leaf) {
        csum_release(path);
        return false;
    }
    if (cow && leaf.cowed != tree.generation) {
        if (top >= 1 && write_lock_level < 1) {
            write_lock_level = 1;
            csum_release(path);
            return false;
        }
        leaf.cowed = tree.generation;  // btrfs_cow_block
    }
    return true;
}

void Btrfs::csum_release(CsumPath& path) {
    // btrfs_release_path
    if (path.leaf != nullptr) drop(path.leaf->lock, path.leaf_write);
    if (path.parent != nullptr) drop(*path.parent, path.parent_write);
    path = CsumPath{};
}

void Btrfs::csum_insert(CsumTree& tree, std::uint64_t disk_block, std::uint64_t count, sim::Duration cost,
                        std::uint64_t& waits, std::uint64_t& leaf_waits) {
    // btrfs_csum_file_blocks (file-item.c, v5.7): btrfs_lookup_csum searches
    // with cow 1 and ins_len 0, so only the leaf is write-locked; sums found
    // there (a range logged again by a full fsync) are overwritten in place.
    const bool log_tree = &tree == &log_csum_tree_;
    SIM_LIVE(log_tree, disk_block, count, cost);
    CsumPath path = csum_search(tree, disk_block, count, true, false, waits, leaf_waits);
    SIM_LIVE(path);
    if (tree.holds(disk_block)) {
        sim::cpu(cost);
        csum_release(path);
        return;
    }
    // -EFBIG (an item ends at the block) or -ENOENT: btrfs_release_path, then
    // btrfs_search_slot with ins_len csum_size (extend) or
    // btrfs_insert_empty_item: write_lock_level 1.
    csum_release(path);
    path = csum_search(tree, disk_block, count, true, true, waits, leaf_waits);
    sim::cpu(cost);
    tree.insert(disk_block, count);
    csum_release(path);
}

void Btrfs::insert_checksums(std::uint64_t disk_block, std::uint64_t count) {
    // btrfs_finish_ordered_io -> add_pending_csums: one ordered extent's sums
    // into the checksum tree.
    csum_insert(csum_tree_, disk_block, count, costs_.checksum_insert, counters_.checksum_lock_waits,
                counters_.checksum_leaf_waits);
}

void Btrfs::lookup_checksums(std::uint64_t disk_block, std::uint64_t count) {
    // btrfs_lookup_csums_range for one extent: the leaf holding its first
    // sum, then btrfs_next_leaf (a new search) for each further leaf the
    // range reaches, each under its read lock.
    counters_.checksum_lookups++;
    std::uint64_t block = disk_block;
    const std::uint64_t end = disk_block + count;
    SIM_LIVE(disk_block, count, block);
    while (block < end) {
        CsumTree::Leaf& leaf = *csum_search(csum_tree_, block, end - block, false, false,
                                            counters_.checksum_lock_waits, counters_.checksum_leaf_waits)
                                    .leaf;
        sim::cpu(costs_.checksum_lookup);
        const std::size_t index = csum_tree_.leaf_index(block);
        const std::uint64_t leaf_end =
            index + 1 < csum_tree_.leaves.size() ? csum_tree_.leaves[index + 1]->first : end;
        leaf.lock.unlock_shared();
        block = std::max(block + 1, std::min(end, leaf_end));
    }
    // log_csums: insert them into the log tree (btrfs_csum_file_blocks on
    // the log root).
    csum_insert(log_csum_tree_, disk_block, count, costs_.log_checksums, counters_.log_tree_lock_waits,
                counters_.log_tree_leaf_waits);
}

}  // namespace model::btrfs
