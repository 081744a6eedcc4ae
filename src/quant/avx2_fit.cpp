// ggml's make_qkx2_quants (quantize_k.cpp's fit_with_min, the search of q2_K, q4_K and q5_K) and
// make_qx_quants (qb::fit_symmetric, q6_K's) and make_q3_quants (qb::fit_q3, q3_K's) on 8 sub-blocks at once, one
// sub-block per AVX2 lane, or on 16 as two groups of 8 side by side (q6_K's and q3_K's whole super-block:
// two independent chains of sums hide each other's latency). Compiled with -mavx2 -mf16c -mbmi2; see
// kernels.hpp for the rules of this file.
//
// Why lanes and not a faster search: the bytes must be ggml's, and ggml's search is a chain of
// in-order float sums (21 to 37 trial scales, each summed over the sub-block's 16 or 32 values), so
// no sum may be reordered or split. The sub-blocks of a super-block are independent, though, so each
// lane runs the scalar function's exact sequence of operations on its own sub-block: the same adds,
// multiplies and divisions in the same order (no FMA: this file is built with -ffp-contract=off and
// without -mfma), each scalar branch a per-lane blend. That is 8 chains in the time of one.
//
// The branches, lane by lane, as the scalar code takes them (every comparison is ordered and quiet,
// so a NaN compares false as it does in C):
//   `if (x < min) min = x`      -> _mm256_min_ps(x, min) (x < min ? x : min, exactly; NaN x keeps min)
//   `if (x > max) max = x`      -> _mm256_max_ps(x, max)
//   `if (min > 0) min = 0`      -> blend on min > 0
//   `if (max == min) return`    -> computed anyway, the lane's results replaced at the end
//   `if (D > 0) ... if (cur_error < best_error)` -> one mask; the lane keeps its old fit elsewhere
//   `if (this_min > 0)`         -> blend
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "quantize_kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {

constexpr int lanes = 8;
constexpr int max_n = 32;
constexpr float group_max_eps = 1e-15f;  // ggml's GROUP_MAX_EPS (quantize_basic.hpp is not included here)

// ggml's nearest_int in every lane: 1.5 * 2^23 added, the low mantissa bits read back. The same bits
// as the scalar version for every input, NaN and Inf included (no conversion instruction involved).
__m256i nearest_int_x8(__m256 f) {
    const __m256i bits = _mm256_castps_si256(_mm256_add_ps(f, _mm256_set1_ps(12582912.f)));
    return _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
}

// The scalar clamp(v, 0, hi) (v < 0 ? 0 : (v > hi ? hi : v)), for hi >= 0.
__m256i clamp_x8(__m256i v, __m256i hi) { return _mm256_min_epi32(_mm256_max_epi32(v, _mm256_setzero_si256()), hi); }

// The low byte of each 32-bit lane (a static_cast<std::uint8_t> of each), in order, in the low 8
// bytes: 4 per 128-bit half by a byte shuffle, then the two halves' first dwords side by side.
__m128i low_bytes_x8(__m256i v) {
    const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                               0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i halves = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, low_bytes), halves));
}

// `use_mad ? fabs(diff) : diff * diff`
__m256 error_of_x8(__m256 diff, bool use_mad) {
    return use_mad ? _mm256_andnot_ps(_mm256_set1_ps(-0.0f), diff) : _mm256_mul_ps(diff, diff);
}

__m256 gt_x8(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }

