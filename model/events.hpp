#pragma once
// The runtime event channel: a model tells what happens while a run
// goes on (a transaction allocated, committed, cancelled, freed; a freeze
// level changed; the quiesce drain point), and checkers that watch events
// (checkers/event_watch.hpp) judge them as they happen, where crash checkers
// only see a recovered image. The runner installs a channel for each run
// (EventChannelScope) and drains it after every step, stamping each event with
// that step: events are ordered by the scheduler's steps, then by emission
// within a step. Without a channel (set-up, perf runs, unit tests that do not
// ask) emit() does nothing.
//
// Room for more kinds: jbd2's handle start/stop and commit phases would be
// further EventKind values with the same fields.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/scheduler.hpp"

namespace model {

/// sb->s_writers.frozen (include/linux/fs.h): SB_UNFROZEN .. SB_FREEZE_COMPLETE.
enum class FreezeLevel : std::uint8_t { unfrozen, write, pagefault, fs, complete };

inline auto freeze_level_name(FreezeLevel level) -> const char* {
    switch (level) {
        case FreezeLevel::unfrozen: return "SB_UNFROZEN";
        case FreezeLevel::write: return "SB_FREEZE_WRITE";
        case FreezeLevel::pagefault: return "SB_FREEZE_PAGEFAULT";
        case FreezeLevel::fs: return "SB_FREEZE_FS";
        case FreezeLevel::complete: return "SB_FREEZE_COMPLETE";
    }
    return "?";
}

enum class EventKind : std::uint8_t {
    trans_alloc,      // xfs_trans_alloc returned a transaction (after its log reservation)
    trans_commit,     // its items went into the CIL (a clean one commits nothing)
    trans_cancel,     // xfs_trans_cancel
    trans_free,       // xfs_trans_free: the handle is gone (after commit or cancel)
    freeze_level,     // sb->s_writers.frozen changed (freeze_super, thaw_super)
    quiesce_drained,  // xfs_quiesce_attr's drain point (Q1) is behind the freezer
};

struct Event {
    EventKind kind = EventKind::trans_alloc;
    std::uint64_t step = 0;          // stamped by the runner when it drains the channel
    sim::TaskId task = sim::no_task;  // the task that emitted it
    std::string task_name;           // stamped by the runner
    std::uint64_t transaction = 0;   // trans_*: the transaction's id
    std::string what;                // trans_*: its kind ("xfs_sync_sb", "create")
    bool no_writecount = false;      // XFS_TRANS_NO_WRITECOUNT: no sb_start_intwrite hold
    bool log_space = false;          // it reserved log space (tr_logres > 0)
    FreezeLevel level = FreezeLevel::unfrozen;  // freeze_level: the new level
};

/// A trans_* event of transaction `id`, of kind `what`.
inline auto transaction_event(EventKind kind, std::uint64_t id, std::string what, bool no_writecount = false,
                              bool log_space = false) -> Event {
    Event event;
    event.kind = kind;
    event.transaction = id;
    event.what = std::move(what);
    event.no_writecount = no_writecount;
    event.log_space = log_space;
    return event;
}
inline auto freeze_level_event(FreezeLevel level) -> Event {
    Event event;
    event.kind = EventKind::freeze_level;
    event.level = level;
    return event;
}
inline auto drained_event() -> Event {
    Event event;
    event.kind = EventKind::quiesce_drained;
    return event;
}

/// What the model emitted since the last drain.
class EventChannel {
public:
    void push(Event event) { pending_.push_back(std::move(event)); }
    auto take() -> std::vector<Event> {
        std::vector<Event> taken;
        taken.swap(pending_);
        return taken;
    }

private:
    std::vector<Event> pending_;
};

namespace detail {
inline thread_local EventChannel* this_thread_channel = nullptr;
}  // namespace detail

/// Emits an event from model code, stamped with the running task.
inline void emit(Event event) {
    EventChannel* channel = detail::this_thread_channel;
    if (channel == nullptr) return;
    if (sim::has_current_scheduler()) event.task = sim::current_scheduler().current();
    channel->push(std::move(event));
}

/// Installs `channel` for this thread while it lives (the previous one after).
class EventChannelScope {
public:
    explicit EventChannelScope(EventChannel& channel) : outer_(detail::this_thread_channel) {
        detail::this_thread_channel = &channel;
    }
    ~EventChannelScope() { detail::this_thread_channel = outer_; }
    EventChannelScope(const EventChannelScope&) = delete;
    auto operator=(const EventChannelScope&) -> EventChannelScope& = delete;

private:
    EventChannel* outer_;
};

}  // namespace model
