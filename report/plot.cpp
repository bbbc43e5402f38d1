#include "report/plot.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "runner/repro.hpp"

namespace report {
namespace {

auto metric_label(const std::string& metric) -> std::string {
    if (metric == "fsync_rate") return "fsyncs/s";
    if (metric == "files_per_s") return "files/s";
    if (metric == "unlinks_per_s") return "unlinks/s";
    if (metric.starts_with("counter:")) return metric.substr(8);  // a model's counter
    return "MiB/s";
}

auto quoted(const std::string& text) -> std::string {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

auto shell_quoted(const std::string& text) -> std::string {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out + "'";
}

auto variant_names(const loader::Scenario& scenario) -> std::vector<std::string> {
    std::vector<std::string> names;
    for (const auto& variant : scenario.variants) names.push_back(variant.name);
    return names;
}

}  // namespace

auto plot_data(const loader::Scenario& scenario, const runner::PerfReport& report) -> std::string {
    std::ostringstream out;
    char number[64];
    if (report.parameter.empty()) {
        // One bar per variant: index, name, metric.
        out << "# index variant metric\n";
        for (std::size_t i = 0; i < report.rows.size(); i++) {
            std::snprintf(number, sizeof number, " %.4f", report.rows[i].metric);
            out << i << ' ' << quoted(report.rows[i].variant) << number << '\n';
        }
        return out.str();
    }
    out << "# " << (report.parameter.empty() ? "point" : report.parameter);
    for (const auto& name : variant_names(scenario)) out << ' ' << name;
    out << '\n';
    std::vector<std::optional<std::uint64_t>> points;
    for (const auto& row : report.rows) {
        if (points.empty() || points.back() != row.point) points.push_back(row.point);
    }
    for (const auto& point : points) {
        out << (point ? std::to_string(*point) : std::string("0"));
        for (const auto& name : variant_names(scenario)) {
            for (const auto& row : report.rows) {
                if (row.point != point || row.variant != name) continue;
                std::snprintf(number, sizeof number, " %.4f", row.metric);
                out << number;
            }
        }
        out << '\n';
    }
    return out.str();
}

auto plot_seed_data(const loader::Scenario& scenario, const runner::PerfReport& report) -> std::string {
    if (!scenario.perf || scenario.perf->seed_points.empty() || report.parameter.empty()) return "";
    std::ostringstream out;
    out << "# " << report.parameter;
    for (const auto& name : variant_names(scenario)) out << ' ' << name;
    out << " (seed: " << scenario.perf->seed_source << ")\n";
    char number[64];
    for (const loader::SeedPoint& seed : scenario.perf->seed_points) {
        out << (seed.point ? std::to_string(*seed.point) : std::string("0"));
        for (const auto& name : variant_names(scenario)) {
            const auto found = seed.values.find(name);
            if (found == seed.values.end()) {
                out << " ?";
            } else {
                std::snprintf(number, sizeof number, " %.4f", found->second);
                out << number;
            }
        }
        out << '\n';
    }
    return out.str();
}

auto plot_script(const loader::Scenario& scenario, const runner::PerfReport& report,
                 const std::string& data_path, const std::string& svg_path,
                 const std::string& seed_path) -> std::string {
    const std::string metric = scenario.perf ? scenario.perf->metric : "throughput";
    const auto names = variant_names(scenario);
    std::ostringstream out;
    out << "set terminal svg size 800,500 dynamic enhanced font 'sans,12'\n"
        << "set output " << quoted(svg_path) << '\n'
        << "set title " << quoted(scenario.name + " (crashsim perf, virtual time)") << " noenhanced\n"
        << "set ylabel " << quoted(metric_label(metric)) << '\n'
        << "set key top left noenhanced\n"
        << "set grid\n"
        << "set yrange [0:*]\n"
        << "set datafile missing \"?\"\n";
    if (!report.parameter.empty()) {
        // Job counts and sizes double from point to point in the seeds' tables.
        out << "set xlabel " << quoted(report.parameter) << " noenhanced\n"
            << "set logscale x 2\n"
            << "plot ";
        for (std::size_t i = 0; i < names.size(); i++) {
            out << (i == 0 ? "" : ", ") << quoted(data_path) << " using 1:" << i + 2
                << " with linespoints linewidth 2 linecolor " << i + 1 << " title " << quoted(names[i]);
        }
        // The seed's own figures: the same colour, dashed, open points.
        if (!seed_path.empty()) {
            for (std::size_t i = 0; i < names.size(); i++) {
                out << ", " << quoted(seed_path) << " using 1:" << i + 2
                    << " with linespoints dashtype 2 pointtype 6 linecolor " << i + 1 << " title "
                    << quoted(names[i] + " (seed)");
            }
        }
    } else {
        out << "set style fill solid 0.6\nset boxwidth 0.6\nset xtics nomirror noenhanced\n"
            << "set xrange [-0.5:" << names.size() << "-0.5]\n"
            << "plot " << quoted(data_path) << " using 1:3:xtic(2) with boxes notitle";
    }
    out << '\n';
    return out.str();
}

auto find_gnuplot() -> std::string {
    const char* path = std::getenv("PATH");
    if (path == nullptr) return "";
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) continue;
        const std::string candidate = dir + "/gnuplot";
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "";
}

void check_plot_path(const std::string& svg_path) {
    for (const char c : svg_path) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            std::string shown;
            for (const char d : svg_path) {
                char hex[8];
                std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(d));
                shown +=
                    static_cast<unsigned char>(d) < 0x20 || d == 0x7f ? std::string(hex) : std::string(1, d);
            }
            throw loader::InputError("--plot: expected a file name without control characters, got \"" +
                                     shown + "\"");
        }
    }
    if (find_gnuplot().empty()) {
        throw loader::InputError(
            "--plot: expected gnuplot on PATH (Debian: apt-get install gnuplot-nox), got none");
    }
}

