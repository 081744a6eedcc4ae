// minfer::quant without ggml: the API's checks (each error with the smallest input that trips it,
// nothing written on error), bytes_for / can_dequantize, blocks written by hand whose values the
// test computes from the format's definition (docs/QUANT.md), the threaded and ranged paths against
// the plain one, and the choice of kernels (select_isa, MINFER_QUANT_ISA).
// Bit-exactness with ggml is tests/unit/test_quant_ggml.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"
#include "minfer/quant/errors.hpp"

#if defined(__linux__)
#include <unistd.h>
#endif

namespace {

namespace q = minfer::quant;
namespace gguf = minfer::gguf;
using gguf::errc;
using gguf::tensor_type;

constexpr float sentinel = -7777.0f;

std::span<const std::byte> as_bytes(const std::vector<std::uint8_t>& v) { return std::as_bytes(std::span(v)); }

bool all_sentinel(const std::vector<float>& v) {
    for (float f : v)
        if (std::memcmp(&f, &sentinel, sizeof f) != 0) return false;
    return true;
}

void put16(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t v) {
    b[at] = static_cast<std::uint8_t>(v & 0xff);
    b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}

std::uint32_t bits_of(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

// Converts with dequantize(), expecting success.
std::vector<float> convert(tensor_type t, const std::vector<std::uint8_t>& bytes, std::size_t n_values) {
    std::vector<float> out(n_values, sentinel);
    const auto r = q::dequantize(t, as_bytes(bytes), out);
    EXPECT_TRUE(r) << gguf::to_string(t) << ": " << (r ? "" : r.error().description());
    return out;
}

// ---- which types, and their sizes ----

TEST(QuantTypes, CanDequantizeEveryGgmlTypeButQ8_1AndI64) {
    const tensor_type yes[] = {
        tensor_type::f32,     tensor_type::f16,    tensor_type::bf16,    tensor_type::f64,     tensor_type::i8,
        tensor_type::i16,     tensor_type::i32,    tensor_type::q4_0,    tensor_type::q4_1,    tensor_type::q5_0,
        tensor_type::q5_1,    tensor_type::q8_0,   tensor_type::q2_k,    tensor_type::q3_k,    tensor_type::q4_k,
        tensor_type::q5_k,    tensor_type::q6_k,   tensor_type::q8_k,    tensor_type::iq2_xxs, tensor_type::iq2_xs,
        tensor_type::iq2_s,   tensor_type::iq3_xxs, tensor_type::iq3_s,  tensor_type::iq1_s,   tensor_type::iq1_m,
        tensor_type::iq4_nl,  tensor_type::iq4_xs, tensor_type::tq1_0,   tensor_type::tq2_0,   tensor_type::mxfp4,
        tensor_type::nvfp4,   tensor_type::q1_0,   tensor_type::q2_0};
    for (tensor_type t : yes) EXPECT_TRUE(q::can_dequantize(t)) << gguf::to_string(t);
    for (std::uint32_t id : {9u, 27u, 4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 99u, 0xffffffffu})
        EXPECT_FALSE(q::can_dequantize(static_cast<tensor_type>(id))) << id;
    std::size_t count = 0;
    for (std::uint32_t id = 0; id < gguf::tensor_type_count; ++id) count += q::can_dequantize(static_cast<tensor_type>(id));
    EXPECT_EQ(count, std::size(yes));
}

TEST(QuantTypes, BytesFor) {
    EXPECT_EQ(q::bytes_for(tensor_type::q4_0, 32), 18u);
    EXPECT_EQ(q::bytes_for(tensor_type::q4_0, 64), 36u);
    EXPECT_EQ(q::bytes_for(tensor_type::q4_0, 0), 0u);
    EXPECT_EQ(q::bytes_for(tensor_type::q4_0, 31), 0u);  // not whole blocks
    EXPECT_EQ(q::bytes_for(tensor_type::q4_0, 33), 0u);
    EXPECT_EQ(q::bytes_for(tensor_type::q4_k, 256), 144u);
    EXPECT_EQ(q::bytes_for(tensor_type::q8_k, 512), 584u);
    EXPECT_EQ(q::bytes_for(tensor_type::nvfp4, 64), 36u);
    EXPECT_EQ(q::bytes_for(tensor_type::mxfp4, 32), 17u);
    EXPECT_EQ(q::bytes_for(tensor_type::f64, 3), 24u);
    EXPECT_EQ(q::bytes_for(tensor_type::i16, 3), 6u);
    EXPECT_EQ(q::bytes_for(tensor_type::q8_1, 32), 0u);  // not convertible
    EXPECT_EQ(q::bytes_for(tensor_type::i64, 1), 0u);
    EXPECT_EQ(q::bytes_for(static_cast<tensor_type>(4), 32), 0u);
    EXPECT_EQ(q::bytes_for(static_cast<tensor_type>(99), 32), 0u);
    // Overflow: 2^62 f32 values need 2^64 bytes; one fewer fits.
    EXPECT_EQ(q::bytes_for(tensor_type::f32, std::uint64_t{1} << 62), 0u);
    EXPECT_EQ(q::bytes_for(tensor_type::f32, (std::uint64_t{1} << 62) - 1), UINT64_MAX - 3);
}

// ---- errors: each with the smallest input that trips it; nothing written ----

struct error_case {
    errc code;
    std::uint64_t expected, found;
};

void expect_error(const q::result<void>& r, error_case want, const std::vector<float>& dst, const char* what) {
    ASSERT_FALSE(r) << what;
    EXPECT_EQ(r.error().code, want.code) << what << ": " << r.error().description();
    EXPECT_EQ(r.error().expected, want.expected) << what;
    EXPECT_EQ(r.error().found, want.found) << what;
    EXPECT_TRUE(all_sentinel(dst)) << what << ": something was written";
}

TEST(QuantErrors, Dequantize) {
    const std::vector<std::uint8_t> two_blocks(36, 0x11);  // two q4_0 blocks
    std::vector<float> dst(64, sentinel);
    // One byte too few, one too many.
    const auto src = as_bytes(two_blocks);
    expect_error(q::dequantize(tensor_type::q4_0, src.first(35), dst), {errc::buffer_size_mismatch, 36, 35}, dst, "35 bytes");
    const std::vector<std::uint8_t> more(37, 0x11);
    expect_error(q::dequantize(tensor_type::q4_0, as_bytes(more), dst), {errc::buffer_size_mismatch, 36, 37}, dst, "37 bytes");
    // dst one value short of a whole number of blocks (and src right for 32 values: the block check comes first).
    std::vector<float> short_dst(63, sentinel);
    expect_error(q::dequantize(tensor_type::q4_0, src, short_dst), {errc::not_block_multiple, 32, 63}, short_dst, "63 values");
    std::vector<float> one(1, sentinel);
    expect_error(q::dequantize(tensor_type::q4_k, src.first(0), one), {errc::not_block_multiple, 256, 1}, one, "q4_K, 1 value");
    // Types that do not convert: q8_1, i64, a removed id, an unknown one.
    std::vector<float> d32(32, sentinel);
    const std::vector<std::uint8_t> q8_1_block(36, 0);
    expect_error(q::dequantize(tensor_type::q8_1, as_bytes(q8_1_block), d32), {minfer::quant::codes::type_not_convertible, 0, 9}, d32, "q8_1");
    std::vector<float> d1(1, sentinel);
    const std::vector<std::uint8_t> i64_value(8, 1);
    expect_error(q::dequantize(tensor_type::i64, as_bytes(i64_value), d1), {minfer::quant::codes::type_not_convertible, 0, 27}, d1, "i64");
    expect_error(q::dequantize(static_cast<tensor_type>(4), src.first(18), d32), {minfer::quant::codes::type_not_convertible, 0, 4}, d32, "id 4");
    expect_error(q::dequantize(static_cast<tensor_type>(99), src.first(18), d32), {minfer::quant::codes::type_not_convertible, 0, 99}, d32, "id 99");
    // Empty input: fine, nothing to do.
    std::vector<float> none;
    EXPECT_TRUE(q::dequantize(tensor_type::q4_0, src.first(0), none));
}

TEST(QuantErrors, DequantizeParallelAndWith) {
    const std::vector<std::uint8_t> two_blocks(36, 0x11);
    const auto src = as_bytes(two_blocks);
    std::vector<float> dst(64, sentinel);
    expect_error(q::dequantize_parallel(tensor_type::q4_0, src.first(35), dst, 2), {errc::buffer_size_mismatch, 36, 35}, dst, "parallel, 35 bytes");
    std::vector<float> short_dst(63, sentinel);
    expect_error(q::dequantize_parallel(tensor_type::q4_0, src, short_dst, 2), {errc::not_block_multiple, 32, 63}, short_dst, "parallel, 63 values");
    std::vector<float> d32(32, sentinel);
    expect_error(q::dequantize_parallel(tensor_type::q8_1, src.first(36), d32, 2), {minfer::quant::codes::type_not_convertible, 0, 9}, d32, "parallel, q8_1");
    expect_error(q::dequantize_with(q::isa::scalar, tensor_type::q4_0, src.first(17), d32), {errc::buffer_size_mismatch, 18, 17}, d32, "with, 17 bytes");
    expect_error(q::dequantize_with(q::isa::scalar, static_cast<tensor_type>(99), src.first(18), d32), {minfer::quant::codes::type_not_convertible, 0, 99}, d32, "with, id 99");
    // Kernels this build or CPU lacks: an error, not a fallback.
    ASSERT_FALSE(q::isa_supported(q::isa::avx512));
    expect_error(q::dequantize_with(q::isa::avx512, tensor_type::q4_0, src.first(18), d32), {minfer::quant::codes::type_not_convertible, 0, 2}, d32, "with avx512");
    expect_error(q::dequantize_with(q::isa::neon, tensor_type::q4_0, src.first(18), d32), {minfer::quant::codes::type_not_convertible, 0, 2}, d32, "with neon");
}

TEST(QuantErrors, DequantizeRange) {
    const std::vector<std::uint8_t> three_blocks(54, 0x22);  // 96 q4_0 values
    const auto tensor = as_bytes(three_blocks);
    std::vector<float> d32(32, sentinel);
    // first not on a block boundary.
    expect_error(q::dequantize_range(tensor_type::q4_0, tensor, 1, d32), {errc::not_block_multiple, 32, 1}, d32, "first 1");
    // The range one block past the end; first past the end.
    std::vector<float> d64(64, sentinel);
    expect_error(q::dequantize_range(tensor_type::q4_0, tensor, 64, d64), {errc::index_out_of_range, 96, 128}, d64, "64 + 64 of 96");
    expect_error(q::dequantize_range(tensor_type::q4_0, tensor, 128, d32), {errc::index_out_of_range, 96, 160}, d32, "first 128 of 96");
    // dst not whole blocks.
    std::vector<float> d31(31, sentinel);
    expect_error(q::dequantize_range(tensor_type::q4_0, tensor, 32, d31), {errc::not_block_multiple, 32, 31}, d31, "31 values");
    // The tensor's bytes not whole blocks (one byte short).
    expect_error(q::dequantize_range(tensor_type::q4_0, tensor.first(53), 0, d32), {errc::buffer_size_mismatch, 54, 53}, d32, "53 bytes");
    std::vector<float> d1(1, sentinel);
    expect_error(q::dequantize_range(tensor_type::i64, tensor.first(8), 0, d1), {minfer::quant::codes::type_not_convertible, 0, 27}, d1, "i64");
    // At the end, nothing: fine.
    std::vector<float> none;
    EXPECT_TRUE(q::dequantize_range(tensor_type::q4_0, tensor, 96, none));
}

// ---- values from the formats' definitions, written by hand ----

float f16_value(std::uint16_t h) {  // IEEE binary16, computed the long way
    const int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    const float s = sign ? -1.0f : 1.0f;
    if (exp == 31) return man ? std::numeric_limits<float>::quiet_NaN() : s * std::numeric_limits<float>::infinity();
    if (exp == 0) return s * std::ldexp(static_cast<float>(man), -24);
    return s * std::ldexp(1.0f + static_cast<float>(man) / 1024.0f, exp - 15);
}

void expect_values(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << what << " value " << i;
            continue;
        }
        EXPECT_EQ(got[i], want[i]) << what << " value " << i;
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " value " << i << " sign";
    }
}

