#pragma once
// The small float formats of the block scales, widened to f32 exactly as ggml does (internal), and
// little-endian loads from unaligned bytes. Shared by scalar.cpp and the ISA files, so every
// function is `static inline` and uses no std template (see kernels.hpp: a weak inline function
// compiled with -mavx2 could otherwise be the copy the linker keeps for a non-AVX2 caller).
#include <cstdint>
#include <cstring>

namespace minfer::quant::detail {

static inline float f32_from_bits(std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

static inline std::uint16_t load_u16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

static inline std::uint32_t load_u32(const std::uint8_t* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

/// IEEE binary16 to f32: exact for every finite value and the infinities. A NaN keeps its sign and
/// payload and comes out quiet (bit 22 set), which is what ggml's conversion gives: it widens
/// through a float multiply, and a multiply quiets a signalling NaN.
static inline float fp16_to_f32(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (man << 13) | (man != 0 ? 0x00400000u : 0u));
    if (exp != 0) return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));  // rebias 15 -> 127
    // Zero and subnormals: man * 2^-24, exact in f32 (a normal f32 unless man is 0).
    std::uint32_t bits;
    const float magnitude = static_cast<float>(man) * 0x1p-24f;
    std::memcpy(&bits, &magnitude, sizeof bits);
    return f32_from_bits(sign | bits);
}

/// bfloat16 to f32: the upper half of the f32 bits (NaN payloads kept as they are).
static inline float bf16_to_f32(std::uint16_t h) { return f32_from_bits(static_cast<std::uint32_t>(h) << 16); }

/// Half the value of an E8M0 scale, 2^(x-128), as ggml's mxfp4 uses it (its fp4 values are stored
/// doubled). x = 0 and 1 are f32 subnormals; 255 is 2^127 (ggml gives it no NaN meaning).
static inline float e8m0_to_f32_half(std::uint8_t x) {
    return f32_from_bits(x < 2 ? 0x00200000u << x : static_cast<std::uint32_t>(x - 1) << 23);
}

/// Half the value of a UE4M3 scale (nvfp4), as ggml computes it: 4 exponent bits (bias 7), 3
/// mantissa bits, no infinities or NaN. The top bit is ignored, except that 0x7f (and 0) give 0,
/// so 0x80 gives 0 and 0xff gives 240.
static inline float ue4m3_to_f32_half(std::uint8_t x) {
    if (x == 0 || x == 0x7f) return 0.0f;
    const std::uint32_t exp = (x >> 3) & 0xfu;
    const std::uint32_t man = x & 0x7u;
    if (exp == 0) return static_cast<float>(man) * 0x1p-10f;  // man * 2^-9, halved
    // (1 + man/8) * 2^(exp-7), halved: f32 exponent field exp - 8 + 127.
    return f32_from_bits(((exp + 119u) << 23) | (man << 20));
}

}  // namespace minfer::quant::detail
