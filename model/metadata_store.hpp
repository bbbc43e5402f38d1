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
#include <unordered_map>
#include <variant>
#include <vector>

#include "model/disk/block_device.hpp"
#include "model/filesystem.hpp"
#include "model/key_words.hpp"
#include "sim/assert.hpp"

namespace model {

/// The mount fails: `error` is the reason, also a broken metadata invariant.
inline void fail_mount(RecoveredState& state, std::string error) {
    state.mount_error = std::move(error);
    state.consistency_errors.push_back(state.mount_error);
}

/// The mount refuses a block whose checksum fails (a device fault
/// detected): an error the user sees, not a broken invariant.
inline void refuse_mount(RecoveredState& state, std::uint64_t block, std::string error) {
    state.mount_error = std::move(error);
    state.checksum_failed.push_back(block);
}

// --- Canonical ids: the runner's verdict memo across schedules ---
//
// An object id names an object only within one run: after a schedule's
// branch point the same id may name another object. The memo of crash-state
// verdicts shared by the runs of one Simulation (runner.cpp, VerdictMemo)
// therefore keys a metadata block by the CONTENT of the object it names: each
// object type has an encode_object() that appends every member that takes
// part in what the object is (a model's recovery may read any of them) as
// words, and an object_references() for members that are themselves object
// ids (btrfs's Superblock names its trees by id), which the key encodes by
// the pattern of ids, not by their values. Two objects with the same words
// are the same object; the words are the interned key, so equal canonical
// ids are never a hash's guess.

/// Contents interned to canonical ids, shared by a Simulation's prototype and
/// every clone of it (MetadataStore copies share it). Lookups only: nothing
/// iterates it. Bounded: past `words_max` words of keys it interns no more
/// (intern() returns none), and a crash state naming such an object is not
/// memoized (judged as usual).
class ContentTable {
public:
    static constexpr std::uint64_t none = ~std::uint64_t{0};
    static constexpr std::uint64_t words_max = std::uint64_t{16} << 20;  // 128 MiB of keys

    auto intern(KeyWords words) -> std::uint64_t {
        if (const auto it = ids_.find(words); it != ids_.end()) return it->second;
        if (words_ + words.size() > words_max) return none;
        words_ += words.size();
        const std::uint64_t id = ids_.size();
        ids_.emplace(std::move(words), id);
        return id;
    }
    /// intern(), copying `words` only when they are new.
    auto intern_copy(const KeyWords& words) -> std::uint64_t {
        if (const auto it = ids_.find(words); it != ids_.end()) return it->second;
        return intern(words);
    }
    [[nodiscard]] auto size() const -> std::size_t { return ids_.size(); }

private:
    std::unordered_map<KeyWords, std::uint64_t, KeyWordsHash> ids_;
    std::uint64_t words_ = 0;
};

/// What the runner's cross-run memo asks of a model's metadata objects
/// (FileSystem::metadata_index).
class MetadataIndex {
public:
    virtual ~MetadataIndex() = default;
    /// The canonical id of object `id`'s content (equal content: equal id),
    /// ContentTable::none when `id` names no object or the table is full.
    [[nodiscard]] virtual auto canonical(std::uint64_t id) const -> std::uint64_t = 0;
    /// The object ids object `id` holds, in member order.
    virtual void references(std::uint64_t id, std::vector<std::uint64_t>& out) const = 0;

protected:
    MetadataIndex() = default;
    MetadataIndex(const MetadataIndex&) = default;
    auto operator=(const MetadataIndex&) -> MetadataIndex& = default;
};

template <typename Object>  // a std::variant of the model's metadata objects
class MetadataStore final : public MetadataIndex {
public:
    /// Keeps `object` and returns its id, the version of its Content::meta tag.
    auto store(Object object) -> std::uint64_t {
        objects_.push_back(std::make_shared<const Slot>(std::move(object)));
        return objects_.size() - 1;
    }

