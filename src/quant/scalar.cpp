// The reference kernels: one per convertible type, written from the block layouts of docs/QUANT.md.
//
// These are the oracle the SIMD kernels are tested against, so clarity comes first. Each value is
// computed with the same float operations, in the same order and on the same types, as ggml's
// dequantize_row_* (this file is compiled with -ffp-contract=off, so `a * b - c` is a rounded
// multiply and then a rounded subtract, as in ggml): that is what makes the f32 bits equal. Where
// ggml multiplies an integer by a float, the integer is converted to float first (C's usual
// arithmetic conversions), and chains like `d * sc * q` are evaluated left to right.
//
// Blocks are read byte by byte (little-endian fields, any alignment).
#include <cstring>

#include "grids.hpp"
#include "half.hpp"
#include "kernels.hpp"

namespace minfer::quant::detail {
namespace {

constexpr int qk_k = 256;  // values in a k-quant / iq super-block

float f16_at(const std::uint8_t* p) { return fp16_to_f32(load_u16(p)); }
float to_f(int v) { return static_cast<float>(v); }
// Sign of value j (0..7) of an 8-value group: bit j of the sign byte set means negative.
float sign_of(std::uint8_t signs, int j) { return (signs >> j) & 1 ? -1.f : 1.f; }
// Byte j of a packed grid point.
int grid_u8(std::uint64_t point, int j) { return static_cast<int>((point >> (8 * j)) & 0xff); }
int grid_i8(std::uint64_t point, int j) { return static_cast<std::int8_t>((point >> (8 * j)) & 0xff); }

// ---- plain types: one value per "block" ----

void f32(const std::uint8_t* src, float* dst, std::size_t n) { std::memcpy(dst, src, n * sizeof(float)); }

void f16(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = f16_at(src + 2 * i);
}

void bf16(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(src + 2 * i));
}

void f64(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        double v;
        std::memcpy(&v, src + 8 * i, sizeof v);
        dst[i] = static_cast<float>(v);  // round to nearest, as C's (float) cast
    }
}

void i8(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(static_cast<std::int8_t>(src[i]));
}

void i16(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(static_cast<std::int16_t>(load_u16(src + 2 * i)));
}

void i32(const std::uint8_t* src, float* dst, std::size_t n) {
    // Values past 2^24 round to nearest even, as C's (float) cast.
    for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(static_cast<std::int32_t>(load_u32(src + 4 * i)));
}

// ---- 32-value blocks with one f16 scale ----

// q4_0, 18 B: d (f16), qs[16]. Value j: ((qs[j] & 15) - 8) * d, value j+16: ((qs[j] >> 4) - 8) * d.
void q4_0(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 18, dst += 32) {
        const float d = f16_at(src);
        const std::uint8_t* qs = src + 2;
        for (int j = 0; j < 16; ++j) {
            dst[j] = to_f((qs[j] & 0x0f) - 8) * d;
            dst[j + 16] = to_f((qs[j] >> 4) - 8) * d;
        }
    }
}

// q4_1, 20 B: d, m (f16), qs[16]. Value: q * d + m.
void q4_1(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 20, dst += 32) {
        const float d = f16_at(src);
        const float m = f16_at(src + 2);
        const std::uint8_t* qs = src + 4;
        for (int j = 0; j < 16; ++j) {
            dst[j] = to_f(qs[j] & 0x0f) * d + m;
            dst[j + 16] = to_f(qs[j] >> 4) * d + m;
        }
    }
}

// q5_0, 22 B: d, qh (u32: bit j is the fifth bit of value j), qs[16]. Value: (q - 16) * d.
void q5_0(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 22, dst += 32) {
        const float d = f16_at(src);
        const std::uint32_t qh = load_u32(src + 2);
        const std::uint8_t* qs = src + 6;
        for (int j = 0; j < 16; ++j) {
            const int hi0 = static_cast<int>((qh >> j) & 1) << 4;
            const int hi1 = static_cast<int>((qh >> (j + 16)) & 1) << 4;
            dst[j] = to_f(((qs[j] & 0x0f) | hi0) - 16) * d;
            dst[j + 16] = to_f(((qs[j] >> 4) | hi1) - 16) * d;
        }
    }
}

