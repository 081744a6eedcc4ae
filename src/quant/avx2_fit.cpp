// ggml's make_qkx2_quants (quantize_k.cpp's fit_with_min, the search of q2_K, q4_K and q5_K) and
// make_qx_quants (qb::fit_symmetric, q6_K's) and make_q3_quants (qb::fit_q3, q3_K's) on 8 sub-blocks at once, one sub-block per AVX2 lane (compiled with -mavx2 -mf16c -mbmi2; see kernels.hpp for the rules of this file).
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

// `use_mad ? fabs(diff) : diff * diff`
__m256 error_of_x8(__m256 diff, bool use_mad) {
    return use_mad ? _mm256_andnot_ps(_mm256_set1_ps(-0.0f), diff) : _mm256_mul_ps(diff, diff);
}

__m256 gt_x8(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }

// 8 sub-blocks of n values (sub-block k at x + k * n) transposed: xt[i] holds value i of each.
void transpose_in(const float* x, int n, float (*xt)[lanes]) {
    for (int k = 0; k < lanes; ++k)
        for (int i = 0; i < n; ++i) xt[i][k] = x[k * n + i];
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
// early exit).
void store_signed_levels(std::int8_t* L, const std::int32_t (*levels)[lanes], int n, int nmax, int zeroed) {
    for (int k = 0; k < lanes; ++k) {
        const bool zero = ((zeroed >> k) & 1) != 0;
        for (int i = 0; i < n; ++i) L[k * n + i] = zero ? std::int8_t{0} : static_cast<std::int8_t>(levels[i][k] + nmax);
    }
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

// ggml's make_qx_quants with rmse_type 1 (qb::fit_symmetric) in lanes, the same way: lane k is the
// sub-block at x + k * n. `if (ax > amax) { amax = ax; max = x; }` is one mask for both; the early
// exit (amax < group_max_eps) is computed anyway and replaced at the end; `if (suml2 > 0 && sumlx *
// sumlx > best * suml2)` is one mask.
void fit_symmetric_lanes(int n, int nmax, const float* x, std::int8_t* L, const float* weights, float* scale_out) {
    alignas(32) float xt[max_n][lanes];
    alignas(32) float wt[max_n][lanes];
    transpose_in(x, n, xt);
    if (weights != nullptr) {
        transpose_in(weights, n, wt);
    } else {
        for (int i = 0; i < n; ++i)  // ggml's weights: x*x
            _mm256_store_ps(wt[i], _mm256_mul_ps(_mm256_load_ps(xt[i]), _mm256_load_ps(xt[i])));
    }
    const __m256 zero = _mm256_setzero_ps();
    __m256 max, amax;
    signed_max_x8(xt, n, max, amax);
    const __m256 negligible = _mm256_cmp_ps(amax, _mm256_set1_ps(group_max_eps), _CMP_LT_OQ);
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    // clamp(nearest_int(iscale * x), -nmax, nmax - 1)
    auto level = [&](__m256 iscale, __m256 xi) {
        return _mm256_min_epi32(_mm256_max_epi32(nearest_int_x8(_mm256_mul_ps(iscale, xi)), lo), hi);
    };
    alignas(32) std::int32_t best_l[max_n][lanes];
    alignas(32) std::int32_t trial_l[max_n][lanes];
    // One rounding at iscale: its levels into `levels`, sumlx += w*x*l and suml2 += w*l*l in value order.
    auto round_and_sum = [&](__m256 iscale, std::int32_t (*levels)[lanes], __m256& sumlx, __m256& suml2) {
        sumlx = suml2 = zero;
        for (int i = 0; i < n; ++i) {
            const __m256 xi = _mm256_load_ps(xt[i]);
            const __m256i l = level(iscale, xi);
            _mm256_store_si256(reinterpret_cast<__m256i*>(levels[i]), l);
            const __m256 fl = _mm256_cvtepi32_ps(l);
            const __m256 w = _mm256_load_ps(wt[i]);
            sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w, xi), fl));
            suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, fl), fl));
        }
    };
    __m256 sumlx, suml2;
    round_and_sum(_mm256_div_ps(_mm256_set1_ps(static_cast<float>(-nmax)), max), best_l, sumlx, suml2);
    // suml2 != 0 ? sumlx / suml2 : 0 (unordered compare: a NaN suml2 is "!= 0")
    __m256 scale = _mm256_and_ps(_mm256_cmp_ps(suml2, zero, _CMP_NEQ_UQ), _mm256_div_ps(sumlx, suml2));
    __m256 best = _mm256_mul_ps(scale, sumlx);
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const float numerator = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is));
        round_and_sum(_mm256_div_ps(_mm256_set1_ps(numerator), max), trial_l, sumlx, suml2);
        const __m256 better = _mm256_and_ps(gt_x8(suml2, zero),
                                            gt_x8(_mm256_mul_ps(sumlx, sumlx), _mm256_mul_ps(best, suml2)));
        if (_mm256_movemask_ps(better) == 0) continue;
        take_levels(best_l, trial_l, n, better);
        const __m256 this_scale = _mm256_div_ps(sumlx, suml2);
        scale = _mm256_blendv_ps(scale, this_scale, better);
        best = _mm256_blendv_ps(best, _mm256_mul_ps(this_scale, sumlx), better);
    }
    scale = _mm256_blendv_ps(scale, zero, negligible);  // the early exit: scale 0, levels 0
    _mm256_storeu_ps(scale_out, scale);
    store_signed_levels(L, best_l, n, nmax, _mm256_movemask_ps(negligible));
}

