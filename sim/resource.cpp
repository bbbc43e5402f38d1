#include "sim/resource.hpp"

#include <mutex>
#include <stdexcept>

namespace sim {

ResourceRegistry::ResourceRegistry(std::size_t capacity) : capacity_(capacity) {}

auto ResourceRegistry::bit(std::string_view name) -> Footprint {
    if (const auto found = bits_.find(name); found != bits_.end()) return Footprint::bit(found->second);
    if (bits_.size() >= capacity_) {
        // Mapping it to footprint_all would be sound but would quietly make
        // every step of its owner depend on everything.
        throw std::length_error("crashsim: resource '" + std::string(name) + "' does not fit: all " +
                                std::to_string(capacity_) +
                                " footprint bits are taken; raise sim::footprint_words (sim/resource.hpp)");
    }
    const std::size_t index = bits_.size();
    bits_.emplace(name, index);
    return Footprint::bit(index);
}

auto ResourceRegistry::names() const -> std::vector<std::string> {
    std::vector<std::string> names(bits_.size());
    for (const auto& [name, index] : bits_) names[index] = name;
    return names;
}

namespace {
auto process_registry() -> std::pair<std::mutex&, ResourceRegistry&> {
    static std::mutex lock;
    static ResourceRegistry registry;
    return {lock, registry};
}
}  // namespace

auto resource(std::string_view name) -> Footprint {
    auto [lock, registry] = process_registry();
    const std::lock_guard<std::mutex> guard(lock);
    return registry.bit(name);
}

auto resource_names() -> std::vector<std::string> {
    auto [lock, registry] = process_registry();
    const std::lock_guard<std::mutex> guard(lock);
    return registry.names();
}

auto resource_count() -> std::size_t {
    auto [lock, registry] = process_registry();
    const std::lock_guard<std::mutex> guard(lock);
    return registry.size();
}

}  // namespace sim
