#include "model/filesystem.hpp"

#include "model/btrfs/btrfs.hpp"
#include "sim/assert.hpp"

namespace model {

auto make_filesystem(const std::string& model, const Config& config, const Geometry& geometry,
                     const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem> {
    if (model == "btrfs") {
        btrfs::Knobs knobs;
        const std::string& release = config.at("release_extent_maps");
        knobs.release = release == "before-fix"      ? btrfs::ReleasePolicy::before_fix
                        : release == "keep-modified" ? btrfs::ReleasePolicy::keep_modified
                                                     : btrfs::ReleasePolicy::keep_current_generation;
        knobs.release_sets_full_sync = config.at("release_sets_full_sync") == "yes";
        return std::make_unique<btrfs::Btrfs>(knobs, geometry, file_names);
    }
    SIM_ASSERT(false && "model validated by the loader");
    return nullptr;
}

}  // namespace model
