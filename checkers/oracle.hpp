#pragma once
// The oracle: what the workload did and what the system acknowledged,
// recorded outside the model by the code that runs the scenario's
// operations. Checkers compare it with what recovery produced.
#include <cstdint>
#include <string>
#include <vector>

#include "model/disk/content.hpp"
#include "sim/range_map.hpp"

namespace checkers {

/// An operation that changes a file's size (i_size): a truncate sets it; a
/// write past EOF, a fallocate or zero range without keep_size raises it to
/// max(size, end). Sequence numbers order begins and ends of operations and
/// fsyncs (Oracle::sequence); `ended` is 0 while it has not returned (or failed).
struct SizeChange {
    bool sets = false;  // truncate; otherwise raises to at least `size_bytes`
    std::uint64_t size_bytes = 0;
    std::uint64_t began = 0;
    std::uint64_t ended = 0;
};

/// A range of sizes, both ends included.
struct SizeRange {
    std::uint64_t low;
    std::uint64_t high;
};

/// What one returned fsync (or sync) promised for one file.
struct Promise {
    std::uint32_t file;
    std::uint64_t size_bytes;                       // size at fsync start (for the story)
    sim::RangeMap<model::disk::Content> contents;   // completed writes at fsync start
    std::uint64_t started_step = 0;
    std::uint64_t returned_step = 0;
    bool returned = false;
    std::string what;  // "fsync #2 of I"
    std::uint64_t began_sequence = 0;     // Oracle::sequence when the fsync began
    std::uint64_t returned_sequence = 0;  // and when it returned
    /// Oracle::sequence of the last writeback error reported on the file
    /// before the fsync began (0: none): size raises that began before it
    /// are not promised (their writeback may have failed).
    std::uint64_t error_sequence = 0;
};

class Oracle {
public:
    explicit Oracle(std::size_t files) : files_(files) {}

    /// A write starts: its version names its contents.
    auto begin_write() -> std::uint64_t {
        revision_++;
        return ++last_version_;
    }
    /// A write returned: [start, end) (blocks) now holds the version.
    void end_write(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                   std::uint64_t version, std::uint64_t size_bytes);
    /// A hole punch or zero range starts over [start, end) (blocks); from now
    /// on zeros there are newer than what was written before.
    auto begin_zero(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> std::uint64_t;
    /// It returned: [start, end) reads zeros; size_bytes > 0 raises the size.
    void end_zero(std::uint32_t file, std::uint64_t start, std::uint64_t end, std::uint64_t version,
                  std::uint64_t size_bytes);
    /// The newest zeroing operation started over `block`, 0 if none.
    [[nodiscard]] auto zeroed_version(std::uint32_t file, std::uint64_t block) const -> std::uint64_t;
    /// An operation that changes the size of `file` starts (see SizeChange);
    /// returns its id for end_size.
    auto begin_size(std::uint32_t file, bool sets, std::uint64_t size_bytes) -> std::size_t;
    /// It returned successfully: the oracle's size follows it.
    void end_size(std::uint32_t file, std::size_t id);
    /// It returned having changed the size to `size_bytes` only (a short
    /// write: no more than it announced).
    void end_size(std::uint32_t file, std::size_t id, std::uint64_t size_bytes);
    /// A truncate to `size_bytes` starts: from now on zeros past it are newer
    /// than what was written there before (a later extension reads zeros).
    auto begin_truncate(std::uint32_t file, std::uint64_t size_bytes, std::uint32_t block_size)
        -> std::uint64_t;
    /// It returned: nothing past the size is promised any more.
    void end_truncate(std::uint32_t file, std::uint64_t size_bytes, std::uint32_t block_size);
    [[nodiscard]] auto size_changes(std::uint32_t file) const -> const std::vector<SizeChange>& {
        return files_[file].size_changes;
    }
    /// The sizes a file may have after recovery once `promise` returned
    /// (the rule is written at the definition).
    [[nodiscard]] auto legitimate_sizes(const Promise& promise) const -> std::vector<SizeRange>;
    /// An fsync of `file` starts; returns its id.
    auto begin_fsync(std::uint32_t file, std::uint64_t step, std::string what) -> std::size_t;
    /// It returned: its promise now binds.
    void end_fsync(std::size_t id, std::uint64_t step);

    [[nodiscard]] auto promises() const -> const std::vector<Promise>& { return promises_; }
    [[nodiscard]] auto last_version() const -> std::uint64_t { return last_version_; }
    /// A writeback error was reported on `file`: an operation on
    /// it returned an error on a scenario with faults.write_errors. The
    /// kernel reports a failed writeback once per open file and then leaves
    /// the pages clean: a later fsync returns 0 without writing them
    /// ("fsyncgate"). So no later fsync promises what had been written (by
    /// version) or the sizes raised by writes begun before this report; a
    /// write that begins later is promised again.
    void error_reported(std::uint32_t file);
    /// Errors reported to the workload so far (error_reported calls).
    [[nodiscard]] auto errors_reported() const -> std::uint64_t { return errors_reported_; }
    /// An unlink of `file` began: from now on recovery may find it missing,
    /// which is not lost data (its promises hold only while it exists).
    void remove_file(std::uint32_t file) {
        revision_++;
        files_[file].removed = true;
    }
    [[nodiscard]] auto removed(std::uint32_t file) const -> bool { return files_[file].removed; }
    /// Bumps when a promise starts to bind.
    [[nodiscard]] auto epoch() const -> std::uint64_t { return epoch_; }
    /// Bumps at every change of anything above (every non-const member):
    /// within one run, two equal revisions mean the same oracle, which is
    /// what the runner's memo of crash-state verdicts keys on.
    [[nodiscard]] auto revision() const -> std::uint64_t { return revision_; }
    /// Appends, as words, everything of the oracle a checker's verdict or
    /// at-stake count reads: two oracles of one Simulation's runs with equal
    /// words judge every recovered state alike (the runner's verdict memo
    /// across schedules). A member added above goes here too.
    void encode(std::vector<std::uint64_t>& out) const;

private:
    void encode_order(std::vector<std::uint64_t>& out) const;
    struct FileRecord {
        std::uint64_t size_bytes = 0;
        sim::RangeMap<model::disk::Content> contents;  // zeros carry their operation's version
        sim::RangeMap<model::disk::Content> zeroed;    // newest zeroing started, by block
        std::vector<SizeChange> size_changes;          // in the order they began
        bool removed = false;                          // an unlink began (remove_file)
        std::uint64_t reported_version = 0;            // last_version_ at the last error_reported
        std::uint64_t reported_sequence = 0;           // sequence_ at it (0: none)
    };
    std::vector<FileRecord> files_;
    std::vector<Promise> promises_;
    std::uint64_t last_version_ = 0;
    std::uint64_t epoch_ = 0;
    std::uint64_t revision_ = 0;  // see revision()
    std::uint64_t errors_reported_ = 0;
    std::uint64_t sequence_ = 0;  // bumps at every size change's begin and end and fsync begin
};

}  // namespace checkers
