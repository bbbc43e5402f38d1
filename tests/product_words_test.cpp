// The product speaks of the product: every text file of the source tree (docs, code
// comments, test names, scenario texts, scripts) is read, and a reference a reader of
// the clone cannot resolve fails the test with its file and line: a work-item number,
// a work session called a "stop", a branch or a review, a commit of this repository
// cited as evidence, or a path outside the clone (the kernel notes and seed files the
// models were written from). A mechanism is cited by the kernel function it follows or
// by the upstream patch's subject instead. The verb ("the commit issues a flush") and
// the product's own stop requests (SIGINT) pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Rule {
    const char* what;
    std::regex pattern;
    /// Words one of which a line must hold (lower case) before the pattern is tried:
    /// std::regex is slow, and most lines hold none. Empty: a run of 7 hex digits.
    std::vector<std::string> cues;
};

auto rules() -> const std::vector<Rule>& {
    constexpr auto icase = std::regex::ECMAScript | std::regex::icase;
    static const std::vector<Rule> all{
        {"a work-item number", std::regex(R"(\bissue\s+#?[0-9]+|\bissues\s+#[0-9]+)", icase), {"issue"}},
        {"a work session",
         std::regex(R"(\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh)"
                    R"(|twelfth|this|last|next|previous)\s+stops?\b(?!\s+request))",
                    icase),
         {"stop"}},
        {"a branch", std::regex(R"(\bthis\s+branch\b)", icase), {"branch"}},
        {"a review", std::regex(R"(\bmade\s+in\s+review\b|\breview\s+mends?\b)", icase), {"review"}},
        {"a history", std::regex(R"(\bbefore\s+this\s+change\b)", icase), {"change"}},
        {"a path outside the clone", std::regex(R"(\.\./shared/|\bFIDELITY(\.md|\s+[0-9]))", icase),
         {"shared/", "fidelity"}},
        {"a seed file", std::regex(R"(\b(btrfs|xfs|jbd2)-[a-z0-9-]+\.txt\b)", icase), {".txt"}},
        // A short hash after a word that cites it (on, at, commit, since, ...), with
        // both a digit and a letter; a kernel commit cited with its subject
        // ("b98dba273a0e (\"jbd2: ...\")") is an upstream reference and passes.
        {"a commit hash as evidence",
         std::regex(R"(\b(on|at|commit|since|in|from|main|branch)\s+)"
                    R"((?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])([0-9a-f]{7,12}|[0-9a-f]{40})\b(?!\s*\())",
                    icase),
         {}},
    };
    return all;
}

auto has_hex_run(const std::string& line) -> bool {
    std::size_t run = 0;
    for (const char c : line) {
        run = std::isxdigit(static_cast<unsigned char>(c)) ? run + 1 : 0;
        if (run == 7) return true;
    }
    return false;
}

auto cued(const Rule& rule, const std::string& lower) -> bool {
    if (rule.cues.empty()) return has_hex_run(lower);
    return std::any_of(rule.cues.begin(), rule.cues.end(),
                       [&](const std::string& cue) { return lower.find(cue) != std::string::npos; });
}

/// The matches of every rule in `text`, as "file:line: what: the match" lines.
auto process_words(const std::string& file, const std::string& text) -> std::vector<std::string> {
    std::vector<std::string> found;
    std::istringstream lines(text);
    std::string line;
    for (std::size_t number = 1; std::getline(lines, line); ++number) {
        std::string lower = line;
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const auto& rule : rules()) {
            if (!cued(rule, lower)) continue;
            std::smatch match;
            if (!std::regex_search(line, match, rule.pattern)) continue;
            const auto where = file + ":" + std::to_string(number);
            found.push_back(where + ": " + rule.what + ": \"" + match.str() + "\"");
        }
    }
    return found;
}

auto is_text(const std::string& text) -> bool { return text.find('\0') == std::string::npos; }

/// Every file under the source root but build trees, hidden folders and caches.
auto source_files() -> std::vector<std::filesystem::path> {
    std::vector<std::filesystem::path> files;
    auto it = std::filesystem::recursive_directory_iterator(".");
    for (; it != std::filesystem::recursive_directory_iterator(); ++it) {
        const auto name = it->path().filename().string();
        const bool skipped = name.starts_with("build") || name.starts_with(".") || name == "subprojects";
        if (it->is_directory() && skipped) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file() && !name.starts_with(".")) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TEST_CASE("product words: a rule finds what it names and passes the product's own words") {
    auto found = [](const std::string& text) { return process_words("f", text).size(); };
    CHECK(found(std::string("see issue ") + "13 item 2") == 1);
    CHECK(found(std::string("(Issue #") + "9)") == 1);
    CHECK(found(std::string("at the fifth ") + "stop") == 1);
    CHECK(found(std::string("on this ") + "branch") == 1);
    CHECK(found(std::string("measured on ") + "1d8c13a") == 1);
    CHECK(found(std::string("../sha") + "red/seeds/x") == 1);
    CHECK(found(std::string("FIDELITY") + ".md 4.4") == 1);
    CHECK(found(std::string("btrfs-fast-fsync-vs-page-release") + ".txt") == 1);
    CHECK(found("the commit issues a flush, then issues 2 writes") == 0);
    CHECK(found("a stop request ends the run; the next stop request too") == 0);
    CHECK(found("v6.5: b98dba273a0e (\"jbd2: remove journal_clean_one_cp_list()\")") == 0);
    CHECK(found("golden hash 0x1d8c13a5be00f1c2 at 2af3c4d5e6f70819") == 0);
}

TEST_CASE("product words: no text of the tree names a work item, a session, a review or an outside path") {
    REQUIRE_MESSAGE(std::filesystem::is_directory("sim"), "sim/ is missing (tests run from the root)");
    std::vector<std::string> found;
    std::size_t files = 0;
    for (const auto& path : source_files()) {
        std::ifstream in(path, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!is_text(text)) continue;
        ++files;
        auto here = process_words(path.lexically_relative(".").string(), text);
        found.insert(found.end(), here.begin(), here.end());
    }
    CHECK(files > 300);
    std::string listing;
    for (const auto& line : found) listing += line + "\n";
    CHECK_MESSAGE(found.empty(), found.size() << " process words:\n" << listing);
}
