#pragma once
// CPU costs of the code both models run as the kernel's common code rather
// than as their own: the page copy of a buffered write (mm/filemap.c,
// generic_perform_write, which btrfs_buffered_write and iomap's buffered
// write path both follow) and the set-up of an O_DIRECT write
// (fs/iomap/direct-io.c iomap_dio_rw, fs/direct-io.c __blockdev_direct_IO).
// Charged only in performance runs (sim::cpu). A model's own paths keep
// their figures in its own header (model/btrfs/btrfs.hpp, model/xfs/xfs.hpp).
//
// Source of the figures: order-of-magnitude estimates for a 2020s x86 core,
// not measurements. They came with the performance runs (README,
// "Performance": "its CPU costs are order-of-magnitude constants") and both
// models have used the same two values since. For scale: 8 us a 4 KiB page
// is about 500 MB/s of buffered writes per core, the page copy itself (well
// under 1 us) plus grab_cache_page_write_begin, the file system's
// write_begin/write_end and set_page_dirty. What the bundled performance
// scenarios check is the ratio between two kernels, on which a cost that both
// variants pay alike weighs little.
#include "sim/time.hpp"

namespace model::cpu_cost {

/// A buffered write, per page: copy it into the page cache and mark it dirty.
inline constexpr sim::Duration page_copy = 8 * sim::microseconds;

/// An O_DIRECT write's set-up, once per call: checks, mapping and locking the
/// range, building the bios (no copy: the device reads the caller's buffer).
inline constexpr sim::Duration direct_write = 15 * sim::microseconds;

}  // namespace model::cpu_cost