void plot_svg(const loader::Scenario& scenario, const runner::PerfReport& report,
              const std::string& svg_path) {
    check_plot_path(svg_path);
    const std::string gnuplot = find_gnuplot();
    // The data and the script go to a private temporary directory; gnuplot
    // draws into a fresh file next to the target, renamed over it when done,
    // so nothing of the user's is overwritten and no half-drawn file is left.
    std::string dir_template = (std::filesystem::temp_directory_path() / "crashsim-plot-XXXXXX").string();
    if (::mkdtemp(dir_template.data()) == nullptr) {
        throw loader::InputError("--plot: expected a temporary directory for gnuplot's input, got none");
    }
    const std::filesystem::path dir(dir_template);
    std::string partial = svg_path + ".XXXXXX";
    const int fd = ::mkstemp(partial.data());
    if (fd < 0) {
        std::filesystem::remove_all(dir);
        throw loader::InputError("--plot: expected to create a file next to " + svg_path + ", got none");
    }
    ::close(fd);
    const std::string data_path = (dir / "data").string();
    const std::string script_path = (dir / "plot.gp").string();
    runner::write_text_file_atomically(data_path, plot_data(scenario, report));
    const std::string seed = plot_seed_data(scenario, report);
    const std::string seed_path = seed.empty() ? std::string() : (dir / "seed").string();
    if (!seed.empty()) runner::write_text_file_atomically(seed_path, seed);
    runner::write_text_file_atomically(script_path,
                                       plot_script(scenario, report, data_path, partial, seed_path));
    const std::string command = shell_quoted(gnuplot) + " " + shell_quoted(script_path) + " 2>/dev/null";
    const int status = std::system(command.c_str());
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    if (status != 0 || std::filesystem::file_size(partial, ignored) == 0) {
        std::filesystem::remove(partial, ignored);
        throw loader::InputError("--plot: expected gnuplot to draw " + svg_path + ", got exit status " +
                                 std::to_string(status));
    }
    std::filesystem::rename(partial, svg_path);
}

}  // namespace report
