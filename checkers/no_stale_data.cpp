// no_stale_data: every block readable in a file after recovery holds zeros
// (a hole or an unwritten extent) or content this workload wrote to that same
// file and offset; never another file's data, metadata, or what an earlier
// owner left on the device. Not checked: whether the content is the newest
// (that is fsync_durability's promise, and only for fsynced data).
#include "checkers/checker.hpp"

namespace checkers {
namespace {

class NoStaleData final : public Checker {
public:
    [[nodiscard]] auto name() const -> std::string_view override { return "no_stale_data"; }

    void check(const Oracle& oracle, const model::RecoveredState& state, const CheckContext& context,
               std::vector<Violation>& out) const override {
        if (!state.mounted) return;
        for (std::uint32_t file = 0; file < state.files.size(); file++) {
            const model::RecoveredFile& recovered = state.files[file];
            if (!recovered.exists) continue;
            const std::uint64_t size_blocks =
                (recovered.size_bytes + context.block_size - 1) / context.block_size;
            bool failed = false;
            recovered.blocks.for_each(0, size_blocks, [&](std::uint64_t start, std::uint64_t, const model::disk::Content& found) {
                if (failed || legitimate(file, start, found, oracle)) return;
                const std::string& name = context.file_names[file];
                const std::string found_text = found.describe(context.file_names, context.block_size);
                out.push_back({"no_stale_data", name, start * context.block_size,
                               "zeros or data this workload wrote to " + name + " at " +
                                   std::to_string(start * context.block_size),
                               found_text,
                               "file " + name + " offset " + std::to_string(start * context.block_size) +
                                   " exposes " + found_text});
                failed = true;
            });
            if (failed) return;
        }
    }

private:
    static auto legitimate(std::uint32_t file, std::uint64_t block, const model::disk::Content& found,
                           const Oracle& oracle) -> bool {
        if (found.kind == model::disk::ContentKind::zeros) return true;
        return found.kind == model::disk::ContentKind::data && found.file == file &&
               found.offset == block && found.version >= 1 && found.version <= oracle.last_version();
    }
};

}  // namespace

auto make_no_stale_data() -> std::unique_ptr<Checker> { return std::make_unique<NoStaleData>(); }

}  // namespace checkers
