#include "sim/resource.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace sim {

auto resource(std::string_view name) -> Footprint {
    static std::mutex lock;
    static std::vector<std::string> names;
    std::lock_guard<std::mutex> guard(lock);
    for (std::size_t i = 0; i < names.size(); i++) {
        if (names[i] == name) return Footprint{1} << i;
    }
    if (names.size() >= 63) return footprint_all;
    names.emplace_back(name);
    return Footprint{1} << (names.size() - 1);
}

}  // namespace sim