// 8 rows of 8 floats (r[k] = row k) turned into 8 columns in place (r[j] = value j of each row).
[[gnu::always_inline]] inline void transpose8(__m256 (&r)[lanes]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// 8 sub-blocks of n values (sub-block k at x + k * n) transposed: xt[i] holds value i of each. Whole
// 8 x 8 tiles by shuffles (scalar stores read back as vectors would stall on store forwarding).
void transpose_in(const float* x, int n, float (*xt)[lanes]) {
    int i = 0;
    for (; i + lanes <= n; i += lanes) {
        __m256 r[lanes];
        for (int k = 0; k < lanes; ++k) r[k] = _mm256_loadu_ps(x + k * n + i);
        transpose8(r);
        for (int j = 0; j < lanes; ++j) _mm256_store_ps(xt[i + j], r[j]);
    }
    for (; i < n; ++i)
        for (int k = 0; k < lanes; ++k) xt[i][k] = x[k * n + i];
}

// `if (fabs(x) > amax) { amax = fabs(x); max = x; }` over each lane's values, from max = amax = 0
// (make_qx_quants and make_q3_quants): one mask for both.
void signed_max_x8(const float (*xt)[lanes], int n, __m256& max, __m256& amax) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    max = amax = _mm256_setzero_ps();
    for (int i = 0; i < n; ++i) {
        const __m256 xi = _mm256_load_ps(xt[i]);
        const __m256 ax = _mm256_andnot_ps(sign, xi);
        const __m256 larger = gt_x8(ax, amax);
        amax = _mm256_blendv_ps(amax, ax, larger);
        max = _mm256_blendv_ps(max, xi, larger);
    }
}

// best[i] = trial[i] in the lanes of `take` (a search's "keep this rounding").
void take_levels(std::int32_t (*best)[lanes], const std::int32_t (*trial)[lanes], int n, __m256 take) {
    const __m256i mask = _mm256_castps_si256(take);
    for (int i = 0; i < n; ++i) {
        auto* b = reinterpret_cast<__m256i*>(best[i]);
        const __m256i t = _mm256_load_si256(reinterpret_cast<const __m256i*>(trial[i]));
        _mm256_store_si256(b, _mm256_blendv_epi8(_mm256_load_si256(b), t, mask));
    }
}

// The signed searches' output: L[k * n + i] = level + nmax, or 0 in the lanes set in `zeroed` (their
// early exit). Whole 8 x 8 tiles transposed back and narrowed to bytes by shuffles.
void store_signed_levels(std::int8_t* L, const std::int32_t (*levels)[lanes], int n, int nmax, int zeroed) {
    const __m256i offset = _mm256_set1_epi32(nmax);
    int i = 0;
    for (; i + lanes <= n; i += lanes) {
        __m256 r[lanes];
        for (int j = 0; j < lanes; ++j)
            r[j] = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(levels[i + j])), offset));
        transpose8(r);
        for (int k = 0; k < lanes; ++k) {
            const __m128i row = ((zeroed >> k) & 1) != 0 ? _mm_setzero_si128() : low_bytes_x8(_mm256_castps_si256(r[k]));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(L + k * n + i), row);
        }
    }
    for (; i < n; ++i)
        for (int k = 0; k < lanes; ++k)
            L[k * n + i] = ((zeroed >> k) & 1) != 0 ? std::int8_t{0} : static_cast<std::int8_t>(levels[i][k] + nmax);
}

