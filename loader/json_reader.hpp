#pragma once
// The one JSON reader of scenarios, repros and campaign results: reads a file,
// parses it (duplicate keys, nesting depth and numbers checked while parsing,
// in time linear in the input) and reads typed values at a JSON path. Every
// defect is one InputError: "<file>: <JSON path>: expected X, got Y".
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/scenario.hpp"

namespace loader {

using Json = nlohmann::ordered_json;
using Names = std::vector<std::string>;

/// Arrays and objects nest at most this deep; no crashsim file needs more than
/// ten levels, and a deeper file is hostile input, refused before it costs memory.
constexpr std::size_t json_depth_max = 100;

/// The whole file. `what` names it in messages ("scenario file": "expected a
/// readable scenario file, got a directory").
auto read_text_file(const std::string& path, const std::string& what = "file") -> std::string;

/// The text of each non-integer number of a parsed document as the file writes
/// it (a double prints otherwise: 18446744073709551616.0 as 1.8446744073709552e+19),
/// by the address of its value. Looked up, never iterated.
using NumberTexts = std::map<const Json*, std::string>;

/// Parses `text`, read from `path`: a syntax error names its line and column, a
/// key given twice, nesting deeper than json_depth_max, an integer outside 64
/// bits and a number a double cannot hold name their JSON path. Throws InputError.
/// With `numbers`, records the written text of every non-integer number.
auto parse_json(const std::string& text, const std::string& path, NumberTexts* numbers = nullptr) -> Json;

/// The characters of a name (scenarios/README.md, and the pattern of "name" in
/// scenarios/schema/scenario.schema.json): ASCII letters, digits and these.
constexpr std::string_view name_punctuation = "_-./:@+";

/// Throws LoadInterrupted when a stop was requested (SIGINT, SIGTERM); the
/// reader and the loader poll it while they read, parse and expand.
void poll_stop(const std::string& path);

/// While one lives, loading on this thread does not poll the stop request. For
/// re-parsing a scenario text that has loaded once already (shrink's candidates):
/// there a stop is the caller's to notice between runs, so that it can still
/// write what it reached, not a reason to abandon a parse of a few lines.
class StopPollingPaused {
public:
    StopPollingPaused();
    ~StopPollingPaused();
    StopPollingPaused(const StopPollingPaused&) = delete;
    auto operator=(const StopPollingPaused&) -> StopPollingPaused& = delete;
};

/// "$.a.b", or "$.a[\"not an identifier\"]".
auto key_path(const std::string& parent, const std::string& key) -> std::string;
auto index_path(const std::string& parent, std::size_t index) -> std::string;
/// The JSON type of a value, as a message names it after "got".
auto type_name(const Json& value) -> std::string;
auto json_quoted(const std::string& text) -> std::string;
auto join(const Names& names) -> std::string;
auto contains(const Names& names, const std::string& name) -> bool;

[[noreturn]] void fail_at(const std::string& path, const std::string& json_path, const std::string& expected,
                          const std::string& got);

/// Typed reads from a parsed file, each naming the file and the JSON path when
/// the value is not what is expected.
class JsonReader {
public:
    explicit JsonReader(std::string path, const NumberTexts* numbers = nullptr)
        : path_(std::move(path)), numbers_(numbers) {}

    /// A number as the file writes it (when parse_json recorded it), else as a double prints.
    [[nodiscard]] auto number_text(const Json& value) const -> std::string;

    [[noreturn]] void fail(const std::string& json_path, const std::string& expected,
                           const std::string& got) const {
        fail_at(path_, json_path, expected, got);
    }

    /// An object whose keys are all `allowed` and include all `required`.
    void check_keys(const Json& value, const std::string& json_path, const Names& allowed,
                    const Names& required) const;
    void check_array(const Json& value, const std::string& json_path) const;
    /// The member `key` of an object known to be one (check_keys), or a "required key" failure.
    auto member(const Json& object, const std::string& json_path, const std::string& key) const
        -> const Json&;

    /// Printable text: no control characters (U+0000 to U+001F, U+007F to U+009F),
    /// since a NUL or an escape would cut or garble the terminal story.
    auto read_string(const Json& value, const std::string& json_path) const -> std::string;
    /// Printable text of at least one character (a path, a message).
    auto read_text(const Json& value, const std::string& json_path) const -> std::string;
    /// A name (of a scenario, file, task, variant, yield point, checker,
    /// strategy): at least one of name_characters, which the story, the trace
    /// and file names print as they are.
    auto read_name(const Json& value, const std::string& json_path) const -> std::string;
    auto read_choice(const Json& value, const std::string& json_path, const Names& choices,
                     const std::string& what) const -> std::string;
    auto read_bool(const Json& value, const std::string& json_path) const -> bool;
    /// An integer from 0 to 2^64 - 1 (not 1.0, not -1).
    auto read_unsigned(const Json& value, const std::string& json_path) const -> std::uint64_t;
    auto read_unsigned_in(const Json& value, const std::string& json_path, std::uint64_t min,
                          std::uint64_t max) const -> std::uint64_t;
    auto read_positive(const Json& value, const std::string& json_path) const -> std::uint64_t;
    /// A byte size or offset: an unsigned integer, or a string as xfs_io writes
    /// one: digits and an optional suffix k, m, g, t, p, e (powers of 1024, either case).
    auto read_size(const Json& value, const std::string& json_path) const -> std::uint64_t;

protected:
    std::string path_;
    const NumberTexts* numbers_ = nullptr;
};

enum class SizeText : std::uint8_t { ok, malformed, too_large };
/// The bytes a string such as "64k" spells.
auto parse_size(const std::string& text, std::uint64_t& bytes) -> SizeText;

}  // namespace loader
