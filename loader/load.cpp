// Loads a scenario file and validates it against the model it names. Every
// defect becomes one InputError line: "<file>: <JSON path>: expected X, got Y".
// Validation is strict (an unknown key is an error) because a typo that is
// silently ignored would make a scenario test something other than it says.
// This file reads the top level, the model, the device, its faults and the knobs;
// the load_*.cpp files beside it read the rest (loader_impl.hpp lists which).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loader/json_reader.hpp"
#include "loader/loader_impl.hpp"
#include "loader/scenario.hpp"
#include "model/info.hpp"
#include "model/registry.hpp"
#include "sim/assert.hpp"

namespace loader {
namespace {

constexpr std::uint64_t device_blocks_max = std::uint64_t{1} << 32;

auto block_sizes() -> const std::vector<std::uint64_t>& {
    static const std::vector<std::uint64_t> sizes = {512,  1024,  2048,  4096,
                                                     8192, 16384, 32768, 65536};
    return sizes;
}

}  // namespace

auto Loader::load(const std::string& text) -> Scenario {
    NumberTexts numbers;
    const Json root = parse_json(text, scenario_.path, &numbers);
    numbers_ = &numbers;  // for messages while root lives
    Scenario scenario = load(root);
    numbers_ = nullptr;
    return scenario;
}

auto Loader::load(const Json& root) -> Scenario {
    check_keys(root, "$", {"name",   "about", "model",    "device",   "machine", "machines",   "costs",
                           "config", "setup", "workload", "tasks",    "crash",   "schedule",   "checkers",
                           "fuzz",   "perf",  "sweep",    "variants", "explore", "must_reach", "faults"},
               root.is_object() && root.contains("workload")
                   ? Names{"name", "model", "device", "checkers", "variants"}
                   : Names{"name", "model", "device", "tasks", "checkers", "variants"});
    scenario_.name = read_name(root.at("name"), "$.name");
    if (root.contains("about")) scenario_.about = read_string(root.at("about"), "$.about");
    read_model(root.at("model"));
    read_device(root.at("device"));
    if (root.contains("faults")) read_faults(root.at("faults"));
    if (root.contains("machine")) read_machine(root.at("machine"));
    if (root.contains("costs")) read_costs(root.at("costs"));
    if (root.contains("machines")) read_machines(root.at("machines"));
    if (root.contains("config")) config_base_ = read_config(root.at("config"), "$.config");
    if (root.contains("setup")) read_setup(root.at("setup"));
    if (root.contains("workload")) read_workload(root.at("workload"));
    if (root.contains("tasks")) read_tasks(root.at("tasks"));
    if (root.contains("crash")) read_scenario_crash(root.at("crash"));
    if (root.contains("must_reach")) must_reach_ = read_must_reach(root.at("must_reach"), "$.must_reach", {});
    if (root.contains("schedule")) read_schedule(root.at("schedule"));
    if (root.contains("explore")) read_explore(root.at("explore"));
    read_checkers(root.at("checkers"));
    if (root.contains("fuzz")) fuzz_default_ = read_budget(root.at("fuzz"), "$.fuzz");
    read_variants(root.at("variants"));
    if (root.contains("perf")) read_perf(root.at("perf"));
    if (root.contains("sweep")) read_sweep(root);
    if (root.contains("perf") && root.at("perf").contains("seed")) read_seed(root.at("perf").at("seed"));
    if (scenario_.perf) {
        for (const PerfRatio& ratio : scenario_.perf->ratios) {
            if (!ratio.at) continue;
            if (std::find(scenario_.sweep_values.begin(), scenario_.sweep_values.end(), *ratio.at) ==
                scenario_.sweep_values.end()) {
                fail(ratio.json_path + ".at",
                     scenario_.sweep_values.empty()
                         ? "no \"at\" (the scenario has no sweep)"
                         : "one of the sweep's values of " + scenario_.sweep_parameter,
                     std::to_string(*ratio.at));
            }
        }
    }
    for (std::size_t i = 0; i < scenario_.variants.size(); i++) {
        const bool measured = scenario_.variants[i].expect.kind == Expectation::Kind::measure;
        if (measured && !scenario_.perf) {
            fail(index_path("$.variants", i) + ".expect",
                 "\"holds\" or an object (\"measure\" needs a perf key)", "\"measure\"");
        }
    }
    index_op_files();
    return std::move(scenario_);
}

// Each op's file index, found once here: a run looks files up by index, and
// by name an fs_mark run of 10,000 files spent most of its time comparing names.
void Loader::index_op_files() {
    std::map<std::string_view, std::uint32_t> index;
    for (std::size_t i = 0; i < scenario_.files.size(); i++) {
        index.emplace(scenario_.files[i], static_cast<std::uint32_t>(i));
    }
    const auto set_index = [&index](Op& op) {
        if (op.file.empty() || op.file_index != Op::no_file_index) return;
        const auto found = index.find(op.file);
        if (found != index.end()) op.file_index = found->second;
    };
    for (Op& op : scenario_.setup) set_index(op);
    for (Task& task : scenario_.tasks) {
        for (Op& op : task.ops) set_index(op);
    }
}

// --- Model, device, knobs ---------------------------------------------------------------------

void Loader::read_model(const Json& value) {
    Names names;
    for (const auto& info : model::models()) names.push_back(info.name);
    scenario_.model = read_choice(value, "$.model", names, "the models ");
    model_ = model::find_model(scenario_.model);
    SIM_ASSERT(model_ != nullptr);
}

void Loader::read_device(const Json& value) {
    check_keys(value, "$.device",
               {"block_size", "blocks", "profile", "write_latency_us", "flush_latency_us", "bandwidth",
                "write_cache"},
               {"block_size", "blocks"});
    // A device whose write cache lies about FLUSH, opted into.
    if (value.contains("write_cache")) {
        scenario_.device.lying_cache =
            read_choice(value.at("write_cache"), "$.device.write_cache",
                        {"honours-flush", "lies-about-flush"}, "") == "lies-about-flush";
    }
    // The profile's calibrated figures, overridden (crashsim perf --vary write_latency_us=...).
    if (value.contains("write_latency_us")) {
        scenario_.device.write_latency_ns =
            read_unsigned_in(value.at("write_latency_us"), "$.device.write_latency_us", 1, 1'000'000) * 1000;
    }
    if (value.contains("flush_latency_us")) {
        scenario_.device.flush_latency_ns =
            read_unsigned_in(value.at("flush_latency_us"), "$.device.flush_latency_us", 1, 1'000'000) * 1000;
    }
    if (value.contains("bandwidth")) {
        constexpr std::uint64_t bandwidth_max = std::uint64_t{1} << 40;
        const std::uint64_t bandwidth = read_size(value.at("bandwidth"), "$.device.bandwidth");
        if (bandwidth > bandwidth_max) {
            fail("$.device.bandwidth", "an unsigned integer from 0 to " + std::to_string(bandwidth_max),
                 std::to_string(bandwidth));
        }
        scenario_.device.bandwidth = bandwidth;
    }
    const std::uint64_t block_size = read_size(value.at("block_size"), "$.device.block_size");
    const auto& sizes = block_sizes();
    if (std::find(sizes.begin(), sizes.end(), block_size) == sizes.end()) {
        fail("$.device.block_size", "one of 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536",
             std::to_string(block_size));
    }
    scenario_.device.block_size = static_cast<std::uint32_t>(block_size);
    scenario_.device.blocks =
        read_unsigned_in(value.at("blocks"), "$.device.blocks", 1, device_blocks_max);
    if (value.contains("profile")) {
        scenario_.device.profile =
            read_choice(value.at("profile"), "$.device.profile",
                        {"hdd", "ssd", "nvme", "ramdisk", "vm-rotational", "vm-nvme"}, "");
    }
}

// The device's fault budget and kinds; only for a model whose
// checksums detect them or whose recovery survives them (ModelInfo::faults).
void Loader::read_faults(const Json& value) {
    check_keys(value, "$.faults",
               {"budget", "torn_writes", "misdirected_writes", "latent_errors", "write_errors"}, {"budget"});
    scenario_.faults.budget = static_cast<std::uint32_t>(
        read_unsigned_in(value.at("budget"), "$.faults.budget", 1, fault_budget_max));
    if (value.contains("torn_writes"))
        scenario_.faults.torn_writes = read_bool(value.at("torn_writes"), "$.faults.torn_writes");
    if (value.contains("misdirected_writes")) {
        scenario_.faults.misdirected_writes =
            read_bool(value.at("misdirected_writes"), "$.faults.misdirected_writes");
    }
    if (value.contains("latent_errors")) {
        scenario_.faults.latent_errors = read_bool(value.at("latent_errors"), "$.faults.latent_errors");
    }
    if (value.contains("write_errors")) {
        scenario_.faults.write_errors = read_bool(value.at("write_errors"), "$.faults.write_errors");
    }
    if (!scenario_.faults.torn_writes && !scenario_.faults.misdirected_writes &&
        !scenario_.faults.latent_errors && !scenario_.faults.write_errors) {
        fail("$.faults",
             "at least one fault kind enabled (torn_writes, misdirected_writes, latent_errors or "
             "write_errors: true)",
             "none");
    }
    // A model reports a failed data write only where ModelInfo::write_errors
    // says how (its sync(2), if any, would have to report it too: none does).
    if (scenario_.faults.write_errors && model_->write_errors.empty()) {
        fail("$.faults.write_errors", "a model that reports a failed data write to the application (xfs)",
             "model " + scenario_.model);
    }
    if (scenario_.faults.misdirected_writes && model_->misdirected_writes.empty()) {
        fail("$.faults.misdirected_writes",
             "a model whose metadata blocks name their own block in a verified header (btrfs)",
             "model " + scenario_.model);
    }
    if (model_->faults.empty()) {
        fail("$.faults", "a model whose checksums detect device faults (btrfs, xfs)",
             "model " + scenario_.model);
    }
}

auto Loader::read_config(const Json& value, const std::string& json_path) const
    -> std::map<std::string, std::string> {
    if (!value.is_object()) fail(json_path, "an object", type_name(value));
    Names knob_names;
    for (const auto& knob : model_->knobs) knob_names.push_back(knob.name);
    std::map<std::string, std::string> config;
    for (const auto& item : value.items()) {
        const auto knob_path = key_path(json_path, item.key());
        const auto knob = std::find_if(model_->knobs.begin(), model_->knobs.end(),
                                       [&](const auto& info) { return info.name == item.key(); });
        if (knob == model_->knobs.end()) {
            fail(knob_path, "one of the knobs " + join(knob_names), "an unknown knob");
        }
        config[knob->name] = read_choice(item.value(), knob_path, knob->values, "");
    }
    return config;
}

// --- Values several parts read ----------------------------------------------------------------

auto Loader::read_multiple(const Json& value, const std::string& json_path) const -> std::uint64_t {
    const std::uint64_t bytes = read_size(value, json_path);
    const std::uint64_t block_size = scenario_.device.block_size;
    if (bytes % block_size != 0) {
        fail(json_path, "a multiple of " + std::to_string(block_size), std::to_string(bytes));
    }
    return bytes;
}

auto Loader::read_number(const Json& value, const std::string& json_path) const -> double {
    if (!value.is_number()) fail(json_path, "a number", type_name(value));
    const double number = value.get<double>();
    if (!(number >= 0) || number > 1e9) fail(json_path, "a number from 0 to 1e9", number_text(value));
    return number;
}

// --- The scenario's lookups, the entry points -------------------------------------------------

auto Scenario::machine_of(const Variant& variant) const -> const Machine& {
    if (variant.machine.empty()) return machine;
    return machines.at(variant.machine).machine;  // the loader checked the name
}

auto Scenario::costs_of(const Variant& variant) const -> std::map<std::string, std::uint64_t> {
    std::map<std::string, std::uint64_t> merged = costs;
    if (variant.machine.empty()) return merged;
    for (const auto& [name, ns] : machines.at(variant.machine).costs) merged[name] = ns;
    return merged;
}

auto Scenario::find_variant(const std::string& variant_name) const -> const Variant* {
    for (const auto& variant : variants) {
        if (variant.name == variant_name) return &variant;
    }
    return nullptr;
}

auto Scenario::file_id(const std::string& file_name) const -> std::uint32_t {
    const auto found = std::find(files.begin(), files.end(), file_name);
    SIM_ASSERT(found != files.end());  // The loader checked every file an op names.
    return static_cast<std::uint32_t>(found - files.begin());
}

auto load_scenario(const std::string& path) -> Scenario {
    return parse_scenario(read_text_file(path, "scenario file"), path);
}

auto parse_scenario(const std::string& text, const std::string& path) -> Scenario {
    return Loader(path).load(text);
}

}  // namespace loader
