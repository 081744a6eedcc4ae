// The AVX2 kernels (compiled with -mavx2 -mf16c -mbmi2; see kernels.hpp for the rules of this file):
// floats, the legacy and k-quant formats, fp4 and ternary types. The iq2/iq3/iq1 kernels are in
// avx2_iq.cpp; avx2_kernels() joins both tables.
//
// Bit-exactness with ggml (and scalar.cpp): every value is computed with the float operations of
// ggml's dequantize_row_*, in the same order and nothing else. The integer quant becomes a float
// exactly (vcvtdq2ps of a small int), then it is multiplied by the same f32 scale, built the same
// way (d * sub-scale as one multiply, before the quant), and a min is added or subtracted as a
// separate operation (no FMA: this file is never compiled with -mfma, and -ffp-contract=off). f16
// scales widen with F16C, which is exact for every non-NaN f16; a NaN comes out quiet with its
// payload, as ggml's software conversion gives it.
//
// Shape: 8 values per step (one 256-bit store). Where the quants are whole bytes or fields of
// bytes, 8 bytes are widened to int32 lanes straight from memory (vpmovzxbd: one shuffle), and
// every field of those bytes (both nibbles, four crumbs, the high bits) is taken out of the same
// lanes with shifts and masks, so a byte is widened once however many values it holds. Lookup
// formats (iq4_nl, mxfp4, nvfp4) map 32 nibbles through pshufb first. Sub-block scales are made
// as one vector (d times 8 or 16 integer scales) and broadcast from memory. Outside the cache the
// kernels run at the f32 store bandwidth (bench/bench_quant.cpp measures both).
#include <immintrin.h>

#include <cstring>

#include "grids.hpp"
#include "avx2_store.hpp"
#include "kernels.hpp"

namespace minfer::quant::detail {

#if defined(__AVX2__)
namespace {

using u8 = std::uint8_t;

inline float f16_at(const u8* p) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

inline __m128i load128(const u8* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m256i load256(const u8* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// 8 int32 quants -> q * d.
template <bool S>
inline void put8(float* y, __m256i q, __m256 d) { store8<S>(y, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d)); }
// 8 int32 quants -> q * d - m (two roundings, as ggml's d * q - m).
template <bool S>
inline void put8_sub(float* y, __m256i q, __m256 d, __m256 m) {
    store8<S>(y, _mm256_sub_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(q), d), m));
}
// 8 int32 quants -> q * d + m.
template <bool S>
inline void put8_add(float* y, __m256i q, __m256 d, __m256 m) {
    store8<S>(y, _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(q), d), m));
}

// 8 bytes at p widened to 8 int32 straight from memory (one shuffle for 8 values; the nibble and
// crumb formats then take two or four runs of values out of the same lanes with shifts).
inline __m256i i8x8_at(const u8* p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
inline __m256i u8x8_at(const u8* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }

// 16 signed bytes -> 16 floats, q * d.
template <bool S>
inline void put16_i8(float* y, __m128i b, __m256 d) {
    put8<S>(y, _mm256_cvtepi8_epi32(b), d);
    put8<S>(y + 8, _mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)), d);
}
// 32 signed bytes -> 32 floats, q * d.
template <bool S>
inline void put32_i8(float* y, __m256i b, __m256 d) {
    put16_i8<S>(y, _mm256_castsi256_si128(b), d);
    put16_i8<S>(y + 16, _mm256_extracti128_si256(b, 1), d);
}

// The 16 bytes of 32 packed nibbles as 32 bytes: low nibbles (elements 0..15) then high ones
// (16..31), the order of iq4_nl and mxfp4 (indices for a pshufb lookup).
inline __m256i nibbles32(const u8* qs) {
    const __m128i b = load128(qs);
    const __m128i m = _mm_set1_epi8(0x0f);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

// ---- plain types ----

// f32: a copy. The normal form is memcpy; the streaming form exists so that a large f32 output,
// too, skips the read for ownership (a copy then moves 8 bytes per value, as a plain store loop does).
template <bool S>
void k_f32(const u8* src, float* dst, std::size_t n) {
    if constexpr (!S) {
        std::memcpy(dst, src, n * sizeof(float));
    } else {
        std::size_t i = 0;
        for (; i + 16 <= n; i += 16) {
            store8<S>(dst + i, _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i)));
            store8<S>(dst + i + 8, _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i + 32)));
        }
        if (i < n) std::memcpy(dst + i, src + 4 * i, (n - i) * sizeof(float));
    }
}

