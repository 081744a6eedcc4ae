// The AVX2 kernels of the codebook formats: iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m
// (compiled with -mavx2 -mf16c -mbmi2; see kernels.hpp for the rules of this file).
//
// Every format stores, per 8 values, an index into a grid of 8 (or two of 4) small byte values and,
// for iq2/iq3, 8 sign bits; a block scale (f16) times a small per-32-values integer gives the
// scale. One row of 8 values is one 64-bit grid load widened to 8 lanes (cvtepu8/cvtepi8 ->
// epi32 -> ps, exact for bytes), one multiply by the broadcast scale and, for the signs, an XOR of
// the sign bit. That is exactly ggml's `db * grid[j] * (±1.f)`: a product times -1 is its
// negation, and multiplication commutes, so the bits are ggml's (a NaN may differ in its sign,
// which makes it no less a NaN). The scales are computed in scalar floats with ggml's expression
// and order (this file is compiled with -ffp-contract=off, so no multiply is fused).
#include <immintrin.h>

#include <cstring>

#include "grids.hpp"
#include "avx2_store.hpp"
#include "kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {

using gguf::tensor_type;

// Unaligned little-endian loads (the blocks are packed, 2-byte d first: nothing is aligned).
inline std::uint16_t load16(const std::uint8_t* p) {
    std::uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline std::uint32_t load32(const std::uint8_t* p) {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// f16 -> f32 with F16C: exact for every finite value, subnormal and infinity (a NaN stays a NaN).
inline float half(std::uint16_t h) { return _cvtsh_ss(h); }

// The 8 unsigned bytes of a grid point as floats (exact).
inline __m256 bytes_u8(std::uint64_t g) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(g))));
}
// The 8 signed bytes (-1, 0, 1) of an iq1 grid point as floats (exact).
inline __m256 bytes_i8(std::uint64_t g) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(static_cast<long long>(g))));
}

// Bit j of `s` moved to the sign bit of lane j, every other bit clear.
inline __m256 sign_mask(unsigned s) {
    const __m256i shifts = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24);
    const __m256i top = _mm256_set1_epi32(static_cast<int>(0x80000000u));
    return _mm256_castsi256_ps(
        _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(static_cast<int>(s)), shifts), top));
}

// y[j] = scale * grid byte j, negated where bit j of `signs` is set (ggml: db * grid[j] * ±1.f).
template <bool S>
inline void row_signed(float* y, std::uint64_t grid, __m256 scale, unsigned signs) {
    const __m256 v = _mm256_mul_ps(bytes_u8(grid), scale);
    store8<S>(y, _mm256_xor_ps(v, sign_mask(signs)));
}

// Two 4-byte grid points (iq3) as one 8-byte row, the first in the low half.
inline std::uint64_t pair(std::uint32_t lo, std::uint32_t hi) {
    return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(hi) << 32);
}

// iq2_xxs (66 bytes): d, then per 32 values 8 bytes: 4 grid indices, then 4 x 7 sign bits and a
// 4-bit scale (the top nibble). db = d * (0.5 + s) * 0.25.
template <bool S>
void iq2_xxs(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 66) {
        const float d = half(load16(src));
        const std::uint8_t* q = src + 2;
        for (int ib = 0; ib < 8; ++ib, q += 8, dst += 32) {
            const std::uint32_t idx = load32(q);
            const std::uint32_t aux = load32(q + 4);
            const __m256 db = _mm256_set1_ps(d * (0.5f + static_cast<float>(aux >> 28)) * 0.25f);
            for (unsigned l = 0; l < 4; ++l)
                row_signed<S>(dst + 8 * l, iq2xxs_grid[(idx >> (8 * l)) & 255u], db, iq2_signs[(aux >> (7 * l)) & 127u]);
        }
    }
}

// iq2_xs (74 bytes): d, 32 u16 (9-bit grid index, 7 sign bits), 8 bytes of two 4-bit scales.
template <bool S>
void iq2_xs(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 74) {
        const float d = half(load16(src));
        const std::uint8_t* q = src + 2;
        const std::uint8_t* scales = src + 66;
        for (int ib = 0; ib < 8; ++ib, q += 8, dst += 32) {
            const __m256 db0 = _mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib] & 0xf)) * 0.25f);
            const __m256 db1 = _mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib] >> 4)) * 0.25f);
            for (unsigned l = 0; l < 4; ++l) {
                const unsigned v = load16(q + 2 * l);
                row_signed<S>(dst + 8 * l, iq2xs_grid[v & 511u], l < 2 ? db0 : db1, iq2_signs[v >> 9]);
            }
        }
    }
}

