// Our converters and quantizers on their own: f16/bf16 exact against an independent slow reference,
// Q4_0/Q8_0 layouts and error bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "quant.hpp"

namespace ms = minfer::sample;

namespace {

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// The value of a finite binary16 pattern, computed in double from the definition.
double f16_value(std::uint16_t h) {
    const int e = (h >> 10) & 0x1f;
    const int m = h & 0x3ff;
    const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) != 0 ? -mag : mag;
}

// Slow reference f32 -> f16: the nearest binary16 by search, ties to the even pattern; 65536 (the
// value the pattern 0x7c00 would have with one more exponent) counts as the step after 65504.
std::uint16_t slow_f32_to_f16(float x) {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return static_cast<std::uint16_t>(sign | 0x7e00);
    const double a = std::fabs(static_cast<double>(x));
    if (a >= 65520.0) return static_cast<std::uint16_t>(sign | 0x7c00);
    // Largest h in [0, 0x7bff] with value(h) <= a.
    std::uint32_t lo = 0, hi = 0x7bff;
    while (lo < hi) {
        const std::uint32_t mid = (lo + hi + 1) / 2;
        if (f16_value(static_cast<std::uint16_t>(mid)) <= a) lo = mid; else hi = mid - 1;
    }
    const double below = f16_value(static_cast<std::uint16_t>(lo));
    const double above = lo == 0x7bff ? 65536.0 : f16_value(static_cast<std::uint16_t>(lo + 1));
    std::uint32_t h = lo;
    if (a - below > above - a || (a - below == above - a && (lo & 1u) != 0)) h = lo + 1;
    return static_cast<std::uint16_t>(sign | h);
}

}  // namespace

TEST(F16, DecodesEveryPatternExactly) {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const auto h16 = static_cast<std::uint16_t>(h);
        const float f = ms::f16_to_f32(h16);
        const int e = (h >> 10) & 0x1f;
        const unsigned m = h & 0x3ff;
        if (e == 0x1f && m != 0) {
            ASSERT_TRUE(std::isnan(f)) << std::hex << h;
            EXPECT_EQ(bits(f), ((h & 0x8000u) << 16) | 0x7fc00000u | (m << 13)) << std::hex << h;  // payload kept, quiet
        } else if (e == 0x1f) {
            ASSERT_TRUE(std::isinf(f)) << std::hex << h;
            EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0);
        } else {
            ASSERT_EQ(static_cast<double>(f), f16_value(h16)) << std::hex << h;
            ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;  // -0 stays -0
        }
    }
}

TEST(F16, RoundTripsEveryNonNaNPattern) {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) continue;
        ASSERT_EQ(ms::f32_to_f16(ms::f16_to_f32(static_cast<std::uint16_t>(h))), h) << std::hex << h;
    }
}

TEST(F16, MidpointsTieToEvenAndNeighboursRoundCorrectly) {
    for (std::uint32_t h = 0; h <= 0x7bff; ++h) {
        const double lo = f16_value(static_cast<std::uint16_t>(h));
        const double hi = h == 0x7bff ? 65536.0 : f16_value(static_cast<std::uint16_t>(h + 1));
        const auto mid = static_cast<float>((lo + hi) / 2);  // exact: 12 significant bits at most
        ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
        const std::uint32_t even = (h & 1u) == 0 ? h : h + 1;
        for (std::uint16_t sign : {std::uint16_t{0}, std::uint16_t{0x8000}}) {
            const float s = sign != 0 ? -1.0f : 1.0f;
            ASSERT_EQ(ms::f32_to_f16(s * mid), sign | even) << std::hex << h;
            ASSERT_EQ(ms::f32_to_f16(s * std::nextafter(mid, 0.0f)), sign | h) << std::hex << h;
            ASSERT_EQ(ms::f32_to_f16(s * std::nextafter(mid, 1e30f)), sign | (h + 1)) << std::hex << h;
        }
    }
}

