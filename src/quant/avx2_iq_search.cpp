// The IQ quantizers' inner searches in AVX2 lanes (compiled with -mavx2 -mf16c -mbmi2; see kernels.hpp
// for the rules of this file): iq4_nl / iq4_xs's trial scales (ggml's quantize_row_iq4_nl_impl) and
// the codebook types' nearest-neighbour search (ggml's iq2_find_best_neighbour,
// iq3_find_best_neighbour, and iq1_find_best_neighbour2 over its neighbour list).
//
// As in avx2_fit.cpp, nothing is reordered: ggml's sums are in-order float chains, so each lane runs
// one independent chain with exactly the scalar operations (same multiplies, adds and order, no FMA:
// -ffp-contract=off and no -mfma), and each branch is a per-lane blend.
//  - iq4: the 16 scale tries of a block (the first guess and itry = -7..7) do not depend on each
//    other: only the choice among them (`sumqx * sumqx > best * sumq2`, in try order) does. The lanes
//    compute the 16 tries' sums, one try per lane; the caller makes the choice, in order, in scalar
//    code. ggml's best_index_int8 (a binary search over the 16 levels) becomes a branch-free count.
//  - neighbours: each lane sums one candidate's weighted squared distance over the point's 4 or 8
//    coordinates in coordinate order; the first minimum in list order is then the winner, as ggml's
//    strict `d2 < best_d2` keeps it.
//  - the rounding of a group's values to the lattice at its trial scales: one trial per lane, no sum.
//  - the trial scales' weighted sums: one trial per lane, each ggml's chain.
#include <immintrin.h>

#include <cfloat>
#include <cstdint>

#include "quantize_kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {

constexpr float iq4_level_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// ggml's best_index_int8(16, kvalues_iq4nl, y) in every lane, as the index and as the level value.
// The binary search ends with ml = the last k with !(y < level[k]) (k = 0 always qualifies: the
// search starts there) and mu = ml + 1; for ordered y the predicate is monotone in k, so ml is the
// count of k in 1..14 for which it holds. A NaN y fails every `<`, so the unordered "not less than"
// counts all 14 (ml = 14) and the final comparison is false: 15, as the scalar search ends. Its
// early exits agree too: y <= level[0] gives ml = 0 and y - level[0] <= 0 < level[1] - y (index 0);
// y >= level[15] gives ml = 14 and y - level[14] > 0 >= level[15] - y (index 15). The final
// `y - level[ml] < level[ml + 1] - y` is the scalar expression itself.
struct iq4_lookup {
    __m256 low = _mm256_loadu_ps(iq4_level_values), high = _mm256_loadu_ps(iq4_level_values + 8);
    __m256 at(__m256i i) const {  // level[i] for 0 <= i < 16: bit 3 of i chooses the half
        const __m256 a = _mm256_permutevar8x32_ps(low, i), b = _mm256_permutevar8x32_ps(high, i);
        return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
    }
    // ml: how many of level[1..14] y is not less than.
    __m256i lower_index(__m256 y) const {
        __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();  // two chains of 7 counts
        for (int k = 1; k <= 14; k += 2) {
            a = _mm256_sub_epi32(a, _mm256_castps_si256(_mm256_cmp_ps(y, _mm256_set1_ps(iq4_level_values[k]), _CMP_NLT_UQ)));
            b = _mm256_sub_epi32(b, _mm256_castps_si256(_mm256_cmp_ps(y, _mm256_set1_ps(iq4_level_values[k + 1]), _CMP_NLT_UQ)));
        }
        return _mm256_add_epi32(a, b);
    }
    // The nearest level's value (for the sums).
    __m256 value(__m256 y) const {
        const __m256i ml = lower_index(y);
        const __m256 lo = at(ml), hi = at(_mm256_add_epi32(ml, _mm256_set1_epi32(1)));
        const __m256 take_lo = _mm256_cmp_ps(_mm256_sub_ps(y, lo), _mm256_sub_ps(hi, y), _CMP_LT_OQ);
        return _mm256_blendv_ps(hi, lo, take_lo);
    }
    // The nearest level's index.
    __m256i index(__m256 y) const {
        const __m256i ml = lower_index(y);
        const __m256i mu = _mm256_add_epi32(ml, _mm256_set1_epi32(1));
        const __m256 take_lo = _mm256_cmp_ps(_mm256_sub_ps(y, at(ml)), _mm256_sub_ps(at(mu), y), _CMP_LT_OQ);
        return _mm256_add_epi32(ml, _mm256_andnot_si256(_mm256_castps_si256(take_lo), _mm256_set1_epi32(1)));
    }
};

