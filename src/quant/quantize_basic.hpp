#pragma once
// Arithmetic shared by the basic-family quantizers (internal): the f32 -> f16/bf16 roundings, the
// integer conversions ggml's C relies on, little-endian stores, and the block runners. Everything
// here exists to give the same bits as ggml's reference quantizers (ggml-quants.c, built without
// FMA contraction); see docs/QUANT.md, "Quantizing".
#include <cmath>
#include <cstdint>
#include <cstring>

#include "half.hpp"
#include "quantize_kernels.hpp"

namespace minfer::quant::detail::qb {

inline std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

/// f32 -> IEEE binary16, round to nearest even, by the same float operations as ggml's portable
/// conversion (ggml_compute_fp32_to_fp16, from the FP16 library; libggml-base uses it on x86-64,
/// not F16C): the magnitude is scaled up by 2^112 (overflow to Inf happens here) and down by
/// 2^-110, then added to a power of two chosen from f's exponent so that the FPU's own rounding
/// drops exactly the bits f16 cannot hold. Every NaN becomes 0x7e00 with f's sign.
inline std::uint16_t f32_to_f16(float f) {
    float base = (std::fabs(f) * 0x1p+112f) * 0x1p-110f;
    const std::uint32_t w = bits_of(f);
    const std::uint32_t shl1_w = w + w;  // the sign shifted out
    const std::uint32_t sign = w & 0x80000000u;
    std::uint32_t bias = shl1_w & 0xff000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;  // below f16's normal range: a fixed subnormal step
    base = f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const std::uint32_t b = bits_of(base);
    const std::uint32_t exp_bits = (b >> 13) & 0x00007c00u;
    const std::uint32_t mantissa_bits = b & 0x00000fffu;  // a carry out of the mantissa bumps the exponent
    const std::uint32_t nonsign = exp_bits + mantissa_bits;
    return static_cast<std::uint16_t>((sign >> 16) | (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
}

/// f32 -> bfloat16 as ggml_fp32_to_bf16_row_ref: round to nearest even on the upper 16 bits; a NaN
/// is truncated and made quiet (bit 6 of the result set), keeping its sign and upper payload.
inline std::uint16_t f32_to_bf16(float f) {
    const std::uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 64u);
    return static_cast<std::uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

/// ggml's nearest_int: adding 1.5 * 2^23 leaves round-to-nearest-even(f) in the low mantissa bits.
/// Exact for |f| <= 2^22 - 1 (ggml asserts that only in debug builds); beyond it, and for NaN and
/// Inf, the result is whatever those bits give, which is what ggml's release build stores, so it
/// is reproduced rather than clamped.
inline int nearest_int(float f) {
    const float biased = f + 12582912.f;
    std::int32_t i;
    std::memcpy(&i, &biased, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

/// float -> int32 as an x86-64 cvttss2si does: truncation toward zero, and INT32_MIN ("integer
/// indefinite") for NaN and for values outside int32. ggml's C casts floats to int8_t/uint8_t/int
/// in places where a NaN, an Inf or a huge value can reach the cast (undefined in C and C++); its
/// x86-64 build converts through this instruction and keeps the low bits, so we do the same,
/// without undefined behaviour.
inline std::int32_t trunc_i32(float f) {
    if (!(f > -2147483904.0f && f < 2147483648.0f)) return INT32_MIN;  // NaN fails both tests
    return static_cast<std::int32_t>(f);
}
/// trunc_i32(roundf(f)) (round half away from zero, then ggml's cast) without the libm call, so
/// that q8_0's loop vectorises: in int32 range the truncation is exact and so is f - trunc(f), which
/// decides the step away from zero; NaN, Inf and huge values give INT32_MIN as before.
inline std::int32_t round_i32(float f) {
    if (!(f > -2147483904.0f && f < 2147483648.0f)) return INT32_MIN;
    std::int32_t i = static_cast<std::int32_t>(f);
    const float frac = f - static_cast<float>(i);
    i += (frac >= 0.5f ? 1 : 0) - (frac <= -0.5f ? 1 : 0);
    return i;
}
/// (int8_t)f and (uint8_t)f in ggml's x86-64 build: the low byte of trunc_i32.
inline std::int8_t trunc_i8(float f) { return static_cast<std::int8_t>(static_cast<std::uint8_t>(trunc_i32(f) & 0xff)); }
inline std::uint8_t trunc_u8(float f) { return static_cast<std::uint8_t>(trunc_i32(f) & 0xff); }

/// ggml's MAX/MIN macros on floats: `a > b ? a : b`. The argument order matters with a NaN (a NaN
/// in b wins, one in a loses), so they are kept as written there.
inline float max_as_ggml(float a, float b) { return a > b ? a : b; }

/// ggml's make_qp_quants (quantize_k.cpp): the weighted scale of non-negative values on levels
/// [0, nmax], L as uint8 (a level that does not fit wraps, as in ggml). The k-quants' sub-block
/// scales and iq2_xxs's first scale both use it.
float fit_positive(int n, int nmax, const float* x, std::uint8_t* L, const float* w);

inline void store_u16(std::uint8_t* p, std::uint16_t v) {
    p[0] = static_cast<std::uint8_t>(v);
    p[1] = static_cast<std::uint8_t>(v >> 8);
}
inline void store_u32(std::uint8_t* p, std::uint32_t v) {
    for (int k = 0; k < 4; ++k) p[k] = static_cast<std::uint8_t>(v >> (8 * k));
}
inline void store_f16(std::uint8_t* p, float f) { store_u16(p, f32_to_f16(f)); }
/// The f16 a field holds, back as f32 (the k-quants requantize with the rounded scales).
inline float f16_field(const std::uint8_t* p) { return fp16_to_f32(load_u16(p)); }

/// A quantizer that works block by block and never reads the importance weights (ggml calls the
/// _ref function on all rows at once for these): `Block(x, y)` writes one block.
template <int Values, int Bytes, void (*Block)(const float*, std::uint8_t*)>
std::int64_t blockwise(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row,
                       const float*) {
    const std::int64_t blocks = n_rows * (n_per_row / Values);
    for (std::int64_t b = 0; b < blocks; ++b) Block(src + b * Values, dst + b * Bytes);
    return -1;
}

/// A quantizer that is blockwise without importance weights and row by row with them (ggml's
/// quantize_<type>: the _ref function, or the _impl function per row). `Weighted(x, y, n, w)`
/// writes one row of n values.
template <int Values, int Bytes, void (*Block)(const float*, std::uint8_t*),
          void (*Weighted)(const float*, std::uint8_t*, std::int64_t, const float*)>
std::int64_t ref_or_weighted(const float* src, std::uint8_t* dst, std::int64_t n_rows, std::int64_t n_per_row,
                             const float* importance) {
    if (importance == nullptr) return blockwise<Values, Bytes, Block>(src, dst, n_rows, n_per_row, nullptr);
    const std::int64_t row_bytes = n_per_row / Values * Bytes;
    for (std::int64_t r = 0; r < n_rows; ++r) Weighted(src + r * n_per_row, dst + r * row_bytes, n_per_row, importance);
    return -1;
}

// The scale searches, shared by the k-quants and the weighted legacy types.

constexpr float group_max_eps = 1e-15f;  // ggml's GROUP_MAX_EPS: below it a group counts as all zero

inline int clamp(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }


/// ggml's make_qx_quants with rmse_type 1: a symmetric scale for n values on the levels
/// [-nmax, nmax-1], chosen among 19 trial scales around -nmax/max by weighted least squares
/// (weights: `weights`, or x*x when nullptr). Writes L[i] = level + nmax; returns the scale.
/// Inline so that each caller's constant n and nmax specialise its loops (it is most of q6_K's
/// and q3_K's time).
inline float fit_symmetric(int n, int nmax, const float* x, std::int8_t* L, const float* weights) {
    // n <= 32 in every caller (16- and 32-value groups, 16 sub-block scales).
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
    // The weights once, outside the 19 trial loops (x*x is the same product ggml computes in them).
    float wbuf[32];
    if (weights == nullptr) {
        for (int i = 0; i < n; ++i) wbuf[i] = x[i] * x[i];
        weights = wbuf;
    }
    auto weight = [&](int i) { return weights[i]; };
    float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = static_cast<std::int8_t>(l + nmax);
        const float w = weight(i);
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    // Nudge the level count by ±0.1 … ±0.9 and keep the rounding with the best weighted fit
    // (sumlx^2 / suml2, compared without dividing).
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
            const float w = weight(i);
            sumlx += w * x[i] * static_cast<float>(l);
            suml2 += w * static_cast<float>(l) * static_cast<float>(l);
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i)
                L[i] = static_cast<std::int8_t>(nmax + clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/// ggml's make_qkx2_quants / make_qkx3_quants (the same arithmetic for every input: their only
/// difference, `max == min` against `max <= min` after min is clipped to <= 0, cannot differ): a
/// scale and a min for levels [0, nmax], searched over nstep+1 trial scales. Writes L, uses Laux
/// as scratch, stores -min in *the_min; returns the scale.
float fit_with_min(int n, int nmax, const float* x, const float* weights, std::uint8_t* L, float* the_min,
                   std::uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad);

/// ggml's make_q3_quants with do_rmse (quantize_k.cpp; q3_K without importance weights): levels
/// [-nmax, nmax-1] weighted by x^2, refined one value at a time. Writes L[i] = level + nmax.
float fit_q3(int n, int nmax, const float* x, std::int8_t* L);
/// iq4_nl / iq4_xs's searches in scalar code (quantize_legacy.cpp; see iq4_trial_sums_fn and
/// iq4_levels_fn in quantize_kernels.hpp): ggml's loops, try by try and value by value.
void iq4_trial_sums(const float* x, const float* w, const float* ids, float* sumqx, float* sumq2);
void iq4_levels(const float* x, int n, float id, std::uint8_t* L);

// The two files of the family (quantize_basic.cpp picks from them).
row_quantizer legacy_quantizer(gguf::tensor_type type) noexcept;  // quantize_legacy.cpp
row_quantizer k_quantizer(gguf::tensor_type type) noexcept;       // quantize_k.cpp

/// q3_K's split of 256 levels into the low levels U and the high-bit mask (32 bytes; value i + 32 b
/// is bit b of byte i): ggml's `if (L[j] > 3) { set the bit; L[j] -= 4; }` (quantize_k.cpp; the
/// AVX2 version is avx2_q3_split_high, quantize_kernels.hpp).
void q3_split_high(const std::int8_t* L, std::uint8_t* U, std::uint8_t* hmask);

}  // namespace minfer::quant::detail::qb
