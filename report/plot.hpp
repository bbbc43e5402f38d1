#pragma once
// crashsim perf --plot: the measured metric against the swept parameter, one
// line per variant (or one bar per variant without a sweep), drawn by gnuplot
// (Debian package gnuplot-nox) into an SVG file.
#include <string>

#include "report/perf.hpp"
#include "loader/scenario.hpp"

namespace report {

/// The data file gnuplot reads: one row per point (or one row without a
/// sweep), the swept value first, then each variant's metric.
auto plot_data(const loader::Scenario& scenario, const runner::PerfReport& report) -> std::string;
/// The seed's own figures (`perf.seed`), in the same layout as plot_data:
/// the swept value, then each variant's figure ("?" where the seed has
/// none); empty when the scenario declares none.
auto plot_seed_data(const loader::Scenario& scenario, const runner::PerfReport& report) -> std::string;
/// The gnuplot script that draws `data_path` into `svg_path`, and beside the
/// model's curves the seed's points from `seed_path` (when not empty).
auto plot_script(const loader::Scenario& scenario, const runner::PerfReport& report,
                 const std::string& data_path, const std::string& svg_path,
                 const std::string& seed_path = "") -> std::string;
/// The gnuplot program on PATH, or an empty string.
auto find_gnuplot() -> std::string;
/// Throws InputError when the plot cannot be drawn: a file name gnuplot
/// could not be told (control characters), or no gnuplot on PATH.
void check_plot_path(const std::string& svg_path);
/// Draws the report into `svg_path` (written whole or not at all); throws
/// InputError when gnuplot is missing or fails.
void plot_svg(const loader::Scenario& scenario, const runner::PerfReport& report,
              const std::string& svg_path);

}  // namespace report
