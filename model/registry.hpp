#pragma once
// Models register themselves. Each model's folder holds one registration
// (model/btrfs/super.cpp, model/xfs/super.cpp: where the kernel's
// register_filesystem and mount-option parsing live): its description
// (ModelInfo), its factory, which parses the configuration through the
// model's knob tables (model/knob.hpp), and the blocks its data may use.
//
// A registration is a static ModelRegistrar object. Static libraries drop
// any object file nothing references, and nothing references a registrar,
// so every executable links the model library whole (meson.build:
// `link_whole : model_lib`); a model added to the library's sources is
// therefore registered in every program, with no list to edit. A model
// compiled into one program only (tests/model/toy/) is one more source of
// that program.
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "model/filesystem.hpp"
#include "model/info.hpp"

namespace model {

/// Why a configuration cannot be laid out on a device (mkfs would refuse it):
/// the knob, what it should be, what it is.
struct LayoutError {
    std::string knob;
    std::string expected;
    std::string got;
};

struct ModelRegistration {
    ModelInfo info;
    /// A freshly formatted file system; `config` holds a declared value for
    /// every knob.
    std::function<std::unique_ptr<FileSystem>(const Config& config, const Geometry& geometry,
                                              const std::vector<std::string>& file_names)>
        make;
    /// Blocks left for file data on a device of this geometry once the
    /// model's own metadata area (superblock, trees, log) is set aside.
    std::function<std::uint64_t(const Geometry& geometry)> data_blocks;
    /// Empty, or the reason `config` does not fit a device of `geometry`
    /// (the loader refuses such a variant; make must not be called with it).
    std::function<std::optional<LayoutError>(const Config& config, const Geometry& geometry)> layout_error{};
};

/// Adds a model; a static object of each model's registration file.
struct ModelRegistrar {
    explicit ModelRegistrar(ModelRegistration registration);
};

auto find_registration(const std::string& name) -> const ModelRegistration*;

/// Why `config` (every knob set) cannot be laid out on this geometry, or nullopt.
auto layout_error(const std::string& model, const Config& config, const Geometry& geometry)
    -> std::optional<LayoutError>;

/// Blocks a model leaves for file data on a device of this geometry.
auto data_blocks(const std::string& model, const Geometry& geometry) -> std::uint64_t;

}  // namespace model
