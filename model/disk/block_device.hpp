#pragma once
// A block device with a volatile write cache (TigerBeetle's storage and
// FoundationDB's AsyncFileNonDurable are the models). The durable image stays
// pristine; writes not yet made durable live in a separate list. A write is
// durable after it completed and a later FLUSH completed, or at completion
// when it was FUA. In-flight I/O completes after a latency from the device
// profile, as a timer, so completions race with tasks. At a crash the image
// keeps what was durable plus the subset of other writes the strategy picks.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/disk/content.hpp"
#include "sim/assert.hpp"
#include "sim/prng.hpp"
#include "sim/range_map.hpp"
#include "sim/time.hpp"

namespace model::disk {

struct DeviceProfile {
    std::string name;
    sim::Duration write_latency;
    sim::Duration flush_latency;
    bool rotational;  // btrfs mounts without -o ssd on rotational devices
    std::string source;
    /// Data transfer, one request at a time over one channel, in bytes per
    /// second (0: none modelled). Performance runs only.
    std::uint64_t bandwidth = 0;
};

/// hdd, ssd, nvme, ramdisk; nullptr for an unknown name.
auto find_profile(const std::string& name) -> const DeviceProfile*;
auto profiles() -> const std::vector<DeviceProfile>&;

/// A durable block: its content and the sequence number of the write that put
/// it there, so that an older write made durable later never wins.
struct DurableBlock {
    Content content;
    std::uint64_t sequence = 0;
    [[nodiscard]] auto shifted(std::uint64_t blocks) const -> DurableBlock {
        return {content.shifted(blocks), sequence};
    }
    auto operator==(const DurableBlock&) const -> bool = default;
};

/// A write that is not durable yet.
struct PendingWrite {
    std::uint64_t sequence;
    std::uint64_t block;
    std::uint64_t count;
    Content content;  // content of the first block
    bool completed;   // in the cache; false while in flight
    bool fua;
    const char* what;  // "data", "meta", "log", "super" for stories and counters
    /// The scheduler's timer that completes it while in flight (its id,
    /// Scheduler::io_after), 0 once completed: which request a pending
    /// completion ends is state, hashed with the rest.
    std::uint64_t timer = 0;
};

/// The device's fault model (a scenario's `faults` and
/// `device.write_cache`), after TigerBeetle's storage simulator: faults are
/// opt-in, each one a choice of the power cut, at most `budget` per crash
/// state, and only where the file system promises to survive or detect them.
struct FaultSettings {
    std::uint32_t budget = 0;  // the most faults one crash state takes
    bool torn_writes = false;  // a lost write may be partly on the media, sector by sector
    /// A write cache that acknowledges FLUSH without making earlier writes
    /// durable (a device profile, not a budgeted fault).
    bool lying_cache = false;
    /// A lost write may land on another block instead of its own: only a
    /// self-describing block (see SelfDescribing) onto a block of the same
    /// area.
    bool misdirected_writes = false;
    /// A block a mount reads through a checked path (Image::read_checked)
    /// may be unreadable: the read returns EIO.
    bool latent_errors = false;
    /// A data write the model submits as failable (submit_failable_write)
    /// may complete with EIO while the workload runs: a choice of the
    /// schedule (sim::Charge::io_error), at most `budget` per run.
    bool write_errors = false;
    auto operator==(const FaultSettings&) const -> bool = default;
};

/// Where a model's writes carry a header that names their own block and a
/// checksum that every read verifies (btrfs: a tree block's bytenr, checked
/// by btrfs_validate_extent_buffer, and the superblock's, by
/// btrfs_read_dev_one_super). A misdirected write is offered only for a
/// write of one of `kinds` into [0, end), and lands only on a block of that
/// area that a mount may read as such a block; a model that declares none
/// is offered none (faults only where they are detected).
struct SelfDescribing {
    std::uint64_t end = 0;           // blocks [0, end)
    std::vector<std::string> kinds;  // PendingWrite::what values: "super", "meta", "log"
};

/// A write the power cut lost that landed on `victim` instead (the device
/// wrote it to the wrong block): its own block keeps what it held, the
/// victim holds its contents, header and all.
struct MisdirectedWrite {
    std::size_t write = 0;
    std::uint64_t victim = 0;
    auto operator==(const MisdirectedWrite&) const -> bool = default;
};

inline constexpr std::uint32_t sector_size = 512;

/// A write the power cut leaves partly on the media: pending()[write]'s first
/// `sectors` sectors reached it, the rest did not (a prefix: the device
/// writes a request's sectors in order).
struct TornWrite {
    std::size_t write = 0;
    std::uint64_t sectors = 0;
    auto operator==(const TornWrite&) const -> bool = default;
};

/// A FLUSH and the writes it covers (those completed when it was issued): in
/// flight, or acknowledged by a lying cache that made none of them durable.
struct FlushLie {
    std::uint64_t flush = 0;  // 1, 2, ...: the device's flush count
    std::vector<std::uint64_t> sequences;
    std::uint64_t timer = 0;  // the completion's timer while in flight (PendingWrite::timer)
};

/// What a crash leaves: read-only.
class Image {
public:
    explicit Image(sim::RangeMap<DurableBlock> blocks) : blocks_(std::move(blocks)) {}
    [[nodiscard]] auto read(std::uint64_t block) const -> Content;
    [[nodiscard]] auto blocks() const -> const sim::RangeMap<DurableBlock>& { return blocks_; }

