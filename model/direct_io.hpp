#pragma once
// The parts of an O_DIRECT write that are not a file system's own (both
// models call them from their direct_write):
// - what mm/filemap.c's generic_file_direct_write does before the file system
//   maps the range: charge the set-up, write back and wait for the range's
//   cached pages (filemap_write_and_wait_range), drop them
//   (invalidate_inode_pages2_range);
// - the bios that fs/iomap/direct-io.c (iomap_dio_rw) and fs/direct-io.c
//   (__blockdev_direct_IO) send from the caller's buffer, one per mapping,
//   the caller waiting until every one completed.
// Mapping the range (btrfs: an ordered extent; xfs: unwritten extents over
// holes) and what completion does stay in each model.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "model/cpu_cost.hpp"
#include "model/disk/block_device.hpp"
#include "model/page_cache.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"

namespace model {

/// generic_file_direct_write up to the file system's direct_IO:
/// cpu_cost::direct_write, then `write_and_wait` (the model's own
/// filemap_write_and_wait_range over file blocks [start, end)), then the
/// range's pages leave the page cache.
template <typename WriteAndWait>
void direct_write_begin(PageCache& page_cache, std::uint32_t file, std::uint64_t start, std::uint64_t end,
                        WriteAndWait&& write_and_wait) {
    sim::cpu(cpu_cost::direct_write);
    write_and_wait();
    page_cache.remove(file, start, end);  // invalidate_inode_pages2_range
}

/// The bios of one O_DIRECT write. Lives on the writer's stack until wait()
/// returns.
class DirectBios {
public:
    /// `buffer`: the caller's buffer, the content of file block `start`.
    DirectBios(disk::BlockDevice& device, disk::Content buffer, std::uint64_t start)
        : device_(device), buffer_(buffer), start_(start) {}
    DirectBios(const DirectBios&) = delete;
    auto operator=(const DirectBios&) -> DirectBios& = delete;

    /// Sends file blocks [start, end) of the buffer to `disk_block`. At its
    /// completion (timer context) `on_end` runs, then the writer wakes if it
    /// was the last bio.
    void submit(std::uint64_t start, std::uint64_t end, std::uint64_t disk_block,
                std::function<void()> on_end = {});
    /// The writer waits for every bio it sent.
    void wait() { done_.wait(); }
    [[nodiscard]] auto bios() const -> std::size_t { return bios_; }
    /// What its writer's future depends on: the bios sent, those still in
    /// flight, and whether the last one completed (sim/live.hpp).
    void hash_into(sim::StateHash& out) const {
        out.add(bios_);
        out.add(pending_);
        out.add_bool(done_.done());
    }

private:
    disk::BlockDevice& device_;
    disk::Content buffer_;
    std::uint64_t start_;
    std::size_t bios_ = 0;
    std::size_t pending_ = 0;
    sim::Completion done_{"direct_io"};
};

inline void hash_value(sim::StateHash& out, const DirectBios& bios) {
    bios.hash_into(out);
}

}  // namespace model
