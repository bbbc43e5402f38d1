#pragma once
// Blocking primitives for model code running in fibers. None of them yields
// by itself when it does not block: model code names its race windows with
// explicit yield points. A yield taken while holding a lock stands for another
// CPU running in parallel, not for preemption, so other tasks that need
// the lock block.
#include <cstdint>
#include <exception>
#include <vector>

#include "sim/fingerprint.hpp"
#include "sim/scheduler.hpp"

namespace sim {

/// Tasks waiting for a condition; wait() must be called in a loop that
/// re-tests the condition, as with a kernel wait queue.
class WaitQueue {
public:
    explicit WaitQueue(const char* name) : name_(name), resource_(resource(name)) {}
    WaitQueue(const char* name, Footprint footprint) : name_(name), resource_(footprint) {}
    void wait();
    void wake_all();
    [[nodiscard]] auto empty() const -> bool { return waiters_.empty(); }
    /// Its waiters, in order, into its resource's hash.
    void hash_into(ResourceHashes& out) const {
        StateHash hash;
        for (const TaskId waiter : waiters_) hash.add(waiter);
        out.add(resource_, hash.value());
    }

private:
    const char* name_;
    Footprint resource_;
    std::vector<TaskId> waiters_;
};

/// A sleeping mutex with FIFO hand-off: unlock gives the lock to the first
/// waiter, so a waiter cannot be starved by the unlocker taking it again.
class Mutex {
public:
    explicit Mutex(const char* name) : name_(name), resource_(resource(name)) {}
    void lock();
    void unlock();
    [[nodiscard]] auto holder() const -> TaskId { return holder_; }
    [[nodiscard]] auto held() const -> bool { return holder_ != no_task; }
    /// The holder and the waiters, in order, into its resource's hash.
    void hash_into(ResourceHashes& out) const {
        StateHash hash(holder_);
        for (const TaskId waiter : waiters_) hash.add(waiter);
        out.add(resource_, hash.value());
    }

private:
    const char* name_;
    Footprint resource_;
    TaskId holder_ = no_task;
    std::vector<TaskId> waiters_;
};

/// A reader/writer lock with FIFO hand-off (a writer waiting blocks later
/// readers), or, with Preference::readers, one where readers only wait for a
/// writer that holds the lock, so a steady stream of readers starves writers.
class RwLock {
public:
    enum class Preference : std::uint8_t { fifo, readers };
    explicit RwLock(const char* name, Preference preference = Preference::fifo)
        : name_(name), resource_(resource(name)), readers_first_(preference == Preference::readers) {}
    /// Many locks of one structure (a btree's nodes) may share one footprint.
    RwLock(const char* name, Footprint footprint, Preference preference)
        : name_(name), resource_(footprint), readers_first_(preference == Preference::readers) {}
    void lock_shared();
    void unlock_shared();
    void lock();
    void unlock();
    [[nodiscard]] auto write_held() const -> bool { return writer_ != no_task; }
    [[nodiscard]] auto readers() const -> std::uint32_t { return readers_; }
    /// True when a reader arriving now would have to wait.
    [[nodiscard]] auto contended() const -> bool {
        return writer_ != no_task || (!readers_first_ && !waiters_.empty());
    }
    /// The writer, the readers and the waiters, in order, into its resource's hash.
    void hash_into(ResourceHashes& out) const {
        StateHash hash(writer_);
        hash.add(readers_);
        for (const Waiter& waiter : waiters_) {
            hash.add((std::uint64_t{waiter.task} << 1) | (waiter.writer ? 1 : 0));
        }
        out.add(resource_, hash.value());
    }

private:
    struct Waiter {
        TaskId task;
        bool writer;
    };
    void hand_off();
    const char* name_;
    Footprint resource_;
    bool readers_first_;
    TaskId writer_ = no_task;
    std::uint32_t readers_ = 0;
    std::vector<Waiter> waiters_;
};

/// A one-shot event (I/O completion, ordered extent finished).
class Completion {
public:
    /// Private to the task that waits on it: its wait is ordered by the timer
    /// that completes it, which depends on everything anyway.
    explicit Completion(const char* name) : queue_(name, Footprint{}) {}
    void wait() {
        while (!done_) queue_.wait();
    }
    void complete() {
        done_ = true;
        queue_.wake_all();
    }
    [[nodiscard]] auto done() const -> bool { return done_; }

private:
    bool done_ = false;
    WaitQueue queue_;
};

/// RAII holders.
class MutexGuard {
public:
    explicit MutexGuard(Mutex& mutex) : mutex_(mutex) { mutex_.lock(); }
    ~MutexGuard() {
        // A task destroyed while it waited with the lock dropped (as
        // jbd2_log_do_checkpoint drops j_checkpoint_mutex to wait for a
        // commit) does not hold it: its unwinding has nothing to release.
        // Outside unwinding, unlocking a lock not held still asserts.
        if (current_scheduler().cancelling() && mutex_.holder() != current_scheduler().current()) return;
        mutex_.unlock();
    }
    MutexGuard(const MutexGuard&) = delete;
    auto operator=(const MutexGuard&) -> MutexGuard& = delete;

private:
    Mutex& mutex_;
};

}  // namespace sim