    /// Computed once per object, on first use (clones share the slot, so
    /// the prototype's objects are encoded once per Simulation).
    [[nodiscard]] auto canonical(std::uint64_t id) const -> std::uint64_t override {
        if (id >= objects_.size()) return ContentTable::none;
        const Slot& slot = *objects_[id];
        if (slot.canonical == unknown) {
            KeyWords words{slot.object.index()};
            std::visit([&](const auto& object) { encode_object(words, object); }, slot.object);
            slot.canonical = table_->intern(std::move(words));
        }
        return slot.canonical;
    }
    void references(std::uint64_t id, std::vector<std::uint64_t>& out) const override {
        SIM_ASSERT(id < objects_.size());
        std::visit([&](const auto& object) { object_references(object, out); }, objects_[id]->object);
    }

    /// The object of type T that a metadata block read from the image holds,
    /// or nullptr if the block holds something else.
    template <typename T>
    [[nodiscard]] auto find(const disk::Content& content) const -> const T* {
        if (content.kind != disk::ContentKind::meta || content.offset != 0) return nullptr;
        SIM_ASSERT(content.version < objects_.size());
        return std::get_if<T>(&objects_[content.version]->object);
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
            // A latent sector error: the superblock read returns
            // EIO and the mount fails with it (btrfs_read_dev_super;
            // xfs_readsb -> xfs_buf_read_uncached). No mirror copy is modelled.
            refuse_mount(state, 0,
                         "the read of the superblock at block 0 fails with EIO, a latent sector error (" +
                             std::string(verifier) + "): the mount fails");
            return nullptr;
        }
        const disk::Content home = *read;
        if (home.misdirected) {
            // A self-describing block written for another place:
            // btrfs_read_dev_one_super refuses a superblock whose bytenr is
            // not its own (the only model that declares self-describing
            // blocks, disk::SelfDescribing).
            refuse_mount(state, 0,
                         "no superblock at block 0 (" + std::string(verifier) + "): its header names block " +
                             std::to_string(home.home) + ", it holds " +
                             home.describe(file_names, block_size));
            return nullptr;
        }
        if (home.torn()) {
            refuse_mount(state, 0, "superblock checksum mismatch at block 0 (" + std::string(verifier) +
                                       "): it holds " + home.describe(file_names, block_size));
            return nullptr;
        }
        if (home.kind != disk::ContentKind::meta || home.offset != 0 ||
            home.version >= objects_.size() ||
            !std::holds_alternative<Super>(objects_[home.version]->object)) {
            fail_mount(state, "no valid superblock at block 0: it holds " +
                                  home.describe(file_names, block_size));
            return nullptr;
        }
        return &std::get<Super>(objects_[home.version]->object);
    }

    /// Object `id`, which a caller has checked exists.
    [[nodiscard]] auto at(std::uint64_t id) const -> const Object& {
        SIM_ASSERT(id < objects_.size());
        return objects_[id]->object;
    }
    [[nodiscard]] auto size() const -> std::uint64_t { return objects_.size(); }
    /// Every object by its canonical content id, in id order
    /// (sim/fingerprint.hpp); false when the content table is full.
    auto hash_into(sim::StateHash& out) const -> bool {
        out.add(objects_.size());
        for (std::uint64_t id = 0; id < objects_.size(); id++) {
            const std::uint64_t content = canonical(id);
            if (content == ContentTable::none) return false;
            out.add(content);
        }
        return true;
    }
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
    static constexpr std::uint64_t unknown = ContentTable::none - 1;
    /// An object and, once asked, its canonical id (ContentTable::none when
    /// the table was full). Single-threaded: a Simulation's runs share it,
    /// and each job of a campaign has its own Simulation.
    struct Slot {
        explicit Slot(Object in) : object(std::move(in)) {}
        Object object;
        mutable std::uint64_t canonical = unknown;
    };
    std::vector<std::shared_ptr<const Slot>> objects_;
    std::shared_ptr<ContentTable> table_ = std::make_shared<ContentTable>();
    /// size() at the first mark_recovery() since the last forget_recovery().
    std::optional<std::uint64_t> recovery_mark_;
};

}  // namespace model