void fit_with_min_lanes(int n, int nmax, const float* x, const float* weights, std::uint8_t* L, float* the_min,
                        float* scale_out, float rmin, float rdelta, int nstep, bool use_mad) {
    // Transposed inputs: xt[i] holds value i of each of the 8 sub-blocks.
    alignas(32) float xt[max_n][lanes];
    alignas(32) float wt[max_n][lanes];
    transpose_in(x, n, xt);
    transpose_in(weights, n, wt);
    const __m256 zero = _mm256_setzero_ps();
    __m256 min = _mm256_load_ps(xt[0]);
    __m256 max = min;
    __m256 sum_w = _mm256_load_ps(wt[0]);
    __m256 sum_x = _mm256_mul_ps(sum_w, min);
    for (int i = 1; i < n; ++i) {
        const __m256 xi = _mm256_load_ps(xt[i]);
        const __m256 wi = _mm256_load_ps(wt[i]);
        min = _mm256_min_ps(xi, min);
        max = _mm256_max_ps(xi, max);
        sum_w = _mm256_add_ps(sum_w, wi);
        sum_x = _mm256_add_ps(sum_x, _mm256_mul_ps(wi, xi));
    }
    min = _mm256_blendv_ps(min, zero, gt_x8(min, zero));
    const __m256 min_of_data = min;  // what a constant sub-block returns (the scalar early exit)
    const __m256 constant = _mm256_cmp_ps(max, min, _CMP_EQ_OQ);
    const __m256i nmax_i = _mm256_set1_epi32(nmax);

    __m256 iscale = _mm256_div_ps(_mm256_set1_ps(static_cast<float>(nmax)), _mm256_sub_ps(max, min));
    __m256 scale = _mm256_div_ps(_mm256_set1_ps(1.f), iscale);
    alignas(32) std::int32_t best_l[max_n][lanes];
    alignas(32) std::int32_t trial_l[max_n][lanes];
    __m256 best_error = zero;
    for (int i = 0; i < n; ++i) {
        const __m256 xi = _mm256_load_ps(xt[i]);
        const __m256i l = clamp_x8(nearest_int_x8(_mm256_mul_ps(iscale, _mm256_sub_ps(xi, min))), nmax_i);
        _mm256_store_si256(reinterpret_cast<__m256i*>(best_l[i]), l);
        const __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(scale, _mm256_cvtepi32_ps(l)), min), xi);
        best_error = _mm256_add_ps(best_error, _mm256_mul_ps(_mm256_load_ps(wt[i]), error_of_x8(diff, use_mad)));
    }
    for (int is = 0; nstep >= 1 && is <= nstep; ++is) {  // nstep < 1: the first fit only, as the scalar one
        // The trial's numerator is the same in every lane: computed once, in the scalar order.
        const float numerator = rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax);
        // max - min with the best min so far: ggml's search moves its origin as it improves.
        iscale = _mm256_div_ps(_mm256_set1_ps(numerator), _mm256_sub_ps(max, min));
        __m256 sum_l = zero, sum_l2 = zero, sum_xl = zero;
        for (int i = 0; i < n; ++i) {
            const __m256 xi = _mm256_load_ps(xt[i]);
            const __m256i l = clamp_x8(nearest_int_x8(_mm256_mul_ps(iscale, _mm256_sub_ps(xi, min))), nmax_i);
            _mm256_store_si256(reinterpret_cast<__m256i*>(trial_l[i]), l);
            const __m256 fl = _mm256_cvtepi32_ps(l);
            const __m256 wl = _mm256_mul_ps(_mm256_load_ps(wt[i]), fl);
            sum_l = _mm256_add_ps(sum_l, wl);
            sum_l2 = _mm256_add_ps(sum_l2, _mm256_mul_ps(wl, fl));
            sum_xl = _mm256_add_ps(sum_xl, _mm256_mul_ps(wl, xi));
        }
        const __m256 D = _mm256_sub_ps(_mm256_mul_ps(sum_w, sum_l2), _mm256_mul_ps(sum_l, sum_l));
        const __m256 solvable = gt_x8(D, zero);
        if (_mm256_movemask_ps(solvable) == 0) continue;
        __m256 this_scale = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sum_w, sum_xl), _mm256_mul_ps(sum_x, sum_l)), D);
        __m256 this_min = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sum_l2, sum_x), _mm256_mul_ps(sum_l, sum_xl)), D);
        const __m256 min_positive = gt_x8(this_min, zero);
        this_min = _mm256_blendv_ps(this_min, zero, min_positive);
        this_scale = _mm256_blendv_ps(this_scale, _mm256_div_ps(sum_xl, sum_l2), min_positive);
        __m256 cur_error = zero;
        for (int i = 0; i < n; ++i) {
            const __m256 fl = _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(trial_l[i])));
            const __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(this_scale, fl), this_min), _mm256_load_ps(xt[i]));
            cur_error = _mm256_add_ps(cur_error, _mm256_mul_ps(_mm256_load_ps(wt[i]), error_of_x8(diff, use_mad)));
        }
        const __m256 better = _mm256_and_ps(solvable, _mm256_cmp_ps(cur_error, best_error, _CMP_LT_OQ));
        if (_mm256_movemask_ps(better) == 0) continue;
        take_levels(best_l, trial_l, n, better);
        best_error = _mm256_blendv_ps(best_error, cur_error, better);
        scale = _mm256_blendv_ps(scale, this_scale, better);
        min = _mm256_blendv_ps(min, this_min, better);
    }
    // A constant sub-block: levels 0, scale 0, min from the data (the scalar function's early exit).
    scale = _mm256_blendv_ps(scale, zero, constant);
    min = _mm256_blendv_ps(min, min_of_data, constant);
    const __m256 neg_min = _mm256_xor_ps(min, _mm256_set1_ps(-0.0f));
    _mm256_storeu_ps(the_min, neg_min);
    _mm256_storeu_ps(scale_out, scale);
    const int constant_lanes = _mm256_movemask_ps(constant);
    for (int k = 0; k < lanes; ++k) {
        const bool zeroed = ((constant_lanes >> k) & 1) != 0;
        for (int i = 0; i < n; ++i) L[k * n + i] = zeroed ? std::uint8_t{0} : static_cast<std::uint8_t>(best_l[i][k]);
    }
}

