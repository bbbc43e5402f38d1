#pragma once
// How a model declares its knobs and operations (model/btrfs/super.cpp).
//
// A knob declared once: its values as a table of {text, typed value} pairs.
// Both what the model declares (KnobInfo: the values a scenario may write)
// and how the model's factory parses a configuration come from the one
// table, so a value cannot be declared without being parsed, or parsed
// without being declared.
#include <string>
#include <utility>
#include <vector>

#include "model/filesystem.hpp"
#include "model/info.hpp"
#include "sim/assert.hpp"

namespace model {

template <typename T>
struct Knob {
    std::string name;
    std::vector<std::pair<std::string, T>> values;
    std::string default_value;
    std::string about;

    [[nodiscard]] auto info() const -> KnobInfo {
        KnobInfo result{name, {}, default_value, about};
        for (const auto& [text, value] : values) result.values.push_back(text);
        return result;
    }
    /// The typed value `config` sets (the loader checked it is declared; the
    /// registry filled in the default).
    [[nodiscard]] auto parse(const Config& config) const -> T {
        const std::string& text = config.at(name);
        for (const auto& [declared, value] : values) {
            if (declared == text) return value;
        }
        SIM_ASSERT(false && "knob value validated by the loader");
        return values.front().second;
    }
};

/// The fields most operations take: the file, and a byte range (`offset`,
/// `length`), required or defaulting to the whole file.
inline auto file_field() -> FieldInfo { return {"file", FieldKind::file, true}; }
inline auto range_fields(bool required) -> std::vector<FieldInfo> {
    return {file_field(), {"offset", FieldKind::offset, required}, {"length", FieldKind::length, required}};
}
/// `fields` and an optional boolean field (direct, keep_size).
inline auto with_flag(std::vector<FieldInfo> fields, const char* flag) -> std::vector<FieldInfo> {
    fields.push_back({flag, FieldKind::flag, false});
    return fields;
}

/// The op table of a model whose operations are the enum `Op`: entry i must
/// describe the operation whose enum value is i, so that execute() can
/// switch on static_cast<Op>(call.op) (OpId is the index in this table).
template <typename Op>
auto op_table(std::vector<std::pair<Op, OpInfo>> entries) -> std::vector<OpInfo> {
    std::vector<OpInfo> ops;
    for (auto& [id, info] : entries) {
        SIM_ASSERT(static_cast<std::size_t>(id) == ops.size() && "op table out of enum order");
        ops.push_back(std::move(info));
    }
    return ops;
}

}  // namespace model