// The 16 tries' sums: try t (lane t % 8 of vector t / 8) rounds id[t] * x[j] to the nearest level q
// and sums (w * q) * x and (w * q) * q over j = 0..31 in order, as the scalar loop does per try.
void iq4_trial_sums_lanes(const float* x, const float* w, const float* ids, float* sumqx, float* sumq2) {
    const iq4_lookup levels;
    const __m256 id0 = _mm256_loadu_ps(ids), id1 = _mm256_loadu_ps(ids + 8);
    __m256 qx0 = _mm256_setzero_ps(), q20 = _mm256_setzero_ps();
    __m256 qx1 = _mm256_setzero_ps(), q21 = _mm256_setzero_ps();
    for (int j = 0; j < 32; ++j) {
        const __m256 xj = _mm256_set1_ps(x[j]), wj = _mm256_set1_ps(w[j]);
        const __m256 q0 = levels.value(_mm256_mul_ps(id0, xj));
        const __m256 q1 = levels.value(_mm256_mul_ps(id1, xj));
        const __m256 wq0 = _mm256_mul_ps(wj, q0), wq1 = _mm256_mul_ps(wj, q1);
        qx0 = _mm256_add_ps(qx0, _mm256_mul_ps(wq0, xj));
        q20 = _mm256_add_ps(q20, _mm256_mul_ps(wq0, q0));
        qx1 = _mm256_add_ps(qx1, _mm256_mul_ps(wq1, xj));
        q21 = _mm256_add_ps(q21, _mm256_mul_ps(wq1, q1));
    }
    _mm256_storeu_ps(sumqx, qx0);
    _mm256_storeu_ps(sumqx + 8, qx1);
    _mm256_storeu_ps(sumq2, q20);
    _mm256_storeu_ps(sumq2 + 8, q21);
}

// L[j] = best_index_int8(id * x[j]) for j < n (a multiple of 8).
void iq4_levels_lanes(const float* x, int n, float id, std::uint8_t* L) {
    const iq4_lookup levels;
    const __m256 vid = _mm256_set1_ps(id);
    for (int j = 0; j < n; j += 8) {
        const __m256i i = levels.index(_mm256_mul_ps(vid, _mm256_loadu_ps(x + j)));
        // 8 values 0..15 -> 8 bytes: pack to 16 bits, then to 8 bits (saturation never applies).
        const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(L + j), _mm_packus_epi16(words, words));
    }
}

