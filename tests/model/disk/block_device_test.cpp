// model::disk::BlockDevice: a volatile write cache, FLUSH and FUA, and the
// images a crash may leave.
#include "model/disk/block_device.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "model/disk/content.hpp"
#include "sim/scheduler.hpp"
#include "sim/strategy.hpp"
#include "sim/sync.hpp"
#include "tests/model/disk/device_support.hpp"

// Readable failures: content tags print as their description. (The same
// definition appears in each test file that compares contents.)
namespace doctest {
template <>
struct StringMaker<model::disk::Content> {
    static auto convert(const model::disk::Content& content) -> String {
        return content.describe({}, 4096).c_str();
    }
};
}  // namespace doctest

namespace {

using model::disk::BlockDevice;
using model::disk::Content;
using model::disk::ContentKind;

constexpr std::uint64_t device_blocks = 64;

using test_support::nvme;

auto keep_none(const BlockDevice& device) -> std::vector<bool> {
    return std::vector<bool>(device.pending().size(), false);
}
auto keep_all(const BlockDevice& device) -> std::vector<bool> {
    return std::vector<bool>(device.pending().size(), true);
}

/// A device inside a scheduler (its completions are timers). The device is
/// declared first so that the scheduler, and any fiber it still holds, goes
/// first.
struct Rig {
    BlockDevice device{device_blocks, nvme()};
    sim::Scheduler scheduler{{}, nullptr};
    sim::FirstStrategy first;

    /// Runs `body` in a task and steps until every task and timer is done.
    void run(const std::function<void(BlockDevice&)>& body) {
        scheduler.spawn("io", [this, body] { body(device); });
        settle();
    }
    /// Steps until nothing is left to run.
    void settle() {
        for (int i = 0; i < 10000; i++) {
            const sim::StepOutcome outcome = scheduler.step(first);
            if (outcome == sim::StepOutcome::finished) return;
            REQUIRE(outcome != sim::StepOutcome::deadlock);
        }
        FAIL("the device did not settle");
    }
    /// Fires exactly one timer (no task may be runnable).
    void fire_one_timer() {
        REQUIRE(scheduler.has_timers());
        CHECK(scheduler.step(first) == sim::StepOutcome::fired_timer);
    }
};

/// The names of the parts of `a`'s hash that differ from `b`'s.
auto differing_parts(const BlockDevice& a, const BlockDevice& b) -> std::vector<std::string> {
    std::vector<std::pair<const char*, std::uint64_t>> parts;
    a.hash_parts([&](const char* name, std::uint64_t value) { parts.emplace_back(name, value); });
    std::vector<std::string> differ;
    std::size_t part = 0;
    b.hash_parts([&](const char* name, std::uint64_t value) {
        REQUIRE(part < parts.size());
        if (parts[part++].second != value) differ.emplace_back(name);
    });
    return differ;
}

}  // namespace

TEST_CASE("block_device: a fresh device holds stale contents of an earlier owner") {
    Rig rig;
    const model::disk::Image image = rig.device.crash_image({});
    for (std::uint64_t block : std::initializer_list<std::uint64_t>{0, 1, 17, device_blocks - 1}) {
        CAPTURE(block);
        CHECK(image.read(block) == Content::stale(block));
        CHECK(rig.device.read(block) == Content::stale(block));
    }
    CHECK(image.read(17).describe({}, 4096).find("an earlier owner") != std::string::npos);
    CHECK(rig.device.pending().empty());
}

TEST_CASE("block_device: an image reads a block it has no record of as zeros") {
    const model::disk::Image empty{sim::RangeMap<model::disk::DurableBlock>{}};
    CHECK(empty.read(0) == Content::zeros());
    CHECK(empty.read(12345) == Content::zeros());
    // A device's image has a record of every block (its stale contents), so
    // a block nobody wrote is stale, not zeros.
    Rig rig;
    CHECK(rig.device.crash_image({}).read(5).kind == ContentKind::stale);
}

