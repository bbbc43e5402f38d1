#include "checkers/oracle.hpp"

#include "sim/assert.hpp"

namespace checkers {

void Oracle::end_write(std::uint32_t file, std::uint64_t start, std::uint64_t end,
                       std::uint64_t version, std::uint64_t size_bytes) {
    SIM_ASSERT(file < files_.size());
    files_[file].contents.assign(start, end, model::disk::Content::data(file, start, version));
    if (size_bytes > files_[file].size_bytes) files_[file].size_bytes = size_bytes;
}

auto Oracle::begin_zero(std::uint32_t file, std::uint64_t start, std::uint64_t end) -> std::uint64_t {
    SIM_ASSERT(file < files_.size());
    const std::uint64_t version = ++last_version_;
    if (start < end) {
        model::disk::Content zeros = model::disk::Content::zeros();
        zeros.version = version;
        files_[file].zeroed.assign(start, end, zeros);
    }
    return version;
}

void Oracle::end_zero(std::uint32_t file, std::uint64_t start, std::uint64_t end, std::uint64_t version,
                      std::uint64_t size_bytes) {
    SIM_ASSERT(file < files_.size());
    if (start < end) {
        model::disk::Content zeros = model::disk::Content::zeros();
        zeros.version = version;
        files_[file].contents.assign(start, end, zeros);
    }
    if (size_bytes > files_[file].size_bytes) files_[file].size_bytes = size_bytes;
}

auto Oracle::zeroed_version(std::uint32_t file, std::uint64_t block) const -> std::uint64_t {
    const auto found = files_[file].zeroed.find(block);
    return found ? found->version : 0;
}

auto Oracle::begin_fsync(std::uint32_t file, std::uint64_t step, std::string what) -> std::size_t {
    SIM_ASSERT(file < files_.size());
    Promise promise{file, files_[file].size_bytes, files_[file].contents, step, 0, false,
                    std::move(what)};
    promises_.push_back(std::move(promise));
    return promises_.size() - 1;
}

void Oracle::end_fsync(std::size_t id, std::uint64_t step) {
    SIM_ASSERT(id < promises_.size());
    SIM_ASSERT(!promises_[id].returned);
    promises_[id].returned = true;
    promises_[id].returned_step = step;
    epoch_++;
}

}  // namespace checkers
