// iq1_s / iq1_m's split search in AVX2 lanes (compiled with -mavx2 -mf16c -mbmi2, -ffp-contract=off
// and no -mfma; the scalar versions are scalar_iq1s_split / scalar_iq1m_split in quantize_iq1.cpp).
//
// ggml tries every pair of cut points i1 <= i2 over the sorted values, in order (i1 outer, i2
// inner, then the shifts), and keeps a candidate when `sumq2 > 0 && sumqx * sumqx > best * sumq2`,
// best being the score of the last one kept. A candidate's sums depend only on its cut points, not
// on the choice so far: the lanes compute them for 8 consecutive i2 at a time (each lane exactly the
// scalar expression, same operations in the same order). Only the choice is sequential, and the best
// changes only when a candidate passes the test: the candidates between two that pass are skipped by
// the scalar loop without effect. So the lanes test a step's candidates against the current best
// (the scalar comparisons, ordered: NaN fails them as in C), the first passing one in ggml's order
// (a bit position: the candidates' order within the step) is taken with the scalar update, and the
// test is redone against the new best for the candidates after it, until none passes.
//
// That is still a division and a new test, one after the other, for each candidate that passes
// (some 28 per group: the score rises along ggml's order). So the searches first try without the
// sequential choice (iq1s_split_lanes, iq1m_split_lanes): every candidate's score in lanes, and the
// first candidate of the largest one, checked to be where the sequential choice ends; the
// sequential lanes above run only when the check fails.
#include <immintrin.h>

#include <cstdint>

#include <cfloat>

#include "quantize_kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {

constexpr float delta = 0.125f;  // as quantize_iq1.cpp spells the levels
constexpr float x_p[3] = {-1 + delta, delta, 1 + delta};
constexpr float x_m[3] = {-1 - delta, -delta, 1 - delta};

// The lanes of `sumqx`, `sumq2` (valid lanes only) that pass ggml's test against best_score.
unsigned passing(__m256 sumqx, __m256 sumq2, float best_score, __m256 valid) {
    const __m256 pos = _mm256_cmp_ps(sumq2, _mm256_setzero_ps(), _CMP_GT_OQ);
    const __m256 better = _mm256_cmp_ps(_mm256_mul_ps(sumqx, sumqx), _mm256_mul_ps(_mm256_set1_ps(best_score), sumq2), _CMP_GT_OQ);
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_and_ps(valid, _mm256_and_ps(pos, better))));
}

// ggml's update for a candidate that passed its test.
inline void take(float sumqx, float sumq2, int i1, int i2, int shift, float& best_score, iq1_split& best) {
    best.scale = sumqx / sumq2;
    best_score = best.scale * sumqx;
    best.i1 = i1;
    best.i2 = i2;
    best.shift = shift;
}

// Lanes j < count of a step (count 1..8), as a mask.
__m256 first_lanes(int count) {
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}