// q5_1, 24 B: d, m, qh (u32), qs[16]. Value: q * d + m.
void q5_1(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 24, dst += 32) {
        const float d = f16_at(src);
        const float m = f16_at(src + 2);
        const std::uint32_t qh = load_u32(src + 4);
        const std::uint8_t* qs = src + 8;
        for (int j = 0; j < 16; ++j) {
            const int hi0 = static_cast<int>((qh >> j) & 1) << 4;
            const int hi1 = static_cast<int>((qh >> (j + 16)) & 1) << 4;
            dst[j] = to_f((qs[j] & 0x0f) | hi0) * d + m;
            dst[j + 16] = to_f((qs[j] >> 4) | hi1) * d + m;
        }
    }
}

// q8_0, 34 B: d, qs[32] (i8). Value: q * d.
void q8_0(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 34, dst += 32) {
        const float d = f16_at(src);
        for (int j = 0; j < 32; ++j) dst[j] = to_f(static_cast<std::int8_t>(src[2 + j])) * d;
    }
}

// iq4_nl, 18 B: d, qs[16] of 4-bit indices into the non-uniform levels. Value: d * level.
void iq4_nl(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 18, dst += 32) {
        const float d = f16_at(src);
        const std::uint8_t* qs = src + 2;
        for (int j = 0; j < 16; ++j) {
            dst[j] = d * to_f(iq4nl_values[qs[j] & 0x0f]);
            dst[j + 16] = d * to_f(iq4nl_values[qs[j] >> 4]);
        }
    }
}

// ---- fp4 ----

// mxfp4, 17 B: e (E8M0), qs[16] of e2m1 codes. Value: fp4(code) * 2^(e-127), computed as the
// doubled fp4 value times half the scale, as ggml does.
void mxfp4(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 17, dst += 32) {
        const float d = e8m0_to_f32_half(src[0]);
        const std::uint8_t* qs = src + 1;
        for (int j = 0; j < 16; ++j) {
            dst[j] = to_f(fp4_values[qs[j] & 0x0f]) * d;
            dst[j + 16] = to_f(fp4_values[qs[j] >> 4]) * d;
        }
    }
}

// nvfp4, 36 B: d[4] (UE4M3, one per 16 values), qs[32]; sub-block s is laid out like an mxfp4 block
// of 16 values (qs[8s + j]: value j low nibble, value j+8 high nibble).
void nvfp4(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 36) {
        for (int s = 0; s < 4; ++s, dst += 16) {
            const float d = ue4m3_to_f32_half(src[s]);
            const std::uint8_t* qs = src + 4 + 8 * s;
            for (int j = 0; j < 8; ++j) {
                dst[j] = to_f(fp4_values[qs[j] & 0x0f]) * d;
                dst[j + 8] = to_f(fp4_values[qs[j] >> 4]) * d;
            }
        }
    }
}

// ---- 1- and 2-bit blocks ----

// q1_0, 18 B: d, qs[16]: bit j%8 of qs[j/8] set gives d, clear gives -d (128 values).
void q1_0(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 18, dst += 128) {
        const float d = f16_at(src);
        const float neg_d = -d;
        for (int j = 0; j < 128; ++j) dst[j] = (src[2 + j / 8] >> (j % 8)) & 1 ? d : neg_d;
    }
}

// q2_0, 18 B: d, qs[16]: 2-bit code q of value j at bits 2*(j%4) of qs[j/4]; value (q - 1) * d.
void q2_0(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 18, dst += 64) {
        const float d = f16_at(src);
        for (int j = 0; j < 64; ++j) {
            const int q = (src[2 + j / 4] >> (2 * (j % 4))) & 3;
            dst[j] = to_f(q - 1) * d;
        }
    }
}