// ggml's make_qx_quants with rmse_type 1 (qb::fit_symmetric) in lanes, the same way: lane k of group
// g is the sub-block at x + (8 g + k) * n. G groups of 8 run side by side, so that each group's
// chains of sums (one add per value, 4 cycles each) overlap with the other's. `if (ax > amax) {
// amax = ax; max = x; }` is one mask for both; the early exit (amax < group_max_eps) is computed
// anyway and replaced at the end; `if (suml2 > 0 && sumlx * sumlx > best * suml2)` is one mask.
//
// Two shortcuts, each exact:
// - A lane keeps the inverse scale of its best trial, not the trial's levels: ggml writes L with
//   nearest_int(iscale * x) at that same iscale, so the levels are computed once at the end, from the
//   same product.
// - When every value is finite, a trial rounds in floats: (v + 1.5 * 2^23) - 1.5 * 2^23 is the
//   integer nearest v (ties to even), as nearest_int's bits are, for |v| < 2^22; here |v| =
//   |iscale * x| <= (nmax + 0.9) * |x| / amax (plus rounding), and amax >= group_max_eps in every lane
//   that counts, so v is at most 33. The clamp to [-nmax, nmax - 1] is then a float min/max: no
//   conversion to and from integers. A lane that is negligible may compute NaNs (x / 0): its results
//   are replaced anyway. With a NaN or an Inf among the values the search rounds as nearest_int does.
template <std::size_t G, bool Finite>
void symmetric_search(int n, int nmax, const float (*xt)[max_n][lanes], const float (*wt)[max_n][lanes],
                      const float (*wxt)[max_n][lanes], const __m256 (&max)[G], __m256 (&best_iscale)[G],
                      __m256 (&scale)[G]) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 magic = _mm256_set1_ps(12582912.f);
    const __m256 lo_f = _mm256_set1_ps(static_cast<float>(-nmax)), hi_f = _mm256_set1_ps(static_cast<float>(nmax - 1));
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    // float(clamp(nearest_int(iscale * x), -nmax, nmax - 1))
    auto level = [&](__m256 iscale, __m256 xi) {
        const __m256 v = _mm256_mul_ps(iscale, xi);
        if constexpr (Finite) {
            return _mm256_min_ps(_mm256_max_ps(_mm256_sub_ps(_mm256_add_ps(v, magic), magic), lo_f), hi_f);
        } else {
            return _mm256_cvtepi32_ps(_mm256_min_epi32(_mm256_max_epi32(nearest_int_x8(v), lo), hi));
        }
    };
    // One rounding at iscale: sumlx += (w*x)*l and suml2 += (w*l)*l in value order, per lane.
    __m256 iscale[G], sumlx[G], suml2[G], best[G];
    // (The sums are locals and the group loop unrolled, so that they stay in registers.)
    auto round_and_sum = [&] {
        __m256 lx[G], l2[G], at[G];
#pragma GCC unroll 2
        for (std::size_t g = 0; g < G; ++g) {
            lx[g] = l2[g] = zero;
            at[g] = iscale[g];
        }
        for (int i = 0; i < n; ++i) {
#pragma GCC unroll 2
            for (std::size_t g = 0; g < G; ++g) {
                const __m256 fl = level(at[g], _mm256_load_ps(xt[g][i]));
                lx[g] = _mm256_add_ps(lx[g], _mm256_mul_ps(_mm256_load_ps(wxt[g][i]), fl));
                l2[g] = _mm256_add_ps(l2[g], _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(wt[g][i]), fl), fl));
            }
        }
