// The codebook quantizers: iq3_xxs, iq3_s, iq2_xxs, iq2_xs, iq2_s here, iq1_s and iq1_m in
// quantize_iq1.cpp. Each writes what ggml's quantize_<type> writes (ggml-quants.c), byte for byte:
// the searches below are ggml's, step for step, in float where it computes in float, with its
// tie-breaking (strict comparisons: the first best candidate wins), its evaluation order (left to
// right, no contraction: the library is built with -ffp-contract=off) and its integer wrap-arounds.
//
// The scheme shared by all of them: a super-block of 256 values is cut into groups of 16 or 32,
// each group's values lose their signs (stored apart) and are matched, 4 or 8 at a time, against a
// grid of allowed points at the best of a few trial scales. A rounded point that is not on the grid
// is replaced by the best of its nearest grid points (iq_lattice.hpp). One f16 scale per
// super-block and a 4-bit scale per group finish the block.
//
// Where ggml asserts or aborts (a point still off the grid, no acceptable neighbour, a negative or
// NaN scale, a missing importance matrix where it requires one), the row fails: the quantizer
// returns its index and the caller reports it. Only non-finite arithmetic (huge inputs whose
// squares overflow, NaN) gets there.
#include <cfloat>
#include <cmath>
#include <cstring>

#include "iq_arith.hpp"
#include "minfer/quant/isa.hpp"
#include "iq_lattice.hpp"
#include "quantize_basic.hpp"
#include "quantize_iq1.hpp"
#include "quantize_kernels.hpp"

