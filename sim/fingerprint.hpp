#pragma once
// Hashes of the world's state, resource by resource, for a search that
// remembers the states it has explored. Each footprint bit (sim/resource.hpp)
// names a resource; the world fills one hash per bit with the state of what
// that bit names (a model's structures, its locks and wait queues, the disk),
// so the scheduler can record, for every task step, the hashes of the
// resources the step touched: what the task read. A task's locals are a
// function of what it read, so two states whose tasks read the same and
// whose resources hash the same continue alike, with no declaration of the
// tasks' locals.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/prng.hpp"
#include "sim/resource.hpp"

namespace sim {

/// A running 64-bit hash: splitmix64 over the values added, in order.
class StateHash {
public:
    explicit StateHash(std::uint64_t seed = 0) : state_(seed) {}
    void add(std::uint64_t value) {
        std::uint64_t mixed = state_ ^ (value + 0x6a09e667f3bcc909ULL);
        state_ = splitmix64(mixed);
    }
    void add_bool(bool value) { add(value ? 1 : 0); }
    [[nodiscard]] auto value() const -> std::uint64_t { return state_; }

private:
    std::uint64_t state_;
};

/// A list of words (a model's KeyWords, the oracle's encoding): its length,
/// then each word.
inline auto hash_words(std::span<const std::uint64_t> words) -> std::uint64_t {
    StateHash hash(words.size());
    for (const std::uint64_t word : words) hash.add(word);
    return hash.value();
}

/// One hash per footprint bit; a bit whose resource holds nothing keeps 0.
struct ResourceHashes {
    std::array<std::uint64_t, footprint_bits> bits{};
    /// Adds `value` to the hash of every bit `resource` has (a lock's bit,
    /// a yield point's named resource).
    void add(const Footprint& resource, std::uint64_t value) {
        resource.for_each_bit([&](std::size_t bit) {
            StateHash hash(bits[bit]);
            hash.add(value);
            bits[bit] = hash.value();
        });
    }
};

/// A task's locals that stay live across its suspensions (sim/live.hpp):
/// one frame per function that declares them, on the task's stack, hashed
/// by value into the task's part of a state.
class LiveFrame {
public:
    /// Its locals' values, each but the one named `omit` (a mutation for
    /// tests of check mode).
    virtual void hash_into(StateHash& out, std::string_view omit = {}) const = 0;
    /// The locals' names, for --check-fingerprints' report.
    [[nodiscard]] virtual auto names() const -> const char* = 0;

protected:
    LiveFrame() = default;
    ~LiveFrame() = default;
    LiveFrame(const LiveFrame&) = default;
    auto operator=(const LiveFrame&) -> LiveFrame& = default;
};

/// One named part of a resource's hash (check mode): the device's pending
/// writes, its durable blocks. Two states whose resource hashes differ differ
/// in at least one of its parts, which check mode's report names.
struct ResourceField {
    std::uint32_t bit = 0;      // the resource's footprint bit
    const char* name = "";      // static text
    std::uint64_t value = 0;
    auto operator==(const ResourceField& other) const -> bool {
        return bit == other.bit && std::string_view(name) == other.name && value == other.value;
    }
};

/// The world's side: fills the hashes of the resources it holds.
class ResourceHasher {
public:
    virtual ~ResourceHasher() = default;
    /// Every resource's hash now. False when some state could not be hashed
    /// (the search then remembers nothing of this run from here on).
    virtual auto hash_resources(ResourceHashes& out) -> bool = 0;
    /// What lies outside every footprint and still decides the future: the
    /// oracle's record of what was acknowledged, the freeze level. False as
    /// hash_resources.
    virtual auto hash_outside(StateHash& out) -> bool = 0;
    /// Steps since an operation last completed, for a world that ends a run
    /// with a liveness violation once they reach a window: compared as a
    /// budget, not hashed (DfsStrategy::covers).
    [[nodiscard]] virtual auto steps_without_progress() const -> std::uint64_t { return 0; }
    /// Check mode: the named parts of the resources' hashes, where the world
    /// has them (none by default), so that a report names the part of a
    /// resource two merged states differ in.
    virtual void hash_fields(std::vector<ResourceField>& /*out*/) {}
    /// Resources whose undeclared updates commute with each other (counters
    /// whose every reader touches everything): a step may change them
    /// without naming them (Scheduler::check_footprints).
    [[nodiscard]] virtual auto commuting() const -> Footprint { return {}; }

protected:
    ResourceHasher() = default;
    ResourceHasher(const ResourceHasher&) = default;
    auto operator=(const ResourceHasher&) -> ResourceHasher& = default;
};

}  // namespace sim
