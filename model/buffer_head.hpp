#pragma once
// Metadata buffers as the kernel's buffer cache holds them (include/linux/buffer_head.h,
// fs/buffer.c), with the journal head a journaling model attaches (include/linux/journal-head.h).
// Shared by models: a model keeps what a block holds in its own objects and
// passes the Content to write; this piece only keeps the state bits, who owns
// the buffer in the journal, and the buffer lock's wait queue.
//
// One buffer may be locked, dirty and JBD-dirty at once, as in the kernel:
// - BH_Lock: held by whoever does I/O on it (writeback holds it from submission
//   to completion, end_buffer_write_sync unlocks) and by do_get_write_access;
// - BH_Dirty: an ordinary dirty buffer that background writeback may write home;
// - BH_JBDDirty: dirty, but owned by the journal: writeback must not write it
//   before its transaction committed (jbd2 turns it into BH_Dirty at commit, C10).
// Writeback (write_dirty_buffer, __block_write_full_page) clears BH_Dirty at
// submission, so a buffer under I/O is locked and clean.
#include <algorithm>
#include <cstdint>
#include <map>

#include "model/disk/block_device.hpp"
#include "sim/fingerprint.hpp"
#include "sim/scheduler.hpp"
#include "sim/sync.hpp"
#include "sim/time.hpp"

namespace model {

/// struct journal_head's ownership fields: transaction ids (0: NULL).
struct JournalHead {
    std::uint64_t b_transaction = 0;       // the running or committing transaction that owns it
    std::uint64_t b_next_transaction = 0;  // the running one, while the committing one owns it
    std::uint64_t b_cp_transaction = 0;    // the committed transaction whose checkpoint list holds it
    bool attached = false;                 // jbd2_journal_add_journal_head was called
};

struct BufferHead {
    std::uint64_t b_blocknr = 0;
    bool locked = false;    // BH_Lock
    bool dirty = false;     // BH_Dirty
    bool jbddirty = false;  // BH_JBDDirty
    /// BH_Freed: jbd2_journal_forget of a buffer a committing transaction
    /// still owns; that commit must not checkpoint it (commit.c, C10).
    bool freed = false;
    /// When the buffer last went from clean to dirty (the flusher's 30 s expiry;
    /// the kernel keeps it per inode, the block device's, see README).
    sim::Instant dirtied_at = 0;
    JournalHead jh;
};

/// The buffers of one block device, by block number.
class BufferCache {
public:
    /// The buffer of `block` (sb_getblk: created clean on first use).
    auto get(std::uint64_t block) -> BufferHead& {
        BufferHead& bh = buffers_[block];
        bh.b_blocknr = block;
        return bh;
    }
    [[nodiscard]] auto find(std::uint64_t block) const -> const BufferHead* {
        const auto found = buffers_.find(block);
        return found == buffers_.end() ? nullptr : &found->second;
    }
    [[nodiscard]] auto buffers() const -> const std::map<std::uint64_t, BufferHead>& { return buffers_; }

    /// trylock_buffer: takes BH_Lock if free.
    static auto trylock_buffer(BufferHead& bh) -> bool {
        if (bh.locked) return false;
        bh.locked = true;
        return true;
    }
    /// lock_buffer: waits (wait_on_bit_lock_io) until the I/O that holds it completes.
    void lock_buffer(BufferHead& bh) {
        while (bh.locked) unlock_wait_.wait();
        bh.locked = true;
    }
    void unlock_buffer(BufferHead& bh) {
        bh.locked = false;
        unlock_wait_.wake_all();
    }
    /// wait_on_buffer: until BH_Lock is free, without taking it.
    void wait_on_buffer(const BufferHead& bh) {
        while (bh.locked) unlock_wait_.wait();
    }
    /// mark_buffer_dirty: BH_Dirty; the dirtying time starts when it was clean.
    static void mark_buffer_dirty(BufferHead& bh, sim::Instant now) {
        if (!bh.dirty) bh.dirtied_at = now;
        bh.dirty = true;
    }
    /// test_clear_buffer_dirty.
    static auto test_clear_buffer_dirty(BufferHead& bh) -> bool {
        const bool was = bh.dirty;
        bh.dirty = false;
        return was;
    }

    /// Writeback of a locked buffer (submit_bh after lock_buffer and
    /// test_clear_buffer_dirty): `content` goes to the buffer's block; the
    /// lock is released when the write completes (end_buffer_write_sync).
    /// `on_complete` runs then, in timer context.
    void submit_write(disk::BlockDevice& device, BufferHead& bh, disk::Content content, const char* what,
                      std::function<void()> on_complete = {}) {
        SIM_ASSERT(bh.locked && !bh.dirty);
        const std::uint64_t block = bh.b_blocknr;
        in_flight_++;
        device.submit_write(block, 1, content, false, what,
                            [this, block, on_complete = std::move(on_complete)] {
                                in_flight_--;
                                unlock_buffer(buffers_.at(block));
                                if (on_complete) on_complete();
                            });
    }
    [[nodiscard]] auto in_flight() const -> std::uint64_t { return in_flight_; }

    /// Every buffer's state bits, a dirty buffer's age at `now` up to
    /// `expire`, its journal head, and the writes in flight, into `out`; the
    /// buffer lock's waiters into their own resource (sim/fingerprint.hpp).
    void hash_into(sim::StateHash& out, sim::ResourceHashes& waits, sim::Instant now,
                   sim::Duration expire) const {
        out.add(buffers_.size());
        for (const auto& [block, bh] : buffers_) {
            out.add(block);
            out.add((bh.locked ? 1U : 0U) | (bh.dirty ? 2U : 0U) | (bh.jbddirty ? 4U : 0U) |
                    (bh.freed ? 8U : 0U) | (bh.jh.attached ? 16U : 0U));
            // Read only by background writeback, of a dirty buffer, as
            // whether its age has reached `expire` (ext4's flusher).
            if (bh.dirty) out.add(static_cast<std::uint64_t>(std::min(now - bh.dirtied_at, expire)));
            out.add(bh.jh.b_transaction);
            out.add(bh.jh.b_next_transaction);
            out.add(bh.jh.b_cp_transaction);
        }
        out.add(in_flight_);
        unlock_wait_.hash_into(waits);
    }

private:
    std::map<std::uint64_t, BufferHead> buffers_;
    sim::WaitQueue unlock_wait_{"buffer.lock"};
    std::uint64_t in_flight_ = 0;
};

}  // namespace model
