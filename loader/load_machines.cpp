// Reads the machine of a performance run (memory, its scale, CPUs and their
// topology, cache-line costs), the machine profiles a variant may run on, and
// the calibrated CPU costs the model declares.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "loader/json_reader.hpp"
#include "loader/loader_impl.hpp"
#include "loader/scenario.hpp"
#include "model/info.hpp"

namespace loader {

// The machine of a performance run. "btrfs: fix race between page release and a fast fsync" (patch 3/3)
// ran on 8 vCPUs with 2x to 4x more data than RAM, so page release runs all the time.
void Loader::read_machine(const Json& value) {
    check_keys(value, "$.machine",
               {"cpus", "page_cache", "reclaim_batch", "scale", "sockets", "cores_per_socket", "line_hit_ns",
                "line_miss_ns", "line_miss_remote_ns"},
               {});
    read_cpu_fields(value, "$.machine", scenario_.machine);
    if (value.contains("scale")) {
        scale_ = read_unsigned_in(value.at("scale"), "$.machine.scale", 1, 1024);
        scenario_.machine.scale = scale_;
    }
    if (value.contains("cpus")) {
        scenario_.machine.cpus =
            static_cast<std::uint32_t>(read_unsigned_in(value.at("cpus"), "$.machine.cpus", 1, 1024));
    }
    if (value.contains("page_cache")) {
        scenario_.machine.page_cache_bytes =
            scale_ == 1 ? read_multiple(value.at("page_cache"), "$.machine.page_cache")
                        : read_scaled(value.at("page_cache"), "$.machine.page_cache");
        const std::uint64_t pages = scenario_.machine.page_cache_bytes / scenario_.device.block_size;
        if (pages < 64) {
            fail("$.machine.page_cache",
                 "at least 64 blocks of " + std::to_string(scenario_.device.block_size) + " bytes",
                 std::to_string(scenario_.machine.page_cache_bytes));
        }
        const std::uint64_t block = scenario_.device.block_size;
        // From the memory as stated: kswapd's pass is not scaled (see read_scaled).
        scenario_.machine.reclaim_batch_bytes =
            std::max<std::uint64_t>(32 * block, pages * scale_ / 1000 * block);
    }
    if (value.contains("reclaim_batch")) {
        if (!value.contains("page_cache"))
            fail("$.machine.reclaim_batch", "a page_cache to reclaim from", "none");
        scenario_.machine.reclaim_batch_bytes =
            read_multiple(value.at("reclaim_batch"), "$.machine.reclaim_batch");
        if (scenario_.machine.reclaim_batch_bytes == 0 ||
            scenario_.machine.reclaim_batch_bytes > scenario_.machine.page_cache_bytes / 2) {
            fail("$.machine.reclaim_batch", "a positive size of at most half the page cache",
                 std::to_string(scenario_.machine.reclaim_batch_bytes));
        }
    }
}

// CPUs with identity: sockets of cores_per_socket CPUs, and
// what an access to a shared cache line costs.
void Loader::read_cpu_fields(const Json& value, const std::string& json_path, Machine& machine) const {
    if (value.contains("cpus")) {
        machine.cpus =
            static_cast<std::uint32_t>(read_unsigned_in(value.at("cpus"), json_path + ".cpus", 1, 1024));
    }
    const bool topology = value.contains("sockets") || value.contains("cores_per_socket");
    if (topology && machine.cpus == 0)
        fail(json_path + ".cpus", "a CPU count with sockets or cores_per_socket", "none");
    std::uint64_t sockets = 0;
    if (value.contains("sockets"))
        sockets = read_unsigned_in(value.at("sockets"), json_path + ".sockets", 1, machine.cpus);
    // cores_per_socket alone: the CPUs fill sockets in order (the last one
    // may be partly used, as a VM's vCPUs on a host's sockets).
    if (value.contains("cores_per_socket")) {
        machine.cores_per_socket = static_cast<std::uint32_t>(
            read_unsigned_in(value.at("cores_per_socket"), json_path + ".cores_per_socket", 1, 1024));
    } else if (sockets != 0) {
        machine.cores_per_socket = static_cast<std::uint32_t>(machine.cpus / sockets);
    }
    if (sockets != 0 && sockets * machine.cores_per_socket != machine.cpus) {
        fail(json_path, "cpus = sockets * cores_per_socket",
             std::to_string(machine.cpus) + " CPUs, " + std::to_string(sockets) + " sockets of " +
                 std::to_string(machine.cores_per_socket) + " cores");
    }
    const auto read_line = [&](const char* key, std::uint64_t& field) {
        if (value.contains(key))
            field = read_unsigned_in(value.at(key), json_path + "." + key, 0, 1'000'000'000);
    };
    read_line("line_hit_ns", machine.line_hit_ns);
    read_line("line_miss_ns", machine.line_miss_ns);
    read_line("line_miss_remote_ns", machine.line_miss_remote_ns);
    if (!value.contains("line_miss_remote_ns"))
        machine.line_miss_remote_ns = std::max(machine.line_miss_remote_ns, machine.line_miss_ns);
    if (machine.line_miss_remote_ns < machine.line_miss_ns) {
        fail(json_path + ".line_miss_remote_ns",
             "at least line_miss_ns (" + std::to_string(machine.line_miss_ns) + ")",
             std::to_string(machine.line_miss_remote_ns));
    }
}

// machine.scale: the scenario states memory and the fio data at the seed's own size; the run
// divides both by one factor, so data stays 2x-4x memory as in the seed. Not
// scaled, because what they set is counted in fio blocks of bs, which cannot shrink below a
// page: kswapd's pass (by default 0.1 % of the memory as stated, the seed's 16 MiB), which
// sets how many extent maps one pass drops per bs written, so how many fsyncs go full;
// bs itself; the commit interval. Dirty limits need no scaling in the models: with fsync=1 a
// job never has more than bs dirty. `crashsim perf --vary` shows what each choice moves.
auto Loader::read_scaled(const Json& value, const std::string& json_path) const -> std::uint64_t {
    if (scale_ == 1) return read_size(value, json_path);
    const std::uint64_t given = read_size(value, json_path);
    if (given % scale_ != 0) {
        fail(json_path, "a multiple of machine.scale (" + std::to_string(scale_) + ")",
             std::to_string(given));
    }
    const std::uint64_t bytes = given / scale_;
    if (bytes % scenario_.device.block_size != 0) {
        fail(json_path,
             "a multiple of the block size (" + std::to_string(scenario_.device.block_size) + ")" +
                 (scale_ > 1 ? " once divided by machine.scale (" + std::to_string(scale_) + ")"
                             : std::string()),
             std::to_string(given));
    }
    return bytes;
}

// "machines": {NAME: {cpus, sockets, cores_per_socket, line_*_ns, costs, about}}:
// machine profiles a variant may run on; each starts from the
// scenario's machine.
void Loader::read_machines(const Json& value) {
    if (!value.is_object() || value.empty())
        fail("$.machines", "a non-empty object", value.is_object() ? "an empty object" : type_name(value));
    for (const auto& item : value.items()) {
        const std::string path = key_path("$.machines", item.key());
        check_keys(item.value(), path,
                   {"about", "cpus", "sockets", "cores_per_socket", "line_hit_ns", "line_miss_ns",
                    "line_miss_remote_ns", "costs"},
                   {"cpus"});
        MachineProfile profile;
        profile.name = read_name(Json(item.key()), path);
        if (item.value().contains("about"))
            profile.about = read_string(item.value().at("about"), path + ".about");
        profile.machine = scenario_.machine;
        read_cpu_fields(item.value(), path, profile.machine);
        if (item.value().contains("costs"))
            profile.costs = read_cost_map(item.value().at("costs"), path + ".costs");
        scenario_.machines[profile.name] = profile;
    }
}

// "costs": {NAME: ns}: calibrated CPU costs the model declares (model::CostInfo).
void Loader::read_costs(const Json& value) { scenario_.costs = read_cost_map(value, "$.costs"); }

auto Loader::read_cost_map(const Json& value, const std::string& json_path) const
    -> std::map<std::string, std::uint64_t> {
    Names declared;
    for (const auto& cost : model_->costs) declared.push_back(cost.name);
    if (!value.is_object()) fail(json_path, "an object", type_name(value));
    std::map<std::string, std::uint64_t> costs;
    for (const auto& item : value.items()) {
        const std::string path = key_path(json_path, item.key());
        if (std::find(declared.begin(), declared.end(), item.key()) == declared.end()) {
            fail(path, declared.empty() ? "no key (model " + model_->name + " declares no costs)"
                                        : "a cost of model " + model_->name + ": " + join(declared),
                 "an unknown key");
        }
        costs[item.key()] = read_unsigned_in(item.value(), path, 1, 1'000'000'000);
    }
    return costs;
}

}  // namespace loader