template <bool S>
void k_f16(const u8* src, float* dst, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        store8<S>(dst + i, _mm256_cvtph_ps(load128(src + 2 * i)));
        store8<S>(dst + i + 8, _mm256_cvtph_ps(load128(src + 2 * i + 16)));
    }
    for (; i < n; ++i) dst[i] = f16_at(src + 2 * i);
}

template <bool S>
void k_bf16(const u8* src, float* dst, std::size_t n) {
    std::size_t i = 0;
    // Each u16 widened from memory becomes the upper half of a u32.
    for (; i + 16 <= n; i += 16) {
        const __m256i a = _mm256_cvtepu16_epi32(load128(src + 2 * i));
        const __m256i b = _mm256_cvtepu16_epi32(load128(src + 2 * i + 16));
        store8<S>(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(a, 16)));
        store8<S>(dst + i + 8, _mm256_castsi256_ps(_mm256_slli_epi32(b, 16)));
    }
    for (; i < n; ++i) {
        const std::uint32_t b = static_cast<std::uint32_t>(src[2 * i] | (src[2 * i + 1] << 8)) << 16;
        std::memcpy(dst + i, &b, 4);
    }
}

template <bool S>
void k_f64(const u8* src, float* dst, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128 a = _mm256_cvtpd_ps(_mm256_loadu_pd(reinterpret_cast<const double*>(src + 8 * i)));
        const __m128 b = _mm256_cvtpd_ps(_mm256_loadu_pd(reinterpret_cast<const double*>(src + 8 * i + 32)));
        store8<S>(dst + i, _mm256_set_m128(b, a));
    }
    for (; i < n; ++i) {
        double v;
        std::memcpy(&v, src + 8 * i, 8);
        dst[i] = static_cast<float>(v);
    }
}

template <bool S>
void k_i8(const u8* src, float* dst, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        store8<S>(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i)))));
    for (; i < n; ++i) dst[i] = static_cast<float>(static_cast<std::int8_t>(src[i]));
}

template <bool S>
void k_i16(const u8* src, float* dst, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) store8<S>(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(load128(src + 2 * i))));
    for (; i < n; ++i) {
        std::int16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        dst[i] = static_cast<float>(v);
    }
}

template <bool S>
void k_i32(const u8* src, float* dst, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) store8<S>(dst + i, _mm256_cvtepi32_ps(load256(src + 4 * i)));
    for (; i < n; ++i) {
        std::int32_t v;
        std::memcpy(&v, src + 4 * i, 4);
        dst[i] = static_cast<float>(v);
    }
}

// ---- 32-value blocks ----

// q4_0: d, 16 bytes of nibbles (low: values 0..15, high: 16..31); (nibble - 8) * d.
template <bool S>
void k_q4_0(const u8* src, float* dst, std::size_t n) {
    const __m256i m4 = _mm256_set1_epi32(0x0f), eight = _mm256_set1_epi32(8);
    for (std::size_t b = 0; b < n; ++b, src += 18, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(src));
        for (int k = 0; k < 2; ++k) {
            const __m256i v = u8x8_at(src + 2 + 8 * k);
            put8<S>(dst + 8 * k, _mm256_sub_epi32(_mm256_and_si256(v, m4), eight), d);
            put8<S>(dst + 16 + 8 * k, _mm256_sub_epi32(_mm256_srli_epi32(v, 4), eight), d);
        }
    }
}

// q4_1: d, m, 16 bytes of nibbles; nibble * d + m.
template <bool S>
void k_q4_1(const u8* src, float* dst, std::size_t n) {
    const __m256i m4 = _mm256_set1_epi32(0x0f);
    for (std::size_t b = 0; b < n; ++b, src += 20, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(src)), m = _mm256_set1_ps(f16_at(src + 2));
        for (int k = 0; k < 2; ++k) {
            const __m256i v = u8x8_at(src + 4 + 8 * k);
            put8_add<S>(dst + 8 * k, _mm256_and_si256(v, m4), d, m);
            put8_add<S>(dst + 16 + 8 * k, _mm256_srli_epi32(v, 4), d, m);
        }
    }
}

// The fifth bits of q5_0 / q5_1 (bit e of qh for value e) as 16 or 0 in the lanes of values
// first..first+7.
inline __m256i fifth_bits(__m256i qh, int first) {
    const __m256i select = _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_add_epi32(_mm256_set1_epi32(first),
                                                                                     _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0)));
    return _mm256_and_si256(_mm256_cmpeq_epi32(_mm256_and_si256(qh, select), select), _mm256_set1_epi32(16));
}

