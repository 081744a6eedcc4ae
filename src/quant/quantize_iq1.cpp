// iq1_s and iq1_m: ggml's quantize_iq1_s / quantize_iq1_m (ggml-quants.c), byte for byte. See
// quantize_iq.cpp for the conventions (ggml's arithmetic in its order, its tie-breaking, a row
// fails where ggml asserts). iq1_m's split search follows the library we are judged against, not
// the published source: see scalar_iq1m_split.
//
// With only three levels (-1, 0, 1, shifted by ±delta), a group's best split of its values into the
// three levels is found exhaustively: sort the values, try every pair of cut points, keep the best
// weighted least-squares score. The sort is glibc's qsort, which for arrays this small is a stable
// top-down merge sort; equal values keep their order, and which of two equal values falls on which
// side of a cut changes the bytes, so we run the same merge sort (its exact comparisons, so even NaN
// orders as in ggml). With AVX2 a group without NaN is sorted by counting each value's rank in
// lanes instead (avx2_iq1_search.cpp), which gives that stable order.
#include <cfloat>
#include <cmath>
#include <cstring>

#include "iq_arith.hpp"
#include "iq_lattice.hpp"
#include "minfer/quant/isa.hpp"
#include "quantize_iq1.hpp"

namespace minfer::quant::detail {
namespace {

using namespace iq;

constexpr float delta = 0.125f;  // IQ1S_DELTA, IQ1M_DELTA
// The three levels shifted up (x_p) or down (x_m) by delta, as ggml spells them: -1 + delta, ….
constexpr float x_p[3] = {-1 + delta, delta, 1 + delta};
constexpr float x_m[3] = {-1 - delta, -delta, 1 - delta};

struct value_at {
    float value;
    int index;
};

// glibc's msort_with_tmp on (value, index) pairs compared by value only: halves of n / 2 and the
// rest, merged taking the left element unless it compares greater.
void merge_sort(value_at* a, int n, value_at* tmp) {
    if (n <= 1) return;
    const int n1 = n / 2;
    merge_sort(a, n1, tmp);
    merge_sort(a + n1, n - n1, tmp);
    const value_at* b1 = a;
    const value_at* b2 = a + n1;
    int r1 = n1;
    int r2 = n - n1;
    int out = 0;
    while (r1 > 0 && r2 > 0) {
        const float l = b1->value;
        const float r = b2->value;
        const int cmp = l < r ? -1 : (l > r ? 1 : 0);
        if (cmp <= 0) {
            tmp[out++] = *b1++;
            --r1;
        } else {
            tmp[out++] = *b2++;
            --r2;
        }
    }
    while (r1 > 0) {
        tmp[out++] = *b1++;
        --r1;
    }
    for (int i = 0; i < out; ++i) a[i] = tmp[i];  // what is left of the right half is in place
}

// The sort a row runs (iq1_order_fn), chosen once per row: the AVX2 ranks when that set is active,
// falling back to the merge sort for a group with a NaN.
struct iq1_sort {
    iq1_order_fn lanes = nullptr;
    void operator()(const float* xb, int n, std::uint8_t* order) const {
        if (lanes == nullptr || !lanes(xb, n, order)) scalar_iq1_order(xb, n, order);
    }
};

iq1_sort sort_for_row() noexcept {
    return {active_isa() == isa::avx2 ? avx2_iq1_order() : nullptr};
}

// ggml's iq1_find_best_neighbour2: the neighbour of `entry` with the smallest weighted distance to
// xval at `scale`, the levels read through xg (the list searched by `search`: scalar_iq1_neighbour
// or its AVX2 lanes). When every distance is infinite or NaN, ggml scans
// the whole grid, but (a slip in its code) measures grid point i against xval[i], reading up to
// 2047 values past xval: we do the same while those values are in the row (`available` of them
// from xval on) and fail otherwise, as we fail where ggml then asserts. -1: fail.
int best_neighbour2(const iq_lattice& lat, iq1_neighbour_fn search, std::int32_t entry, const float* xval,
                    const float* weight, float scale, const float* xg, std::int64_t available, std::int8_t* L) {
    int best = search(lat.neighbours_of(entry), lat.packed.data(), xval, weight, scale, xg);
    float best_score = FLT_MAX;  // no candidate of the list was below it when best < 0
    if (best < 0) {
        if (available < lat.grid_size) return -1;  // ggml would read past the row
        for (int i = 0; i < lat.grid_size; ++i) {
            const std::int8_t* grid_i = lat.point(i);
            float d2 = 0;
            for (int j = 0; j < 8; ++j) {
                const float w = weight[j];
                const float q = xg[(grid_i[j] - 1) / 2];
                const float diff = scale * q - xval[i];
                d2 += w * diff * diff;
            }
            if (d2 < best_score) {
                best_score = d2;
                best = i;
            }
        }
        if (best < 0) return -1;
    }
    const std::int8_t* pg = lat.point(best);
    for (int i = 0; i < 8; ++i) L[i] = static_cast<std::int8_t>((pg[i] - 1) / 2);
    return best;
}

std::uint32_t key8(const std::int8_t* L) {
    std::uint32_t u = 0;
    for (int j = 0; j < 8; ++j) u |= static_cast<std::uint32_t>(L[j]) << (2 * j);
    return u & 0xffffu;
}

// The split search a row runs, chosen once per row: the AVX2 lanes when that set is active (the
// same result, avx2_iq1_search.cpp), else the scalar loop.
iq1_split_fn split_search(iq1_split_fn lanes, iq1_split_fn scalar) noexcept {
    return active_isa() == isa::avx2 && lanes != nullptr ? lanes : scalar;
}

iq1_neighbour_fn neighbour_search() noexcept {
    const iq1_neighbour_fn lanes = avx2_iq1_neighbour();
    return active_isa() == isa::avx2 && lanes != nullptr ? lanes : scalar_iq1_neighbour;
}

float sum_of_squares(const float* x) {
    float s = 0;
    for (int i = 0; i < qk; ++i) s += x[i] * x[i];
    return s;
}

// block_iq1_s (50 bytes): d f16, qs[32] (low 8 bits of the grid indices), qh u16[8] (3 high bits per
// index, a 3-bit group scale << 12, the shift's sign << 15).
bool iq1_s_row(const float* x, std::uint8_t* y, std::int64_t n, const float* importance) {
    if (importance == nullptr) return false;  // ggml: GGML_ASSERT(quant_weights)
    const iq_lattice& lat = iq1s_lattice();
    const iq1_split_fn search = split_search(avx2_iq1s_split(), scalar_iq1s_split);
    const iq1_neighbour_fn neighbours = neighbour_search();
    const iq1_sort sort_values = sort_for_row();
    constexpr int bs = 32;
    for (std::int64_t ibl = 0; ibl < n / qk; ++ibl, y += 50) {
        std::memset(y, 0, 50);
        std::uint16_t qh[8] = {};
        const float* xbl = x + qk * ibl;
        const float sigma2 = 2 * sum_of_squares(xbl) / qk;
        float scales[8];
        int shifts[8];
        float max_scale = 0;
        for (int ib = 0; ib < qk / bs; ++ib) {
            const float* xb = xbl + bs * ib;
            const float* qw = importance + qk * ibl + bs * ib;
            float weight[bs];
            for (int i = 0; i < bs; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            float max = std::fabs(xb[0]);
            for (int i = 1; i < bs; ++i) max = max_f(max, std::fabs(xb[i]));
            if (max < 1e-12f) {
                scales[ib] = 0;
                shifts[ib] = 1;
                continue;
            }
            std::uint8_t sorted[bs];  // the indices of the values in ascending order
            sort_values(xb, bs, sorted);
            float sumx[bs + 1];
            float sumw[bs + 1];
            sumx[0] = sumw[0] = 0;
            for (int j = 0; j < bs; ++j) {
                const int i = sorted[j];
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            iq1_split split;
            search(sumx, sumw, max, split);
            float scale = split.scale;
            const int besti1 = split.i1, besti2 = split.i2;
            int best_shift = split.shift;
            if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
                scales[ib] = 0;
                shifts[ib] = 1;
                continue;
            }
            std::int8_t L[bs];
            for (int j = 0; j < besti1; ++j) L[sorted[j]] = 0;
            for (int j = besti1; j < besti2; ++j) L[sorted[j]] = 1;
            for (int j = besti2; j < bs; ++j) L[sorted[j]] = 2;
            if (scale < 0) {
                for (auto& l : L) l = static_cast<std::int8_t>(2 - l);
                scale = -scale;
                best_shift = -best_shift;
            }
            const float* xx = best_shift == 1 ? x_p : x_m;
            bool all_on_grid = true;
            int index[bs / 8];
            for (int k = 0; k < bs / 8; ++k) {
                std::int32_t entry = lat.map[key8(L + 8 * k)];
                if (entry < 0) {
                    all_on_grid = false;
                    const std::int64_t available = n - (qk * ibl + bs * ib + 8 * k);
                    entry = best_neighbour2(lat, neighbours, entry, xb + 8 * k, weight + 8 * k, scale, xx, available, L + 8 * k);
                    if (entry < 0) return false;
                }
                index[k] = entry;
            }
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < bs / 8; ++k) {
                    const std::int8_t* pg = lat.point(index[k]);
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[(pg[j] - 1) / 2];
                        sumqx += w * q * xb[8 * k + j];
                        sumq2 += w * q * q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
            }
            std::uint32_t h = 0;
            for (int k = 0; k < bs / 8; ++k) {
                y[2 + (bs / 8) * ib + k] = static_cast<std::uint8_t>(index[k] & 255);
                h |= static_cast<std::uint32_t>(index[k] >> 8) << (3 * k);
            }
            qh[ib] = static_cast<std::uint16_t>(h);
            if (!(scale >= 0)) return false;
            scales[ib] = scale;
            shifts[ib] = best_shift;
            max_scale = max_f(max_scale, scale);
        }
        for (int ib = 0; ib < qk / bs; ++ib) store_u16(y + 34 + 2 * ib, qh[ib]);
        if (max_scale == 0) continue;
        const float d = max_scale / 15;
        store_u16(y, f16_bits(d * 1.125f));
        const float id = 1 / d;
        for (int ib = 0; ib < qk / bs; ++ib) {
            int l = clamp_i(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 7);
            if (shifts[ib] == -1) l |= 8;
            store_u16(y + 34 + 2 * ib, qh[ib] | static_cast<std::uint32_t>(l << 12));
        }
    }
    return true;
}

// The levels of half k (0 or 1) of a group with combination `shift`.
const float* iq1m_levels(int shift, int k) {
    if (k == 0) return shift < 2 ? x_p : x_m;
    return shift % 2 == 0 ? x_p : x_m;
}

void iq1m_weights(const float* xb, const float* qw, float sigma2, float* weight) {
    if (qw != nullptr) {
        for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < 16; ++i) weight[i] = xb[i] * xb[i];
    }
}

// block_iq1_m (56 bytes): qs[32] (low 8 bits of the grid indices), qh[16] (per group: 3 high bits of
// each half's index and its shift bit), scales u16[4] (3 bits per group; the f16 super-block scale
// spread over their top nibbles).
bool iq1_m_row(const float* x, std::uint8_t* y, std::int64_t n, const float* importance) {
    const iq_lattice& lat = iq1s_lattice();
    const iq1_split_fn search = split_search(avx2_iq1m_split(), scalar_iq1m_split);
    const iq1_neighbour_fn neighbours = neighbour_search();
    const iq1_sort sort_values = sort_for_row();
    constexpr int bs = 16;
    constexpr std::uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
    for (std::int64_t ibl = 0; ibl < n / qk; ++ibl, y += 56) {
        std::memset(y, 0, 56);
        std::uint8_t* qs = y;
        std::uint8_t* qh = y + 32;
        const float* xbl = x + qk * ibl;
        const float sigma2 = 2 * sum_of_squares(xbl) / qk;
        float scales[16];
        int shifts[16];
        float max_scale = 0;
        for (int ib = 0; ib < qk / bs; ++ib) {
            const float* xb = xbl + bs * ib;
            const float* qw = importance != nullptr ? importance + qk * ibl + bs * ib : nullptr;
            float weight[bs];
            iq1m_weights(xb, qw, sigma2, weight);
            float max = std::fabs(xb[0]);
            for (int i = 1; i < bs; ++i) max = max_f(max, std::fabs(xb[i]));
            if (max < 1e-7f) {
                scales[ib] = 0;
                shifts[ib] = 0;
                continue;
            }
            std::uint8_t sorted[bs];  // the indices of the values in ascending order
            sort_values(xb, bs, sorted);
            // Per half, prefix sums of w·x and w over the sorted values (see scalar_iq1m_split).
            float sumx[2][bs + 1];
            float sumw[2][bs + 1];
            sumx[0][0] = sumx[1][0] = sumw[0][0] = sumw[1][0] = 0;
            for (int j = 0; j < bs; ++j) {
                const int i = sorted[j];
                const int h = i < bs / 2 ? 0 : 1;
                sumx[h][j + 1] = sumx[h][j] + weight[i] * xb[i];
                sumw[h][j + 1] = sumw[h][j] + weight[i];
                sumx[1 - h][j + 1] = sumx[1 - h][j];
                sumw[1 - h][j + 1] = sumw[1 - h][j];
            }
            iq1_split split;
            search(&sumx[0][0], &sumw[0][0], max, split);
            if (split.i1 < 0 || split.i2 < 0 || split.shift < 0) {
                scales[ib] = 0;
                shifts[ib] = 0;
                continue;
            }
            float scale = split.scale;
            int best_k = split.shift;
            std::int8_t L[bs];
            for (int j = 0; j < split.i1; ++j) L[sorted[j]] = 0;
            for (int j = split.i1; j < split.i2; ++j) L[sorted[j]] = 1;
            for (int j = split.i2; j < bs; ++j) L[sorted[j]] = 2;
            if (scale < 0) {
                for (auto& l : L) l = static_cast<std::int8_t>(2 - l);
                scale = -scale;
                best_k = 3 - best_k;  // both halves' shifts flip: 0 <-> 3, 1 <-> 2
            }
            bool all_on_grid = true;
            int index[2];
            for (int k = 0; k < 2; ++k) {
                const float* xx = iq1m_levels(best_k, k);
                std::int32_t entry = lat.map[key8(L + 8 * k)];
                if (entry < 0) {
                    all_on_grid = false;
                    const std::int64_t available = n - (qk * ibl + bs * ib + 8 * k);
                    entry = best_neighbour2(lat, neighbours, entry, xb + 8 * k, weight + 8 * k, scale, xx, available, L + 8 * k);
                    if (entry < 0) return false;
                }
                index[k] = entry;
            }
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < 2; ++k) {
                    const float* xx = iq1m_levels(best_k, k);
                    const std::int8_t* pg = lat.point(index[k]);
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[(pg[j] - 1) / 2];
                        sumqx += w * q * xb[8 * k + j];
                        sumq2 += w * q * q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
            }
            qs[2 * ib] = static_cast<std::uint8_t>(index[0] & 255);
            qs[2 * ib + 1] = static_cast<std::uint8_t>(index[1] & 255);
            qh[ib] = static_cast<std::uint8_t>((index[0] >> 8) | ((index[1] >> 8) << 4));
            if (!(scale >= 0)) return false;
            scales[ib] = scale;
            shifts[ib] = best_k;
            max_scale = max_f(max_scale, scale);
        }
        if (max_scale == 0) continue;

        // The group scales, then the super-block scale refitted to the quantized values.
        std::uint32_t sc[4] = {};
        float d = max_scale / 15;
        const float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int ib = 0; ib < qk / bs; ++ib) {
            const int l = clamp_i(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 7);
            sc[ib / 4] |= static_cast<std::uint32_t>(l) << (3 * (ib % 4));
            qh[ib] = static_cast<std::uint8_t>(qh[ib] | masks[shifts[ib]]);
            const float* xb = xbl + bs * ib;
            float weight[bs];
            iq1m_weights(xb, importance != nullptr ? importance + qk * ibl + bs * ib : nullptr, sigma2, weight);
            for (int k = 0; k < 2; ++k) {
                const float* xx = iq1m_levels(shifts[ib], k);
                const int g = qs[2 * ib + k] + ((qh[ib] << (8 - 4 * k)) & 0x700);
                const std::int8_t* pg = lat.point(g);
                for (int j = 0; j < 8; ++j) {
                    const float w = weight[8 * k + j];
                    const float q = xx[(pg[j] - 1) / 2] * static_cast<float>(2 * l + 1);
                    sumqx += w * q * xb[8 * k + j];
                    sumq2 += w * q * q;
                }
            }
        }
        if (sumq2 > 0) d = sumqx / sumq2;
        const std::uint32_t s = f16_bits(d * 1.1125f);
        sc[0] |= (s & 0x000fu) << 12;
        sc[1] |= (s & 0x00f0u) << 8;
        sc[2] |= (s & 0x0f00u) << 4;
        sc[3] |= (s & 0xf000u);
        for (int i = 0; i < 4; ++i) store_u16(y + 48 + 2 * i, sc[i]);
    }
    return true;
}

