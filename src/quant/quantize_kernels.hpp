#pragma once
// The row quantizers behind quantize.hpp (internal). Two families, each in its own file:
// quantize_basic.cpp (f16, bf16, q4_0 … q8_0, the k-quants, iq4_nl, iq4_xs, tq1_0, tq2_0, mxfp4)
// and quantize_iq.cpp (the codebook types: iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m,
// with their neighbour tables). quantize.cpp checks sizes and picks one.
//
// A quantizer writes `n_rows` rows of `n_per_row` values (a whole number of blocks, checked before)
// from `src` to `dst` (n_rows * row bytes). `importance` is nullptr or n_per_row weights. It returns
// -1 when every row is done, or the index of the first row on which ggml would assert (nothing
// is promised about dst then). Compiled with -ffp-contract=off, as ggml's reference code is built
// without FMA contraction.
#include <cstdint>

#include "minfer/gguf/types.hpp"

namespace minfer::quant::detail {

using row_quantizer = std::int64_t (*)(const float* src, std::uint8_t* dst, std::int64_t n_rows,
                                        std::int64_t n_per_row, const float* importance);

/// quantize_basic.cpp: the quantizer of `type`, or nullptr if it is not of that family.
row_quantizer basic_quantizer(gguf::tensor_type type) noexcept;
/// quantize_iq.cpp: the quantizer of a codebook type, or nullptr.
row_quantizer iq_quantizer(gguf::tensor_type type) noexcept;

}  // namespace minfer::quant::detail
