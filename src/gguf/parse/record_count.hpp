#pragma once
// Internal: the counting pre-pass. Before a large table is parsed, walk it once without storing
// anything, to learn how many of its declared records are actually in the file, so the record
// vector and the hash index are sized once: never from the count the header declares (a hostile
// file may declare millions and hold none), and without doubling-and-copying as records arrive.
// The walk checks only a subset of what the parser checks and stops at the first record it cannot
// step over; the parser does not rely on it (a table that outgrows the estimate simply grows).
#include <cstdint>

#include "byte_cursor.hpp"

namespace minfer::gguf::detail {

/// How many of the `declared` KV records starting at `c` can be stepped over.
std::uint64_t count_kv_records(byte_cursor c, std::uint64_t declared) noexcept;
/// How many of the `declared` tensor-info records starting at `c` can be stepped over.
std::uint64_t count_tensor_records(byte_cursor c, std::uint64_t declared) noexcept;

}  // namespace minfer::gguf::detail