namespace minfer::quant::detail {
namespace {

using namespace iq;

// ggml's iq2_find_best_neighbour / iq3_find_best_neighbour: the neighbour of `entry` closest to
// xval / scale in the weighted distance, the first one on ties; its coordinates' indices go to L.
// -1 when no distance is below FLT_MAX (all infinite or NaN): ggml asserts there. With AVX2 the
// candidates' distances are computed 8 at a time in lanes (avx2_iq_search.cpp), with the same bits.
// The searches a row runs, chosen once per row: the AVX2 lanes when that set is active, else nullptr
// (the scalar functions).
struct iq_ops {
    neighbour_search_fn neighbours;
    trials_round_fn round;
    codebook_sums_fn sums;
};

iq_ops ops_for(int dim) noexcept {
    if (active_isa() != isa::avx2) return {nullptr, nullptr, nullptr};
    return {avx2_best_neighbour(dim), avx2_trials_round(), avx2_codebook_sums()};
}

// The trial scales of a group are independent until the choice among them: each rounds the values
// and searches the off-grid points on its own. So a group's trials are all done first, their
// levels kept value-major (trial t's level of value i at [32 * i + t], the layout the lanes read),
// then their sums are computed (one trial per lane with AVX2, see codebook_sums_fn), then the
// choice is made in ggml's order with ggml's test. A trial that fails (no acceptable neighbour)
// fails the row, as ggml's assert in that trial would.
struct trial_levels {
    alignas(32) std::int8_t L[32 * 32] = {};
    void take(int t, int n, std::int8_t* levels) const {
        for (int i = 0; i < n; ++i) levels[i] = L[32 * i + t];
    }
};

// The first trial of the best score in ggml's order (`sumq2 > 0 && sumqx² > best·sumq2`), with its
// scale (ggml's sumqx / sumq2) in `scale`; -1 when none passes (scale untouched).
int choose_trial(const iq_ops& ops, int n, int trials, const float* weight, const float* xval, const trial_levels& tl,
                 float& scale) {
    float sumqx[32], sumq2[32];
    if (ops.sums != nullptr) ops.sums(n, trials, weight, xval, tl.L, sumqx, sumq2);
    else scalar_codebook_sums(n, trials, weight, xval, tl.L, sumqx, sumq2);
    float best = 0;
    int chosen = -1;
    for (int t = 0; t < trials; ++t) {
        if (sumq2[t] > 0 && sumqx[t] * sumqx[t] > best * sumq2[t]) {
            scale = sumqx[t] / sumq2[t];
            best = scale * sumqx[t];
            chosen = t;
        }
    }
    return chosen;
}

template <int Dim>
int best_neighbour(const iq_lattice& lat, const iq_ops& ops, std::int32_t entry, const float* xval,
                   const float* weight, float scale, std::int8_t* L) {
    const std::uint16_t* list = lat.neighbours_of(entry);
    const int best = ops.neighbours != nullptr ? ops.neighbours(list, lat.packed.data(), xval, weight, scale)
                                               : scalar_best_neighbour(Dim, list, lat.packed.data(), xval, weight, scale);
    if (best < 0) return -1;
    const std::int8_t* pg = lat.point(best);
    for (int i = 0; i < Dim; ++i) L[i] = static_cast<std::int8_t>((pg[i] - 1) / 2);
    return best;
}

// The key of Dim coordinate indices, wrapped to 16 bits as ggml's uint16_t `u` is (an index out of
// range, which only a failed search leaves, gives a key past the map: the caller fails then).
template <int Dim, int Bits>
std::uint32_t key_of(const std::int8_t* L) {
    std::uint32_t u = 0;
    for (int i = 0; i < Dim; ++i) u |= static_cast<std::uint32_t>(L[i]) << (Bits * i);
    return u & 0xffffu;
}

// Rounds xval * id to the lattice (coordinates 2l + 1, 0 ≤ l ≤ lmax) into L.
template <int Dim>
void round_to_lattice(const float* xval, float id, int lmax, std::int8_t* L) {
    for (int i = 0; i < Dim; ++i) L[i] = static_cast<std::int8_t>(clamp_i(nearest_int(0.5f * (id * xval[i] - 1)), 0, lmax));
}

// A group's trials (ids[t] for t < trials, the rest of the 32 zero): its n values rounded to the
// lattice at each (value-major in tl, trial t's level of value i at [32 * i + t]), and each point
// off the grid replaced by its best neighbour at the trial's scale 1 / ids[t], as ggml's loop does
// trial by trial; on_grid[t][k] (when given) whether trial t's point k was on the grid. false when
// a search fails (ggml asserts).
template <int Dim>
bool run_trials(const iq_lattice& lat, const iq_ops& ops, int n, int lmax, int trials, const float* ids,
                const float* xval, const float* waux, trial_levels& tl, bool (*on_grid)[8]) {
    alignas(32) std::uint32_t keys[8 * 32];
    if (ops.round != nullptr) ops.round(xval, n, ids, lmax, Dim, tl.L, keys);
    else scalar_trials_round(xval, n, ids, lmax, Dim, tl.L, keys);
    for (int t = 0; t < trials; ++t) {
        const float this_scale = 1 / ids[t];
        for (int k = 0; k < n / Dim; ++k) {
            const std::int32_t entry = lat.map[keys[32 * k + t]];
            if (on_grid != nullptr) on_grid[t][k] = entry >= 0;
            if (entry >= 0) continue;
            const std::uint16_t* list = lat.neighbours_of(entry);
            const float* xk = xval + Dim * k;
            const float* wk = waux + Dim * k;
            const int best = ops.neighbours != nullptr ? ops.neighbours(list, lat.packed.data(), xk, wk, this_scale)
                                                       : scalar_best_neighbour(Dim, list, lat.packed.data(), xk, wk, this_scale);
            if (best < 0) return false;
            const std::int8_t* pg = lat.point(best);
            for (int c = 0; c < Dim; ++c) tl.L[32 * (Dim * k + c) + t] = static_cast<std::int8_t>((pg[c] - 1) / 2);
        }
    }
    return true;
}

// Σ w·x·q and Σ w·q·q over n values with q = 2L + 1, in ggml's order.
void weighted_sums(int n, const float* weight, const float* xval, const std::int8_t* L, float& sumqx, float& sumq2) {
    sumqx = 0;
    sumq2 = 0;
    for (int i = 0; i < n; ++i) {
        const float w = weight[i];
        const float q = static_cast<float>(2 * L[i] + 1);
        sumqx += w * xval[i] * q;
        sumq2 += w * q * q;
    }
}

// Splits 8 values into magnitudes and sign bits. With `even`, an odd number of minus signs is made
// even by flipping the sign of the value with the smallest weighted square (its magnitude goes
// negative in xval): the iq2 / iq3_xxs formats store 7 sign bits and derive the 8th from parity.
std::uint8_t take_signs(const float* xb, const float* weight, float* xval, bool even) {
    int nflip = 0;
    std::uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            ++nflip;
            s = static_cast<std::uint8_t>(s | (1u << i));
        }
    }
    if (even && nflip % 2 != 0) {
        int imin = 0;
        float min = weight[0] * xb[0] * xb[0];
        for (int i = 1; i < 8; ++i) {
            const float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s = static_cast<std::uint8_t>(s ^ (1u << imin));
    }
    return s;
}

float sum_of_squares(const float* x) {
    float s = 0;
    for (int i = 0; i < qk; ++i) s += x[i] * x[i];
    return s;
}


// ---- iq3_xxs and iq3_s: 4-value points of a 3-bit lattice -------------------------------------

// One group of 32 values (iq3_xxs, iq3_s): the scale search over trial scales, the refinement of
// off-grid points at the chosen scale, the final grid indices. ggml's two versions differ in a few
// places, marked by `s_variant`. Returns false where ggml asserts.
struct iq3_group {
    float scale = 0;
    int index[8] = {};
    std::uint8_t signs[4] = {};
};

bool iq3_search(const iq_lattice& lat, const iq_ops& ops, bool s_variant, const float* xb, const float* weight, iq3_group& out,
                bool& skipped) {
    constexpr int kmaxq = 8;
    float waux[32];
    float xval[32];
    std::int8_t L[32];
    bool on_grid[8];
    for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
    for (int k = 0; k < 4; ++k) out.signs[k] = take_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k, !s_variant);
    if (!s_variant)
        for (int k = 0; k < 4; ++k) out.signs[k] &= 127;
    float max = xval[0];
    for (int i = 1; i < 32; ++i) max = max_f(max, xval[i]);
    std::memset(L, 0, sizeof L);
    // iq3_s skips only an exact zero (and not NaN); iq3_xxs anything below its epsilon.
    skipped = s_variant ? !(max != 0) : max < 1e-8f;
    if (skipped) return true;