// ---- ternary ----

// tq1_0, 54 B: qs[48], qh[4], d. Each byte holds 5 (qs) or 4 (qh) base-3 digits as a fixed-point
// fraction: digit n of byte b is ((uint8_t)(b * 3^n) * 3) >> 8; value (digit - 1) * d. Order: the
// first 32 qs bytes give 5 runs of 32 values (digit n of every byte), the next 16 give 5 runs of
// 16, then qh gives 4 runs of 4.
void tq1_0(const std::uint8_t* src, float* dst, std::size_t n) {
    static constexpr std::uint8_t pow3[5] = {1, 3, 9, 27, 81};
    auto digit = [](std::uint8_t b, int k) {
        const auto scaled = static_cast<std::uint8_t>(b * pow3[k]);
        return (scaled * 3) >> 8;
    };
    for (std::size_t i = 0; i < n; ++i, src += 54) {
        const std::uint8_t* qs = src;
        const std::uint8_t* qh = src + 48;
        const float d = f16_at(src + 52);
        for (int k = 0; k < 5; ++k)
            for (int m = 0; m < 32; ++m) *dst++ = to_f(digit(qs[m], k) - 1) * d;
        for (int k = 0; k < 5; ++k)
            for (int m = 0; m < 16; ++m) *dst++ = to_f(digit(qs[32 + m], k) - 1) * d;
        for (int k = 0; k < 4; ++k)
            for (int m = 0; m < 4; ++m) *dst++ = to_f(digit(qh[m], k) - 1) * d;
    }
}

// tq2_0, 66 B: qs[64], d. Value of code q (2 bits): (q - 1) * d. Bytes 32h..32h+31 give 4 runs of
// 32 values, run l from bits 2l.
void tq2_0(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 66) {
        const float d = f16_at(src + 64);
        for (int h = 0; h < 2; ++h)
            for (int l = 0; l < 4; ++l)
                for (int m = 0; m < 32; ++m) *dst++ = to_f(((src[32 * h + m] >> (2 * l)) & 3) - 1) * d;
    }
}

// ---- k-quants: 256-value super-blocks ----

// q4_K / q5_K: 8 six-bit scales and 8 six-bit mins packed in 12 bytes.
void scale_min_k4(int j, const std::uint8_t* q, int& sc, int& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// q2_K, 84 B: scales[16] (low nibble scale, high nibble min), qs[64], d, dmin.
// Sub-block s (16 values): dl = d * (scales[s] & 15), ml = dmin * (scales[s] >> 4); value dl * q - ml.
void q2_K(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 84) {
        const std::uint8_t* scales = src;
        const float d = f16_at(src + 80);
        const float dmin = f16_at(src + 82);
        int s = 0;
        for (int half = 0; half < 2; ++half) {
            const std::uint8_t* q = src + 16 + 32 * half;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part, ++s) {
                    const float dl = d * to_f(scales[s] & 0x0f);
                    const float ml = dmin * to_f(scales[s] >> 4);
                    for (int l = 0; l < 16; ++l) *dst++ = dl * to_f((q[16 * part + l] >> shift) & 3) - ml;
                }
            }
        }
    }
}