// q5_0: d, 32 high bits, 16 bytes of nibbles; (nibble | high << 4) - 16, times d.
template <bool S>
void k_q5_0(const u8* src, float* dst, std::size_t n) {
    const __m256i m4 = _mm256_set1_epi32(0x0f), sixteen = _mm256_set1_epi32(16);
    for (std::size_t b = 0; b < n; ++b, src += 22, dst += 32) {
        std::uint32_t bits;
        std::memcpy(&bits, src + 2, 4);
        const __m256i qh = _mm256_set1_epi32(static_cast<int>(bits));
        const __m256 d = _mm256_set1_ps(f16_at(src));
        for (int k = 0; k < 2; ++k) {
            const __m256i v = u8x8_at(src + 6 + 8 * k);
            put8<S>(dst + 8 * k, _mm256_sub_epi32(_mm256_or_si256(_mm256_and_si256(v, m4), fifth_bits(qh, 8 * k)), sixteen), d);
            put8<S>(dst + 16 + 8 * k,
                 _mm256_sub_epi32(_mm256_or_si256(_mm256_srli_epi32(v, 4), fifth_bits(qh, 16 + 8 * k)), sixteen), d);
        }
    }
}

// q5_1: d, m, 32 high bits, nibbles; (nibble | high << 4) * d + m.
template <bool S>
void k_q5_1(const u8* src, float* dst, std::size_t n) {
    const __m256i m4 = _mm256_set1_epi32(0x0f);
    for (std::size_t b = 0; b < n; ++b, src += 24, dst += 32) {
        std::uint32_t bits;
        std::memcpy(&bits, src + 4, 4);
        const __m256i qh = _mm256_set1_epi32(static_cast<int>(bits));
        const __m256 d = _mm256_set1_ps(f16_at(src)), m = _mm256_set1_ps(f16_at(src + 2));
        for (int k = 0; k < 2; ++k) {
            const __m256i v = u8x8_at(src + 8 + 8 * k);
            put8_add<S>(dst + 8 * k, _mm256_or_si256(_mm256_and_si256(v, m4), fifth_bits(qh, 8 * k)), d, m);
            put8_add<S>(dst + 16 + 8 * k, _mm256_or_si256(_mm256_srli_epi32(v, 4), fifth_bits(qh, 16 + 8 * k)), d, m);
        }
    }
}

// q8_0: d, 32 int8; q * d.
template <bool S>
void k_q8_0(const u8* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 34, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(src));
        for (int k = 0; k < 4; ++k) put8<S>(dst + 8 * k, i8x8_at(src + 2 + 8 * k), d);
    }
}

// iq4_nl: d, nibbles indexing the 16 non-uniform levels.
template <bool S>
void k_iq4_nl(const u8* src, float* dst, std::size_t n) {
    const __m256i levels = _mm256_broadcastsi128_si256(load128(reinterpret_cast<const u8*>(iq4nl_values)));
    for (std::size_t b = 0; b < n; ++b, src += 18, dst += 32)
        put32_i8<S>(dst, _mm256_shuffle_epi8(levels, nibbles32(src + 2)), _mm256_set1_ps(f16_at(src)));
}

// mxfp4: an E8M0 exponent (halved, as ggml's doubled fp4 levels want it), nibbles indexing the levels.
template <bool S>
void k_mxfp4(const u8* src, float* dst, std::size_t n) {
    const __m256i levels = _mm256_broadcastsi128_si256(load128(reinterpret_cast<const u8*>(fp4_values)));
    for (std::size_t b = 0; b < n; ++b, src += 17, dst += 32) {
        const std::uint32_t e = src[0];
        const std::uint32_t bits = e < 2 ? 0x00200000u << e : (e - 1) << 23;
        float d;
        std::memcpy(&d, &bits, 4);
        put32_i8<S>(dst, _mm256_shuffle_epi8(levels, nibbles32(src + 1)), _mm256_set1_ps(d));
    }
}

// nvfp4's UE4M3 sub-block scales, halved, for every byte (as ggml computes them; all exact).
struct ue4m3_table {
    float v[256];
};
constexpr float pow2(int e) {
    float r = 1.0f;
    for (; e > 0; --e) r *= 2.0f;
    for (; e < 0; ++e) r *= 0.5f;
    return r;
}
constexpr ue4m3_table make_ue4m3() {
    ue4m3_table t{};
    for (int x = 0; x < 256; ++x) {
        const int exp = (x >> 3) & 0xf, man = x & 7;
        if (x == 0 || x == 0x7f) t.v[x] = 0.0f;
        else if (exp == 0) t.v[x] = static_cast<float>(man) * pow2(-10);
        else t.v[x] = static_cast<float>(8 + man) * pow2(exp - 11);
    }
    return t;
}
constexpr ue4m3_table ue4m3_half = make_ue4m3();