    float scale = max / (2 * kmaxq - 1);
    for (bool& g : on_grid) g = !s_variant;  // iq3_s starts "off grid": a group no trial wins is refined
    const int half = s_variant ? 9 : 15;
    float ids[32] = {};
    for (int is = -half; is <= half; ++is)
        ids[is + half] = (static_cast<float>(2 * kmaxq - 1) + static_cast<float>(is) * 0.2f) / max;
    trial_levels tl;
    bool trial_on_grid[32][8];
    if (!run_trials<4>(lat, ops, 32, kmaxq - 1, 2 * half + 1, ids, xval, waux, tl, trial_on_grid)) return false;
    const int chosen = choose_trial(ops, 32, 2 * half + 1, weight, xval, tl, scale);
    if (chosen >= 0) {
        tl.take(chosen, 32, L);
        std::memcpy(on_grid, trial_on_grid[chosen], sizeof on_grid);
    }
    int n_off = 0;
    for (bool g : on_grid) n_off += g ? 0 : 1;
    if (n_off > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 8; ++k) {
            if (!s_variant && on_grid[k]) continue;  // iq3_s redoes every point
            std::int8_t Lk[4];
            round_to_lattice<4>(xval + 4 * k, id, kmaxq - 1, Lk);
            std::int32_t entry = lat.map[key_of<4, 3>(Lk)];
            if (entry < 0) {
                entry = best_neighbour<4>(lat, ops, entry, xval + 4 * k, waux + 4 * k, scale, L + 4 * k);
                if (entry < 0) return false;
            }
            const std::int8_t* pg = lat.point(entry);
            for (int i = 0; i < 4; ++i) L[4 * k + i] = static_cast<std::int8_t>((pg[i] - 1) / 2);
        }
        float sumqx, sumq2;
        weighted_sums(32, weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    if (scale < 0) {  // "should never happen" in ggml; it flips the signs to keep the scale positive
        scale = -scale;
        for (auto& s : out.signs) s = s_variant ? static_cast<std::uint8_t>(~s) : static_cast<std::uint8_t>(~s & 127);
    }
    for (int k = 0; k < 8; ++k) {
        const std::uint32_t u = key_of<4, 3>(L + 4 * k);
        if (u >= lat.map.size() || lat.map[u] < 0) return false;  // ggml: "Oops: found point … not on grid"
        out.index[k] = lat.map[u];
    }
    if (!(scale >= 0)) return false;
    out.scale = scale;
    return true;
}

// Group weights: the importance times sqrt(sigma2 + x^2), or x^2 without importance.
void iq_weights(int n, const float* xb, const float* qw, float sigma2, float* weight) {
    if (qw != nullptr) {
        for (int i = 0; i < n; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < n; ++i) weight[i] = xb[i] * xb[i];
    }
}

// block_iq3_xxs (98 bytes): d f16, 64 grid indices, 8 u32 of 4x7 sign bits and a 4-bit scale.
bool iq3_xxs_row(const float* x, std::uint8_t* y, std::int64_t n, const float* importance) {
    const iq_lattice& lat = iq3xxs_lattice();
    const iq_ops ops = ops_for(lat.dim);
    for (std::int64_t ibl = 0; ibl < n / qk; ++ibl, y += 98) {
        const float* xbl = x + qk * ibl;
        const float sigma2 = 2 * sum_of_squares(xbl) / qk;
        std::uint8_t q3[96] = {};
        std::uint32_t scales_and_signs[8] = {};
        float scales[8];
        float max_scale = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const float* xb = xbl + 32 * ib;
            float weight[32];
            iq_weights(32, xb, importance ? importance + qk * ibl + 32 * ib : nullptr, sigma2, weight);
            iq3_group g;
            bool skipped = false;
            if (!iq3_search(lat, ops, false, xb, weight, g, skipped)) return false;
            if (skipped) {
                scales[ib] = 0;
                continue;
            }
            for (int k = 0; k < 8; ++k) q3[8 * ib + k] = static_cast<std::uint8_t>(g.index[k]);
            const auto sign = [&](int k) { return static_cast<std::uint32_t>(g.signs[k]); };
            scales_and_signs[ib] = sign(0) | (sign(1) << 7) | (sign(2) << 14) | (sign(3) << 21);
            scales[ib] = g.scale;
            max_scale = max_f(max_scale, g.scale);
        }
        std::memset(y, 0, 98);
        if (max_scale == 0) continue;  // d = +0, all quants zero
        const float d = max_scale / 31;
        store_u16(y, f16_bits(d * 1.0125f));
        const float id = 1 / d;
        for (int ib = 0; ib < 8; ++ib) {
            const int l = clamp_i(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15);
            scales_and_signs[ib] |= static_cast<std::uint32_t>(l) << 28;
        }
        std::memcpy(y + 2, q3, 64);
        for (int ib = 0; ib < 8; ++ib) store_u32(y + 66 + 4 * ib, scales_and_signs[ib]);
    }
    return true;
}

