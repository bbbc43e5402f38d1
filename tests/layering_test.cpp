// The layering of the source folders: every folder includes only
// itself and the folders below it,
//   sim <- model <- checkers <- loader <- runner <- kernel <- report <- cli
// with bench/ beside cli/. The build puts the project root on the include
// path, so nothing else stops `sim/` from including `runner/`: this test reads
// the includes of every source file and fails on one that points up.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace {

/// The folders in layer order; a folder may include those at or below its rank.
const std::vector<std::string>& layers() {
    static const std::vector<std::string> order{"sim",    "model",  "checkers", "loader",
                                                "runner", "kernel", "report",   "cli"};
    return order;
}

auto rank_of(const std::string& folder) -> std::optional<std::size_t> {
    if (folder == "bench") return layers().size() - 1;  // beside cli: everything but cli
    auto found = std::find(layers().begin(), layers().end(), folder);
    if (found == layers().end()) return std::nullopt;
    return static_cast<std::size_t>(found - layers().begin());
}

/// "What includes what upward" for one file's text, as "file -> header" lines.
auto upward_includes(const std::string& file_folder, const std::string& file, const std::string& text)
    -> std::vector<std::string> {
    std::vector<std::string> found;
    auto own = rank_of(file_folder);
    if (!own) return found;
    static const std::regex include_line(R"(#\s*include\s*"([a-z_]+)/[^"]+")");
    for (std::sregex_iterator it(text.begin(), text.end(), include_line), end; it != end; ++it) {
        std::string target = (*it)[1];
        auto rank = rank_of(target);
        bool upward = rank && (*rank > *own || (target == "cli" && file_folder == "bench"));
        if (upward) found.push_back(file + " -> " + (*it)[0].str());
    }
    return found;
}

}  // namespace

TEST_CASE("layering: a folder includes only itself and the folders below it") {
    std::vector<std::string> violations;
    std::size_t files = 0;
    for (const auto& folder : layers()) {
        REQUIRE_MESSAGE(std::filesystem::is_directory(folder),
                        folder << "/ is missing (tests run from the project root)");
        for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
            auto ext = entry.path().extension();
            if (ext != ".cpp" && ext != ".hpp") continue;
            std::ifstream in(entry.path());
            std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            auto up = upward_includes(folder, entry.path().string(), text);
            violations.insert(violations.end(), up.begin(), up.end());
            files++;
        }
    }
    CHECK(files > 40);
    std::string report;
    for (const auto& line : violations) report += line + "\n";
    CHECK_MESSAGE(violations.empty(), "includes pointing up a layer:\n" << report);
}

TEST_CASE("layering: the include reader catches an upward include and passes a downward one") {
    CHECK(upward_includes("sim", "sim/x.cpp", "#include \"runner/runner.hpp\"\n").size() == 1);
    CHECK(upward_includes("model", "model/x.cpp", "#include \"checkers/oracle.hpp\"\n").size() == 1);
    CHECK(upward_includes("bench", "bench/x.cpp", "#include \"cli/x.hpp\"\n").size() == 1);
    CHECK(upward_includes("report", "report/x.cpp",
                          "#include \"sim/scheduler.hpp\"\n#include \"runner/runner.hpp\"\n")
              .empty());
    CHECK(upward_includes("cli", "cli/x.cpp", "#  include \"report/perf.hpp\"\n").empty());
    CHECK(upward_includes("model", "model/x.cpp", "#include <vector>\n").empty());
}
