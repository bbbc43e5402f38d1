#include "loader/json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <set>
#include <sys/stat.h>
#include <system_error>

#include "sim/stop.hpp"

namespace loader {

// Non-ASCII characters escaped too, so that a message never carries a control or
// direction-changing character to the terminal.
auto json_quoted(const std::string& text) -> std::string {
    return Json(text).dump(-1, ' ', true, nlohmann::detail::error_handler_t::replace);
}

auto join(const Names& names) -> std::string {
    std::string joined;
    for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
    return joined;
}

auto contains(const Names& names, const std::string& name) -> bool {
    return std::find(names.begin(), names.end(), name) != names.end();
}

auto type_name(const Json& value) -> std::string {
    if (value.is_string()) return "a string";
    if (value.is_array()) return "an array";
    if (value.is_object()) return "an object";
    if (value.is_boolean()) return "a boolean";
    if (value.is_null()) return "null";
    return "a number";
}

namespace {

auto is_identifier(const std::string& key) -> bool {
    if (key.empty() || (std::isdigit(static_cast<unsigned char>(key[0])) != 0)) return false;
    return std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    });
}

auto key_segment(const std::string& key) -> std::string {
    return is_identifier(key) ? "." + key : "[" + json_quoted(key) + "]";
}

/// Line and column (both from 1, column in bytes) of the byte nlohmann reports,
/// which is the 1-based index of the offending byte, or size + 1 at end of input.
auto line_column(const std::string& text, std::size_t byte) -> std::string {
    const std::size_t index = std::min(byte == 0 ? 0 : byte - 1, text.size());
    std::size_t line = 1;
    std::size_t line_start = 0;
    for (std::size_t position = 0; position < index; position++) {
        if (text[position] == '\n') {
            line++;
            line_start = position + 1;
        }
    }
    const std::size_t column = index - line_start + 1;
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// Builds the document as nlohmann's own DOM parser does, and checks as it goes.
/// Each open array or object keeps only its own key or index, so the JSON path
/// of an element is assembled when a message needs it: memory and time stay
/// linear in the input. (nlohmann's callback parser, used before, rescans the
/// parent container at the end of every object: quadratic in an ops array.)
class CheckingParser : public nlohmann::detail::json_sax_dom_parser<Json> {
public:
    using Base = nlohmann::detail::json_sax_dom_parser<Json>;

    CheckingParser(Json& root, const std::string& path, const std::string& text)
        : Base(root, true), path_(path), text_(text) {}

    auto null() -> bool { return value(), Base::null(); }
    auto boolean(bool given) -> bool { return value(), Base::boolean(given); }
    auto number_integer(number_integer_t given) -> bool { return value(), Base::number_integer(given); }
    auto number_unsigned(number_unsigned_t given) -> bool { return value(), Base::number_unsigned(given); }
    auto number_float(number_float_t given, const string_t& written) -> bool {
        // An integer literal read as a double lies outside 64 bits: it would be
        // printed and compared as a rounded double, not as written.
        if (written.find_first_of(".eE") == std::string::npos) {
            fail_at(path_, next_path(), "an integer from -9223372036854775808 to 18446744073709551615",
                    written);
        }
        floats_.push_back(written);
        return value(), Base::number_float(given, written);
    }
    auto string(string_t& given) -> bool { return value(), Base::string(given); }
    /// The written text of each non-integer number, in document order.
    [[nodiscard]] auto floats() const -> const std::vector<std::string>& { return floats_; }
    auto start_object(std::size_t size) -> bool {
        open(false);
        return Base::start_object(size);
    }
    auto key(string_t& given) -> bool {
        Frame& frame = frames_.back();
        if (!frame.keys.insert(given).second) {
            fail_at(path_, path_of(frames_.size() - 1) + key_segment(given), "each key once per object",
                    "a duplicate key");
        }
        frame.key = given;
        return Base::key(given);
    }
    auto end_object() -> bool {
        frames_.pop_back();
        return Base::end_object();
    }
    auto start_array(std::size_t size) -> bool {
        open(true);
        return Base::start_array(size);
    }
    auto end_array() -> bool {
        frames_.pop_back();
        return Base::end_array();
    }
    template <class Exception>
    auto parse_error(std::size_t byte, const std::string& token, const Exception& error) -> bool {
        // 406: a number literal past what a double holds (1e400), which nlohmann reports
        // as out_of_range, not as a syntax error.
        if (error.id == 406) fail_at(path_, next_path(), "a number a double can hold", token);
        fail_at(path_, "$", "valid JSON", "a syntax error at " + line_column(text_, byte));
    }

private:
    struct Frame {
        bool is_array = false;
        std::size_t index_next = 0;  // array: the index of the next element
        std::string key;             // object: the key of the current member
        std::set<std::string> keys;  // object: keys seen
    };

    /// The JSON path of frames_[0..level)'s current elements.
    auto path_of(std::size_t level) const -> std::string {
        std::string json_path = "$";
        for (std::size_t i = 0; i < level; i++) {
            const Frame& frame = frames_[i];
            json_path +=
                frame.is_array ? "[" + std::to_string(frame.index_next - 1) + "]" : key_segment(frame.key);
        }
        return json_path;
    }

    /// The JSON path of the value about to be read.
    auto next_path() const -> std::string {
        if (frames_.empty()) return "$";
        const Frame& frame = frames_.back();
        return path_of(frames_.size() - 1) +
               (frame.is_array ? "[" + std::to_string(frame.index_next) + "]" : key_segment(frame.key));
    }

    void value() {
        if (!frames_.empty() && frames_.back().is_array) frames_.back().index_next++;
        if (++values_ % 4096 == 0) poll_stop(path_);
    }

    void open(bool is_array) {
        if (frames_.size() == json_depth_max) {
            fail_at(path_, next_path(),
                    "arrays and objects nested at most " + std::to_string(json_depth_max) + " deep",
                    "deeper nesting");
        }
        value();
        Frame frame;
        frame.is_array = is_array;
        frames_.push_back(std::move(frame));
    }

    const std::string& path_;
    const std::string& text_;
    std::vector<Frame> frames_;
    std::uint64_t values_ = 0;
    std::vector<std::string> floats_;
};

/// Pairs the parsed document's non-integer numbers, in document order (an
/// ordered_json keeps its keys in it), with their written texts.
void record_floats(const Json& value, const std::vector<std::string>& written, std::size_t& next,
                   NumberTexts& numbers) {
    if (value.is_number_float()) {
        if (next < written.size()) numbers[&value] = written[next++];
        return;
    }
    if (!value.is_structured()) return;
    for (const Json& element : value) record_floats(element, written, next, numbers);
}

}  // namespace

