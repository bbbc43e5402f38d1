#pragma once
// Repro files: everything needed to replay a failing schedule byte for byte,
// the scenario included, so a repro stays valid when the scenario file moves.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/json_reader.hpp"
#include "runner/atomic_file.hpp"
#include "runner/campaign.hpp"
#include "runner/runner.hpp"

namespace scenarios {

struct Repro {
    std::string scenario_path;
    std::string scenario_text;
    std::string variant;
    std::string strategy;
    std::uint64_t seed = 0;  // the campaign's
    std::uint64_t schedule_index = 0;
    std::uint64_t schedule_seed = 0;
    std::vector<std::uint32_t> choices;
    /// The bounds the choices were taken under (the candidate lists depend on
    /// them); absent in files written before them: 0 and 0, that engine's.
    ExploreBounds bounds{0, 0};
    CrashRecord crash;
    std::string checker;
    std::string message;
    std::uint64_t trace_hash = 0;
    std::vector<std::string> shrink_log;  // what shrinking removed, if it ran
};

/// The repro of a campaign's first failing schedule (report.found, with a
/// crash record: not a liveness or deadlock violation).
auto make_repro(const FuzzReport& report, const FuzzRequest& request, const std::string& scenario_path,
                const std::string& scenario_text, const std::string& variant) -> Repro;
/// "repro-SCENARIO-VARIANT-STRATEGY-seedN.json", each part made file-name safe.
auto repro_file_name(const std::string& scenario, const std::string& variant, const std::string& strategy,
                     std::uint64_t seed) -> std::string;
/// "result-SCENARIO-VARIANT-STRATEGY-seedN-shardKofN.json", the same.
auto result_file_name(const std::string& scenario, const std::string& variant, const FuzzRequest& request)
    -> std::string;

/// Writes to a temporary name and renames, so a reader sees all or nothing.
void write_repro(const Repro& repro, const std::string& path);
/// Throws InputError naming the file and the JSON path on a bad repro.
auto read_repro(const std::string& path) -> Repro;
/// ExploreBounds as repro and campaign result files write them, under "explore".
auto explore_json(const ExploreBounds& bounds) -> nlohmann::json;
/// The "explore" object of a repro or result file; a file without one was
/// written before these choices existed: 0 and 0. Throws InputError.
auto read_explore_json(const Json& file, const JsonReader& in) -> ExploreBounds;
/// "crashsim_repro": 1 and the like: the format number `key` of a repro or result file.
void read_format(const Json& file, const char* key, int format, const JsonReader& in);
/// A hash written as 16 hex digits.
auto read_hex64(const Json& value, const std::string& json_path, const JsonReader& in) -> std::uint64_t;

}  // namespace scenarios
