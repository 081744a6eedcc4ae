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
/// Its AVX2 version (avx2_fit.cpp), nullptr when this build has none; the _x16 one takes 16
/// consecutive sub-blocks (x, weights and L 16 * n values, scale 16), two groups of 8 side by side.
fit_symmetric_x8_fn avx2_fit_symmetric_x8() noexcept;
fit_symmetric_x8_fn avx2_fit_symmetric_x16() noexcept;
/// ggml's make_q3_quants with do_rmse (qb::fit_q3) on 8 consecutive sub-blocks of n values
/// (1 <= n <= 32): L receives 8 * n levels (+ nmax), scale 8 values.
using fit_q3_x8_fn = void (*)(int n, int nmax, const float* x, std::int8_t* L, float* scale);
/// Its AVX2 versions (avx2_fit.cpp) on 8 and on 16 sub-blocks, nullptr when this build has none.
fit_q3_x8_fn avx2_fit_q3_x8() noexcept;
fit_q3_x8_fn avx2_fit_q3_x16() noexcept;

/// ggml's quantize_row_iq4_nl_impl's 16 scale tries on one 32-value block (the first guess and
/// itry = -7..7): for each inverse scale ids[t], q_j = the iq4 level nearest ids[t] * x[j] (ggml's
/// best_index_int8) and sumqx[t] = Σ (w_j * q_j) * x_j, sumq2[t] = Σ (w_j * q_j) * q_j in j order.
using iq4_trial_sums_fn = void (*)(const float* x, const float* w, const float* ids, float* sumqx, float* sumq2);
/// L[j] = index of the iq4 level nearest id * x[j] (best_index_int8), j < n, n a multiple of 8.
using iq4_levels_fn = void (*)(const float* x, int n, float id, std::uint8_t* L);
/// The AVX2 versions (avx2_iq_search.cpp: tries / values in lanes), nullptr when this build has none.
iq4_trial_sums_fn avx2_iq4_trial_sums() noexcept;
iq4_levels_fn avx2_iq4_levels() noexcept;
/// ggml's iq2_find_best_neighbour / iq3_find_best_neighbour over a neighbour list (count first, as
/// iq_lattice::neighbours holds it, readable 16 entries past its end) with the points' coordinates
/// packed 4 bits each (iq_lattice::packed): the grid index of the first candidate with the smallest
/// Σ (w_i * diff_i) * diff_i, diff_i = scale * q_i - xval_i, or -1 when none is below FLT_MAX.
using neighbour_search_fn = int (*)(const std::uint16_t* list, const std::uint32_t* packed, const float* xval,
                                    const float* weight, float scale);
/// The AVX2 version for points of `dim` (4 or 8) coordinates (avx2_iq_search.cpp: 8 candidates in
/// lanes), nullptr for another dim or when this build has none.
neighbour_search_fn avx2_best_neighbour(int dim) noexcept;
/// ggml's iq1_find_best_neighbour2 over the neighbour list of an off-grid point (iq1_s / iq1_m: 8
/// coordinates 2l + 1 standing for levels[l], l < 3): as neighbour_search_fn with q_i = levels[l_i].
/// -1 when no distance is below FLT_MAX (the caller then runs ggml's scan of the whole grid).
using iq1_neighbour_fn = int (*)(const std::uint16_t* list, const std::uint32_t* packed, const float* xval,
                                 const float* weight, float scale, const float* levels);
/// The scalar version (quantize_iq1.cpp) and the AVX2 one (avx2_iq_search.cpp), nullptr without.
int scalar_iq1_neighbour(const std::uint16_t* list, const std::uint32_t* packed, const float* xval, const float* weight,
                         float scale, const float* levels);
iq1_neighbour_fn avx2_iq1_neighbour() noexcept;
/// The codebook types' rounding of a group's n values (16 or 32) to lattice coordinates at each of
/// its trial scales, value-major, with the keys of the rounded points: for trials t < 32 (ids[t],
/// all 32 read) L[32 * i + t] = clamp(nearest_int(0.5f * (ids[t] * x[i] - 1)), 0, lmax) with
/// ggml's nearest_int, and keys[32 * k + t] = Σ_c L[32 * (dim * k + c) + t] << (bits * c), wrapped
/// to 16 bits, for the n / dim points k (dim 4 with bits 3, or dim 8 with bits 2).
using trials_round_fn = void (*)(const float* x, int n, const float* ids, int lmax, int dim, std::int8_t* L,
                                 std::uint32_t* keys);
/// Its AVX2 version (avx2_iq_search.cpp: one trial per lane), nullptr when this build has none.
trials_round_fn avx2_trials_round() noexcept;
/// The scalar version (quantize_iq.cpp).
void scalar_trials_round(const float* x, int n, const float* ids, int lmax, int dim, std::int8_t* L, std::uint32_t* keys);