// The neighbour search over `list` (count first, then grid indices; readable 16 entries past its
// end, see iq_lattice::neighbours), 16 candidates per step in two vectors. d2 per lane is the scalar
// chain `d2 += w[i] * diff * diff` with diff = scale * q - x[i], i in coordinate order. Lanes past the
// count and NaN distances become +Inf, which the scalar `d2 < best_d2` (best_d2 starting at FLT_MAX)
// never takes either. Within a step the scalar loop ends on the first candidate holding the step's
// minimum, if that minimum is below best_d2; d2 is never -0 (it starts at +0), so equality finds it.
// With Iq1 (ggml's iq1_find_best_neighbour2), a coordinate 2l + 1 stands for the level levels[l]
// (the group's three shifted levels): q is read from a table indexed by the coordinate.
template <int Dim, bool Iq1>
int best_neighbour_lanes(const std::uint16_t* list, const std::uint32_t* packed, const float* xval,
                         const float* weight, float scale, const float* levels) {
    const int count = list[0];
    __m256 xv[static_cast<unsigned>(Dim)], wv[static_cast<unsigned>(Dim)];
#pragma GCC unroll 8
    for (int i = 0; i < Dim; ++i) {
        xv[i] = _mm256_set1_ps(xval[i]);
        wv[i] = _mm256_set1_ps(weight[i]);
    }
    const __m256 s = _mm256_set1_ps(scale);
    const __m256 inf = _mm256_set1_ps(__builtin_inff());
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i nibble = _mm256_set1_epi32(15);
    const __m256 table = Iq1 ? _mm256_setr_ps(0, levels[0], 0, levels[1], 0, levels[2], 0, 0) : _mm256_setzero_ps();
    // The distances of candidates j..j+7 (+Inf past the list or when NaN).
    auto distances = [&](int j) {
        // Eight loads rather than _mm256_i32gather_epi32: measured faster on the development
        // machine's Xeon (iq2_s, iq2_xs, iq3_xxs, iq3_s 12-30 % less CPU time), the gather's
        // latency sitting on every step's path.
        const std::uint16_t* at = list + 1 + j;
        const auto pt = [&](int i) { return static_cast<int>(packed[at[i]]); };
        const __m256i p = _mm256_setr_epi32(pt(0), pt(1), pt(2), pt(3), pt(4), pt(5), pt(6), pt(7));
        __m256 d2 = _mm256_setzero_ps();
#pragma GCC unroll 8
        for (int i = 0; i < Dim; ++i) {
            const __m256i c = _mm256_and_si256(_mm256_srli_epi32(p, 4 * i), nibble);
            const __m256 q = Iq1 ? _mm256_permutevar8x32_ps(table, c) : _mm256_cvtepi32_ps(c);
            const __m256 diff = _mm256_sub_ps(_mm256_mul_ps(s, q), xv[i]);
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(_mm256_mul_ps(wv[i], diff), diff));
        }
        const __m256 in_list = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(count - j), iota));
        return _mm256_blendv_ps(inf, d2, _mm256_and_ps(in_list, _mm256_cmp_ps(d2, d2, _CMP_ORD_Q)));
    };
    // The minimum of a vector's lanes, in every lane.
    const auto lane_min = [](__m256 m) {
        m = _mm256_min_ps(m, _mm256_permute2f128_ps(m, m, 1));
        m = _mm256_min_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        return _mm256_min_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    };
    if (count <= 8) {  // most lists (iq2_s: 89 %, iq3_s: 77 %): one vector, no steps
        const __m256 d2 = distances(0);
        const __m256 m = lane_min(d2);
        if (!(_mm256_cvtss_f32(m) < FLT_MAX)) return -1;
        return list[1 + __builtin_ctz(static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d2, m, _CMP_EQ_OQ))))];
    }
    float best_d2 = FLT_MAX;
    int best = -1;
    for (int j = 0; j < count; j += 16) {
        const __m256 d2a = distances(j), d2b = count - j > 8 ? distances(j + 8) : inf;  // short lists: one vector
        const __m256 m = lane_min(_mm256_min_ps(d2a, d2b));
        const float step_min = _mm256_cvtss_f32(m);
        if (!(step_min < best_d2)) continue;
        best_d2 = step_min;
        const unsigned in_a = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d2a, m, _CMP_EQ_OQ)));
        const unsigned in_b = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(d2b, m, _CMP_EQ_OQ)));
        const int at = in_a != 0 ? __builtin_ctz(in_a) : 8 + __builtin_ctz(in_b);
        best = list[1 + j + at];
    }
    return best;
}

// The iq2 / iq3 searches: q is the coordinate itself.
template <int Dim>
int best_neighbour_codebook(const std::uint16_t* list, const std::uint32_t* packed, const float* xval,
                            const float* weight, float scale) {
    return best_neighbour_lanes<Dim, false>(list, packed, xval, weight, scale, nullptr);
}

// The codebook types' rounding to the lattice at 32 trial scales, one trial per lane (no sum: each
// value's rounding is on its own): L[32 * i + t] = clamp(nearest_int(0.5f * (ids[t] * x[i] - 1)), 0, lmax),
// and the points' keys from the same integers, a coordinate's bits shifted in as key_of does.
template <int Dim>
void trials_round_lanes_dim(const float* x, int n, const float* ids, int lmax, std::int8_t* L, std::uint32_t* keys) {
    constexpr int bits = Dim == 4 ? 3 : 2;
    const __m256 one = _mm256_set1_ps(1.f), half = _mm256_set1_ps(0.5f);
    const __m256i hi = _mm256_set1_epi32(lmax);
    for (int v = 0; v < 4; ++v) {
        const __m256 vid = _mm256_loadu_ps(ids + 8 * v);
        for (int k = 0; k < n / Dim; ++k) {
            __m256i key = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int c = 0; c < Dim; ++c) {
                const int i = Dim * k + c;
                const __m256 val = _mm256_mul_ps(half, _mm256_sub_ps(_mm256_mul_ps(vid, _mm256_set1_ps(x[i])), one));
                // ggml's nearest_int (1.5 * 2^23 added, low mantissa bits read back), then the clamp
                const __m256i b = _mm256_castps_si256(_mm256_add_ps(val, _mm256_set1_ps(12582912.f)));
                const __m256i l = _mm256_sub_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
                const __m256i q = _mm256_min_epi32(_mm256_max_epi32(l, _mm256_setzero_si256()), hi);
                key = _mm256_or_si256(key, _mm256_slli_epi32(q, bits * c));
                const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
                _mm_storel_epi64(reinterpret_cast<__m128i*>(L + 32 * i + 8 * v), _mm_packs_epi16(words, words));
            }
            key = _mm256_and_si256(key, _mm256_set1_epi32(0xffff));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(keys + 32 * k + 8 * v), key);
        }
    }
}

