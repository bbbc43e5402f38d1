#pragma once
// Report, repro and result files are published whole: written under a unique
// temporary name in the same directory, fsynced, renamed over the target,
// and the directory fsynced, so two writers never share a temporary and a
// power cut never publishes an empty file.
#include <string>

namespace runner {

/// Throws InputError naming `path` when it cannot be written.
void write_text_file_atomically(const std::string& path, const std::string& text);

}  // namespace runner
