#pragma once
// `crashsim kernel`: a scenario's workload on the running kernel, its crash
// states judged, and the model's word on the same sequential schedule.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernel/crash.hpp"
#include "kernel/workload.hpp"
#include "loader/scenario.hpp"

namespace kernel {

/// Device traffic of the workload (between the set-up's end and the crash):
/// every request in order, "W 4096@884" or "FLUSH" (the model also "FUA").
struct Traffic {
    std::vector<std::string> requests;
    std::uint64_t writes = 0;
    std::uint64_t flushes = 0;
    std::uint64_t fua = 0;
    std::uint64_t bytes = 0;
};

struct ModelSide {
    std::string variant;
    std::string why;           // why this variant
    std::string expectation;   // the variant's expectation, as `crashsim check` judges it
    std::string sequential;    // the model's verdict of the sequential schedule's crash states
    std::uint64_t states = 0;  // crash states it judged
    /// Per checker the model judges: "holds, N at stake" or "VIOLATED: ...".
    std::map<std::string, std::string> checkers;
    Traffic traffic;
};

struct KernelReport {
    std::string kernel_release;
    std::string fs;
    std::string mkfs;  // the command that made it
    std::string mount_options;
    std::uint64_t image_bytes = 0;
    std::vector<std::string> task_order;
    std::vector<RanOp> ran;
    CrashJudgement judgement;
    Traffic traffic;
    std::uint64_t log_records = 0;
    ModelSide model;
};

/// Runs everything; `phase` is told when each phase begins ("workload",
/// "crash states", "model"), so the caller can time them. Throws HostError
/// (the machine cannot) and loader::InputError (a refused scenario).
auto run_kernel(const loader::Scenario& scenario, const std::string& variant,
                const std::function<void(const std::string&)>& phase) -> KernelReport;

/// The model's side alone (the verb prints it beside the real one).
auto model_side(const loader::Scenario& scenario, const std::string& variant, const std::string& release)
    -> ModelSide;

}  // namespace kernel