// block_iq3_s (110 bytes): d f16, qs[64] (low 8 bits of the grid indices), qh[8] (their 9th bits),
// signs[32], scales[4] (4 bits per group).
bool iq3_s_row(const float* x, std::uint8_t* y, std::int64_t n, const float* importance) {
    const iq_lattice& lat = iq3s_lattice();
    const iq_ops ops = ops_for(lat.dim);
    for (std::int64_t ibl = 0; ibl < n / qk; ++ibl, y += 110) {
        std::memset(y, 0, 110);
        std::uint8_t* qs = y + 2;
        std::uint8_t* qh = y + 66;
        std::uint8_t* signs = y + 74;
        const float* xbl = x + qk * ibl;
        const float sigma2 = 2 * sum_of_squares(xbl) / qk;
        float scales[8];
        float max_scale = 0;
        // ggml advances its qs and signs pointers only for groups it does not skip, so a skipped
        // (all-zero) group shifts the following groups' bytes down; qh is indexed by group. Kept.
        int qs_at = 0;
        int signs_at = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const float* xb = xbl + 32 * ib;
            float weight[32];
            iq_weights(32, xb, importance ? importance + qk * ibl + 32 * ib : nullptr, sigma2, weight);
            iq3_group g;
            bool skipped = false;
            if (!iq3_search(lat, ops, true, xb, weight, g, skipped)) return false;
            if (skipped) {
                scales[ib] = 0;
                continue;
            }
            for (int k = 0; k < 8; ++k) {
                qs[qs_at + k] = static_cast<std::uint8_t>(g.index[k] & 255);
                qh[ib] = static_cast<std::uint8_t>(qh[ib] | ((g.index[k] >> 8) << k));
            }
            qs_at += 8;
            for (int k = 0; k < 4; ++k) signs[signs_at + k] = g.signs[k];
            signs_at += 4;
            scales[ib] = g.scale;
            max_scale = max_f(max_scale, g.scale);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 31;
        store_u16(y, f16_bits(d * 1.033f));
        const float id = 1 / d;
        for (int ib = 0; ib < 8; ib += 2) {
            const int l1 = clamp_i(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15);
            const int l2 = clamp_i(nearest_int(0.5f * (id * scales[ib + 1] - 1)), 0, 15);
            y[106 + ib / 2] = static_cast<std::uint8_t>(l1 | (l2 << 4));
        }
    }
    return true;
}

