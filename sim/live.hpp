#pragma once
// A task's live locals: what a function keeps on its task's stack across a
// suspension (a yield point, a lock or wait that blocks, a sleep) and reads
// after it. A search that remembers visited states (sim/dfs.hpp) takes two
// states as one only when every task stands at the same point with the same
// live locals, so each function that can suspend declares them once, at the
// top of the stretch where they are live:
//
//     const bool full = inode.needs_full_sync;
//     SIM_LIVE(file, transid, full);
//     sim::yield(points::fsync_after_full_sync_check);
//
// The frame holds references, so the values are read when a state is hashed,
// not when declared: a local assigned later needs no second declaration.
// A local left out merges states whose futures differ; --check-fingerprints
// (runner/) follows the first visit past every merge and names the task and
// yield point where the two runs part.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "sim/fingerprint.hpp"
#include "sim/prng.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"

namespace sim {

template <class T>
    requires(std::is_integral_v<T> || std::is_enum_v<T>)
void hash_value(StateHash& out, T value) {
    out.add(static_cast<std::uint64_t>(value));
}
/// A name (who: "kswapd", what: "log"), by its text.
inline void hash_value(StateHash& out, const char* name) {
    out.add(hash_name(name));
}
/// A completion a task owns: whether it completed (its waiter is the task).
inline void hash_value(StateHash& out, const Completion& completion) {
    out.add_bool(completion.done());
}
inline void hash_value(StateHash& out, const std::string& text) {
    out.add(hash_name(text));
}
template <class T>
void hash_value(StateHash& out, const std::vector<T>& values);
template <class K, class V>
void hash_value(StateHash& out, const std::map<K, V>& values);
template <class T>
void hash_value(StateHash& out, const std::optional<T>& value);
template <class A, class B>
void hash_value(StateHash& out, const std::pair<A, B>& pair);

template <class T>
void hash_value(StateHash& out, const std::vector<T>& values) {
    out.add(values.size());
    for (const T& value : values) hash_value(out, value);
}
template <class K, class V>
void hash_value(StateHash& out, const std::map<K, V>& values) {
    out.add(values.size());
    for (const auto& [key, value] : values) {
        hash_value(out, key);
        hash_value(out, value);
    }
}
template <class T>
void hash_value(StateHash& out, const std::optional<T>& value) {
    out.add_bool(value.has_value());
    if (value) hash_value(out, *value);
}
template <class A, class B>
void hash_value(StateHash& out, const std::pair<A, B>& pair) {
    hash_value(out, pair.first);
    hash_value(out, pair.second);
}

/// The hash of a spawned task's arguments (Scheduler::spawn).
template <class... T>
auto hash_of(const T&... values) -> std::uint64_t {
    StateHash out;
    (hash_value(out, values), ...);
    return out.value();
}

/// One function's live locals (SIM_LIVE): pushed on the running task's
/// frames while it is in scope. Outside a task (set-up run without a
/// scheduler) it records nothing. Its place in the source is hashed with
/// the values, so that two declarations whose values agree (two loops'
/// indices) still tell apart where the task stands.
template <class... T>
class Live final : public LiveFrame {
public:
    Live(std::uint64_t where, const char* names, const T&... locals)
        : where_(where), names_(names), locals_(locals...) {
        if (has_current_scheduler()) frames_ = current_scheduler().push_frame(this);
    }
    Live(const Live&) = delete;
    auto operator=(const Live&) -> Live& = delete;
    ~Live() {
        if (frames_ == nullptr) return;
        SIM_ASSERT(!frames_->empty() && frames_->back() == this);
        frames_->pop_back();
    }
    void hash_into(StateHash& out, std::string_view omit = {}) const override {
        out.add(where_);
        if (omit.empty()) {
            std::apply([&out](const auto&... value) { (hash_value(out, value), ...); }, locals_);
            return;
        }
        std::string_view names = names_;
        const auto one = [&](const auto& value) {
            const std::size_t comma = names.find(',');
            const std::string_view name = names.substr(0, comma);
            names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
            while (!names.empty() && names.front() == ' ') names.remove_prefix(1);
            if (omit.empty() || name != omit) hash_value(out, value);
        };
        std::apply([&one](const auto&... value) { (one(value), ...); }, locals_);
    }
    [[nodiscard]] auto names() const -> const char* override { return names_; }

private:
    std::uint64_t where_;  // hash_name of the declaration's file:line, computed when compiled
    const char* names_;
    std::tuple<const T&...> locals_;
    std::vector<const LiveFrame*>* frames_ = nullptr;
};

}  // namespace sim

#define SIM_LIVE_CONCAT2(a, b) a##b
#define SIM_LIVE_CONCAT(a, b) SIM_LIVE_CONCAT2(a, b)
/// Declares the enclosing function's locals live across its suspensions.
#define SIM_LIVE_TEXT2(a) #a
#define SIM_LIVE_TEXT(a) SIM_LIVE_TEXT2(a)
#define SIM_LIVE(...)                                                                   \
    const ::sim::Live SIM_LIVE_CONCAT(sim_live_, __LINE__)(                                \
        std::integral_constant<std::uint64_t,                                               \
                               ::sim::hash_name(__FILE__ ":" SIM_LIVE_TEXT(__LINE__))>::value, \
        #__VA_ARGS__, __VA_ARGS__)
