// Tests of loader/json_reader: the one reader of scenarios, repros and campaign
// results. Hostile input (deep nesting, huge numbers, directories, control
// characters) gets one message with the file and the JSON path, never an
// uncaught library exception; sizes read as xfs_io writes them.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "loader/json_reader.hpp"
#include "loader/scenario.hpp"
#include "report/perf.hpp"
#include "report/report.hpp"
#include "runner/repro.hpp"
#include "sim/stop.hpp"
#include "tests/support.hpp"

namespace {

template <class Body>
auto error_of(Body body) -> std::string {
    return test_support::input_error_of(body);
}

auto parse_error(const std::string& text) -> std::string {
    return error_of([&] { loader::parse_json(text, "x.json"); });
}

auto nested(std::size_t depth) -> std::string {
    return "{\"a\": " + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
}

auto repeat(const std::string& text, std::size_t count) -> std::string {
    std::string out;
    for (std::size_t i = 0; i < count; i++) out += text;
    return out;
}

auto write_file(const std::string& path, const std::string& text) -> std::string {
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

}  // namespace

TEST_CASE("parse_json: a duplicate key is named by its path, also under arrays") {
    CHECK(parse_error(R"({"a": [{"b": 1}, {"b": 2, "c": {"d": 1, "d": 2}}]})") ==
          "x.json: $.a[1].c.d: expected each key once per object, got a duplicate key");
    CHECK(parse_error(R"({"a": [1, 2, {"x y": 1, "x y": 1}]})") ==
          "x.json: $.a[2][\"x y\"]: expected each key once per object, got a duplicate key");
    // The same key in sibling objects is no duplicate.
    CHECK(parse_error(R"({"a": [{"b": 1}, {"b": 2}], "c": {"b": 3}})") == "no error");
}

TEST_CASE("parse_json: nesting deeper than json_depth_max is refused with its path") {
    CHECK(parse_error(nested(loader::json_depth_max)) == "no error");
    CHECK(parse_error(nested(loader::json_depth_max + 1)) ==
          "x.json: $.a" + repeat("[0]", loader::json_depth_max - 1) +
              ": expected arrays and objects nested at most 100 deep, got deeper nesting");
    // Tens of thousands of levels are refused at level 101, with the path of that level.
    CHECK(parse_error(std::string(50'000, '[') + std::string(50'000, ']')) ==
          "x.json: $" + repeat("[0]", loader::json_depth_max) +
              ": expected arrays and objects nested at most 100 deep, got deeper nesting");
}

TEST_CASE("parse_json: numbers outside what a double or 64 bits hold are named as written") {
    CHECK(parse_error(R"({"a": [1, 21e308]})") ==
          "x.json: $.a[1]: expected a number a double can hold, got 21e308");
    CHECK(parse_error(R"({"a": 1e400})") == "x.json: $.a: expected a number a double can hold, got 1e400");
    CHECK(parse_error(R"({"a": -1e400})") == "x.json: $.a: expected a number a double can hold, got -1e400");
    CHECK(parse_error(R"({"seed": 18446744073709551616})") ==
          "x.json: $.seed: expected an integer from -9223372036854775808 to 18446744073709551615, got "
          "18446744073709551616");
    CHECK(parse_error(R"([-9223372036854775809])") ==
          "x.json: $[0]: expected an integer from -9223372036854775808 to 18446744073709551615, got "
          "-9223372036854775809");
    CHECK(parse_error(R"({"seed": 18446744073709551615, "small": -9223372036854775808, "f": 1.5e300})") ==
          "no error");
}

TEST_CASE("parse_json: a syntax error is a syntax error, an empty file says so") {
    CHECK(parse_error("{\"a\": 1,}") ==
          "x.json: $: expected valid JSON, got a syntax error at line 1, column 9");
    CHECK(parse_error("") == "x.json: $: expected valid JSON, got an empty file");
}

TEST_CASE("read_text_file: a directory and a missing file are named as such") {
    CHECK(error_of([] { loader::read_text_file("scenarios/btrfs", "scenario file"); }) ==
          "scenarios/btrfs: $: expected a readable scenario file, got a directory");
    CHECK(error_of([] { loader::load_scenario("scenarios/btrfs"); }) ==
          "scenarios/btrfs: $: expected a readable scenario file, got a directory");
    CHECK(error_of([] { runner::read_repro("tests/no/such.json"); }) ==
          "tests/no/such.json: $: expected a readable repro file, got No such file or directory");
}

TEST_CASE("JsonReader: names are printable text, numbers unsigned and in range") {
    const loader::JsonReader in("x.json");
    const auto json = loader::parse_json(
        R"({"nul": "a\u0000b", "esc": "\u001b[31m", "ok": "d0/t0.f1 é", "c1": "a\u0085b", "bidi": "fi\u202ex",
            "empty": "", "name": "btrfs/fast-fsync_v1.2:pct@3+x", "float": 500.9, "neg": -1,
            "big": 4294967297, "t": true})",
        "x.json");
    CHECK(error_of([&] { in.read_string(json.at("nul"), "$.nul"); }) ==
          "x.json: $.nul: expected printable text (no control characters), got \"a\\u0000b\"");
    CHECK(error_of([&] { in.read_string(json.at("esc"), "$.esc"); }) ==
          "x.json: $.esc: expected printable text (no control characters), got \"\\u001b[31m\"");
    CHECK(in.read_text(json.at("ok"), "$.ok") == "d0/t0.f1 é");
    CHECK(in.read_name(json.at("name"), "$.name") == "btrfs/fast-fsync_v1.2:pct@3+x");
    // Names: ASCII letters, digits and _-./:@+ only; messages escape what is not ASCII.
    const std::string name_expected = "expected a name of ASCII letters, digits and _-./:@+, got ";
    CHECK(error_of([&] { in.read_name(json.at("nul"), "$.nul"); }) ==
          "x.json: $.nul: " + name_expected + "\"a\\u0000b\"");
    CHECK(error_of([&] { in.read_name(json.at("ok"), "$.ok"); }) ==
          "x.json: $.ok: " + name_expected + "\"d0/t0.f1 \\u00e9\"");
    CHECK(error_of([&] { in.read_name(json.at("c1"), "$.c1"); }) ==
          "x.json: $.c1: " + name_expected + "\"a\\u0085b\"");
    CHECK(error_of([&] { in.read_name(json.at("bidi"), "$.bidi"); }) ==
          "x.json: $.bidi: " + name_expected + "\"fi\\u202ex\"");
    CHECK(error_of([&] { in.read_name(json.at("empty"), "$.empty"); }) ==
          "x.json: $.empty: " + name_expected + "an empty string");
    // C1 controls (U+0080 to U+009F) are control characters too; other text is printable.
    CHECK(error_of([&] { in.read_string(json.at("c1"), "$.c1"); }) ==
          "x.json: $.c1: expected printable text (no control characters), got \"a\\u0085b\"");
    CHECK(in.read_string(json.at("bidi"), "$.bidi") == "fi\u202ex");
    CHECK(error_of([&] { in.read_unsigned(json.at("float"), "$.float"); }) ==
          "x.json: $.float: expected an unsigned integer, got 500.9");
    CHECK(error_of([&] { in.read_unsigned(json.at("neg"), "$.neg"); }) ==
          "x.json: $.neg: expected an unsigned integer, got -1");
    CHECK(error_of([&] { in.read_unsigned_in(json.at("big"), "$.big", 0, 4294967295); }) ==
          "x.json: $.big: expected an unsigned integer from 0 to 4294967295, got 4294967297");
    CHECK(error_of([&] { in.read_bool(json.at("big"), "$.big"); }) ==
          "x.json: $.big: expected a boolean, got a number");
    CHECK(in.read_bool(json.at("t"), "$.t"));
}

TEST_CASE("parse_size: sizes as xfs_io writes them") {
    using loader::SizeText;
    std::uint64_t bytes = 0;
    CHECK(loader::parse_size("64k", bytes) == SizeText::ok);
    CHECK(bytes == 65536);
    CHECK(loader::parse_size("17m", bytes) == SizeText::ok);
    CHECK(bytes == 17ULL << 20);
    CHECK(loader::parse_size("1G", bytes) == SizeText::ok);
    CHECK(bytes == 1ULL << 30);
    CHECK(loader::parse_size("4096", bytes) == SizeText::ok);
    CHECK(bytes == 4096);
    CHECK(loader::parse_size("15e", bytes) == SizeText::ok);
    CHECK(bytes == 15ULL << 60);
    CHECK(loader::parse_size("16e", bytes) == SizeText::too_large);
    CHECK(loader::parse_size("18446744073709551616", bytes) == SizeText::too_large);
    for (const char* bad : {"", "k", "64q", "64kb", "-1k", " 64k", "0x10", "1.5m"}) {
        CAPTURE(bad);
        CHECK(loader::parse_size(bad, bytes) == SizeText::malformed);
    }
}

TEST_CASE("load: every size field takes 64k and friends, as plain numbers read") {
    const std::string with_suffixes = R"({"name": "s", "model": "btrfs",
      "device": {"block_size": "4k", "blocks": 1024, "bandwidth": "100m"},
      "machine": {"page_cache": "1m", "reclaim_batch": "128k"},
      "setup": [{"op": "create", "file": "I"}],
      "tasks": [{"name": "app", "ops": [{"op": "write", "file": "I", "offset": "64k", "length": "8K"}]}],
      "checkers": ["fsync_durability"], "variants": [{"name": "fix", "expect": "holds"}]})";
    const auto scenario = loader::parse_scenario(with_suffixes, "s.json");
    CHECK(scenario.device.block_size == 4096);
    CHECK(scenario.device.bandwidth == 100ULL << 20);
    CHECK(scenario.machine.page_cache_bytes == 1ULL << 20);
    CHECK(scenario.machine.reclaim_batch_bytes == 128ULL << 10);
    CHECK(scenario.tasks.at(0).ops.at(0).offset == 65536);
    CHECK(scenario.tasks.at(0).ops.at(0).length == 8192);

    const std::string fio =
        R"({"name": "f", "model": "btrfs", "device": {"block_size": 4096, "blocks": 65536},
      "workload": {"fio": {"jobs": 2, "rw": "write", "bs": "8k", "size": "1m", "io_size": "512k",
                           "fsync": 1}},
      "checkers": ["fsync_durability"], "variants": [{"name": "fix", "expect": "holds"}]})";
    const auto expanded = loader::parse_scenario(fio, "f.json");
    REQUIRE(expanded.fio);
    CHECK(expanded.fio->bs == 8192);
    CHECK(expanded.fio->size == 1ULL << 20);
    CHECK(expanded.fio->io_size == 512ULL << 10);

    const std::string fs_mark =
        R"({"name": "m", "model": "btrfs", "device": {"block_size": 4096, "blocks": 65536},
      "workload": {"fs_mark": {"files": 4, "size": "16k"}},
      "checkers": ["fsync_durability"], "variants": [{"name": "fix", "expect": "holds"}]})";
    const auto marked = loader::parse_scenario(fs_mark, "m.json");
    REQUIRE(marked.fs_mark);
    CHECK(marked.fs_mark->size == 16384);
}