// iq2_s (82 bytes): d, 32 grid index low bytes, 32 sign bytes, 8 bytes of 2-bit index highs (qh),
// 8 bytes of two 4-bit scales.
template <bool S>
void iq2_s(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 82) {
        const float d = half(load16(src));
        const std::uint8_t* qs = src + 2;
        const std::uint8_t* signs = src + 34;
        const std::uint8_t* qh = src + 66;
        const std::uint8_t* scales = src + 74;
        for (int ib = 0; ib < 8; ++ib, qs += 4, signs += 4, dst += 32) {
            const __m256 db0 = _mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib] & 0xf)) * 0.25f);
            const __m256 db1 = _mm256_set1_ps(d * (0.5f + static_cast<float>(scales[ib] >> 4)) * 0.25f);
            const unsigned h = qh[ib];
            for (unsigned l = 0; l < 4; ++l) {
                const unsigned index = qs[l] | (((h >> (2 * l)) & 3u) << 8);
                row_signed<S>(dst + 8 * l, iq2s_grid[index], l < 2 ? db0 : db1, signs[l]);
            }
        }
    }
}

// iq3_xxs (98 bytes): d, 64 grid indices (4 values each), then per 32 values a u32 of 4 x 7 sign
// bits and a 4-bit scale. db = d * (0.5 + s) * 0.5.
template <bool S>
void iq3_xxs(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 98) {
        const float d = half(load16(src));
        const std::uint8_t* qs = src + 2;
        const std::uint8_t* ss = src + 66;
        for (int ib = 0; ib < 8; ++ib, qs += 8, dst += 32) {
            const std::uint32_t aux = load32(ss + 4 * ib);
            const __m256 db = _mm256_set1_ps(d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f);
            for (unsigned l = 0; l < 4; ++l)
                row_signed<S>(dst + 8 * l, pair(iq3xxs_grid[qs[2 * l]], iq3xxs_grid[qs[2 * l + 1]]), db,
                           iq2_signs[(aux >> (7 * l)) & 127u]);
        }
    }
}

// iq3_s (110 bytes): d, 64 grid index low bytes, 8 bytes of index high bits (one per index), 32
// sign bytes, 4 bytes of two 4-bit scales. db = d * (1 + 2 s).
template <bool S>
void iq3_s(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 110) {
        const float d = half(load16(src));
        const std::uint8_t* qs = src + 2;
        const std::uint8_t* qh = src + 66;
        const std::uint8_t* signs = src + 74;
        const std::uint8_t* scales = src + 106;
        for (int ib = 0; ib < 8; ++ib, qs += 8, signs += 4, dst += 32) {
            const int s = ib % 2 == 0 ? (scales[ib / 2] & 0xf) : (scales[ib / 2] >> 4);
            const __m256 db = _mm256_set1_ps(d * static_cast<float>(1 + 2 * s));
            const unsigned h = qh[ib];
            for (unsigned l = 0; l < 4; ++l) {
                const unsigned i0 = qs[2 * l] | (((h >> (2 * l)) & 1u) << 8);
                const unsigned i1 = qs[2 * l + 1] | (((h >> (2 * l + 1)) & 1u) << 8);
                row_signed<S>(dst + 8 * l, pair(iq3s_grid[i0], iq3s_grid[i1]), db, signs[l]);
            }
        }
    }
}

// y[j] = scale * (grid byte j + delta) (ggml: dl * (grid[j] + delta)); the sum is exact.
template <bool S>
inline void row_delta(float* y, std::uint64_t grid, __m256 scale, __m256 delta) {
    store8<S>(y, _mm256_mul_ps(scale, _mm256_add_ps(bytes_i8(grid), delta)));
}

// ±iq1_delta, negative when `negative` is 1: built from the bits rather than chosen by a branch
// (the sign bits are random data; a mispredicted branch per 8 values costs more than the row).
inline __m256 delta_of(unsigned negative) {
    constexpr unsigned delta_bits = 0x3e000000u;  // 0.125f
    static_assert(iq1_delta == 0.125f);
    return _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(delta_bits | (negative << 31))));
}

