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
//
// The knob `journal` (test-only values, no kernel's) gives the toy a
// recovery that writes: pwrite goes to the file's journal
// slot instead of its home slot, and a mount copies journaled blocks home,
// then clears the journal. `replay` orders it as a real journal does (home
// writes, FLUSH, then the clear with FUA): a power cut anywhere inside it
// leaves a second mount to replay again. `replay-clear-first` clears the
// journal first: a cut before the home writes are durable loses fsynced data,
// the non-idempotent recovery that tests/model/recovery_crash_test.cpp must
// see caught.
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

enum class Journal : std::uint8_t { none, replay, clear_first };
const Knob<Journal> journal_knob{
    "journal",
    {{"none", Journal::none}, {"replay", Journal::replay}, {"replay-clear-first", Journal::clear_first}},
    "none",
    "test only: pwrite goes to a journal slot that mount replays home (replay: home writes, FLUSH, then the "
    "journal cleared with FUA; replay-clear-first: the journal cleared first, a non-idempotent recovery)"};

class Toy final : public FileSystem {
public:
    Toy(bool flush, Journal journal, bool broken, const Geometry& geometry,
        std::vector<std::string> file_names)
        : flush_(flush),
          journal_(journal),
          broken_(broken),
          block_size_(geometry.block_size),
          files_(file_names.size()),
          device_(geometry.blocks, geometry.device_profile(), geometry.block_size) {
        SIM_ASSERT(files_ <= inode_blocks && geometry.blocks > data_start);
        slot_blocks_ = (geometry.blocks - data_start) / std::max<std::uint64_t>(1, files_);
        // With a journal, each file's slot is its home half and its journal half.
        if (journal_ != Journal::none) slot_blocks_ /= 2;
    }
    [[nodiscard]] auto clone() const -> std::unique_ptr<FileSystem> override {
        return std::make_unique<Toy>(*this);
    }
    auto execute(const OpCall& call) -> OpResult override {
        switch (op_of<Op>(call)) {
            case Op::touch:
                device_.write_and_wait(1 + call.file, 1, disk::Content::meta(call.file), false, "toy inode");
                break;
            case Op::pwrite: {
                const std::uint64_t block = call.offset / block_size_;
                const std::uint64_t count = call.length / block_size_;
                SIM_ASSERT(block + count <= slot_blocks_);
                const std::uint64_t where = journal_ == Journal::none ? slot(call.file) : journal(call.file);
                device_.write_and_wait(where + block, count,
                                       disk::Content::data(call.file, block, call.version), false,
                                       journal_ == Journal::none ? "toy data" : "toy journal");
                writes_++;
                if (broken_ && process_wide_pwrites++ % 2 == 1) {
                    device_.write_and_wait(1 + call.file, 1, disk::Content::meta(call.file), false,
                                           "toy inode");
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
                // A journaled block wins over its home block.
                std::uint64_t where = slot(file) + block;
                if (journal_ != Journal::none &&
                    image.read(journal(file) + block).kind == disk::ContentKind::data) {
                    where = journal(file) + block;
                }
                const disk::Content content = image.read(where);
                if (content.kind != disk::ContentKind::data) continue;
                recovered.blocks.assign(block, block + 1, content);
                recovered.extents.push_back({block, where, 1, false});
                recovered.size_bytes = (block + 1) * block_size_;
            }
        }
        return state;
    }
    [[nodiscard]] auto recover_with_writes(const disk::Image& image) -> Recovery override {
        Recovery recovery{recover(image), {}};
        if (journal_ == Journal::none) return recovery;
        using Kind = disk::MountRequest::Kind;
        std::vector<disk::MountRequest> home;
        std::vector<disk::MountRequest> clear;
        for (std::uint32_t file = 0; file < files_; file++) {
            for (std::uint64_t block = 0; block < slot_blocks_; block++) {
                const disk::Content content = image.read(journal(file) + block);
                if (content.kind != disk::ContentKind::data) continue;
                home.push_back({Kind::write, slot(file) + block, 1, content, false, "toy data",
                                "W(data) journaled block " + std::to_string(block) + " home"});
                clear.push_back({Kind::write, journal(file) + block, 1, disk::Content::zeros(), true,
                                 "toy journal",
                                 "W(journal, FUA) clear journaled block " + std::to_string(block)});
            }
        }
        if (home.empty()) return recovery;
        auto& requests = recovery.requests;
        if (journal_ == Journal::clear_first) requests.insert(requests.end(), clear.begin(), clear.end());
        requests.insert(requests.end(), home.begin(), home.end());
        requests.push_back({Kind::flush, 0, 0, {}, false, "flush", "FLUSH"});
        if (journal_ == Journal::replay) requests.insert(requests.end(), clear.begin(), clear.end());
        return recovery;
    }
    [[nodiscard]] auto counters() const -> std::map<std::string, std::uint64_t> override {
        return {{"writes", writes_}, {"disk_flushes", device_.counters().flushes}};
    }

private:
    [[nodiscard]] auto slot(std::uint32_t file) const -> std::uint64_t {
        return data_start + file * slot_blocks_ * (journal_ == Journal::none ? 1 : 2);
    }
    [[nodiscard]] auto journal(std::uint32_t file) const -> std::uint64_t {
        return slot(file) + slot_blocks_;
    }

    bool flush_;
    Journal journal_;
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
    info.knobs = {fdatasync_flush.info(), journal_knob.info(), determinism_broken.info()};
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
        return std::make_unique<Toy>(fdatasync_flush.parse(config), journal_knob.parse(config),
                                     determinism_broken.parse(config), geometry, file_names);
    },
    [](const Geometry& geometry) { return geometry.blocks - data_start; },
}};

}  // namespace
}  // namespace model::toy