// nvfp4: 4 UE4M3 scales, then per 16 values 8 bytes of nibbles (low: values 0..7, high: 8..15).
template <bool S>
void k_nvfp4(const u8* src, float* dst, std::size_t n) {
    const __m128i levels = load128(reinterpret_cast<const u8*>(fp4_values));
    const __m128i m = _mm_set1_epi8(0x0f);
    for (std::size_t b = 0; b < n; ++b, src += 36, dst += 64) {
        for (int s = 0; s < 4; ++s) {
            const __m256 d = _mm256_set1_ps(ue4m3_half.v[src[s]]);
            const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 4 + 8 * s));
            const __m128i idx = _mm_unpacklo_epi64(_mm_and_si128(q, m), _mm_and_si128(_mm_srli_epi16(q, 4), m));
            put16_i8<S>(dst + 16 * s, _mm_shuffle_epi8(levels, idx), d);
        }
    }
}

// q1_0: d, 128 bits; bit set: d, clear: -d (a selection, no arithmetic on d but the negation).
template <bool S>
void k_q1_0(const u8* src, float* dst, std::size_t n) {
    const __m256i select = _mm256_set_epi32(128, 64, 32, 16, 8, 4, 2, 1);
    for (std::size_t b = 0; b < n; ++b, src += 18, dst += 128) {
        const float df = f16_at(src);
        const __m256 d = _mm256_set1_ps(df), neg = _mm256_set1_ps(-df);
        for (int k = 0; k < 16; ++k) {
            const __m256i bits = _mm256_and_si256(_mm256_set1_epi32(src[2 + k]), select);
            const __m256 on = _mm256_castsi256_ps(_mm256_cmpeq_epi32(bits, select));
            store8<S>(dst + 8 * k, _mm256_blendv_ps(neg, d, on));
        }
    }
}

// q2_0: d, 64 2-bit quants (4 per byte, low bits first); (q - 1) * d.
template <bool S>
void k_q2_0(const u8* src, float* dst, std::size_t n) {
    const __m256i shifts = _mm256_set_epi32(14, 12, 10, 8, 6, 4, 2, 0);
    const __m256i three = _mm256_set1_epi32(3), one = _mm256_set1_epi32(1);
    for (std::size_t b = 0; b < n; ++b, src += 18, dst += 64) {
        const __m256 d = _mm256_set1_ps(f16_at(src));
        for (int k = 0; k < 8; ++k) {
            const int two = src[2 + 2 * k] | (src[3 + 2 * k] << 8);
            const __m256i q = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(two), shifts), three);
            put8<S>(dst + 8 * k, _mm256_sub_epi32(q, one), d);
        }
    }
}

// ---- 256-value super-blocks ----

// 16 sub-scales: d * (float)s[k] for 16 integers given as signed bytes.
inline void scales16(float* out, __m128i s8, float d) {
    const __m256 dv = _mm256_set1_ps(d);
    _mm256_storeu_ps(out, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s8))));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(s8, 8)))));
}

// q2_K: scales[16] (low nibble: scale, high: min), qs[64], d, dmin. Value: (d*sc) * q - (dmin*m).
// Per 128 values, byte l of 32 holds the quants of values l, 32+l, 64+l, 96+l (2 bits each).
template <bool S>
void k_q2_k(const u8* src, float* dst, std::size_t n) {
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m256i three = _mm256_set1_epi32(3);
    alignas(32) float dl[16], ml[16];
    for (std::size_t b = 0; b < n; ++b, src += 84, dst += 256) {
        const __m128i sc = load128(src);
        scales16(dl, _mm_and_si128(sc, m4), f16_at(src + 80));
        scales16(ml, _mm_and_si128(_mm_srli_epi16(sc, 4), m4), f16_at(src + 82));
        for (int half = 0; half < 2; ++half) {
            const u8* q = src + 16 + 32 * half;
            float* y = dst + 128 * half;
            for (int k = 0; k < 4; ++k) {
                const __m256i v = u8x8_at(q + 8 * k);
                for (int s = 0; s < 4; ++s) {
                    const int is = 8 * half + 2 * s + k / 2;
                    put8_sub<S>(y + 32 * s + 8 * k, _mm256_and_si256(_mm256_srli_epi32(v, 2 * s), three),
                             _mm256_broadcast_ss(dl + is), _mm256_broadcast_ss(ml + is));
                }
            }
        }
    }
}

