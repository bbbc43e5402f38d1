// no_stale_data: every block readable in a file after recovery holds zeros
// (a hole or an unwritten extent) or content this workload wrote to that same
// file and offset; never another file's data, metadata, or what an earlier
// owner left on the device. The violation names the first such block and
// lists every range of offsets, in every file, that reads such content (the
// way generic/042 hexdumps the whole file). Not checked: whether the content
// is the newest (that is fsync_durability's promise, and only for fsynced
// data).
#include <optional>

#include "checkers/checker.hpp"

namespace checkers {
namespace {

using model::disk::Content;
using model::disk::ContentKind;

class NoStaleData final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "no_stale_data"; }

    void check(const Oracle& oracle, const model::RecoveredState& state,
               const CheckContext& context, std::vector<Violation>& out) const override {
        if (!state.mounted) return;
        std::optional<Violation> first;
        std::string ranges;
        for (std::uint32_t file = 0; file < state.files.size(); file++) {
            const model::RecoveredFile& recovered = state.files[file];
            if (!recovered.exists) continue;
            const std::string& name = context.file_names[file];
            const std::uint64_t size_blocks =
                (recovered.size_bytes + context.block_size - 1) / context.block_size;
            // Runs of offending blocks, adjacent pieces merged. A piece is
            // legitimate as a whole or not at all: shifting a content tag
            // moves its offset along with the file block.
            std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
            auto visit = [&](std::uint64_t start, std::uint64_t end, const Content& found) {
                if (legitimate(file, start, found, oracle)) return;
                if (!first) first = violation(name, start, found, context);
                if (!runs.empty() && runs.back().second == start) {
                    runs.back().second = end;
                } else {
                    runs.emplace_back(start, end);
                }
            };
            recovered.blocks.for_each(0, size_blocks, visit);
            for (auto [start, end] : runs) {
                ranges += (ranges.empty() ? "" : ", ") + name + " [" +
                          std::to_string(start * context.block_size) + ", " +
                          std::to_string(end * context.block_size) + ")";
            }
        }
        if (!first) return;
        first->message += "; offsets that read what this workload never wrote there: " + ranges;
        out.push_back(std::move(*first));
    }

    /// At stake: the image mounted and some file has, within its size, a
    /// block that reads anything but zeros or that an extent maps to a
    /// device block (whose earlier contents a wrong extent state would
    /// expose). A file of holes only has nothing at stake.
    [[nodiscard]] auto at_stake(const Oracle&, const model::RecoveredState& state,
                                const CheckContext& context) const -> bool override {
        if (!state.mounted) return false;
        for (const model::RecoveredFile& file : state.files) {
            if (!file.exists) continue;
            const std::uint64_t size_blocks = (file.size_bytes + context.block_size - 1) / context.block_size;
            for (const model::RecoveredExtent& extent : file.extents) {
                if (extent.file_block < size_blocks) return true;
            }
            bool readable = false;
            file.blocks.for_each(0, size_blocks, [&](std::uint64_t, std::uint64_t, const Content& content) {
                readable = readable || content.kind != ContentKind::zeros;
            });
            if (readable) return true;
        }
        return false;
    }

private:
    static auto legitimate(std::uint32_t file, std::uint64_t block, const Content& found,
                           const Oracle& oracle) -> bool {
        if (found.kind == ContentKind::zeros) return true;
        return found.kind == ContentKind::data && found.file == file && found.offset == block &&
               found.version >= 1 && found.version <= oracle.last_version();
    }

    static auto violation(const std::string& name, std::uint64_t block, const Content& found,
                          const CheckContext& context) -> Violation {
        const std::uint64_t offset = block * context.block_size;
        const std::string found_text = found.describe(context.file_names, context.block_size);
        return {"no_stale_data", name, offset,
                "zeros or data this workload wrote to " + name + " at " + std::to_string(offset),
                found_text,
                "file " + name + " offset " + std::to_string(offset) + " exposes " + found_text};
    }
};

}  // namespace

auto make_no_stale_data() -> std::unique_ptr<Checker> { return std::make_unique<NoStaleData>(); }

}  // namespace checkers
