// fsync_durability: for every fsync that returned, every block written by
// writes that completed before that fsync began must, after recovery, hold
// that content or newer content written to the same place of the same file
// (zeros from a hole punch, zero range or truncate started later are newer);
// and the file's size must be one it could legitimately have: a size it had
// at or after the fsync's snapshot, given that later size changes (truncate,
// fallocate, writes past EOF) may or may not have persisted
// (Oracle::legitimate_sizes states the rule).
// Not checked: data written after the fsync began (nothing was promised), and
// files removed after the fsync (no scenario removes files yet).
#include "checkers/checker.hpp"

#include <algorithm>
#include <optional>

namespace checkers {
namespace {

/// The promised content, or what a later operation put there: a newer write
/// of the same file and offset, or zeros from a hole punch or zero range
/// started after the promised content was written.
auto newer_or_same(const model::disk::Content& expected, const model::disk::Content& found,
                   std::uint32_t file, std::uint64_t block, const Oracle& oracle) -> bool {
    using model::disk::ContentKind;
    if (found.kind == ContentKind::zeros) {
        return expected.kind == ContentKind::zeros || oracle.zeroed_version(file, block) > expected.version;
    }
    return found.kind == ContentKind::data && found.file == file && found.offset == block &&
           found.version >= expected.version;
}

/// The sizes a file may legitimately have, as a violation states them.
auto sizes_text(const std::vector<SizeRange>& sizes) -> std::string {
    std::string text;
    for (const SizeRange& range : sizes) {
        text += (text.empty() ? "size " : " or ") +
                (range.low == range.high
                     ? std::to_string(range.low)
                     : "in [" + std::to_string(range.low) + ", " + std::to_string(range.high) + "]");
    }
    return text;
}

/// A block that holds neither the promised content nor newer content, and
/// what it holds.
struct StaleBlock {
    std::uint64_t block;
    model::disk::Content found;
};

/// The first stale block of the promised piece [start, end) of file `index`
/// (`expected_start` is the promised content at `start`).
auto stale_block(const model::RecoveredFile& file, std::uint32_t index, std::uint64_t start,
                 std::uint64_t end, const model::disk::Content& expected_start, const Oracle& oracle)
    -> std::optional<StaleBlock> {
    std::optional<StaleBlock> stale;
    std::uint64_t cursor = start;
    // A hole reads zeros; each piece is uniform, so its first block decides
    // (a zeroing operation's range can split a piece: check per block then).
    auto check_piece = [&](std::uint64_t s, std::uint64_t e, const model::disk::Content& found) {
        for (std::uint64_t block = s; block < e && !stale; block++) {
            const model::disk::Content here =
                found.kind == model::disk::ContentKind::zeros ? found : found.shifted(block - s);
            if (!newer_or_same(expected_start.shifted(block - start), here, index, block, oracle)) {
                stale = StaleBlock{block, here};
            }
            if (found.kind != model::disk::ContentKind::zeros) break;  // data pieces are uniform
        }
    };
    file.blocks.for_each(start, end,
                         [&](std::uint64_t s, std::uint64_t e, const model::disk::Content& found) {
                             if (stale) return;
                             if (s > cursor) check_piece(cursor, s, model::disk::Content::zeros());
                             if (stale) return;
                             cursor = e;
                             check_piece(s, e, found);
                         });
    if (!stale && cursor < end) check_piece(cursor, end, model::disk::Content::zeros());
    return stale;
}

class FsyncDurability final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "fsync_durability"; }

    void check(const Oracle& oracle, const model::RecoveredState& state, const CheckContext& context,
               std::vector<Violation>& out) const override {
        if (!state.mounted) return;  // the mount checker reports a failed mount
        for (const Promise& promise : oracle.promises()) {
            if (!promise.returned) continue;
            if (check_promise(promise, state, context, oracle, out)) return;
        }
    }

    /// At stake: the image mounted and at least one fsync or sync returned,
    /// so some acknowledged promise binds this crash state.
    [[nodiscard]] auto at_stake(const Oracle& oracle, const model::RecoveredState& state,
                                const CheckContext&) const -> bool override {
        if (!state.mounted) return false;
        for (const Promise& promise : oracle.promises()) {
            if (promise.returned) return true;
        }
        return false;
    }

private:
    static auto check_promise(const Promise& promise, const model::RecoveredState& state,
                              const CheckContext& context, const Oracle& oracle,
                              std::vector<Violation>& out) -> bool {
        const std::string& file_name = context.file_names[promise.file];
        const model::RecoveredFile& file = state.files[promise.file];
        // Formatted only for a violation: this runs on every promise of every crash state.
        const auto where = [&] {
            return " (promised by " + promise.what + ", returned at step " +
                   std::to_string(promise.returned_step) + ")";
        };
        // A removed file is not lost data: once its unlink began, recovery
        // may find it gone (the unlink durable) or whole.
        if (!file.exists && oracle.removed(promise.file)) return false;
        if (!file.exists) {
            out.push_back({"fsync_durability", file_name, 0, "the file", "no file",
                           "file " + file_name + " is missing after recovery" + where()});
            return true;
        }
        const std::vector<SizeRange> sizes = oracle.legitimate_sizes(promise);
        const bool size_ok = std::any_of(sizes.begin(), sizes.end(), [&](const SizeRange& range) {
            return range.low <= file.size_bytes && file.size_bytes <= range.high;
        });
        if (!size_ok) {
            const std::string expected = sizes_text(sizes);
            out.push_back({"fsync_durability", file_name, promise.size_bytes, expected,
                           "size " + std::to_string(file.size_bytes),
                           "file " + file_name + " size " + std::to_string(file.size_bytes) +
                               ", expected " + expected + " (size " +
                               std::to_string(promise.size_bytes) + " when the fsync began)" +
                               where()});
            return true;
        }
        bool failed = false;
        promise.contents.for_each([&](std::uint64_t start, std::uint64_t end,
                                      const model::disk::Content& expected_start) {
            if (failed) return;
            const std::optional<StaleBlock> stale =
                stale_block(file, promise.file, start, end, expected_start, oracle);
            if (!stale) return;
            const std::uint64_t offset = stale->block * context.block_size;
            const model::disk::Content expected = expected_start.shifted(stale->block - start);
            const std::string expected_text =
                expected.describe(context.file_names, context.block_size) + " or newer";
            const std::string found_text = stale->found.describe(context.file_names, context.block_size);
            out.push_back({"fsync_durability", file_name, offset, expected_text, found_text,
                           "file " + file_name + " offset " + std::to_string(offset) + ": expected " +
                               expected_text + ", found " + found_text + where()});
            failed = true;
        });
        return failed;
    }
};

}  // namespace

auto make_fsync_durability() -> std::unique_ptr<Checker> { return std::make_unique<FsyncDurability>(); }

}  // namespace checkers
