#pragma once
// Crash subsets and device faults: which unflushed writes a power cut keeps
// (the crash policy), and which of the lost ones the fault model tears or
// misdirects, drawn (random, PCT), listed (dfs) or checked (a replay).
#include <cstdint>
#include <vector>

#include "loader/scenario.hpp"
#include "model/disk/block_device.hpp"
#include "sim/prng.hpp"

namespace runner {

/// One subset the policy allows, drawn.
auto draw_keep(loader::UnflushedPolicy policy, std::size_t count, sim::Prng& prng) -> std::vector<bool>;

/// How many subsets every_keep lists, without listing them (dfs estimates).
auto keep_count(loader::UnflushedPolicy policy, std::size_t count) -> std::uint64_t;

/// Every subset the policy allows (bounded, see subset_writes_max).
auto every_keep(loader::UnflushedPolicy policy, std::size_t count) -> std::vector<std::vector<bool>>;

using model::disk::MisdirectedWrite;
using model::disk::TornWrite;

/// The device faults of one crash state, each on a different
/// write the cut loses, at most faults.budget in all.
struct CrashFaults {
    std::vector<TornWrite> torn;
    std::vector<MisdirectedWrite> misdirected;
    /// Blocks whose read returns EIO at the first mount (latent sector
    /// errors; at most one: the mount stops at the first, so a second
    /// would never be read).
    std::vector<std::uint64_t> unreadable;
    [[nodiscard]] auto size() const -> std::size_t {
        return torn.size() + misdirected.size() + unreadable.size();
    }
};

/// Fault sets every_faults lists at most, per kept subset; past it a crash
/// state's faults are not explored, and the run says so.
constexpr std::size_t tear_sets_max = 4096;

/// Random and PCT's faults: how many (up to the budget), which writes, and
/// for each which option, from the run's fault stream (none drawn without a
/// budget, so runs without faults draw as before; without misdirected
/// writes the draws are the torn writes' own).
auto draw_faults(const model::disk::BlockDevice& device, const std::vector<bool>& keep, sim::Prng& prng)
    -> CrashFaults;

/// DFS's faults: none, then every set of up to budget faults on distinct
/// lost writes, each write at every option, in order (at most
/// tear_sets_max; `capped` says when the rest was not listed).
auto every_faults(const model::disk::BlockDevice& device, const std::vector<bool>& keep, bool& capped)
    -> std::vector<CrashFaults>;

/// A replayed crash's tears must be ones the fault model could have made.
void check_tears(const model::disk::BlockDevice& device, const std::vector<bool>& keep,
                 const std::vector<TornWrite>& torn);

/// A replayed crash's latent sector errors must be ones the fault model
/// offers: at most one, within the budget, on a block the mount reads
/// through a checked path (`reads`).
void check_unreadable(const model::disk::BlockDevice& device, const CrashFaults& faults,
                      const std::vector<std::uint64_t>& reads);

/// A replayed crash's misdirected writes must be ones the fault model could
/// have made, on writes no tear took, within the budget with the tears.
void check_misdirected(const model::disk::BlockDevice& device, const std::vector<bool>& keep,
                       const CrashFaults& faults);

}  // namespace runner
