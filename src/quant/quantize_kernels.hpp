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

/// ggml's make_qkx2_quants (qb::fit_with_min) on 8 consecutive sub-blocks of n values (1 <= n <= 32):
/// x and weights hold 8 * n values, sub-block k at k * n; L receives 8 * n levels, the_min and scale
/// 8 values. The same results as 8 calls of fit_with_min, bit for bit (avx2_fit.cpp says how).
using fit_with_min_x8_fn = void (*)(int n, int nmax, const float* x, const float* weights, std::uint8_t* L,
                                    float* the_min, float* scale, float rmin, float rdelta, int nstep, bool use_mad);
/// The AVX2 version (avx2_fit.cpp, one sub-block per lane), nullptr when this build has none (not
/// x86-64). Callable only when the CPU has AVX2: the k-quants use it when isa::avx2 is active.
fit_with_min_x8_fn avx2_fit_with_min_x8() noexcept;
/// ggml's make_qx_quants with rmse_type 1 (qb::fit_symmetric) on 8 consecutive sub-blocks of n values
/// (1 <= n <= 32; weights 8 * n values or nullptr for x*x): L receives 8 * n levels, scale 8 values.
using fit_symmetric_x8_fn = void (*)(int n, int nmax, const float* x, std::int8_t* L, const float* weights,
                                     float* scale);
/// Its AVX2 version (avx2_fit.cpp), nullptr when this build has none.
fit_symmetric_x8_fn avx2_fit_symmetric_x8() noexcept;
/// ggml's make_q3_quants with do_rmse (qb::fit_q3) on 8 consecutive sub-blocks of n values
/// (1 <= n <= 32): L receives 8 * n levels (+ nmax), scale 8 values.
using fit_q3_x8_fn = void (*)(int n, int nmax, const float* x, std::int8_t* L, float* scale);
/// Its AVX2 version (avx2_fit.cpp), nullptr when this build has none.
fit_q3_x8_fn avx2_fit_q3_x8() noexcept;

/// quantize_basic.cpp: the quantizer of `type`, or nullptr if it is not of that family.
row_quantizer basic_quantizer(gguf::tensor_type type) noexcept;
/// quantize_iq.cpp: the quantizer of a codebook type, or nullptr.
row_quantizer iq_quantizer(gguf::tensor_type type) noexcept;

}  // namespace minfer::quant::detail