TEST_CASE("load: a sweep over a size field takes sizes written 64k") {
    const std::string sweep =
        R"({"name": "f", "model": "btrfs", "device": {"block_size": 4096, "blocks": 65536},
      "workload": {"fio": {"jobs": 1, "rw": "write", "bs": "4k", "size": "64k", "fsync": 1}},
      "sweep": {"parameter": "size", "points": [{"size": "64k"}, {"size": "128k"}]},
      "perf": {"metric": "throughput", "ratios": [{"numerator": "fix", "denominator": "fix", "min": 0,
                                                   "max": 2}]},
      "checkers": ["fsync_durability"], "variants": [{"name": "fix", "expect": "holds"}]})";
    const auto scenario = loader::parse_scenario(sweep, "f.json");
    CHECK(scenario.sweep_values == std::vector<std::uint64_t>{65536, 131072});
}

TEST_CASE("load: an ops array of 100,000 writes is read whole") {
    // The reader walks the ops array once (a callback parser that rescanned it at the end of
    // every op object would take minutes here: the suite's own time shows it, no clock asserts it).
    std::string ops;
    for (int i = 0; i < 100'000; i++) {
        ops +=
            std::string(i == 0 ? "" : ",") + R"({"op": "write", "file": "I", "offset": 0, "length": 4096})";
    }
    const std::string text =
        R"({"name": "long", "model": "btrfs", "device": {"block_size": 4096, "blocks": 1024},
      "setup": [{"op": "create", "file": "I"}], "tasks": [{"name": "app", "ops": [)" +
        ops + R"(]}],
      "checkers": ["fsync_durability"], "variants": [{"name": "fix", "expect": "holds"}]})";
    const auto scenario = loader::parse_scenario(text, "long.json");
    CHECK(scenario.tasks.at(0).ops.size() == 100'000);
    CHECK(scenario.tasks.at(0).ops.back().length == 4096);
}

TEST_CASE("read_campaign_result and read_repro check numbers as the loader does") {
    const auto dir = std::filesystem::temp_directory_path() / "crashsim_json_reader_test";
    std::filesystem::create_directories(dir);
    const std::string result_head =
        R"({"crashsim_result": 1, "scenario": "s", "scenario_hash": "0123456789abcdef",
      "variant": "v", "strategy": "random", "seed": 1, )";
    const std::string result_tail = R"(, "schedules_run": 1, "crash_states": 0, "steps": 1,
      "interrupted": false, "violations": []})";
    const auto result = [&](const std::string& middle) {
        const auto path = write_file((dir / "result.json").string(), result_head + middle + result_tail);
        return error_of([&] { report::read_campaign_result(path); });
    };
    const std::string path = (dir / "result.json").string();
    CHECK(result(R"("schedules": 10, "shard": {"index": 0, "count": 2})") == "no error");
    CHECK(result(R"("schedules": 10, "shard": {"index": 4294967297, "count": 2})") ==
          path + ": $.shard.index: expected an unsigned integer from 0 to 1, got 4294967297");
    CHECK(result(R"("schedules": 500.9, "shard": {"index": 0, "count": 2})") ==
          path + ": $.schedules: expected an unsigned integer, got 500.9");
    CHECK(result(R"("schedules": 21e308, "shard": {"index": 0, "count": 2})") ==
          path + ": $.schedules: expected a number a double can hold, got 21e308");
    CHECK(result(R"("schedules": 10, "schedules": 10, "shard": {"index": 0, "count": 2})") ==
          path + ": $.schedules: expected each key once per object, got a duplicate key");
    const std::string repro = (dir / "repro.json").string();
    write_file(repro, R"({"crashsim_repro": 1, "seed": -1})");
    CHECK(error_of([&] { runner::read_repro(repro); }) ==
          repro + ": $.scenario_path: expected a required key, got nothing");
    write_file(repro, "{\"crashsim_repro\": 1, \"seed\": 1e400}");
    CHECK(error_of([&] { runner::read_repro(repro); }) ==
          repro + ": $.seed: expected a number a double can hold, got 1e400");
    CHECK(error_of([&] { runner::read_repro(dir.string()); }) ==
          dir.string() + ": $: expected a readable repro file, got a directory");
    std::filesystem::remove_all(dir);
}

