#pragma once
// Whether a path names one of a model's own files. Commands that write (edit, split, merge, in the
// CLI and in the Python module) must never write over their input, and a path string says nothing about that: another spelling, a
// symbolic link or a hard link name the same file. The file's identity (device and inode) does.
#include <cstddef>
#include <filesystem>
#include <optional>

#include "minfer/gguf/model.hpp"

namespace minfer::toolbox {

/// The 0-based index of the part of `m` that is the same file as `path`; nullopt when `path` does
/// not exist or is none of them.
std::optional<std::size_t> part_of(const gguf::model& m, const std::filesystem::path& path);

}  // namespace minfer::toolbox