// q3_K: hmask[32], qs[64], 12 bytes of 6-bit scales, d. Value: (d * (sc - 32)) * (q - (high bit ? 0 : 4)).
template <bool S>
void k_q3_k(const u8* src, float* dst, std::size_t n) {
    const __m256i three = _mm256_set1_epi32(3), four = _mm256_set1_epi32(4);
    alignas(32) float dl[16];
    for (std::size_t b = 0; b < n; ++b, src += 110, dst += 256) {
        // The 16 6-bit scales: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11.
        std::uint32_t a[3];
        std::memcpy(a, src + 96, 12);
        const std::uint32_t k1 = 0x03030303u, k2 = 0x0f0f0f0fu;
        // Built in registers (four narrow stores read back as one vector would stall the load).
        const __m128i s = _mm_set_epi32(static_cast<int>(((a[1] >> 4) & k2) | (((a[2] >> 6) & k1) << 4)),
                                        static_cast<int>(((a[0] >> 4) & k2) | (((a[2] >> 4) & k1) << 4)),
                                        static_cast<int>((a[1] & k2) | (((a[2] >> 2) & k1) << 4)),
                                        static_cast<int>((a[0] & k2) | ((a[2] & k1) << 4)));
        const __m128i sc = _mm_sub_epi8(s, _mm_set1_epi8(32));
        scales16(dl, sc, f16_at(src + 108));
        // Per 128 values, byte l of 32 holds the low 2 bits of values l, 32+l, 64+l, 96+l; bit
        // 4*half + j of hmask[l] is the high bit of value 32j + l of that half (clear: minus 4).
        const __m256i one = _mm256_set1_epi32(1);
        __m256i hm[4];
        for (int k = 0; k < 4; ++k) hm[k] = u8x8_at(src + 8 * k);
        for (int half = 0; half < 2; ++half) {
            const u8* q = src + 32 + 32 * half;
            float* y = dst + 128 * half;
            for (int k = 0; k < 4; ++k) {
                const __m256i v = u8x8_at(q + 8 * k);
                for (int j = 0; j < 4; ++j) {
                    const __m256i high = _mm256_and_si256(_mm256_srli_epi32(hm[k], 4 * half + j), one);
                    const __m256i qv = _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(v, 2 * j), three),
                                                        _mm256_sub_epi32(four, _mm256_slli_epi32(high, 2)));
                    put8<S>(y + 32 * j + 8 * k, qv, _mm256_broadcast_ss(dl + 8 * half + 2 * j + k / 2));
                }
            }
        }
    }
}

// The 8 sub-block scales d * sc[k] and mins dmin * mn[k] of a q4_K / q5_K block, into dl and ml
// (kept in memory so that each is broadcast by a load, not a shuffle). The 6-bit values are
// unpacked four at a time in 32-bit words (what get_scale_min_k4 does one by one): sc 0-3 and
// mn 0-3 are the low 6 bits of bytes 0-3 and 4-7; sc 4-7 and mn 4-7 take their low 4 bits from
// bytes 8-11 (low, high nibble) and their top 2 bits from the top of bytes 0-3 and 4-7.
inline void scales_mins_k4(const u8* block, float* dl, float* ml) {
    std::uint32_t a[3];
    std::memcpy(a, block + 4, 12);
    const std::uint32_t six = 0x3f3f3f3fu, four = 0x0f0f0f0fu, two = 0x03030303u;
    const std::uint64_t sc = (a[0] & six) | static_cast<std::uint64_t>((a[2] & four) | (((a[0] >> 6) & two) << 4)) << 32;
    const std::uint64_t mn =
        (a[1] & six) | static_cast<std::uint64_t>(((a[2] >> 4) & four) | (((a[1] >> 6) & two) << 4)) << 32;
    const __m256 scf = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(sc))));
    const __m256 mnf = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(mn))));
    _mm256_store_ps(dl, _mm256_mul_ps(_mm256_set1_ps(f16_at(block)), scf));
    _mm256_store_ps(ml, _mm256_mul_ps(_mm256_set1_ps(f16_at(block + 2)), mnf));
}

