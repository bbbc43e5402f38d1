// The fuzz targets: each takes bytes as a file's text and feeds
// them to one reader, or to the runner. Bad input must end in InputError (the
// one clear message and exit 2 of every verb); anything else that escapes, an
// internal assertion, or a sanitizer report is a defect.
//
// Built two ways: into crashsim_tests, where tests/fuzz/corpus_test.cpp runs
// every target over the seed corpus (scenarios/, tests/bad_input/,
// tests/fuzz/corpus/), and, with clang's libFuzzer, as one fuzzer per target
// (tests/fuzz/fuzz_target.cpp; tools/fuzz builds and runs them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fuzz {

/// One target: a name (the fuzzer's) and the function that takes an input.
struct Target {
    const char* name;
    const char* about;
    void (*run)(const std::string& input);
};

/// scenario_loader, repro_loader, result_reader, scenario_runner.
auto targets() -> const std::vector<Target>&;
auto find_target(const std::string& name) -> const Target*;

}  // namespace fuzz
