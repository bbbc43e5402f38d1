#include "report/chrome_trace.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace report {
namespace {

using Json = nlohmann::ordered_json;

/// The trace events of one run, built line by line.
class ChromeTrace {
public:
    explicit ChromeTrace(const std::string& title) {
        events_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", title}}}});
    }

    void add(const sim::TraceLine& line) {
        const auto ts = static_cast<double>(line.step);
        const Json args = {{"virtual_time_ns", line.time}, {"step", line.step}};
        switch (line.kind) {
            case sim::TraceLine::Kind::step:
                add_step(line, ts, args);
                break;
            case sim::TraceLine::Kind::note:
                if (line.task == "power") {
                    events_.push_back({{"name", "power cut"}, {"cat", "crash"}, {"ph", "i"}, {"s", "g"},
                                       {"pid", 1}, {"tid", track("power")}, {"ts", ts},
                                       {"args", {{"what", line.text}}}});
                } else {
                    events_.push_back({{"name", line.text}, {"cat", "story"}, {"ph", "i"}, {"s", "t"},
                                       {"pid", 1}, {"tid", track(line.task)}, {"ts", ts}, {"args", args}});
                }
                break;
            case sim::TraceLine::Kind::io_submit:
                events_.push_back({{"name", line.text}, {"cat", "io"}, {"ph", "b"}, {"id", line.id},
                                   {"pid", 1}, {"tid", track("device")}, {"ts", ts},
                                   {"args", {{"virtual_time_ns", line.time}, {"submitted_by", line.task}}}});
                break;
            case sim::TraceLine::Kind::io_complete:
                events_.push_back({{"name", "io"}, {"cat", "io"}, {"ph", "e"}, {"id", line.id}, {"pid", 1},
                                   {"tid", track("device")}, {"ts", ts}, {"args", args}});
                break;
        }
    }

    [[nodiscard]] auto events() const -> const Json& { return events_; }

private:
    /// The track of a task (its tid), named when it first appears.
    auto track(const std::string& name) -> int {
        auto [it, inserted] = tracks_.emplace(name, static_cast<int>(tracks_.size()) + 1);
        if (inserted) {
            events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", it->second},
                               {"args", {{"name", name}}}});
        }
        return it->second;
    }

    /// A step's slice, after the slice of the time its task was blocked.
    void add_step(const sim::TraceLine& line, double ts, const Json& args) {
        const int tid = track(line.task);
        if (auto it = blocked_since_.find(line.task); it != blocked_since_.end()) {
            const double since = static_cast<double>(it->second);
            events_.push_back({{"name", "blocked"}, {"cat", "blocked"}, {"ph", "X"}, {"pid", 1},
                               {"tid", tid}, {"ts", since}, {"dur", ts - 1 - since}, {"args", args}});
            blocked_since_.erase(it);
        }
        events_.push_back({{"name", line.text}, {"cat", "step"}, {"ph", "X"}, {"pid", 1},
                           {"tid", tid}, {"ts", ts - 1}, {"dur", 1}, {"args", args}});
        if (line.text.starts_with("(blocked on")) blocked_since_[line.task] = line.step;
    }

    Json events_ = Json::array();
    std::map<std::string, int> tracks_;                   // task name -> tid, in order of appearance
    std::map<std::string, std::uint64_t> blocked_since_;  // task -> step it blocked at
};

}  // namespace

auto chrome_trace_json(const runner::RunOutcome& outcome, const std::string& title) -> std::string {
    ChromeTrace trace(title);
    for (const sim::TraceLine& line : outcome.lines) trace.add(line);
    Json document = {{"traceEvents", trace.events()}, {"displayTimeUnit", "ns"},
                     {"otherData", {{"title", title}, {"trace_hash", outcome.trace_hash}}}};
    return document.dump(1) + "\n";
}

}  // namespace report
