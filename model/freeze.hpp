#pragma once
// struct sb_writers and the freeze levels (include/linux/fs.h, fs/super.c of
// v5.7): what freeze_super, thaw_super, sb_start_write and sb_start_intwrite
// share for every file system (struct super_block's s_writers, which
// "xfs: remove the m_active_trans counter" relies on). Each of the levels WRITE,
// PAGEFAULT and FS is a per-CPU rwsem: writers of that level hold it for read
// (__sb_start_write: percpu_down_read), and freeze_super takes it for write
// (sb_wait_write: percpu_down_write), which blocks new holders and waits for
// the ones inside. So sb_start_write blocks once freezing has reached WRITE,
// sb_start_intwrite once it has reached FS; thaw_super releases every level
// (sb_freeze_unlock) and wakes the waiters. The per-CPU counting is
// uncontended in the kernel: here it is one count per level, with no cost.
//
// Every change of `frozen` is an event (model/events.hpp).
//
// Left out on purpose: s_umount, the emergency thaw, nested freezes (a second
// freeze_super returns EBUSY: the caller's check), lockdep's release and
// re-acquire around a frozen file system.
#include <array>
#include <cstdint>

#include "model/events.hpp"
#include "sim/live.hpp"
#include "sim/sync.hpp"

namespace model {

/// The levels a writer holds (SB_FREEZE_WRITE, SB_FREEZE_PAGEFAULT, SB_FREEZE_FS).
enum class WriteLevel : std::uint8_t { write = 0, pagefault = 1, fs = 2 };

class SbWriters {
public:
    [[nodiscard]] auto frozen() const -> FreezeLevel { return frozen_; }
    [[nodiscard]] auto holders(WriteLevel level) const -> std::uint32_t { return holders_[index(level)]; }

    /// __sb_start_write(sb, level): blocks while freeze_super holds the level.
    void start(WriteLevel level) {
        SIM_LIVE(level);
        while (blocked_[index(level)]) unfrozen_wait_.wait();
        holders_[index(level)]++;
    }
    /// __sb_end_write.
    void end(WriteLevel level) {
        SIM_ASSERT(holders_[index(level)] > 0);
        if (--holders_[index(level)] == 0) drained_wait_.wake_all();
    }
    /// sb->s_writers.frozen = level.
    void set_frozen(FreezeLevel level) {
        touch_everything();
        frozen_ = level;
        emit(freeze_level_event(level));
    }
    /// sb_wait_write(sb, level): block new holders, wait for the ones inside.
    void wait_write(WriteLevel level) {
        SIM_LIVE(level);
        touch_everything();
        blocked_[index(level)] = true;
        while (holders_[index(level)] > 0) drained_wait_.wait();
    }
    /// sb_freeze_unlock: every level released; blocked writers go on.
    void unlock_all() {
        touch_everything();
        blocked_ = {false, false, false};
        unfrozen_wait_.wake_all();
    }

    /// The level, the holders and the blocked levels into `resource`'s
    /// hash; the wait queues into their own (sim/fingerprint.hpp).
    void hash_into(sim::ResourceHashes& out, const sim::Footprint& resource) const {
        sim::StateHash hash(static_cast<std::uint64_t>(frozen_));
        for (std::size_t level = 0; level < holders_.size(); level++) {
            hash.add(holders_[level]);
            hash.add_bool(blocked_[level]);
        }
        out.add(resource, hash.value());
        unfrozen_wait_.hash_into(out);
        drained_wait_.hash_into(out);
    }

private:
    static auto index(WriteLevel level) -> std::size_t { return static_cast<std::size_t>(level); }
    /// The level and the blocked levels decide whether every writer and
    /// transaction goes on: a step that changes them touches everything, so
    /// that the steps reading them need not say so.
    static void touch_everything() {
        if (sim::has_current_scheduler()) sim::current_scheduler().touch(sim::footprint_all);
    }

    FreezeLevel frozen_ = FreezeLevel::unfrozen;
    std::array<std::uint32_t, 3> holders_{};
    std::array<bool, 3> blocked_{};
    sim::WaitQueue unfrozen_wait_{"sb.wait_unfrozen"};
    sim::WaitQueue drained_wait_{"sb.writers"};
};

}  // namespace model
