#pragma once
// The rules of the format, in one place: what a key, a tensor name, an alignment, an array element
// type and a tensor shape must be. The parser checks files against them and the writer checks what
// it is asked to write against the same functions, so that the writer can never produce a file the
// loader refuses. Each rule returns a `verdict` (a code with expected/found, no allocation, no
// location): callers add the location (the parser: section, byte offset, subject).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::gguf {

/// The outcome of one rule: ok, or the failed code with its expected/found (see docs/ERRORS.md).
struct verdict {
    errc code = errc::ok;
    std::uint64_t expected = 0;
    std::uint64_t found = 0;
    constexpr explicit operator bool() const noexcept { return code == errc::ok; }
};

/// What a valid shape implies: ne padded with 1s, ggml's strides, element count and byte size.
struct shape_facts {
    std::array<std::int64_t, 4> ne;
    std::array<std::uint64_t, 4> nb;
    std::uint64_t n_elements;
    std::uint64_t n_bytes;
};

namespace rules {

/// A metadata key: non-empty and free of NUL bytes (C readers such as llama.cpp would see a
/// shorter key). nul_in_name: found = the NUL's position.
constexpr verdict key(std::string_view k) noexcept {
    if (k.empty()) return {errc::empty_key};
    if (const auto nul = k.find('\0'); nul != std::string_view::npos) return {errc::nul_in_name, 0, nul};
    return {};
}

/// A tensor name: 1..63 bytes (ggml keeps 64 with the NUL) and free of NUL bytes.
constexpr verdict tensor_name(std::string_view n) noexcept {
    if (n.empty() || n.size() > max_name_bytes) return {errc::bad_name_length, max_name_bytes, n.size()};
    if (const auto nul = n.find('\0'); nul != std::string_view::npos) return {errc::nul_in_name, 0, nul};
    return {};
}

/// A value type tag (of a value or of an array's elements): 0..12, and an array's elements are not
/// arrays.
constexpr verdict value_tag(std::uint32_t tag) noexcept {
    if (tag >= value_type_count) return {errc::bad_value_type, 0, tag};
    return {};
}
constexpr verdict element_tag(std::uint32_t tag) noexcept {
    if (tag == static_cast<std::uint32_t>(value_type::array)) return {errc::nested_array};
    return value_tag(tag);
}

/// general.alignment: a u32 scalar, non-zero, a power of two.
constexpr verdict alignment(value_type type, std::uint32_t value) noexcept {
    if (type != value_type::u32)
        return {errc::alignment_wrong_type, static_cast<std::uint64_t>(value_type::u32), static_cast<std::uint64_t>(type)};
    if (value == 0 || (value & (value - 1)) != 0) return {errc::bad_alignment, 0, value};
    return {};
}

/// A tensor's shape for a type id: at most 4 dims, none negative, the element count fits int64,
/// the type is known and not removed, ne[0] is a multiple of the block, strides and byte size fit
/// 64 bits (ggml's rule; whatever holds the bytes adds its own limit, see fits_in_memory). On success
/// fills `out`; on failure out.ne holds the dims read so far, padded with 1s.
verdict shape(std::uint32_t type_id, std::span<const std::int64_t> dims, shape_facts& out) noexcept;

/// Whether `n_bytes` can be one object in memory (a span, a vector): at most PTRDIFF_MAX. Sizes
/// above are refused as size_overflow by everything that allocates or slices a tensor's bytes.
constexpr bool fits_in_memory(std::uint64_t n_bytes) noexcept {
    return n_bytes <= static_cast<std::uint64_t>(PTRDIFF_MAX);
}

}  // namespace rules

/// The shape rule with an error (code, expected, found, shape; the caller adds location).
/// @returns bad_n_dims, bad_dim, shape_overflow, bad_tensor_type, removed_tensor_type,
/// not_block_multiple or size_overflow.
result<shape_facts> check_shape(std::uint32_t type_id, std::span<const std::int64_t> ne) noexcept;

}  // namespace minfer::gguf