// q3_K, 110 B: hmask[32], qs[64], scales[12] (16 six-bit scales), d.
// Scale k: low 4 bits from nibble (k / 8) of scales[k % 8], high 2 bits from bits 2*(k/4) of
// scales[8 + k % 4]. Sub-block value: (d * (scale - 32)) * (q2 - (hmask bit set ? 0 : 4)).
void q3_K(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 110) {
        const std::uint8_t* hm = src;
        const std::uint8_t* packed = src + 96;
        const float d = f16_at(src + 108);
        int scale[16];
        for (int k = 0; k < 16; ++k) {
            const int low = (packed[k % 8] >> (4 * (k / 8))) & 0x0f;
            const int high = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
            scale[k] = low | (high << 4);
        }
        int s = 0;
        int bit = 0;  // the hmask bit of the current run
        for (int half = 0; half < 2; ++half) {
            const std::uint8_t* q = src + 32 + 32 * half;
            for (int shift = 0; shift < 8; shift += 2, ++bit) {
                for (int part = 0; part < 2; ++part, ++s) {
                    const float dl = d * to_f(scale[s] - 32);
                    for (int l = 0; l < 16; ++l) {
                        const int idx = 16 * part + l;
                        const int low = (q[idx] >> shift) & 3;
                        const int minus = (hm[idx] >> bit) & 1 ? 0 : 4;
                        *dst++ = dl * to_f(low - minus);
                    }
                }
            }
        }
    }
}

// q4_K, 144 B: d, dmin, scales[12], qs[128]. Per 64 values: two sub-blocks of 32 (low nibbles of
// 32 bytes, then their high nibbles); value (d * sc) * q - (dmin * m).
void q4_K(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 144) {
        const float d = f16_at(src);
        const float dmin = f16_at(src + 2);
        const std::uint8_t* scales = src + 4;
        const std::uint8_t* q = src + 16;
        for (int g = 0; g < 4; ++g, q += 32) {
            int sc, m;
            scale_min_k4(2 * g, scales, sc, m);
            const float d1 = d * to_f(sc), m1 = dmin * to_f(m);
            scale_min_k4(2 * g + 1, scales, sc, m);
            const float d2 = d * to_f(sc), m2 = dmin * to_f(m);
            for (int l = 0; l < 32; ++l) *dst++ = d1 * to_f(q[l] & 0x0f) - m1;
            for (int l = 0; l < 32; ++l) *dst++ = d2 * to_f(q[l] >> 4) - m2;
        }
    }
}

// q5_K, 176 B: d, dmin, scales[12], qh[32], qs[128]. As q4_K with a fifth bit: for group g, bit 2g
// of qh[l] for the low nibbles, bit 2g+1 for the high ones.
void q5_K(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 176) {
        const float d = f16_at(src);
        const float dmin = f16_at(src + 2);
        const std::uint8_t* scales = src + 4;
        const std::uint8_t* qh = src + 16;
        const std::uint8_t* ql = src + 48;
        for (int g = 0; g < 4; ++g, ql += 32) {
            int sc, m;
            scale_min_k4(2 * g, scales, sc, m);
            const float d1 = d * to_f(sc), m1 = dmin * to_f(m);
            scale_min_k4(2 * g + 1, scales, sc, m);
            const float d2 = d * to_f(sc), m2 = dmin * to_f(m);
            for (int l = 0; l < 32; ++l) *dst++ = d1 * to_f((ql[l] & 0x0f) + ((qh[l] >> (2 * g)) & 1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *dst++ = d2 * to_f((ql[l] >> 4) + ((qh[l] >> (2 * g + 1)) & 1 ? 16 : 0)) - m2;
        }
    }
}

// q6_K, 210 B: ql[128], qh[64], scales[16] (i8), d. Per 128 values (ql += 64, qh += 32, 8 scales):
// value l + 32r (r = 0..3) takes 4 bits from ql[l + 32(r&1)] (low nibble for r < 2, high for r >= 2)
// and 2 bits from bits 2r of qh[l]; q - 32, times (d * scales[l/16 + 2r]).
void q6_K(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 210) {
        const std::uint8_t* ql = src;
        const std::uint8_t* qh = src + 128;
        const std::uint8_t* sc = src + 192;
        const float d = f16_at(src + 208);
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, dst += 128) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                for (int r = 0; r < 4; ++r) {
                    const int low = r < 2 ? ql[l + 32 * r] & 0x0f : ql[l + 32 * (r - 2)] >> 4;
                    const int q = (low | (((qh[l] >> (2 * r)) & 3) << 4)) - 32;
                    dst[l + 32 * r] = d * to_f(static_cast<std::int8_t>(sc[is + 2 * r])) * to_f(q);
                }
            }
        }
    }
}