    /// A read whose failure the mount reports (latent sector
    /// errors): nullopt when the block's media is unreadable (EIO). Every
    /// such read is noted (checked_reads), so that the fault model offers a
    /// latent error only on a block a mount reads this way.
    [[nodiscard]] auto read_checked(std::uint64_t block) const -> std::optional<Content>;
    [[nodiscard]] auto checked_reads() const -> const std::vector<std::uint64_t>& { return checked_reads_; }
    /// Blocks whose reads return EIO (a latent sector error each).
    void set_unreadable(std::vector<std::uint64_t> blocks) { unreadable_ = std::move(blocks); }

private:
    sim::RangeMap<DurableBlock> blocks_;
    std::vector<std::uint64_t> unreadable_;
    mutable std::vector<std::uint64_t> checked_reads_;  // in read order, each once
};

/// One request a mount issues while it recovers (log replay), in issue order:
/// a write (FUA or not) or a cache flush. Recovery waits for each write
/// before it issues the next request (btrfs_write_and_wait_transaction,
/// xfs_buf_delwri_submit), so a write is in the cache, not in flight, when
/// the next one starts.
struct MountRequest {
    enum class Kind : std::uint8_t { write, flush };
    Kind kind = Kind::write;
    std::uint64_t block = 0;
    std::uint64_t count = 0;
    Content content;
    bool fua = false;
    const char* what = "meta";  // "meta", "super", as PendingWrite::what
    std::string description;    // "W(meta) fs tree of transaction 7 at block 12", for the story
};

/// The device under a mount that recovers: the crashed image is its durable
/// contents, and each request goes through the same cache rules as
/// BlockDevice's (a write is durable after a later FLUSH, or at once when
/// FUA), so a second power cut keeps the durable part plus any subset of the
/// writes still in the cache.
class MountDevice {
public:
    explicit MountDevice(const Image& image);
    void issue(const MountRequest& request);
    [[nodiscard]] auto pending() const -> const std::vector<PendingWrite>& { return pending_; }
    /// The image after a cut that keeps pending()[i] exactly when keep[i].
    [[nodiscard]] auto crash_image(const std::vector<bool>& keep) const -> Image;

private:
    sim::RangeMap<DurableBlock> durable_;
    std::vector<PendingWrite> pending_;
    std::uint64_t sequence_ = 0;  // above every sequence in the image
};

struct DeviceCounters {
    std::uint64_t writes = 0;
    std::uint64_t blocks_written = 0;
    std::uint64_t flushes = 0;
    std::uint64_t fua_writes = 0;
    std::uint64_t write_errors = 0;  // writes that completed with EIO (faults.write_errors)
};

/// Tests: a device's kept durable-blocks hash is recomputed at every state
/// hash and must agree (a change of the durable blocks that did not bump
/// their version is a defect).
inline bool verify_kept_durable_hash = false;

class BlockDevice {
public:
    BlockDevice(std::uint64_t blocks, DeviceProfile profile, std::uint32_t block_size = 4096);

    [[nodiscard]] auto block_count() const -> std::uint64_t { return blocks_; }
    [[nodiscard]] auto profile() const -> const DeviceProfile& { return profile_; }

