#pragma once
// struct delayed_work (kernel/workqueue.c), as far as the xfs log worker needs
// it ("xfs: remove the m_active_trans counter"): a work
// item that a timer queues, run by a kernel thread of its own. That thread is
// a daemon (sim::Scheduler::spawn_daemon): its timer firing while tasks can
// run is a choice the explorers make within explore.daemon_wakeups.
//
//   queue()        queue_delayed_work: arm the timer, unless the work is
//                  already pending or a cancel owns its pending bit
//                  (try_to_grab_pending left WORK_STRUCT_PENDING set).
//   cancel_sync()  cancel_delayed_work_sync (__cancel_work_timer): take the
//                  pending bit, so that a timer still running does nothing
//                  (del_timer), then wait for a running instance (flush_work);
//                  that instance's own re-queue fails meanwhile. When it
//                  returns the work is neither pending nor running.
//   run()          the daemon's body: wait until armed, sleep out the delay,
//                  run the work function unless cancelled meanwhile.
//
// Left out on purpose: a work re-queued while the daemon still sleeps on a
// cancelled arm sleeps a whole delay again from that timer's expiry (the
// kernel's new timer runs from the queue call: later here, never earlier); one
// worker per item (no worker pool, no concurrency management); flush_work and
// mod_delayed_work (no caller in the model).
#include <cstdint>
#include <functional>

#include "sim/live.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"

namespace model {

class DelayedWork {
public:
    DelayedWork(const char* name, sim::Duration delay)
        : delay_(delay), armed_wait_(name), finished_wait_(name) {}

    /// queue_delayed_work; false when it did nothing.
    auto queue() -> bool {
        if (pending_ || canceling_) return false;
        pending_ = true;
        arm_++;
        armed_wait_.wake_all();
        return true;
    }

    /// cancel_delayed_work_sync, from a task (it may block).
    void cancel_sync() {
        canceling_ = true;
        pending_ = false;
        arm_++;
        while (running_) finished_wait_.wait();
        canceling_ = false;
    }

    /// The kernel thread's body: never returns.
    [[noreturn]] void run(const std::function<void()>& work) {
        for (;;) {
            while (!pending_) armed_wait_.wait();
            const std::uint64_t arm = arm_;
            SIM_LIVE(arm);
            sim::current_scheduler().sleep(delay_);
            // Cancelled (or cancelled and queued again) while the timer ran.
            if (!pending_ || arm != arm_) continue;
            pending_ = false;
            running_ = true;
            work();
            running_ = false;
            finished_wait_.wake_all();
        }
    }

    [[nodiscard]] auto pending() const -> bool { return pending_; }
    [[nodiscard]] auto running() const -> bool { return running_; }
    [[nodiscard]] auto delay() const -> sim::Duration { return delay_; }
    /// The pending, running and cancelling bits and the arm count into
    /// `resource`'s hash; the wait queues into their own (sim/fingerprint.hpp).
    void hash_into(sim::ResourceHashes& out, const sim::Footprint& resource) const {
        sim::StateHash hash(arm_);
        hash.add((pending_ ? 1U : 0U) | (running_ ? 2U : 0U) | (canceling_ ? 4U : 0U));
        out.add(resource, hash.value());
        armed_wait_.hash_into(out);
        finished_wait_.hash_into(out);
    }

private:
    sim::Duration delay_;
    bool pending_ = false;    // WORK_STRUCT_PENDING: queued, its timer armed
    bool running_ = false;    // the work function runs
    bool canceling_ = false;  // a cancel holds the pending bit
    std::uint64_t arm_ = 0;   // bumped by every queue and cancel
    sim::WaitQueue armed_wait_;
    sim::WaitQueue finished_wait_;
};

}  // namespace model
