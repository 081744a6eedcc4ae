#pragma once
// The values library's error codes (converting and quantizing tensor bytes, importance matrices).
// Constants of gguf::errc in domain gguf::domains::quant (the high byte), so that adding one changes this
// header only: src/quant/errors.cpp names and describes them, and the inline variable below registers
// them with the loader in every program that includes this header (docs/ERRORS.md lists them).
#include "minfer/gguf/error.hpp"
#include "minfer/gguf/tensor_info.hpp"

namespace minfer::quant {

namespace codes {
// values: converting tensor bytes to numbers
/// the type has no conversion to f32 (q8_1, i64, removed or unknown ids); found = the type id, subject = the
/// tensor when known
inline constexpr gguf::errc type_not_convertible = gguf::make_code(gguf::domains::quant, 1);
// quantizing (quantize_rows)
/// the type has no quantizer (q8_1, q8_K, integers, removed or unknown ids, or a family not built); found =
/// the type id
inline constexpr gguf::errc type_not_quantizable = gguf::make_code(gguf::domains::quant, 2);
/// the type needs importance weights (iq2_xxs, iq2_xs, iq1_s) and none were given; found = the type id
inline constexpr gguf::errc importance_required = gguf::make_code(gguf::domains::quant, 3);
/// an input on which ggml's quantizer would assert (a codebook search that finds no point); index = the row,
/// found = the type id
inline constexpr gguf::errc quantize_failed = gguf::make_code(gguf::domains::quant, 4);
// quantizing a model (the importance reader, toolbox::quantize)
/// an importance-matrix file that is malformed (a negative count or length, an entry without its counts, a
/// wrong type or shape, a non-finite weight); file = it, offset = where, subject = the entry, detail = why
inline constexpr gguf::errc bad_imatrix = gguf::make_code(gguf::domains::quant, 5);
/// an importance entry whose size is not the tensor's (ne[0] x matrices); subject = the tensor, expected =
/// the tensor's count, found = the entry's
inline constexpr gguf::errc imatrix_mismatch = gguf::make_code(gguf::domains::quant, 6);
/// quantizing a tensor that is already quantized, without allow_requantize (its values would pass through a
/// lossy format twice); subject = the tensor, found = its type id
inline constexpr gguf::errc requantize_refused = gguf::make_code(gguf::domains::quant, 7);
/// quantizing a tensor holding a NaN or an infinity (llama-quantize's row validation fails on it after the
/// fact); subject = the tensor, index = the value's position
inline constexpr gguf::errc non_finite_weight = gguf::make_code(gguf::domains::quant, 8);
/// a tensor to convert whose rows are longer than a model quantization converts in bounded memory (a row is
/// quantized whole: its values and its quantized bytes are held at once); subject = the tensor, expected = the
/// cap (values), found = ne[0]
inline constexpr gguf::errc row_too_long = gguf::make_code(gguf::domains::quant, 9);
}  // namespace codes

/// type_not_convertible for tensor `t` (found = its type id, subject = its name): what every reader
/// of values (tensor, diff, verify) reports for a type with no conversion to f32.
gguf::error type_not_convertible_error(const gguf::tensor_info& t);

/// This library's codes as the loader's to_string and error::description see them.
const gguf::error_domain& errors_domain() noexcept;

namespace detail {
// Registered by every TU that includes this header (every TU that can name a code), before main: one
// atomic store each, with no static-library link order to get right. Internal linkage on purpose: an
// inline variable's guard is one symbol per process (STB_GNU_UNIQUE), so a second Python extension
// module holding its own copy of the loader's table would skip its registration.
[[maybe_unused]] static const bool error_domain_registered =
    (gguf::register_error_domain(errors_domain()), true);
}  // namespace detail

}  // namespace minfer::quant