#pragma GCC unroll 2
        for (std::size_t g = 0; g < G; ++g) {
            sumlx[g] = lx[g];
            suml2[g] = l2[g];
        }
    };
    for (std::size_t g = 0; g < G; ++g) best_iscale[g] = iscale[g] = _mm256_div_ps(_mm256_set1_ps(static_cast<float>(-nmax)), max[g]);
    round_and_sum();
    for (std::size_t g = 0; g < G; ++g) {
        // suml2 != 0 ? sumlx / suml2 : 0 (unordered compare: a NaN suml2 is "!= 0")
        scale[g] = _mm256_and_ps(_mm256_cmp_ps(suml2[g], zero, _CMP_NEQ_UQ), _mm256_div_ps(sumlx[g], suml2[g]));
        best[g] = _mm256_mul_ps(scale[g], sumlx[g]);
    }
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const __m256 numerator = _mm256_set1_ps(-(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)));
        for (std::size_t g = 0; g < G; ++g) iscale[g] = _mm256_div_ps(numerator, max[g]);
        round_and_sum();
        for (std::size_t g = 0; g < G; ++g) {
            const __m256 better = _mm256_and_ps(gt_x8(suml2[g], zero),
                                                gt_x8(_mm256_mul_ps(sumlx[g], sumlx[g]), _mm256_mul_ps(best[g], suml2[g])));
            if (_mm256_movemask_ps(better) == 0) continue;
            const __m256 this_scale = _mm256_div_ps(sumlx[g], suml2[g]);
            scale[g] = _mm256_blendv_ps(scale[g], this_scale, better);
            best[g] = _mm256_blendv_ps(best[g], _mm256_mul_ps(this_scale, sumlx[g]), better);
            best_iscale[g] = _mm256_blendv_ps(best_iscale[g], iscale[g], better);
        }
    }
}

