#include "model/registry.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace model {
namespace {

// Filled by the registrars during static initialisation, in link order;
// models() sorts it by name so that no caller sees that order.
auto registrations() -> std::vector<ModelRegistration>& {
    static std::vector<ModelRegistration> all;
    return all;
}

}  // namespace

ModelRegistrar::ModelRegistrar(ModelRegistration registration) {
    auto& all = registrations();
    SIM_ASSERT(find_registration(registration.info.name) == nullptr);
    // Op ids index the op table; OpId must hold them all.
    SIM_ASSERT(registration.info.ops.size() < 0x10000);
    for (const auto& knob : registration.info.knobs) {
        SIM_ASSERT(std::find(knob.values.begin(), knob.values.end(), knob.default_value) !=
                   knob.values.end());
    }
    const auto place = std::lower_bound(all.begin(), all.end(), registration.info.name,
                                        [](const ModelRegistration& entry, const std::string& name) {
                                            return entry.info.name < name;
                                        });
    all.insert(place, std::move(registration));
}

auto find_registration(const std::string& name) -> const ModelRegistration* {
    for (const auto& entry : registrations()) {
        if (entry.info.name == name) return &entry;
    }
    return nullptr;
}

auto models() -> const std::vector<ModelInfo>& {
    // Built on first use, after every registrar ran (static initialisation
    // ends before main).
    static const std::vector<ModelInfo> all = [] {
        std::vector<ModelInfo> infos;
        for (const auto& entry : registrations()) infos.push_back(entry.info);
        return infos;
    }();
    return all;
}

auto find_model(const std::string& name) -> const ModelInfo* {
    for (const auto& info : models()) {
        if (info.name == name) return &info;
    }
    return nullptr;
}

auto make_filesystem(const std::string& model, const Config& given, const Geometry& geometry,
                     const std::vector<std::string>& file_names) -> std::unique_ptr<FileSystem> {
    const ModelRegistration* registration = find_registration(model);
    SIM_ASSERT(registration != nullptr && "model validated by the loader");
    // Knobs left out take the model's defaults.
    Config config = given;
    for (const auto& knob : registration->info.knobs) config.try_emplace(knob.name, knob.default_value);
    return registration->make(config, geometry, file_names);
}

auto layout_error(const std::string& model, const Config& config, const Geometry& geometry)
    -> std::optional<LayoutError> {
    const ModelRegistration* registration = find_registration(model);
    SIM_ASSERT(registration != nullptr && "model validated by the loader");
    if (!registration->layout_error) return std::nullopt;
    Config full = config;
    for (const auto& knob : registration->info.knobs) full.try_emplace(knob.name, knob.default_value);
    return registration->layout_error(full, geometry);
}

auto data_blocks(const std::string& model, const Geometry& geometry) -> std::uint64_t {
    const ModelRegistration* registration = find_registration(model);
    SIM_ASSERT(registration != nullptr && "model validated by the loader");
    return registration->data_blocks(geometry);
}

auto op_with_effect(const ModelInfo& info, OracleEffect effect) -> const OpInfo* {
    for (const auto& op : info.ops) {
        if (op.effect == effect) return &op;
    }
    return nullptr;
}

auto op_creating(const ModelInfo& info) -> const OpInfo* {
    for (const auto& op : info.ops) {
        if (op.creates_file) return &op;
    }
    return nullptr;
}

auto op_making_directory(const ModelInfo& info) -> const OpInfo* {
    for (const auto& op : info.ops) {
        if (op.makes_directory) return &op;
    }
    return nullptr;
}

auto find_op(const ModelInfo& info, std::string_view name) -> const OpInfo* {
    for (const auto& op : info.ops) {
        if (op.name == name) return &op;
    }
    return nullptr;
}

auto op_id(const ModelInfo& info, const OpInfo& op) -> OpId {
    SIM_ASSERT(&op >= info.ops.data() && &op < info.ops.data() + info.ops.size());
    return static_cast<OpId>(&op - info.ops.data());
}

auto find_counter(const ModelInfo& info, std::string_view name) -> const CounterInfo* {
    for (const auto& counter : info.counters) {
        // A family per operation: "ops." declares "ops.write".
        const bool family = counter.name.ends_with('.');
        if (!family && counter.name == name) return &counter;
        if (family && name.starts_with(counter.name) && name.size() > counter.name.size()) return &counter;
    }
    return nullptr;
}

}  // namespace model