// iq1_s: lane j of a step is i2 + j; per shift the scalar expressions
//   sumqx = ((sumx[i1] - sumx[0]) * l0 + (sumx[i2] - sumx[i1]) * l1) + (sumx[bs] - sumx[i2]) * l2
//   sumq2 = ((sumw[i1] - sumw[0]) * l0 * l0 + (sumw[i2] - sumw[i1]) * l1 * l1) + (sumw[bs] - sumw[i2]) * l2 * l2
// (a * l * l is (a * l) * l). Per pair the up-shifted candidate comes before the down-shifted one.
void iq1s_split_sequential(const float* sumx_in, const float* sumw_in, float max, iq1_split& best) {
    constexpr int bs = 32;
    float sumx[bs + 1 + 8] = {}, sumw[bs + 1 + 8] = {};  // 8 past the end readable
    for (int i = 0; i <= bs; ++i) {
        sumx[i] = sumx_in[i];
        sumw[i] = sumw_in[i];
    }
    const __m256 x0 = _mm256_set1_ps(sumx[0]), xn = _mm256_set1_ps(sumx[bs]);
    const __m256 w0 = _mm256_set1_ps(sumw[0]), wn = _mm256_set1_ps(sumw[bs]);
    const __m256 p0 = _mm256_set1_ps(x_p[0]), p1 = _mm256_set1_ps(x_p[1]), p2 = _mm256_set1_ps(x_p[2]);
    const __m256 m0 = _mm256_set1_ps(x_m[0]), m1 = _mm256_set1_ps(x_m[1]), m2 = _mm256_set1_ps(x_m[2]);
    float best_score = -FLT_MAX;
    best = iq1_split{};
    best.scale = max;
    for (int i1 = 0; i1 <= bs; ++i1) {
        const __m256 x1 = _mm256_set1_ps(sumx[i1]), w1 = _mm256_set1_ps(sumw[i1]);
        const __m256 a_x = _mm256_sub_ps(x1, x0), a_w = _mm256_sub_ps(w1, w0);
        // The i1 terms, the same in every lane.
        const __m256 px = _mm256_mul_ps(a_x, p0), mx = _mm256_mul_ps(a_x, m0);
        const __m256 pw = _mm256_mul_ps(_mm256_mul_ps(a_w, p0), p0), mw = _mm256_mul_ps(_mm256_mul_ps(a_w, m0), m0);
        for (int i2 = i1; i2 <= bs; i2 += 8) {
            const int count = bs + 1 - i2 < 8 ? bs + 1 - i2 : 8;
            const __m256 x2 = _mm256_loadu_ps(sumx + i2), w2 = _mm256_loadu_ps(sumw + i2);
            const __m256 b_x = _mm256_sub_ps(x2, x1), c_x = _mm256_sub_ps(xn, x2);
            const __m256 b_w = _mm256_sub_ps(w2, w1), c_w = _mm256_sub_ps(wn, w2);
            const __m256 qx_p = _mm256_add_ps(_mm256_add_ps(px, _mm256_mul_ps(b_x, p1)), _mm256_mul_ps(c_x, p2));
            const __m256 q2_p = _mm256_add_ps(_mm256_add_ps(pw, _mm256_mul_ps(_mm256_mul_ps(b_w, p1), p1)),
                                              _mm256_mul_ps(_mm256_mul_ps(c_w, p2), p2));
            const __m256 qx_m = _mm256_add_ps(_mm256_add_ps(mx, _mm256_mul_ps(b_x, m1)), _mm256_mul_ps(c_x, m2));
            const __m256 q2_m = _mm256_add_ps(_mm256_add_ps(mw, _mm256_mul_ps(_mm256_mul_ps(b_w, m1), m1)),
                                              _mm256_mul_ps(_mm256_mul_ps(c_w, m2), m2));
            const __m256 valid = first_lanes(count);
            // Bit 2j: lane j up-shifted, bit 2j + 1: lane j down-shifted (ggml's order within the step).
            auto pass = [&] {
                return _pdep_u32(passing(qx_p, q2_p, best_score, valid), 0x5555u) |
                       _pdep_u32(passing(qx_m, q2_m, best_score, valid), 0xaaaau);
            };
            std::uint32_t todo = pass();
            if (todo == 0) continue;
            float sqx[2][8], sq2[2][8];
            _mm256_storeu_ps(sqx[0], qx_p);
            _mm256_storeu_ps(sq2[0], q2_p);
            _mm256_storeu_ps(sqx[1], qx_m);
            _mm256_storeu_ps(sq2[1], q2_m);
            while (todo != 0) {
                const int bit = __builtin_ctz(todo);
                const int j = bit / 2, m = bit % 2;
                take(sqx[m][j], sq2[m][j], i1, i2 + j, m == 0 ? 1 : -1, best_score, best);
                todo = pass() & ~((2u << bit) - 1);  // the candidates after it, against the new best
            }
        }
    }
}