TEST_CASE("CheckTable: performance rows keep the columns aligned") {
    const std::vector<loader::Scenario> loaded = {
        loader::load_scenario("scenarios/btrfs/fast-fsync-vs-page-release.json"),
        loader::load_scenario("scenarios/btrfs/release-full-sync-cost.json")};
    const report::CheckTable table(loaded);
    runner::CheckRow perf;
    perf.scenario = loaded[1].name;
    perf.variant = runner::perf_row_variant(loaded[1].perf->ratios.at(0), "jobs", 64);
    perf.expectation = runner::perf_row_expectation(loaded[1], loaded[1].perf->ratios.at(0));
    perf.met = true;
    runner::CheckRow plain;
    plain.scenario = loaded[0].name;
    plain.variant = loaded[0].variants.at(0).name;
    plain.expectation = "holds";
    const auto header = table.header();
    const auto verdict = header.find("verdict");
    REQUIRE(verdict != std::string::npos);
    CHECK(perf.variant.size() > 12);
    CHECK(perf.expectation.size() > 28);
    CHECK(table.row(perf).find(" ok ") + 1 == verdict);
    CHECK(table.row(plain).find(" FAILED ") + 1 == verdict);
    CHECK(table.row(perf).size() == table.row(plain).size());
    CHECK(header.find("expectation") == header.find("variant") + static_cast<std::size_t>(table.variant) + 1);
}

