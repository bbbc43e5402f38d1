#pragma once
// What a model declares about itself: its knobs (each patch is a knob), the
// operations a scenario may use with their fields, and its yield points. The
// scenario loader validates against this; `crashsim list` prints it.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/yield_point.hpp"

namespace model {

struct KnobInfo {
    std::string name;
    std::vector<std::string> values;
    std::string default_value;
    std::string about;
};

/// The fields an operation may carry besides "op".
enum class FieldKind : std::uint8_t {
    file,    // string naming a file; must exist (created earlier) unless the op creates it
    offset,  // unsigned byte offset, multiple of the block size
    length,  // unsigned byte count > 0, multiple of the block size
    flag,    // boolean
};

struct FieldInfo {
    std::string name;
    FieldKind kind;
    bool required;
};

/// What an operation means to the oracle (checkers/oracle.hpp), so that the
/// code running workloads never needs a model's operation names.
enum class OracleEffect : std::uint8_t {
    none,
    write_data,  // file, offset, length now hold this operation's contents
    zero_range,  // file, offset, length now read as zeros (hole punch, zero range)
    fsync_file,  // once it returns, the file's data and size are promised
    sync_all,    // once it returns, every existing file is promised
    set_size,    // truncate: the file's size becomes `length`; zeros past it
    extend_size, // fallocate: without keep_size, the size becomes max(size, offset + length)
};

struct OpInfo {
    std::string name;
    std::string about;
    std::vector<FieldInfo> fields;
    bool creates_file = false;  // "file" names a new file
    OracleEffect effect = OracleEffect::none;
};

struct ModelInfo {
    std::string name;
    std::string about;
    std::vector<KnobInfo> knobs;
    std::vector<OpInfo> ops;
    std::vector<std::string> model_tasks;  // tasks the model spawns itself ("endio")
    std::vector<const sim::YieldPoint*> yield_points;  // every point, in story order
};

/// A knob value naming no real kernel starts with this prefix; a run that
/// uses one says so in its story.
inline constexpr std::string_view hypothetical_prefix = "hypothetical-";
/// One story line per knob of `config` set to a hypothetical value.
auto hypothetical_notes(const ModelInfo& info, const std::map<std::string, std::string>& config)
    -> std::vector<std::string>;

/// Every model compiled in, in a stable order.
auto models() -> const std::vector<ModelInfo>&;
auto find_model(const std::string& name) -> const ModelInfo*;

}  // namespace model
