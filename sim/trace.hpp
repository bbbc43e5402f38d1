#pragma once
// What a run did, for people and for determinism tests. Two kinds of line:
// engine steps (which task ran to which yield point) and story notes, the
// sentences model code writes at the moments a file-system developer would
// name ("the extent map is unpinned and gets generation 7"). When a trace is
// disabled nothing is formatted: model code guards notes with SIM_NOTE.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace sim {

struct TraceLine {
    /// step: a task ran to `text` (a yield point, "(blocked on X)", "(finished)");
    /// note: a story sentence; io_submit / io_complete: an I/O request `id`
    /// entered or left the device (its description in `text`).
    enum class Kind : std::uint8_t { step, note, io_submit, io_complete };
    Kind kind;
    std::uint64_t step;  // engine step at which the line was written
    Instant time;
    std::string task;
    std::string text;
    std::uint64_t id = 0;  // io: the request
};

class Trace {
public:
    explicit Trace(bool enabled = false) : enabled_(enabled) {}

    [[nodiscard]] auto enabled() const -> bool { return enabled_; }
    void add(TraceLine line);
    [[nodiscard]] auto lines() const -> const std::vector<TraceLine>& { return lines_; }

    /// Numbered story: every note, with the engine steps between notes folded.
    [[nodiscard]] auto story() const -> std::string;
    /// Every line, steps included.
    [[nodiscard]] auto full() const -> std::string;
    /// FNV-1a of full(): equal hashes mean byte-identical traces.
    [[nodiscard]] auto hash() const -> std::uint64_t;

private:
    bool enabled_;
    std::vector<TraceLine> lines_;
};

}  // namespace sim