TEST(F16, SpecialValues) {
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(ms::f32_to_f16(0.0f), 0x0000);
    EXPECT_EQ(ms::f32_to_f16(-0.0f), 0x8000);
    EXPECT_EQ(ms::f32_to_f16(1.0f), 0x3c00);
    EXPECT_EQ(ms::f32_to_f16(-2.0f), 0xc000);
    EXPECT_EQ(ms::f32_to_f16(65504.0f), 0x7bff);
    EXPECT_EQ(ms::f32_to_f16(65519.996f), 0x7bff);
    EXPECT_EQ(ms::f32_to_f16(65520.0f), 0x7c00);
    EXPECT_EQ(ms::f32_to_f16(1e10f), 0x7c00);
    EXPECT_EQ(ms::f32_to_f16(std::numeric_limits<float>::max()), 0x7c00);
    EXPECT_EQ(ms::f32_to_f16(inf), 0x7c00);
    EXPECT_EQ(ms::f32_to_f16(-inf), 0xfc00);
    EXPECT_EQ(ms::f32_to_f16(0x1p-14f), 0x0400);           // smallest normal
    EXPECT_EQ(ms::f32_to_f16(0x1p-24f), 0x0001);           // smallest subnormal
    EXPECT_EQ(ms::f32_to_f16(0x1p-25f), 0x0000);           // tie between 0 and 2^-24: even (0)
    EXPECT_EQ(ms::f32_to_f16(0x1.000002p-25f), 0x0001);    // just above the tie
    EXPECT_EQ(ms::f32_to_f16(0x1.8p-24f), 0x0002);         // 1.5 * 2^-24: tie, even is 2
    EXPECT_EQ(ms::f32_to_f16(0x1.ff8p-15f), 0x03ff);       // largest subnormal
    EXPECT_EQ(ms::f32_to_f16(0x1.ffcp-15f), 0x0400);       // half a step above: tie, even is the smallest normal
    EXPECT_EQ(ms::f32_to_f16(0x1.ffbffep-15f), 0x03ff);    // just below the tie
    EXPECT_EQ(ms::f32_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
    EXPECT_EQ(ms::f32_to_f16(-std::numeric_limits<float>::denorm_min()), 0x8000);
    EXPECT_EQ(ms::f32_to_f16(1.0f + 0x1p-11f), 0x3c00);    // tie: even
    EXPECT_EQ(ms::f32_to_f16(1.0f + 0x1.8p-10f), 0x3c02);  // tie: odd rounds up
    for (std::uint32_t nan : {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0xffc00000u, 0xff812345u}) {
        const std::uint16_t h = ms::f32_to_f16(from_bits(nan));
        EXPECT_EQ(h, ((nan >> 16) & 0x8000u) | 0x7e00u) << std::hex << nan;
        EXPECT_TRUE(std::isnan(ms::f16_to_f32(h)));
    }
}

TEST(F16, MatchesSlowReferenceOnASweep) {
    // Every 4099th positive pattern, both signs, plus a million random patterns.
    for (std::uint64_t u = 0; u <= 0x7fffffffu; u += 4099) {
        for (std::uint32_t sign : {0u, 0x80000000u}) {
            const float f = from_bits(static_cast<std::uint32_t>(u) | sign);
            ASSERT_EQ(ms::f32_to_f16(f), slow_f32_to_f16(f)) << std::hex << bits(f);
        }
    }
    std::mt19937 gen(12345);
    for (int i = 0; i < 1000000; ++i) {
        const float f = from_bits(static_cast<std::uint32_t>(gen()));
        ASSERT_EQ(ms::f32_to_f16(f), slow_f32_to_f16(f)) << std::hex << bits(f);
    }
}

TEST(BF16, RoundsToNearestEven) {
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const float f = ms::bf16_to_f32(static_cast<std::uint16_t>(h));
        ASSERT_EQ(bits(f), h << 16);
        if (std::isnan(f)) continue;
        ASSERT_EQ(ms::f32_to_bf16(f), h);
        if ((h & 0x7f80u) == 0x7f80u || (h & 0x7fffu) == 0x7f7fu) continue;  // inf/max: no next in range
        const std::uint32_t mid = (h << 16) | 0x8000u;  // exact midpoint between h and h + 1
        ASSERT_EQ(ms::f32_to_bf16(from_bits(mid)), (h & 1u) == 0 ? h : h + 1) << std::hex << h;
        ASSERT_EQ(ms::f32_to_bf16(from_bits(mid - 1)), h);
        ASSERT_EQ(ms::f32_to_bf16(from_bits(mid + 1)), h + 1);
    }
    EXPECT_EQ(ms::f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
    EXPECT_EQ(ms::f32_to_bf16(from_bits(0x7f800001u)), 0x7fc0);             // NaN made quiet
    EXPECT_EQ(ms::f32_to_bf16(from_bits(0xffc12345u)), 0xffc1);
}

TEST(Quant, SizesAndArgumentChecks) {
    EXPECT_EQ(ms::q4_0_bytes(32), 18u);
    EXPECT_EQ(ms::q8_0_bytes(64), 68u);
    EXPECT_EQ(ms::q4_0_bytes(33), 0u);
    std::vector<float> x(48, 1.0f);
    std::vector<std::byte> y(27);
    EXPECT_FALSE(ms::quantize_q4_0(x, y));  // 48 is not a multiple of 32
    x.resize(64);
    EXPECT_FALSE(ms::quantize_q4_0(x, y));  // wrong output size
    y.resize(36);
    EXPECT_TRUE(ms::quantize_q4_0(x, y));
    EXPECT_FALSE(ms::quantize_q8_0(x, y));
    y.resize(68);
    EXPECT_TRUE(ms::quantize_q8_0(x, y));
    std::vector<float> out(63);
    EXPECT_FALSE(ms::dequantize_q8_0(y, out));
    std::vector<std::uint16_t> h(3);
    EXPECT_FALSE(ms::convert_f32_to_f16(x, h));
}

TEST(Quant, Q4_0BlockLayout) {
    // max = -8 (the value of largest magnitude, negative) => d = 1, q = x + 8 for x in -8..7.
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[static_cast<std::size_t>(j)] = static_cast<float>((j % 16) - 8);
    x[16] = -7.0f;  // element 16 lands in the high nibble of byte 0
    std::vector<std::byte> y(18);
    ASSERT_TRUE(ms::quantize_q4_0(x, y));
    EXPECT_EQ(std::to_integer<int>(y[0]), 0x00);  // d = 1.0 as f16 = 0x3c00, little-endian
    EXPECT_EQ(std::to_integer<int>(y[1]), 0x3c);
    for (int j = 0; j < 16; ++j) {
        const int lo = (j % 16);
        const int hi = j == 0 ? 1 : ((j + 16) % 16);
        EXPECT_EQ(std::to_integer<int>(y[static_cast<std::size_t>(2 + j)]), lo | (hi << 4)) << j;
    }
    std::vector<float> back(32);
    ASSERT_TRUE(ms::dequantize_q4_0(y, back));
    EXPECT_EQ(back, x);
}

TEST(Quant, Q4_0FirstLargestMagnitudeWinsAndClamps) {
    std::vector<float> x(32, 0.0f);
    x[3] = 2.0f;
    x[7] = -2.0f;  // same magnitude, later: does not win
    std::vector<std::byte> y(18);
    ASSERT_TRUE(ms::quantize_q4_0(x, y));
    EXPECT_EQ(ms::f16_to_f32(static_cast<std::uint16_t>(std::to_integer<unsigned>(y[0]) |
                                                        (std::to_integer<unsigned>(y[1]) << 8))),
              -0.25f);
    std::vector<float> back(32);
    ASSERT_TRUE(ms::dequantize_q4_0(y, back));
    EXPECT_EQ(back[3], 2.0f);
    EXPECT_EQ(back[7], -1.75f);  // x / d = 8 -> q = 16, clamped to 15
    EXPECT_EQ(back[0], 0.0f);
}

TEST(Quant, Q8_0BlockLayout) {
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[static_cast<std::size_t>(j)] = static_cast<float>(j - 16) * 0.5f;  // amax 8
    std::vector<std::byte> y(34);
    ASSERT_TRUE(ms::quantize_q8_0(x, y));
    const float d = 8.0f / 127.0f;
    EXPECT_EQ(std::to_integer<unsigned>(y[0]) | (std::to_integer<unsigned>(y[1]) << 8), ms::f32_to_f16(d));
    for (int j = 0; j < 32; ++j) {
        const auto q = static_cast<std::int8_t>(std::to_integer<std::uint8_t>(y[static_cast<std::size_t>(2 + j)]));
        EXPECT_EQ(q, static_cast<std::int8_t>(std::round(x[static_cast<std::size_t>(j)] * (1.0f / d)))) << j;
    }
    EXPECT_EQ(static_cast<std::int8_t>(std::to_integer<std::uint8_t>(y[2])), -127);
}

TEST(Quant, ZerosAndConstants) {
    std::vector<float> zero(64, 0.0f), back(64);
    std::vector<std::byte> q4(36), q8(68);
    ASSERT_TRUE(ms::quantize_q4_0(zero, q4));
    ASSERT_TRUE(ms::quantize_q8_0(zero, q8));
    for (std::size_t b = 0; b < 2; ++b) {
        // d = 0 / -8 = -0.0 (f16 0x8000), as the reference computes it.
        EXPECT_EQ(std::to_integer<int>(q4[b * 18]), 0x00);
        EXPECT_EQ(std::to_integer<int>(q4[b * 18 + 1]), 0x80);
        for (std::size_t j = 2; j < 18; ++j) EXPECT_EQ(std::to_integer<int>(q4[b * 18 + j]), 0x88);
        for (std::size_t j = 0; j < 34; ++j) EXPECT_EQ(std::to_integer<int>(q8[b * 34 + j]), 0);
    }
    ASSERT_TRUE(ms::dequantize_q4_0(q4, back));
    EXPECT_EQ(back, zero);
    ASSERT_TRUE(ms::dequantize_q8_0(q8, back));
    EXPECT_EQ(back, zero);

    for (float c : {0.75f, -3.0f, 1e-2f}) {
        std::vector<float> x(64, c);
        ASSERT_TRUE(ms::quantize_q4_0(x, q4));
        ASSERT_TRUE(ms::dequantize_q4_0(q4, back));
        for (float v : back) EXPECT_NEAR(v, c, std::fabs(c) * 1e-3f);  // -8 * d = c up to f16 rounding of d
        ASSERT_TRUE(ms::quantize_q8_0(x, q8));
        ASSERT_TRUE(ms::dequantize_q8_0(q8, back));
        for (float v : back) EXPECT_NEAR(v, c, std::fabs(c) * 1e-3f);
    }
}

namespace {

std::vector<float> random_row(std::mt19937& gen, std::size_t n, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> x(n);
    for (float& v : x) v = dist(gen);
    return x;
}

}  // namespace

TEST(Quant, Q4_0ErrorBound) {
    std::mt19937 gen(7);
    double se = 0, sx = 0;
    for (int row = 0; row < 200; ++row) {
        const float scale = std::ldexp(1.0f, (row % 21) - 10);
        const std::vector<float> x = random_row(gen, 256, scale);
        std::vector<std::byte> y(ms::q4_0_bytes(x.size()));
        std::vector<float> back(x.size());
        ASSERT_TRUE(ms::quantize_q4_0(x, y));
        ASSERT_TRUE(ms::dequantize_q4_0(y, back));
        for (std::size_t b = 0; b < x.size() / 32; ++b) {
            float amax = 0, max = 0;
            for (std::size_t j = 0; j < 32; ++j)
                if (std::fabs(x[b * 32 + j]) > amax) { amax = std::fabs(x[b * 32 + j]); max = x[b * 32 + j]; }
            const float d = std::fabs(max / 8.0f);
            const float f16_slack = 8.0f * std::max(d * 0x1p-11f, 0x1p-25f);  // the scale is stored as f16
            for (std::size_t j = 0; j < 32; ++j) {
                const float xv = x[b * 32 + j], err = std::fabs(back[b * 32 + j] - xv);
                const bool clamped = xv / (max / -8.0f) > 7.4f;  // q = 16 clamped to 15: up to a full step
                const float bound = (clamped ? d : 0.5f * d) * 1.0001f + f16_slack;
                ASSERT_LE(err, bound) << "row " << row << " block " << b << " j " << j;
                se += static_cast<double>(err) * err / (static_cast<double>(scale) * scale);
                sx += 1;
            }
            // The value of largest magnitude comes back (up to the f16 scale).
            float back_max = 0;
            for (std::size_t j = 0; j < 32; ++j)
                if (x[b * 32 + j] == max) back_max = back[b * 32 + j];
            ASSERT_NEAR(back_max, max, f16_slack * 1.0001f);
        }
    }
    EXPECT_LT(std::sqrt(se / sx), 0.15);  // relative RMS error of 4-bit blocks on normal data
}

TEST(Quant, Q8_0ErrorBound) {
    std::mt19937 gen(8);
    double se = 0, sx = 0;
    for (int row = 0; row < 200; ++row) {
        const float scale = std::ldexp(1.0f, (row % 21) - 10);
        const std::vector<float> x = random_row(gen, 256, scale);
        std::vector<std::byte> y(ms::q8_0_bytes(x.size()));
        std::vector<float> back(x.size());
        ASSERT_TRUE(ms::quantize_q8_0(x, y));
        ASSERT_TRUE(ms::dequantize_q8_0(y, back));
        for (std::size_t b = 0; b < x.size() / 32; ++b) {
            float amax = 0;
            for (std::size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
            const float d = amax / 127.0f;
            const float bound = 0.5f * d * 1.0001f + 127.0f * std::max(d * 0x1p-11f, 0x1p-25f);
            for (std::size_t j = 0; j < 32; ++j) {
                const float err = std::fabs(back[b * 32 + j] - x[b * 32 + j]);
                ASSERT_LE(err, bound) << "row " << row << " block " << b << " j " << j;
                se += static_cast<double>(err) * err / (static_cast<double>(scale) * scale);
                sx += 1;
            }
        }
    }
    EXPECT_LT(std::sqrt(se / sx), 0.01);
}
