// crashsim merge: combines the results of a sharded campaign.
#include "cli/common.hpp"

#include <memory>

#include "report/report.hpp"

namespace cli {
namespace {

auto cmd_merge(const std::vector<std::string>& paths, const std::string& out) -> ExitCode {
    require_writable("--out", out);
    std::vector<runner::CampaignResult> shards;
    for (const auto& path : paths) shards.push_back(report::read_campaign_result(path));
    const runner::CampaignResult merged = runner::merge_results(shards, paths);
    output() += report::merge_summary(merged, shards.size());
    if (!out.empty()) {
        report::write_campaign_result(merged, out);
        say("merged result written to %s\n", out.c_str());
    }
    return merged.violations.empty() ? ExitCode::pass : ExitCode::violation;
}

}  // namespace

void add_merge_command(CLI::App& app, Verbs& verbs) {
    auto paths = std::make_shared<std::vector<std::string>>();
    auto out = std::make_shared<std::string>();
    CLI::App* merge = app.add_subcommand("merge", "combine the results of a sharded campaign");
    merge->add_option("results", *paths, "result JSON files written by fuzz --shard")->required();
    merge->add_option("--out", *out, "write the merged result to FILE");
    verbs.add(merge, [paths, out] { return cmd_merge(*paths, *out); });
}

}  // namespace cli
