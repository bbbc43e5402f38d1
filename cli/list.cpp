// crashsim list: models, knobs, operations, checkers and yield points.
#include "cli/common.hpp"

#include <memory>

#include "report/console.hpp"

namespace cli {
namespace {

// crashsim list [SCENARIO...]: with scenarios, also the machine profiles each declares.
auto cmd_list(const std::vector<std::string>& paths) -> ExitCode {
    std::string text = report::list_text();
    for (const auto& path : paths) text += report::machine_profiles_text(loader::load_scenario(path));
    output() += text;
    return ExitCode::pass;
}

}  // namespace

void add_list_command(CLI::App& app, Verbs& verbs) {
    auto paths = std::make_shared<std::vector<std::string>>();
    CLI::App* list = app.add_subcommand("list", "models, knobs, operations, checkers and yield points");
    list->add_option("scenarios", *paths, "scenario JSON files whose machine profiles to list too");
    verbs.add(list, [paths] { return cmd_list(*paths); });
}

}  // namespace cli