void trials_round_lanes(const float* x, int n, const float* ids, int lmax, int dim, std::int8_t* L, std::uint32_t* keys) {
    if (dim == 4) trials_round_lanes_dim<4>(x, n, ids, lmax, L, keys);
    else trials_round_lanes_dim<8>(x, n, ids, lmax, L, keys);
}

// The trial sums of the codebook types, 8 trials per vector: lane t of vector v is trial 8v + t,
// each lane the scalar chain over i in order. (w * x) is the same for every trial: ggml's
// `w * xval[i] * q` multiplies it first, so it is computed once per value and broadcast.
template <unsigned Vectors>
void codebook_sums_x8(int n, const float* weight, const float* xval, const std::int8_t* L, float* sumqx, float* sumq2) {
    constexpr int vectors = static_cast<int>(Vectors);
    __m256 qx[Vectors], q2[Vectors];
    for (int v = 0; v < vectors; ++v) qx[v] = q2[v] = _mm256_setzero_ps();
    const __m256i one = _mm256_set1_epi32(1);
    for (int i = 0; i < n; ++i) {
        const __m256 w = _mm256_set1_ps(weight[i]), wx = _mm256_set1_ps(weight[i] * xval[i]);
        for (int v = 0; v < vectors; ++v) {
            const __m128i l8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(L + 32 * i + 8 * v));
            const __m256i l = _mm256_cvtepi8_epi32(l8);
            const __m256 q = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_add_epi32(l, l), one));  // 2L + 1, exact
            qx[v] = _mm256_add_ps(qx[v], _mm256_mul_ps(wx, q));
            q2[v] = _mm256_add_ps(q2[v], _mm256_mul_ps(_mm256_mul_ps(w, q), q));
        }
    }
    for (int v = 0; v < vectors; ++v) {
        _mm256_storeu_ps(sumqx + 8 * v, qx[v]);
        _mm256_storeu_ps(sumq2 + 8 * v, q2[v]);
    }
}

void codebook_sums_lanes(int n, int trials, const float* weight, const float* xval, const std::int8_t* L, float* sumqx,
                         float* sumq2) {
    switch ((trials + 7) / 8) {
        case 1: return codebook_sums_x8<1>(n, weight, xval, L, sumqx, sumq2);
        case 2: return codebook_sums_x8<2>(n, weight, xval, L, sumqx, sumq2);
        case 3: return codebook_sums_x8<3>(n, weight, xval, L, sumqx, sumq2);
        default: return codebook_sums_x8<4>(n, weight, xval, L, sumqx, sumq2);
    }
}

}  // namespace

codebook_sums_fn avx2_codebook_sums() noexcept { return codebook_sums_lanes; }
trials_round_fn avx2_trials_round() noexcept { return trials_round_lanes; }
iq4_trial_sums_fn avx2_iq4_trial_sums() noexcept { return iq4_trial_sums_lanes; }
iq4_levels_fn avx2_iq4_levels() noexcept { return iq4_levels_lanes; }
neighbour_search_fn avx2_best_neighbour(int dim) noexcept {
    return dim == 8 ? best_neighbour_codebook<8> : dim == 4 ? best_neighbour_codebook<4> : nullptr;
}
iq1_neighbour_fn avx2_iq1_neighbour() noexcept { return best_neighbour_lanes<8, true>; }

#else
codebook_sums_fn avx2_codebook_sums() noexcept { return nullptr; }
trials_round_fn avx2_trials_round() noexcept { return nullptr; }
iq4_trial_sums_fn avx2_iq4_trial_sums() noexcept { return nullptr; }
iq4_levels_fn avx2_iq4_levels() noexcept { return nullptr; }
neighbour_search_fn avx2_best_neighbour(int) noexcept { return nullptr; }
iq1_neighbour_fn avx2_iq1_neighbour() noexcept { return nullptr; }
#endif

}  // namespace minfer::quant::detail