// ---- iq2_xxs, iq2_xs, iq2_s: 8-value points of a 2-bit lattice ---------------------------------

// iq2_xxs: groups of 32. Its first scale comes from make_qp_quants (qb::fit_positive) (levels 0..4), then 13 trials.
// block_iq2_xxs (66 bytes): d f16, per group a u32 of 4 grid indices and a u32 of 4x7 sign bits
// and a 4-bit scale.
bool iq2_xxs_row(const float* x, std::uint8_t* y, std::int64_t n, const float* importance) {
    if (importance == nullptr) return false;  // ggml: GGML_ASSERT(quant_weights)
    const iq_lattice& lat = iq2xxs_lattice();
    const iq_ops ops = ops_for(lat.dim);
    constexpr int kmaxq = 3;
    for (std::int64_t ibl = 0; ibl < n / qk; ++ibl, y += 66) {
        const float* xbl = x + qk * ibl;
        const float sigma2 = sum_of_squares(xbl) / qk;
        std::uint32_t q2[16] = {};
        float scales[8];
        float max_scale = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const float* xb = xbl + 32 * ib;
            const float* qw = importance + qk * ibl + 32 * ib;
            float weight[32];
            float waux[32];
            float xval[32];
            std::int8_t L[32];
            std::uint8_t block_signs[4];
            for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 4; ++k)
                block_signs[k] = static_cast<std::uint8_t>(take_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k, true) & 127);
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = max_f(max, xval[i]);
            if (max < 1e-15f) {
                scales[ib] = 0;
                continue;
            }
            float scale = qb::fit_positive(32, kmaxq + 1, xval, reinterpret_cast<std::uint8_t*>(L), weight);
            const float eff_max = scale * kmaxq;
            if (eff_max <= 0) {
                scales[ib] = 0;
                continue;
            }
            float ids[32] = {};
            for (int is = -6; is <= 6; ++is)
                ids[is + 6] = (static_cast<float>(2 * kmaxq - 1) + static_cast<float>(is) * 0.1f) / eff_max;
            trial_levels tl;
            if (!run_trials<8>(lat, ops, 32, kmaxq - 1, 13, ids, xval, waux, tl, nullptr)) return false;
            const int chosen = choose_trial(ops, 32, 13, weight, xval, tl, scale);
            if (chosen >= 0) tl.take(chosen, 32, L);
            if (scale > 0) {
                const float id = 1 / scale;
                for (int k = 0; k < 4; ++k) {
                    std::int8_t Lk[8];
                    round_to_lattice<8>(xval + 8 * k, id, kmaxq - 1, Lk);
                    std::int32_t entry = lat.map[key_of<8, 2>(Lk)];
                    if (entry < 0) {
                        entry = best_neighbour<8>(lat, ops, entry, xval + 8 * k, waux + 8 * k, scale, L + 8 * k);
                        if (entry < 0) return false;
                    }
                    const std::int8_t* pg = lat.point(entry);
                    for (int i = 0; i < 8; ++i) L[8 * k + i] = static_cast<std::int8_t>((pg[i] - 1) / 2);
                }
                float sumqx, sumq2;
                weighted_sums(32, weight, xval, L, sumqx, sumq2);
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) {
                scale = -scale;
                for (auto& s : block_signs) s = static_cast<std::uint8_t>(~s & 127);
            }
            for (int k = 0; k < 4; ++k) {
                const std::uint32_t u = key_of<8, 2>(L + 8 * k);
                if (u >= lat.map.size() || lat.map[u] < 0) return false;
                q2[2 * ib] |= static_cast<std::uint32_t>(lat.map[u]) << (8 * k);
                q2[2 * ib + 1] |= static_cast<std::uint32_t>(block_signs[k]) << (7 * k);
            }
            if (!(scale >= 0)) return false;
            scales[ib] = scale;
            max_scale = max_f(max_scale, scale);
        }
        std::memset(y, 0, 66);
        if (max_scale == 0) continue;
        const float d = max_scale / 31;
        store_u16(y, f16_bits(d));
        const float id = 1 / d;
        for (int ib = 0; ib < 8; ++ib) {
            const int l = clamp_i(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15);
            q2[2 * ib + 1] |= static_cast<std::uint32_t>(l) << 28;
        }
        for (int i = 0; i < 16; ++i) store_u32(y + 2 + 4 * i, q2[i]);
    }
    return true;
}

