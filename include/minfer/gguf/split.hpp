#pragma once
// Split file names: llama.cpp's "<prefix>-%05d-of-%05d.gguf" (llama_split_path).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"

namespace minfer::gguf {

struct split_name {
    std::string prefix;   ///< everything before "-0000X-of-0000Y.gguf"
    std::uint32_t index;  ///< 0-based part index (X - 1)
    std::uint32_t count;  ///< Y
};

/// Recognise "<prefix>-XXXXX-of-YYYYY.gguf": exactly five digits each, 1 <= X <= Y.
/// @returns nullopt for any other name.
std::optional<split_name> split_file_info(std::string_view file_name);

/// The file name of part `index` (0-based) of `count`: "<prefix>-%05u-of-%05u.gguf".
std::string split_file_name(std::string_view prefix, std::uint32_t index, std::uint32_t count);

/// From the name alone (no file is read): the ordered list of part paths for an entry path: the
/// path itself when it is not a split name, or all parts 1..Y beside it when it is part 1.
/// model::open does not use this: there the file's split.count decides (a standalone model may
/// carry a split-like name).
/// @returns split_not_first (found = X - 1, offset 0: no key was read; detail = part 1's path)
/// when the path names a later part.
result<std::vector<std::filesystem::path>> resolve_splits(const std::filesystem::path& entry);

}  // namespace minfer::gguf