TEST_CASE("write_cache: a completed but unflushed write may vanish at a crash") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(8, 2, Content::data(0, 0, 1), false, "data");
    });
    REQUIRE(rig.device.pending().size() == 1);
    CHECK(rig.device.pending()[0].completed);
    // The running system reads the cache.
    CHECK(rig.device.read(8) == Content::data(0, 0, 1));
    CHECK(rig.device.read(9) == Content::data(0, 1, 1));
    const auto dropped = rig.device.crash_image(keep_none(rig.device));
    CHECK(dropped.read(8) == Content::stale(8));
    CHECK(dropped.read(9) == Content::stale(9));
    const auto kept = rig.device.crash_image(keep_all(rig.device));
    CHECK(kept.read(8) == Content::data(0, 0, 1));
    CHECK(kept.read(9) == Content::data(0, 1, 1));
    CHECK(kept.read(10) == Content::stale(10));
}

TEST_CASE("write_cache: after a flush a completed write is durable whatever the crash keeps") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(3, 1, Content::data(1, 0, 7), false, "data");
        device.flush_and_wait();
    });
    CHECK(rig.device.pending().empty());
    CHECK(rig.device.crash_image({}).read(3) == Content::data(1, 0, 7));
    CHECK(rig.device.counters().flushes == 1);
    CHECK(rig.device.counters().writes == 1);
}

TEST_CASE("write_cache: a FUA write is durable at completion, not before") {
    Rig rig;
    rig.device.submit_write(4, 1, Content::meta(9), true, "super", nullptr);
    REQUIRE(rig.device.pending().size() == 1);
    CHECK_FALSE(rig.device.pending()[0].completed);
    CHECK(rig.device.pending()[0].fua);
    // In flight: a crash may drop it.
    CHECK(rig.device.crash_image(keep_none(rig.device)).read(4) == Content::stale(4));
    rig.fire_one_timer();
    CHECK(rig.scheduler.now() == nvme().write_latency);
    CHECK(rig.device.pending().empty());
    CHECK(rig.device.crash_image({}).read(4) == Content::meta(9));
    CHECK(rig.device.counters().fua_writes == 1);
}

TEST_CASE("write_cache: a write in flight is pending and not completed until its latency passes") {
    Rig rig;
    bool completed = false;
    rig.device.submit_write(0, 1, Content::meta(1), false, "meta", [&] { completed = true; });
    CHECK_FALSE(rig.device.pending()[0].completed);
    CHECK(std::string(rig.device.pending()[0].what) == "meta");
    CHECK_FALSE(completed);
    rig.fire_one_timer();
    CHECK(completed);
    CHECK(rig.device.pending()[0].completed);
    CHECK(rig.scheduler.now() == nvme().write_latency);
}

TEST_CASE("write_cache: a flush does not cover writes that completed after it was submitted") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(1, 1, Content::data(0, 0, 1), false, "data");
        sim::Completion flushed("flush");
        device.submit_flush([&flushed] { flushed.complete(); });
        // Completes well before the flush (nvme: 20 us against 100 us).
        device.write_and_wait(2, 1, Content::data(0, 1, 2), false, "data");
        flushed.wait();
    });
    REQUIRE(rig.device.pending().size() == 1);
    CHECK(rig.device.pending()[0].block == 2);
    CHECK(rig.device.pending()[0].completed);
    const auto image = rig.device.crash_image(keep_none(rig.device));
    CHECK(image.read(1) == Content::data(0, 0, 1));
    CHECK(image.read(2) == Content::stale(2));
}

TEST_CASE("write_cache: a flush does not cover a write still in flight when it was submitted") {
    Rig rig;
    rig.device.submit_write(6, 1, Content::data(0, 0, 1), false, "data", nullptr);
    bool flushed = false;
    rig.device.submit_flush([&] { flushed = true; });
    rig.settle();
    CHECK(flushed);
    REQUIRE(rig.device.pending().size() == 1);
    CHECK(rig.device.pending()[0].completed);
    CHECK(rig.device.crash_image(keep_none(rig.device)).read(6) == Content::stale(6));
}

TEST_CASE("block_device: a state's hash tells apart flushes in flight that cover different writes") {
    // Both devices hold write 1, completed, and a FLUSH in flight; only the
    // first flush was issued after the write completed, so only it makes
    // the write durable. A visited-state key that merged the two would
    // judge one future for both.
    Rig covering;
    covering.device.submit_write(1, 1, Content::data(0, 0, 1), false, "data", nullptr);
    covering.fire_one_timer();
    covering.device.submit_flush(nullptr);
    Rig early;
    early.device.submit_write(1, 1, Content::data(0, 0, 1), false, "data", nullptr);
    early.device.submit_flush(nullptr);
    early.fire_one_timer();  // the write (20 us) before the flush (100 us)
    CHECK(differing_parts(covering.device, early.device) ==
          std::vector<std::string>{"in-flight flushes' covered writes"});
    covering.settle();
    early.settle();
    CHECK(covering.device.crash_image(keep_none(covering.device)).read(1) == Content::data(0, 0, 1));
    CHECK(early.device.crash_image(keep_none(early.device)).read(1) == Content::stale(1));
}

