#include "model/disk/content.hpp"

namespace model::disk {

auto Content::describe(const std::vector<std::string>& file_names,
                       std::uint32_t block_size) const -> std::string {
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
