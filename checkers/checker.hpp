#pragma once
// Checkers are observers: they read the oracle and the recovered state and
// report violations as data, never mutate, never assert on the model.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/oracle.hpp"
#include "model/events.hpp"
#include "model/filesystem.hpp"

namespace checkers {

struct Violation {
    std::string checker;
    std::string file;          // empty when not about one file
    std::uint64_t offset = 0;  // bytes
    std::string expected;
    std::string found;
    std::string message;  // one line, complete
};

struct CheckContext {
    const std::vector<std::string>& file_names;
    std::uint32_t block_size;
    /// The file system's freeze level when the power was cut, from the run's
    /// freeze_level events (model/events.hpp; unfrozen when none came).
    model::FreezeLevel frozen = model::FreezeLevel::unfrozen;
};

class Checker {
public:
    virtual ~Checker() = default;
    [[nodiscard]] virtual auto name() const -> std::string_view = 0;
    /// Appends at most one violation (the first found, in file and offset order).
    virtual void check(const Oracle& oracle, const model::RecoveredState& state,
                       const CheckContext& context, std::vector<Violation>& out) const = 0;
    /// Whether this crash state gave the checker something at stake: a state
    /// in which it could have found a violation (each checker defines it).
    /// Campaigns count such states; a "holds" whose checker never had anything
    /// at stake is vacuous, and `crashsim check` fails it.
    [[nodiscard]] virtual auto at_stake(const Oracle& oracle, const model::RecoveredState& state,
                                        const CheckContext& context) const -> bool = 0;
};

/// One checker as crashsim knows it. Every checker registers once, as one
/// entry of checker_table() (checkers/checker.cpp); every list of checkers
/// (make_checker, checker_names, `crashsim list`, the loader's choices,
/// the real-kernel harness's) derives from that table.
struct CheckerEntry {
    std::string_view name;
    auto (*make)() -> std::unique_ptr<Checker>;
    std::string_view about;  // what `crashsim list` says it judges
    /// A scenario may name it in "checkers"; the others a run adds itself
    /// (mount unless crash.mount is may-fail, fault_outcome with a fault
    /// budget). scenarios/schema/scenario.schema.json's checker enum lists
    /// these (tests/checkers/checker_test.cpp holds the two equal).
    bool scenario_nameable;
    /// `crashsim kernel` judges real crash states with it (the others read
    /// the model's own records: journal_integrity its log, freeze_quiescence
    /// its transactions, frozen_image its log records, fault_outcome its faults).
    bool real_kernel;
};

/// Every checker, in the order the real-kernel harness runs and reports its own.
auto checker_table() -> std::span<const CheckerEntry>;
/// nullptr for an unknown name.
auto make_checker(std::string_view name) -> std::unique_ptr<Checker>;
/// Every checker name, sorted.
auto checker_names() -> std::vector<std::string>;
auto checker_about(std::string_view name) -> std::string;
/// The checkers a scenario may name, sorted.
auto scenario_checker_names() -> const std::vector<std::string>&;
/// The checkers judged on a real crash state, in table order.
auto real_kernel_checker_names() -> const std::vector<std::string>&;

}  // namespace checkers