// iq1_s's split search by the largest score, as iq1m_split_lanes (below) does for iq1_m: every
// candidate's score in lanes, the first candidate c of the largest one checked (a) to pass against
// the largest score of the others and (b) to have no candidate after it pass against its own; the
// sequential lanes when a score is NaN or a check fails. Per pair, bit 2j is lane j up-shifted
// (shift +1) and bit 2j + 1 down-shifted (-1), ggml's order.
void iq1s_split_lanes(const float* sumx_in, const float* sumw_in, float max, iq1_split& best) {
    constexpr int bs = 32;
    constexpr int max_steps = 85;  // ceil((33 - i1) / 8) summed over i1 = 0..32
    float sumx[bs + 1 + 8] = {}, sumw[bs + 1 + 8] = {};
    for (int i = 0; i <= bs; ++i) {
        sumx[i] = sumx_in[i];
        sumw[i] = sumw_in[i];
    }
    const __m256 x0 = _mm256_set1_ps(sumx[0]), xn = _mm256_set1_ps(sumx[bs]);
    const __m256 w0 = _mm256_set1_ps(sumw[0]), wn = _mm256_set1_ps(sumw[bs]);
    const __m256 p0 = _mm256_set1_ps(x_p[0]), p1 = _mm256_set1_ps(x_p[1]), p2 = _mm256_set1_ps(x_p[2]);
    const __m256 m0 = _mm256_set1_ps(x_m[0]), m1 = _mm256_set1_ps(x_m[1]), m2 = _mm256_set1_ps(x_m[2]);
    alignas(32) float all_qx[max_steps][2][8], all_q2[max_steps][2][8], all_f[max_steps][2][8];
    int step_i1[max_steps], step_i2[max_steps], step_count[max_steps];
    int steps = 0;
    const __m256 lowest = _mm256_set1_ps(-FLT_MAX);
    __m256 top1[2] = {lowest, lowest}, top2[2] = {lowest, lowest};  // per shift, per lane the two largest
    __m256 nan = _mm256_setzero_ps();
    for (int i1 = 0; i1 <= bs; ++i1) {
        const __m256 x1 = _mm256_set1_ps(sumx[i1]), w1 = _mm256_set1_ps(sumw[i1]);
        const __m256 a_x = _mm256_sub_ps(x1, x0), a_w = _mm256_sub_ps(w1, w0);
        const __m256 px = _mm256_mul_ps(a_x, p0), mx = _mm256_mul_ps(a_x, m0);
        const __m256 pw = _mm256_mul_ps(_mm256_mul_ps(a_w, p0), p0), mw = _mm256_mul_ps(_mm256_mul_ps(a_w, m0), m0);
        for (int i2 = i1; i2 <= bs; i2 += 8, ++steps) {
            const int count = bs + 1 - i2 < 8 ? bs + 1 - i2 : 8;
            step_i1[steps] = i1;
            step_i2[steps] = i2;
            step_count[steps] = count;
            const __m256 x2 = _mm256_loadu_ps(sumx + i2), w2 = _mm256_loadu_ps(sumw + i2);
            const __m256 b_x = _mm256_sub_ps(x2, x1), c_x = _mm256_sub_ps(xn, x2);
            const __m256 b_w = _mm256_sub_ps(w2, w1), c_w = _mm256_sub_ps(wn, w2);
            __m256 qx[2], q2[2];
            qx[0] = _mm256_add_ps(_mm256_add_ps(px, _mm256_mul_ps(b_x, p1)), _mm256_mul_ps(c_x, p2));
            q2[0] = _mm256_add_ps(_mm256_add_ps(pw, _mm256_mul_ps(_mm256_mul_ps(b_w, p1), p1)), _mm256_mul_ps(_mm256_mul_ps(c_w, p2), p2));
            qx[1] = _mm256_add_ps(_mm256_add_ps(mx, _mm256_mul_ps(b_x, m1)), _mm256_mul_ps(c_x, m2));
            q2[1] = _mm256_add_ps(_mm256_add_ps(mw, _mm256_mul_ps(_mm256_mul_ps(b_w, m1), m1)), _mm256_mul_ps(_mm256_mul_ps(c_w, m2), m2));
            const __m256 valid = first_lanes(count);
            for (int m = 0; m < 2; ++m) {
                const __m256 f = _mm256_mul_ps(_mm256_div_ps(qx[m], q2[m]), qx[m]);  // ggml's scale, then best_score
                const __m256 can = _mm256_and_ps(valid, _mm256_cmp_ps(q2[m], _mm256_setzero_ps(), _CMP_GT_OQ));
                nan = _mm256_or_ps(nan, _mm256_and_ps(can, _mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
                const __m256 fm = _mm256_blendv_ps(lowest, f, can);
                top2[m] = _mm256_max_ps(top2[m], _mm256_min_ps(top1[m], fm));
                top1[m] = _mm256_max_ps(top1[m], fm);
                _mm256_store_ps(all_qx[steps][m], qx[m]);
                _mm256_store_ps(all_q2[steps][m], q2[m]);
                _mm256_store_ps(all_f[steps][m], fm);
            }
        }
    }
    if (_mm256_movemask_ps(nan) != 0) return iq1s_split_sequential(sumx_in, sumw_in, max, best);
    alignas(32) float t1[8], t2[8];
    _mm256_store_ps(t1, _mm256_max_ps(top1[0], top1[1]));
    _mm256_store_ps(t2, _mm256_max_ps(_mm256_min_ps(top1[0], top1[1]), _mm256_max_ps(top2[0], top2[1])));
    float M = t1[0], F = t2[0];
    for (int j = 1; j < 8; ++j) {
        const float lo = t1[j] < M ? t1[j] : M;
        M = t1[j] < M ? M : t1[j];
        F = F < lo ? lo : F;
        F = F < t2[j] ? t2[j] : F;
    }
    best = iq1_split{};
    best.scale = max;
    if (M == -FLT_MAX) return;  // no candidate has sumq2 > 0: ggml takes none
    const __m256 vM = _mm256_set1_ps(M);
    int cs = 0, bit = -1;
    for (; cs < steps && bit < 0; ++cs) {
        const __m256 eq0 = _mm256_cmp_ps(_mm256_load_ps(all_f[cs][0]), vM, _CMP_EQ_OQ);
        const __m256 eq1 = _mm256_cmp_ps(_mm256_load_ps(all_f[cs][1]), vM, _CMP_EQ_OQ);
        if (_mm256_movemask_ps(_mm256_or_ps(eq0, eq1)) == 0) continue;
        const std::uint32_t bits = _pdep_u32(static_cast<unsigned>(_mm256_movemask_ps(eq0)), 0x5555u) |
                                   _pdep_u32(static_cast<unsigned>(_mm256_movemask_ps(eq1)), 0xaaaau);
        bit = __builtin_ctz(bits);
    }
    if (bit < 0) return iq1s_split_sequential(sumx_in, sumw_in, max, best);  // not reached: M is a score
    --cs;
    const int cj = bit / 2, cm = bit % 2;
    const float qx_c = all_qx[cs][cm][cj], q2_c = all_q2[cs][cm][cj];
    if (!(qx_c * qx_c > F * q2_c)) return iq1s_split_sequential(sumx_in, sumw_in, max, best);  // (a)
    const float scale = qx_c / q2_c;
    const float score = scale * qx_c;  // ggml's update on taking c
    const __m256 valid_c = first_lanes(step_count[cs]);
    std::uint32_t later = _pdep_u32(passing(_mm256_load_ps(all_qx[cs][0]), _mm256_load_ps(all_q2[cs][0]), score, valid_c), 0x5555u) |
                          _pdep_u32(passing(_mm256_load_ps(all_qx[cs][1]), _mm256_load_ps(all_q2[cs][1]), score, valid_c), 0xaaaau);
    later &= ~((2u << bit) - 1);  // (b): c's own step after bit, then whole steps
    for (int s = cs + 1; s < steps; ++s) {
        const __m256 valid = first_lanes(step_count[s]);
        later |= passing(_mm256_load_ps(all_qx[s][0]), _mm256_load_ps(all_q2[s][0]), score, valid) |
                 passing(_mm256_load_ps(all_qx[s][1]), _mm256_load_ps(all_q2[s][1]), score, valid);
    }
    if (later != 0) return iq1s_split_sequential(sumx_in, sumw_in, max, best);
    best.scale = scale;
    best.i1 = step_i1[cs];
    best.i2 = step_i2[cs] + cj;
    best.shift = cm == 0 ? 1 : -1;
}

// iq1_m: per half h (prefix sums at 17 * h) and shift s, the closed form of scalar_iq1m_split
//   qx[h][s] = top_x[h][s] - (sumx[h][i1] + sumx[h][i2])
//   q2[h][s] = d12[s] * sumw[h][i2] + (d01[s] * sumw[h][i1] + top_w[h][s])
// and combination k's sums qx[0][k / 2] + qx[1][k % 2], likewise q2; per pair k = 0..3 in order.
void iq1m_split_sequential(const float* sumx_in, const float* sumw_in, float max, iq1_split& best) {
    constexpr int bs = 16;
    float sumx[2][bs + 1 + 8] = {}, sumw[2][bs + 1 + 8] = {};
    for (int h = 0; h < 2; ++h) {
        for (int i = 0; i <= bs; ++i) {
            sumx[h][i] = sumx_in[(bs + 1) * h + i];
            sumw[h][i] = sumw_in[(bs + 1) * h + i];
        }
    }
    float top_x[2][2], top_w[2][2], d01[2], d12[2];
    for (int s = 0; s < 2; ++s) {
        const float* l = s == 0 ? x_p : x_m;
        d01[s] = l[0] * l[0] - l[1] * l[1];
        d12[s] = l[1] * l[1] - l[2] * l[2];
        for (int h = 0; h < 2; ++h) {
            top_x[h][s] = sumx[h][bs] * l[2];
            top_w[h][s] = sumw[h][bs] * l[2] * l[2];
        }
    }
    float best_score = -FLT_MAX;
    best = iq1_split{};
    best.scale = max;
    for (int i1 = 0; i1 <= bs; ++i1) {
        __m256 tx[2][2], cw[2][2], dw[2];
        for (int s = 0; s < 2; ++s) {
            dw[s] = _mm256_set1_ps(d12[s]);
            for (int h = 0; h < 2; ++h) {
                tx[h][s] = _mm256_set1_ps(top_x[h][s]);
                cw[h][s] = _mm256_set1_ps(d01[s] * sumw[h][i1] + top_w[h][s]);  // the i1 term, scalar as in ggml
            }
        }
        const __m256 x1[2] = {_mm256_set1_ps(sumx[0][i1]), _mm256_set1_ps(sumx[1][i1])};
        for (int i2 = i1; i2 <= bs; i2 += 8) {
            const int count = bs + 1 - i2 < 8 ? bs + 1 - i2 : 8;
            __m256 qx[2][2], q2[2][2];
            for (int h = 0; h < 2; ++h) {
                const __m256 px = _mm256_add_ps(x1[h], _mm256_loadu_ps(sumx[h] + i2));
                const __m256 w2 = _mm256_loadu_ps(sumw[h] + i2);
                for (int s = 0; s < 2; ++s) {
                    qx[h][s] = _mm256_sub_ps(tx[h][s], px);
                    q2[h][s] = _mm256_add_ps(_mm256_mul_ps(dw[s], w2), cw[h][s]);
                }
            }
            __m256 sqx[4], sq2[4];
            for (int k = 0; k < 4; ++k) {
                sqx[k] = _mm256_add_ps(qx[0][k / 2], qx[1][k % 2]);
                sq2[k] = _mm256_add_ps(q2[0][k / 2], q2[1][k % 2]);
            }
            const __m256 valid = first_lanes(count);
            // Bit 4j + k: lane j, combination k (ggml's order within the step).
            auto pass = [&] {
                std::uint32_t bits = 0;
                for (int k = 0; k < 4; ++k) bits |= _pdep_u32(passing(sqx[k], sq2[k], best_score, valid), 0x11111111u << k);
                return bits;
            };
            std::uint32_t todo = pass();
            if (todo == 0) continue;
            float vx[4][8], v2[4][8];
            for (int k = 0; k < 4; ++k) {
                _mm256_storeu_ps(vx[k], sqx[k]);
                _mm256_storeu_ps(v2[k], sq2[k]);
            }
            while (todo != 0) {
                const int bit = __builtin_ctz(todo);
                const int j = bit / 4, k = bit % 4;
                take(vx[k][j], v2[k][j], i1, i2 + j, k, best_score, best);
                todo = pass() & ~((2u << bit) - 1);  // 2u << 31 is 0: nothing after the last bit
            }
        }
    }
}


// iq1_m's split search without the sequential choice, when it can be shown to give the same result.
// A group has about 28 candidates that pass their test against the best so far (the score rises
// along ggml's order), and each of those costs the sequential search a division and a new test of
// the step's other candidates, one after the other. Instead, every candidate's score
// f = (sumqx / sumq2) * sumqx (what ggml's best_score becomes if it takes it) is computed in lanes,
// and c = the first candidate of the largest score is checked to be what the sequential choice ends on:
//  (a) fl(qx_c * qx_c) > fl(F * q2_c), F the largest score among the other candidates with
//      sumq2 > 0 (and at least -FLT_MAX, ggml's starting best). The best when the scan reaches c is
//      the score of a candidate before c that was taken (taken ones have sumq2 > 0, so their score is
//      at most F) or -FLT_MAX; rounding is monotone, so fl(best * q2_c) <= fl(F * q2_c) (q2_c > 0)
//      and c passes its test: it is taken, with best_score = f_c.
//  (b) no candidate after c passes ggml's test against f_c: the exact test, in lanes.
// Then the sequential choice takes c and nothing after it: the same scale, cut points and shift. A
// NaN score, or either check failing (near-equal scores, where rounding decides), runs the
// sequential search instead.
void iq1m_split_lanes(const float* sumx_in, const float* sumw_in, float max, iq1_split& best) {
    constexpr int bs = 16;
    constexpr int max_steps = 27;  // ceil((17 - i1) / 8) summed over i1 = 0..16
    float sumx[2][bs + 1 + 8] = {}, sumw[2][bs + 1 + 8] = {};
    for (int h = 0; h < 2; ++h) {
        for (int i = 0; i <= bs; ++i) {
            sumx[h][i] = sumx_in[(bs + 1) * h + i];
            sumw[h][i] = sumw_in[(bs + 1) * h + i];
        }
    }
    float top_x[2][2], top_w[2][2], d01[2], d12[2];
    for (int s = 0; s < 2; ++s) {
        const float* l = s == 0 ? x_p : x_m;
        d01[s] = l[0] * l[0] - l[1] * l[1];
        d12[s] = l[1] * l[1] - l[2] * l[2];
        for (int h = 0; h < 2; ++h) {
            top_x[h][s] = sumx[h][bs] * l[2];
            top_w[h][s] = sumw[h][bs] * l[2] * l[2];
        }
    }
    // Every step's candidates (combination k of lane j: ggml's bit 4j + k), its sums and scores
    // (-FLT_MAX where sumq2 > 0 fails or past the step's count).
    alignas(32) float all_qx[max_steps][4][8], all_q2[max_steps][4][8], all_f[max_steps][4][8];
    int step_i1[max_steps], step_i2[max_steps], step_count[max_steps];
    int steps = 0;
    const __m256 lowest = _mm256_set1_ps(-FLT_MAX);
    // Per lane the two largest scores (a multiset: equal ones twice), in two pairs of accumulators
    // (combinations 0, 1 and 2, 3) so that the max chains overlap; merged below.
    __m256 top1[2] = {lowest, lowest}, top2[2] = {lowest, lowest};
    __m256 nan = _mm256_setzero_ps();
    for (int i1 = 0; i1 <= bs; ++i1) {
        __m256 tx[2][2], cw[2][2], dw[2];
        for (int s = 0; s < 2; ++s) {
            dw[s] = _mm256_set1_ps(d12[s]);
            for (int h = 0; h < 2; ++h) {
                tx[h][s] = _mm256_set1_ps(top_x[h][s]);
                cw[h][s] = _mm256_set1_ps(d01[s] * sumw[h][i1] + top_w[h][s]);
            }
        }
        const __m256 x1[2] = {_mm256_set1_ps(sumx[0][i1]), _mm256_set1_ps(sumx[1][i1])};
        for (int i2 = i1; i2 <= bs; i2 += 8, ++steps) {
            const int count = bs + 1 - i2 < 8 ? bs + 1 - i2 : 8;
            step_i1[steps] = i1;
            step_i2[steps] = i2;
            step_count[steps] = count;
            __m256 qx[2][2], q2[2][2];
            for (int h = 0; h < 2; ++h) {
                const __m256 px = _mm256_add_ps(x1[h], _mm256_loadu_ps(sumx[h] + i2));
                const __m256 w2 = _mm256_loadu_ps(sumw[h] + i2);
                for (int s = 0; s < 2; ++s) {
                    qx[h][s] = _mm256_sub_ps(tx[h][s], px);
                    q2[h][s] = _mm256_add_ps(_mm256_mul_ps(dw[s], w2), cw[h][s]);
                }
            }
            const __m256 valid = first_lanes(count);
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) {
                const __m256 sqx = _mm256_add_ps(qx[0][k / 2], qx[1][k % 2]);
                const __m256 sq2 = _mm256_add_ps(q2[0][k / 2], q2[1][k % 2]);
                const __m256 f = _mm256_mul_ps(_mm256_div_ps(sqx, sq2), sqx);  // ggml's scale, then best_score
                const __m256 can = _mm256_and_ps(valid, _mm256_cmp_ps(sq2, _mm256_setzero_ps(), _CMP_GT_OQ));
                nan = _mm256_or_ps(nan, _mm256_and_ps(can, _mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
                const __m256 fm = _mm256_blendv_ps(lowest, f, can);
                top2[k / 2] = _mm256_max_ps(top2[k / 2], _mm256_min_ps(top1[k / 2], fm));
                top1[k / 2] = _mm256_max_ps(top1[k / 2], fm);
                _mm256_store_ps(all_qx[steps][k], sqx);
                _mm256_store_ps(all_q2[steps][k], sq2);
                _mm256_store_ps(all_f[steps][k], fm);
            }
        }
    }
    if (_mm256_movemask_ps(nan) != 0) return iq1m_split_sequential(sumx_in, sumw_in, max, best);
    // The largest score M and the largest among the others F, over the 8 lanes' pairs.
    alignas(32) float t1[8], t2[8];
    _mm256_store_ps(t1, _mm256_max_ps(top1[0], top1[1]));
    _mm256_store_ps(t2, _mm256_max_ps(_mm256_min_ps(top1[0], top1[1]), _mm256_max_ps(top2[0], top2[1])));
    float M = t1[0], F = t2[0];
    for (int j = 1; j < 8; ++j) {
        const float lo = t1[j] < M ? t1[j] : M;
        M = t1[j] < M ? M : t1[j];
        F = F < lo ? lo : F;
        F = F < t2[j] ? t2[j] : F;
    }
    best = iq1_split{};
    best.scale = max;
    if (M == -FLT_MAX) return;  // no candidate has sumq2 > 0 (a score is >= 0 or NaN): ggml takes none
    // c: the first candidate scoring M, in ggml's order.
    const __m256 vM = _mm256_set1_ps(M);
    int cs = 0, bit = -1;
    for (; cs < steps && bit < 0; ++cs) {
        __m256 eq[4];
        for (int k = 0; k < 4; ++k) eq[k] = _mm256_cmp_ps(_mm256_load_ps(all_f[cs][k]), vM, _CMP_EQ_OQ);
        if (_mm256_movemask_ps(_mm256_or_ps(_mm256_or_ps(eq[0], eq[1]), _mm256_or_ps(eq[2], eq[3]))) == 0) continue;
        std::uint32_t bits = 0;
        for (int k = 0; k < 4; ++k) bits |= _pdep_u32(static_cast<unsigned>(_mm256_movemask_ps(eq[k])), 0x11111111u << k);
        bit = __builtin_ctz(bits);
    }
    if (bit < 0) return iq1m_split_sequential(sumx_in, sumw_in, max, best);  // not reached: M is a score
    --cs;
    const int cj = bit / 4, ck = bit % 4;
    const float qx_c = all_qx[cs][ck][cj], q2_c = all_q2[cs][ck][cj];
    if (!(qx_c * qx_c > F * q2_c)) return iq1m_split_sequential(sumx_in, sumw_in, max, best);  // (a)
    const float score = (qx_c / q2_c) * qx_c;  // ggml's update on taking c
    const float scale = qx_c / q2_c;
    std::uint32_t later = 0;  // (b): c's own step by bit position, then whole steps
    for (int k = 0; k < 4; ++k)
        later |= _pdep_u32(passing(_mm256_load_ps(all_qx[cs][k]), _mm256_load_ps(all_q2[cs][k]), score, first_lanes(step_count[cs])),
                           0x11111111u << k);
    later &= ~((2u << bit) - 1);  // 2u << 31 is 0: nothing after the last bit
    for (int s = cs + 1; s < steps; ++s) {
        const __m256 valid = first_lanes(step_count[s]);
        for (int k = 0; k < 4; ++k) later |= passing(_mm256_load_ps(all_qx[s][k]), _mm256_load_ps(all_q2[s][k]), score, valid);
    }
    if (later != 0) return iq1m_split_sequential(sumx_in, sumw_in, max, best);
    best.scale = scale;
    best.i1 = step_i1[cs];
    best.i2 = step_i2[cs] + cj;
    best.shift = ck;
}


// A stable ascending sort of n = 8 * Vectors values without NaN, as ranks: value i goes to place
// #{j : x_j < x_i} + #{j < i : x_j == x_i}. The merge sort (stable, comparing by value only) puts
// it there too: without NaN, `<` orders the values (with -0 == +0 equal) and a stable sort's result
// is the only one that keeps equal values in index order. Counted per j over all i in lanes: j
// counts for i when x_j < x_i if i < j, x_j <= x_i if i > j.
template <unsigned Vectors>
bool order_lanes(const float* x, std::uint8_t* order) {
    constexpr int n = 8 * static_cast<int>(Vectors);
    __m256 v[Vectors];
    __m256 nan = _mm256_setzero_ps();
    for (unsigned m = 0; m < Vectors; ++m) {
        v[m] = _mm256_loadu_ps(x + 8 * m);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[m], v[m], _CMP_UNORD_Q));
    }
    if (_mm256_movemask_ps(nan) != 0) return false;
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i rank[Vectors];
    for (unsigned m = 0; m < Vectors; ++m) rank[m] = _mm256_setzero_si256();
    for (int j = 0; j < n; ++j) {
        const __m256 xj = _mm256_set1_ps(x[j]);
        const unsigned mj = static_cast<unsigned>(j) / 8;
        for (unsigned m = 0; m < Vectors; ++m) {
            __m256 counts;
            if (m < mj) {
                counts = _mm256_cmp_ps(xj, v[m], _CMP_LT_OQ);
            } else if (m > mj) {
                counts = _mm256_cmp_ps(xj, v[m], _CMP_LE_OQ);
            } else {
                const __m256 after = _mm256_castsi256_ps(_mm256_cmpgt_epi32(iota, _mm256_set1_epi32(j % 8)));
                counts = _mm256_blendv_ps(_mm256_cmp_ps(xj, v[m], _CMP_LT_OQ), _mm256_cmp_ps(xj, v[m], _CMP_LE_OQ), after);
            }
            rank[m] = _mm256_sub_epi32(rank[m], _mm256_castps_si256(counts));
        }
    }
    alignas(32) std::int32_t r[8 * Vectors];
    for (unsigned m = 0; m < Vectors; ++m) _mm256_store_si256(reinterpret_cast<__m256i*>(r + 8 * m), rank[m]);
    for (int i = 0; i < n; ++i) order[r[i]] = static_cast<std::uint8_t>(i);
    return true;
}

bool iq1_order_lanes(const float* x, int n, std::uint8_t* order) {
    return n == 32 ? order_lanes<4>(x, order) : order_lanes<2>(x, order);
}

}  // namespace

iq1_split_fn avx2_iq1s_split() noexcept { return iq1s_split_lanes; }
iq1_split_fn avx2_iq1m_split() noexcept { return iq1m_split_lanes; }
iq1_order_fn avx2_iq1_order() noexcept { return iq1_order_lanes; }

#else
iq1_split_fn avx2_iq1s_split() noexcept { return nullptr; }
iq1_split_fn avx2_iq1m_split() noexcept { return nullptr; }
iq1_order_fn avx2_iq1_order() noexcept { return nullptr; }
#endif

}  // namespace minfer::quant::detail
