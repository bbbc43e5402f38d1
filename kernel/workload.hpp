#pragma once
// A scenario's set-up and tasks as real system calls on a mounted file
// system, and what they did told to the oracle the way the runner's
// workload tells it (runner/runner.cpp), by each operation's oracle effect.
#include <cstdint>
#include <string>
#include <vector>

#include "checkers/oracle.hpp"
#include "loader/scenario.hpp"

namespace kernel {

/// fs.xfs.xfssyncd_centisecs while a scenario with log_force runs (the
/// least xfs_params allows), and how long log_force waits for the worker.
inline constexpr int log_worker_centisecs = 100;
inline constexpr int log_worker_wait_ms = 1200;

/// The file systems the harness makes, by model.
enum class FsType : std::uint8_t { ext4, xfs, btrfs };
auto fs_type_of(const std::string& model) -> FsType;
auto fs_name(FsType type) -> std::string;

/// One operation as it ran: where it began and ended among the device's
/// markers, and whether it succeeded.
struct RanOp {
    const loader::Op* op = nullptr;
    std::string task;  // empty: the set-up
    std::uint64_t begin_marker = 0;
    std::uint64_t end_marker = 0;
    bool ok = false;
    std::string error;          // strerror when it failed
    std::uint64_t version = 0;  // a write's or a zeroing's oracle version
};

/// The tasks in the order they run: the order the scenario's schedule first
/// names them, then the rest in declaration order.
auto task_order(const loader::Scenario& scenario) -> std::vector<const loader::Task*>;

/// Why the scenario cannot run on the real kernel (an operation without a
/// real counterpart on this file system, by name and JSON path; a generated
/// workload; injected faults), empty when it can.
auto refusal(const loader::Scenario& scenario) -> std::string;

/// The real counterpart of every operation the harness maps, for --help and docs.
auto mapping_text() -> std::string;

class RealWorkload {
public:
    RealWorkload(const loader::Scenario& scenario, FsType type, std::string root);
    /// Runs one operation; `mark` logs a device marker and returns its number.
    template <class Mark>
    void run(const loader::Op& op, const std::string& task, Mark&& mark) {
        RanOp ran{&op, task, mark(), 0, false, {}, 0};
        execute(op, ran);
        ran.end_marker = mark();
        ran_.push_back(ran);
    }
    [[nodiscard]] auto ran() const -> const std::vector<RanOp>& { return ran_; }

private:
    void execute(const loader::Op& op, RanOp& ran);
    void execute_more(const loader::Op& op, RanOp& ran, const std::string& file);
    void execute_on_root(const loader::Op& op, RanOp& ran);
    auto path(const loader::Op& op) const -> std::string { return root_ + "/" + op.file; }

    const loader::Scenario& scenario_;
    FsType type_;
    std::string root_;
    std::uint64_t versions_ = 0;  // as the oracle numbers writes and zeroings
    std::vector<RanOp> ran_;
};

/// The oracle as of device marker `marker` (every operation that began by
/// then began; those that ended by then ended): the same calls in the same
/// order as the runner's workload makes for the same operations.
auto oracle_at(const loader::Scenario& scenario, const std::vector<RanOp>& ran, std::uint64_t marker)
    -> checkers::Oracle;

}  // namespace kernel
