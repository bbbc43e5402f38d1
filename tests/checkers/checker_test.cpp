// The checkers register once (checkers/checker.cpp's table): every list of
// them derives from it, and the one list that cannot (the JSON Schema's
// checker enum) is read here and held equal to it.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/checker.hpp"

TEST_CASE("checker table: each entry makes a checker of its own name, and says what it judges") {
    std::set<std::string> seen;
    for (const checkers::CheckerEntry& entry : checkers::checker_table()) {
        CAPTURE(entry.name);
        CHECK(seen.insert(std::string(entry.name)).second);
        const auto checker = checkers::make_checker(entry.name);
        REQUIRE(checker != nullptr);
        CHECK(checker->name() == entry.name);
        CHECK(!entry.about.empty());
        CHECK(checkers::checker_about(entry.name) == entry.about);
    }
    CHECK(seen.size() == 8);
    CHECK(checkers::make_checker("fsck") == nullptr);
    CHECK(checkers::checker_about("fsck").empty());
    CHECK(checkers::checker_names() == std::vector<std::string>(seen.begin(), seen.end()));
}

TEST_CASE("checker table: a run adds mount and fault_outcome itself; the real kernel runs four") {
    CHECK(checkers::scenario_checker_names() ==
          std::vector<std::string>{"freeze_quiescence", "frozen_image", "fs_consistency", "fsync_durability",
                                   "journal_integrity", "no_stale_data"});
    CHECK(checkers::real_kernel_checker_names() ==
          std::vector<std::string>{"mount", "fsync_durability", "no_stale_data", "fs_consistency"});
}

TEST_CASE("checker table: the schema's checker enum lists the checkers a scenario may name") {
    std::ifstream in("scenarios/schema/scenario.schema.json");
    REQUIRE_MESSAGE(in.good(), "the schema is missing (tests run from the project root)");
    const nlohmann::json schema = nlohmann::json::parse(in);
    REQUIRE(schema.contains("$defs"));
    REQUIRE(schema["$defs"].contains("checker"));
    const auto names = schema["$defs"]["checker"].at("enum").get<std::vector<std::string>>();
    CHECK(names == checkers::scenario_checker_names());
    // Every checker a scenario lists is one of the schema's checkers.
    CHECK(schema["properties"]["checkers"]["items"]["$ref"] == "#/$defs/checker");
}
