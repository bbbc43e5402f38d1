#include "checkers/oracle.hpp"

#include <algorithm>
#include <utility>

#include "model/key_words.hpp"
#include "sim/assert.hpp"

namespace checkers {

void Oracle::end_write(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                       std::uint64_t version, std::uint64_t size_bytes) {
    revision_++;
    SIM_ASSERT(file < files_.size());
    files_[file].contents.assign(start, end, model::disk::Content::data(file, start, version));
    if (size_bytes > files_[file].size_bytes) files_[file].size_bytes = size_bytes;
}

auto Oracle::begin_zero(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> std::uint64_t {
    revision_++;
    SIM_ASSERT(file < files_.size());
    const std::uint64_t version = ++last_version_;
    if (start < end) {
        model::disk::Content zeros = model::disk::Content::zeros();
        zeros.version = version;
        files_[file].zeroed.assign(start, end, zeros);
    }
    return version;
}

void Oracle::end_zero(std::uint32_t file, std::uint64_t start, std::uint64_t end, std::uint64_t version,
                      std::uint64_t size_bytes) {
    revision_++;
    SIM_ASSERT(file < files_.size());
    if (start < end) {
        model::disk::Content zeros = model::disk::Content::zeros();
        zeros.version = version;
        files_[file].contents.assign(start, end, zeros);
    }
    if (size_bytes > files_[file].size_bytes) files_[file].size_bytes = size_bytes;
}

auto Oracle::zeroed_version(std::uint32_t file, std::uint64_t block) const -> std::uint64_t {
    const auto found = files_[file].zeroed.find(block);
    return found ? found->version : 0;
}

auto Oracle::begin_size(std::uint32_t file, bool sets, std::uint64_t size_bytes) -> std::size_t {
    revision_++;
    SIM_ASSERT(file < files_.size());
    files_[file].size_changes.push_back({sets, size_bytes, ++sequence_, 0});
    return files_[file].size_changes.size() - 1;
}

void Oracle::end_size(std::uint32_t file, std::size_t id) {
    revision_++;
    SIM_ASSERT(file < files_.size());
    SIM_ASSERT(id < files_[file].size_changes.size());
    SizeChange& change = files_[file].size_changes[id];
    SIM_ASSERT(change.ended == 0);
    change.ended = ++sequence_;
    FileRecord& record = files_[file];
    record.size_bytes = change.sets ? change.size_bytes : std::max(record.size_bytes, change.size_bytes);
}

void Oracle::end_size(std::uint32_t file, std::size_t id, std::uint64_t size_bytes) {
    SIM_ASSERT(file < files_.size());
    SIM_ASSERT(id < files_[file].size_changes.size());
    SizeChange& change = files_[file].size_changes[id];
    SIM_ASSERT(!change.sets && size_bytes <= change.size_bytes);
    change.size_bytes = size_bytes;
    end_size(file, id);
}

namespace {
/// Blocks past any file: the end of a truncate's zeroed range.
constexpr std::uint64_t blocks_end = std::uint64_t{1} << 52;
}  // namespace

auto Oracle::begin_truncate(std::uint32_t file, std::uint64_t size_bytes, std::uint32_t block_size)
    -> std::uint64_t {
    revision_++;
    return begin_zero(file, (size_bytes + block_size - 1) / block_size, blocks_end);
}

void Oracle::end_truncate(std::uint32_t file, std::uint64_t size_bytes, std::uint32_t block_size) {
    revision_++;
    SIM_ASSERT(file < files_.size());
    files_[file].contents.erase((size_bytes + block_size - 1) / block_size, blocks_end);
}

// The rule for sizes, free of false alarms for both models:
//
// The recovered size is the size at some point q of the file's size history
// at or after the fsync's snapshot p (the kernel persists i_size at fsync,
// and later changes may or may not reach the disk), except that a size
// raised by a write may reach the disk part way (xfs raises di_size per
// ioend; btrfs disk_i_size per ordered extent). So: let X be the last truncate
// that took effect before q (X0, "file created empty", if none). Then the
// size at q lies in [low_X, high_X], where
//   high_X = max(X's size, every raise that had not returned before X began)
//            (a raise that returned before X began took effect before X);
//   low_X  = max(X's size, every raise that began after X returned and
//            returned before the fsync began) (they took effect after X and
//            before p, and the fsync promised them).
// X may be any truncate except one surely overridden before p: a truncate Y
// that began after X returned and returned before the fsync began. A size
// change that never returned (still running, or failed) may or may not have
// taken effect, at any time after it began. The legitimate sizes are the
// union over candidate X of [low_X, high_X]. Without truncates this is
// [size at fsync start, largest end of any raise], the old lower bound plus
// an upper bound.
//
// One exception to low_X: a truncate that runs while the fsync runs (began
// before the fsync returned, had not returned when it began) may cut i_size
// before the fsync's writeback completes; xfs_new_eof then caps the ioend's
// di_size update at the cut i_size, and until the truncate's own
// transaction commits the disk keeps an older di_size (xfs_iomap_write_unwritten
// and xfs_setfilesize, v5.7). So with such a truncate the raises promise no
// floor: low_X = X's size.
auto Oracle::legitimate_sizes(const Promise& promise) const -> std::vector<SizeRange> {
    const std::vector<SizeChange>& changes = files_[promise.file].size_changes;
    constexpr std::uint64_t never = ~std::uint64_t{0};
    auto returned_before_fsync = [&](const SizeChange& change) {
        return change.ended != 0 && change.ended < promise.began_sequence;
    };
    std::vector<SizeChange> truncates = {{true, 0, 0, 0}};
    truncates.front().ended = 0;  // X0: ended at sequence 0, before everything
    for (const SizeChange& change : changes) {
        if (change.sets) truncates.push_back(change);
    }
    const std::uint64_t fsync_returned = promise.returned ? promise.returned_sequence : never;
    const bool racing_truncate = std::any_of(changes.begin(), changes.end(), [&](const SizeChange& y) {
        return y.sets && y.began < fsync_returned && !returned_before_fsync(y);
    });
    std::vector<SizeRange> ranges;
    for (std::size_t i = 0; i < truncates.size(); i++) {
        const SizeChange& x = truncates[i];
        const std::uint64_t x_ended = i == 0 ? 0 : (x.ended == 0 ? never : x.ended);
        const bool overridden = std::any_of(changes.begin(), changes.end(), [&](const SizeChange& y) {
            return y.sets && returned_before_fsync(y) && y.began > x_ended;
        });
        if (overridden) continue;
        SizeRange range{x.size_bytes, x.size_bytes};
        for (const SizeChange& raise : changes) {
            if (raise.sets) continue;
            const bool before_x = raise.ended != 0 && raise.ended < x.began;
            if (!before_x) range.high = std::max(range.high, raise.size_bytes);
            // A raise that began before a reported writeback error may be lost
            // with it (its pages may have been in the failed writeback, even
            // when the write returned after the report).
            const bool after_error = raise.began > promise.error_sequence;
            if (!racing_truncate && returned_before_fsync(raise) && raise.began > x_ended && after_error) {
                range.low = std::max(range.low, raise.size_bytes);
            }
        }
        ranges.push_back(range);
    }
    return ranges;
}

auto Oracle::begin_fsync(std::uint32_t file, std::uint64_t step, std::string what) -> std::size_t {
    revision_++;
    SIM_ASSERT(file < files_.size());
    Promise promise{file, files_[file].size_bytes, files_[file].contents, step, 0, false,
                    std::move(what), ++sequence_};
    const FileRecord& record = files_[file];
    if (record.reported_sequence != 0) {
        // After a reported writeback error nothing written before it is promised.
        std::vector<std::pair<std::uint64_t, std::uint64_t>> lost;
        promise.contents.for_each(
            [&](std::uint64_t start, std::uint64_t end, const model::disk::Content& content) {
                if (content.version <= record.reported_version) lost.emplace_back(start, end);
            });
        for (auto [start, end] : lost) promise.contents.erase(start, end);
        promise.error_sequence = record.reported_sequence;
    }
    promises_.push_back(std::move(promise));
    return promises_.size() - 1;
}

void Oracle::error_reported(std::uint32_t file) {
    revision_++;
    SIM_ASSERT(file < files_.size());
    errors_reported_++;
    files_[file].reported_version = last_version_;
    files_[file].reported_sequence = ++sequence_;
}

void Oracle::end_fsync(std::size_t id, std::uint64_t step) {
    revision_++;
    SIM_ASSERT(id < promises_.size());
    SIM_ASSERT(!promises_[id].returned);
    promises_[id].returned = true;
    promises_[id].returned_step = step;
    promises_[id].returned_sequence = ++sequence_;
    epoch_++;
}

namespace {

void encode_contents(std::vector<std::uint64_t>& out, const sim::RangeMap<model::disk::Content>& map) {
    model::encode_range_map(out, map, [&](const model::disk::Content& c) { model::encode_content(out, c); });
}

}  // namespace

// Left out: revision_ (a per-run counter; the words are what it stands for)
// and, of each Promise, started_step, returned_step, what and size_bytes:
// fsync_durability reads them only to word a violation (its where() and the
// Violation's offset), never to decide one or its at_stake, and no other
// checker reads them; a memoized verdict is always one without a violation.
// The sequence numbers are encoded as the outcomes of the comparisons made of
// them (encode_order), not as numbers.
void Oracle::encode(std::vector<std::uint64_t>& out) const {
    out.insert(out.end(), {last_version_, epoch_, errors_reported_, files_.size()});
    for (const FileRecord& file : files_) {
        out.insert(out.end(), {file.size_bytes, std::uint64_t{file.removed}, file.reported_version});
        encode_contents(out, file.contents);
        encode_contents(out, file.zeroed);
        out.push_back(file.size_changes.size());
        for (const SizeChange& change : file.size_changes) {
            out.insert(out.end(), {std::uint64_t{change.sets}, change.size_bytes});
        }
    }
    out.push_back(promises_.size());
    for (const Promise& promise : promises_) {
        out.insert(out.end(), {promise.file, std::uint64_t{promise.returned}});
        encode_contents(out, promise.contents);
    }
    encode_order(out);
}

// Every comparison of sequence numbers the oracle makes, now or later, is one
// of these (legitimate_sizes, begin_fsync): whether a size change returned
// before another began or before an fsync began, whether it began before an
// fsync returned, after the fsync's last reported error, after the file's.
// A number taken later exceeds every number held now, so a comparison with a
// later one is decided by which of the two has been taken; two oracles whose
// held numbers compare alike judge alike from here on, in whichever order
// the operations that took them interleaved (an fsync that began before or
// after a write past EOF that has not returned: the same promise).
void Oracle::encode_order(std::vector<std::uint64_t>& out) const {
    constexpr std::uint64_t never = ~std::uint64_t{0};
    const auto returned_before = [](const SizeChange& change, std::uint64_t sequence) {
        return change.ended != 0 && change.ended < sequence;
    };
    std::uint64_t bits = 0;
    std::uint64_t count = 0;
    const auto add = [&](bool bit) {
        bits = (bits << 1) | (bit ? 1 : 0);
        if (++count % 64 == 0) out.push_back(std::exchange(bits, 0));
    };
    for (const FileRecord& file : files_) {
        for (const SizeChange& change : file.size_changes) {
            add(change.ended != 0);
            add(change.began > file.reported_sequence);
            for (const SizeChange& other : file.size_changes) add(returned_before(change, other.began));
        }
    }
    for (const Promise& promise : promises_) {
        const std::uint64_t fsync_returned = promise.returned ? promise.returned_sequence : never;
        for (const SizeChange& change : files_[promise.file].size_changes) {
            add(returned_before(change, promise.began_sequence));
            add(change.began < fsync_returned);
            add(change.began > promise.error_sequence);
        }
    }
    out.push_back(bits);
    out.push_back(count);
}

}  // namespace checkers
