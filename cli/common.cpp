// The helpers every verb shares (cli/common.hpp).
#include "cli/common.hpp"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <filesystem>

#include "report/chrome_trace.hpp"
#include "report/console.hpp"
#include "loader/json_reader.hpp"
#include "runner/atomic_file.hpp"

namespace cli {

auto in_range(std::uint64_t min, std::uint64_t max) -> CLI::Validator {
    const std::string expected =
        "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got \"";
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            std::uint64_t value = 0;
            bool ok = !text.empty() && text.size() <= 20;
            for (char c : text) {
                if (!ok) break;
                const auto digit = static_cast<std::uint64_t>(c - '0');
                ok = c >= '0' && c <= '9' && value <= (~std::uint64_t{0} - digit) / 10;
                value = value * 10 + digit;
            }
            if (ok && value >= min && value <= max) return {};
            return expected + text + "\"";
        },
        "", "");
}

auto seconds_now() -> double {
    using clock = std::chrono::steady_clock;
    static const auto start = clock::now();
    return std::chrono::duration<double>(clock::now() - start).count();
}

auto load(const std::string& path, std::string* text_out) -> loader::Scenario {
    std::string text = loader::read_text_file(path);
    loader::Scenario scenario = loader::parse_scenario(text, path);
    if (text_out != nullptr) *text_out = std::move(text);
    return scenario;
}

auto pick_variant(const loader::Scenario& scenario, const std::string& name) -> const loader::Variant& {
    if (name.empty()) return scenario.variants.front();
    const loader::Variant* variant = scenario.find_variant(name);
    if (variant == nullptr) {
        std::string names;
        for (const auto& v : scenario.variants) names += (names.empty() ? "" : ", ") + v.name;
        throw loader::InputError(scenario.path + ": $.variants: expected a variant named one of " +
                                 names + ", got \"" + name + "\"");
    }
    return *variant;
}

auto output() -> std::string& {
    static std::string text;
    return text;
}

[[gnu::format(printf, 1, 2)]] void say(const char* format, ...) {
    va_list args;
    va_start(args, format);
    char small[512];
    va_list again;
    va_copy(again, args);
    const int size = std::vsnprintf(small, sizeof small, format, args);
    if (size >= 0 && static_cast<std::size_t>(size) < sizeof small) {
        output() += small;
    } else if (size > 0) {
        std::string large(static_cast<std::size_t>(size) + 1, '\0');
        std::vsnprintf(large.data(), large.size(), format, again);
        large.pop_back();
        output() += large;
    }
    va_end(again);
    va_end(args);
}

void print_story(const runner::RunOutcome& outcome) { output() += outcome.story; }

void write_trace_text(const std::string& path, const runner::RunOutcome& outcome) {
    if (!path.empty()) runner::write_text_file_atomically(path, outcome.trace);
}

void write_chrome_trace(const std::string& path, const runner::RunOutcome& outcome,
                        const std::string& title) {
    if (!path.empty()) {
        runner::write_text_file_atomically(path, report::chrome_trace_json(outcome, title));
    }
}

/// Fails before any work when an output file could not be written, so a run
/// never prints its findings and then exits 2.
void require_writable(const std::string& flag, const std::string& path) {
    if (path.empty()) return;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code error;
    if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
        throw loader::InputError(flag + ": expected a file in an existing directory, got \"" + path +
                                 "\"");
    }
    if (std::filesystem::is_directory(path, error)) {
        throw loader::InputError(flag + ": expected a file, got the directory \"" + path + "\"");
    }
}

auto verdict(const runner::RunOutcome& outcome) -> ExitCode {
    output() += report::verdict_text(outcome);
    return outcome.violated() ? ExitCode::violation : ExitCode::pass;
}

}  // namespace cli