// q4_K: d, dmin, 12 bytes of scales/mins, 128 bytes of nibbles (per 64 values: 32 low, 32 high).
template <bool S>
void k_q4_k(const u8* src, float* dst, std::size_t n) {
    const __m256i m4 = _mm256_set1_epi32(0x0f);
    for (std::size_t b = 0; b < n; ++b, src += 144, dst += 256) {
        alignas(32) float dl[8], ml[8];
        scales_mins_k4(src, dl, ml);
        const u8* q = src + 16;
        for (int j = 0; j < 4; ++j, q += 32) {
            float* y = dst + 64 * j;
            const __m256 d1 = _mm256_broadcast_ss(dl + 2 * j), m1 = _mm256_broadcast_ss(ml + 2 * j);
            const __m256 d2 = _mm256_broadcast_ss(dl + 2 * j + 1), m2 = _mm256_broadcast_ss(ml + 2 * j + 1);
            for (int k = 0; k < 4; ++k) {
                const __m256i v = u8x8_at(q + 8 * k);
                put8_sub<S>(y + 8 * k, _mm256_and_si256(v, m4), d1, m1);
                put8_sub<S>(y + 32 + 8 * k, _mm256_srli_epi32(v, 4), d2, m2);
            }
        }
    }
}

// q5_K: as q4_K with qh[32]: bit 2j of qh[l] is the fifth bit of low nibble l of the j-th 64, bit
// 2j+1 of the high nibble's.
template <bool S>
void k_q5_k(const u8* src, float* dst, std::size_t n) {
    const __m256i m4 = _mm256_set1_epi32(0x0f), sixteen = _mm256_set1_epi32(16);
    for (std::size_t b = 0; b < n; ++b, src += 176, dst += 256) {
        alignas(32) float dl[8], ml[8];
        scales_mins_k4(src, dl, ml);
        // The fifth bits, moved to bit 4: for the j-th 64 values, bit 2j (low) and 2j+1 (high).
        __m256i h[4];
        for (int k = 0; k < 4; ++k) h[k] = _mm256_slli_epi32(u8x8_at(src + 16 + 8 * k), 4);
        const u8* q = src + 48;
        for (int j = 0; j < 4; ++j, q += 32) {
            float* y = dst + 64 * j;
            const __m256 d1 = _mm256_broadcast_ss(dl + 2 * j), m1 = _mm256_broadcast_ss(ml + 2 * j);
            const __m256 d2 = _mm256_broadcast_ss(dl + 2 * j + 1), m2 = _mm256_broadcast_ss(ml + 2 * j + 1);
            for (int k = 0; k < 4; ++k) {
                const __m256i v = u8x8_at(q + 8 * k);
                const __m256i h1 = _mm256_and_si256(_mm256_srli_epi32(h[k], 2 * j), sixteen);
                const __m256i h2 = _mm256_and_si256(_mm256_srli_epi32(h[k], 2 * j + 1), sixteen);
                put8_sub<S>(y + 8 * k, _mm256_or_si256(_mm256_and_si256(v, m4), h1), d1, m1);
                put8_sub<S>(y + 32 + 8 * k, _mm256_or_si256(_mm256_srli_epi32(v, 4), h2), d2, m2);
            }
        }
    }
}

// q6_K: ql[128], qh[64], int8 scales[16], d. Value: (d * sc) * q, q = (4 low | 2 high bits) - 32.
template <bool S>
void k_q6_k(const u8* src, float* dst, std::size_t n) {
    const __m256i m4 = _mm256_set1_epi32(0x0f), m2 = _mm256_set1_epi32(0x30), off = _mm256_set1_epi32(32);
    alignas(32) float ds[16];
    for (std::size_t b = 0; b < n; ++b, src += 210, dst += 256) {
        scales16(ds, load128(src + 192), f16_at(src + 208));
        // Per 128 values: ql[l] holds the low 4 bits of values l (low nibble) and 64+l (high),
        // ql[32+l] those of 32+l and 96+l; qh[l] their top 2 bits, in that order from bit 0.
        for (int h = 0; h < 2; ++h) {
            const u8* ql = src + 64 * h;
            const u8* qh = src + 128 + 32 * h;
            const float* sc = ds + 8 * h;
            float* y = dst + 128 * h;
            for (int k = 0; k < 4; ++k) {
                const __m256i a = u8x8_at(ql + 8 * k), c = u8x8_at(ql + 32 + 8 * k), hh = u8x8_at(qh + 8 * k);
                const __m256i q1 = _mm256_or_si256(_mm256_and_si256(a, m4), _mm256_and_si256(_mm256_slli_epi32(hh, 4), m2));
                const __m256i q2 = _mm256_or_si256(_mm256_and_si256(c, m4), _mm256_and_si256(_mm256_slli_epi32(hh, 2), m2));
                const __m256i q3 = _mm256_or_si256(_mm256_srli_epi32(a, 4), _mm256_and_si256(hh, m2));
                const __m256i q4 = _mm256_or_si256(_mm256_srli_epi32(c, 4), _mm256_and_si256(_mm256_srli_epi32(hh, 2), m2));
                const int is = k / 2;
                put8<S>(y + 8 * k, _mm256_sub_epi32(q1, off), _mm256_broadcast_ss(sc + is));
                put8<S>(y + 32 + 8 * k, _mm256_sub_epi32(q2, off), _mm256_broadcast_ss(sc + is + 2));
                put8<S>(y + 64 + 8 * k, _mm256_sub_epi32(q3, off), _mm256_broadcast_ss(sc + is + 4));
                put8<S>(y + 96 + 8 * k, _mm256_sub_epi32(q4, off), _mm256_broadcast_ss(sc + is + 6));
            }
        }
    }
}