// q8_K, 292 B: d (f32), qs[256] (i8), bsums[16] (i16, unused here). Value: d * q.
void q8_K(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 292, dst += qk_k) {
        float d;
        std::memcpy(&d, src, sizeof d);
        for (int j = 0; j < qk_k; ++j) dst[j] = d * to_f(static_cast<std::int8_t>(src[4 + j]));
    }
}

// ---- iq: codebook formats, 256-value super-blocks of 8 groups of 32 ----

// iq2_xxs, 66 B: d, then 8 groups of 8 bytes: 4 grid indices (u8), then a u32 whose bits 7l..7l+6
// pick the signs of point l and whose top 4 bits are the scale. db = d * (0.5 + scale) * 0.25.
void iq2_xxs(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 66) {
        const float d = f16_at(src);
        for (int g = 0; g < 8; ++g) {
            const std::uint8_t* q = src + 2 + 8 * g;
            const std::uint32_t aux = load_u32(q + 4);
            const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l, dst += 8) {
                const std::uint64_t point = iq2xxs_grid[q[l]];
                const std::uint8_t signs = iq2_signs[(aux >> (7 * l)) & 127];
                for (int j = 0; j < 8; ++j) dst[j] = db * to_f(grid_u8(point, j)) * sign_of(signs, j);
            }
        }
    }
}

// iq2_xs, 74 B: d, qs[32] (u16: 9-bit grid index, 7-bit sign index), scales[8] (two 4-bit scales
// per group: low for points 0-1, high for 2-3).
void iq2_xs(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 74) {
        const float d = f16_at(src);
        const std::uint8_t* scales = src + 66;
        for (int g = 0; g < 8; ++g) {
            const float db[2] = {d * (0.5f + to_f(scales[g] & 0x0f)) * 0.25f,
                                 d * (0.5f + to_f(scales[g] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, dst += 8) {
                const std::uint16_t q = load_u16(src + 2 + 2 * (4 * g + l));
                const std::uint64_t point = iq2xs_grid[q & 511];
                const std::uint8_t signs = iq2_signs[q >> 9];
                for (int j = 0; j < 8; ++j) dst[j] = db[l / 2] * to_f(grid_u8(point, j)) * sign_of(signs, j);
            }
        }
    }
}

// iq2_s, 82 B: d, qs[32] (grid index low 8 bits), signs[32] (one byte per point), qh[8] (bits 2l..2l+1
// are index bits 8-9 of point l), scales[8] (as iq2_xs).
void iq2_s(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 82) {
        const float d = f16_at(src);
        const std::uint8_t* qs = src + 2;
        const std::uint8_t* signs = src + 34;
        const std::uint8_t* qh = src + 66;
        const std::uint8_t* scales = src + 74;
        for (int g = 0; g < 8; ++g) {
            const float db[2] = {d * (0.5f + to_f(scales[g] & 0x0f)) * 0.25f,
                                 d * (0.5f + to_f(scales[g] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, dst += 8) {
                const int index = qs[4 * g + l] | (((qh[g] >> (2 * l)) & 3) << 8);
                const std::uint64_t point = iq2s_grid[index];
                for (int j = 0; j < 8; ++j)
                    dst[j] = db[l / 2] * to_f(grid_u8(point, j)) * sign_of(signs[4 * g + l], j);
            }
        }
    }
}

// iq3_xxs, 98 B: d, qs[64] (grid indices, 8 per group), then 8 u32 (one per group: sign indices in
// bits 7l.., scale in the top 4 bits). db = d * (0.5 + scale) * 0.5; each 8-value point is two
// 4-value grid entries.
void iq3_xxs(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 98) {
        const float d = f16_at(src);
        for (int g = 0; g < 8; ++g) {
            const std::uint8_t* qs = src + 2 + 8 * g;
            const std::uint32_t aux = load_u32(src + 66 + 4 * g);
            const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, dst += 8) {
                const std::uint8_t signs = iq2_signs[(aux >> (7 * l)) & 127];
                const std::uint32_t p1 = iq3xxs_grid[qs[2 * l]];
                const std::uint32_t p2 = iq3xxs_grid[qs[2 * l + 1]];
                for (int j = 0; j < 4; ++j) {
                    dst[j] = db * to_f(grid_u8(p1, j)) * sign_of(signs, j);
                    dst[j + 4] = db * to_f(grid_u8(p2, j)) * sign_of(signs, j + 4);
                }
            }
        }
    }
}

