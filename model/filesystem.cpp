#include "model/filesystem.hpp"

namespace model {

auto Geometry::device_profile() const -> disk::DeviceProfile {
    disk::DeviceProfile result = *disk::find_profile(profile);
    if (write_latency) result.write_latency = *write_latency;
    if (flush_latency) result.flush_latency = *flush_latency;
    if (bandwidth) result.bandwidth = *bandwidth;
    return result;
}

}  // namespace model
