#pragma once
// snapshot: a parser-neutral record of everything a GGUF reader reports about a file — version,
// alignment, data offset, every KV in order (type, element type, count, value bytes / strings) and
// every tensor (name, type, shape, strides, offset, byte size). Our parser's file_view and
// llama.cpp's gguf_context are both turned into one, so "the two parsers agree" is `diff() == ""`.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/file_view.hpp"

namespace minfer::reference {

/// A metadata value. Scalars: type == elem, count == 1. Arrays: type == 9 (array).
/// Fixed-size values keep their little-endian bytes (floats compare bitwise); strings their text.
struct value {
    std::uint32_t type = 0;
    std::uint32_t elem = 0;
    std::uint64_t count = 1;
    std::vector<std::byte> fixed;
    std::vector<std::string> strings;
    friend bool operator==(const value&, const value&) = default;
};

struct kv_entry {
    std::string key;
    value v;
    friend bool operator==(const kv_entry&, const kv_entry&) = default;
};

struct tensor_entry {
    std::string name;
    std::uint32_t type = 0;
    std::array<std::int64_t, 4> ne{1, 1, 1, 1};
    std::optional<std::array<std::uint64_t, 4>> nb;  ///< absent when the reader cannot report it
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    friend bool operator==(const tensor_entry&, const tensor_entry&) = default;
};

struct snapshot {
    std::uint32_t version = 0;
    std::uint64_t alignment = 0;
    std::uint64_t data_offset = 0;
    std::vector<kv_entry> kvs;
    std::vector<tensor_entry> tensors;
};

/// Our parser's view of a file.
snapshot snapshot_of(const gguf::file_view& v);

/// The snapshot as llama.cpp's C API can express it: every key, string and tensor name cut at its
/// first NUL (gguf_get_key, gguf_get_val_str, gguf_get_arr_str and ggml's char name[64] are C
/// strings). `had_nul` reports whether anything was cut.
snapshot as_c_strings(snapshot s, bool* had_nul = nullptr);

/// Differences between two snapshots, one per line ("" when equal). Strides are compared only
/// when both sides report them.
std::string diff(const snapshot& a, const snapshot& b, std::string_view name_a, std::string_view name_b);

/// Printable form of raw bytes (gguf::escape).
std::string show(std::string_view raw);
/// Hex dump of the first `limit` bytes, 32 per line with offsets.
std::string hex_dump(std::span<const std::byte> bytes, std::size_t limit = 256);
/// Hex of the whole buffer, no spaces (for reproducers).
std::string hex(std::span<const std::byte> bytes);

}  // namespace minfer::reference
