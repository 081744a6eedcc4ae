#pragma once
// minfer::quant, the other direction: f32 values into ggml's block formats, byte for byte what
// ggml's ggml_quantize_chunk writes for the same input and importance weights (quantize_row_*_ref
// when there are none). Rows are independent, so the bytes do not depend on how rows are shared
// between threads. Layouts and algorithms: docs/QUANT.md.
//
// Errors are data (minfer::gguf::error), never a crash: sizes are checked before a byte is written,
// and an input on which ggml would assert (a grid search that finds no point, a type that needs
// importance weights given none) is an error here.
//
//     std::vector<std::byte> out(minfer::quant::bytes_for(type, values.size()));
//     auto r = minfer::quant::quantize_rows(type, values, n_per_row, imatrix, out);
#include <cstddef>
#include <cstdint>
#include <span>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::quant {

using gguf::result;
using gguf::tensor_type;

/// Whether quantize_rows() can produce `type`: every type ggml_quantize_chunk accepts (f16, bf16,
/// f32 too).
bool can_quantize(tensor_type type) noexcept;

/// Whether ggml refuses `type` without importance weights (ggml_quantize_requires_imatrix).
bool requires_importance(tensor_type type) noexcept;

/// Quantize src.size() / n_per_row rows of n_per_row values each into `dst` (exactly
/// bytes_for(type, src.size()) bytes), as ggml_quantize_chunk(type, src, dst, 0, rows, n_per_row,
/// imatrix) does. `importance` is empty or holds n_per_row weights (one per column, shared by every
/// row). Errors: type_not_quantizable, not_block_multiple (n_per_row not a whole number of blocks),
/// buffer_size_mismatch (src not whole rows, dst or importance of the wrong size),
/// importance_required, quantize_failed (an input on which ggml asserts; index = the row).
result<void> quantize_rows(tensor_type type, std::span<const float> src, std::int64_t n_per_row,
                           std::span<const float> importance, std::span<std::byte> dst) noexcept;

/// quantize_rows() on up to `threads` threads (0: one per hardware thread), each taking a
/// contiguous run of rows. Same bytes, same errors (the first failing row's).
result<void> quantize_rows_parallel(tensor_type type, std::span<const float> src, std::int64_t n_per_row,
                                    std::span<const float> importance, std::span<std::byte> dst,
                                    unsigned threads = 0) noexcept;

}  // namespace minfer::quant