// q8_K: f32 d, int8 qs[256], int16 bsums[16] (unused); d * q.
template <bool S>
void k_q8_k(const u8* src, float* dst, std::size_t n) {
    for (std::size_t b = 0; b < n; ++b, src += 292, dst += 256) {
        float df;
        std::memcpy(&df, src, 4);
        const __m256 d = _mm256_set1_ps(df);
        for (int k = 0; k < 32; ++k) put8<S>(dst + 8 * k, i8x8_at(src + 4 + 8 * k), d);
    }
}

// iq4_xs: d, scales_h (2 bits per 32), scales_l (4 bits per 32), then per 32 values 16 bytes of
// nibbles indexing the iq4_nl levels. Value: (d * (ls - 32)) * level.
template <bool S>
void k_iq4_xs(const u8* src, float* dst, std::size_t n) {
    const __m128i levels = load128(reinterpret_cast<const u8*>(iq4nl_values));
    const __m128i m4 = _mm_set1_epi8(0x0f);
    for (std::size_t b = 0; b < n; ++b, src += 136, dst += 256) {
        const float d = f16_at(src);
        const int sh = src[2] | (src[3] << 8);
        for (int ib = 0; ib < 8; ++ib) {
            const int ls = ((src[4 + ib / 2] >> (4 * (ib % 2))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
            const __m256 dl = _mm256_set1_ps(d * static_cast<float>(ls - 32));
            const __m128i q = load128(src + 8 + 16 * ib);
            put16_i8<S>(dst + 32 * ib, _mm_shuffle_epi8(levels, _mm_and_si128(q, m4)), dl);
            put16_i8<S>(dst + 32 * ib + 16, _mm_shuffle_epi8(levels, _mm_and_si128(_mm_srli_epi16(q, 4), m4)), dl);
        }
    }
}

// tq1_0's base-3 digit: byte q times 3^n (mod 256), then the top of (that * 3) >> 8, on 16 u16
// lanes holding bytes; gives the digit 0..2 minus 1.
inline __m256i trit(__m256i w, __m256i pow3) {
    const __m256i q = _mm256_and_si256(_mm256_mullo_epi16(w, pow3), _mm256_set1_epi16(0xff));
    return _mm256_sub_epi16(_mm256_srli_epi16(_mm256_mullo_epi16(q, _mm256_set1_epi16(3)), 8), _mm256_set1_epi16(1));
}
// 16 int16 -> 16 floats * d.
template <bool S>
inline void put16_i16(float* y, __m256i v, __m256 d) {
    put8<S>(y, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(v)), d);
    put8<S>(y + 8, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(v, 1)), d);
}

// tq1_0: qs[48] (5 trits per byte), qh[4] (4 trits per byte), d. Value: (trit - 1) * d.
template <bool S>
void k_tq1_0(const u8* src, float* dst, std::size_t n) {
    static constexpr short pow3[5] = {1, 3, 9, 27, 81};
    for (std::size_t b = 0; b < n; ++b, src += 54) {
        const __m256 d = _mm256_set1_ps(f16_at(src + 52));
        const __m256i w0 = _mm256_cvtepu8_epi16(load128(src)), w1 = _mm256_cvtepu8_epi16(load128(src + 16));
        const __m256i w2 = _mm256_cvtepu8_epi16(load128(src + 32));
        for (int k = 0; k < 5; ++k, dst += 32) {
            const __m256i p = _mm256_set1_epi16(pow3[k]);
            put16_i16<S>(dst, trit(w0, p), d);
            put16_i16<S>(dst + 16, trit(w1, p), d);
        }
        for (int k = 0; k < 5; ++k, dst += 16) put16_i16<S>(dst, trit(w2, _mm256_set1_epi16(pow3[k])), d);
        const __m256i wh = _mm256_set_epi16(src[51], src[50], src[49], src[48], src[51], src[50], src[49], src[48],
                                            src[51], src[50], src[49], src[48], src[51], src[50], src[49], src[48]);
        put16_i16<S>(dst, trit(wh, _mm256_set_epi16(27, 27, 27, 27, 9, 9, 9, 9, 3, 3, 3, 3, 1, 1, 1, 1)), d);
        dst += 16;
    }
}