    /// Submits a write of `count` blocks whose first block holds `content`;
    /// `on_complete` runs in timer context when it completes.
    void submit_write(std::uint64_t block, std::uint64_t count, Content content, bool fua,
                      const char* what, std::function<void()> on_complete);
    /// A write whose completion may fail (faults.write_errors):
    /// `on_end(true)` when it completed as submit_write's would,
    /// `on_end(false)` when the device returned EIO: then it is neither in
    /// the cache nor durable, and no crash keeps it.
    void submit_failable_write(std::uint64_t block, std::uint64_t count, Content content, const char* what,
                               std::function<void(bool)> on_end);
    /// Submits a cache flush: at its completion every write that had completed
    /// when it was submitted is durable.
    void submit_flush(std::function<void()> on_complete);

    /// From a fiber: submit and block until completion.
    void write_and_wait(std::uint64_t block, std::uint64_t count, Content content, bool fua,
                        const char* what);
    void flush_and_wait();

    /// The current contents as a running system reads them (cache over durable).
    [[nodiscard]] auto read(std::uint64_t block) const -> Content;

    /// Writes that a crash may keep or drop, in submission order.
    [[nodiscard]] auto pending() const -> const std::vector<PendingWrite>& { return pending_; }
    /// What is on the media now: the image of a crash that keeps no pending write.
    [[nodiscard]] auto durable() const -> const sim::RangeMap<DurableBlock>& { return durable_; }
    /// The image after a crash that keeps pending()[i] exactly when keep[i],
    /// and the first sectors of each torn write (a write keep loses).
    [[nodiscard]] auto crash_image(const std::vector<bool>& keep, const std::vector<TornWrite>& torn = {},
                                   const std::vector<MisdirectedWrite>& misdirected = {}) const -> Image;
    /// Bumps whenever anything a crash could observe changes.
    [[nodiscard]] auto epoch() const -> std::uint64_t { return epoch_; }
    [[nodiscard]] auto counters() const -> const DeviceCounters& { return counters_; }
    /// The durable blocks, the pending writes in order (with their
    /// sequences, which completions name), the flush lies and the transfer
    /// channel, for a visited-state hash (sim/fingerprint.hpp): each part
    /// hashed apart and given to `add(name, hash)`, so check mode can name
    /// the part two states differ in.
    template <typename Add>
    void hash_parts(Add&& add) const {
        keep_durable_hash();
        add("durable blocks", durable_hash_.contents);
        add("durable blocks' write sequences", durable_hash_.written_by);
        sim::StateHash order(pending_.size());
        sim::StateHash targets;
        sim::StateHash flags;
        sim::StateHash timers;
        for (const PendingWrite& write : pending_) {
            order.add(write.sequence);
            timers.add(write.timer);
            for (const std::uint64_t word : {write.block, write.count, sim::hash_name(write.what)}) {
                targets.add(word);
            }
            write.content.hash_into(targets);
            flags.add((write.completed ? 1U : 0U) | (write.fua ? 2U : 0U));
        }
        add("pending writes' sequences", order.value());
        add("pending writes' blocks and contents", targets.value());
        add("pending writes' completion and FUA flags", flags.value());
        for (const FlushLie& flush : flushing_) timers.add(flush.timer);
        add("completion timers of requests in flight", timers.value());
        add("next write sequence", sequence_);
        sim::StateHash counters(counters_.write_errors);
        counters.add(counters_.flushes);
        add("write error and flush counts", counters.value());
        sim::StateHash lies(lies_.size());
        for (const FlushLie& lie : lies_) {
            lies.add(lie.flush);
            for (const std::uint64_t sequence : lie.sequences) lies.add(sequence);
        }
        add("flush lies", lies.value());
        sim::StateHash flushing(flushing_.size());
        for (const FlushLie& flush : flushing_) {
            flushing.add(flush.flush);
            for (const std::uint64_t sequence : flush.sequences) flushing.add(sequence);
        }
        add("in-flight flushes' covered writes", flushing.value());
        add("transfer channel", channel_backlog());
    }
    /// How long the transfer channel stays busy from now (0: free).
    [[nodiscard]] auto channel_backlog() const -> std::uint64_t;
    /// Brings the durable blocks' kept hash up to date (a copy of the device
    /// keeps it: a run's state hashes walk the durable blocks only after a
    /// write became durable).
    void keep_durable_hash() const {
        if (durable_hash_.version == durable_version_ && !verify_kept_durable_hash) return;
        sim::StateHash contents;
        sim::StateHash written_by;
        durable_.for_each([&](std::uint64_t start, std::uint64_t end, const DurableBlock& block) {
            contents.add(start);
            contents.add(end);
            block.content.hash_into(contents);
            written_by.add(block.sequence);
        });
        if (durable_hash_.version == durable_version_) {
            SIM_ASSERT(durable_hash_.contents == contents.value() &&
                       durable_hash_.written_by == written_by.value());
        }
        durable_hash_ = {durable_version_, contents.value(), written_by.value()};
    }
    void hash_into(sim::StateHash& out) const {
        hash_parts([&](const char*, std::uint64_t value) { out.add(value); });
    }

