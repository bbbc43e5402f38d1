#pragma once
// What every model's file system holds alike, as the kernel's VFS holds it for
// every file system (struct super_block's s_blocksize and s_bdev, the inodes'
// address_space): the block size, the files' names, the block device, the
// page cache and the store of the metadata objects its blocks hold. A model
// derives from FileSystemBase<its MetaObject variant> and keeps only its own
// state (model/btrfs/btrfs.hpp, model/xfs/xfs.hpp, model/ext4/ext4.hpp).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/disk/block_device.hpp"
#include "model/filesystem.hpp"
#include "model/metadata_store.hpp"
#include "model/page_cache.hpp"

namespace model {

template <typename MetaObject>  // a std::variant of the model's metadata objects
class FileSystemBase : public FileSystem {
public:
    auto device() -> disk::BlockDevice& override { return device_; }
    void forget_recovery() override { meta_objects_.forget_recovery(); }
    [[nodiscard]] auto metadata_index() const -> const MetadataIndex* override { return &meta_objects_; }

protected:
    /// A device of `geometry` and an empty page cache for `file_names`.
    FileSystemBase(const Geometry& geometry, std::vector<std::string> file_names)
        : block_size_(geometry.block_size),
          file_names_(std::move(file_names)),
          device_(geometry.blocks, geometry.device_profile(), geometry.block_size),
          page_cache_(file_names_.size()) {}

    [[nodiscard]] auto name(std::uint32_t file) const -> const std::string& { return file_names_[file]; }
    [[nodiscard]] auto bytes(std::uint64_t blocks) const -> std::uint64_t { return blocks * block_size_; }

    std::uint32_t block_size_;
    std::vector<std::string> file_names_;
    disk::BlockDevice device_;
    PageCache page_cache_;
    MetadataStore<MetaObject> meta_objects_;
};

}  // namespace model