// iq1_s (50 bytes): d, 32 grid index low bytes, 8 u16: 4 x 3 index high bits, a 3-bit scale
// (bits 12..14) and the sign of delta (bit 15). dl = d * (2 s + 1).
template <bool S>
void iq1_s(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 50) {
        const float d = half(load16(src));
        const std::uint8_t* qs = src + 2;
        for (int ib = 0; ib < 8; ++ib, qs += 4, dst += 32) {
            const unsigned h = load16(src + 34 + 2 * ib);
            const __m256 dl = _mm256_set1_ps(d * static_cast<float>(2 * ((h >> 12) & 7u) + 1));
            const __m256 delta = delta_of(h >> 15);
            for (unsigned l = 0; l < 4; ++l)
                row_delta<S>(dst + 8 * l, iq1s_grid[qs[l] | (((h >> (3 * l)) & 7u) << 8)], dl, delta);
        }
    }
}

// iq1_m (56 bytes): 32 grid index low bytes, 16 bytes qh (per 8 values: 3 index high bits and the
// sign of delta), 8 bytes = 4 u16 of 3-bit scales whose top nibbles together are the f16 d.
template <bool S>
void iq1_m(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 56) {
        unsigned sc[4];
        for (int k = 0; k < 4; ++k) sc[k] = load16(src + 48 + 2 * k);
        const unsigned dbits = (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0u) | ((sc[2] >> 4) & 0x0f00u) | (sc[3] & 0xf000u);
        const float d = half(static_cast<std::uint16_t>(dbits));
        const std::uint8_t* qs = src;
        const std::uint8_t* qh = src + 32;
        for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2, dst += 32) {
            const unsigned shift = 6u * static_cast<unsigned>(ib % 2);
            const __m256 dl1 = _mm256_set1_ps(d * static_cast<float>(2 * ((sc[ib / 2] >> shift) & 7u) + 1));
            const __m256 dl2 = _mm256_set1_ps(d * static_cast<float>(2 * ((sc[ib / 2] >> (shift + 3)) & 7u) + 1));
            const unsigned h0 = qh[0];
            const unsigned h1 = qh[1];
            row_delta<S>(dst + 0, iq1s_grid[qs[0] | ((h0 & 7u) << 8)], dl1, delta_of((h0 >> 3) & 1u));
            row_delta<S>(dst + 8, iq1s_grid[qs[1] | (((h0 >> 4) & 7u) << 8)], dl1, delta_of(h0 >> 7));
            row_delta<S>(dst + 16, iq1s_grid[qs[2] | ((h1 & 7u) << 8)], dl2, delta_of((h1 >> 3) & 1u));
            row_delta<S>(dst + 24, iq1s_grid[qs[3] | (((h1 >> 4) & 7u) << 8)], dl2, delta_of(h1 >> 7));
        }
    }
}

constexpr unsigned id(tensor_type t) { return static_cast<unsigned>(t); }

constexpr kernel_table make_table() {
    kernel_table t{};
    t.by_type[id(tensor_type::iq2_xxs)] = iq2_xxs<false>;
    t.streaming[id(tensor_type::iq2_xxs)] = iq2_xxs<true>;
    t.by_type[id(tensor_type::iq2_xs)] = iq2_xs<false>;
    t.streaming[id(tensor_type::iq2_xs)] = iq2_xs<true>;
    t.by_type[id(tensor_type::iq2_s)] = iq2_s<false>;
    t.streaming[id(tensor_type::iq2_s)] = iq2_s<true>;
    t.by_type[id(tensor_type::iq3_xxs)] = iq3_xxs<false>;
    t.streaming[id(tensor_type::iq3_xxs)] = iq3_xxs<true>;
    t.by_type[id(tensor_type::iq3_s)] = iq3_s<false>;
    t.streaming[id(tensor_type::iq3_s)] = iq3_s<true>;
    t.by_type[id(tensor_type::iq1_s)] = iq1_s<false>;
    t.streaming[id(tensor_type::iq1_s)] = iq1_s<true>;
    t.by_type[id(tensor_type::iq1_m)] = iq1_m<false>;
    t.streaming[id(tensor_type::iq1_m)] = iq1_m<true>;
    return t;
}
constexpr kernel_table table = make_table();

}  // namespace

const kernel_table& avx2_iq_kernels() noexcept { return table; }
#endif

}  // namespace minfer::quant::detail
