// An interrupted check's reports: the variants it never ran and
// the one it cut short are skipped, not green and not failed, and the report
// says it was interrupted.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "loader/json_reader.hpp"
#include "runner/campaign.hpp"

namespace {

auto row(const std::string& variant, bool met) -> runner::CheckRow {
    runner::CheckRow result;
    result.scenario = "s";
    result.scenario_path = "s.json";
    result.variant = variant;
    result.expectation = "holds";
    result.met = met;
    result.detail = met ? "no violation in 10 schedules" : "";
    return result;
}

auto count(const std::string& text, const std::string& what) -> std::size_t {
    std::size_t found = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) found++;
    return found;
}

}  // namespace

TEST_CASE("check reports: unrun and cut-short variants of an interrupted check are skipped, and it says so") {
    std::vector<runner::CheckRow> rows;
    rows.push_back(row("ran", true));
    runner::CheckRow cut = row("cut", false);
    cut.interrupted = true;
    cut.detail = "random was interrupted after 3 schedules";
    rows.push_back(cut);
    runner::CheckRow unrun = row("unrun", false);
    unrun.skipped = true;
    unrun.detail = "not run: the check was interrupted before it";
    rows.push_back(unrun);

    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "crashsim-interrupted-report-test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string junit = (dir / "check.xml").string();
    const std::string json = (dir / "check.json").string();
    report::write_junit(rows, 1.0, junit);
    report::write_check_json(rows, 1.0, json);

    const std::string xml = loader::read_text_file(junit);
    CHECK(xml.find("<testsuites name=\"crashsim check (interrupted)\" tests=\"3\" failures=\"0\" "
                   "errors=\"0\" skipped=\"2\"") != std::string::npos);
    CHECK(count(xml, "<skipped message=") == 2);
    CHECK(xml.find("<skipped message=\"not run: the check was interrupted before it\"/>") !=
          std::string::npos);
    CHECK(xml.find("<failure") == std::string::npos);

    const auto report = nlohmann::json::parse(loader::read_text_file(json));
    CHECK(report["summary"]["interrupted"] == true);
    CHECK(report["summary"]["skipped"] == 2);
    CHECK(report["summary"]["failed"] == 0);
    CHECK(report["summary"]["met"] == 1);
    CHECK(report["variants"][2]["skipped"] == true);
    CHECK(report["variants"][1]["interrupted"] == true);
    CHECK_FALSE(report["variants"][0].contains("skipped"));

    // A check that ran to its end: nothing skipped, not interrupted.
    report::write_check_json({row("ran", true)}, 1.0, json);
    CHECK(nlohmann::json::parse(loader::read_text_file(json))["summary"]["interrupted"] == false);
    report::write_junit({row("ran", true)}, 1.0, junit);
    CHECK(loader::read_text_file(junit).find("(interrupted)") == std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("check reports: a JUnit row of a scenario with a fault budget carries its fault counts") {
    runner::CheckRow faulty = row("faulty", true);
    faulty.faults = runner::FaultCounts{7, 4, 2};
    const runner::CheckRow plain = row("plain", true);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "crashsim-junit-faults-test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string junit = (dir / "check.xml").string();
    report::write_junit({faulty, plain}, 1.0, junit);
    const std::string xml = loader::read_text_file(junit);
    // Properties of the faulty row only, and its console line in <system-out>.
    CHECK(count(xml, "<properties>") == 1);
    CHECK(xml.find("<property name=\"faults.injected\" value=\"7\"/>") != std::string::npos);
    CHECK(xml.find("<property name=\"faults.survived\" value=\"4\"/>") != std::string::npos);
    CHECK(xml.find("<property name=\"faults.detected\" value=\"2\"/>") != std::string::npos);
    CHECK(xml.find("<property name=\"faults.neither\" value=\"1\"/>") != std::string::npos);
    CHECK(xml.find("device faults: 7 injected into crash states: 4 survived, 2 detected, 1 neither") !=
          std::string::npos);
    const std::size_t plain_case = xml.find("name=\"plain: holds\"");
    REQUIRE(plain_case != std::string::npos);
    CHECK(xml.find("<property", plain_case) == std::string::npos);
    std::filesystem::remove_all(dir);
}