// ggml's make_q3_quants with do_rmse (quantize_k.cpp's fit_q3, q3_K's search) in lanes. Its refinement
// walks the values in order and may move one level at a time, each move changing the sums the next
// value sees: per lane that is still the same sequence, with the move a masked update. A lane that
// changed nothing in a pass would change nothing in the next (its state is the same), so the passes
// run until no lane changed (ggml's `if (!n_changed) break` per lane) or 5 passes.
void fit_q3_lanes(int n, int nmax, const float* x, std::int8_t* L, float* scale_out) {
    alignas(32) float xt[max_n][lanes];
    transpose_in(x, n, xt);
    const __m256 zero = _mm256_setzero_ps();
    __m256 max, amax;
    signed_max_x8(xt, n, max, amax);
    const __m256 negligible = _mm256_cmp_ps(amax, _mm256_set1_ps(group_max_eps), _CMP_LT_OQ);
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    auto clamped = [&](__m256i l) { return _mm256_min_epi32(_mm256_max_epi32(l, lo), hi); };
    const __m256 iscale = _mm256_div_ps(_mm256_set1_ps(static_cast<float>(-nmax)), max);
    __m256i level[max_n];
    __m256 sumlx = zero, suml2 = zero;
    for (int i = 0; i < n; ++i) {
        const __m256 xi = _mm256_load_ps(xt[i]);
        level[i] = clamped(nearest_int_x8(_mm256_mul_ps(iscale, xi)));
        const __m256 fl = _mm256_cvtepi32_ps(level[i]);
        const __m256 w = _mm256_mul_ps(xi, xi);
        sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w, xi), fl));
        suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, fl), fl));
    }
    for (int itry = 0; itry < 5; ++itry) {
        __m256 changed = _mm256_setzero_ps();
        for (int i = 0; i < n; ++i) {
            const __m256 xi = _mm256_load_ps(xt[i]);
            const __m256 w = _mm256_mul_ps(xi, xi);
            const __m256 wx = _mm256_mul_ps(w, xi);
            const __m256 li = _mm256_cvtepi32_ps(level[i]);
            __m256 slx = _mm256_sub_ps(sumlx, _mm256_mul_ps(wx, li));
            const __m256 slx_positive = gt_x8(slx, zero);
            if (_mm256_movemask_ps(slx_positive) == 0) continue;
            __m256 sl2 = _mm256_sub_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, li), li));
            const __m256i new_l = clamped(nearest_int_x8(_mm256_div_ps(_mm256_mul_ps(xi, sl2), slx)));
            const __m256 moved = _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(new_l, level[i])), slx_positive);
            if (_mm256_movemask_ps(moved) == 0) continue;
            const __m256 nl = _mm256_cvtepi32_ps(new_l);
            slx = _mm256_add_ps(slx, _mm256_mul_ps(wx, nl));
            sl2 = _mm256_add_ps(sl2, _mm256_mul_ps(_mm256_mul_ps(w, nl), nl));
            const __m256 better = gt_x8(_mm256_mul_ps(_mm256_mul_ps(slx, slx), suml2),
                                        _mm256_mul_ps(_mm256_mul_ps(sumlx, sumlx), sl2));
            const __m256 take = _mm256_and_ps(moved, _mm256_and_ps(gt_x8(sl2, zero), better));
            level[i] = _mm256_blendv_epi8(level[i], new_l, _mm256_castps_si256(take));
            sumlx = _mm256_blendv_ps(sumlx, slx, take);
            suml2 = _mm256_blendv_ps(suml2, sl2, take);
            changed = _mm256_or_ps(changed, take);
        }
        if (_mm256_movemask_ps(changed) == 0) break;
    }
    // suml2 > 0 ? sumlx / suml2 : 0, and the early exit (scale 0, levels 0)
    __m256 scale = _mm256_and_ps(gt_x8(suml2, zero), _mm256_div_ps(sumlx, suml2));
    scale = _mm256_blendv_ps(scale, zero, negligible);
    _mm256_storeu_ps(scale_out, scale);
    alignas(32) std::int32_t out[max_n][lanes];
    for (int i = 0; i < n; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(out[i]), level[i]);
    store_signed_levels(L, out, n, nmax, _mm256_movemask_ps(negligible));
}

