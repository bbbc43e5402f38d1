// Reads the set-up and the tasks: each op checked against the model's declaration of it
// (model::OpInfo), each file it names against the files created before it.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "loader/json_reader.hpp"
#include "loader/loader_impl.hpp"
#include "loader/scenario.hpp"
#include "model/info.hpp"
#include "sim/assert.hpp"

namespace loader {
namespace {

// An op's byte range ends at or below 2^44 (16 TiB), so that later sums of offsets and
// lengths in the model cannot overflow.
constexpr std::uint64_t file_end_bytes_max = std::uint64_t{1} << 44;

}  // namespace

void Loader::read_setup(const Json& value) {
    check_array(value, "$.setup");
    for (std::size_t index = 0; index < value.size(); index++) {
        if (index % 4096 == 0) poll_stop(path_);
        scenario_.setup.push_back(read_op(value[index], index_path("$.setup", index), files_setup_,
                                          "a file created earlier in setup"));
    }
}

void Loader::read_tasks(const Json& value) {
    check_array(value, "$.tasks");
    if (value.empty()) fail("$.tasks", "a non-empty array", "an empty array");
    // A declared workload's tasks (job0.., thread0..) come first; a task of the file may not
    // take one of their names.
    std::set<std::string> names;
    for (const auto& task : scenario_.tasks) names.insert(task.name);
    for (std::size_t index = 0; index < value.size(); index++) {
        read_task(value[index], index_path("$.tasks", index), names);
    }
}

void Loader::read_task(const Json& value, const std::string& json_path,
                       std::set<std::string>& names) {
    check_keys(value, json_path, {"name", "ops"}, {"name", "ops"});
    const auto name_path = json_path + ".name";
    Task task{read_name(value.at("name"), name_path), {}, std::nullopt};
    if (contains(model_->model_tasks, task.name)) {
        fail(name_path, "a name other than the model's own tasks " + join(model_->model_tasks),
             json_quoted(task.name));
    }
    if (!names.insert(task.name).second) {
        fail(name_path, "a task name not used before", json_quoted(task.name));
    }
    const auto& ops = value.at("ops");
    const auto ops_path = json_path + ".ops";
    check_array(ops, ops_path);
    if (ops.empty()) fail(ops_path, "a non-empty array", "an empty array");
    // A task sees the files of setup and its own, never another task's: the order of
    // tasks is up to the schedule, so another task's file may not exist yet.
    std::set<std::string> visible = files_setup_;
    for (std::size_t index = 0; index < ops.size(); index++) {
        if (index % 4096 == 0) poll_stop(path_);
        task.ops.push_back(read_op(ops[index], index_path(ops_path, index), visible,
                                   "a file created earlier in setup or in this task"));
    }
    scenario_.tasks.push_back(std::move(task));
}

auto Loader::read_op(const Json& value, const std::string& json_path,
                     std::set<std::string>& visible, const std::string& visible_what) -> Op {
    const auto& info = find_op(value, json_path);
    Names allowed = {"op"};
    Names required = {"op"};
    for (const auto& field : info.fields) {
        allowed.push_back(field.name);
        if (field.required) required.push_back(field.name);
    }
    check_keys(value, json_path, allowed, required);
    Op op;
    op.name = info.name;
    op.json_path = json_path;
    for (const auto& field : info.fields) {
        if (!value.contains(field.name)) continue;
        const auto field_path = key_path(json_path, field.name);
        read_field(field, value.at(field.name), field_path, op);
        if (field.kind == model::FieldKind::file) {
            read_file(value.at(field.name), field_path, info.creates_file, visible, visible_what);
        }
    }
    check_op_end(op, json_path);
    return op;
}

auto Loader::find_op(const Json& value, const std::string& json_path) const
    -> const model::OpInfo& {
    if (!value.is_object()) fail(json_path, "an object", type_name(value));
    const auto op_path = json_path + ".op";
    if (!value.contains("op")) fail(op_path, "a required key", "nothing");
    Names names;
    for (const auto& info : model_->ops) names.push_back(info.name);
    return *model_op(read_choice(value.at("op"), op_path, names, "the ops "));
}

auto Loader::model_op(const std::string& name) const -> const model::OpInfo* {
    const auto found = std::find_if(model_->ops.begin(), model_->ops.end(),
                                    [&](const auto& info) { return info.name == name; });
    return found == model_->ops.end() ? nullptr : &*found;
}

void Loader::read_field(const model::FieldInfo& field, const Json& value,
                        const std::string& json_path, Op& op) const {
    switch (field.kind) {
        case model::FieldKind::file:
            SIM_ASSERT(op.file.empty());  // Op holds one file; a model declares at most one.
            op.file = read_name(value, json_path);
            break;
        case model::FieldKind::offset:
            op.offset = model_->byte_granular ? read_size(value, json_path) : read_multiple(value, json_path);
            op.has_offset = true;
            break;
        case model::FieldKind::length:
            op.length = model_->byte_granular ? read_size(value, json_path) : read_multiple(value, json_path);
            if (op.length == 0) fail(json_path, "an unsigned integer greater than 0", "0");
            op.has_length = true;
            break;
        case model::FieldKind::flag:
            if (!value.is_boolean()) fail(json_path, "a boolean", type_name(value));
            op.flags[field.name] = value.get<bool>();
            break;
    }
}

void Loader::check_op_end(const Op& op, const std::string& json_path) const {
    const std::string limit = std::to_string(file_end_bytes_max);
    if (!op.has_length) {
        if (op.offset <= file_end_bytes_max) return;
        fail(json_path + ".offset", "offset <= " + limit, std::to_string(op.offset));
    }
    // Written so that it cannot overflow: both terms may be up to 2^64 - 1.
    if (op.offset <= file_end_bytes_max && op.length <= file_end_bytes_max - op.offset) return;
    fail(json_path + ".length", "offset + length <= " + limit,
         std::to_string(op.offset) + " + " + std::to_string(op.length));
}

void Loader::read_file(const Json& value, const std::string& json_path, bool creates,
                       std::set<std::string>& visible, const std::string& visible_what) {
    const auto name = value.get<std::string>();
    if (!creates) {
        if (!visible.contains(name)) fail(json_path, visible_what, json_quoted(name));
        return;
    }
    // Names are unique across the whole scenario, so a file id means one file.
    if (files_created_.contains(name)) {
        fail(json_path, "a file name that no earlier op creates", json_quoted(name));
    }
    files_created_.insert(name);
    visible.insert(name);
    scenario_.files.push_back(name);
}

}  // namespace loader
