// A toy model, linked into the unit tests only: it shows that a model is its
// folder and one build line (meson.build lists this file among the test
// sources; nothing else names it). Its operations are named as no real model
// names them (touch, pwrite, fdatasync), so a test that runs a fio workload on
// it shows that the loader expands workloads by what operations mean, not by
// their names.
//
// Each file owns a fixed slot of the device; a write goes straight to the
// device's volatile cache, fdatasync flushes the cache unless the knob
// `fdatasync` is `none` (then fsynced data may be lost: fsync_durability).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "model/declare.hpp"
#include "model/filesystem.hpp"
#include "model/registry.hpp"
#include "sim/assert.hpp"

namespace model::toy {
namespace {

enum class Op : OpId { touch, pwrite, fdatasync };

/// Block 0 and an inode block per file (at most this many files), then data.
constexpr std::uint64_t inode_blocks = 64;
constexpr std::uint64_t data_start = 1 + inode_blocks;

/// Test-only: `broken` lets a process-wide counter reach behaviour (every
/// other pwrite of the process writes its inode block again), the kind of
/// defect `--verify-determinism` exists to catch (tests/runner/determinism_test.cpp).
const Knob<bool> determinism_broken{"determinism", {{"kept", false}, {"broken", true}}, "kept",
                                    "test-only: broken lets a process-wide counter reach behaviour"};
std::uint64_t process_wide_pwrites = 0;

const Knob<bool> fdatasync_flush{"fdatasync", {{"flush", true}, {"none", false}}, "flush",
                                 "fdatasync flushes the device cache (flush) or returns at once (none)"};

class Toy final : public FileSystem {
public:
    Toy(bool flush, bool broken, const Geometry& geometry, std::vector<std::string> file_names)
        : flush_(flush),
          broken_(broken),
          block_size_(geometry.block_size),
          files_(file_names.size()),
          device_(geometry.blocks, geometry.device_profile(), geometry.block_size) {
        SIM_ASSERT(files_ <= inode_blocks && geometry.blocks > data_start);
        slot_blocks_ = (geometry.blocks - data_start) / std::max<std::uint64_t>(1, files_);
    }
    [[nodiscard]] auto clone() const -> std::unique_ptr<FileSystem> override { return std::make_unique<Toy>(*this); }
    auto execute(const OpCall& call) -> OpResult override {
        switch (op_of<Op>(call)) {
            case Op::touch:
                device_.write_and_wait(1 + call.file, 1, disk::Content::meta(call.file), false, "toy inode");
                break;
            case Op::pwrite: {
                const std::uint64_t block = call.offset / block_size_;
                const std::uint64_t count = call.length / block_size_;
                SIM_ASSERT(block + count <= slot_blocks_);
                device_.write_and_wait(slot(call.file) + block, count, disk::Content::data(call.file, block, call.version),
                                       false, "toy data");
                writes_++;
                if (broken_ && process_wide_pwrites++ % 2 == 1) {
                    device_.write_and_wait(1 + call.file, 1, disk::Content::meta(call.file), false, "toy inode");
                }
                break;
            }
            case Op::fdatasync:
                if (flush_) device_.flush_and_wait();
                break;
        }
        return OpResult::ok;
    }
    auto device() -> disk::BlockDevice& override { return device_; }
    [[nodiscard]] auto recover(const disk::Image& image) const -> RecoveredState override {
        RecoveredState state;
        state.mounted = true;
        state.device_blocks = device_.block_count();
        state.metadata_end = data_start;
        state.files.resize(files_);
        for (std::uint32_t file = 0; file < files_; file++) {
            RecoveredFile& recovered = state.files[file];
            recovered.exists = image.read(1 + file).kind == disk::ContentKind::meta;
            if (!recovered.exists) continue;
            for (std::uint64_t block = 0; block < slot_blocks_; block++) {
                const disk::Content content = image.read(slot(file) + block);
                if (content.kind != disk::ContentKind::data) continue;
                recovered.blocks.assign(block, block + 1, content);
                recovered.extents.push_back({block, slot(file) + block, 1, false});
                recovered.size_bytes = (block + 1) * block_size_;
            }
        }
        return state;
    }
    [[nodiscard]] auto counters() const -> std::map<std::string, std::uint64_t> override {
        return {{"writes", writes_}, {"disk_flushes", device_.counters().flushes}};
    }

private:
    [[nodiscard]] auto slot(std::uint32_t file) const -> std::uint64_t { return data_start + file * slot_blocks_; }

    bool flush_;
    bool broken_;
    std::uint32_t block_size_;
    std::uint64_t files_;
    std::uint64_t slot_blocks_ = 0;
    disk::BlockDevice device_;
    std::uint64_t writes_ = 0;
};

auto info() -> ModelInfo {
    const FieldInfo file{"file", FieldKind::file, true};
    ModelInfo info;
    info.name = "toy";
    info.about = "a test model: a slot of the device per file, writes through a volatile cache";
    info.knobs = {fdatasync_flush.info(), determinism_broken.info()};
    info.ops = op_table<Op>({
        {Op::touch, {"touch", "create a file", {file}, true}},
        {Op::pwrite,
         {"pwrite", "write the range to the device cache",
          {file, {"offset", FieldKind::offset, true}, {"length", FieldKind::length, true}}, false,
          OracleEffect::write_data}},
        {Op::fdatasync, {"fdatasync", "flush the device cache", {file}, false, OracleEffect::fsync_file}},
    });
    info.counters = {{"writes", "pwrite calls", true}, {"disk_flushes", "cache flushes", true}};
    return info;
}

const ModelRegistrar registrar{{
    info(),
    [](const Config& config, const Geometry& geometry, const std::vector<std::string>& file_names)
        -> std::unique_ptr<FileSystem> {
        return std::make_unique<Toy>(fdatasync_flush.parse(config), determinism_broken.parse(config), geometry,
                                     file_names);
    },
    [](const Geometry& geometry) { return geometry.blocks - data_start; },
}};

}  // namespace
}  // namespace model::toy
