#pragma once
// The scenario loader's one class, internal to loader/ (the rest of crashsim calls
// load_scenario and parse_scenario in scenario.hpp): each group of members is defined
// in the file its comment names. Every defect becomes one InputError line:
// "<file>: <JSON path>: expected X, got Y".
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "loader/json_reader.hpp"
#include "loader/scenario.hpp"
#include "model/filesystem.hpp"
#include "model/info.hpp"
#include "sim/strategy.hpp"

namespace loader {

class Loader : private JsonReader {
public:
    explicit Loader(const std::string& path) : JsonReader(path) { scenario_.path = path; }

    auto load(const std::string& text) -> Scenario;
    auto load(const Json& root) -> Scenario;

private:
    // load.cpp: the model, the device, its faults and the knobs; values several parts read.
    void read_model(const Json& value);
    void read_device(const Json& value);
    void read_faults(const Json& value);
    auto read_config(const Json& value, const std::string& json_path) const
        -> std::map<std::string, std::string>;
    void index_op_files();
    auto read_multiple(const Json& value, const std::string& json_path) const -> std::uint64_t;
    auto read_number(const Json& value, const std::string& json_path) const -> double;

    // load_tasks.cpp: setup, tasks and their ops.
    void read_setup(const Json& value);
    void read_tasks(const Json& value);
    void read_task(const Json& value, const std::string& json_path, std::set<std::string>& names);
    auto read_op(const Json& value, const std::string& json_path, std::set<std::string>& visible,
                 const std::string& visible_what) -> Op;
    auto find_op(const Json& value, const std::string& json_path) const -> const model::OpInfo&;
    /// The model's operation of that name, or nullptr.
    auto model_op(const std::string& name) const -> const model::OpInfo*;
    void read_field(const model::FieldInfo& field, const Json& value, const std::string& json_path,
                    Op& op) const;
    void check_op_end(const Op& op, const std::string& json_path) const;
    void read_file(const Json& value, const std::string& json_path, bool creates,
                   std::set<std::string>& visible, const std::string& visible_what);

    // load_workloads.cpp: the fio, fs_mark and create_unlink workloads.
    // The model's operations for the roles a workload expands into (model/info.hpp).
    [[nodiscard]] auto op_create() const -> const model::OpInfo* { return model::op_creating(*model_); }
    [[nodiscard]] auto op_write() const -> const model::OpInfo* {
        return model::op_with_effect(*model_, model::OracleEffect::write_data);
    }
    [[nodiscard]] auto op_fsync() const -> const model::OpInfo* {
        return model::op_with_effect(*model_, model::OracleEffect::fsync_file);
    }
    /// fio prefill: truncate sets the size, falloc extends it, write writes the data.
    [[nodiscard]] auto prefill_op(const std::string& prefill) const -> const model::OpInfo* {
        const model::OracleEffect effect = prefill == "truncate" ? model::OracleEffect::set_size
                                           : prefill == "falloc" ? model::OracleEffect::extend_size
                                                                 : model::OracleEffect::write_data;
        return model::op_with_effect(*model_, effect);
    }
    void read_workload(const Json& value);
    auto read_fio(const Json& job) const -> FioJob;
    void read_fio_options(const Json& job, FioJob& fio) const;
    /// The model's create, write and fsync operations, which a fio or fs_mark job expands into.
    void check_workload_roles(const std::string& path) const;
    void expand_fio(const FioJob& fio);
    auto read_fs_mark(const Json& job) const -> FsMarkJob;
    void read_previous_files(const Json& job, FsMarkJob& fs_mark) const;
    void expand_fs_mark(const FsMarkJob& fs_mark);
    void old_directories(const FsMarkJob& fs_mark, std::set<std::uint64_t>& made);
    auto fs_mark_run(const FsMarkJob& fs_mark, std::uint32_t thread, std::uint64_t files,
                     const std::string& prefix, std::set<std::uint64_t>& made) -> std::vector<Op>;
    auto read_create_unlink(const Json& job) const -> CreateUnlinkJob;
    void generate_create_unlink(const CreateUnlinkJob& job);
    void check_device_holds(std::initializer_list<std::uint64_t> factors,
                            const std::string& json_path) const;
    /// Counts `ops` against workload_ops_max before they are expanded.
    void take_workload_ops(std::uint64_t ops, const std::string& json_path);
    auto read_user_cpu_ns(const Json& value, const std::string& json_path) const -> std::uint64_t;

    // load_machines.cpp: the machine, its profiles and their CPU costs.
    /// A size given at the seed's scale, divided by machine.scale.
    auto read_scaled(const Json& value, const std::string& json_path) const -> std::uint64_t;
    void read_machine(const Json& value);
    /// The CPU topology and cache-line fields of `machine` or a profile.
    void read_cpu_fields(const Json& value, const std::string& json_path, Machine& machine) const;
    void read_machines(const Json& value);
    auto read_cost_map(const Json& value, const std::string& json_path) const
        -> std::map<std::string, std::uint64_t>;
    void read_costs(const Json& value);

    // load_perf.cpp: performance expectations, the seed's figures and sweeps.
    void read_perf(const Json& value);
    auto read_metric(const Json& value, const std::string& json_path) const -> std::string;
    void read_seed(const Json& value);
    void read_sweep(const Json& root);
    auto load_sweep_point(const Json& root, const Json& point, const std::string& kind,
                          const std::string& json_path) -> Scenario;
    auto read_sweep_value(const Json& value, const std::string& json_path, const std::string& kind,
                          const std::string& parameter) const -> std::uint64_t;

    // load_schedule.cpp: crash policies, must_reach, the schedule, the exploration bounds.
    auto read_unflushed(const Json& value, const std::string& json_path) const -> UnflushedPolicy;
    auto read_crash(const Json& value, const std::string& json_path) const -> UnflushedPolicy;
    void read_scenario_crash(const Json& value);
    auto read_must_reach(const Json& value, const std::string& json_path, const Names& before) const
        -> Names;
    [[nodiscard]] auto is_model_point(const std::string& name) const -> bool;
    void read_schedule(const Json& value);
    auto read_step(const Json& value, const std::string& json_path) const -> ScheduleStep;
    auto read_run_step(const Json& value, const std::string& json_path) const -> ScheduleStep;
    void read_explore(const Json& value);

    // load_variants.cpp: checkers, fuzz budgets, variants and their expectations.
    void read_checkers(const Json& value);
    auto read_budget(const Json& value, const std::string& json_path) const -> FuzzBudget;
    auto read_states(const Json& value, const std::string& json_path, const FuzzBudget& budget) const
        -> sim::VisitedKey;
    auto read_strategy(const Json& value, const std::string& json_path) const -> sim::StrategySpec;
    void read_variants(const Json& value);
    auto read_variant(const Json& value, const std::string& json_path) const -> Variant;
    void check_layout(const Json& variant, const std::string& json_path,
                      const model::Config& config) const;
    auto read_expectation(const Json& value, const std::string& json_path) const -> Expectation;
    void read_fault_expectation(const Json& value, const std::string& json_path,
                                Expectation& expect) const;

    Scenario scenario_;
    const model::ModelInfo* model_ = nullptr;
    std::uint64_t scale_ = 1;
    std::map<std::string, std::string> config_base_;
    FuzzBudget fuzz_default_{{sim::StrategySpec{}}, fuzz_schedules_default, 0};
    std::set<std::string> files_setup_;
    std::set<std::string> files_created_;
    Names must_reach_;
    std::uint64_t workload_ops_used_ = 0;  // by the workload and the sweep points loaded so far
};

}  // namespace loader