template <bool (*Row)(const float*, std::uint8_t*, std::int64_t, const float*), std::int64_t BlockBytes>
std::int64_t rows(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row, const float* importance) {
    const std::int64_t row_bytes = n_per_row / qk * BlockBytes;
    for (std::int64_t r = 0; r < n_rows; ++r)
        if (!Row(src + r * n_per_row, dst + r * row_bytes, n_per_row, importance)) return r;
    return -1;
}

}  // namespace

bool scalar_iq1_order(const float* x, int n, std::uint8_t* order) {
    value_at sorted[32], tmp[32];
    for (int j = 0; j < n; ++j) sorted[j] = {x[j], j};
    merge_sort(sorted, n, tmp);
    for (int j = 0; j < n; ++j) order[j] = static_cast<std::uint8_t>(sorted[j].index);
    return true;
}

// ggml's loop over the neighbour list in iq1_find_best_neighbour2 (the coordinates read from the
// packed points: the same values as lat.point's), a strict `<` keeping the first of equal distances.
int scalar_iq1_neighbour(const std::uint16_t* list, const std::uint32_t* packed, const float* xval, const float* weight,
                         float scale, const float* levels) {
    const int count = list[0];
    float best_score = FLT_MAX;
    int best = -1;
    for (int j = 1; j <= count; ++j) {
        const std::uint32_t p = packed[list[j]];
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            const float q = levels[(static_cast<int>((p >> (4 * i)) & 15u) - 1) / 2];
            const float w = weight[i];
            const float diff = scale * q - xval[i];
            d2 += w * diff * diff;
        }
        if (d2 < best_score) {
            best_score = d2;
            best = list[j];
        }
    }
    return best;
}