TEST(QuantValues, Q4_0) {
    std::vector<std::uint8_t> b(18);
    put16(b, 0, 0x3800);  // d = 0.5
    for (int j = 0; j < 16; ++j) b[2 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
    std::vector<float> want(32);
    for (int j = 0; j < 16; ++j) {
        want[static_cast<std::size_t>(j)] = static_cast<float>(j - 8) * 0.5f;        // low nibble j
        want[static_cast<std::size_t>(j) + 16] = static_cast<float>(7 - j) * 0.5f;  // high nibble 15 - j, minus 8
    }
    expect_values(convert(tensor_type::q4_0, b, 32), want, "q4_0");
}

TEST(QuantValues, Q4_1AndQ5_0) {
    std::vector<std::uint8_t> b(20);
    put16(b, 0, 0x3400);  // d = 0.25
    put16(b, 2, 0xbc00);  // m = -1
    for (int j = 0; j < 16; ++j) b[4 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>((j * 5) % 16 | (j << 4));
    std::vector<float> want(32);
    for (int j = 0; j < 16; ++j) {
        want[static_cast<std::size_t>(j)] = static_cast<float>((j * 5) % 16) * 0.25f - 1.0f;
        want[static_cast<std::size_t>(j) + 16] = static_cast<float>(j) * 0.25f - 1.0f;
    }
    expect_values(convert(tensor_type::q4_1, b, 32), want, "q4_1");

    std::vector<std::uint8_t> c(22);
    put16(c, 0, 0x3c00);  // d = 1
    const std::uint32_t qh = 0xa5a50f0fu;  // fifth bit of value j: bit j
    for (int k = 0; k < 4; ++k) c[2 + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(qh >> (8 * k));
    for (int j = 0; j < 16; ++j) c[6 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
    for (int j = 0; j < 32; ++j) {
        const int low4 = j < 16 ? j : 15 - (j - 16);
        const int q5 = low4 + (((qh >> j) & 1) ? 16 : 0);
        want[static_cast<std::size_t>(j)] = static_cast<float>(q5 - 16);
    }
    expect_values(convert(tensor_type::q5_0, c, 32), want, "q5_0");
}

TEST(QuantValues, Q8_0) {
    std::vector<std::uint8_t> b(34);
    put16(b, 0, 0x4000);  // d = 2
    std::vector<float> want(32);
    for (int j = 0; j < 32; ++j) {
        const int v = j * 8 - 128;  // -128 .. 120
        b[2 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(v & 0xff);
        want[static_cast<std::size_t>(j)] = 2.0f * static_cast<float>(v);
    }
    expect_values(convert(tensor_type::q8_0, b, 32), want, "q8_0");
}

TEST(QuantValues, F16EveryValueAndSpecials) {
    std::vector<std::uint8_t> b(65536 * 2);
    std::vector<float> want(65536);
    for (std::uint32_t h = 0; h < 65536; ++h) {
        put16(b, 2 * h, static_cast<std::uint16_t>(h));
        want[h] = f16_value(static_cast<std::uint16_t>(h));
    }
    expect_values(convert(tensor_type::f16, b, 65536), want, "f16");
    const std::vector<float> got = convert(tensor_type::f16, b, 65536);
    EXPECT_EQ(got[0x3c00], 1.0f);
    EXPECT_EQ(got[0xc000], -2.0f);
    EXPECT_EQ(got[0x7bff], 65504.0f);
    EXPECT_EQ(got[0x0001], 0x1p-24f);
    EXPECT_EQ(bits_of(got[0x8000]), 0x80000000u);
    EXPECT_EQ(got[0x7c00], std::numeric_limits<float>::infinity());
    EXPECT_EQ(got[0xfc00], -std::numeric_limits<float>::infinity());
    // NaNs keep sign and payload, quiet (as ggml's conversion leaves them).
    EXPECT_EQ(bits_of(got[0x7e00]), 0x7fc00000u);
    EXPECT_EQ(bits_of(got[0x7c01]), 0x7fc02000u);
    EXPECT_EQ(bits_of(got[0xfe01]), 0xffc02000u);
}

TEST(QuantValues, Bf16F32F64) {
    std::vector<std::uint8_t> b(8);
    put16(b, 0, 0x3f80);  // 1
    put16(b, 2, 0xc040);  // -3
    put16(b, 4, 0x7f80);  // inf
    put16(b, 6, 0x0001);  // the smallest bf16 subnormal, 2^-133
    expect_values(convert(tensor_type::bf16, b, 4), {1.0f, -3.0f, std::numeric_limits<float>::infinity(), 0x1p-133f}, "bf16");
    const std::vector<std::uint8_t> nan_bf16 = {0x81, 0xff};  // 0xff81: a signalling NaN, kept as it is
    EXPECT_EQ(bits_of(convert(tensor_type::bf16, nan_bf16, 1)[0]), 0xff810000u);

    const float f32s[] = {1.5f, -0.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::quiet_NaN()};
    std::vector<std::uint8_t> fb(sizeof f32s);
    std::memcpy(fb.data(), f32s, sizeof f32s);
    const std::vector<float> f = convert(tensor_type::f32, fb, 4);
    EXPECT_EQ(std::memcmp(f.data(), f32s, sizeof f32s), 0);

    const double f64s[] = {0.1, -2.5, 1e300, -1e-300, std::numeric_limits<double>::quiet_NaN(), 16777217.0};
    std::vector<std::uint8_t> db(sizeof f64s);
    std::memcpy(db.data(), f64s, sizeof f64s);
    expect_values(convert(tensor_type::f64, db, 6),
                  {0.1f, -2.5f, std::numeric_limits<float>::infinity(), -0.0f, std::numeric_limits<float>::quiet_NaN(), 16777216.0f},
                  "f64");
}

TEST(QuantValues, Integers) {
    const std::vector<std::uint8_t> i8s = {0x80, 0xff, 0x00, 0x7f};
    expect_values(convert(tensor_type::i8, i8s, 4), {-128.0f, -1.0f, 0.0f, 127.0f}, "i8");
    const std::vector<std::uint8_t> i16s = {0x00, 0x80, 0xfe, 0xff, 0xff, 0x7f};
    expect_values(convert(tensor_type::i16, i16s, 3), {-32768.0f, -2.0f, 32767.0f}, "i16");
    const std::int32_t i32s[] = {INT32_MIN, -1, 16777217, INT32_MAX, 16777219};
    std::vector<std::uint8_t> b(sizeof i32s);
    std::memcpy(b.data(), i32s, sizeof i32s);
    // Past 2^24: round to nearest, ties to even.
    expect_values(convert(tensor_type::i32, b, 5), {-2147483648.0f, -1.0f, 16777216.0f, 2147483648.0f, 16777220.0f}, "i32");
}

// E2M1 from its definition: sign, 2 exponent bits (bias 1), 1 mantissa bit.
float e2m1(int code) {
    const float s = (code & 8) ? -1.0f : 1.0f;
    const int e = (code >> 1) & 3, m = code & 1;
    return s * (e == 0 ? 0.5f * static_cast<float>(m) : (1.0f + 0.5f * static_cast<float>(m)) * std::ldexp(1.0f, e - 1));
}

TEST(QuantValues, Mxfp4) {
    for (int e : {127, 129, 120, 0, 255}) {
        std::vector<std::uint8_t> b(17);
        b[0] = static_cast<std::uint8_t>(e);
        for (int j = 0; j < 16; ++j) b[1 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
        // E8M0: 2^(e-127). (ggml reads 255 as 2^128 too, not NaN; it overflows to inf only in the product.)
        const double scale = std::ldexp(1.0, e - 127);
        std::vector<float> want(32);
        for (int j = 0; j < 16; ++j) {
            want[static_cast<std::size_t>(j)] = static_cast<float>(static_cast<double>(e2m1(j)) * scale);
            want[static_cast<std::size_t>(j) + 16] = static_cast<float>(static_cast<double>(e2m1(15 - j)) * scale);
        }
        // -0 (code 8) comes out as +0: the doubled table holds 0 for it, as ggml's.
        std::vector<float> got = convert(tensor_type::mxfp4, b, 32);
        for (std::size_t j = 0; j < 32; ++j) {
            if (want[j] == 0.0f) {
                EXPECT_EQ(got[j], 0.0f) << "e " << e << " value " << j;
                want[j] = got[j];
            }
        }
        expect_values(got, want, ("mxfp4 e=" + std::to_string(e)).c_str());
    }
}

TEST(QuantValues, Nvfp4) {
    // UE4M3 scales (4 exponent bits, bias 7, 3 mantissa bits): 0x38 = 1, 0x3c = 1.5, 0x08 = 2^-6, 0x01 = 2^-9.
    const std::uint8_t scales[4] = {0x38, 0x3c, 0x08, 0x01};
    const float scale_values[4] = {1.0f, 1.5f, 0x1p-6f, 0x1p-9f};
    std::vector<std::uint8_t> b(36);
    for (int s = 0; s < 4; ++s) b[static_cast<std::size_t>(s)] = scales[s];
    for (int j = 0; j < 32; ++j) b[4 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>((j % 16) | ((j * 3 % 16) << 4));
    std::vector<float> want(64);
    for (int s = 0; s < 4; ++s)
        for (int j = 0; j < 8; ++j) {
            const int byte = b[4 + static_cast<std::size_t>(8 * s + j)];
            want[static_cast<std::size_t>(16 * s + j)] = e2m1(byte & 15) * scale_values[s];
            want[static_cast<std::size_t>(16 * s + j + 8)] = e2m1(byte >> 4) * scale_values[s];
        }
    std::vector<float> got = convert(tensor_type::nvfp4, b, 64);
    for (std::size_t j = 0; j < 64; ++j)
        if (want[j] == 0.0f) want[j] = 0.0f;  // -0 comes out +0, as in mxfp4
    expect_values(got, want, "nvfp4");
}

// q4_K: eight 32-value sub-blocks, each with a 6-bit scale and a 6-bit min packed into 12 bytes;
// value = d * scale * q - dmin * min.
TEST(QuantValues, Q4_K) {
    const int sc[8] = {1, 2, 3, 4, 17, 33, 50, 63};
    const int mn[8] = {0, 1, 5, 10, 20, 40, 63, 7};
    std::vector<std::uint8_t> b(144);
    put16(b, 0, 0x3c00);  // d = 1
    put16(b, 2, 0x3800);  // dmin = 0.5
    for (std::size_t k = 0; k < 4; ++k) {
        // Sub-blocks 0-3: 6 bits in bytes 0-3 (scales) and 4-7 (mins); sub-blocks 4-7: their low 4
        // bits in bytes 8-11 (scale low nibble, min high nibble), their top 2 bits in bits 6-7 of
        // bytes 0-3 (scales) and 4-7 (mins).
        b[4 + k] = static_cast<std::uint8_t>(sc[k] | ((sc[k + 4] >> 4) << 6));
        b[8 + k] = static_cast<std::uint8_t>(mn[k] | ((mn[k + 4] >> 4) << 6));
        b[12 + k] = static_cast<std::uint8_t>((sc[k + 4] & 15) | ((mn[k + 4] & 15) << 4));
    }
    // 4 groups of 32 bytes: low nibbles are sub-block 2g, high nibbles sub-block 2g+1.
    for (std::size_t i = 0; i < 128; ++i) b[16 + i] = static_cast<std::uint8_t>((i % 16) | ((15 - i % 16) << 4));
    std::vector<float> want(256);
    for (int s = 0; s < 8; ++s)
        for (int l = 0; l < 32; ++l) {
            const int qv = s % 2 == 0 ? l % 16 : 15 - l % 16;
            want[static_cast<std::size_t>(32 * s + l)] = 1.0f * static_cast<float>(sc[s] * qv) - 0.5f * static_cast<float>(mn[s]);
        }
    expect_values(convert(tensor_type::q4_k, b, 256), want, "q4_K");
}

// tq2_0: 2-bit codes, value (code - 1) * d; q1_0: one bit per value, ±d.
TEST(QuantValues, Tq2_0AndQ1_0) {
    std::vector<std::uint8_t> b(66);
    for (std::size_t i = 0; i < 64; ++i) b[i] = static_cast<std::uint8_t>(0b11100100 ^ (i & 0xff));
    put16(b, 64, 0x4400);  // d = 4
    std::vector<float> want(256);
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 4; ++l)
            for (int m = 0; m < 32; ++m) {
                const int code = (b[static_cast<std::size_t>(32 * h + m)] >> (2 * l)) & 3;
                want[static_cast<std::size_t>(128 * h + 32 * l + m)] = static_cast<float>(code - 1) * 4.0f;
            }
    expect_values(convert(tensor_type::tq2_0, b, 256), want, "tq2_0");

    std::vector<std::uint8_t> c(18);
    put16(c, 0, 0x3a00);  // d = 0.75
    for (std::size_t i = 0; i < 16; ++i) c[2 + i] = static_cast<std::uint8_t>(0x5a + 17 * i);
    std::vector<float> w(128);
    for (std::size_t j = 0; j < 128; ++j) w[j] = ((c[2 + j / 8] >> (j % 8)) & 1) ? 0.75f : -0.75f;
    expect_values(convert(tensor_type::q1_0, c, 128), w, "q1_0");
}

// ---- the threaded and ranged paths give the plain path's bytes ----

TEST(QuantPaths, ParallelAndRangeEqualDequantize) {
    std::mt19937 rng(42);
    for (tensor_type t : {tensor_type::q4_0, tensor_type::q6_k, tensor_type::f16}) {
        const gguf::type_traits* tr = gguf::traits(t);
        const std::size_t blocks = (3u << 20) / tr->block_elems + 5;  // a little over 3 Mi values, uneven split
        std::vector<std::uint8_t> bytes(blocks * tr->block_bytes);
        for (auto& x : bytes) x = static_cast<std::uint8_t>(rng());
        const std::size_t n = blocks * tr->block_elems;
        std::vector<float> plain(n, sentinel);
        ASSERT_TRUE(q::dequantize(t, as_bytes(bytes), plain));
        for (unsigned threads : {1u, 2u, 3u, 0u}) {
            std::vector<float> par(n, sentinel);
            ASSERT_TRUE(q::dequantize_parallel(t, as_bytes(bytes), par, threads));
            EXPECT_EQ(std::memcmp(par.data(), plain.data(), n * sizeof(float)), 0) << gguf::to_string(t) << ", " << threads << " threads";
        }
        // A range in the middle, through a small buffer.
        const std::size_t first = 7 * tr->block_elems, count = 11 * tr->block_elems;
        std::vector<float> part(count, sentinel);
        ASSERT_TRUE(q::dequantize_range(t, as_bytes(bytes), first, part));
        EXPECT_EQ(std::memcmp(part.data(), plain.data() + first, count * sizeof(float)), 0) << gguf::to_string(t);
        // The last block.
        std::vector<float> last(tr->block_elems, sentinel);
        ASSERT_TRUE(q::dequantize_range(t, as_bytes(bytes), n - tr->block_elems, last));
        EXPECT_EQ(std::memcmp(last.data(), plain.data() + n - tr->block_elems, tr->block_elems * sizeof(float)), 0);
    }
}

// ---- the choice of kernels ----

TEST(QuantIsa, SelectAndRestore) {
    EXPECT_EQ(q::to_string(q::isa::scalar), "scalar");
    EXPECT_EQ(q::to_string(q::isa::avx2), "avx2");
    EXPECT_EQ(q::to_string(q::isa::avx512), "avx512");
    EXPECT_EQ(q::to_string(q::isa::neon), "neon");
    EXPECT_TRUE(q::isa_supported(q::isa::scalar));
    EXPECT_FALSE(q::isa_supported(q::isa::avx512));  // no AVX-512 kernels are built
    EXPECT_FALSE(q::isa_supported(q::isa::neon));

    const q::isa before = q::active_isa();
    EXPECT_FALSE(q::select_isa(q::isa::avx512));
    EXPECT_EQ(q::active_isa(), before);
    EXPECT_FALSE(q::select_isa(q::isa::neon));
    EXPECT_EQ(q::active_isa(), before);

    ASSERT_TRUE(q::select_isa(q::isa::scalar));
    EXPECT_EQ(q::active_isa(), q::isa::scalar);
    std::vector<std::uint8_t> b(18, 0x37);
    std::vector<float> with_scalar(32), active(32);
    ASSERT_TRUE(q::dequantize(tensor_type::q4_0, as_bytes(b), active));
    ASSERT_TRUE(q::dequantize_with(q::isa::scalar, tensor_type::q4_0, as_bytes(b), with_scalar));
    EXPECT_EQ(active, with_scalar);
    if (q::isa_supported(q::isa::avx2)) {
        ASSERT_TRUE(q::select_isa(q::isa::avx2));
        EXPECT_EQ(q::active_isa(), q::isa::avx2);
    }
    ASSERT_TRUE(q::select_isa(before));
    EXPECT_EQ(q::active_isa(), before);
}

// What MINFER_QUANT_ISA = `env` (nullptr: unset) must choose here: the ISA's name and a word the
// note must contain ("" when the note must be empty).
std::pair<std::string, std::string> expected_choice(const char* env) {
    const std::string best = q::isa_supported(q::isa::avx2) ? "avx2" : "scalar";
    const std::string v = env != nullptr ? env : "";
    if (v.empty() || v == "auto") return {best, ""};
    if (v == "scalar") return {"scalar", ""};
    if (v == "avx2") return q::isa_supported(q::isa::avx2) ? std::pair<std::string, std::string>{"avx2", ""}
                                                           : std::pair<std::string, std::string>{"scalar", "not available"};
    if (v == "avx512" || v == "neon") return {best, "not available"};
    return {best, "not one of"};
}

// The choice this process made from its own MINFER_QUANT_ISA (run by ctest as it is set, and by
// EnvironmentCapsTheChoice in child processes with each value).
TEST(QuantIsaEnv, ActiveIsaFollowsEnvironment) {
    const char* env = std::getenv("MINFER_QUANT_ISA");
    const auto [want_isa, want_note] = expected_choice(env);
    EXPECT_EQ(q::to_string(q::active_isa()), want_isa) << "MINFER_QUANT_ISA=" << (env ? env : "(unset)");
    const std::string note(q::isa_env_note());
    if (want_note.empty()) {
        EXPECT_EQ(note, "");
    } else {
        EXPECT_NE(note.find(want_note), std::string::npos) << note;
        EXPECT_NE(note.find(std::string("using ").append(want_isa)), std::string::npos) << note;
    }
}

#if defined(__linux__)
TEST(QuantIsaEnv, EnvironmentCapsTheChoice) {
    char self[4096];
    const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT_GT(len, 0);
    self[len] = '\0';
    for (const char* value : {static_cast<const char*>(nullptr), "auto", "scalar", "avx2", "avx512", "neon", "bogus"}) {
        std::string cmd = "env -u MINFER_QUANT_ISA ";
        if (value != nullptr) cmd.append("MINFER_QUANT_ISA=").append(value).append(" ");
        cmd.append("'").append(self).append("' --gtest_filter=QuantIsaEnv.ActiveIsaFollowsEnvironment > /dev/null 2>&1");
        EXPECT_EQ(std::system(cmd.c_str()), 0) << "MINFER_QUANT_ISA=" << (value ? value : "(unset)") << " (run: " << cmd << ")";
    }
}
#endif

}  // namespace