TEST_CASE("block_device: a state's hash tells apart which completion ends which write in flight") {
    // Two tasks each submit a FUA write of the same contents to the same
    // block, in either order: the pending writes are alike, but the timer
    // that completes write 1 is task 0's in one device and task 1's in the
    // other. Both timers are due at one instant and task 0's goes first (a
    // timer's id breaks the tie), so the next step makes a different write
    // durable in each: a key without the timers would merge two states
    // whose futures differ. (One rig at a time: a scheduler is its thread's.)
    struct Seen {
        std::vector<std::pair<const char*, std::uint64_t>> parts;
        std::uint64_t left_pending = 0;  // the write still pending after one completion
    };
    const auto run = [](bool reversed) {
        Rig rig;
        const auto submit = [&rig] {
            rig.device.submit_write(1, 1, Content::data(0, 0, 1), true, "data", nullptr);
        };
        sim::Completion submitted("submitted");
        rig.scheduler.spawn("first", [&] {
            if (reversed) submitted.wait();
            submit();
        });
        rig.scheduler.spawn("second", [&] {
            submit();
            submitted.complete();
        });
        for (int i = 0; i < (reversed ? 3 : 2); i++) {
            CHECK(rig.scheduler.step(rig.first) == sim::StepOutcome::ran_task);
        }
        REQUIRE(rig.device.pending().size() == 2);
        Seen seen;
        rig.device.hash_parts(
            [&](const char* name, std::uint64_t value) { seen.parts.emplace_back(name, value); });
        rig.fire_one_timer();
        REQUIRE(rig.device.pending().size() == 1);
        seen.left_pending = rig.device.pending()[0].sequence;
        rig.settle();
        return seen;
    };
    const Seen in_order = run(false);
    const Seen reversed = run(true);
    REQUIRE(in_order.parts.size() == reversed.parts.size());
    std::vector<std::string> differ;
    for (std::size_t i = 0; i < in_order.parts.size(); i++) {
        if (in_order.parts[i].second != reversed.parts[i].second) {
            differ.emplace_back(in_order.parts[i].first);
        }
    }
    CHECK(differ == std::vector<std::string>{"completion timers of requests in flight"});
    CHECK(in_order.left_pending == 2);
    CHECK(reversed.left_pending == 1);
}

TEST_CASE("write_cache: an older write made durable later never overwrites a newer durable one") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(5, 1, Content::data(0, 0, 1), false, "data");  // older, cached
        device.write_and_wait(5, 1, Content::data(0, 0, 2), true, "data");   // newer, FUA
    });
    REQUIRE(rig.device.pending().size() == 1);
    CHECK(rig.device.crash_image(keep_none(rig.device)).read(5) == Content::data(0, 0, 2));
    // A crash that keeps the older cached write still shows the newer one.
    CHECK(rig.device.crash_image(keep_all(rig.device)).read(5) == Content::data(0, 0, 2));
    // So does a flush that makes the older one durable afterwards.
    rig.run([](BlockDevice& device) { device.flush_and_wait(); });
    CHECK(rig.device.pending().empty());
    CHECK(rig.device.crash_image({}).read(5) == Content::data(0, 0, 2));
    CHECK(rig.device.read(5) == Content::data(0, 0, 2));
}

TEST_CASE(
    "write_cache: of two cached writes to a block, the crash image shows the newest kept one") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(7, 2, Content::data(0, 0, 1), false, "data");
        device.write_and_wait(8, 1, Content::data(0, 1, 2), false, "data");
    });
    REQUIRE(rig.device.pending().size() == 2);
    const auto both = rig.device.crash_image({true, true});
    CHECK(both.read(7) == Content::data(0, 0, 1));
    CHECK(both.read(8) == Content::data(0, 1, 2));
    const auto older_only = rig.device.crash_image({true, false});
    CHECK(older_only.read(8) == Content::data(0, 1, 1));
    const auto newer_only = rig.device.crash_image({false, true});
    CHECK(newer_only.read(7) == Content::stale(7));
    CHECK(newer_only.read(8) == Content::data(0, 1, 2));
    // The running system sees the newest write.
    CHECK(rig.device.read(8) == Content::data(0, 1, 2));
}

