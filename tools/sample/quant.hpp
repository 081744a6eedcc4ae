#pragma once
// Our own scalar converters and block quantizers for the sample-model generator and the tests.
// The block layouts are ggml's (ggml-common.h); the arithmetic follows the reference quantizers
// operation by operation (scale from the unrounded f32 d, x * (1/d), no fused multiply-add), so
// the bytes are identical to quantize_row_q4_0_ref / quantize_row_q8_0_ref. tests/sample checks
// this against llama.cpp's library.
#include <cstddef>
#include <cstdint>
#include <span>

namespace minfer::sample {

inline constexpr std::size_t block_elems = 32;     ///< QK4_0 == QK8_0
inline constexpr std::size_t q4_0_block_bytes = 18;  ///< f16 d + 16 bytes of nibbles
inline constexpr std::size_t q8_0_block_bytes = 34;  ///< f16 d + 32 int8

/// f32 -> IEEE binary16, round to nearest even; subnormals rounded (not flushed); values of
/// magnitude >= 65520 become inf; any NaN becomes the quiet NaN 0x7e00 with the sign kept (as
/// ggml_fp32_to_fp16 does).
std::uint16_t f32_to_f16(float x) noexcept;
/// binary16 -> f32, exact for every value; a NaN keeps its payload and is made quiet.
float f16_to_f32(std::uint16_t h) noexcept;
/// f32 -> bfloat16, round to nearest even; a NaN keeps its top payload bits and is made quiet.
std::uint16_t f32_to_bf16(float x) noexcept;
/// bfloat16 -> f32 (exact: the bits are the top half of the f32).
float bf16_to_f32(std::uint16_t h) noexcept;

/// Bytes of n values in each format; 0 when n is not a multiple of 32.
constexpr std::size_t q4_0_bytes(std::size_t n) noexcept {
    return n % block_elems == 0 ? n / block_elems * q4_0_block_bytes : 0;
}
constexpr std::size_t q8_0_bytes(std::size_t n) noexcept {
    return n % block_elems == 0 ? n / block_elems * q8_0_block_bytes : 0;
}

/// Quantize x (x.size() a multiple of 32, finite values) into y (exactly q4_0_bytes(x.size()) bytes).
/// Block: d = m / -8 where m is the first value of largest magnitude; q = min(15, int(x * id + 8.5))
/// with id = 1/d (0 when d == 0); element j in the low nibble of byte j, element j + 16 in the high
/// nibble.
/// @returns false (writing nothing) when the sizes do not fit.
[[nodiscard]] bool quantize_q4_0(std::span<const float> x, std::span<std::byte> y) noexcept;
/// Inverse of quantize_q4_0: y[j] = (q - 8) * d. @returns false when the sizes do not fit.
[[nodiscard]] bool dequantize_q4_0(std::span<const std::byte> x, std::span<float> y) noexcept;
/// Quantize x (finite values) into Q8_0 blocks: d = max|x| / 127, q = round(x * id) (half away
/// from zero) with id = 1/d (0 when d == 0).
[[nodiscard]] bool quantize_q8_0(std::span<const float> x, std::span<std::byte> y) noexcept;
/// Inverse of quantize_q8_0: y[j] = q * d.
[[nodiscard]] bool dequantize_q8_0(std::span<const std::byte> x, std::span<float> y) noexcept;

/// f32 <-> f16 over arrays of equal length (y is little-endian u16 pairs when written as bytes).
[[nodiscard]] bool convert_f32_to_f16(std::span<const float> x, std::span<std::uint16_t> y) noexcept;
[[nodiscard]] bool convert_f16_to_f32(std::span<const std::uint16_t> x, std::span<float> y) noexcept;

}  // namespace minfer::sample
