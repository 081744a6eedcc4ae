#pragma once
// The element types of safetensors (the `dtype` of a tensor entry), as huggingface/safetensors names
// them (safetensors/src/tensor.rs, `enum Dtype`), and which of them the converter reads.
//
// Every dtype the format defines is recognized, so that a valid file is never called invalid: a
// header naming one the converter does not read (FP8, the MX formats, unsigned 16/32/64-bit, complex)
// is a valid file whose tensor is refused by name (codes::unsupported_dtype, from check_convertible).
// A name outside this list is not safetensors at all (codes::bad_safetensors).
#include <cstdint>
#include <optional>
#include <string_view>

namespace minfer::convert {

enum class dtype : std::uint8_t {
    // read by the converter: the ten convert_hf_to_gguf.py maps to torch dtypes (LazyTorchTensor's
    // _dtype_str_map, without its FP8 entries, which need dequantization with scales)
    f64, f32, f16, bf16, i64, i32, i16, i8, u8, boolean,
    // recognized, never converted
    u16, u32, u64, c64,
    f8_e4m3, f8_e5m2, f8_e8m0, f8_e4m3fnuz, f8_e5m2fnuz,
    f4, f6_e2m3, f6_e3m2,
};
inline constexpr std::size_t dtype_count = 22;

/// The format's spelling: "F32", "BF16", "BOOL", "F8_E4M3", …
std::string_view to_string(dtype t) noexcept;

/// The dtype a header names, matched exactly (the format is case-sensitive: "f32" is not a dtype).
std::optional<dtype> dtype_from_name(std::string_view name) noexcept;

/// Bits of one element: 8 × bytes for the whole-byte types, 4 for F4, 6 for F6_*. A tensor's byte
/// size is elements × bits / 8, which must be whole (the format's rule).
std::uint32_t bit_size(dtype t) noexcept;

/// Whether the converter reads this dtype (the first ten).
bool is_convertible(dtype t) noexcept;

/// "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL": what an unsupported_dtype error lists.
std::string_view convertible_dtype_names() noexcept;

}  // namespace minfer::convert
