#include "model/filesystem.hpp"

namespace model {

auto Geometry::device_profile() const -> disk::DeviceProfile {
    disk::DeviceProfile result = *disk::find_profile(profile);
    if (write_latency) result.write_latency = *write_latency;
    if (flush_latency) result.flush_latency = *flush_latency;
    if (bandwidth) result.bandwidth = *bandwidth;
    return result;
}

void RecoveredFile::read_mapped(const disk::Image& image, std::uint64_t file_block,
                                std::uint64_t device_block, std::uint64_t count) {
    image.blocks().for_each(device_block, device_block + count,
                            [&](std::uint64_t start, std::uint64_t end, const disk::DurableBlock& block) {
                                const std::uint64_t at = file_block + (start - device_block);
                                blocks.assign(at, at + (end - start), block.content);
                            });
}

}  // namespace model
