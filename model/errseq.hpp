#pragma once
// Writeback error reporting per open file (write I/O errors), as
// lib/errseq.c and mm/filemap.c do it: a mapping's wb_err is an errseq_t (an
// error code, a SEEN flag and a counter); mapping_set_error records an error
// in it; each open file samples it at open (errseq_sample: an error nobody
// has seen yet is still reported to the new file) and its fsync reports what
// changed since, once (file_check_and_advance_wb_err). The legacy AS_EIO
// flag beside it is what filemap_check_errors tests and clears
// (filemap_write_and_wait_range's callers).
#include <cstdint>
#include <map>
#include <utility>

#include "sim/fingerprint.hpp"
#include "sim/scheduler.hpp"

namespace model {

/// errseq_t, lib/errseq.c: the low bits hold -errno, then ERRSEQ_SEEN, then the counter.
class Errseq {
public:
    static constexpr std::uint32_t max_errno = 4095;
    static constexpr std::uint32_t seen = max_errno + 1;     // ERRSEQ_SEEN
    static constexpr std::uint32_t counter_inc = seen << 1;  // ERRSEQ_CTR_INC

    /// errseq_set: the counter moves only when someone saw the last value.
    void set(int err) {
        std::uint32_t next = (value_ & ~(max_errno | seen)) | static_cast<std::uint32_t>(-err);
        if ((value_ & seen) != 0) next += counter_inc;
        value_ = next;
    }
    /// errseq_sample: an error nobody has seen is reported to the sampler too.
    [[nodiscard]] auto sample() const -> std::uint32_t { return (value_ & seen) != 0 ? value_ : 0; }
    /// errseq_check_and_advance: 0, or the error (negative) when the value
    /// changed since `since`; marks it seen and advances `since`.
    auto check_and_advance(std::uint32_t& since) -> int {
        if (value_ == since) return 0;
        value_ |= seen;
        since = value_;
        return -static_cast<int>(value_ & max_errno);
    }
    [[nodiscard]] auto value() const -> std::uint32_t { return value_; }

private:
    std::uint32_t value_ = 0;
};

inline constexpr int eio = 5;

/// One address_space's error state: wb_err and the legacy AS_EIO flag.
struct MappingErrors {
    Errseq wb_err;
    bool as_eio = false;
    /// mapping_set_error(mapping, -EIO) (include/linux/pagemap.h).
    void set_eio() {
        wb_err.set(-eio);
        as_eio = true;
    }
    /// filemap_check_errors: tests and clears AS_EIO (not wb_err).
    auto check_legacy() -> bool { return std::exchange(as_eio, false); }
};

/// The files a task has open, each with its f_wb_err cursor: a task opens a
/// file at its first operation on it and keeps it open to its end (the
/// workload has no open or close). Keyed by (task, file).
class OpenFiles {
public:
    /// The cursor of the current task's file, sampled now on first use (do_dentry_open).
    auto cursor(std::uint32_t file, const Errseq& wb_err) -> std::uint32_t& {
        const auto key = std::make_pair(sim::current_scheduler().current(), file);
        auto found = cursors_.find(key);
        if (found == cursors_.end()) found = cursors_.emplace(key, wb_err.sample()).first;
        return found->second;
    }

    /// Every cursor by (task, file), in order (sim/fingerprint.hpp).
    void hash_into(sim::StateHash& out) const {
        out.add(cursors_.size());
        for (const auto& [key, cursor] : cursors_) {
            out.add(key.first);
            out.add(key.second);
            out.add(cursor);
        }
    }

private:
    std::map<std::pair<sim::TaskId, std::uint32_t>, std::uint32_t> cursors_;
};

/// file_check_and_advance_wb_err (mm/filemap.c): the error this open file
/// has not been told of (0 if none), reported once; AS_EIO cleared as the
/// legacy code would have.
inline auto file_check_and_advance_wb_err(MappingErrors& mapping, std::uint32_t& cursor) -> int {
    const int err = mapping.wb_err.check_and_advance(cursor);
    mapping.as_eio = false;
    return err;
}

}  // namespace model