// ggml's loop over the cut points of a group of 32 (quantize_row_iq1_s_impl), each candidate's sums
// re-summed from the prefix sums in its order.
void scalar_iq1s_split(const float* sumx, const float* sumw, float max, iq1_split& best) {
    constexpr int bs = 32;
    float best_score = -FLT_MAX;
    best = iq1_split{};
    best.scale = max;
    for (int i1 = 0; i1 <= bs; ++i1) {
        for (int i2 = i1; i2 <= bs; ++i2) {
            float sumqx = (sumx[i1] - sumx[0]) * x_p[0] + (sumx[i2] - sumx[i1]) * x_p[1] + (sumx[bs] - sumx[i2]) * x_p[2];
            float sumq2 = (sumw[i1] - sumw[0]) * x_p[0] * x_p[0] + (sumw[i2] - sumw[i1]) * x_p[1] * x_p[1] +
                          (sumw[bs] - sumw[i2]) * x_p[2] * x_p[2];
            if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                best.scale = sumqx / sumq2;
                best_score = best.scale * sumqx;
                best.i1 = i1;
                best.i2 = i2;
                best.shift = 1;
            }
            sumqx = (sumx[i1] - sumx[0]) * x_m[0] + (sumx[i2] - sumx[i1]) * x_m[1] + (sumx[bs] - sumx[i2]) * x_m[2];
            sumq2 = (sumw[i1] - sumw[0]) * x_m[0] * x_m[0] + (sumw[i2] - sumw[i1]) * x_m[1] * x_m[1] +
                    (sumw[bs] - sumw[i2]) * x_m[2] * x_m[2];
            if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                best.scale = sumqx / sumq2;
                best_score = best.scale * sumqx;
                best.i1 = i1;
                best.i2 = i2;
                best.shift = -1;
            }
        }
    }
}

