#include "sim/sync.hpp"

#include "sim/assert.hpp"

namespace sim {

void WaitQueue::wait() {
    auto& scheduler = current_scheduler();
    scheduler.touch(resource_);
    waiters_.push_back(scheduler.current());
    scheduler.block(name_);
}

void WaitQueue::wake_all() {
    auto& scheduler = current_scheduler();
    scheduler.touch(resource_);
    if (waiters_.empty()) return;
    // Wake in arrival order; the strategy decides who runs first.
    for (TaskId task : waiters_) scheduler.wake(task);
    waiters_.clear();
}

void Mutex::lock() {
    auto& scheduler = current_scheduler();
    scheduler.touch(resource_);
    const TaskId self = scheduler.current();
    SIM_ASSERT(holder_ != self);
    if (holder_ == no_task) {
        holder_ = self;
        return;
    }
    waiters_.push_back(self);
    scheduler.block(name_);
    SIM_ASSERT(holder_ == self);
}

void Mutex::unlock() {
    auto& scheduler = current_scheduler();
    scheduler.touch(resource_);
    SIM_ASSERT(holder_ == scheduler.current());
    holder_ = scheduler.hand_over(waiters_);  // no_task: nobody waits, the lock is free
}

void RwLock::lock_shared() {
    auto& scheduler = current_scheduler();
    scheduler.touch(resource_);
    if (writer_ == no_task && (waiters_.empty() || readers_first_)) {
        readers_++;
        return;
    }
    waiters_.push_back({scheduler.current(), false});
    scheduler.block(name_);
}

void RwLock::unlock_shared() {
    current_scheduler().touch(resource_);
    SIM_ASSERT(readers_ > 0);
    readers_--;
    hand_off();
}

void RwLock::lock() {
    auto& scheduler = current_scheduler();
    scheduler.touch(resource_);
    const TaskId self = scheduler.current();
    SIM_ASSERT(writer_ != self);
    if (writer_ == no_task && readers_ == 0 && waiters_.empty()) {
        writer_ = self;
        return;
    }
    waiters_.push_back({self, true});
    scheduler.block(name_);
    SIM_ASSERT(writer_ == self);
}

void RwLock::unlock() {
    current_scheduler().touch(resource_);
    SIM_ASSERT(writer_ == current_scheduler().current());
    writer_ = no_task;
    hand_off();
}

void RwLock::hand_off() {
    auto& scheduler = current_scheduler();
    if (readers_first_ && writer_ == no_task) {
        // Every waiting reader goes in; a writer only once none is left.
        for (auto it = waiters_.begin(); it != waiters_.end();) {
            if (it->writer) {
                ++it;
                continue;
            }
            readers_++;
            scheduler.wake(it->task);
            it = waiters_.erase(it);
        }
    }
    while (!waiters_.empty() && writer_ == no_task) {
        const Waiter next = waiters_.front();
        if (next.writer) {
            if (readers_ > 0) return;
            writer_ = next.task;
        } else {
            readers_++;
        }
        waiters_.erase(waiters_.begin());
        scheduler.wake(next.task);
    }
}

}  // namespace sim