TEST_CASE("loading polls the stop request: reading, parsing and loading end with LoadInterrupted") {
    // SIGINT and SIGTERM are heard while a huge scenario loads.
    const auto interrupted = [](auto body) -> std::string {
        sim::request_stop();
        std::string message = "not interrupted";
        try {
            body();
        } catch (const loader::LoadInterrupted& error) {
            message = error.what();
        }
        sim::clear_stop();
        return message;
    };
    std::string big = "[0";
    for (int i = 0; i < 5000; i++) big += ",0";
    big += "]";
    CHECK(interrupted([&] { loader::parse_json(big, "x.json"); }) == "interrupted while loading x.json");
    CHECK(interrupted([] { loader::read_text_file("scenarios/btrfs/fast-fsync-vs-page-release.json"); }) ==
          "interrupted while loading scenarios/btrfs/fast-fsync-vs-page-release.json");
    CHECK(interrupted([] { loader::load_scenario("scenarios/xfs/generic-042.json"); }) ==
          "interrupted while loading scenarios/xfs/generic-042.json");
    // A workload is polled while it expands (here from a file of a few lines).
    const std::string fio =
        R"({"name": "x", "model": "btrfs", "device": {"block_size": 4096, "blocks": 65536},
            "workload": {"fio": {"jobs": 2, "rw": "write", "bs": 4096, "size": "64k", "fsync": 1}},
            "checkers": ["fsync_durability"], "variants": [{"name": "a", "expect": "holds"}]})";
    CHECK(interrupted([&] { loader::parse_scenario(fio, "fio.json"); }) ==
          "interrupted while loading fio.json");
    // Without a request, the same loads.
    CHECK(loader::parse_scenario(fio, "fio.json").tasks.size() == 2);
}

