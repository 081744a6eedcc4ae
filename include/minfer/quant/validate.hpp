#pragma once
// quant::validate_rows: ggml's ggml_validate_row_data on quantized bytes. A value beyond a format's
// range quantizes to an infinite or NaN scale (one weight of 1e5 going to f16, of 1e7 going to q8_0,
// whose block scale is the block's largest magnitude / 127 as an f16): the bytes are well formed but
// the model is damaged, and llama_model_quantize refuses it ("quantized data validation failed")
// because it validates every chunk it writes. toolbox::quantize calls this on every batch, so that
// minfer refuses what llama.cpp refuses, naming the tensor and the row.
//
// What is checked, per type, as ggml checks it: every f16/bf16/f32/f64 value; the f16 scale d of
// the legacy, k-quant, ternary and IQ blocks, and their f16 minimum (q4_1, q5_1: m; q2_K, q4_K,
// q5_K: dmin); q8_K's f32 d; iq1_m's f16 scale spread over its scales; mxfp4's e8m0 exponent (0xFF
// is not a number). Integer types and the quant values themselves are never invalid.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "minfer/gguf/types.hpp"

namespace minfer::quant {

/// What validate_bytes found wrong, the first time.
struct invalid_value {
    std::uint64_t block = 0;  ///< the block (or, for f16/bf16/f32/f64, the value) within the bytes
    bool nan = false;         ///< NaN (or mxfp4's 0xFF exponent); false: an infinity
};

/// Whether `type` has a rule here (every type ggml validates; integer types pass as in ggml).
bool can_validate(gguf::tensor_type type) noexcept;

/// The first invalid scale or value of `bytes` (whole blocks of `type`), or nullopt when every one is
/// finite. A type without a rule, or bytes that are not whole blocks, are reported as block 0, NaN:
/// ggml fails those too.
std::optional<invalid_value> validate_bytes(gguf::tensor_type type, std::span<const std::byte> bytes) noexcept;

/// The index of the first NaN or infinity in `values`, or values.size() when every value is finite:
/// quantize's check of its input, one batch at a time (a branch-free pass over 4096 values at a time,
/// which the compiler vectorises; the value-by-value search only in the stretch that holds one).
std::size_t first_non_finite(std::span<const float> values) noexcept;

}  // namespace minfer::quant
