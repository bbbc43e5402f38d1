#include "runner/crash_faults.hpp"

#include <algorithm>
#include <string>

#include "runner/runner.hpp"
#include "sim/strategy.hpp"

namespace runner {

auto draw_keep(loader::UnflushedPolicy policy, std::size_t count, sim::Prng& prng) -> std::vector<bool> {
    std::vector<bool> keep(count, false);
    switch (policy) {
        case loader::UnflushedPolicy::none:
            break;
        case loader::UnflushedPolicy::all:
            keep.assign(count, true);
            break;
        case loader::UnflushedPolicy::any_subset:
            for (std::size_t i = 0; i < count; i++) keep[i] = prng.boolean();
            break;
        case loader::UnflushedPolicy::prefix: {
            const auto kept = prng.below(count + 1);
            for (std::size_t i = 0; i < kept; i++) keep[i] = true;
            break;
        }
    }
    return keep;
}

auto keep_count(loader::UnflushedPolicy policy, std::size_t count) -> std::uint64_t {
    switch (policy) {
        case loader::UnflushedPolicy::none:
        case loader::UnflushedPolicy::all:
            return 1;
        case loader::UnflushedPolicy::prefix:
            return count + 1;
        case loader::UnflushedPolicy::any_subset:
            return count <= subset_writes_max ? std::uint64_t{1} << count : 2 + 2 * std::uint64_t{count};
    }
    return 1;
}

auto every_keep(loader::UnflushedPolicy policy, std::size_t count) -> std::vector<std::vector<bool>> {
    std::vector<std::vector<bool>> all;
    switch (policy) {
        case loader::UnflushedPolicy::none:
            all.emplace_back(count, false);
            break;
        case loader::UnflushedPolicy::all:
            all.emplace_back(count, true);
            break;
        case loader::UnflushedPolicy::prefix:
            for (std::size_t kept = 0; kept <= count; kept++) {
                std::vector<bool> keep(count, false);
                for (std::size_t i = 0; i < kept; i++) keep[i] = true;
                all.push_back(std::move(keep));
            }
            break;
        case loader::UnflushedPolicy::any_subset:
            if (count <= subset_writes_max) {
                for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << count); mask++) {
                    std::vector<bool> keep(count);
                    for (std::size_t i = 0; i < count; i++) keep[i] = ((mask >> i) & 1) != 0;
                    all.push_back(std::move(keep));
                }
            } else {
                all.emplace_back(count, false);
                all.emplace_back(count, true);
                for (std::size_t i = 0; i < count; i++) {
                    std::vector<bool> only(count, false);
                    only[i] = true;
                    all.push_back(only);
                    std::vector<bool> all_but(count, true);
                    all_but[i] = false;
                    all.push_back(all_but);
                }
            }
            break;
    }
    return all;
}

namespace {

/// The ways the fault model may damage lost write `i`: tear it after 1..n
/// sectors (options 0..n-1), then land it on each victim in turn.
auto fault_options(const model::disk::BlockDevice& device, std::size_t i) -> std::uint64_t {
    return device.tear_points(i) + device.misdirect_victims(i).size();
}

/// Option `option` of fault_options for write `i`, added to `faults`.
void add_fault(const model::disk::BlockDevice& device, std::size_t i, std::uint64_t option,
               CrashFaults& faults) {
    const std::uint64_t tears = device.tear_points(i);
    if (option < tears) {
        faults.torn.push_back({i, option + 1});
    } else {
        faults.misdirected.push_back({i, device.misdirect_victims(i)[option - tears]});
    }
}

/// The writes `keep` loses that the fault model may tear or misdirect.
auto fault_candidates(const model::disk::BlockDevice& device, const std::vector<bool>& keep)
    -> std::vector<std::size_t> {
    std::vector<std::size_t> candidates;
    if (device.faults().budget == 0) return candidates;
    for (std::size_t i = 0; i < keep.size(); i++) {
        if (!keep[i] && fault_options(device, i) > 0) candidates.push_back(i);
    }
    return candidates;
}
}  // namespace

auto draw_faults(const model::disk::BlockDevice& device, const std::vector<bool>& keep, sim::Prng& prng)
    -> CrashFaults {
    std::vector<std::size_t> candidates = fault_candidates(device, keep);
    CrashFaults faults;
    if (candidates.empty()) return faults;
    const std::uint64_t count =
        prng.below(std::min<std::uint64_t>(device.faults().budget, candidates.size()) + 1);
    for (std::uint64_t k = 0; k < count; k++) {
        const std::size_t pick = prng.below(candidates.size());
        const std::size_t write = candidates[pick];
        candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
        add_fault(device, write, prng.below(fault_options(device, write)), faults);
    }
    std::sort(faults.torn.begin(), faults.torn.end(),
              [](const TornWrite& a, const TornWrite& b) { return a.write < b.write; });
    std::sort(faults.misdirected.begin(), faults.misdirected.end(),
              [](const MisdirectedWrite& a, const MisdirectedWrite& b) { return a.write < b.write; });
    return faults;
}

