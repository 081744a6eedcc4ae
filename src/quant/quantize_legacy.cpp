// The quantizers of the plain and 32-value-block types: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1,
// q8_0, q1_0, q2_0, mxfp4, nvfp4, iq4_nl, iq4_xs, tq1_0 and tq2_0. Each is written from ggml's
// reference quantizer of the same type (ggml-quants.c) and keeps its float operations, their order
// and its comparisons (strict or not), because the output has to be those bytes exactly; the
// comments say what each step is for. Built with -ffp-contract=off, as ggml is.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "minfer/quant/isa.hpp"
#include "quantize_basic.hpp"

namespace minfer::quant::detail::qb {
namespace {

using gguf::tensor_type;

// ---- plain types: value by value over the whole input (ggml converts all rows in one call) ----

std::int64_t copy_f32(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row, const float*) {
    std::memcpy(dst, src, static_cast<std::size_t>(n_rows * n_per_row) * sizeof(float));
    return -1;
}

std::int64_t to_f16(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row, const float*) {
    const std::int64_t n = n_rows * n_per_row;
    for (std::int64_t i = 0; i < n; ++i) store_u16(dst + 2 * i, f32_to_f16(src[i]));
    return -1;
}

std::int64_t to_bf16(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row, const float*) {
    const std::int64_t n = n_rows * n_per_row;
    for (std::int64_t i = 0; i < n; ++i) store_u16(dst + 2 * i, f32_to_bf16(src[i]));
    return -1;
}

// ---- 32-value blocks without importance weights (quantize_row_*_ref) ----

/// The value of largest magnitude, with its sign: the first one reached when several tie. A NaN
/// is never taken (the comparison `amax < |v|` is false for it).
float signed_absmax(const float* x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

// q4_0: d = max / -8 maps the extreme value to level -8 exactly (the asymmetric end); the others
// round by +8.5 and truncation.
void q4_0_block(const float* x, std::uint8_t* y) {
    const float d = signed_absmax(x, 32) / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(y, d);
    for (int j = 0; j < 16; ++j) {
        const float x0 = x[j] * id;
        const float x1 = x[16 + j] * id;
        const std::uint8_t q0 = static_cast<std::uint8_t>(std::min<int>(15, trunc_i8(x0 + 8.5f)));
        const std::uint8_t q1 = static_cast<std::uint8_t>(std::min<int>(15, trunc_i8(x1 + 8.5f)));
        y[2 + j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
    }
}

// The smallest and largest value (FLT_MAX / -FLT_MAX when all are NaN).
void min_max(const float* x, int n, float& min, float& max) {
    min = FLT_MAX;
    max = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
}

// q4_1: the 16 levels span [min, max].
void q4_1_block(const float* x, std::uint8_t* y) {
    float min, max;
    min_max(x, 32, min, max);
    const float d = (max - min) / 15;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(y, d);
    store_f16(y + 2, min);
    for (int j = 0; j < 16; ++j) {
        const float x0 = (x[j] - min) * id;
        const float x1 = (x[16 + j] - min) * id;
        const std::uint8_t q0 = static_cast<std::uint8_t>(std::min<int>(15, trunc_i8(x0 + 0.5f)));
        const std::uint8_t q1 = static_cast<std::uint8_t>(std::min<int>(15, trunc_i8(x1 + 0.5f)));
        y[4 + j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
    }
}

// The 5-bit types keep four bits in qs and the fifth in a 32-bit mask: bit j for value j.
void pack_5bit(const std::uint8_t* q, std::uint8_t* qh_field, std::uint8_t* qs) {
    std::uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        qs[j] = static_cast<std::uint8_t>((q[j] & 0x0f) | ((q[16 + j] & 0x0f) << 4));
        qh |= ((q[j] & 0x10u) >> 4) << j;
        qh |= ((q[16 + j] & 0x10u) >> 4) << (j + 16);
    }
    store_u32(qh_field, qh);
}

void q5_0_block(const float* x, std::uint8_t* y) {
    const float d = signed_absmax(x, 32) / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(y, d);
    std::uint8_t q[32];
    for (int j = 0; j < 32; ++j) q[j] = static_cast<std::uint8_t>(std::min<int>(31, trunc_i8(x[j] * id + 16.5f)));
    pack_5bit(q, y + 2, y + 6);
}

void q5_1_block(const float* x, std::uint8_t* y) {
    float min, max;
    min_max(x, 32, min, max);
    const float d = (max - min) / 31;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(y, d);
    store_f16(y + 2, min);
    std::uint8_t q[32];
    for (int j = 0; j < 32; ++j) q[j] = trunc_u8((x[j] - min) * id + 0.5f);  // no clamp in ggml either
    pack_5bit(q, y + 4, y + 8);
}

// q8_0: symmetric, 127 levels each side, rounded half away from zero (roundf). Unlike the others
// a NaN does reach amax here (ggml's MAX(amax, |v|) takes the second operand when the test fails).
void q8_0_block(const float* x, std::uint8_t* y) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = max_as_ggml(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(y, d);
    for (int j = 0; j < 32; ++j) y[2 + j] = static_cast<std::uint8_t>(round_i32(x[j] * id) & 0xff);
}

// q1_0 (128 values): the scale is the mean magnitude, each bit the sign (0 counts as positive).
void q1_0_block(const float* x, std::uint8_t* y) {
    float sum_abs = 0.0f;
    for (int j = 0; j < 128; ++j) sum_abs += std::fabs(x[j]);
    store_f16(y, sum_abs / 128);
    for (int j = 0; j < 16; ++j) y[2 + j] = 0;
    for (int j = 0; j < 128; ++j)
        if (x[j] >= 0.0f) y[2 + j / 8] = static_cast<std::uint8_t>(y[2 + j / 8] | (1u << (j % 8)));
}

// q2_0 (64 values): levels -1, 0, 1, 2 times the largest magnitude.
void q2_0_block(const float* x, std::uint8_t* y) {
    float amax = 0.0f;
    for (int j = 0; j < 64; ++j) {
        const float a = std::fabs(x[j]);
        if (a > amax) amax = a;
    }
    const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
    store_f16(y, amax);
    for (int j = 0; j < 16; ++j) y[2 + j] = 0;
    for (int j = 0; j < 64; ++j) {
        int q = round_i32(x[j] * id) + 1;  // wraps like ggml's int for INT32_MIN + 1
        q = q < 0 ? 0 : (q > 3 ? 3 : q);
        y[2 + j / 4] = static_cast<std::uint8_t>(y[2 + j / 4] | (q << (2 * (j % 4))));
    }
}

// ---- fp4 (mxfp4, nvfp4): the nearest of the 16 doubled E2M1 values, first on ties ----

constexpr std::int8_t fp4_doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

std::uint8_t nearest_fp4(float x, float e) {
    std::uint8_t best = 0;
    float best_err = std::fabs(fp4_doubled[0] * e - x);
    for (std::uint8_t i = 1; i < 16; ++i) {
        const float err = std::fabs(fp4_doubled[i] * e - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

// mxfp4: an E8M0 exponent such that the largest magnitude lands in [4, 8) times the (halved) scale.
void mxfp4_block(const float* x, std::uint8_t* y) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
    // floorf(log2f(amax)) - 2 + 127 as float, then ggml's (uint8_t) cast (low byte; see trunc_u8).
    const std::uint8_t e = amax > 0.0f ? trunc_u8(std::floor(std::log2(amax)) - 2 + 127) : 0;
    const float d = e8m0_to_f32_half(e);
    y[0] = e;
    for (int j = 0; j < 16; ++j)
        y[1 + j] = static_cast<std::uint8_t>(nearest_fp4(x[j], d) | (nearest_fp4(x[16 + j], d) << 4));
}

// UE4M3 (4 exponent bits, bias 7, 3 mantissa bits, no Inf/NaN) of a positive scale, rounding the
// mantissa half up and saturating at 0x7e (448), as ggml_fp32_to_ue4m3.
std::uint8_t to_ue4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    const std::uint32_t b = bits_of(x);
    int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 7;
    if (exp <= 0) {  // subnormal: man * 2^-9
        const int man = trunc_i32(x * 512.0f + 0.5f);
        if (man < 1) return 0;
        return static_cast<std::uint8_t>(man > 7 ? 7 : man);
    }
    if (exp >= 15) return 0x7e;
    int man = static_cast<int>((b >> 20) & 7) + static_cast<int>((b >> 19) & 1);
    if (man > 7) {
        man = 0;
        if (++exp >= 15) return 0x7e;
    }
    return static_cast<std::uint8_t>((exp << 3) | man);
}

// nvfp4 (64 values): four 16-value sub-blocks, each with a UE4M3 scale amax / 6.
void nvfp4_block(const float* x, std::uint8_t* y) {
    for (int s = 0; s < 4; ++s) {
        const float* xb = x + 16 * s;
        float amax = 0.0f;
        for (int j = 0; j < 16; ++j)
            if (amax < std::fabs(xb[j])) amax = std::fabs(xb[j]);
        const std::uint8_t ue = to_ue4m3(amax / 6.0f);
        y[s] = ue;
        const float d = ue4m3_to_f32_half(ue);
        for (int j = 0; j < 8; ++j)
            y[4 + 8 * s + j] = static_cast<std::uint8_t>(nearest_fp4(xb[j], d) | (nearest_fp4(xb[8 + j], d) << 4));
    }
}

// ---- ternary types (256 values): levels -1, 0, 1 times the largest magnitude ----

float absmax_propagating(const float* x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; ++j) amax = max_as_ggml(amax, std::fabs(x[j]));
    return amax;
}

// The trit of x: lroundf(x * id) + 1, narrowed to int as ggml does (the same libm lroundf).
int trit(float v, float id) { return static_cast<int>(static_cast<std::uint32_t>(std::lround(v * id)) + 1u); }

// tq1_0: five trits per byte as a base-3 fraction of 256 (rounded up), so that byte * 3^n keeps
// trit n in its top bits; the last 16 values four per byte.
void tq1_0_block(const float* x, std::uint8_t* y) {
    const float d = absmax_propagating(x, 256);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    auto encode = [](std::uint8_t q) { return static_cast<std::uint8_t>((static_cast<std::uint16_t>(q) * 256 + 242) / 243); };
    for (int m = 0; m < 32; ++m) {  // values 0..159: byte m holds values m, m+32, …, m+128
        std::uint8_t q = 0;
        for (int n = 0; n < 5; ++n) q = static_cast<std::uint8_t>(q * 3 + trit(x[m + 32 * n], id));
        y[m] = encode(q);
    }
    x += 160;
    for (int m = 0; m < 16; ++m) {  // values 160..239
        std::uint8_t q = 0;
        for (int n = 0; n < 5; ++n) q = static_cast<std::uint8_t>(q * 3 + trit(x[m + 16 * n], id));
        y[32 + m] = encode(q);
    }
    x += 80;
    for (int j = 0; j < 4; ++j) {  // values 240..255, the first trit moved to the top
        std::uint8_t q = 0;
        for (int m = 0; m < 4; ++m) q = static_cast<std::uint8_t>(q * 3 + trit(x[j + 4 * m], id));
        y[48 + j] = encode(static_cast<std::uint8_t>(q * 3));
    }
    store_f16(y + 52, d);
}

// tq2_0: two bits per value, value m + 32n of each 128 in bits 2n of byte m.
void tq2_0_block(const float* x, std::uint8_t* y) {
    const float d = absmax_propagating(x, 256);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int h = 0; h < 2; ++h, x += 128) {
        for (int m = 0; m < 32; ++m) {
            std::uint8_t q = 0;
            for (int n = 0; n < 4; ++n) q = static_cast<std::uint8_t>(q + ((trit(x[m + 32 * n], id) & 3) << (2 * n)));
            y[32 * h + m] = q;
        }
    }
    store_f16(y + 64, d);
}

// ---- weighted legacy types (quantize_row_*_impl, row by row) ----

/// sigma2 of a whole row: the mean square (ggml adds it to each x^2 under the square root of the
/// weight, so that values near zero keep some weight).
float row_mean_square(const float* x, std::int64_t n) {
    float sum_x2 = 0.0f;
    for (std::int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
    return sum_x2 / static_cast<float>(n);
}

void block_weights(const float* x, const float* qw, float sigma2, float* w) {
    for (int j = 0; j < 32; ++j) w[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
}

void q4_0_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    const float sigma2 = row_mean_square(x, n);
    float w[32];
    std::int8_t L[32];
    for (std::int64_t b = 0; b < n / 32; ++b, x += 32, qw += 32, y += 18) {
        block_weights(x, qw, sigma2, w);
        store_f16(y, fit_symmetric(32, 8, x, L, w));
        for (int j = 0; j < 16; ++j) y[2 + j] = static_cast<std::uint8_t>(L[j] | (L[16 + j] << 4));
    }
}

void q5_0_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    const float sigma2 = row_mean_square(x, n);
    float w[32];
    std::int8_t L[32];
    for (std::int64_t b = 0; b < n / 32; ++b, x += 32, qw += 32, y += 22) {
        block_weights(x, qw, sigma2, w);
        store_f16(y, fit_symmetric(32, 16, x, L, w));
        std::uint8_t q[32];
        for (int j = 0; j < 32; ++j) q[j] = static_cast<std::uint8_t>(L[j]);
        pack_5bit(q, y + 2, y + 6);
    }
}

void q4_1_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    const float sigma2 = row_mean_square(x, n);
    float w[32];
    std::uint8_t L[32], Laux[32];
    for (std::int64_t b = 0; b < n / 32; ++b, x += 32, qw += 32, y += 20) {
        block_weights(x, qw, sigma2, w);
        float min;
        const float d = fit_with_min(32, 15, x, w, L, &min, Laux, -0.9f, 0.05f, 36, false);
        store_f16(y, d);
        store_f16(y + 2, -min);
        for (int j = 0; j < 16; ++j) y[4 + j] = static_cast<std::uint8_t>(L[j] | (L[16 + j] << 4));
    }
}

void q5_1_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    const float sigma2 = row_mean_square(x, n);
    float w[32];
    std::uint8_t L[32], Laux[32];
    for (std::int64_t b = 0; b < n / 32; ++b, x += 32, qw += 32, y += 24) {
        block_weights(x, qw, sigma2, w);
        float min;
        const float d = fit_with_min(32, 31, x, w, L, &min, Laux, -0.9f, 0.05f, 36, false);
        store_f16(y, d);
        store_f16(y + 2, -min);
        pack_5bit(L, y + 4, y + 8);
    }
}

// ---- iq4_nl, iq4_xs: a non-linear 16-level grid, searched over 15 trial scales ----

constexpr std::int8_t iq4_grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/// The index of the grid level nearest to x (the lower one on a tie); NaN gives 15. ggml's
/// best_index_int8.
int nearest_level(float x) {
    if (x <= iq4_grid[0]) return 0;
    if (x >= iq4_grid[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < iq4_grid[mid]) hi = mid;
        else lo = mid;
    }
    return x - iq4_grid[hi - 1] < iq4_grid[hi] - x ? hi - 1 : hi;
}

/// The searches iq4_super_block runs: the scalar ones below, or their AVX2 lanes (same bits).
struct iq4_search {
    iq4_trial_sums_fn trial_sums;
    iq4_levels_fn levels;
};

iq4_search iq4_search_for_isa() noexcept {
    if (active_isa() == isa::avx2) {
        const iq4_trial_sums_fn sums = avx2_iq4_trial_sums();
        const iq4_levels_fn levels = avx2_iq4_levels();
        if (sums != nullptr && levels != nullptr) return {sums, levels};
    }
    return {iq4_trial_sums, iq4_levels};
}

/// ggml's quantize_row_iq4_nl_impl with ntry = 7 (what quantize_iq4_nl / quantize_iq4_xs pass,
/// with or without importance): one super-block of `sb` values in 32-value blocks. For sb = 32
/// (iq4_nl) the block's scale is the f16 d itself; for sb = 256 (iq4_xs) each block gets a 6-bit
/// multiple of d = -max_scale / 32. Writes d, the scale fields (iq4_xs) and the 4-bit indices.
///
/// ggml's loop over the tries updates its best scale as it goes, but a try's sums depend only on
/// its own inverse scale: so all 16 tries' sums are computed first (search.trial_sums, in lanes
/// with AVX2), then chosen among in ggml's order with its comparisons. ggml also rounds the block
/// once at the first guess into L; every L entry is rounded again at the end, so that is skipped.
void iq4_super_block(const iq4_search& search, int sb, const float* x, const float* qw, std::uint8_t* d_field,
                     std::uint8_t* q4, std::uint8_t* scales_h_field, std::uint8_t* scales_l) {
    constexpr int ntry = 7;
    float sigma2 = 0;
    for (int j = 0; j < sb; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / static_cast<float>(sb);

    std::memset(q4, 0, static_cast<std::size_t>(sb / 2));
    std::uint8_t L[256];
    float scales[8], weight[32];
    float max_scale = 0, amax_scale = 0;
    const int nb = sb / 32;
    for (int ib = 0; ib < nb; ++ib) {
        const float* xb = x + 32 * ib;
        if (qw != nullptr) {
            for (int j = 0; j < 32; ++j) weight[j] = qw[32 * ib + j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        } else {
            for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
        }
        float amax = 0, max = 0;
        for (int j = 0; j < 32; ++j) {
            const float ax = std::fabs(xb[j]);
            if (ax > amax) {
                amax = ax;
                max = xb[j];
            }
        }
        if (amax < 1e-15f) {  // GROUP_MAX_EPS: an all-zero block gets scale 0
            scales[ib] = 0;
            continue;
        }
        // Try 0, the first guess: the extreme value on the extreme level (then least squares for
        // that rounding); tries 1..15: itry = -7..7.
        float ids[16];
        ids[0] = 1 / (-max / iq4_grid[0]);
        for (int itry = -ntry; itry <= ntry; ++itry) ids[itry + ntry + 1] = static_cast<float>(itry + iq4_grid[0]) / max;
        float sumqx[16], sumq2[16];
        search.trial_sums(xb, weight, ids, sumqx, sumq2);
        float d = sumq2[0] > 0 ? sumqx[0] / sumq2[0] : 0.f;
        float best = d * sumqx[0];
        for (int t = 1; t < 16; ++t) {
            if (sumq2[t] > 0 && sumqx[t] * sumqx[t] > best * sumq2[t]) {
                d = sumqx[t] / sumq2[t];
                best = d * sumqx[t];
            }
        }
        scales[ib] = d;
        const float abs_d = std::fabs(d);
        if (abs_d > amax_scale) {
            amax_scale = abs_d;
            max_scale = d;
        }
    }

    if (nb > 1) {
        std::uint16_t scales_h = 0;
        const float d = -max_scale / 32;
        store_f16(d_field, d);
        const float id = d != 0.0f ? 1 / d : 0.f;
        for (int ib = 0; ib < nb; ++ib) {
            int l = nearest_int(id * scales[ib]);
            l = l > 31 ? 31 : (l < -32 ? -32 : l);
            const float dl = d * static_cast<float>(l);
            const float idl = dl != 0.0f ? 1 / dl : 0.f;
            search.levels(x + 32 * ib, 32, idl, L + 32 * ib);
            l += 32;
            const auto l_l = static_cast<std::uint8_t>(l & 0xf);
            const auto l_h = static_cast<std::uint8_t>(l >> 4);
            if (ib % 2 == 0) scales_l[ib / 2] = l_l;
            else scales_l[ib / 2] = static_cast<std::uint8_t>(scales_l[ib / 2] | (l_l << 4));
            scales_h = static_cast<std::uint16_t>(scales_h | (l_h << (2 * (ib % 8))));
        }
        store_u16(scales_h_field, scales_h);
    } else {
        store_f16(d_field, scales[0]);
        const float id = scales[0] != 0.0f ? 1 / scales[0] : 0;
        search.levels(x, sb, id, L);
    }

    for (int i = 0; i < sb / 32; ++i)
        for (int j = 0; j < 16; ++j) q4[16 * i + j] = static_cast<std::uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

std::int64_t iq4_nl_rows(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row,
                         const float* importance) {
    const iq4_search search = iq4_search_for_isa();
    const std::int64_t blocks = n_per_row / 32;
    for (std::int64_t r = 0; r < n_rows; ++r) {
        for (std::int64_t b = 0; b < blocks; ++b) {
            std::uint8_t* y = dst + (r * blocks + b) * 18;
            iq4_super_block(search, 32, src + r * n_per_row + 32 * b, importance ? importance + 32 * b : nullptr, y, y + 2,
                            nullptr, nullptr);
        }
    }
    return -1;
}

std::int64_t iq4_xs_rows(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row,
                         const float* importance) {
    const iq4_search search = iq4_search_for_isa();
    const std::int64_t blocks = n_per_row / 256;
    for (std::int64_t r = 0; r < n_rows; ++r) {
        for (std::int64_t b = 0; b < blocks; ++b) {
            // d (2), scales_h (2), scales_l [4], qs [128]
            std::uint8_t* y = dst + (r * blocks + b) * 136;
            iq4_super_block(search, 256, src + r * n_per_row + 256 * b, importance ? importance + 256 * b : nullptr, y,
                            y + 8, y + 2, y + 4);
        }
    }
    return -1;
}

}  // namespace

void iq4_trial_sums(const float* x, const float* w, const float* ids, float* sumqx, float* sumq2) {
    for (int t = 0; t < 16; ++t) {
        float qx = 0, q2 = 0;
        for (int j = 0; j < 32; ++j) {
            const float q = iq4_grid[nearest_level(ids[t] * x[j])];
            qx += w[j] * q * x[j];
            q2 += w[j] * q * q;
        }
        sumqx[t] = qx;
        sumq2[t] = q2;
    }
}

void iq4_levels(const float* x, int n, float id, std::uint8_t* L) {
    for (int j = 0; j < n; ++j) L[j] = static_cast<std::uint8_t>(nearest_level(id * x[j]));
}

row_quantizer legacy_quantizer(tensor_type type) noexcept {
    switch (type) {
        case tensor_type::f32: return copy_f32;
        case tensor_type::f16: return to_f16;
        case tensor_type::bf16: return to_bf16;
        case tensor_type::q4_0: return ref_or_weighted<32, 18, q4_0_block, q4_0_weighted>;
        case tensor_type::q4_1: return ref_or_weighted<32, 20, q4_1_block, q4_1_weighted>;
        case tensor_type::q5_0: return ref_or_weighted<32, 22, q5_0_block, q5_0_weighted>;
        case tensor_type::q5_1: return ref_or_weighted<32, 24, q5_1_block, q5_1_weighted>;
        case tensor_type::q8_0: return blockwise<32, 34, q8_0_block>;
        case tensor_type::q1_0: return blockwise<128, 18, q1_0_block>;
        case tensor_type::q2_0: return blockwise<64, 18, q2_0_block>;
        case tensor_type::mxfp4: return blockwise<32, 17, mxfp4_block>;
        case tensor_type::nvfp4: return blockwise<64, 36, nvfp4_block>;
        case tensor_type::tq1_0: return blockwise<256, 54, tq1_0_block>;
        case tensor_type::tq2_0: return blockwise<256, 66, tq2_0_block>;
        case tensor_type::iq4_nl: return iq4_nl_rows;
        case tensor_type::iq4_xs: return iq4_xs_rows;
        default: return nullptr;
    }
}

}  // namespace minfer::quant::detail::qb
