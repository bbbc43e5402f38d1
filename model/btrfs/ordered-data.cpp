// Ordered extents as fs/btrfs/ordered-data.c keeps them: waiting for those
// of a range (btrfs_wait_ordered_range). Creating them is cow_file_range's
// and completing them btrfs_finish_ordered_io's (inode.cpp).
#include <algorithm>

#include "model/btrfs/btrfs.hpp"
#include "sim/live.hpp"

namespace model::btrfs {

void Btrfs::wait_ordered_range(std::uint32_t file, std::uint64_t start, std::uint64_t end) {
    SIM_LIVE(file, start, end);
    const auto& ids = inodes_[file].ordered_pending;
    auto pending = [&] {
        return std::any_of(ids.begin(), ids.end(), [&](std::uint64_t id) {
            const OrderedExtent& ordered = ordered_[id];
            return ordered.start < end && start < ordered.start + ordered.length;
        });
    };
    while (pending()) ordered_wait_.wait();
}

}  // namespace model::btrfs
