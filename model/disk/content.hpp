#pragma once
// Block contents as tags, not bytes: who wrote a block (file, block offset,
// write version), or that it holds metadata, zeros, or stale contents left by
// an earlier owner of the device. Checkers compare tags.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/fingerprint.hpp"

namespace model::disk {

enum class ContentKind : std::uint8_t { zeros, data, stale, meta };

struct Content {
    ContentKind kind = ContentKind::zeros;
    std::uint32_t file = 0;     // data: the file id
    std::uint64_t offset = 0;   // data: file block index; stale: device block; meta: block in the object
    std::uint64_t version = 0;  // data: the write's version; meta: the metadata object id
    /// 0: every sector of the block holds this content. k > 0: a torn write
    /// (the device's fault model): only the block's first k
    /// 512-byte sectors do, the rest still hold what was there before, and
    /// no checksum over the block matches.
    std::uint16_t sectors = 0;
    /// A misdirected write: this content was written for block
    /// `home` and landed here instead, header and all, so a self-describing
    /// block's bytenr names `home`, not the block it sits in.
    bool misdirected = false;
    std::uint64_t home = 0;

    static auto zeros() -> Content { return {}; }
    static auto data(std::uint32_t file, std::uint64_t block, std::uint64_t version) -> Content {
        return {ContentKind::data, file, block, version, 0, false, 0};
    }
    static auto stale(std::uint64_t device_block) -> Content {
        return {ContentKind::stale, 0, device_block, 0, 0, false, 0};
    }
    static auto meta(std::uint64_t object_id) -> Content {
        return {ContentKind::meta, 0, 0, object_id, 0, false, 0};
    }
    [[nodiscard]] auto torn() const -> bool { return sectors != 0; }
    /// Torn or misdirected: no read that verifies the block accepts it.
    [[nodiscard]] auto faulty() const -> bool { return torn() || misdirected; }

    /// The content of the block `blocks` further on in the same run.
    [[nodiscard]] auto shifted(std::uint64_t blocks) const -> Content {
        Content next = *this;
        if (kind != ContentKind::zeros) next.offset += blocks;
        return next;
    }
    auto operator==(const Content&) const -> bool = default;
    /// Every member, for a visited-state hash (sim/fingerprint.hpp).
    void hash_into(sim::StateHash& out) const {
        out.add((std::uint64_t{static_cast<std::uint8_t>(kind)} << 32) | file);
        out.add(offset);
        out.add(version);
        out.add((std::uint64_t{sectors} << 1) | (misdirected ? 1 : 0));
        out.add(home);
    }

    /// "data of I at 20971520 (write v3)", "zeros", "stale block 5000 (an earlier owner)";
    /// a torn block: "sectors 0-3 of metadata object #7, 4-7 old (a torn write)";
    /// a misdirected one: "metadata object #7 written for block 12 (a misdirected write)".
    [[nodiscard]] auto describe(const std::vector<std::string>& file_names,
                                std::uint32_t block_size) const -> std::string;
};

}  // namespace model::disk
