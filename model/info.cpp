#include "model/info.hpp"

namespace model {

auto hypothetical_notes(const ModelInfo& info, const std::map<std::string, std::string>& config)
    -> std::vector<std::string> {
    std::vector<std::string> notes;
    for (const auto& knob : info.knobs) {
        const auto value = config.find(knob.name);
        if (value == config.end() || !value->second.starts_with(hypothetical_prefix)) continue;
        notes.push_back(knob.name + " = " + value->second +
                        ": a hypothetical setting, not a real kernel; verdicts of this run say "
                        "nothing about any released kernel");
    }
    return notes;
}

}  // namespace model
