// Models register themselves (model/registry.hpp): every model linked in is
// listed, each knob value it declares is one its factory parses, each
// counter it keeps is declared, and a model that is only a folder and a
// build line (tests/model/toy/) loads, runs, explores and measures through
// the same code as btrfs and xfs.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "model/info.hpp"
#include "model/declare.hpp"
#include "model/registry.hpp"
#include "report/perf.hpp"
#include "runner/runner.hpp"

namespace {

auto geometry() -> model::Geometry {
    model::Geometry result{};
    result.block_size = 4096;
    result.blocks = 4096;
    result.profile = "nvme";
    return result;
}

auto model_names() -> std::vector<std::string> {
    std::vector<std::string> names;
    for (const auto& info : model::models()) names.push_back(info.name);
    return names;
}

/// The models the source tree registers, sorted: each folder under model/
/// and tests/model/ whose file holds a ModelRegistrar is a model, named by
/// that file's `info.name` (and named after its folder).
auto registered_in_sources() -> std::vector<std::string> {
    static const std::regex name_line(R"re(info\.name = "([^"]+)";)re");
    std::vector<std::string> names;
    for (const std::string root : {"model", "tests/model"}) {
        REQUIRE_MESSAGE(std::filesystem::is_directory(root),
                        root << "/ is missing (tests run from the project root)");
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
            if (entry.path().extension() != ".cpp") continue;
            std::ifstream in(entry.path());
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            // At the start of a line: this file's own search text is not a registration.
            if (text.find("\nconst ModelRegistrar registrar{") == std::string::npos) continue;
            std::smatch found;
            REQUIRE_MESSAGE(std::regex_search(text, found, name_line), entry.path() << " names no model");
            CHECK(found[1].str() == entry.path().parent_path().filename().string());
            names.push_back(found[1].str());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

TEST_CASE("registry: every model linked in is listed, by name, the toy of the tests among them") {
    const std::vector<std::string> registered = registered_in_sources();
    CHECK(registered.size() >= 4);  // btrfs, ext4, xfs and the toy at least
    CHECK(std::find(registered.begin(), registered.end(), "toy") != registered.end());
    CHECK(model_names() == registered);
    REQUIRE(model::find_model("toy") != nullptr);
    CHECK(model::find_model("ext2") == nullptr);
    CHECK(model::find_registration("ext2") == nullptr);
}

TEST_CASE("registry: each declared knob value is one the model's factory parses") {
    for (const auto& info : model::models()) {
        CAPTURE(info.name);
        for (const auto& knob : info.knobs) {
            CHECK(std::find(knob.values.begin(), knob.values.end(), knob.default_value) != knob.values.end());
            for (const auto& value : knob.values) {
                CAPTURE(knob.name);
                CAPTURE(value);
                // A knob the factory reads but the model does not declare throws here
                // (Config::at); a value it does not parse fails its assertion. A
                // value the device cannot hold (ext4's 1G journal) is the
                // loader's to refuse.
                if (model::layout_error(info.name, {{knob.name, value}}, geometry())) continue;
                CHECK(model::make_filesystem(info.name, {{knob.name, value}}, geometry(), {"f"}) != nullptr);
            }
        }
    }
}

TEST_CASE("registry: ext4 refuses a journal over half the device, as mkfs.ext4 does") {
    const auto error =
        model::layout_error("ext4", {{"journal_size", "1G"}}, model::Geometry{4096, 6400, "nvme"});
    REQUIRE(error.has_value());
    CHECK(error->knob == "journal_size");
    CHECK(error->got == "\"1G\" (262144 blocks) on a device of 6400 blocks");
    CHECK_FALSE(model::layout_error("ext4", {{"journal_size", "4M"}}, model::Geometry{4096, 6400, "nvme"}));
    CHECK_FALSE(model::layout_error("ext4", {}, model::Geometry{4096, 6400, "nvme"}));
}

TEST_CASE("registry: a knob table parses each value to its own typed value") {
    const model::Knob<int> knob{"k", {{"one", 1}, {"two", 2}}, "one", ""};
    CHECK(knob.parse({{"k", "one"}}) == 1);
    CHECK(knob.parse({{"k", "two"}}) == 2);
    CHECK(knob.info().values == std::vector<std::string>{"one", "two"});
}

TEST_CASE("registry: op ids index the op table, and every counter a model keeps is declared") {
    for (const auto& info : model::models()) {
        CAPTURE(info.name);
        REQUIRE(!info.ops.empty());
        for (std::size_t i = 0; i < info.ops.size(); i++) {
            const model::OpInfo* op = model::find_op(info, info.ops[i].name);
            REQUIRE(op != nullptr);
            CHECK(model::op_id(info, *op) == i);
        }
        const auto fs = model::make_filesystem(info.name, {}, geometry(), {"f"});
        const auto kept = fs->counters();
        for (const auto& [name, value] : kept) {
            CAPTURE(name);
            CHECK(model::find_counter(info, name) != nullptr);
        }
        for (const auto& counter : info.counters) {
            CAPTURE(counter.name);
            CHECK(!counter.about.empty());
            if (!counter.name.ends_with('.')) CHECK(kept.count(counter.name) == 1);
        }
        CHECK(model::data_blocks(info.name, geometry()) < geometry().blocks);
    }
    // A per-operation family ("ops.") declares its members only.
    const model::ModelInfo& xfs = *model::find_model("xfs");
    CHECK(model::find_counter(xfs, "ops.write") != nullptr);
    CHECK(model::find_counter(xfs, "ops.") == nullptr);
    CHECK(model::find_counter(xfs, "nothing") == nullptr);
}

namespace {

// The toy's ops are touch, pwrite and fdatasync; the scenario names them.
constexpr const char* toy_scripted = R"({
  "name": "toy/scripted", "model": "toy",
  "device": {"block_size": 4096, "blocks": 1024, "profile": "nvme"},
  "setup": [{"op": "touch", "file": "A"}, {"op": "fdatasync", "file": "A"}],
  "tasks": [{"name": "app", "ops": [{"op": "pwrite", "file": "A", "offset": 0, "length": 8192},
                                   {"op": "fdatasync", "file": "A"}]}],
  "crash": {"unflushed": "none"},
  "schedule": [{"run": "app"}, {"crash": "none"}],
  "checkers": ["fsync_durability", "fs_consistency"],
  "variants": [{"name": "flush", "config": {"fdatasync": "flush"}, "expect": "holds"},
               {"name": "none", "config": {"fdatasync": "none"}, "expect": {"violates": "fsync_durability"}}]
})";

// A fio job expands into the toy's touch, pwrite and fdatasync (by what they mean to the
// oracle), and the perf metric is one of the toy's counters.
constexpr const char* toy_fio = R"({
  "name": "toy/fio", "model": "toy",
  "device": {"block_size": 4096, "blocks": 1024, "profile": "nvme"},
  "workload": {"fio": {"jobs": 2, "rw": "write", "bs": 4096, "size": 65536, "fsync": 4}},
  "checkers": ["fsync_durability"],
  "perf": {"metric": "counter:writes",
           "ratios": [{"numerator": "flush", "denominator": "none", "min": 1.0, "max": 1.0}]},
  "variants": [{"name": "flush", "config": {"fdatasync": "flush"}, "expect": "measure"},
               {"name": "none", "config": {"fdatasync": "none"}, "expect": "measure"}]
})";

}  // namespace

TEST_CASE("toy model: a scenario text loads it, the runner runs it, a checker judges it") {
    const loader::Scenario scenario = loader::parse_scenario(toy_scripted, "toy.json");
    CHECK(scenario.model == "toy");
    {
        runner::Simulation simulation(scenario, *scenario.find_variant("flush"));
        const runner::RunOutcome outcome = simulation.run_scripted(true);
        CHECK_FALSE(outcome.violated());
        CHECK(outcome.counters.at("writes") == 1);
    }
    runner::Simulation simulation(scenario, *scenario.find_variant("none"));
    const runner::RunOutcome outcome = simulation.run_scripted(true);
    REQUIRE(outcome.violated());
    CHECK(outcome.violations.front().checker == "fsync_durability");
}

TEST_CASE("toy model: a fio workload expands into its operations by their oracle effects; counter metrics") {
    const loader::Scenario scenario = loader::parse_scenario(toy_fio, "toy-fio.json");
    REQUIRE(scenario.setup.size() == 2);
    CHECK(scenario.setup[0].name == "touch");
    REQUIRE(scenario.tasks.size() == 2);
    REQUIRE(scenario.tasks[0].ops.size() == 20);  // 16 writes, an fdatasync after every 4
    CHECK(scenario.tasks[0].ops[0].name == "pwrite");
    CHECK(scenario.tasks[0].ops[4].name == "fdatasync");
    const runner::PerfReport report = runner::measure(scenario);
    REQUIRE(report.rows.size() == 2);
    CHECK(report.rows[0].metric == 16 * 2);
    CHECK(report.rows[0].outcome.counters.at("disk_flushes") > 0);
    CHECK(report.rows[1].outcome.counters.at("disk_flushes") == 0);
    CHECK(report::perf_counter_names("toy") == std::vector<std::string>{"writes", "disk_flushes"});
    // A counter the model does not declare is bad input, naming the model's counters.
    std::string text = toy_fio;
    text.replace(text.find("counter:writes"), 14, "counter:nothing");
    CHECK_THROWS_WITH_AS(
        loader::parse_scenario(text, "toy-fio.json"),
        doctest::Contains("expected counter:<name> for a counter of model toy: counter:writes"),
        loader::InputError);
}
