#include "report/chrome_trace.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace scenarios {

auto chrome_trace_json(const RunOutcome& outcome, const std::string& title) -> std::string {
    using Json = nlohmann::ordered_json;
    Json events = Json::array();
    std::map<std::string, int> tracks;  // task name -> tid, in order of appearance
    auto track = [&](const std::string& name) {
        auto [it, inserted] = tracks.emplace(name, static_cast<int>(tracks.size()) + 1);
        if (inserted) {
            events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", it->second},
                              {"args", {{"name", name}}}});
        }
        return it->second;
    };
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", title}}}});
    std::map<std::string, std::uint64_t> blocked_since;  // task -> step it blocked at
    for (const sim::TraceLine& line : outcome.lines) {
        const auto ts = static_cast<double>(line.step);
        const Json args = {{"virtual_time_ns", line.time}, {"step", line.step}};
        switch (line.kind) {
            case sim::TraceLine::Kind::step: {
                const int tid = track(line.task);
                if (auto it = blocked_since.find(line.task); it != blocked_since.end()) {
                    const double since = static_cast<double>(it->second);
                    events.push_back({{"name", "blocked"}, {"cat", "blocked"}, {"ph", "X"}, {"pid", 1},
                                      {"tid", tid}, {"ts", since}, {"dur", ts - 1 - since}, {"args", args}});
                    blocked_since.erase(it);
                }
                events.push_back({{"name", line.text}, {"cat", "step"}, {"ph", "X"}, {"pid", 1},
                                  {"tid", tid}, {"ts", ts - 1}, {"dur", 1}, {"args", args}});
                if (line.text.starts_with("(blocked on")) blocked_since[line.task] = line.step;
                break;
            }
            case sim::TraceLine::Kind::note:
                if (line.task == "power") {
                    events.push_back({{"name", "power cut"}, {"cat", "crash"}, {"ph", "i"}, {"s", "g"},
                                      {"pid", 1}, {"tid", track("power")}, {"ts", ts},
                                      {"args", {{"what", line.text}}}});
                } else {
                    events.push_back({{"name", line.text}, {"cat", "story"}, {"ph", "i"}, {"s", "t"},
                                      {"pid", 1}, {"tid", track(line.task)}, {"ts", ts}, {"args", args}});
                }
                break;
            case sim::TraceLine::Kind::io_submit:
                events.push_back({{"name", line.text}, {"cat", "io"}, {"ph", "b"}, {"id", line.id},
                                  {"pid", 1}, {"tid", track("device")}, {"ts", ts},
                                  {"args", {{"virtual_time_ns", line.time}, {"submitted_by", line.task}}}});
                break;
            case sim::TraceLine::Kind::io_complete:
                events.push_back({{"name", "io"}, {"cat", "io"}, {"ph", "e"}, {"id", line.id}, {"pid", 1},
                                  {"tid", track("device")}, {"ts", ts}, {"args", args}});
                break;
        }
    }
    Json document = {{"traceEvents", events}, {"displayTimeUnit", "ns"},
                     {"otherData", {{"title", title}, {"trace_hash", outcome.trace_hash}}}};
    return document.dump(1) + "\n";
}

}  // namespace scenarios
