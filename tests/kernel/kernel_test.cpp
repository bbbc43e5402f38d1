// The real-kernel harness's pure parts: the data pattern and the canary
// decode back into the model's content tags, and the oracle replayed from
// the real operations' markers binds a promise only once its fsync ended.
#include <doctest/doctest.h>

#include <vector>

#include "kernel/pattern.hpp"
#include "kernel/workload.hpp"
#include "loader/scenario.hpp"

namespace {

using model::disk::Content;
using model::disk::ContentKind;

}  // namespace

TEST_CASE("kernel pattern: a written block decodes to its file, block and version") {
    std::vector<std::uint8_t> block(4096);
    kernel::fill_data(block, 3, 5 * 4096, 42, 4096);
    const Content content = kernel::decode_block(block, 3, 5);
    CHECK(content == Content::data(3, 5, 42));
    // Read as another file's block, or another offset's: not this file's data.
    CHECK(kernel::decode_block(block, 2, 5).kind == ContentKind::data);
    CHECK(kernel::decode_block(block, 2, 5) != Content::data(2, 5, 42));
    CHECK(kernel::decode_block(block, 3, 6) != Content::data(3, 6, 42));
}

TEST_CASE("kernel pattern: a block two writes share decodes to the newer version") {
    std::vector<std::uint8_t> block(4096, 0);
    kernel::fill_data({block.data(), 1024}, 0, 0, 2, 4096);
    kernel::fill_data({block.data() + 1024, 1000}, 0, 1024, 3, 4096);
    CHECK(kernel::decode_block(block, 0, 0) == Content::data(0, 0, 3));
    const kernel::DataTag tag = kernel::tag_of(block);
    CHECK(tag.data);
    CHECK(tag.version == 3);
    // The older part alone: the older version (the newer write lost).
    std::fill(block.begin() + 1024, block.end(), 0);
    CHECK(kernel::decode_block(block, 0, 0) == Content::data(0, 0, 2));
}

TEST_CASE("kernel pattern: the canary decodes to stale, foreign bytes to metadata, zeros to zeros") {
    std::vector<std::uint8_t> block(4096);
    kernel::fill_canary(block, 1234, 4096);
    CHECK(kernel::decode_block(block, 0, 0) == Content::stale(1234));
    // One canary word in a written block exposes it.
    std::vector<std::uint8_t> mixed(4096);
    kernel::fill_data(mixed, 0, 0, 1, 4096);
    std::copy(block.begin(), block.begin() + 8, mixed.begin() + 4088);
    CHECK(kernel::decode_block(mixed, 0, 0).kind == ContentKind::stale);
    std::vector<std::uint8_t> foreign(4096, 0x5a);
    CHECK(kernel::decode_block(foreign, 0, 0).kind == ContentKind::meta);
    CHECK_FALSE(kernel::tag_of(foreign).data);
    std::vector<std::uint8_t> zeros(4096, 0);
    CHECK(kernel::decode_block(zeros, 0, 0).kind == ContentKind::zeros);
}

TEST_CASE("kernel oracle: a promise binds from its fsync's end marker on") {
    const loader::Scenario scenario = loader::load_scenario("scenarios/jbd2/sync-durability.json");
    // The set-up's creates, then app's write and fsync, as markers 1..8.
    std::vector<kernel::RanOp> ran;
    std::uint64_t marker = 0;
    const auto add = [&](const loader::Op& op, std::uint64_t version) {
        ran.push_back({&op, "", marker + 1, marker + 2, true, {}, version});
        marker += 2;
    };
    add(scenario.setup[0], 0);
    add(scenario.setup[1], 0);
    add(scenario.tasks[0].ops[0], 1);  // write A
    add(scenario.tasks[0].ops[1], 0);  // fsync A: markers 7 and 8
    CHECK(kernel::oracle_at(scenario, ran, 6).promises().empty());
    const checkers::Oracle during = kernel::oracle_at(scenario, ran, 7);
    REQUIRE(during.promises().size() == 1);
    CHECK_FALSE(during.promises()[0].returned);
    const checkers::Oracle after = kernel::oracle_at(scenario, ran, 8);
    REQUIRE(after.promises().size() == 1);
    CHECK(after.promises()[0].returned);
    CHECK(after.promises()[0].contents.find(0) == Content::data(0, 0, 1));
    CHECK(after.last_version() == 1);
}
