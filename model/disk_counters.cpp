#include "model/disk_counters.hpp"

namespace model {
namespace {

struct Declared {
    const char* name;
    const char* about;
    bool perf_column;
    std::uint64_t disk::DeviceCounters::*value;
};

auto declared(DiskCounter counter) -> Declared {
    switch (counter) {
        case DiskCounter::writes:
            return {"disk_writes", "writes the device received", true, &disk::DeviceCounters::writes};
        case DiskCounter::flushes:
            return {"disk_flushes", "cache flushes the device received", true,
                    &disk::DeviceCounters::flushes};
        case DiskCounter::fua_writes:
            return {"disk_fua_writes", "FUA writes the device received", false,
                    &disk::DeviceCounters::fua_writes};
    }
    return {"", "", false, nullptr};
}

}  // namespace

auto disk_counter_info(DiskCounter counter) -> CounterInfo {
    const Declared found = declared(counter);
    return {found.name, found.about, found.perf_column};
}

auto disk_counter_value(const disk::DeviceCounters& device, DiskCounter counter) -> std::uint64_t {
    return device.*declared(counter).value;
}

}  // namespace model
