#include "model/info.hpp"

#include "model/btrfs/points.hpp"

namespace model {
namespace {

auto file_field() -> FieldInfo { return {"file", FieldKind::file, true}; }
auto range_fields(bool required) -> std::vector<FieldInfo> {
    return {file_field(), {"offset", FieldKind::offset, required},
            {"length", FieldKind::length, required}};
}

// seeds/btrfs-fast-fsync-vs-page-release.txt: each patch of the series is a knob.
auto btrfs_info() -> ModelInfo {
    ModelInfo info;
    info.name = "btrfs";
    info.about =
        "btrfs data path: extent maps and the list of modified extents, ordered extents, "
        "transactions, the per-root log tree with fast and full fsync, page release, log replay";
    info.model_tasks = {"endio"};
    info.yield_points.assign(std::begin(btrfs::points::all), std::end(btrfs::points::all));
    info.knobs = {
        {"release_extent_maps",
         {"before-fix", "keep-modified", "keep-current-generation"},
         "keep-current-generation",
         "try_release_extent_mapping: before-fix (v5.7) drops any unpinned, unlocked extent map; "
         "keep-modified (patch 1/3) keeps one on the list of modified extents unless it is being "
         "logged; keep-current-generation (patch 2/3) also drops a listed one older than the "
         "running transaction"},
        {"release_sets_full_sync",
         {"yes", "no"},
         "no",
         "page release sets BTRFS_INODE_NEEDS_FULL_SYNC when it drops an extent map: yes before "
         "patch 3/3, no after it"},
    };
    info.ops = {
        {"create", "create an empty regular file", {file_field()}, true},
        {"write", "buffered write: dirty the pages, mark the range delalloc, raise i_size",
         range_fields(true)},
        {"writeback",
         "writeback not started by fsync (memory pressure, periodic flush) of the dirty pages "
         "in range (default: the whole file); does not wait for ordered extents",
         range_fields(false)},
        {"release_pages",
         "memory reclaim calls btrfs_releasepage on each clean page in range (default: all)",
         range_fields(false)},
        {"fsync", "btrfs_sync_file on the whole file: log the inode, commit the log",
         {file_field()}},
        {"commit", "commit the running transaction (btrfs_commit_transaction)", {}},
        {"sync", "sync(2): write back every dirty page, wait for ordered extents, commit", {}},
    };
    return info;
}

}  // namespace

auto models() -> const std::vector<ModelInfo>& {
    static const std::vector<ModelInfo> all = {btrfs_info()};
    return all;
}

auto find_model(const std::string& name) -> const ModelInfo* {
    for (const auto& info : models()) {
        if (info.name == name) return &info;
    }
    return nullptr;
}

}  // namespace model