template <std::size_t G>
void fit_symmetric_groups(int n, int nmax, const float* x, std::int8_t* L, const float* weights, float* scale_out) {
    alignas(32) float xt[G][max_n][lanes];
    alignas(32) float wt[G][max_n][lanes];
    alignas(32) float wxt[G][max_n][lanes];
    const __m256 zero = _mm256_setzero_ps();
    __m256 max[G], amax[G], negligible[G];
    __m256 finite = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (std::size_t g = 0; g < G; ++g) {
        transpose_in(x + static_cast<std::ptrdiff_t>(g) * lanes * n, n, xt[g]);
        if (weights != nullptr) {
            transpose_in(weights + static_cast<std::ptrdiff_t>(g) * lanes * n, n, wt[g]);
        } else {
            for (int i = 0; i < n; ++i)  // ggml's weights: x*x
                _mm256_store_ps(wt[g][i], _mm256_mul_ps(_mm256_load_ps(xt[g][i]), _mm256_load_ps(xt[g][i])));
        }
        for (int i = 0; i < n; ++i) {
            const __m256 xi = _mm256_load_ps(xt[g][i]);
            _mm256_store_ps(wxt[g][i], _mm256_mul_ps(_mm256_load_ps(wt[g][i]), xi));  // ggml's w*x[i]*l is (w*x)*l
            finite = _mm256_and_ps(finite, _mm256_cmp_ps(_mm256_sub_ps(xi, xi), zero, _CMP_EQ_OQ));  // NaN, Inf: false
        }
        signed_max_x8(xt[g], n, max[g], amax[g]);
        negligible[g] = _mm256_cmp_ps(amax[g], _mm256_set1_ps(group_max_eps), _CMP_LT_OQ);
    }
    __m256 best_iscale[G], scale[G];
    if (_mm256_movemask_ps(finite) == 0xff) {
        symmetric_search<G, true>(n, nmax, xt, wt, wxt, max, best_iscale, scale);
    } else {
        symmetric_search<G, false>(n, nmax, xt, wt, wxt, max, best_iscale, scale);
    }
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    alignas(32) std::int32_t out[max_n][lanes];
    for (std::size_t g = 0; g < G; ++g) {
        for (int i = 0; i < n; ++i) {
            const __m256i l = nearest_int_x8(_mm256_mul_ps(best_iscale[g], _mm256_load_ps(xt[g][i])));
            _mm256_store_si256(reinterpret_cast<__m256i*>(out[i]), _mm256_min_epi32(_mm256_max_epi32(l, lo), hi));
        }
        _mm256_storeu_ps(scale_out + static_cast<std::ptrdiff_t>(g) * lanes, _mm256_blendv_ps(scale[g], zero, negligible[g]));  // the early exit: scale 0
        store_signed_levels(L + static_cast<std::ptrdiff_t>(g) * lanes * n, out, n, nmax, _mm256_movemask_ps(negligible[g]));  // ... and levels 0
    }
}