TEST_CASE("write_cache: crash images do not change the device") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(2, 1, Content::data(0, 0, 1), false, "data");
    });
    const std::uint64_t epoch = rig.device.epoch();
    static_cast<void>(rig.device.crash_image(keep_all(rig.device)));
    CHECK(rig.device.epoch() == epoch);
    CHECK(rig.device.pending().size() == 1);
    CHECK(rig.device.crash_image(keep_none(rig.device)).read(2) == Content::stale(2));
}

TEST_CASE("block_device: epoch changes on submit, on completion and on flush completion") {
    Rig rig;
    std::uint64_t epoch = rig.device.epoch();
    rig.device.submit_write(0, 1, Content::meta(1), false, "meta", nullptr);
    CHECK(rig.device.epoch() != epoch);
    epoch = rig.device.epoch();
    rig.fire_one_timer();  // completion
    CHECK(rig.device.epoch() != epoch);
    epoch = rig.device.epoch();
    rig.device.submit_flush(nullptr);
    rig.fire_one_timer();  // flush completion
    CHECK(rig.device.epoch() != epoch);
    epoch = rig.device.epoch();
    rig.device.format(10, 2, Content::zeros());
    CHECK(rig.device.epoch() != epoch);
}

TEST_CASE("block_device: format writes straight to the durable image") {
    Rig rig;
    rig.device.format(20, 3, Content::meta(4));
    CHECK(rig.device.pending().empty());
    const auto image = rig.device.crash_image({});
    CHECK(image.read(20) == Content::meta(4));
    // Metadata content does not shift along a run (only its offset field).
    CHECK(image.read(22).kind == ContentKind::meta);
    CHECK(image.read(23) == Content::stale(23));
    // A later cached write over a formatted block can still vanish.
    rig.run([](BlockDevice& device) {
        device.write_and_wait(20, 1, Content::data(0, 0, 1), false, "data");
    });
    CHECK(rig.device.crash_image(keep_none(rig.device)).read(20) == Content::meta(4));
}

TEST_CASE("block_device: completion timers advance virtual time by the profile's latencies") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(0, 1, Content::meta(1), false, "meta");
        device.flush_and_wait();
    });
    CHECK(rig.scheduler.now() == nvme().write_latency + nvme().flush_latency);
}

TEST_CASE("block_device: profiles are found by name and unknown names are not") {
    for (const char* name : {"hdd", "ssd", "nvme", "ramdisk"}) {
        CAPTURE(name);
        const auto* profile = model::disk::find_profile(name);
        REQUIRE(profile != nullptr);
        CHECK(profile->name == name);
        CHECK(profile->write_latency > 0);
    }
    CHECK(model::disk::find_profile("floppy") == nullptr);
    CHECK(model::disk::find_profile("hdd")->rotational);
    CHECK_FALSE(model::disk::find_profile("nvme")->rotational);
}

TEST_CASE("content: describe names the writer, the file offset and the version") {
    const std::vector<std::string> names{"I", "J"};
    CHECK(Content::data(1, 5, 3).describe(names, 4096) == "data of J at 20480 (write v3)");
    CHECK(Content::zeros().describe(names, 4096) == "zeros");
    CHECK(Content::meta(12).describe(names, 4096) == "metadata object #12");
    CHECK(Content::stale(9).describe(names, 4096) ==
          "stale contents of device block 9 (an earlier owner)");
    CHECK(Content::data(0, 2, 1).shifted(3) == Content::data(0, 5, 1));
    CHECK(Content::zeros().shifted(3) == Content::zeros());
}

// The newest write wins a read, even when a newer FUA write completed (and
// left the pending list) while an older cached write to the block is pending.
TEST_CASE(
    "block_device: read returns the newest write when a newer FUA write overtook a cached one") {
    Rig rig;
    rig.run([](BlockDevice& device) {
        device.write_and_wait(5, 1, Content::data(0, 0, 1), false, "data");
        device.write_and_wait(5, 1, Content::data(0, 0, 2), true, "data");
    });
    REQUIRE(rig.device.pending().size() == 1);
    CHECK(rig.device.read(5) == Content::data(0, 0, 2));
}