// iq3_s, 110 B: d, qs[64] (grid index low 8 bits), qh[8] (bit k of qh[g] is bit 8 of index k of
// group g), signs[32], scales[4] (4-bit scale per group, low nibble for even groups).
// db = d * (1 + 2 * scale).
void iq3_s(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 110) {
        const float d = f16_at(src);
        const std::uint8_t* scales = src + 106;
        for (int g = 0; g < 8; ++g) {
            const std::uint8_t* qs = src + 2 + 8 * g;
            const int qh = src[66 + g];
            const std::uint8_t* signs = src + 74 + 4 * g;
            const float db = d * to_f(1 + 2 * ((scales[g / 2] >> (4 * (g % 2))) & 0x0f));
            for (int l = 0; l < 4; ++l, dst += 8) {
                const std::uint32_t p1 = iq3s_grid[qs[2 * l] | (((qh >> (2 * l)) & 1) << 8)];
                const std::uint32_t p2 = iq3s_grid[qs[2 * l + 1] | (((qh >> (2 * l + 1)) & 1) << 8)];
                for (int j = 0; j < 4; ++j) {
                    dst[j] = db * to_f(grid_u8(p1, j)) * sign_of(signs[l], j);
                    dst[j + 4] = db * to_f(grid_u8(p2, j)) * sign_of(signs[l], j + 4);
                }
            }
        }
    }
}

// iq1_s, 50 B: d, qs[32] (grid index low 8 bits), qh[8] (u16 per group: bits 3l..3l+2 index bits
// 8-10 of point l, bits 12-14 the scale, bit 15 the sign of delta). Value: dl * (grid + delta),
// dl = d * (2 * scale + 1), delta = ±1/8.
void iq1_s(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 50) {
        const float d = f16_at(src);
        for (int g = 0; g < 8; ++g) {
            const std::uint8_t* qs = src + 2 + 4 * g;
            const std::uint16_t qh = load_u16(src + 34 + 2 * g);
            const float dl = d * to_f(2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -iq1_delta : iq1_delta;
            for (int l = 0; l < 4; ++l, dst += 8) {
                const std::uint64_t point = iq1s_grid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
                for (int j = 0; j < 8; ++j) dst[j] = dl * (to_f(grid_i8(point, j)) + delta);
            }
        }
    }
}