// ggml's make_q3_quants with do_rmse (quantize_k.cpp's fit_q3, q3_K's search) in lanes, G groups of 8
// sub-blocks side by side as above. Its refinement walks the values in order and may move one level
// at a time, each move changing the sums the next value sees: per lane that is still the same
// sequence, with the move a masked update (a lane whose slx is not positive, or whose level did not
// move, takes nothing; computing the rest for it anyway changes nothing). A lane that changed
// nothing in a pass would change nothing in the next (its state is the same), so the passes run
// until no lane changed (ggml's `if (!n_changed) break` per lane) or 5 passes.
template <std::size_t G>
void fit_q3_groups(int n, int nmax, const float* x, std::int8_t* L, float* scale_out) {
    alignas(32) float xt[G][max_n][lanes];
    alignas(32) float wt[G][max_n][lanes];
    alignas(32) float wxt[G][max_n][lanes];
    const __m256 zero = _mm256_setzero_ps();
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    auto clamped = [&](__m256i l) { return _mm256_min_epi32(_mm256_max_epi32(l, lo), hi); };
    __m256 negligible[G], sumlx[G], suml2[G];
    __m256i level[G][max_n];
    for (std::size_t g = 0; g < G; ++g) {
        transpose_in(x + static_cast<std::ptrdiff_t>(g) * lanes * n, n, xt[g]);
        __m256 max, amax;
        signed_max_x8(xt[g], n, max, amax);
        negligible[g] = _mm256_cmp_ps(amax, _mm256_set1_ps(group_max_eps), _CMP_LT_OQ);
        const __m256 iscale = _mm256_div_ps(_mm256_set1_ps(static_cast<float>(-nmax)), max);
        sumlx[g] = suml2[g] = zero;
        for (int i = 0; i < n; ++i) {
            const __m256 xi = _mm256_load_ps(xt[g][i]);
            const __m256 w = _mm256_mul_ps(xi, xi);
            const __m256 wx = _mm256_mul_ps(w, xi);
            _mm256_store_ps(wt[g][i], w);
            _mm256_store_ps(wxt[g][i], wx);
            level[g][i] = clamped(nearest_int_x8(_mm256_mul_ps(iscale, xi)));
            const __m256 fl = _mm256_cvtepi32_ps(level[g][i]);
            sumlx[g] = _mm256_add_ps(sumlx[g], _mm256_mul_ps(wx, fl));
            suml2[g] = _mm256_add_ps(suml2[g], _mm256_mul_ps(_mm256_mul_ps(w, fl), fl));
        }
    }
    for (int itry = 0; itry < 5; ++itry) {
        __m256 changed = zero;
        for (int i = 0; i < n; ++i) {
            __m256 slx[G], positive[G], li[G];
            int any = 0;
#pragma GCC unroll 2
            for (std::size_t g = 0; g < G; ++g) {
                li[g] = _mm256_cvtepi32_ps(level[g][i]);
                slx[g] = _mm256_sub_ps(sumlx[g], _mm256_mul_ps(_mm256_load_ps(wxt[g][i]), li[g]));
                positive[g] = gt_x8(slx[g], zero);
                any |= _mm256_movemask_ps(positive[g]);
            }
            if (any == 0) continue;
            __m256 sl2[G], moved[G];
            __m256i new_l[G];
#pragma GCC unroll 2
            for (std::size_t g = 0; g < G; ++g) {
                const __m256 xi = _mm256_load_ps(xt[g][i]);
                sl2[g] = _mm256_sub_ps(suml2[g], _mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(wt[g][i]), li[g]), li[g]));
                new_l[g] = clamped(nearest_int_x8(_mm256_div_ps(_mm256_mul_ps(xi, sl2[g]), slx[g])));
                moved[g] = _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(new_l[g], level[g][i])), positive[g]);
            }
            int moved_any = 0;
#pragma GCC unroll 2
            for (std::size_t g = 0; g < G; ++g) moved_any |= _mm256_movemask_ps(moved[g]);
            if (moved_any == 0) continue;  // most values keep their level: skip the rest
#pragma GCC unroll 2
            for (std::size_t g = 0; g < G; ++g) {
                const __m256 w = _mm256_load_ps(wt[g][i]);
                const __m256 nl = _mm256_cvtepi32_ps(new_l[g]);
                const __m256 slx_new = _mm256_add_ps(slx[g], _mm256_mul_ps(_mm256_load_ps(wxt[g][i]), nl));
                const __m256 sl2_new = _mm256_add_ps(sl2[g], _mm256_mul_ps(_mm256_mul_ps(w, nl), nl));
                const __m256 better = gt_x8(_mm256_mul_ps(_mm256_mul_ps(slx_new, slx_new), suml2[g]),
                                            _mm256_mul_ps(_mm256_mul_ps(sumlx[g], sumlx[g]), sl2_new));
                const __m256 take = _mm256_and_ps(moved[g], _mm256_and_ps(gt_x8(sl2_new, zero), better));
                level[g][i] = _mm256_blendv_epi8(level[g][i], new_l[g], _mm256_castps_si256(take));
                sumlx[g] = _mm256_blendv_ps(sumlx[g], slx_new, take);
                suml2[g] = _mm256_blendv_ps(suml2[g], sl2_new, take);
                changed = _mm256_or_ps(changed, take);
            }
        }
        if (_mm256_movemask_ps(changed) == 0) break;
    }
    alignas(32) std::int32_t out[max_n][lanes];
    for (std::size_t g = 0; g < G; ++g) {
        // suml2 > 0 ? sumlx / suml2 : 0, and the early exit (scale 0, levels 0)
        __m256 scale = _mm256_and_ps(gt_x8(suml2[g], zero), _mm256_div_ps(sumlx[g], suml2[g]));
        _mm256_storeu_ps(scale_out + static_cast<std::ptrdiff_t>(g) * lanes, _mm256_blendv_ps(scale, zero, negligible[g]));
        for (int i = 0; i < n; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(out[i]), level[g][i]);
        store_signed_levels(L + static_cast<std::ptrdiff_t>(g) * lanes * n, out, n, nmax, _mm256_movemask_ps(negligible[g]));
    }
}