// The iq1_m split search for one group of 16 (its prefix sums made by iq1_m_row): the four sign combinations of the two halves' shifts
// (k: bit 1 the first half's, bit 0 the second's, set = shifted down) at once. The published ggml
// source re-sums all 16 terms for every pair of cut points, but the library we are judged against
// (read off its machine code) does not: it keeps, for each half, prefix sums of w·x and w over the
// sorted values (a value of the other half carries the previous sum on), and builds each half's
// sums in closed form. The three levels of a shift are 1 apart, so with P, Q the prefix sums at the
// two cut points and X, W the half's totals:
//   sumqx = X·l2 - (P + Q),   sumq2 = (l1² - l2²)·W(i2) + ((l0² - l1²)·W(i1) + (W·l2)·l2),
// each level difference squared taken as float, and a combination's sums are the first half's plus
// the second's. Those roundings, not the published loop's, decide the split, so we compute exactly
// these operations in this order.
void scalar_iq1m_split(const float* sumx_flat, const float* sumw_flat, float max, iq1_split& best) {
    constexpr int bs = 16;
    const float* sumx[2] = {sumx_flat, sumx_flat + bs + 1};
    const float* sumw[2] = {sumw_flat, sumw_flat + bs + 1};
    // Per half h and shift s (0 up, 1 down): the terms that do not depend on the cut points.
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
        for (int i2 = i1; i2 <= bs; ++i2) {
            float qx[2][2], q2[2][2];
            for (int h = 0; h < 2; ++h) {
                for (int s = 0; s < 2; ++s) {
                    qx[h][s] = top_x[h][s] - (sumx[h][i1] + sumx[h][i2]);
                    q2[h][s] = d12[s] * sumw[h][i2] + (d01[s] * sumw[h][i1] + top_w[h][s]);
                }
            }
            for (int k = 0; k < 4; ++k) {
                const int s0 = k / 2;
                const int s1 = k % 2;
                const float sumqx = qx[0][s0] + qx[1][s1];
                const float sumq2 = q2[0][s0] + q2[1][s1];
                if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                    best.scale = sumqx / sumq2;
                    best_score = best.scale * sumqx;
                    best.i1 = i1;
                    best.i2 = i2;
                    best.shift = k;
                }
            }
        }
    }
}

row_quantizer iq1_s_quantizer() noexcept { return rows<iq1_s_row, 50>; }
row_quantizer iq1_m_quantizer() noexcept { return rows<iq1_m_row, 56>; }

}  // namespace minfer::quant::detail
