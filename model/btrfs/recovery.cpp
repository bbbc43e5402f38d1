// Mount after a crash (fs/btrfs/disk-io.c open_ctree, tree-log.c
// btrfs_recover_log_trees / replay_one_buffer): read the superblock, take the
// roots of the last committed transaction, replay the log if the superblock
// names one. Whatever lived only in an uncommitted transaction and never
// reached the log is gone.
//
// The replay is itself a transaction (btrfs_recover_log_trees ends with
// btrfs_commit_transaction): the replayed fs tree is written copy-on-write to
// a block neither the committed root nor the log occupies, the device cache
// is flushed (write_all_supers -> barrier_all_devices), and the superblock
// goes out with FUA naming the new root and no log (btrfs_commit_transaction
// clears super_copy's log_root). Until that superblock is durable, the next
// mount finds the old superblock, still naming the log, and replays it again
// over the old root, which the copy-on-write left intact
// (recover_with_writes). Left out: the log tree's blocks
// freed by the replay, the checksum tree, the extent tree's references.
#include <set>

#include "model/btrfs/btrfs.hpp"
#include "sim/assert.hpp"

namespace model::btrfs {
namespace {

/// Reads a metadata block and checks that it holds the object the parent
/// pointer expects (btrfs verifies the header's bytenr and generation).
/// A torn block fails its checksum first: read_extent_buffer_pages
/// -> btrfs_validate_extent_buffer compares the csum in the header with one
/// computed over the block ("checksum verify failed"), and the read is -EIO.
template <typename Object>
auto read_meta(const disk::Image& image, std::uint64_t block, std::uint64_t expected_object,
               const MetadataStore<MetaObject>& objects, const std::vector<std::string>& names,
               std::uint32_t block_size, std::string& error, bool& checksum) -> const Object* {
    const std::optional<disk::Content> read = image.read_checked(block);
    if (!read) {
        // A latent sector error: read_extent_buffer_pages gets
        // EIO and, with no other mirror (the model keeps one copy of each
        // tree block: DUP metadata is left out), read_tree_block fails.
        checksum = true;
        error = "the read of block " + std::to_string(block) +
                " fails with EIO, a latent sector error (read_extent_buffer_pages: no other mirror)";
        return nullptr;
    }
    const disk::Content content = *read;
    checksum = content.faulty();
    if (content.misdirected) {
        // btrfs_validate_extent_buffer checks the header's bytenr first.
        error = "block " + std::to_string(block) +
                " fails btrfs_validate_extent_buffer: bad tree block start, want " + std::to_string(block) +
                " have " + std::to_string(content.home) + " (-EIO): it holds " +
                content.describe(names, block_size);
        return nullptr;
    }
    if (checksum) {
        error = "block " + std::to_string(block) +
                " fails its checksum (btrfs_validate_extent_buffer: checksum verify failed): it holds " +
                content.describe(names, block_size);
        return nullptr;
    }
    if (content.kind != disk::ContentKind::meta || content.version != expected_object) {
        error = "block " + std::to_string(block) + " holds " + content.describe(names, block_size) +
                ", expected metadata object #" + std::to_string(expected_object) +
                " (parent transid verify failed)";
        return nullptr;
    }
    const Object* object = std::get_if<Object>(&objects.at(content.version));
    SIM_ASSERT(object != nullptr);
    return object;
}

/// A checksum failure is a fault detected; anything else a broken invariant.
void refuse_or_fail(RecoveredState& state, std::uint64_t block, bool checksum, std::string error) {
    if (checksum) {
        refuse_mount(state, block, std::move(error));
    } else {
        fail_mount(state, std::move(error));
    }
}

}  // namespace

auto Btrfs::recover(const disk::Image& image) const -> RecoveredState {
    return mount(image, nullptr);
}

auto Btrfs::recover_with_writes(const disk::Image& image) -> Recovery {
    LogReplay replay;
    Recovery recovery{mount(image, &replay), {}};
    // No log, nothing replayed: open_ctree writes nothing. A mount that
    // failed commits nothing either.
    if (!replay.replayed || !recovery.state.mounted) return recovery;
    meta_objects_.mark_recovery();
    const std::uint64_t transid = replay.super.generation + 1;
    // btrfs_alloc_tree_block: any block of the metadata area that the
    // committed root and the log do not hold (copy-on-write).
    std::uint64_t block = 1;
    while (block == replay.super.root_block || (replay.super.has_log && block == replay.super.log_block))
        block++;
    SIM_ASSERT(block < meta_area_end_);
    const std::uint64_t tree = store(std::move(replay.tree));
    const std::uint64_t super =
        store(Superblock{transid, block, tree, false, 0, 0, replay.super.log_transid});
    using Kind = disk::MountRequest::Kind;
    recovery.requests.push_back({Kind::write, block, 1, disk::Content::meta(tree), false, "meta",
                                 "W(meta) the replayed fs tree of transaction " + std::to_string(transid) +
                                     " at block " + std::to_string(block) +
                                     " (btrfs_write_and_wait_transaction)"});
    recovery.requests.push_back(
        {Kind::flush, 0, 0, {}, false, "flush", "FLUSH (write_all_supers: barrier_all_devices)"});
    recovery.requests.push_back({Kind::write, 0, 1, disk::Content::meta(super), true, "super",
                                 "W(super, FUA) superblock of transaction " + std::to_string(transid) +
                                     " naming the new root and no log tree"});
    return recovery;
}

auto Btrfs::mount(const disk::Image& image, LogReplay* replay) const -> RecoveredState {
    RecoveredState state;
    state.files.resize(file_names_.size());
    state.device_blocks = device_.block_count();
    state.metadata_end = meta_area_end_;
    const Superblock* super =
        meta_objects_.read_superblock<Superblock>(image, file_names_, block_size_, state,
                                                  "open_ctree: btrfs_check_super_csum");
    state.data_checksums = true;  // btrfs_check_data_csum on every read (no nodatasum in the model)
    if (super == nullptr) return state;
    std::string error;
    bool checksum = false;
    const FsTree* root = read_meta<FsTree>(image, super->root_block, super->root_object,
                                           meta_objects_, file_names_, block_size_, error, checksum);
    if (root == nullptr) {
        refuse_or_fail(state, super->root_block, checksum, "fs tree root: " + error);
        return state;
    }
    FsTree tree = *root;
    // Story lines come only from what was read from the image (the
    // superblock, the trees it names), never from in-memory state a crash loses.
    state.notes.push_back("mount: superblock of transaction " + std::to_string(super->generation) +
                          (super->has_log ? ", names a log tree" : ", no log tree") +
                          ": what any later transaction changed survives only through the log");
    if (super->has_log) {
        const LogTree* log = read_meta<LogTree>(image, super->log_block, super->log_object,
                                                meta_objects_, file_names_, block_size_, error, checksum);
        if (log == nullptr) {
            // btrfs_recover_log_trees fails: open_ctree refuses the mount.
            refuse_or_fail(state, super->log_block, checksum, "log tree root: " + error);
            return state;
        }
        for (const auto& [file, head] : log->inodes) replay_log_inode(file, *head, tree, state);
    }
    for (const auto& [file, items] : tree.inodes) read_file(image, file, items, state);
    check_consistency(tree, state);
    state.mounted = true;
    if (replay != nullptr && super->has_log) {
        replay->replayed = true;
        replay->super = *super;
        replay->tree = std::move(tree);
    }
    return state;
}

void Btrfs::replay_log_inode(std::uint32_t file, const LogLayer& head, FsTree& tree,
                             RecoveredState& state) const {
    // replay_one_buffer: the inode item (size) first; items past the logged
    // size go; logged file extent items replace whatever they overlap, the
    // oldest fsync's first.
    InodeItems& items = tree.inodes[file];
    const std::uint64_t size_bytes = head.items.size_bytes;
    items.size_bytes = size_bytes;
    const std::uint64_t size_blocks = (size_bytes + block_size_ - 1) / block_size_;
    items.extents.erase(size_blocks, whole_file_end);
    std::vector<const InodeItems*> layers;
    for (const LogLayer* layer = &head; layer != nullptr; layer = layer->below.get()) {
        layers.push_back(&layer->items);
    }
    std::uint64_t count = 0;
    for (auto layer = layers.rbegin(); layer != layers.rend(); ++layer) {
        (*layer)->extents.for_each([&](std::uint64_t start, std::uint64_t end, const FileExtentItem& item) {
            items.extents.assign(start, end, item);
            count++;
        });
    }
    state.notes.push_back("log replay: inode " + file_names_[file] + " i_size " +
                          std::to_string(size_bytes) + ", " + std::to_string(count) +
                          " file extent item(s) replayed");
}

void Btrfs::read_file(const disk::Image& image, std::uint32_t file, const InodeItems& items,
                      RecoveredState& state) const {
    RecoveredFile& recovered = state.files[file];
    recovered.exists = true;
    recovered.size_bytes = items.size_bytes;
    const std::uint64_t size_blocks = (items.size_bytes + block_size_ - 1) / block_size_;
    items.extents.for_each([&](std::uint64_t start, std::uint64_t end, const FileExtentItem& item) {
        recovered.extents.push_back({start, item.disk_block, end - start, false});
    });
    items.extents.for_each(0, size_blocks,
                           [&](std::uint64_t start, std::uint64_t end, const FileExtentItem& item) {
                               recovered.read_mapped(image, start, item.disk_block, end - start);
                           });
}

void Btrfs::check_consistency(const FsTree& tree, RecoveredState& state) const {
    // Every data block belongs to at most one file extent item, inside the
    // data area of the device.
    sim::RangeMap<disk::Content> owners;
    for (const auto& [file, items] : tree.inodes) {
        items.extents.for_each([&](std::uint64_t start, std::uint64_t end, const FileExtentItem& item) {
            const std::uint64_t disk_end = item.disk_block + (end - start);
            if (item.disk_block < meta_area_end_ || disk_end > device_.block_count()) {
                state.consistency_errors.push_back(
                    "inode " + file_names_[file] + " file extent at block " + std::to_string(start) +
                    " points outside the data area (disk block " + std::to_string(item.disk_block) + ")");
                return;
            }
            bool shared = false;
            owners.for_each(item.disk_block, disk_end, [&](auto, auto, const auto&) { shared = true; });
            if (shared) {
                state.consistency_errors.push_back("disk blocks " + std::to_string(item.disk_block) +
                                                   ".. are referenced by two file extent items");
            }
            owners.assign(item.disk_block, disk_end, disk::Content::data(file, start, 0));
        });
    }
}

}  // namespace model::btrfs
