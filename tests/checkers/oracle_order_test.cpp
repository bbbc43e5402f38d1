// The oracle's encoding (Oracle::encode) stands for its sequence numbers by
// the outcomes of the comparisons made of them. Every interleaving of a small
// history on one file (two writes past EOF, each of which may fail, a
// truncate, an fsync, a reported writeback error) is run: two oracles that
// encode alike must give every promise the same legitimate sizes now and
// after every continuation, and some that took their numbers in another
// order must encode alike.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "checkers/oracle.hpp"
#include "sim/fingerprint.hpp"

namespace {

constexpr std::uint32_t file = 0;

/// One actor of the history: its events in order, how many have run, and the
/// id its begin returned.
struct Actor {
    enum class Kind { raise, truncate, fsync, error } kind;
    std::uint64_t size_bytes = 0;
    int done = 0;
    std::size_t id = 0;
    [[nodiscard]] auto events() const -> int { return kind == Kind::error ? 1 : 2; }
};

struct History {
    checkers::Oracle oracle{1};
    std::array<Actor, 5> actors{{{Actor::Kind::raise, 3 * 4096},
                                 {Actor::Kind::raise, 2 * 4096},
                                 {Actor::Kind::truncate, 4096},
                                 {Actor::Kind::fsync},
                                 {Actor::Kind::error}}};

    /// The actor's next event; `fail`: a size change returns an error, and
    /// the oracle never hears of its end.
    void step(Actor& actor, bool fail = false) {
        const bool begin = actor.done == 0;
        switch (actor.kind) {
            case Actor::Kind::raise:
            case Actor::Kind::truncate:
                if (begin) {
                    actor.id = oracle.begin_size(file, actor.kind == Actor::Kind::truncate, actor.size_bytes);
                } else if (!fail) {
                    oracle.end_size(file, actor.id);
                }
                break;
            case Actor::Kind::fsync:
                if (begin) {
                    actor.id = oracle.begin_fsync(file, 0, "fsync");
                } else {
                    oracle.end_fsync(actor.id, 0);
                }
                break;
            case Actor::Kind::error:
                oracle.error_reported(file);
                break;
        }
        actor.done++;
    }
};

/// What the checkers can tell of an oracle now: each promise's legitimate sizes.
auto sizes_now(const checkers::Oracle& oracle) -> std::uint64_t {
    sim::StateHash hash;
    for (const checkers::Promise& promise : oracle.promises()) {
        hash.add_bool(promise.returned);
        for (const checkers::SizeRange& range : oracle.legitimate_sizes(promise)) {
            hash.add(range.low);
            hash.add(range.high);
        }
        hash.add(~std::uint64_t{0});
    }
    return hash.value();
}

struct Search {
    std::map<std::vector<std::uint64_t>, std::uint64_t> behaviour_of;  // by actors and encoding
    std::uint64_t states = 0;
    std::uint64_t disagreements = 0;

    /// The sizes now and after every continuation, each by the actor that
    /// steps next; checked against every other state with the same encoding.
    auto explore(const History& history) -> std::uint64_t {
        sim::StateHash behaviour(sizes_now(history.oracle));
        for (std::size_t i = 0; i < history.actors.size(); i++) {
            const Actor& actor = history.actors[i];
            if (actor.done == actor.events()) continue;
            const bool may_fail = actor.kind == Actor::Kind::raise && actor.done == 1;
            for (const bool fail : {false, true}) {
                if (fail && !may_fail) continue;
                History next = history;
                next.step(next.actors[i], fail);
                behaviour.add(i * 2 + (fail ? 1 : 0));
                behaviour.add(explore(next));
            }
        }
        // The actors stand for the tasks, whose positions and locals (the ids
        // their begins returned) a state's key holds beside the oracle.
        std::vector<std::uint64_t> words;
        for (const Actor& actor : history.actors) {
            words.insert(words.end(), {static_cast<std::uint64_t>(actor.done), actor.id});
        }
        history.oracle.encode(words);
        states++;
        const auto [found, fresh] = behaviour_of.emplace(words, behaviour.value());
        if (!fresh && found->second != behaviour.value()) disagreements++;
        return behaviour.value();
    }
};

}  // namespace

TEST_CASE("oracle: histories that encode alike give every promise the same sizes, now and later") {
    Search search;
    search.explore(History{});
    CHECK(search.disagreements == 0);
    // The order of numbers that no comparison reads is left out: far fewer
    // encodings than histories.
    MESSAGE(search.states << " histories, " << search.behaviour_of.size() << " encodings");
    CHECK(search.behaviour_of.size() * 2 < search.states);
}

TEST_CASE("oracle: an fsync begun before or after a write past EOF that has not returned encodes alike") {
    const auto words_of = [](const History& history) {
        std::vector<std::uint64_t> words;
        history.oracle.encode(words);
        return words;
    };
    History fsync_first;
    fsync_first.step(fsync_first.actors[3]);
    fsync_first.step(fsync_first.actors[0]);
    History write_first;
    write_first.step(write_first.actors[0]);
    write_first.step(write_first.actors[3]);
    CHECK(words_of(fsync_first) == words_of(write_first));
    // Once the write returns before the fsync begins, its size is promised.
    History returned_first;
    returned_first.step(returned_first.actors[0]);
    returned_first.step(returned_first.actors[0]);
    returned_first.step(returned_first.actors[3]);
    fsync_first.step(fsync_first.actors[0]);
    CHECK(words_of(returned_first) != words_of(fsync_first));
}