namespace {
thread_local int stop_polling_paused = 0;
}  // namespace

StopPollingPaused::StopPollingPaused() { stop_polling_paused++; }
StopPollingPaused::~StopPollingPaused() { stop_polling_paused--; }

void poll_stop(const std::string& path) {
    if (stop_polling_paused == 0 && sim::stop_requested()) throw LoadInterrupted(path);
}

auto key_path(const std::string& parent, const std::string& key) -> std::string {
    return parent + key_segment(key);
}

auto index_path(const std::string& parent, std::size_t index) -> std::string {
    return parent + "[" + std::to_string(index) + "]";
}

void fail_at(const std::string& path, const std::string& json_path, const std::string& expected,
             const std::string& got) {
    throw InputError(path + ": " + json_path + ": expected " + expected + ", got " + got);
}

auto read_text_file(const std::string& path, const std::string& what) -> std::string {
    const auto unreadable = [&](const std::string& reason) {
        fail_at(path, "$", "a readable " + what, reason);
    };
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0) unreadable(std::generic_category().message(errno));
    if (S_ISDIR(status.st_mode)) unreadable("a directory");
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) unreadable(std::generic_category().message(errno));
    std::string text;
    std::vector<char> buffer(std::size_t{1} << 16);
    std::size_t bytes_read = 0;
    while ((bytes_read = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) {
        text.append(buffer.data(), bytes_read);
        poll_stop(path);
    }
    if (std::ferror(file.get()) != 0) unreadable(std::generic_category().message(errno));
    return text;
}

auto parse_json(const std::string& text, const std::string& path, NumberTexts* numbers) -> Json {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        fail_at(path, "$", "valid JSON", text.empty() ? "an empty file" : "only white space");
    }
    Json root;
    CheckingParser parser(root, path, text);
    Json::sax_parse(text, &parser, Json::input_format_t::json, true, false);
    if (numbers != nullptr && !parser.floats().empty()) {
        // The elements' addresses are final now, and stay so when root is returned.
        std::size_t next = 0;
        record_floats(root, parser.floats(), next, *numbers);
    }
    return root;
}

void JsonReader::check_keys(const Json& value, const std::string& json_path, const Names& allowed,
                            const Names& required) const {
    if (!value.is_object()) fail(json_path, "an object", type_name(value));
    for (const auto& item : value.items()) {
        if (!contains(allowed, item.key())) {
            fail(key_path(json_path, item.key()), "one of the keys " + join(allowed), "an unknown key");
        }
    }
    for (const auto& key : required) {
        if (!value.contains(key)) fail(key_path(json_path, key), "a required key", "nothing");
    }
}

void JsonReader::check_array(const Json& value, const std::string& json_path) const {
    if (!value.is_array()) fail(json_path, "an array", type_name(value));
}

auto JsonReader::member(const Json& object, const std::string& json_path, const std::string& key) const
    -> const Json& {
    if (!object.is_object()) fail(json_path, "an object", type_name(object));
    const auto found = object.find(key);
    if (found == object.end()) fail(key_path(json_path, key), "a required key", "nothing");
    return *found;
}

