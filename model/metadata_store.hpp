#pragma once
// The metadata objects a model writes to its device, by id. A metadata block
// on the simulated disk holds only a tag, disk::Content::meta(id); the object
// it stands for lives here, immutable once stored, so a crashed image reads
// back exactly what was written and clones share the objects. Both models
// keep their superblock, trees and log records this way; mounting reads the
// superblock at block 0 through read_superblock (btrfs: disk-io.c
// btrfs_read_dev_super; xfs: xfs_mount.c xfs_readsb).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/disk/block_device.hpp"
#include "model/filesystem.hpp"
#include "sim/assert.hpp"

namespace model {

/// The mount fails: `error` is the reason, also a broken metadata invariant.
inline void fail_mount(RecoveredState& state, std::string error) {
    state.mount_error = std::move(error);
    state.consistency_errors.push_back(state.mount_error);
}

/// The mount refuses a block whose checksum fails (a device fault detected,
/// issue 14): an error the user sees, not a broken invariant.
inline void refuse_mount(RecoveredState& state, std::uint64_t block, std::string error) {
    state.mount_error = std::move(error);
    state.checksum_failed.push_back(block);
}

template <typename Object>  // a std::variant of the model's metadata objects
class MetadataStore {
public:
    /// Keeps `object` and returns its id, the version of its Content::meta tag.
    auto store(Object object) -> std::uint64_t {
        objects_.push_back(std::make_shared<const Object>(std::move(object)));
        return objects_.size() - 1;
    }

    /// The object of type T that a metadata block read from the image holds,
    /// or nullptr if the block holds something else.
    template <typename T>
    [[nodiscard]] auto find(const disk::Content& content) const -> const T* {
        if (content.kind != disk::ContentKind::meta || content.offset != 0) return nullptr;
        SIM_ASSERT(content.version < objects_.size());
        return std::get_if<T>(objects_[content.version].get());
    }

    /// Superblock validation at mount: block 0 must hold a whole `Super`
    /// object. Otherwise the mount fails with one message, also counted as a
    /// consistency error.
    template <typename Super>
    [[nodiscard]] auto read_superblock(const disk::Image& image,
                                       const std::vector<std::string>& file_names,
                                       std::uint32_t block_size, RecoveredState& state,
                                       const char* verifier) const -> const Super* {
        const std::optional<disk::Content> read = image.read_checked(0);
        if (!read) {
            // A latent sector error (issue 14): the superblock read returns
            // EIO and the mount fails with it (btrfs_read_dev_super;
            // xfs_readsb -> xfs_buf_read_uncached). No mirror copy is modelled.
            refuse_mount(state, 0, "the read of the superblock at block 0 fails with EIO, a latent sector error (" +
                                       std::string(verifier) + "): the mount fails");
            return nullptr;
        }
        const disk::Content home = *read;
        if (home.misdirected) {
            // A self-describing block written for another place (issue 14):
            // btrfs_read_dev_one_super refuses a superblock whose bytenr is
            // not its own (the only model that declares self-describing
            // blocks, disk::SelfDescribing).
            refuse_mount(state, 0, "no superblock at block 0 (" + std::string(verifier) + "): its header names block " +
                                       std::to_string(home.home) + ", it holds " + home.describe(file_names, block_size));
            return nullptr;
        }
        if (home.torn()) {
            refuse_mount(state, 0, "superblock checksum mismatch at block 0 (" + std::string(verifier) +
                                       "): it holds " + home.describe(file_names, block_size));
            return nullptr;
        }
        if (home.kind != disk::ContentKind::meta || home.offset != 0 ||
            home.version >= objects_.size() ||
            !std::holds_alternative<Super>(*objects_[home.version])) {
            fail_mount(state, "no valid superblock at block 0: it holds " +
                                  home.describe(file_names, block_size));
            return nullptr;
        }
        return &std::get<Super>(*objects_[home.version]);
    }

    /// Object `id`, which a caller has checked exists.
    [[nodiscard]] auto at(std::uint64_t id) const -> const Object& {
        SIM_ASSERT(id < objects_.size());
        return *objects_[id];
    }
    [[nodiscard]] auto size() const -> std::uint64_t { return objects_.size(); }
    /// A mount's recovery is about to store its writes: the first mark since
    /// the last forget_recovery() stays, so nested recoveries (a crash during
    /// recovery) are forgotten together.
    void mark_recovery() {
        if (!recovery_mark_) recovery_mark_ = objects_.size();
    }
    /// Forgets every object stored since mark_recovery() (what a mount kept
    /// for its recovery writes), once nothing reads them
    /// (FileSystem::forget_recovery).
    void forget_recovery() {
        if (!recovery_mark_) return;
        SIM_ASSERT(*recovery_mark_ <= objects_.size());
        objects_.resize(*recovery_mark_);
        recovery_mark_.reset();
    }

private:
    std::vector<std::shared_ptr<const Object>> objects_;
    /// size() at the first mark_recovery() since the last forget_recovery().
    std::optional<std::uint64_t> recovery_mark_;
};

}  // namespace model