    /// Performance runs: the latency jitter's stream, forked from the run's
    /// seed (unseeded: seed 0).
    void seed(std::uint64_t run_seed) { jitter_ = sim::Prng(run_seed).fork("disk.latency"); }

    /// Faults from here on (the set-up runs without them).
    void set_faults(const FaultSettings& faults) { faults_ = faults; }
    [[nodiscard]] auto faults() const -> const FaultSettings& { return faults_; }
    /// How many ways pending()[i] can be torn (its sectors less one), 0 when
    /// the fault model does not tear it: torn writes off, a single-sector
    /// write, or a data write over blocks that hold data, whose torn
    /// overwrite in place no file system without data checksums promises to
    /// survive or detect (TigerBeetle's rule: faults only where they are).
    [[nodiscard]] auto tear_points(std::size_t i) const -> std::uint64_t;
    /// The model's self-describing blocks (set at mkfs; none: no misdirected writes).
    void declare_self_describing(SelfDescribing area) { self_describing_ = std::move(area); }
    /// The blocks pending()[i] may land on when misdirected, in increasing
    /// order; empty when the fault model does not misdirect it (see
    /// SelfDescribing; the write covers one block).
    [[nodiscard]] auto misdirect_victims(std::size_t i) const -> std::vector<std::uint64_t>;
    /// "misdirected write: meta@12 landed on block 7 (in the cache); block 12 keeps its old contents".
    [[nodiscard]] auto describe_misdirect(const MisdirectedWrite& misdirect) const -> std::string;
    /// "torn write of block 12: sectors 0-3 new, 4-7 old (meta, in flight)".
    [[nodiscard]] auto describe_tear(const TornWrite& torn) const -> std::string;
    /// The pending writes a lying cache said were durable and that neither
    /// keep nor a tear put on the media, one line each; empty when the
    /// cache told the truth about every write the cut lost.
    [[nodiscard]] auto lies_exposed(const std::vector<bool>& keep, const std::vector<TornWrite>& torn) const
        -> std::vector<std::string>;

    /// Set-up only: write straight to the durable image (mkfs, pre-filled disks).
    void format(std::uint64_t block, std::uint64_t count, Content content);

private:
    void complete_write(std::uint64_t sequence);
    /// The pending write `sequence`, which must still be in flight.
    auto in_flight(std::uint64_t sequence) -> std::vector<PendingWrite>::iterator;
    void fail_write(std::uint64_t sequence);
    /// A submitted write, in flight: its sequence number.
    auto enqueue(std::uint64_t block, std::uint64_t count, Content content, bool fua, const char* what)
        -> std::uint64_t;

    std::uint64_t blocks_;
    DeviceProfile profile_;
    sim::RangeMap<DurableBlock> durable_;
    std::vector<PendingWrite> pending_;
    [[nodiscard]] auto latency(sim::Duration nominal) -> sim::Duration;
    /// When a write of `count` blocks submitted now has crossed the channel.
    [[nodiscard]] auto transfer(std::uint64_t count) -> sim::Duration;

    std::uint64_t sequence_ = 0;
    std::uint64_t epoch_ = 0;
    // Bumped with every change of durable_ (make_durable, format).
    std::uint64_t durable_version_ = 0;
    struct DurableHash {
        std::uint64_t version = ~std::uint64_t{0};
        std::uint64_t contents = 0;
        std::uint64_t written_by = 0;
    };
    mutable DurableHash durable_hash_;
    FaultSettings faults_;
    SelfDescribing self_describing_;
    std::vector<FlushLie> flushing_;  // in flight, in issue order
    std::vector<FlushLie> lies_;      // lying_cache only
    DeviceCounters counters_;
    sim::Prng jitter_{sim::Prng(0).fork("disk.latency")};  // performance runs only; see seed()
    std::uint32_t block_size_;
    sim::Instant channel_free_ = 0;  // performance runs only: the transfer channel
};

}  // namespace model::disk