// One group of 16 values for iq2_xs (`s_variant` false) and iq2_s (true): 19 trial scales from
// max / 5, then the off-grid points redone at the chosen scale.
struct iq2_group {
    float scale = 0;
    int index[2] = {};
    std::uint8_t signs[2] = {};
};

bool iq2_pair_search(const iq_lattice& lat, const iq_ops& ops, bool s_variant, const float* xb, const float* weight, iq2_group& out,
                     bool& skipped) {
    constexpr int kmaxq = 3;
    float waux[16];
    float xval[16];
    std::int8_t L[16];
    bool on_grid[2] = {true, true};
    for (int i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
    for (int k = 0; k < 2; ++k) {
        out.signs[k] = take_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k, !s_variant);
        if (!s_variant) out.signs[k] &= 127;
    }
    float max = xval[0];
    for (int i = 1; i < 16; ++i) max = max_f(max, xval[i]);
    std::memset(L, 0, sizeof L);
    skipped = max < (s_variant ? 1e-8f : 1e-15f);
    if (skipped) return true;
    float scale = max / (2 * kmaxq - 1);
    float ids[32] = {};
    for (int is = -9; is <= 9; ++is) ids[is + 9] = (static_cast<float>(2 * kmaxq - 1) + static_cast<float>(is) * 0.1f) / max;
    trial_levels tl;
    bool trial_on_grid[32][8];
    if (!run_trials<8>(lat, ops, 16, kmaxq - 1, 19, ids, xval, waux, tl, trial_on_grid)) return false;
    const int chosen = choose_trial(ops, 16, 19, weight, xval, tl, scale);
    if (chosen >= 0) {
        tl.take(chosen, 16, L);
        on_grid[0] = trial_on_grid[chosen][0];
        on_grid[1] = trial_on_grid[chosen][1];
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 2; ++k) {
            if (on_grid[k]) continue;
            round_to_lattice<8>(xval + 8 * k, id, kmaxq - 1, L + 8 * k);
            const std::int32_t entry = lat.map[key_of<8, 2>(L + 8 * k)];
            if (entry < 0 && best_neighbour<8>(lat, ops, entry, xval + 8 * k, waux + 8 * k, scale, L + 8 * k) < 0) return false;
        }
        float sumqx, sumq2;
        weighted_sums(16, weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    if (scale < 0) {
        scale = -scale;
        for (auto& s : out.signs) s = s_variant ? static_cast<std::uint8_t>(~s) : static_cast<std::uint8_t>(~s & 127);
    }
    for (int k = 0; k < 2; ++k) {
        const std::uint32_t u = key_of<8, 2>(L + 8 * k);
        if (u >= lat.map.size() || lat.map[u] < 0) return false;
        out.index[k] = lat.map[u];
    }
    if (!(scale >= 0)) return false;
    out.scale = scale;
    return true;
}

// block_iq2_xs (74 bytes): d f16, qs u16[32] (9-bit grid index | 7 sign bits << 9), scales[8].
bool iq2_xs_row(const float* x, std::uint8_t* y, std::int64_t n, const float* importance) {
    if (importance == nullptr) return false;  // ggml: GGML_ASSERT(quant_weights)
    const iq_lattice& lat = iq2xs_lattice();
    const iq_ops ops = ops_for(lat.dim);
    for (std::int64_t ibl = 0; ibl < n / qk; ++ibl, y += 74) {
        const float* xbl = x + qk * ibl;
        const float sigma2 = sum_of_squares(xbl) / qk;
        std::uint16_t q2[32] = {};
        float scales[16];
        float max_scale = 0;
        for (int ib = 0; ib < 16; ++ib) {
            const float* xb = xbl + 16 * ib;
            const float* qw = importance + qk * ibl + 16 * ib;
            float weight[16];
            for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            iq2_group g;
            bool skipped = false;
            if (!iq2_pair_search(lat, ops, false, xb, weight, g, skipped)) return false;
            if (skipped) {
                scales[ib] = 0;
                continue;
            }
            for (int k = 0; k < 2; ++k) q2[2 * ib + k] = static_cast<std::uint16_t>(g.index[k] | (g.signs[k] << 9));
            scales[ib] = g.scale;
            max_scale = max_f(max_scale, g.scale);
        }
        std::memset(y, 0, 74);
        if (max_scale == 0) continue;
        const float d = max_scale / 31;
        store_u16(y, f16_bits(d));
        const float id = 1 / d;
        for (int ib = 0; ib < 16; ++ib) {
            const int l = clamp_i(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15);
            y[66 + ib / 2] = static_cast<std::uint8_t>(ib % 2 == 0 ? l : (y[66 + ib / 2] | (l << 4)));
        }
        for (int i = 0; i < 32; ++i) store_u16(y + 2 + 2 * i, q2[i]);
    }
    return true;
}

// block_iq2_s (82 bytes): d f16, qs[64] (32 low bytes of the grid indices, then 32 sign bytes),
// qh[8] (2 high bits per index), scales[8].
bool iq2_s_row(const float* x, std::uint8_t* y, std::int64_t n, const float* importance) {
    const iq_lattice& lat = iq2s_lattice();
    const iq_ops ops = ops_for(lat.dim);
    for (std::int64_t ibl = 0; ibl < n / qk; ++ibl, y += 82) {
        std::memset(y, 0, 82);
        const float* xbl = x + qk * ibl;
        const float sigma2 = 2 * sum_of_squares(xbl) / qk;
        float scales[16];
        float max_scale = 0;
        for (int ib = 0; ib < 16; ++ib) {
            const float* xb = xbl + 16 * ib;
            float weight[16];
            if (importance != nullptr) {
                const float* qw = importance + qk * ibl + 16 * ib;
                for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 16; ++i) weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            }
            iq2_group g;
            bool skipped = false;
            if (!iq2_pair_search(lat, ops, true, xb, weight, g, skipped)) return false;
            if (skipped) {
                scales[ib] = 0;
                continue;
            }
            for (int k = 0; k < 2; ++k) {
                const int i8 = 2 * ib + k;
                y[2 + i8] = static_cast<std::uint8_t>(g.index[k] & 255);
                y[66 + i8 / 4] = static_cast<std::uint8_t>(y[66 + i8 / 4] | ((g.index[k] >> 8) << (2 * (i8 % 4))));
                y[2 + 32 + i8] = g.signs[k];
            }
            scales[ib] = g.scale;
            max_scale = max_f(max_scale, g.scale);
        }
        if (max_scale == 0) continue;
        const float d = max_scale / 31;
        store_u16(y, f16_bits(d * 0.9875f));
        const float id = 1 / d;
        for (int ib = 0; ib < 16; ++ib) {
            const int l = clamp_i(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15);
            y[74 + ib / 2] = static_cast<std::uint8_t>(ib % 2 == 0 ? l : (y[74 + ib / 2] | (l << 4)));
        }
    }
    return true;
}

