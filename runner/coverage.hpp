#pragma once
// What a campaign's verdict stands on: how many crash states each checker
// judged with something at stake (checkers::Checker::at_stake), and how often
// each yield point of the model was reached (sim::Scheduler::hits). A "holds"
// whose checker never had anything at stake, or that never reached a point
// the scenario requires (must_reach), is vacuous: `crashsim check` fails it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace runner {

/// Named counts, in a fixed order (checkers: the simulation's; yield points:
/// the model's story order).
using Counts = std::vector<std::pair<std::string, std::uint64_t>>;

/// Adds `from` to `into` element by element (grows `into` as needed).
void add_counts(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from);
/// Adds `from` to `into` by name, keeping `into`'s order, appending new names.
void add_named(Counts& into, const Counts& from);

/// Names judged counts (RunOutcome::judged) by checker.
auto judged_counts(const std::vector<std::string>& checkers, const std::vector<std::uint64_t>& judged)
    -> Counts;
/// The model's yield points, in story order, with their hits (by point id);
/// every point is listed, reached or not.
auto reached_counts(const std::string& model, const std::vector<std::uint64_t>& hits) -> Counts;

/// "fsync_durability 120, no_stale_data 98, fs_consistency 120, mount 120"
auto judged_text(const Counts& judged) -> std::string;
/// "19 of 21 reached; never reached: btrfs.a, btrfs.b"
auto coverage_text(const Counts& reached) -> std::string;
/// Hits of each point, one "name count" line each, two-space indented.
auto hits_text(const Counts& reached) -> std::string;

/// Checkers with a zero count.
auto never_judged(const Counts& judged) -> std::vector<std::string>;
/// Points of `required` with no hits in `reached` (or absent from it).
auto unreached(const Counts& reached, const std::vector<std::string>& required) -> std::vector<std::string>;

auto join_names(const std::vector<std::string>& names) -> std::string;

/// The model's yield points with hits that declare no footprint (registered
/// without `touches`): the code around them touches everything, so sleep
/// sets and dpor never reorder a step there (sim/yield_point.hpp).
auto undeclared_points(const std::string& model, const std::vector<std::uint64_t>& hits)
    -> std::vector<std::string>;
/// A dfs search's line on them ("" when every point reached declares one).
auto undeclared_text(const std::string& model, const std::vector<std::uint64_t>& hits) -> std::string;

/// Per model (by name), the yield-point hits of a set of check rows summed:
/// what `crashsim check` explored of each model as a whole.
auto coverage_by_model(const std::vector<std::pair<std::string, Counts>>& rows)
    -> std::vector<std::pair<std::string, Counts>>;

}  // namespace runner
