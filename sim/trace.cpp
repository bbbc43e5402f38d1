#include "sim/trace.hpp"

#include <cstdio>

#include "sim/prng.hpp"

namespace sim {

void Trace::add(TraceLine line) {
    if (enabled_) lines_.push_back(std::move(line));
}

auto Trace::story() const -> std::string {
    std::string out;
    std::size_t number = 0;
    char prefix[64];
    for (const auto& line : lines_) {
        if (line.kind != TraceLine::Kind::note) continue;
        number++;
        std::snprintf(prefix, sizeof prefix, "%3zu. %-9s ", number, line.task.c_str());
        out += prefix;
        out += line.text;
        out += '\n';
    }
    return out;
}

auto Trace::full() const -> std::string {
    std::string out;
    char prefix[96];
    for (const auto& line : lines_) {
        const char* kind = line.kind == TraceLine::Kind::step        ? "step"
                           : line.kind == TraceLine::Kind::note      ? "note"
                           : line.kind == TraceLine::Kind::io_submit ? "io>"
                                                                     : "io<";
        std::snprintf(prefix, sizeof prefix, "%6llu %10llu ns %-4s %-9s ",
                      static_cast<unsigned long long>(line.step),
                      static_cast<unsigned long long>(line.time), kind, line.task.c_str());
        out += prefix;
        out += line.text;
        if (line.kind == TraceLine::Kind::io_submit || line.kind == TraceLine::Kind::io_complete) {
            out += " #" + std::to_string(line.id);
        }
        out += '\n';
    }
    return out;
}

auto Trace::hash() const -> std::uint64_t { return hash_name(full()); }

}  // namespace sim