// Rows are independent: the first failing one stops the loop, as ggml's abort would.
template <bool (*Row)(const float*, std::uint8_t*, std::int64_t, const float*), std::int64_t BlockBytes>
std::int64_t rows(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row, const float* importance) {
    const std::int64_t row_bytes = n_per_row / qk * BlockBytes;
    for (std::int64_t r = 0; r < n_rows; ++r)
        if (!Row(src + r * n_per_row, dst + r * row_bytes, n_per_row, importance)) return r;
    return -1;
}

}  // namespace

void scalar_trials_round(const float* x, int n, const float* ids, int lmax, int dim, std::int8_t* L, std::uint32_t* keys) {
    const int bits = dim == 4 ? 3 : 2;
    for (int t = 0; t < 32; ++t) {
        for (int i = 0; i < n; ++i)
            L[32 * i + t] = static_cast<std::int8_t>(clamp_i(nearest_int(0.5f * (ids[t] * x[i] - 1)), 0, lmax));
        for (int k = 0; k < n / dim; ++k) {  // key_of's packing
            std::uint32_t u = 0;
            for (int c = 0; c < dim; ++c) u |= static_cast<std::uint32_t>(L[32 * (dim * k + c) + t]) << (bits * c);
            keys[32 * k + t] = u & 0xffffu;
        }
    }
}