auto every_faults(const model::disk::BlockDevice& device, const std::vector<bool>& keep, bool& capped)
    -> std::vector<CrashFaults> {
    const std::vector<std::size_t> candidates = fault_candidates(device, keep);
    std::vector<CrashFaults> all{{}};
    CrashFaults current;
    const auto extend = [&](auto& self, std::size_t from) -> void {
        if (current.size() >= device.faults().budget) return;
        for (std::size_t c = from; c < candidates.size(); c++) {
            for (std::uint64_t option = 0; option < fault_options(device, candidates[c]); option++) {
                if (all.size() >= tear_sets_max) {
                    capped = true;
                    return;
                }
                const CrashFaults before = current;
                add_fault(device, candidates[c], option, current);
                all.push_back(current);
                self(self, c + 1);
                current = before;
            }
        }
    };
    extend(extend, 0);
    return all;
}

void check_tears(const model::disk::BlockDevice& device, const std::vector<bool>& keep,
                 const std::vector<TornWrite>& torn) {
    const auto diverged = [](const std::string& expected, const std::string& got) {
        throw sim::ReplayDiverged("$.crash.torn", expected, got);
    };
    if (torn.size() > device.faults().budget) {
        diverged("at most " + std::to_string(device.faults().budget) + " torn write(s) (faults.budget)",
                 std::to_string(torn.size()));
    }
    for (std::size_t i = 0; i < torn.size(); i++) {
        const TornWrite& tear = torn[i];
        const std::string at = "torn write " + std::to_string(i) + " of write " + std::to_string(tear.write);
        if (i > 0 && tear.write <= torn[i - 1].write) diverged("torn writes in increasing write order", at);
        if (tear.write >= keep.size() || keep[tear.write] || device.tear_points(tear.write) == 0) {
            diverged("a torn write of one of the unflushed writes the crash loses that the fault model tears",
                     at);
        }
        if (tear.sectors == 0 || tear.sectors > device.tear_points(tear.write)) {
            diverged("sectors from 1 to " + std::to_string(device.tear_points(tear.write)) + " for " + at,
                     std::to_string(tear.sectors));
        }
    }
}

void check_unreadable(const model::disk::BlockDevice& device, const CrashFaults& faults,
                      const std::vector<std::uint64_t>& reads) {
    const auto diverged = [](const std::string& expected, const std::string& got) {
        throw sim::ReplayDiverged("$.crash.unreadable", expected, got);
    };
    if (faults.unreadable.empty()) return;
    if (!device.faults().latent_errors || faults.unreadable.size() > 1 ||
        faults.size() > device.faults().budget) {
        diverged(
            "at most one latent sector error within faults.budget, on a scenario with faults.latent_errors",
            std::to_string(faults.unreadable.size()) + " unreadable block(s)");
    }
    if (std::find(reads.begin(), reads.end(), faults.unreadable.front()) == reads.end()) {
        diverged(
            "a block the mount reads through a checked path (" + std::to_string(reads.size()) + " of them)",
            "block " + std::to_string(faults.unreadable.front()));
    }
}

void check_misdirected(const model::disk::BlockDevice& device, const std::vector<bool>& keep,
                       const CrashFaults& faults) {
    const auto diverged = [](const std::string& expected, const std::string& got) {
        throw sim::ReplayDiverged("$.crash.misdirected", expected, got);
    };
    if (faults.size() > device.faults().budget) {
        diverged("at most " + std::to_string(device.faults().budget) +
                     " faults, torn and misdirected (faults.budget)",
                 std::to_string(faults.size()));
    }
    for (std::size_t i = 0; i < faults.misdirected.size(); i++) {
        const MisdirectedWrite& misdirect = faults.misdirected[i];
        const std::string at =
            "misdirected write " + std::to_string(i) + " of write " + std::to_string(misdirect.write);
        if (i > 0 && misdirect.write <= faults.misdirected[i - 1].write) {
            diverged("misdirected writes in increasing write order", at);
        }
        const bool torn = std::any_of(faults.torn.begin(), faults.torn.end(),
                                      [&](const TornWrite& t) { return t.write == misdirect.write; });
        if (misdirect.write >= keep.size() || keep[misdirect.write] || torn) {
            diverged("a misdirected write of one of the unflushed writes the crash loses, not torn", at);
        }
        const std::vector<std::uint64_t> victims = device.misdirect_victims(misdirect.write);
        if (std::find(victims.begin(), victims.end(), misdirect.victim) == victims.end()) {
            diverged("a victim block the fault model offers for " + at + " (" +
                         std::to_string(victims.size()) + " offered)",
                     "block " + std::to_string(misdirect.victim));
        }
    }
}
}  // namespace runner