TEST_CASE("JsonReader: a number is quoted as the file writes it") {
    loader::NumberTexts numbers;
    const auto json = loader::parse_json(
        R"({"big": 18446744073709551616.0, "exp": 2E19, "list": [1, {"f": 4096.50}], )"
        R"("neg": -0.0, "int": -1})",
        "x.json", &numbers);
    const loader::JsonReader in("x.json", &numbers);
    const auto unsigned_error = [&](const loader::Json& value) {
        return error_of([&] { in.read_unsigned(value, "$.v"); });
    };
    CHECK(unsigned_error(json.at("big")) ==
          "x.json: $.v: expected an unsigned integer, got 18446744073709551616.0");
    CHECK(unsigned_error(json.at("exp")) == "x.json: $.v: expected an unsigned integer, got 2E19");
    CHECK(unsigned_error(json.at("list")[1].at("f")) ==
          "x.json: $.v: expected an unsigned integer, got 4096.50");
    CHECK(unsigned_error(json.at("neg")) == "x.json: $.v: expected an unsigned integer, got -0.0");
    CHECK(unsigned_error(json.at("int")) == "x.json: $.v: expected an unsigned integer, got -1");
    // Without the recorded texts, a double prints as a double does.
    const loader::JsonReader plain("x.json");
    CHECK(error_of([&] { plain.read_unsigned(json.at("big"), "$.v"); }) ==
          "x.json: $.v: expected an unsigned integer, got 1.8446744073709552e+19");
}
