#pragma once
// The verdict memo across schedules: crash states that different
// runs of one Simulation (one scenario and variant) reach with the same image,
// oracle and freeze level are judged once. RunState::memo_key (runner/judge.cpp)
// builds the key; this keeps what judging added. A whole evaluation point (a
// step's crash states, every kept subset) is kept too, keyed by the device
// it crashes (device_key, RunState::point_key): a later point with the same
// key adds its counts without building an image.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/disk/block_device.hpp"
#include "model/metadata_store.hpp"
#include "sim/assert.hpp"

namespace runner {

/// What judging one crash state without a violation added to the outcome.
struct Verdict {
    std::vector<std::uint64_t> judged;  // per checker, RunOutcome::judged
    std::uint64_t recovery_crash_states = 0;
    std::uint64_t id = 0;  // in the order kept (VerdictMemo::keep), never reused
};

/// What judging every crash state of one evaluation point without a
/// violation added (RunState::evaluate_point): the crash states, the sum of
/// their verdicts, and their verdicts' ids in the order judged.
struct PointVerdict {
    std::uint64_t crash_states = 0;
    std::vector<std::uint64_t> judged;  // per checker
    std::uint64_t recovery_crash_states = 0;
    std::vector<std::uint64_t> ids;  // Verdict::id, one per crash state
};

/// Shared by every run of one Simulation (each job of a campaign has its own
/// Simulation, so no lock). Lookups only: nothing iterates the maps, so their
/// order reaches no behaviour. A hit compares the whole key (std::vector's
/// ==), never a hash alone.
class VerdictMemo {
public:
    /// Bound on the keys kept, in words (256 MiB): past it the verdicts are
    /// dropped and the memo fills again (the oracle table keeps its ids,
    /// which cached keys of the runs in progress may hold).
    static constexpr std::uint64_t words_max = std::uint64_t{32} << 20;

