#pragma once
// A model's counters, registered once. Each model keeps one table of
// CounterEntry (model/btrfs/super.cpp, model/xfs/super.cpp,
// model/ext4/super.cpp): a counter's declaration (its name, what it counts,
// whether the perf table shows it, a total or a maximum) with where its value
// comes from. Its ModelInfo::counters (in table order: the order `list` and
// the perf table show them), its FileSystem::counters() and its
// reset_maxima() derive from that table.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/disk/block_device.hpp"
#include "model/disk_counters.hpp"
#include "model/info.hpp"
#include "sim/assert.hpp"

namespace model {

using CounterValues = std::map<std::string, std::uint64_t>;

/// One counter of a model whose file system is `Fs` and whose own counts
/// are the fields of a `Fields` struct.
template <typename Fs, typename Fields>
class CounterEntry {
public:
    using Field = std::uint64_t Fields::*;
    using Computed = auto (*)(const Fs&) -> std::uint64_t;
    using Members = auto (*)(const Fs&) -> CounterValues;

    /// A field of the model's counts.
    CounterEntry(CounterInfo info, Field field) : info_(std::move(info)), field_(field) {
        SIM_ASSERT(!info_.name.ends_with('.'));
    }
    /// A value the model computes from its state (a tree's size, another
    /// component's count); never a maximum, which reset_maxima() must reach.
    CounterEntry(CounterInfo info, Computed computed) : info_(std::move(info)), computed_(computed) {
        SIM_ASSERT(!info_.name.ends_with('.'));
        SIM_ASSERT(info_.kind == CounterKind::total);
    }
    /// A family declared by its prefix ("ops."): its members by their suffix
    /// ("write" for "ops.write").
    CounterEntry(CounterInfo info, Members members) : info_(std::move(info)), members_(members) {
        SIM_ASSERT(info_.name.ends_with('.'));
        SIM_ASSERT(info_.kind == CounterKind::total);
    }
    /// One of the block device's counters (model/disk_counters.hpp).
    /// Implicit: a table lists a device counter by its name alone.
    CounterEntry(DiskCounter counter) : info_(disk_counter_info(counter)), disk_(counter) {}

    [[nodiscard]] auto info() const -> const CounterInfo& { return info_; }

    /// Adds this counter's value (a family's: each member's) to `out`.
    void add_value(const Fs& fs, const Fields& fields, const disk::DeviceCounters& device,
                   CounterValues& out) const {
        if (field_ != nullptr) {
            out[info_.name] = fields.*field_;
        } else if (computed_ != nullptr) {
            out[info_.name] = computed_(fs);
        } else if (members_ != nullptr) {
            for (const auto& [suffix, value] : members_(fs)) out[info_.name + suffix] = value;
        } else {
            SIM_ASSERT(disk_.has_value());
            out[info_.name] = disk_counter_value(device, *disk_);
        }
    }

    /// Sets a maximum to 0 (a total keeps its value).
    void reset_maximum(Fields& fields) const {
        if (info_.kind != CounterKind::maximum) return;
        SIM_ASSERT(field_ != nullptr);
        fields.*field_ = 0;
    }

private:
    CounterInfo info_;
    Field field_ = nullptr;
    Computed computed_ = nullptr;
    Members members_ = nullptr;
    std::optional<DiskCounter> disk_;
};

template <typename Fs, typename Fields>
using CounterTable = std::vector<CounterEntry<Fs, Fields>>;

/// The declarations, in table order (ModelInfo::counters).
template <typename Fs, typename Fields>
auto counter_infos(const CounterTable<Fs, Fields>& table) -> std::vector<CounterInfo> {
    std::vector<CounterInfo> infos;
    for (const auto& entry : table) infos.push_back(entry.info());
    return infos;
}

/// Every counter's value (FileSystem::counters()).
template <typename Fs, typename Fields>
auto counter_values(const CounterTable<Fs, Fields>& table, const Fs& fs, const Fields& fields,
                    const disk::DeviceCounters& device) -> CounterValues {
    CounterValues values;
    for (const auto& entry : table) entry.add_value(fs, fields, device, values);
    return values;
}

/// Sets every maximum of the table to 0 (FileSystem::reset_maxima()).
template <typename Fs, typename Fields>
void reset_counter_maxima(const CounterTable<Fs, Fields>& table, Fields& fields) {
    for (const auto& entry : table) entry.reset_maximum(fields);
}

}  // namespace model
