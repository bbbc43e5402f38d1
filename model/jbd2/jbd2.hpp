#pragma once
// jbd2 (fs/jbd2/), the journal inside the ext4 model (model/ext4/ext4.hpp): the
// on-disk log's blocks (journal superblock, descriptor, revoke and commit
// blocks, include/linux/jbd2.h), transactions and their states, the knob
// value that names the kernel tree, and the commit-path CPU costs. The code
// that runs the journal (model/jbd2/*.cpp) follows fs/jbd2/journal.c,
// transaction.c, commit.c, checkpoint.c, revoke.c and recovery.c, file by file.
#include <cstdint>
#include <vector>

#include "model/key_words.hpp"
#include "sim/scheduler.hpp"

namespace model::jbd2 {

/// CPU time, charged only in performance runs (sim::cpu): one iteration of
/// journal_shrink_one_cp_list over a list no cache holds:
/// jbd2_journal_try_remove_checkpoint reads the journal head (b_cpnext,
/// b_transaction) and the buffer head (trylock_buffer, buffer_dirty), and
/// unlock_buffer's wake_up_bit reads the bit wait-queue's hash bucket: three
/// cold cache lines at ~120 ns and two atomics, about 400 ns. An
/// order-of-magnitude estimate made without the seed's rates, so that the
/// files/s it gives the regressed kernel is a prediction (the seed's two rates
/// would give 570 ns: 1/2107.1 - 1/8558.4 s per file over ~626 buffers a
/// commit). A scenario may set it (`"costs": {"cp_scan_step_ns": N}`) and
/// `perf --vary cp_scan_step_ns=...` sweeps it.
namespace cpu_cost {
inline constexpr sim::Duration cp_scan_step = 400 * sim::nanoseconds;
inline constexpr sim::Duration handle = 3 * sim::microseconds;
}  // namespace cpu_cost

/// Which kernel's checkpoint-list cleanup runs: one value per real tree
/// (super.cpp says why one knob, not two).
enum class Tree : std::uint8_t {
    v5_8,     // hybrid-v5.8: v5.8's journal_clean_one_cp_list (stops at the first buffer
              // __try_to_free_cp_buf cannot free) in v6.5's jbd2_log_do_checkpoint
    v6_5,     // journal_shrink_one_cp_list skips busy buffers; b_transaction not checked
    patch_1,  // + patch 1/3 (373ac521799d): SHRINK_BUSY_STOP at commit
    patch_2,  // + patch 2/3 (590a809ff743, v6.6): a buffer with b_transaction set is busy
};

inline constexpr std::uint64_t nr_batch = 64;  // JBD2_NR_BATCH

/// journal_superblock_t: s_start 0 means clean.
struct JournalSuper {
    std::uint64_t s_start = 0;
    std::uint64_t s_sequence = 0;
};
/// A revoke block (JBD2_REVOKE_BLOCK, jbd2_journal_write_revoke_records): the
/// home blocks the transaction freed; recovery replays no copy of them from
/// this transaction or an earlier one.
struct RevokeBlock {
    std::uint64_t sequence = 0;
    std::vector<std::uint64_t> blocks;
};
/// A descriptor block: the transaction's tags (home blocks of the copies that follow it).
struct Descriptor {
    std::uint64_t sequence = 0;
    std::vector<std::uint64_t> tags;
};
struct CommitBlock {
    std::uint64_t sequence = 0;
};

// Every member of the objects above, for the runner's verdict memo across
// schedules (model/metadata_store.hpp): a member added to them goes here too.
// None holds an object id (a descriptor's tags are home block numbers).
inline void encode_object(KeyWords& out, const JournalSuper& super) {
    out.insert(out.end(), {super.s_start, super.s_sequence});
}
inline void encode_object(KeyWords& out, const Descriptor& descriptor) {
    out.push_back(descriptor.sequence);
    out.push_back(descriptor.tags.size());
    out.insert(out.end(), descriptor.tags.begin(), descriptor.tags.end());
}
inline void encode_object(KeyWords& out, const CommitBlock& commit) {
    out.push_back(commit.sequence);
}
inline void encode_object(KeyWords& out, const RevokeBlock& revoke) {
    out.push_back(revoke.sequence);
    out.push_back(revoke.blocks.size());
    out.insert(out.end(), revoke.blocks.begin(), revoke.blocks.end());
}
template <typename T>
void object_references(const T&, std::vector<std::uint64_t>&) {}

/// t_state.
enum class TState : std::uint8_t {
    running,
    locked,
    flush,
    commit,
    commit_dflush,
    commit_jflush,
    commit_callback,
    finished,
};

struct Transaction {
    std::uint64_t tid = 0;
    TState state = TState::running;
    std::uint32_t t_updates = 0;
    std::vector<std::uint64_t> t_buffers;          // BJ_Metadata, by block
    std::vector<std::uint64_t> t_reserved;         // BJ_Reserved
    std::vector<std::uint64_t> t_forget;           // BJ_Forget: forgotten buffers (jbd2_journal_forget)
    std::vector<std::uint64_t> t_revoke;           // revoke records inserted while it ran (j_revoke)
    std::vector<std::uint64_t> t_checkpoint_list;  // head first (new entries go in at the head)
    std::vector<std::uint32_t> t_inode_list;       // ordered-mode inodes (jbd2_inode)
    std::uint64_t t_log_start = 0;
    sim::Instant t_start = 0;
};

}  // namespace model::jbd2