// tq2_0: qs[64] (4 2-bit quants per byte), d. Value: (q - 1) * d.
template <bool S>
void k_tq2_0(const u8* src, float* dst, std::size_t n) {
    const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    for (std::size_t b = 0; b < n; ++b, src += 66) {
        const __m256 d = _mm256_set1_ps(f16_at(src + 64));
        for (int j = 0; j < 2; ++j) {
            const __m256i qv = load256(src + 32 * j);
            for (int l = 0; l < 4; ++l, dst += 32)
                put32_i8<S>(dst, _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(qv, 2 * l), three), one), d);
        }
    }
}

constexpr kernel_table own_table() {
    using gguf::tensor_type;
    kernel_table t{};
    auto set = [&t](tensor_type type, block_kernel k, block_kernel streaming) {
        t.by_type[static_cast<unsigned>(type)] = k;
        t.streaming[static_cast<unsigned>(type)] = streaming;
    };
    set(tensor_type::f32, k_f32<false>, k_f32<true>);
    set(tensor_type::f16, k_f16<false>, k_f16<true>);
    set(tensor_type::bf16, k_bf16<false>, k_bf16<true>);
    set(tensor_type::f64, k_f64<false>, k_f64<true>);
    set(tensor_type::i8, k_i8<false>, k_i8<true>);
    set(tensor_type::i16, k_i16<false>, k_i16<true>);
    set(tensor_type::i32, k_i32<false>, k_i32<true>);
    set(tensor_type::q4_0, k_q4_0<false>, k_q4_0<true>);
    set(tensor_type::q4_1, k_q4_1<false>, k_q4_1<true>);
    set(tensor_type::q5_0, k_q5_0<false>, k_q5_0<true>);
    set(tensor_type::q5_1, k_q5_1<false>, k_q5_1<true>);
    set(tensor_type::q8_0, k_q8_0<false>, k_q8_0<true>);
    set(tensor_type::q2_k, k_q2_k<false>, k_q2_k<true>);
    set(tensor_type::q3_k, k_q3_k<false>, k_q3_k<true>);
    set(tensor_type::q4_k, k_q4_k<false>, k_q4_k<true>);
    set(tensor_type::q5_k, k_q5_k<false>, k_q5_k<true>);
    set(tensor_type::q6_k, k_q6_k<false>, k_q6_k<true>);
    set(tensor_type::q8_k, k_q8_k<false>, k_q8_k<true>);
    set(tensor_type::iq4_nl, k_iq4_nl<false>, k_iq4_nl<true>);
    set(tensor_type::iq4_xs, k_iq4_xs<false>, k_iq4_xs<true>);
    set(tensor_type::tq1_0, k_tq1_0<false>, k_tq1_0<true>);
    set(tensor_type::tq2_0, k_tq2_0<false>, k_tq2_0<true>);
    set(tensor_type::mxfp4, k_mxfp4<false>, k_mxfp4<true>);
    set(tensor_type::nvfp4, k_nvfp4<false>, k_nvfp4<true>);
    set(tensor_type::q1_0, k_q1_0<false>, k_q1_0<true>);
    set(tensor_type::q2_0, k_q2_0<false>, k_q2_0<true>);
    return t;
}

// After non-temporal stores: make them visible before the output is handed over.
void fence() { _mm_sfence(); }

kernel_table joined() noexcept {
    kernel_table t = own_table();
    const kernel_table& iq = avx2_iq_kernels();
    for (unsigned i = 0; i < gguf::tensor_type_count; ++i)
        if (t.by_type[i] == nullptr) {
            t.by_type[i] = iq.by_type[i];
            t.streaming[i] = iq.streaming[i];
        }
    t.store_fence = fence;
    return t;
}

}  // namespace

const kernel_table* avx2_kernels() noexcept {
    static const kernel_table table = joined();
    return &table;
}
#else
const kernel_table* avx2_kernels() noexcept { return nullptr; }
#endif

}  // namespace minfer::quant::detail