auto JsonReader::read_string(const Json& value, const std::string& json_path) const -> std::string {
    if (!value.is_string()) fail(json_path, "a string", type_name(value));
    auto text = value.get<std::string>();
    // The parser has checked the UTF-8: U+0080 to U+009F are the bytes C2 80 to C2 9F.
    bool printable = true;
    for (std::size_t i = 0; i < text.size() && printable; i++) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const bool c1 = byte == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0;
        printable = byte >= 0x20 && byte != 0x7f && !c1;
    }
    if (!printable) fail(json_path, "printable text (no control characters)", json_quoted(text));
    return text;
}

auto JsonReader::read_text(const Json& value, const std::string& json_path) const -> std::string {
    if (!value.is_string()) fail(json_path, "a non-empty string", type_name(value));
    auto text = read_string(value, json_path);
    if (text.empty()) fail(json_path, "a non-empty string", "an empty string");
    return text;
}

auto JsonReader::read_name(const Json& value, const std::string& json_path) const -> std::string {
    const std::string expected = "a name of ASCII letters, digits and " + std::string(name_punctuation);
    if (!value.is_string()) fail(json_path, expected, type_name(value));
    auto name = value.get<std::string>();
    if (name.empty()) fail(json_path, expected, "an empty string");
    const bool named = std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               name_punctuation.find(c) != std::string_view::npos;
    });
    if (!named) fail(json_path, expected, json_quoted(name));
    return name;
}

auto JsonReader::read_choice(const Json& value, const std::string& json_path, const Names& choices,
                             const std::string& what) const -> std::string {
    const std::string expected = "one of " + what + join(choices);
    if (!value.is_string()) fail(json_path, expected, type_name(value));
    auto choice = value.get<std::string>();
    if (!contains(choices, choice)) fail(json_path, expected, json_quoted(choice));
    return choice;
}

auto JsonReader::read_bool(const Json& value, const std::string& json_path) const -> bool {
    if (!value.is_boolean()) fail(json_path, "a boolean", type_name(value));
    return value.get<bool>();
}

auto JsonReader::read_unsigned(const Json& value, const std::string& json_path) const -> std::uint64_t {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>();
    // nlohmann reads "-0" as a signed integer; it is still zero.
    if (value.is_number_integer() && value.get<std::int64_t>() == 0) return 0;
    fail(json_path, "an unsigned integer", value.is_number() ? number_text(value) : type_name(value));
}

auto JsonReader::number_text(const Json& value) const -> std::string {
    if (numbers_ != nullptr) {
        const auto found = numbers_->find(&value);
        if (found != numbers_->end()) return found->second;
    }
    return value.dump();
}

auto JsonReader::read_unsigned_in(const Json& value, const std::string& json_path, std::uint64_t min,
                                  std::uint64_t max) const -> std::uint64_t {
    const std::uint64_t number = read_unsigned(value, json_path);
    if (number < min || number > max) {
        fail(json_path, "an unsigned integer from " + std::to_string(min) + " to " + std::to_string(max),
             std::to_string(number));
    }
    return number;
}

auto JsonReader::read_positive(const Json& value, const std::string& json_path) const -> std::uint64_t {
    const std::uint64_t number = read_unsigned(value, json_path);
    if (number == 0) fail(json_path, "an unsigned integer greater than 0", "0");
    return number;
}

auto parse_size(const std::string& text, std::uint64_t& bytes) -> SizeText {
    std::size_t digits = 0;
    std::uint64_t number = 0;
    bool too_large = false;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) {
        too_large = too_large || __builtin_mul_overflow(number, 10, &number) ||
                    __builtin_add_overflow(number, static_cast<std::uint64_t>(text[digits] - '0'), &number);
        digits++;
    }
    if (digits == 0 || text.size() - digits > 1) return SizeText::malformed;
    unsigned shift = 0;
    if (digits < text.size()) {
        static const std::string suffixes = "kmgtpe";  // xfs_io's cvtnum, powers of 1024
        const auto at =
            suffixes.find(static_cast<char>(std::tolower(static_cast<unsigned char>(text[digits]))));
        if (at == std::string::npos) return SizeText::malformed;
        shift = 10 * static_cast<unsigned>(at + 1);
    }
    if (too_large || (shift != 0 && number > (~std::uint64_t{0} >> shift))) return SizeText::too_large;
    bytes = number << shift;
    return SizeText::ok;
}

auto JsonReader::read_size(const Json& value, const std::string& json_path) const -> std::uint64_t {
    const std::string expected = "an unsigned integer or a size such as 64k, 17m, 1g";
    if (!value.is_string()) {
        if (!value.is_number()) fail(json_path, expected, type_name(value));
        return read_unsigned(value, json_path);
    }
    const auto text = value.get<std::string>();
    std::uint64_t bytes = 0;
    switch (parse_size(text, bytes)) {
        case SizeText::ok:
            return bytes;
        case SizeText::malformed:
            fail(json_path, expected, json_quoted(text));
        case SizeText::too_large:
            fail(json_path, "a size below 2^64 bytes", json_quoted(text));
    }
    fail(json_path, expected, json_quoted(text));
}

}  // namespace loader
