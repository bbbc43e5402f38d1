#include "model/direct_io.hpp"

#include "sim/assert.hpp"

namespace model {

void DirectBios::submit(std::uint64_t start, std::uint64_t end, std::uint64_t disk_block,
                        std::function<void()> on_end) {
    SIM_ASSERT(start_ <= start && start < end);
    bios_++;
    pending_++;
    device_.submit_write(disk_block, end - start, buffer_.shifted(start - start_), false, "data",
                         [this, on_end = std::move(on_end)] {
                             if (on_end) on_end();
                             SIM_ASSERT(pending_ > 0);
                             if (--pending_ == 0) done_.complete();
                         });
}

}  // namespace model
