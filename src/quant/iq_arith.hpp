#pragma once
// The small pieces of ggml's arithmetic the codebook quantizers share (internal): its rounding to
// int, its max, its f32 -> f16 conversion and little-endian stores. Each must give what ggml's
// gives for every input, infinities and NaN included, because the quantizers' choices (and so
// their bytes) follow from them.
#include <cstdint>
#include <cstring>

namespace minfer::quant::detail::iq {

inline constexpr int qk = 256;  // values per super-block (QK_K)

/// ggml's nearest_int: adds 1.5 * 2^23 so that the float unit rounds (to nearest, ties to even) and
/// reads the low mantissa bits. For |f| > 2^22 (and inf, NaN) the result is garbage, but the same
/// garbage as ggml's, which the callers then clamp.
inline int nearest_int(float f) {
    const float biased = f + 12582912.0f;
    std::uint32_t bits;
    std::memcpy(&bits, &biased, sizeof bits);
    return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

/// ggml's MAX(a, b) on floats: `a > b ? a : b`, so a NaN b is dropped and a NaN a kept.
inline float max_f(float a, float b) { return a > b ? a : b; }
inline int clamp_i(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

/// f32 -> IEEE binary16, rounding to nearest even, as ggml's GGML_FP32_TO_FP16: overflow to
/// infinity, every NaN to the quiet NaN 0x7e00 with the sign kept.
inline std::uint16_t f16_bits(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    const std::uint32_t mag = bits & 0x7fffffffu;
    if (mag > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);
    if (mag >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // ≥ 65520: infinity
    const std::uint32_t exp = mag >> 23;
    if (exp >= 113) {  // a normal half: rebias, round the 13 dropped bits (a carry may reach the exponent)
        std::uint32_t h = ((exp - 112) << 10) | ((mag >> 13) & 0x3ffu);
        const std::uint32_t rest = mag & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    if (exp == 0) return sign;  // f32 zero or subnormal: far below half's smallest subnormal
    // A half subnormal (or zero): the value in units of 2^-24 is mant * 2^(exp - 126).
    const std::uint32_t mant = (mag & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exp;  // ≥ 14
    if (shift > 24) return sign;            // below 2^-25: rounds to zero
    std::uint32_t h = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u) != 0)) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

inline void store_u16(std::uint8_t* p, std::uint32_t v) {
    p[0] = static_cast<std::uint8_t>(v);
    p[1] = static_cast<std::uint8_t>(v >> 8);
}
inline void store_u32(std::uint8_t* p, std::uint32_t v) {
    store_u16(p, v);
    store_u16(p + 2, v >> 16);
}

}  // namespace minfer::quant::detail::iq