// The k-quants' last step, 8 values per instruction: each value divided by the block's final scale
// (_mm256_div_ps is the IEEE division the scalar `/` is), rounded by nearest_int's bit trick, clamped
// and offset exactly as the scalar loop does, value by value (no value depends on another).
void requantize_lanes(const float* x, int n, float d, bool with_add, float add, int lo, int hi, int offset,
                      std::uint8_t* L) {
    const __m256 vd = _mm256_set1_ps(d), va = _mm256_set1_ps(add);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi), voff = _mm256_set1_epi32(offset);
    for (int i = 0; i < n; i += lanes) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (with_add) v = _mm256_add_ps(v, va);
        __m256i l = nearest_int_x8(_mm256_div_ps(v, vd));
        l = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(l, vlo), vhi), voff);  // clamp(l, lo, hi) + offset
        _mm_storel_epi64(reinterpret_cast<__m128i*>(L + i), low_bytes_x8(l));  // the uint8_t cast of each
    }
}

// q3_K's split of 256 levels into their high bit (hmask: value i + 32 b is bit b of byte i) and low
// bits: ggml's `if (L[j] > 3) { set the bit; L[j] -= 4; }`, 32 values per instruction (a signed byte
// comparison, as the scalar one on int8_t).
void q3_split_high_lanes(const std::int8_t* L, std::uint8_t* U, std::uint8_t* hmask) {
    __m256i mask = _mm256_setzero_si256();
    const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
    for (int b = 0; b < 8; ++b) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(L + 32 * b));
        const __m256i high = _mm256_cmpgt_epi8(v, three);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(U + 32 * b), _mm256_sub_epi8(v, _mm256_and_si256(high, four)));
        mask = _mm256_or_si256(mask, _mm256_and_si256(high, _mm256_set1_epi8(static_cast<char>(1 << b))));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hmask), mask);
}

}  // namespace

q3_split_high_fn avx2_q3_split_high() noexcept { return q3_split_high_lanes; }
requantize_fn avx2_requantize() noexcept { return requantize_lanes; }
fit_with_min_x8_fn avx2_fit_with_min_x8() noexcept { return fit_with_min_lanes; }
fit_q3_x8_fn avx2_fit_q3_x8() noexcept { return fit_q3_groups<1>; }
fit_q3_x8_fn avx2_fit_q3_x16() noexcept { return fit_q3_groups<2>; }
fit_symmetric_x8_fn avx2_fit_symmetric_x8() noexcept { return fit_symmetric_groups<1>; }
fit_symmetric_x8_fn avx2_fit_symmetric_x16() noexcept { return fit_symmetric_groups<2>; }

#else
q3_split_high_fn avx2_q3_split_high() noexcept { return nullptr; }
requantize_fn avx2_requantize() noexcept { return nullptr; }
fit_with_min_x8_fn avx2_fit_with_min_x8() noexcept { return nullptr; }
fit_q3_x8_fn avx2_fit_q3_x8() noexcept { return nullptr; }
fit_q3_x8_fn avx2_fit_q3_x16() noexcept { return nullptr; }
fit_symmetric_x8_fn avx2_fit_symmetric_x8() noexcept { return nullptr; }
fit_symmetric_x8_fn avx2_fit_symmetric_x16() noexcept { return nullptr; }
#endif

}  // namespace minfer::quant::detail
