// The k-quant quantizers (q2_K … q6_K, 256-value super-blocks) and the scale searches they share
// with the weighted legacy types. Written from ggml's quantize_row_*_ref (no importance weights)
// and quantize_row_*_impl (with them); each float expression keeps ggml's operand order and types
// (`w*x*l` is (w*x)*float(l)), each comparison its strictness, because the bytes must be ggml's.
// Built with -ffp-contract=off, as ggml is.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "minfer/quant/isa.hpp"
#include "quantize_basic.hpp"

namespace minfer::quant::detail::qb {

namespace {
constexpr int qk = 256;
}  // namespace

float fit_with_min(int n, int nmax, const float* x, const float* weights, std::uint8_t* L, float* the_min,
                   std::uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;  // the min is an offset subtracted from non-negative levels
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = static_cast<float>(nmax) / (max - min);
    float scale = 1 / iscale;
    auto error_of = [&](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        L[i] = static_cast<std::uint8_t>(clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
        const float diff = scale * static_cast<float>(L[i]) + min - x[i];
        best_error += weights[i] * error_of(diff);
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    // Each trial scale gives a rounding; for it the best scale and min are a 2x2 least-squares
    // solution (clipped to min <= 0). Keep the one with the smallest weighted error.
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = static_cast<std::uint8_t>(l);
            const float w = weights[i];
            const auto fl = static_cast<float>(l);
            sum_l += w * fl;
            sum_l2 += w * fl * fl;
            sum_xl += w * fl * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
                cur_error += weights[i] * error_of(diff);
            }
            if (cur_error < best_error) {
                std::memcpy(L, Laux, static_cast<std::size_t>(n));
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

/// ggml's make_qp_quants: a scale for non-negative values (the sub-block scales and mins of the
/// weighted k-quants) on levels [0, nmax], weighted by `w`. L is uint8 as in ggml: a level that
/// does not fit wraps, and the wrapped value is what later steps read.
float fit_positive(int n, int nmax, const float* x, std::uint8_t* L, const float* w) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = max_as_ggml(max, x[i]);
    if (max < group_max_eps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = static_cast<float>(nmax) / max;
    for (int i = 0; i < n; ++i) L[i] = static_cast<std::uint8_t>(nearest_int(iscale * x[i]));
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale * static_cast<float>(L[i]);
        best_mse += w[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * static_cast<float>(is) + static_cast<float>(nmax)) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale_is * x[i]);
            if (nmax < l) l = nmax;
            const float diff = x[i] - scale_is * static_cast<float>(l);
            mse += w[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        if (nmax < l) l = nmax;
        L[i] = static_cast<std::uint8_t>(l);
        const auto fl = static_cast<float>(l);
        sumlx += w[i] * x[i] * fl;
        suml2 += w[i] * fl * fl;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const auto li = static_cast<float>(L[i]);
            float slx = sumlx - w[i] * x[i] * li;
            float sl2 = suml2 - w[i] * li * li;
            if (slx > 0 && sl2 > 0) {
                int new_l = nearest_int(x[i] * sl2 / slx);
                if (nmax < new_l) new_l = nmax;
                if (new_l != L[i]) {
                    const auto nl = static_cast<float>(new_l);
                    slx += w[i] * x[i] * nl;
                    sl2 += w[i] * nl * nl;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<std::uint8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (n_changed == 0) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/// ggml's make_q3_quants with do_rmse (q3_K without importance): levels [-nmax, nmax-1] weighted by
/// x^2, then up to five passes that move single values to the level that most improves the fit.
float fit_q3(int n, int nmax, const float* x, std::int8_t* L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < group_max_eps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    const float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = static_cast<std::int8_t>(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const auto li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            if (slx > 0) {
                float sl2 = suml2 - w * li * li;
                const int new_l = clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != L[i]) {
                    const auto nl = static_cast<float>(new_l);
                    slx += w * x[i] * nl;
                    sl2 += w * nl * nl;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<std::int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (n_changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

namespace {


/// The 2-bit levels of 256 values, four per byte: value j + 32r of each 128 in bits 2r.
void pack_2bit(const std::uint8_t* L, std::uint8_t* qs) {
    // 8 bytes at a time in a 64-bit word: every level is below 4, so no shifted byte reaches the
    // next one and the OR of the shifted words is the bytes' ORs side by side.
    auto word = [](const std::uint8_t* p) {
        std::uint64_t w;
        std::memcpy(&w, p, sizeof w);
        return w;
    };
    for (int j = 0; j < qk; j += 128)
        for (int l = 0; l < 32; l += 8) {
            const std::uint64_t w = word(L + j + l) | (word(L + j + l + 32) << 2) | (word(L + j + l + 64) << 4) |
                                    (word(L + j + l + 96) << 6);
            std::memcpy(qs + j / 4 + l, &w, sizeof w);
        }
}

float sum_squares(const float* x, int n) {
    float s = 0;
    for (int j = 0; j < n; ++j) s += x[j] * x[j];
    return s;
}

/// The lanes version of fit_with_min when the AVX2 kernels are the active set, else nullptr.
fit_with_min_x8_fn fit_lanes() noexcept {
    return active_isa() == isa::avx2 ? avx2_fit_with_min_x8() : nullptr;
}

/// fit_with_min on 8 consecutive sub-blocks of n values (mins and scales: 8 each): in AVX2 lanes when
/// `lanes` is given, else one after the other. The same bits either way (avx2_fit.cpp).
void fit_eight(fit_with_min_x8_fn lanes, int n, int nmax, const float* x, const float* weights, std::uint8_t* L,
               float* mins, float* scales, float rmin, float rdelta, int nstep, bool use_mad) {
    if (lanes != nullptr) {
        lanes(n, nmax, x, weights, L, mins, scales, rmin, rdelta, nstep, use_mad);
        return;
    }
    std::uint8_t Laux[32];
    for (int j = 0; j < 8; ++j)
        scales[j] = fit_with_min(n, nmax, x + n * j, weights + n * j, L + n * j, &mins[j], Laux, rmin, rdelta, nstep, use_mad);
}

/// The requantization's AVX2 lanes when they are the active set, else nullptr: looked up once per
/// block by its callers (a lookup per 16 values was a few percent of q3_K's time).
requantize_fn requantize_kernel() noexcept { return active_isa() == isa::avx2 ? avx2_requantize() : nullptr; }

/// ggml's requantization of n values with a block's final scale d (and the minimum `add` when
/// with_add): L[i] = clamp(nearest_int(x[i] / d), lo, hi) + offset, or nearest_int((x[i] + add) / d).
/// In `lanes` (requantize_kernel(); avx2_fit.cpp, the same bits value by value) when not nullptr.
void requantize(requantize_fn lanes, const float* x, int n, float d, bool with_add, float add, int lo, int hi,
                int offset, std::uint8_t* L) {
    if (lanes != nullptr) {
        lanes(x, n, d, with_add, add, lo, hi, offset, L);
        return;
    }
    for (int i = 0; i < n; ++i) {
        const int l = with_add ? nearest_int((x[i] + add) / d) : nearest_int(x[i] / d);
        L[i] = static_cast<std::uint8_t>(clamp(l, lo, hi) + offset);
    }
}

// ---- q2_K: scales [16], qs [64], d f16, dmin f16 ----

/// Requantize with the stored (4-bit, f16-rounded) scales and mins, the values the reader will use.
void q2_k_requantize(const float* x, std::uint8_t* y, std::uint8_t* L) {
    const float dall = f16_field(y + 80), dmin = f16_field(y + 82);
    const requantize_fn lanes = requantize_kernel();
    for (int j = 0; j < 16; ++j) {
        const float d = dall * static_cast<float>(y[j] & 0xf);
        if (d == 0.0f) continue;
        const float dm = dmin * static_cast<float>(y[j] >> 4);
        requantize(lanes, x + 16 * j, 16, d, true, dm, 0, 3, 0, L + 16 * j);
    }
    pack_2bit(L, y + 16);
}

void q2_k_block(const float* x, std::uint8_t* y) {
    std::uint8_t L[qk];
    float weights[qk], mins[16], scales[16];
    for (int i = 0; i < qk; ++i) weights[i] = std::fabs(x[i]);
    const fit_with_min_x8_fn lanes = fit_lanes();
    for (int j = 0; j < 16; j += 8)
        fit_eight(lanes, 16, 3, x + 16 * j, weights + 16 * j, L + 16 * j, mins + j, scales + j, -0.5f, 0.1f, 15, true);
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0) {
        const float iscale = 15.f / max_scale;
        for (int j = 0; j < 16; ++j) y[j] = static_cast<std::uint8_t>(nearest_int(iscale * scales[j]));
        store_f16(y + 80, max_scale / 15.f);
    } else {
        for (int j = 0; j < 16; ++j) y[j] = 0;
        store_f16(y + 80, 0.f);
    }
    if (max_min > 0) {
        const float iscale = 15.f / max_min;
        for (int j = 0; j < 16; ++j) y[j] = static_cast<std::uint8_t>(y[j] | (nearest_int(iscale * mins[j]) << 4));
        store_f16(y + 82, max_min / 15.f);
    } else {
        store_f16(y + 82, 0.f);
    }
    q2_k_requantize(x, y, L);
}

void q2_k_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    std::uint8_t L[qk], Ls[16], Lm[16];
    float mins[16], scales[16], sw[16], weight[qk];
    const fit_with_min_x8_fn lanes = fit_lanes();
    for (std::int64_t b = 0; b < n / qk; ++b, x += qk, qw += qk, y += 84) {
        const float sigma2 = sum_squares(x, qk) / qk;
        for (int j = 0; j < 16; ++j) {
            float* w = weight + 16 * j;
            for (int l = 0; l < 16; ++l) w[l] = qw[16 * j + l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            sw[j] = 0;
            for (int l = 0; l < 16; ++l) sw[j] += w[l];
        }
        for (int j = 0; j < 16; j += 8)
            fit_eight(lanes, 16, 3, x + 16 * j, weight + 16 * j, L + 16 * j, mins + j, scales + j, -0.9f, 0.05f, 36, false);
        store_f16(y + 80, fit_positive(16, 15, scales, Ls, sw));
        store_f16(y + 82, fit_positive(16, 15, mins, Lm, sw));
        for (int j = 0; j < 16; ++j) y[j] = static_cast<std::uint8_t>(Ls[j] | (Lm[j] << 4));
        q2_k_requantize(x, y, L);
    }
}

// ---- q3_K: hmask [32], qs [64], scales [12] (16 6-bit scales), d f16 ----

/// Packs 6-bit scale `l` (0..63) of sub-block j: low nibbles in bytes 0..7 (j >= 8 in the high
/// half), the top two bits in bytes 8..11. Bytes must start zeroed.
void q3_k_put_scale(std::uint8_t* sc, int j, int l) {
    if (j < 8) sc[j] = static_cast<std::uint8_t>(l & 0xf);
    else sc[j - 8] = static_cast<std::uint8_t>(sc[j - 8] | ((l & 0xf) << 4));
    l >>= 4;
    sc[j % 4 + 8] = static_cast<std::uint8_t>(sc[j % 4 + 8] | (l << (2 * (j / 4))));
}

}  // namespace

/// ggml's split of q3_K's levels: the high bit of value j goes to bit j / 32 of hmask[j % 32], the
/// value keeps its low bits (`if (L[j] > 3) { set the bit; L[j] -= 4; }`). Without the branch (on
/// real weights it is taken half the time at random) and by mask byte, so no byte is read back.
void q3_split_high(const std::int8_t* L, std::uint8_t* U, std::uint8_t* hmask) {
    for (int i = 0; i < 32; ++i) {
        unsigned h = 0;
        for (int b = 0; b < 8; ++b) {
            const int j = i + 32 * b;
            const int high = L[j] > 3 ? 1 : 0;
            h |= static_cast<unsigned>(high) << b;
            U[j] = static_cast<std::uint8_t>(L[j] - 4 * high);
        }
        hmask[i] = static_cast<std::uint8_t>(h);
    }
}

namespace {

/// Requantize with the stored scales and split the 3-bit levels into qs and the high-bit mask.
void q3_k_finish(const float* x, std::uint8_t* y, std::int8_t* L) {
    const std::uint8_t* sc = y + 96;
    const float dall = f16_field(y + 108);
    const requantize_fn requantize_lanes = requantize_kernel();
    for (int j = 0; j < 16; ++j) {
        int s = j < 8 ? sc[j] & 0xf : sc[j - 8] >> 4;
        s = static_cast<std::int8_t>((s | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
        const float d = dall * static_cast<float>(s);
        if (d == 0.0f) continue;
        requantize(requantize_lanes, x + 16 * j, 16, d, false, 0.f, -4, 3, 4, reinterpret_cast<std::uint8_t*>(L + 16 * j));
    }
    std::uint8_t* hmask = y;
    std::uint8_t U[qk];
    if (const q3_split_high_fn lanes = active_isa() == isa::avx2 ? avx2_q3_split_high() : nullptr; lanes != nullptr) {
        lanes(L, U, hmask);
    } else {
        q3_split_high(L, U, hmask);
    }
    pack_2bit(U, y + 32);
}

void q3_k_block(const float* x, std::uint8_t* y) {
    std::int8_t L[qk];
    float scales[16];
    float max_scale = 0, amax = 0;
    if (const fit_q3_x8_fn lanes = active_isa() == isa::avx2 ? avx2_fit_q3_x16() : nullptr; lanes != nullptr) {
        lanes(16, 4, x, L, scales);
    } else {
        for (int j = 0; j < 16; ++j) scales[j] = fit_q3(16, 4, x + 16 * j, L + 16 * j);
    }
    for (int j = 0; j < 16; ++j) {
        const float scale = std::fabs(scales[j]);
        if (scale > amax) {
            amax = scale;
            max_scale = scales[j];
        }
    }
    std::uint8_t* sc = y + 96;
    std::memset(sc, 0, 12);
    if (max_scale != 0.0f) {
        const float iscale = -32.f / max_scale;
        for (int j = 0; j < 16; ++j) {
            // ggml narrows to int8_t before clamping: keep that wrap.
            const auto l8 = static_cast<std::int8_t>(nearest_int(iscale * scales[j]));
            q3_k_put_scale(sc, j, clamp(l8, -32, 31) + 32);
        }
        store_f16(y + 108, 1 / iscale);
    } else {
        store_f16(y + 108, 0.f);
    }
    q3_k_finish(x, y, L);
}

void q3_k_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    std::int8_t L[qk], Ls[16];
    float scales[16], weight[16], sw[16];
    for (std::int64_t b = 0; b < n / qk; ++b, x += qk, qw += qk, y += 110) {
        const float sigma2 = 2 * sum_squares(x, qk) / qk;
        for (int j = 0; j < 16; ++j) {
            for (int l = 0; l < 16; ++l) weight[l] = qw[16 * j + l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            float sumw = 0;
            for (int l = 0; l < 16; ++l) sumw += weight[l];
            sw[j] = sumw;
            scales[j] = fit_symmetric(16, 4, x + 16 * j, L + 16 * j, weight);
        }
        std::uint8_t* sc = y + 96;
        std::memset(sc, 0, 12);
        const float d_block = fit_symmetric(16, 32, scales, Ls, sw);
        for (int j = 0; j < 16; ++j) q3_k_put_scale(sc, j, Ls[j]);
        store_f16(y + 108, d_block);
        q3_k_finish(x, y, L);
    }
}

// ---- q4_K / q5_K: d f16, dmin f16, scales [12] (8 6-bit scales and mins), [qh [32]], qs [128] ----

/// Packs scale ls and min lm of sub-block j (ggml's layout; get_scale_min_k4 reads it back).
/// Sub-blocks 4..7 OR their top bits into bytes 0..7, which 0..3 have written before.
void k4_put_scale_min(std::uint8_t* s, int j, std::uint8_t ls, std::uint8_t lm) {
    if (j < 4) {
        s[j] = ls;
        s[j + 4] = lm;
    } else {
        s[j + 4] = static_cast<std::uint8_t>((ls & 0xf) | ((lm & 0xf) << 4));
        s[j - 4] = static_cast<std::uint8_t>(s[j - 4] | ((ls >> 4) << 6));
        s[j] = static_cast<std::uint8_t>(s[j] | ((lm >> 4) << 6));
    }
}

void k4_get_scale_min(int j, const std::uint8_t* q, std::uint8_t& d, std::uint8_t& m) {
    if (j < 4) {
        d = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        d = static_cast<std::uint8_t>((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        m = static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/// Requantize the 256 values to [0, nmax] with the stored scales and mins (fields at y).
void k4_requantize(const float* x, const std::uint8_t* y, std::uint8_t* L, int nmax) {
    const float dall = f16_field(y), dmin = f16_field(y + 2);
    const requantize_fn lanes = requantize_kernel();
    for (int j = 0; j < 8; ++j) {
        std::uint8_t sc, m;
        k4_get_scale_min(j, y + 4, sc, m);
        const float d = dall * static_cast<float>(sc);
        if (d == 0.0f) continue;
        const float dm = dmin * static_cast<float>(m);
        requantize(lanes, x + 32 * j, 32, d, true, dm, 0, nmax, 0, L + 32 * j);
    }
}

void q4_k_pack(const std::uint8_t* L, std::uint8_t* qs) {
    for (int j = 0; j < qk; j += 64, qs += 32)
        for (int l = 0; l < 32; ++l) qs[l] = static_cast<std::uint8_t>(L[j + l] | (L[j + l + 32] << 4));
}

void q5_k_pack(const std::uint8_t* L, std::uint8_t* qh, std::uint8_t* ql) {
    std::memset(qh, 0, 32);
    std::uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < qk; n += 64, ql += 32) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j], l2 = L[n + j + 32];
            if (l1 > 15) {
                l1 -= 16;
                qh[j] = static_cast<std::uint8_t>(qh[j] | m1);
            }
            if (l2 > 15) {
                l2 -= 16;
                qh[j] = static_cast<std::uint8_t>(qh[j] | m2);
            }
            ql[j] = static_cast<std::uint8_t>(l1 | (l2 << 4));
        }
        m1 = static_cast<std::uint8_t>(m1 << 2);
        m2 = static_cast<std::uint8_t>(m2 << 2);
    }
}

/// The unweighted k4 scale search (q4_K: nmax 15, q5_K: 31): each 32-value sub-block is fitted
/// with weights rms + |x|, then scales and mins become 6-bit multiples of their maxima / 63.
void k4_ref_scales(const float* x, std::uint8_t* y, std::uint8_t* L, int nmax, float rmin, int nstep) {
    float weights[qk], mins[8], scales[8];
    for (int j = 0; j < 8; ++j) {
        const float av_x = std::sqrt(sum_squares(x + 32 * j, 32) / 32);
        for (int l = 0; l < 32; ++l) weights[32 * j + l] = av_x + std::fabs(x[32 * j + l]);
    }
    fit_eight(fit_lanes(), 32, nmax, x, weights, L, mins, scales, rmin, 0.1f, nstep, false);
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < 8; ++j) {
        auto ls = static_cast<std::uint8_t>(nearest_int(inv_scale * scales[j]));
        auto lm = static_cast<std::uint8_t>(nearest_int(inv_min * mins[j]));
        if (ls > 63) ls = 63;
        if (lm > 63) lm = 63;
        k4_put_scale_min(y + 4, j, ls, lm);
    }
    store_f16(y, max_scale / 63.f);
    store_f16(y + 2, max_min / 63.f);
    k4_requantize(x, y, L, nmax);
}

/// The weighted k4 scale search: sub-blocks fitted by make_qkx3_quants with importance * sqrt(sigma2
/// + x^2), then scales and mins each fitted by make_qp_quants. ggml clamps the 6-bit values to 63
/// for q5_K but not for q4_K; `clamp63` keeps that difference.
void k4_weighted_scales(const float* x, const float* qw, std::uint8_t* y, std::uint8_t* L, int nmax, bool clamp63) {
    std::uint8_t Ls[8], Lm[8];
    float weights[qk], sw[8], mins[8], scales[8];
    const float sigma2 = 2 * sum_squares(x, qk) / qk;
    for (int j = 0; j < 8; ++j) {
        float* w = weights + 32 * j;
        for (int l = 0; l < 32; ++l) w[l] = qw[32 * j + l] * std::sqrt(sigma2 + x[32 * j + l] * x[32 * j + l]);
        float sumw = 0;
        for (int l = 0; l < 32; ++l) sumw += w[l];
        sw[j] = sumw;
    }
    fit_eight(fit_lanes(), 32, nmax, x, weights, L, mins, scales, -0.9f, 0.05f, 36, false);
    const float d_block = fit_positive(8, 63, scales, Ls, sw);
    const float m_block = fit_positive(8, 63, mins, Lm, sw);
    for (int j = 0; j < 8; ++j) {
        std::uint8_t ls = Ls[j], lm = Lm[j];
        if (clamp63) {
            if (ls > 63) ls = 63;
            if (lm > 63) lm = 63;
        }
        k4_put_scale_min(y + 4, j, ls, lm);
    }
    store_f16(y, d_block);
    store_f16(y + 2, m_block);
    k4_requantize(x, y, L, nmax);
}

void q4_k_block(const float* x, std::uint8_t* y) {
    std::uint8_t L[qk];
    k4_ref_scales(x, y, L, 15, -1.f, 20);
    q4_k_pack(L, y + 16);
}

void q4_k_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    std::uint8_t L[qk];
    for (std::int64_t b = 0; b < n / qk; ++b, x += qk, qw += qk, y += 144) {
        k4_weighted_scales(x, qw, y, L, 15, false);
        q4_k_pack(L, y + 16);
    }
}

void q5_k_block(const float* x, std::uint8_t* y) {
    std::uint8_t L[qk];
    k4_ref_scales(x, y, L, 31, -0.5f, 15);
    q5_k_pack(L, y + 16, y + 48);
}

void q5_k_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    std::uint8_t L[qk];
    for (std::int64_t b = 0; b < n / qk; ++b, x += qk, qw += qk, y += 176) {
        k4_weighted_scales(x, qw, y, L, 31, true);
        q5_k_pack(L, y + 16, y + 48);
    }
}

// ---- q6_K: ql [128], qh [64], scales i8 [16], d f16 ----

/// q6_K with sub-block weights `qw` (nullptr: x^2). The same code serves both of ggml's paths: its
/// _impl passes the importance itself as make_qx_quants' weights.
void q6_k_one(const float* x, std::uint8_t* y, const float* qw) {
    std::int8_t L[qk];
    float scales[16];
    float max_scale = 0, max_abs_scale = 0;
    if (const fit_symmetric_x8_fn lanes = active_isa() == isa::avx2 ? avx2_fit_symmetric_x16() : nullptr; lanes != nullptr) {
        lanes(16, 32, x, L, qw, scales);
    } else {
        for (int ib = 0; ib < 16; ++ib)
            scales[ib] = fit_symmetric(16, 32, x + 16 * ib, L + 16 * ib, qw != nullptr ? qw + 16 * ib : nullptr);
    }
    for (int ib = 0; ib < 16; ++ib) {
        const float scale = scales[ib];
        const float abs_scale = std::fabs(scale);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }
    if (max_abs_scale < group_max_eps) {
        std::memset(y, 0, 210);
        return;
    }
    const float iscale = -128.f / max_scale;
    store_f16(y + 208, 1 / iscale);
    auto* sc = reinterpret_cast<std::int8_t*>(y + 192);
    for (int ib = 0; ib < 16; ++ib) {
        const int l = nearest_int(iscale * scales[ib]);
        sc[ib] = static_cast<std::int8_t>(l < 127 ? l : 127);
    }
    const float dall = f16_field(y + 208);
    const requantize_fn requantize_lanes = requantize_kernel();
    for (int j = 0; j < 16; ++j) {
        const float d = dall * static_cast<float>(sc[j]);
        if (d == 0.0f) continue;
        requantize(requantize_lanes, x + 16 * j, 16, d, false, 0.f, -32, 31, 32, reinterpret_cast<std::uint8_t*>(L + 16 * j));
    }
    std::uint8_t* ql = y;
    std::uint8_t* qh = y + 128;
    for (int j = 0; j < qk; j += 128, ql += 64, qh += 32) {
        for (int l = 0; l < 32; ++l) {
            const int q1 = L[j + l] & 0xf, q2 = L[j + l + 32] & 0xf, q3 = L[j + l + 64] & 0xf, q4 = L[j + l + 96] & 0xf;
            ql[l] = static_cast<std::uint8_t>(q1 | (q3 << 4));
            ql[l + 32] = static_cast<std::uint8_t>(q2 | (q4 << 4));
            qh[l] = static_cast<std::uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                              ((L[j + l + 96] >> 4) << 6));
        }
    }
}

void q6_k_block(const float* x, std::uint8_t* y) { q6_k_one(x, y, nullptr); }

void q6_k_weighted(const float* x, std::uint8_t* y, std::int64_t n, const float* qw) {
    for (std::int64_t b = 0; b < n / qk; ++b) q6_k_one(x + qk * b, y + 210 * b, qw + qk * b);
}

}  // namespace

row_quantizer k_quantizer(gguf::tensor_type type) noexcept {
    using gguf::tensor_type;
    switch (type) {
        case tensor_type::q2_k: return ref_or_weighted<256, 84, q2_k_block, q2_k_weighted>;
        case tensor_type::q3_k: return ref_or_weighted<256, 110, q3_k_block, q3_k_weighted>;
        case tensor_type::q4_k: return ref_or_weighted<256, 144, q4_k_block, q4_k_weighted>;
        case tensor_type::q5_k: return ref_or_weighted<256, 176, q5_k_block, q5_k_weighted>;
        case tensor_type::q6_k: return ref_or_weighted<256, 210, q6_k_block, q6_k_weighted>;
        default: return nullptr;
    }
}

}  // namespace minfer::quant::detail::qb