// The k-quants' last step, 8 values per instruction: each value divided by the block's final scale
// (_mm256_div_ps is the IEEE division the scalar `/` is), rounded by nearest_int's bit trick, clamped
// and offset exactly as the scalar loop does, value by value (no value depends on another).
void requantize_lanes(const float* x, int n, float d, bool with_add, float add, int lo, int hi, int offset,
                      std::uint8_t* L) {
    const __m256 vd = _mm256_set1_ps(d), va = _mm256_set1_ps(add);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi), voff = _mm256_set1_epi32(offset);
    alignas(32) std::int32_t out[lanes];
    for (int i = 0; i < n; i += lanes) {
        __m256 v = _mm256_loadu_ps(x + i);
        if (with_add) v = _mm256_add_ps(v, va);
        __m256i l = nearest_int_x8(_mm256_div_ps(v, vd));
        l = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(l, vlo), vhi), voff);  // clamp(l, lo, hi) + offset
        _mm256_store_si256(reinterpret_cast<__m256i*>(out), l);
        for (int k = 0; k < lanes; ++k) L[i + k] = static_cast<std::uint8_t>(out[k]);
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
fit_q3_x8_fn avx2_fit_q3_x8() noexcept { return fit_q3_lanes; }
fit_symmetric_x8_fn avx2_fit_symmetric_x8() noexcept { return fit_symmetric_lanes; }

#else
q3_split_high_fn avx2_q3_split_high() noexcept { return nullptr; }
requantize_fn avx2_requantize() noexcept { return nullptr; }
fit_with_min_x8_fn avx2_fit_with_min_x8() noexcept { return nullptr; }
fit_q3_x8_fn avx2_fit_q3_x8() noexcept { return nullptr; }
fit_symmetric_x8_fn avx2_fit_symmetric_x8() noexcept { return nullptr; }
#endif

}  // namespace minfer::quant::detail