    [[nodiscard]] auto find(const model::KeyWords& key) const -> const Verdict* {
        const auto it = verdicts_.find(key);
        return it == verdicts_.end() ? nullptr : &it->second;
    }
    /// Keeps `verdict` under `key`; its id.
    auto keep(model::KeyWords key, Verdict verdict) -> std::uint64_t {
        if (words_ + key.size() > words_max) {
            // A point's verdicts are reused without a look-up: they go too.
            points_.clear();
            point_words_ = 0;
            verdicts_.clear();
            words_ = 0;
            dropped_ = true;
        }
        words_ += key.size();
        verdict.id = kept_++;
        // Only after find() missed: a second entry for one key would count twice.
        const auto [it, added] = verdicts_.emplace(std::move(key), std::move(verdict));
        SIM_ASSERT(added);
        return it->second.id;
    }
    /// The evaluation point judged under `key`, or null. Its verdicts are
    /// all still kept: the points are dropped with them (keep()).
    [[nodiscard]] auto find_point(const model::KeyWords& key) const -> const PointVerdict* {
        const auto it = points_.find(key);
        return it == points_.end() ? nullptr : &it->second;
    }
    /// Keeps `point` under `key` (after find_point missed), within the same
    /// bound in words as the verdicts.
    void keep_point(model::KeyWords key, PointVerdict point) {
        const std::uint64_t words = key.size() + point.ids.size();
        if (point_words_ + words > words_max) {
            points_.clear();
            point_words_ = 0;
        }
        point_words_ += words;
        const bool added = points_.emplace(std::move(key), std::move(point)).second;
        SIM_ASSERT(added);
    }
    /// Marks the verdict `id` as reached by a run a search counted; true
    /// the first time. A run cut short by a stop request and the estimate's
    /// timing runs judge crash states too, and the distinct count a search
    /// reports is of the runs it counted (Simulation::count_reached).
    auto mark_counted(std::uint64_t id) -> bool {
        SIM_ASSERT(id < kept_);  // an id of this memo
        if (id >= counted_.size())
            counted_.resize(std::max<std::uint64_t>(id + 1, 2 * counted_.size()), false);
        if (counted_[id]) return false;
        counted_[id] = true;
        counted_total_++;
        return true;
    }
    /// The crash states marked by mark_counted.
    [[nodiscard]] auto counted() const -> std::uint64_t { return counted_total_; }
    /// The crash states kept (each judged once, without a violation).
    [[nodiscard]] auto size() const -> std::size_t { return verdicts_.size(); }
    /// Whether the bound dropped the verdicts kept before (size() then
    /// counts only those kept since).
    [[nodiscard]] auto dropped() const -> bool { return dropped_; }
    /// Oracle contents (Oracle::encode) to canonical ids.
    model::ContentTable oracles;
    /// Devices at an evaluation point (device_key) to canonical ids.
    model::ContentTable devices;

private:
    std::unordered_map<model::KeyWords, Verdict, model::KeyWordsHash> verdicts_;
    std::unordered_map<model::KeyWords, PointVerdict, model::KeyWordsHash> points_;
    std::uint64_t words_ = 0;
    std::uint64_t point_words_ = 0;
    bool dropped_ = false;
    std::uint64_t kept_ = 0;
    std::vector<bool> counted_;  // by id
    std::uint64_t counted_total_ = 0;
};

/// The object ids an image names, by position (first seen first); reused
/// from one key to the next so that a key allocates nothing once warm.
class KeyObjects {
public:
    void clear() {
        ids_.clear();
        positions_.clear();
    }
    /// The position of `id`, given it if new. A few ids (btrfs: a superblock
    /// and its trees) are searched in order, more through a map.
    auto position(std::uint64_t id) -> std::uint64_t {
        if (ids_.size() <= linear_max) {
            for (std::size_t i = 0; i < ids_.size(); i++) {
                if (ids_[i] == id) return i;
            }
            ids_.push_back(id);
            if (ids_.size() > linear_max) {
                for (std::size_t i = 0; i < ids_.size(); i++) positions_.emplace(ids_[i], i);
            }
            return ids_.size() - 1;
        }
        const auto [it, added] = positions_.emplace(id, ids_.size());
        if (added) ids_.push_back(id);
        return it->second;
    }
    [[nodiscard]] auto size() const -> std::size_t { return ids_.size(); }
    [[nodiscard]] auto operator[](std::size_t i) const -> std::uint64_t { return ids_[i]; }
    std::vector<std::uint64_t> held;  // scratch for MetadataIndex::references

private:
    static constexpr std::size_t linear_max = 16;
    std::vector<std::uint64_t> ids_;
    std::unordered_map<std::uint64_t, std::uint64_t> positions_;  // past linear_max; lookups only
};

/// Appends the object part of a key once `objects` holds the ids its
/// blocks name: per position the object's canonical id and the positions of
/// the ids it holds (which may add positions). False when an object has no
/// canonical id.
inline auto objects_key(const model::MetadataIndex& index, model::KeyWords& key, KeyObjects& objects)
    -> bool {
    for (std::size_t i = 0; i < objects.size(); i++) {  // grows as objects name others
        const std::uint64_t canonical = index.canonical(objects[i]);
        if (canonical == model::ContentTable::none) return false;
        objects.held.clear();
        index.references(objects[i], objects.held);
        key.push_back(canonical);
        key.push_back(objects.held.size());
        for (const std::uint64_t id : objects.held) key.push_back(objects.position(id));
    }
    return true;
}

/// Appends `content` with a metadata object id replaced by its position.
inline void renamed_content(model::disk::Content content, model::KeyWords& key, KeyObjects& objects) {
    if (content.kind == model::disk::ContentKind::meta) content.version = objects.position(content.version);
    model::encode_content(key, content);
}

/// Appends the image part of a memo key (RunState::memo_key says why it is
/// sound): every segment's content but DurableBlock::sequence, a metadata
/// block's object id replaced by its position among the ids the image names
/// (first seen first), then per position the object's canonical id and the
/// positions of the ids it holds. False when an object has no canonical id
/// (the state is then judged, not memoized).
inline auto image_key(const model::disk::Image& image, const model::MetadataIndex& index,
                      model::KeyWords& key, KeyObjects& objects) -> bool {
    objects.clear();
    key.reserve(key.size() + 1 + 9 * image.blocks().segment_count() + 8);
    key.push_back(image.blocks().segment_count());
    image.blocks().for_each(
        [&](std::uint64_t start, std::uint64_t end, const model::disk::DurableBlock& block) {
            model::disk::Content c = block.content;
            if (c.kind == model::disk::ContentKind::meta) c.version = objects.position(c.version);
            key.insert(key.end(), {start, end});
            model::encode_content(key, c);
        });
    return objects_key(index, key, objects);
}

/// Appends the device part of an evaluation point's key: what every crash
/// image of that point is made of (BlockDevice::crash_image), up to
/// renaming the metadata objects as image_key does. The durable segments
/// with their content, and for each the number of pending writes older than
/// it (make_durable lets a kept write replace only an older block; no other
/// use of DurableBlock::sequence reaches a crash image); then the pending
/// writes in order, each with its blocks, content and flags, and its rank
/// among the pending writes by sequence. Equal keys: for every kept subset,
/// images alike up to renaming, so equal image_keys. False as image_key.
inline auto device_key(const model::disk::BlockDevice& device, const model::MetadataIndex& index,
                       model::KeyWords& key, KeyObjects& objects) -> bool {
    objects.clear();
    const std::vector<model::disk::PendingWrite>& pending = device.pending();
    std::uint64_t oldest = ~std::uint64_t{0};
    bool ordered = true;
    for (std::size_t i = 0; i < pending.size(); i++) {
        oldest = std::min(oldest, pending[i].sequence);
        if (i > 0 && pending[i].sequence < pending[i - 1].sequence) ordered = false;
    }
    const auto older_pending = [&](std::uint64_t sequence) -> std::uint64_t {
        if (sequence < oldest) return 0;
        const auto older = [&](const model::disk::PendingWrite& write) { return write.sequence < sequence; };
        return static_cast<std::uint64_t>(std::count_if(pending.begin(), pending.end(), older));
    };
    key.push_back(device.durable().segment_count());
    const auto durable = [&](std::uint64_t start, std::uint64_t end, const model::disk::DurableBlock& block) {
        key.insert(key.end(), {start, end, older_pending(block.sequence)});
        renamed_content(block.content, key, objects);
    };
    device.durable().for_each(durable);
    key.insert(key.end(), {pending.size(), ordered ? 1U : 0U});
    for (const model::disk::PendingWrite& write : pending) {
        key.insert(key.end(),
                   {write.block, write.count, std::uint64_t{write.completed}, std::uint64_t{write.fua}});
        if (!ordered) key.push_back(older_pending(write.sequence));
        renamed_content(write.content, key, objects);
    }
    return objects_key(index, key, objects);
}

}  // namespace runner
