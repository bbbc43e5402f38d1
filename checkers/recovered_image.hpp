#pragma once
// Checks of a recovered image made outside the model: from the extents and
// sizes recovery reported (model::RecoveredFile::extents), with no model
// code. A model's own invariants (RecoveredState::consistency_errors) are
// computed by the code under test; these are not. Only rules that hold for
// every state of a real kernel's file system: a rule that a kernel breaks on
// purpose (reflinks, snapshots) does not belong here while a model has it.
#include <optional>
#include <string>

#include "checkers/checker.hpp"

namespace checkers {

/// The first broken rule, in file and offset order, or nothing:
///  - every extent has blocks and lies inside the device
///    ([metadata_end, device_blocks) when the model declares its metadata area);
///  - a file's extents do not overlap in file offsets;
///  - no device block is mapped twice (by two files, or twice in one file);
///  - a missing file maps nothing;
///  - a read returns nothing past the file's size, and every block that reads
///    anything but zeros lies inside a written (not unwritten) extent.
auto recovered_image_error(const model::RecoveredState& state, const CheckContext& context)
    -> std::optional<std::string>;

}  // namespace checkers
