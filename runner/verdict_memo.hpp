#pragma once
// The verdict memo across schedules (issue 13): crash states that different
// runs of one Simulation (one scenario and variant) reach with the same image,
// oracle and freeze level are judged once. RunState::memo_key (runner.cpp)
// builds the key; this keeps what judging added.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/metadata_store.hpp"

namespace scenarios {

/// What judging one crash state without a violation added to the outcome.
struct Verdict {
    std::vector<std::uint64_t> judged;  // per checker, RunOutcome::judged
    std::uint64_t recovery_crash_states = 0;
};

/// Shared by every run of one Simulation (each job of a campaign has its own
/// Simulation, so no lock). Lookups only: nothing iterates the maps, so their
/// order reaches no behaviour. A hit compares the whole key (std::vector's
/// ==), never a hash alone.
class VerdictMemo {
public:
    /// Bound on the keys kept, in words (256 MiB): past it the verdicts are
    /// dropped and the memo fills again (the oracle table keeps its ids,
    /// which cached keys of the runs in progress may hold).
    static constexpr std::uint64_t words_max = std::uint64_t{32} << 20;

    [[nodiscard]] auto find(const model::KeyWords& key) const -> const Verdict* {
        const auto it = verdicts_.find(key);
        return it == verdicts_.end() ? nullptr : &it->second;
    }
    void keep(model::KeyWords key, Verdict verdict) {
        if (words_ + key.size() > words_max) {
            verdicts_.clear();
            words_ = 0;
        }
        words_ += key.size();
        verdicts_.emplace(std::move(key), std::move(verdict));
    }
    /// Oracle contents (Oracle::encode) to canonical ids.
    model::ContentTable oracles;

private:
    std::unordered_map<model::KeyWords, Verdict, model::KeyWordsHash> verdicts_;
    std::uint64_t words_ = 0;
};

}  // namespace scenarios
