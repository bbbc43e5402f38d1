#include "model/disk/content.hpp"

namespace model::disk {

auto Content::describe(const std::vector<std::string>& file_names,
                       std::uint32_t block_size) const -> std::string {
    if (misdirected) {
        Content whole = *this;
        whole.misdirected = false;
        whole.home = 0;
        return whole.describe(file_names, block_size) + " written for block " + std::to_string(home) +
               " (a misdirected write)";
    }
    if (torn()) {
        Content whole = *this;
        whole.sectors = 0;
        const std::uint32_t per_block = block_size / 512;
        return "sectors 0-" + std::to_string(sectors - 1) + " of " + whole.describe(file_names, block_size) +
               ", " + std::to_string(sectors) + "-" + std::to_string(per_block - 1) + " old (a torn write)";
    }
    switch (kind) {
        case ContentKind::zeros:
            return "zeros";
        case ContentKind::data: {
            const std::string name =
                file < file_names.size() ? file_names[file] : "file#" + std::to_string(file);
            return "data of " + name + " at " + std::to_string(offset * block_size) +
                   " (write v" + std::to_string(version) + ")";
        }
        case ContentKind::stale:
            return "stale contents of device block " + std::to_string(offset) +
                   " (an earlier owner)";
        case ContentKind::meta:
            return "metadata object #" + std::to_string(version);
    }
    return "?";
}

}  // namespace model::disk
