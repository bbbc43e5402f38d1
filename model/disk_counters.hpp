#pragma once
// The block device's counters, which every model shows beside its own: the
// device counts them (model/disk/block_device.hpp) whatever model writes to
// it, so their names, their text and which of them the perf table shows are
// declared once, here.
#include <cstdint>

#include "model/disk/block_device.hpp"
#include "model/info.hpp"

namespace model {

enum class DiskCounter : std::uint8_t {
    writes,      // disk_writes, a perf table column
    flushes,     // disk_flushes, a perf table column
    fua_writes,  // disk_fua_writes
};

/// The declaration of one, for a model's counter table (placed where the
/// model wants it in its list).
auto disk_counter_info(DiskCounter counter) -> CounterInfo;

/// Its value on a device (a model's counter table reads it, model/counter_table.hpp).
auto disk_counter_value(const disk::DeviceCounters& device, DiskCounter counter) -> std::uint64_t;

}  // namespace model
