// Write I/O errors (faults.write_errors): the scheduler's failing
// twin of a device completion, errseq reporting per open file (lib/errseq.c),
// the oracle after a reported error (fsyncgate), and the bundled scenario
// scenarios/faults/xfs-write-error-fsync.json.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/oracle.hpp"
#include "loader/scenario.hpp"
#include "model/disk/block_device.hpp"
#include "model/errseq.hpp"
#include "runner/runner.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "tests/model/disk/device_support.hpp"

namespace {

constexpr const char* scenario_path = "scenarios/faults/xfs-write-error-fsync.json";

/// A device with write errors on, one failable write submitted; the
/// scheduler's candidates once the submitter ended.
struct FailableWrite {
    model::disk::BlockDevice device{64, test_support::nvme()};
    sim::Scheduler scheduler;
    std::vector<bool> ended;  // on_end's argument
    explicit FailableWrite(std::uint32_t io_errors) : scheduler({.io_errors = io_errors}, nullptr) {
        model::disk::FaultSettings faults;
        faults.budget = 1;
        faults.write_errors = true;
        device.set_faults(faults);
        scheduler.spawn("submitter", [this] {
            device.submit_failable_write(3, 1, model::disk::Content::data(0, 0, 1), "data",
                                         [this](bool ok) { ended.push_back(ok); });
        });
        sim::FirstStrategy first;
        REQUIRE(scheduler.step(first) == sim::StepOutcome::ran_task);
    }
};

auto strategy(const char* text) -> sim::StrategySpec {
    sim::StrategySpec spec;
    REQUIRE(sim::parse_strategy(text, spec));
    return spec;
}

}  // namespace

TEST_CASE("write errors: a failable completion has a failing twin only within the budget") {
    FailableWrite none(0);
    CHECK(none.scheduler.candidates().size() == 1);

    FailableWrite one(1);
    const auto candidates = one.scheduler.candidates();
    REQUIRE(candidates.size() == 2);
    CHECK(candidates[0].charge == sim::Charge::none);
    CHECK(candidates[1].charge == sim::Charge::io_error);
    CHECK(candidates[1].key() != candidates[0].key());
    const sim::Candidate twin = candidates[1];
    CHECK(one.scheduler.execute(twin) == sim::StepOutcome::fired_timer);
    CHECK(one.ended == std::vector<bool>{false});
    CHECK(one.scheduler.io_errors_used() == 1);
    // Not durable, not in the cache: no crash keeps it, reads see the old block.
    CHECK(one.device.pending().empty());
    CHECK(one.device.read(3) != model::disk::Content::data(0, 0, 1));
    CHECK(one.device.counters().write_errors == 1);
}

TEST_CASE("errseq: two open files each see the error once; a later opener does not; an unseen one does") {
    model::MappingErrors mapping;
    std::uint32_t a = mapping.wb_err.sample();
    std::uint32_t b = mapping.wb_err.sample();
    mapping.set_eio();
    std::uint32_t early = mapping.wb_err.sample();  // opened before anyone saw it
    CHECK(model::file_check_and_advance_wb_err(mapping, a) == -model::eio);
    CHECK(model::file_check_and_advance_wb_err(mapping, a) == 0);  // the second fsync returns 0
    std::uint32_t late = mapping.wb_err.sample();                    // opened after it was seen
    CHECK(model::file_check_and_advance_wb_err(mapping, b) == -model::eio);
    CHECK(model::file_check_and_advance_wb_err(mapping, early) == -model::eio);
    CHECK(model::file_check_and_advance_wb_err(mapping, late) == 0);
    // A second error after the first was seen: every open file is told again.
    mapping.set_eio();
    CHECK(model::file_check_and_advance_wb_err(mapping, a) == -model::eio);
    CHECK(model::file_check_and_advance_wb_err(mapping, late) == -model::eio);
    CHECK(model::file_check_and_advance_wb_err(mapping, late) == 0);
    // The legacy flag: once in all, and file_check_and_advance_wb_err clears it.
    mapping.set_eio();
    CHECK(mapping.check_legacy());
    CHECK_FALSE(mapping.check_legacy());
}

TEST_CASE("oracle: an fsync after a reported error promises nothing written before it; a newer write again") {
    checkers::Oracle oracle(1);
    const std::uint64_t first = oracle.begin_write();
    oracle.end_size(0, oracle.begin_size(0, false, 4096));
    oracle.end_write(0, 0, 1, first, 4096);
    const std::size_t failed = oracle.begin_fsync(0, 1, "fsync #1 of I");
    oracle.error_reported(0);  // it returned EIO: never ended, it promises nothing
    CHECK_FALSE(oracle.promises()[failed].returned);
    const std::size_t later = oracle.begin_fsync(0, 2, "fsync #2 of I");
    oracle.end_fsync(later, 3);
    CHECK(oracle.promises()[later].contents.empty());
    CHECK(oracle.legitimate_sizes(oracle.promises()[later]).front().low == 0);
    const std::uint64_t second = oracle.begin_write();
    oracle.end_size(0, oracle.begin_size(0, false, 8192));
    oracle.end_write(0, 1, 2, second, 8192);
    const std::size_t newer = oracle.begin_fsync(0, 4, "fsync #3 of I");
    oracle.end_fsync(newer, 5);
    CHECK_FALSE(oracle.promises()[newer].contents.find(0).has_value());
    CHECK(oracle.promises()[newer].contents.find(1).has_value());
    CHECK(oracle.legitimate_sizes(oracle.promises()[newer]).front().low == 8192);
}

TEST_CASE("write errors scenario: detected or survived, never a violation; the second fsync returns 0") {
    const loader::Scenario scenario = loader::load_scenario(scenario_path);
    runner::Simulation simulation(scenario, scenario.variants.front());
    runner::FaultCounts faults;
    bool fsyncgate = false;
    for (const char* text : {"random", "pct:2"}) {
        for (std::uint64_t seed = 0; seed < 80; seed++) {
            const runner::RunOutcome outcome = simulation.run_strategy(strategy(text), seed, true);
            CHECK_MESSAGE(!outcome.violated(), outcome.story);
            faults += outcome.faults;
            const auto eio = outcome.trace.find("fsync of inode I fails with EIO: a data write");
            fsyncgate =
                fsyncgate || (eio != std::string::npos &&
                              outcome.trace.find("fsync of inode I returns 0", eio) != std::string::npos);
        }
    }
    CHECK(faults.injected > 0);
    CHECK(faults.detected > 0);
    CHECK(faults.survived > 0);
    CHECK(fsyncgate);
}

TEST_CASE("write errors: a run with a write error replays byte for byte") {
    const loader::Scenario scenario = loader::load_scenario(scenario_path);
    runner::Simulation simulation(scenario, scenario.variants.front());
    for (std::uint64_t seed = 0; seed < 80; seed++) {
        const runner::RunOutcome outcome = simulation.run_strategy(strategy("random"), seed, true);
        if (outcome.faults.injected == 0) continue;
        const runner::RunOutcome again = simulation.replay(outcome.choices, std::nullopt, true);
        CHECK(again.trace.find("the device returns EIO for the write") != std::string::npos);
        CHECK(again.trace_hash == simulation.replay(outcome.choices, std::nullopt, true).trace_hash);
        return;
    }
    FAIL("no random schedule of 80 failed a write");
}