void scalar_codebook_sums(int n, int trials, const float* weight, const float* xval, const std::int8_t* L, float* sumqx,
                          float* sumq2) {
    for (int t = 0; t < trials; ++t) {
        float qx = 0, q2 = 0;
        for (int i = 0; i < n; ++i) {  // weighted_sums' chain on trial t's levels
            const float w = weight[i];
            const float q = static_cast<float>(2 * L[32 * i + t] + 1);
            qx += w * xval[i] * q;
            q2 += w * q * q;
        }
        sumqx[t] = qx;
        sumq2[t] = q2;
    }
}

row_quantizer iq_quantizer(gguf::tensor_type type) noexcept {
    using gguf::tensor_type;
    switch (type) {
        case tensor_type::iq3_xxs: return rows<iq3_xxs_row, 98>;
        case tensor_type::iq3_s: return rows<iq3_s_row, 110>;
        case tensor_type::iq2_xxs: return rows<iq2_xxs_row, 66>;
        case tensor_type::iq2_xs: return rows<iq2_xs_row, 74>;
        case tensor_type::iq2_s: return rows<iq2_s_row, 82>;
        case tensor_type::iq1_s: return iq1_s_quantizer();
        case tensor_type::iq1_m: return iq1_m_quantizer();
        default: return nullptr;
    }
}

}  // namespace minfer::quant::detail
