#include "runner/coverage.hpp"

#include <algorithm>

#include "model/info.hpp"
#include "sim/yield_point.hpp"

namespace runner {

void add_counts(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from) {
    if (into.size() < from.size()) into.resize(from.size(), 0);
    for (std::size_t i = 0; i < from.size(); i++) into[i] += from[i];
}

void add_named(Counts& into, const Counts& from) {
    for (const auto& [name, count] : from) {
        const auto found =
            std::find_if(into.begin(), into.end(), [&](const auto& entry) { return entry.first == name; });
        if (found == into.end()) {
            into.emplace_back(name, count);
        } else {
            found->second += count;
        }
    }
}

auto judged_counts(const std::vector<std::string>& checkers, const std::vector<std::uint64_t>& judged)
    -> Counts {
    Counts counts;
    for (std::size_t i = 0; i < checkers.size(); i++) {
        counts.emplace_back(checkers[i], i < judged.size() ? judged[i] : 0);
    }
    return counts;
}

auto reached_counts(const std::string& model, const std::vector<std::uint64_t>& hits) -> Counts {
    Counts counts;
    const model::ModelInfo* info = model::find_model(model);
    if (info == nullptr) return counts;
    for (const sim::YieldPoint* point : info->yield_points) {
        counts.emplace_back(std::string(point->name), point->id < hits.size() ? hits[point->id] : 0);
    }
    return counts;
}

auto undeclared_points(const std::string& model, const std::vector<std::uint64_t>& hits)
    -> std::vector<std::string> {
    std::vector<std::string> names;
    const model::ModelInfo* info = model::find_model(model);
    if (info == nullptr) return names;
    for (const sim::YieldPoint* point : info->yield_points) {
        if (point->id < hits.size() && hits[point->id] != 0 && point->touches == sim::footprint_all) {
            names.emplace_back(point->name);
        }
    }
    return names;
}

auto undeclared_text(const std::string& model, const std::vector<std::uint64_t>& hits) -> std::string {
    const std::vector<std::string> names = undeclared_points(model, hits);
    if (names.empty()) return "";
    std::uint64_t reached = 0;
    for (const std::uint64_t count : hits) reached += count != 0 ? 1 : 0;
    return "footprints: " + std::to_string(names.size()) + " of the " + std::to_string(reached) +
           " yield points reached declare none, so the code around them touches everything and no reduction "
           "reorders its steps (sim/yield_point.hpp): " + join_names(names) + "\n";
}

auto join_names(const std::vector<std::string>& names) -> std::string {
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
}

auto judged_text(const Counts& judged) -> std::string {
    std::string text;
    for (const auto& [name, count] : judged) {
        text += (text.empty() ? "" : ", ") + name + " " + std::to_string(count);
    }
    return text;
}

auto coverage_text(const Counts& reached) -> std::string {
    std::vector<std::string> never;
    for (const auto& [name, count] : reached) {
        if (count == 0) never.push_back(name);
    }
    std::string text =
        std::to_string(reached.size() - never.size()) + " of " + std::to_string(reached.size()) + " reached";
    if (!never.empty()) text += "; never reached: " + join_names(never);
    return text;
}

auto hits_text(const Counts& reached) -> std::string {
    std::string text;
    for (const auto& [name, count] : reached) text += "  " + name + " " + std::to_string(count) + "\n";
    return text;
}

auto never_judged(const Counts& judged) -> std::vector<std::string> {
    std::vector<std::string> names;
    for (const auto& [name, count] : judged) {
        if (count == 0) names.push_back(name);
    }
    return names;
}

auto unreached(const Counts& reached, const std::vector<std::string>& required) -> std::vector<std::string> {
    std::vector<std::string> names;
    for (const auto& point : required) {
        const auto found = std::find_if(reached.begin(), reached.end(),
                                        [&](const auto& entry) { return entry.first == point; });
        if (found == reached.end() || found->second == 0) names.push_back(point);
    }
    return names;
}

auto coverage_by_model(const std::vector<std::pair<std::string, Counts>>& rows)
    -> std::vector<std::pair<std::string, Counts>> {
    std::vector<std::pair<std::string, Counts>> models;
    for (const auto& [model, reached] : rows) {
        if (model.empty()) continue;
        auto found = std::find_if(models.begin(), models.end(),
                                  [&](const auto& entry) { return entry.first == model; });
        if (found == models.end()) {
            models.emplace_back(model, Counts{});
            found = models.end() - 1;
        }
        add_named(found->second, reached);
    }
    std::sort(models.begin(), models.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return models;
}

}  // namespace runner
