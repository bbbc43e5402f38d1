// libFuzzer's entry point for one target of tests/fuzz/harness.hpp, chosen
// at build time (-DCRASHSIM_FUZZ_TARGET="scenario_loader"; meson.build builds
// one fuzzer per target with -Dfuzz=true and clang; tools/fuzz runs them).
#include <cstdlib>
#include <cstdio>
#include <string>

#include "tests/fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fuzz::Target* const target = [] {
        const fuzz::Target* found = fuzz::find_target(CRASHSIM_FUZZ_TARGET);
        if (found == nullptr) {
            std::fprintf(stderr, "fuzz: no target %s\n", CRASHSIM_FUZZ_TARGET);
            std::abort();
        }
        return found;
    }();
    target->run(std::string(reinterpret_cast<const char*>(data), size));
    return 0;
}
