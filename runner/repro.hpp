#pragma once
// Repro files: everything needed to replay a failing schedule byte for byte,
// the scenario included, so a repro stays valid when the scenario file moves.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/json_reader.hpp"
#include "runner/atomic_file.hpp"
#include "runner/campaign.hpp"
#include "runner/hex.hpp"
#include "runner/runner.hpp"

namespace runner {

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
    loader::ExploreBounds bounds{0, 0};
    /// Absent for a violation without a power cut (liveness, deadlock).
    std::optional<CrashRecord> crash;
    std::string checker;
    std::string message;
    std::uint64_t trace_hash = 0;
    std::vector<std::string> shrink_log;  // what shrinking removed, if it ran
};

/// The repro of a campaign's first failing schedule (report.found); a
/// liveness or deadlock violation has no crash record.
auto make_repro(const FuzzReport& report, const FuzzRequest& request, const std::string& scenario_path,
                const std::string& scenario_text, const std::string& variant) -> Repro;
/// "repro-SCENARIO-VARIANT-STRATEGY-seedN-scheduleI.json", each part made
/// file-name safe, with "-unitU" before "-schedule" for a dfs shard's
/// schedule (whose index counts within its unit): one name per failing
/// schedule, so shards writing to one directory never overwrite each other's
/// repros.
auto repro_file_name(const std::string& scenario, const std::string& variant, const std::string& strategy,
                     std::uint64_t seed, std::uint64_t schedule_index,
                     std::optional<std::uint64_t> unit = std::nullopt) -> std::string;
/// "result-SCENARIO-VARIANT-STRATEGY-seedN-shardKofN.json", the same.
auto result_file_name(const std::string& scenario, const std::string& variant, const FuzzRequest& request)
    -> std::string;

/// Writes to a temporary name and renames, so a reader sees all or nothing.
void write_repro(const Repro& repro, const std::string& path);
/// Throws InputError naming the file and the JSON path on a bad repro.
auto read_repro(const std::string& path) -> Repro;
/// The same on a repro's text (`path` names it in messages; the fuzz harness
/// tests/fuzz/ reads from memory).
auto parse_repro(const std::string& text, const std::string& path) -> Repro;

/// A repro file read and checked against what it claims (read_repro, then
/// its scenario loads, names its variant, and replays to the recorded run).
struct LoadedRepro {
    Repro repro;
    loader::Scenario scenario;
    RunOutcome replayed;  // the traced replay
    [[nodiscard]] auto variant() const -> const loader::Variant& {
        return *scenario.find_variant(repro.variant);
    }
};
/// The one way every verb reads a repro (replay, shrink): throws InputError
/// naming the file and the JSON path when the file is malformed, its
/// scenario does not load, its choices diverge, or the replay does not
/// reproduce the recorded violation and trace hash.
auto load_repro(const std::string& path) -> LoadedRepro;
auto load_repro_text(const std::string& text, const std::string& path) -> LoadedRepro;
/// ExploreBounds as repro and campaign result files write them, under "explore".
auto explore_json(const loader::ExploreBounds& bounds) -> nlohmann::json;
/// The "explore" object of a repro or result file; a file without one was
/// written before these choices existed: 0 and 0. Throws InputError.
auto read_explore_json(const loader::Json& file, const loader::JsonReader& in) -> loader::ExploreBounds;
/// "crashsim_repro": 1 and the like: the format number `key` of a repro or result file.
void read_format(const loader::Json& file, const char* key, int format, const loader::JsonReader& in);
/// A hash written as 16 hex digits.
auto read_hex64(const loader::Json& value, const std::string& json_path, const loader::JsonReader& in)
    -> std::uint64_t;

}  // namespace runner