// iq1_m, 56 B: qs[32], qh[16], scales[8]. No stored d: the top nibbles of the four u16 of scales,
// in order, are the f16 bits of d. Per group g: qh[2g], qh[2g+1] each hold two points' index bits
// 8-10 (bits 0-2, 4-6) and delta signs (bits 3, 7); 3-bit scales at bits 6(g%2) and 6(g%2)+3 of
// u16 g/2 for points 0-1 and 2-3.
void iq1_m(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 56) {
        const std::uint8_t* qs = src;
        const std::uint8_t* qh = src + 32;
        std::uint16_t sc[4];
        for (int k = 0; k < 4; ++k) sc[k] = load_u16(src + 48 + 2 * k);
        const auto d_bits = static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                       ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = fp16_to_f32(d_bits);
        for (int g = 0; g < 8; ++g, qs += 4, qh += 2) {
            const float dl1 = d * to_f(2 * ((sc[g / 2] >> (6 * (g % 2))) & 7) + 1);
            const float dl2 = d * to_f(2 * ((sc[g / 2] >> (6 * (g % 2) + 3)) & 7) + 1);
            for (int l = 0; l < 4; ++l, dst += 8) {
                const int h = qh[l / 2] >> (4 * (l % 2));  // this point's nibble
                const int index = qs[l] | ((h & 7) << 8);
                const float delta = h & 8 ? -iq1_delta : iq1_delta;
                const float dl = l < 2 ? dl1 : dl2;
                const std::uint64_t point = iq1s_grid[index];
                for (int j = 0; j < 8; ++j) dst[j] = dl * (to_f(grid_i8(point, j)) + delta);
            }
        }
    }
}

// iq4_xs, 136 B: d, scales_h (u16: 2 high bits per group), scales_l[4] (4 low bits per group,
// low nibble for even groups), qs[128]. dl = d * (scale - 32); value dl * level (as iq4_nl, 16
// bytes per group of 32).
void iq4_xs(const std::uint8_t* src, float* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i, src += 136) {
        const float d = f16_at(src);
        const std::uint16_t scales_h = load_u16(src + 2);
        const std::uint8_t* scales_l = src + 4;
        const std::uint8_t* qs = src + 8;
        for (int g = 0; g < 8; ++g, qs += 16, dst += 32) {
            const int ls = ((scales_l[g / 2] >> (4 * (g % 2))) & 0x0f) | (((scales_h >> (2 * g)) & 3) << 4);
            const float dl = d * to_f(ls - 32);
            for (int j = 0; j < 16; ++j) {
                dst[j] = dl * to_f(iq4nl_values[qs[j] & 0x0f]);
                dst[j + 16] = dl * to_f(iq4nl_values[qs[j] >> 4]);
            }
        }
    }
}

constexpr kernel_table make_table() {
    kernel_table t{};
    auto set = [&t](gguf::tensor_type type, block_kernel k) { t.by_type[static_cast<unsigned>(type)] = k; };
    using tt = gguf::tensor_type;
    set(tt::f32, f32);
    set(tt::f16, f16);
    set(tt::bf16, bf16);
    set(tt::f64, f64);
    set(tt::i8, i8);
    set(tt::i16, i16);
    set(tt::i32, i32);
    set(tt::q4_0, q4_0);
    set(tt::q4_1, q4_1);
    set(tt::q5_0, q5_0);
    set(tt::q5_1, q5_1);
    set(tt::q8_0, q8_0);
    set(tt::q2_k, q2_K);
    set(tt::q3_k, q3_K);
    set(tt::q4_k, q4_K);
    set(tt::q5_k, q5_K);
    set(tt::q6_k, q6_K);
    set(tt::q8_k, q8_K);
    set(tt::iq2_xxs, iq2_xxs);
    set(tt::iq2_xs, iq2_xs);
    set(tt::iq2_s, iq2_s);
    set(tt::iq3_xxs, iq3_xxs);
    set(tt::iq3_s, iq3_s);
    set(tt::iq1_s, iq1_s);
    set(tt::iq1_m, iq1_m);
    set(tt::iq4_nl, iq4_nl);
    set(tt::iq4_xs, iq4_xs);
    set(tt::tq1_0, tq1_0);
    set(tt::tq2_0, tq2_0);
    set(tt::mxfp4, mxfp4);
    set(tt::nvfp4, nvfp4);
    set(tt::q1_0, q1_0);
    set(tt::q2_0, q2_0);
    return t;
}
constexpr kernel_table table = make_table();

}  // namespace

const kernel_table& scalar_kernels() noexcept { return table; }

}  // namespace minfer::quant::detail
