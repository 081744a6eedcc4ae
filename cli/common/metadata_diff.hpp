#pragma once
// How `minfer diff` shows a metadata difference (minfer::compare finds them): a type as text, an
// array item as text.
#include <cstdint>
#include <string>

#include "minfer/compare/metadata_diff.hpp"
#include "minfer/gguf/value.hpp"

namespace minfer::cli {

using compare::metadata_difference;

/// The type as shown: "u32", "string", "array[u32]".
std::string type_text(const gguf::kv& e);

/// Item i of an array as text (a string quoted, cut at `limit` bytes; a number plainly); "" when i
/// is past the end.
std::string array_item_text(const gguf::kv& e, std::uint64_t i, std::size_t limit);

}  // namespace minfer::cli
