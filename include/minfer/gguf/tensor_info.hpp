#pragma once
// One entry of a file's tensor table, verified: its type is known, its shape and byte size are
// representable, its strides are ggml's, and its bytes lie inside the file.
#include <array>
#include <cstdint>
#include <string_view>

#include "minfer/gguf/types.hpp"

namespace minfer::gguf {

inline constexpr std::uint32_t max_dims = 4;       ///< GGML_MAX_DIMS
inline constexpr std::uint32_t max_name_bytes = 63;  ///< GGML_MAX_NAME - 1 (names are NUL-terminated in ggml)

struct tensor_info {
    std::string_view name;             ///< a view into the file (escape to print)
    tensor_type type;
    std::uint32_t n_dims;              ///< as stored, 0..4
    std::array<std::int64_t, 4> ne;    ///< elements per dimension, ne[0] fastest; unused dimensions are 1
    std::array<std::uint64_t, 4> nb;   ///< strides in bytes, exactly as ggml computes them
    std::uint64_t offset;              ///< offset from the start of the data section, as stored
    std::uint64_t n_elements;
    std::uint64_t n_bytes;             ///< ggml_nbytes: the tensor's contiguous size
    std::uint64_t info_offset;         ///< absolute offset of this tensor's record in the table
};

/// ggml's strides for a shape: nb[0] = block bytes, nb[1] = nb[0] * ne[0] / block elems,
/// nb[i] = nb[i-1] * ne[i-1]. The caller guarantees the shape is valid for the type.
std::array<std::uint64_t, 4> ggml_strides(const type_traits& t, const std::array<std::int64_t, 4>& ne) noexcept;

/// GGML_PAD: round x up to a multiple of n (a power of two). The caller guarantees no overflow.
constexpr std::uint64_t pad_to(std::uint64_t x, std::uint64_t n) noexcept { return (x + n - 1) & ~(n - 1); }

}  // namespace minfer::gguf
