#include "model/filesystem.hpp"

#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "model/info.hpp"
#include "model/xfs/xfs.hpp"
#include "sim/assert.hpp"

namespace model {

auto Geometry::device_profile() const -> disk::DeviceProfile {
    disk::DeviceProfile result = *disk::find_profile(profile);
    if (write_latency) result.write_latency = *write_latency;
    if (flush_latency) result.flush_latency = *flush_latency;
    if (bandwidth) result.bandwidth = *bandwidth;
    return result;
}

auto make_filesystem(const std::string& model, const Config& given, const Geometry& geometry,
                     const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem> {
    // Knobs left out take the model's defaults.
    const ModelInfo* info = find_model(model);
    SIM_ASSERT(info != nullptr);
    Config config = given;
    for (const auto& knob : info->knobs) config.try_emplace(knob.name, knob.default_value);
    if (model == "btrfs") {
        btrfs::Knobs knobs;
        // One value per kernel of the series (seeds/btrfs-fast-fsync-vs-page-release.txt).
        const std::string& release = config.at("release_extent_maps");
        knobs.release = release == "fix-1"   ? btrfs::ReleasePolicy::keep_modified
                        : release == "fix-2" || release == "fix-3"
                            ? btrfs::ReleasePolicy::keep_current_generation
                            : btrfs::ReleasePolicy::before_fix;
        knobs.full_sync_on_release = release == "before-fix" || release == "fix-1" || release == "fix-2";
        knobs.log_commit_sleep = config.at("log_commit_sleep") == "jiffy";
        knobs.hz = static_cast<std::uint32_t>(std::stoul(config.at("hz")));
        knobs.jiffy_tick_aligned = config.at("jiffy_timer") != "hypothetical-exact";
        const std::string& interval = config.at("commit_interval");
        knobs.commit_interval = std::stoll(interval) * sim::seconds;
        knobs.nodesize = static_cast<std::uint32_t>(std::stoul(config.at("nodesize")));
        return std::make_unique<btrfs::Btrfs>(knobs, geometry, file_names);
    }
    if (model == "xfs") {
        xfs::Knobs knobs;
        knobs.delalloc_convert = config.at("delalloc_convert") == "written"
                                     ? xfs::DelallocConvert::written
                                     : xfs::DelallocConvert::unwritten;
        const std::string& hint = config.at("extent_size_hint");
        const std::uint64_t hint_bytes = hint == "64k" ? 65536 : hint == "1m" ? 1048576 : 0;
        knobs.extent_size_hint_blocks =
            hint_bytes == 0 ? 0 : std::max<std::uint64_t>(1, hint_bytes / geometry.block_size);
        return std::make_unique<xfs::Xfs>(knobs, geometry, file_names);
    }
    SIM_ASSERT(false && "model validated by the loader");
    return nullptr;
}

}  // namespace model