/// The codebook types' trial scales' sums (iq2_*, iq3_*: the weighted sums after each trial's
/// rounding and neighbour search): for trials t < trials (at most 32) over values i < n in order,
/// with q = 2 * L[32 * i + t] + 1, sumqx[t] = Σ (w_i * x_i) * q and sumq2[t] = Σ (w_i * q) * q,
/// each trial ggml's own chain. sumqx and sumq2 hold 32 entries (the lanes write past `trials`).
using codebook_sums_fn = void (*)(int n, int trials, const float* weight, const float* xval, const std::int8_t* L,
                                  float* sumqx, float* sumq2);
/// The scalar version (quantize_iq.cpp: trial after trial) and the AVX2 one (avx2_iq_search.cpp:
/// one trial per lane), nullptr when this build has none.
void scalar_codebook_sums(int n, int trials, const float* weight, const float* xval, const std::int8_t* L, float* sumqx,
                          float* sumq2);
codebook_sums_fn avx2_codebook_sums() noexcept;

/// iq1_s / iq1_m's split search (ggml's quantize_row_iq1_s_impl / quantize_row_iq1_m_impl): over
/// the sorted values' prefix sums of w·x (sumx) and w (sumw), every pair of cut points i1 <= i2 and
/// every shift, the candidate with the best weighted least-squares score, the first one on ties.
/// iq1_s: 33 prefix sums of a group of 32; shift +1 (levels shifted up) or -1. iq1_m: a group of 16
/// in two halves, sumx / sumw hold 2 x 17 prefix sums (half h at 17 * h, a value of the other half
/// carries the sum on); shift 0..3 (bit 1 the first half's shift, bit 0 the second's, set = down).
/// best.i1 < 0 when no candidate qualified (best.scale is then `max`).
struct iq1_split {
    float scale = 0;
    int i1 = -1, i2 = -1, shift = 0;
};
using iq1_split_fn = void (*)(const float* sumx, const float* sumw, float max, iq1_split& best);
/// The scalar versions (quantize_iq1.cpp: ggml's loops).
void scalar_iq1s_split(const float* sumx, const float* sumw, float max, iq1_split& best);
void scalar_iq1m_split(const float* sumx, const float* sumw, float max, iq1_split& best);
/// The AVX2 versions (avx2_iq1_search.cpp: 8 values of i2 per step in lanes, the choice made in
/// ggml's order), nullptr when this build has none.
iq1_split_fn avx2_iq1s_split() noexcept;
iq1_split_fn avx2_iq1m_split() noexcept;

/// ggml's last step of q2_K … q6_K: L[i] = clamp(nearest_int(x[i] / d), lo, hi) + offset, or with
/// `with_add` clamp(nearest_int((x[i] + add) / d), lo, hi) + offset (the minimum of q2_K, q4_K, q5_K),
/// for n values (a multiple of 8). The same bits as the scalar loop value by value.
using requantize_fn = void (*)(const float* x, int n, float d, bool with_add, float add, int lo, int hi, int offset,
                               std::uint8_t* L);
/// Its AVX2 version (avx2_fit.cpp, 8 values at a time), nullptr when this build has none.
requantize_fn avx2_requantize() noexcept;

/// q3_K's split of 256 levels (int8) into the high-bit mask (32 bytes: value i + 32 b is bit b of byte
/// i) and the low levels U (ggml: `if (L[j] > 3) { hmask bit; L[j] -= 4; }`).
using q3_split_high_fn = void (*)(const std::int8_t* L, std::uint8_t* U, std::uint8_t* hmask);
/// Its AVX2 version (avx2_fit.cpp), nullptr when this build has none.
q3_split_high_fn avx2_q3_split_high() noexcept;

/// iq1_s / iq1_m's sort of a group's values (ggml's qsort: glibc's merge sort, comparing values
/// only): order[j] = the index of the j-th value, n = 16 or 32. The scalar version (quantize_iq1.cpp)
/// is that merge sort, comparison for comparison, and always returns true.
using iq1_order_fn = bool (*)(const float* x, int n, std::uint8_t* order);
bool scalar_iq1_order(const float* x, int n, std::uint8_t* order);
/// The AVX2 version (avx2_iq1_search.cpp: each value's rank counted in lanes), which gives the merge
/// sort's order when no value is NaN and returns false (order untouched) when one is: where NaN
/// compares equal to everything, the order is the merge's own. nullptr when this build has none.
iq1_order_fn avx2_iq1_order() noexcept;

/// quantize_basic.cpp: the quantizer of `type`, or nullptr if it is not of that family.
row_quantizer basic_quantizer(gguf::tensor_type type) noexcept;
/// quantize_iq.cpp: the quantizer of a codebook type, or nullptr.
row_quantizer iq_quantizer(gguf::tensor_type type) noexcept;

}  // namespace minfer::quant::detail
