#pragma once
// What both models' writeback does once a range of pages is mapped to disk
// blocks and under writeback: send the pages' contents to the device. The
// kernel builds one bio per mapping (btrfs: submit_extent_page in
// extent_io.c; xfs: iomap_submit_ioend); the model's device takes one write
// per run of pages whose contents are contiguous, so that a crash may keep
// or drop each run as its own request.
#include <cstdint>
#include <functional>

#include "model/disk/block_device.hpp"
#include "model/page_cache.hpp"

namespace model {

/// Sends file blocks [start, end) of `file`, every page under writeback, to
/// the device from `disk_block` onward: one write per run of contiguous
/// contents, each calling `on_end` when it completes (timer context).
/// Returns how many writes it sent (at least one).
auto submit_writeback_pages(PageCache& page_cache, disk::BlockDevice& device, std::uint32_t file,
                            std::uint64_t start, std::uint64_t end, std::uint64_t disk_block,
                            const std::function<void()>& on_end) -> std::uint32_t;

/// The same with writes the device may fail (faults.write_errors;
/// disk::BlockDevice::submit_failable_write): each calls `on_end(ok)`.
auto submit_failable_writeback_pages(PageCache& page_cache, disk::BlockDevice& device, std::uint32_t file,
                                     std::uint64_t start, std::uint64_t end, std::uint64_t disk_block,
                                     const std::function<void(bool)>& on_end) -> std::uint32_t;

}  // namespace model
