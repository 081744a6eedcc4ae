// minfer::quant::quantize_rows without ggml: the checks made before anything is written (sizes,
// types, importance weights), round trips within a per-type error bound, and what NaN and Inf
// inputs give (never a crash or an error for the basic types; the documented bytes where
// docs/QUANT.md names them). Bit-exactness against ggml is tests/unit/test_quantize_ggml.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/quant/validate.hpp"

namespace {

namespace q = minfer::quant;
namespace gguf = minfer::gguf;
using gguf::errc;
using gguf::tensor_type;

struct bound {
    tensor_type type;
    double max_rel_rmse;  // rms(dequantize(quantize(x)) - x) / rms(x) on Gaussian rows
};

// Bounds 1.5x what each type gives on N(0, 1) rows of 4096 (measured once; 1.1x for the 1- and
// 2-level types, whose error on Gaussian data is large by design): a quantizer that stores the
// wrong levels or scales is far outside them.
const std::vector<bound>& bounds() {
    static const std::vector<bound> b = {
        {tensor_type::f32, 0.0},       {tensor_type::f16, 3.2e-4},   {tensor_type::bf16, 2.5e-3},
        {tensor_type::q8_0, 0.008},    {tensor_type::q4_0, 0.13},    {tensor_type::q4_1, 0.12},
        {tensor_type::q5_0, 0.065},    {tensor_type::q5_1, 0.057},   {tensor_type::q2_k, 0.45},
        {tensor_type::q3_k, 0.23},     {tensor_type::q4_k, 0.11},    {tensor_type::q5_k, 0.055},
        {tensor_type::q6_k, 0.027},    {tensor_type::iq4_nl, 0.115}, {tensor_type::iq4_xs, 0.115},
        {tensor_type::tq1_0, 0.88},    {tensor_type::tq2_0, 0.88},   {tensor_type::mxfp4, 0.17},
        {tensor_type::nvfp4, 0.145},   {tensor_type::q1_0, 0.66},    {tensor_type::q2_0, 0.78}};
    return b;
}

std::vector<float> gaussian(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> x(n);
    for (float& v : x) v = g(rng);
    return x;
}

std::vector<std::byte> quantized(tensor_type t, std::span<const float> src, std::int64_t n_per_row,
                                 std::span<const float> imp = {}) {
    std::vector<std::byte> out(q::bytes_for(t, src.size()));
    auto r = q::quantize_rows(t, src, n_per_row, imp, out);
    EXPECT_TRUE(r) << gguf::to_string(t) << ": " << (r ? "" : r.error().message());
    return out;
}

double rel_rmse(tensor_type t, const std::vector<float>& x, const std::vector<std::byte>& bytes) {
    std::vector<float> back(x.size());
    EXPECT_TRUE(q::dequantize(t, bytes, back));
    double e = 0, s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        e += (double(back[i]) - x[i]) * (double(back[i]) - x[i]);
        s += double(x[i]) * x[i];
    }
    return std::sqrt(e / s);
}

// ---- what the front refuses, before writing a byte ----

// The error `r` holds, with dst untouched (still 0x5a).
void expect_refused(const q::result<void>& r, errc code, const std::vector<std::byte>& dst, const char* what) {
    ASSERT_FALSE(r) << what;
    EXPECT_EQ(r.error().code, code) << what << ": " << r.error().message();
    EXPECT_FALSE(r.error().description().empty());
    for (std::byte b : dst) ASSERT_EQ(b, std::byte{0x5a}) << what << ": bytes written before the error";
}

TEST(Quantize, SizeErrors) {
    const std::vector<float> src = gaussian(256, 1);
    std::vector<std::byte> dst(q::bytes_for(tensor_type::q4_0, 256), std::byte{0x5a});
    // n_per_row not a whole number of blocks (and not positive).
    for (std::int64_t n : {std::int64_t{33}, std::int64_t{0}, std::int64_t{-32}, std::int64_t{16}}) {
        auto r = q::quantize_rows(tensor_type::q4_0, src, n, {}, dst);
        expect_refused(r, errc::not_block_multiple, dst, "n_per_row");
        EXPECT_EQ(r.error().expected, 32u);
    }
    // q4_K needs 256 per row: 128 is not enough even though 256 values are given.
    expect_refused(q::quantize_rows(tensor_type::q4_k, src, 128, {}, dst), errc::not_block_multiple, dst, "q4_K 128");
    // src not whole rows.
    auto r = q::quantize_rows(tensor_type::q4_0, std::span(src).first(96), 64, {}, dst);
    expect_refused(r, errc::buffer_size_mismatch, dst, "src rows");
    EXPECT_EQ(r.error().found, 96u);
    // dst one byte short, one too many.
    std::vector<std::byte> small(dst.size() - 1, std::byte{0x5a}), large(dst.size() + 1, std::byte{0x5a});
    r = q::quantize_rows(tensor_type::q4_0, src, 64, {}, small);
    expect_refused(r, errc::buffer_size_mismatch, small, "dst short");
    EXPECT_EQ(r.error().expected, dst.size());
    EXPECT_EQ(r.error().found, dst.size() - 1);
    expect_refused(q::quantize_rows(tensor_type::q4_0, src, 64, {}, large), errc::buffer_size_mismatch, large, "dst long");
    // importance: n_per_row weights or none.
    const std::vector<float> w(63, 1.f);
    r = q::quantize_rows(tensor_type::q4_0, src, 64, w, dst);
    expect_refused(r, errc::buffer_size_mismatch, dst, "importance");
    EXPECT_EQ(r.error().expected, 64u);
    // The threaded entry point checks the same way.
    expect_refused(q::quantize_rows_parallel(tensor_type::q4_0, src, 33, {}, dst, 4), errc::not_block_multiple, dst,
                   "parallel");
    // No rows at all is fine (nothing to write).
    std::vector<std::byte> none;
    EXPECT_TRUE(q::quantize_rows(tensor_type::q4_0, {}, 32, {}, none));
}

TEST(Quantize, TypesNotQuantizable) {
    const std::vector<float> src = gaussian(256, 2);
    std::vector<std::byte> dst(1024, std::byte{0x5a});
    for (std::uint32_t id : {9u /*q8_1*/, 15u /*q8_K*/, 4u /*q4_2*/, 24u /*i8*/, 26u, 27u, 28u /*f64*/, 31u, 43u, 1000u}) {
        const auto t = static_cast<tensor_type>(id);
        EXPECT_FALSE(q::can_quantize(t)) << id;
        auto r = q::quantize_rows(t, src, 256, {}, dst);
        expect_refused(r, minfer::quant::codes::type_not_quantizable, dst, "type");
        EXPECT_EQ(r.error().found, id);
    }
    for (const bound& b : bounds()) EXPECT_TRUE(q::can_quantize(b.type)) << gguf::to_string(b.type);
}

TEST(Quantize, ImportanceRequired) {
    const std::vector<float> src = gaussian(256, 3);
    std::vector<std::byte> dst(q::bytes_for(tensor_type::iq2_xs, 256), std::byte{0x5a});
    for (tensor_type t : {tensor_type::iq2_xxs, tensor_type::iq2_xs, tensor_type::iq1_s}) {
        EXPECT_TRUE(q::requires_importance(t));
        std::vector<std::byte> out(q::bytes_for(t, 256), std::byte{0x5a});
        auto r = q::quantize_rows(t, src, 256, {}, out);
        expect_refused(r, minfer::quant::codes::importance_required, out, gguf::to_string(t).data());
        EXPECT_EQ(r.error().found, static_cast<std::uint32_t>(t));
    }
    for (const bound& b : bounds()) EXPECT_FALSE(q::requires_importance(b.type)) << gguf::to_string(b.type);
    EXPECT_FALSE(q::requires_importance(tensor_type::iq1_m));  // ggml leaves iq1_m out of the list
}

// ---- round trips ----

TEST(Quantize, RoundTripWithinBounds) {
    const std::int64_t n_per_row = 4096;
    const std::vector<float> x = gaussian(4 * n_per_row, 4);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.5f, 2.f);
    std::vector<float> w(n_per_row);
    for (float& v : w) v = u(rng);
    for (const bound& b : bounds()) {
        for (bool weighted : {false, true}) {
            const auto bytes = quantized(b.type, x, n_per_row, weighted ? std::span<const float>(w) : std::span<const float>());
            const double e = rel_rmse(b.type, x, bytes);
            EXPECT_LE(e, b.max_rel_rmse) << gguf::to_string(b.type) << (weighted ? " with importance" : "");
        }
    }
}

// More bits, less error: a guard against a quantizer that works but stores too little.
TEST(Quantize, MoreBitsLessError) {
    const std::vector<float> x = gaussian(8192, 6);
    auto err = [&](tensor_type t) { return rel_rmse(t, x, quantized(t, x, 8192)); };
    EXPECT_LT(err(tensor_type::q3_k), err(tensor_type::q2_k));
    EXPECT_LT(err(tensor_type::q4_k), err(tensor_type::q3_k));
    EXPECT_LT(err(tensor_type::q5_k), err(tensor_type::q4_k));
    EXPECT_LT(err(tensor_type::q6_k), err(tensor_type::q5_k));
    EXPECT_LT(err(tensor_type::q8_0), err(tensor_type::q6_k));
    EXPECT_LT(err(tensor_type::q5_0), err(tensor_type::q4_0));
}

// Values a type holds exactly come back exactly (-8 … 7: q4_0's levels with d = 1; q8_0's d = 8/127 is not exact).
TEST(Quantize, ExactValuesComeBackExactly) {
    std::vector<float> x(256);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 16) - 8);
    for (tensor_type t : {tensor_type::f16, tensor_type::bf16, tensor_type::q4_0, tensor_type::q6_k}) {
        std::vector<float> back(x.size());
        ASSERT_TRUE(q::dequantize(t, quantized(t, x, 256), back));
        EXPECT_EQ(back, x) << gguf::to_string(t);
    }
}

// f16 and bf16 round to nearest even; f16 overflows to Inf.
TEST(Quantize, HalfPrecisionRounding) {
    auto f16_of = [](float v) {
        std::vector<std::byte> out(2);
        EXPECT_TRUE(q::quantize_rows(tensor_type::f16, std::span<const float>(&v, 1), 1, {}, out));
        return static_cast<unsigned>(std::to_integer<unsigned>(out[0]) | (std::to_integer<unsigned>(out[1]) << 8));
    };
    auto bf16_of = [](float v) {
        std::vector<std::byte> out(2);
        EXPECT_TRUE(q::quantize_rows(tensor_type::bf16, std::span<const float>(&v, 1), 1, {}, out));
        return static_cast<unsigned>(std::to_integer<unsigned>(out[0]) | (std::to_integer<unsigned>(out[1]) << 8));
    };
    EXPECT_EQ(f16_of(1.0f), 0x3c00u);
    EXPECT_EQ(f16_of(1.0f + 0x1p-11f), 0x3c00u);               // tie: to even
    EXPECT_EQ(f16_of(1.0f + 3 * 0x1p-11f), 0x3c02u);           // tie: to even (up)
    EXPECT_EQ(f16_of(65504.f), 0x7bffu);
    EXPECT_EQ(f16_of(65520.f), 0x7c00u);                        // rounds to Inf
    EXPECT_EQ(f16_of(-0.0f), 0x8000u);
    EXPECT_EQ(f16_of(0x1p-24f), 0x0001u);                       // smallest subnormal
    EXPECT_EQ(f16_of(0x1p-25f), 0x0000u);                       // tie with 0: to even
    EXPECT_EQ(f16_of(std::numeric_limits<float>::infinity()), 0x7c00u);
    EXPECT_EQ(f16_of(std::numeric_limits<float>::quiet_NaN()), 0x7e00u);
    EXPECT_EQ(f16_of(-std::numeric_limits<float>::quiet_NaN()), 0xfe00u);
    EXPECT_EQ(bf16_of(1.0f + 0x1p-8f), 0x3f80u);                // tie: to even
    EXPECT_EQ(bf16_of(1.0f + 3 * 0x1p-8f), 0x3f82u);
    float snan;
    const std::uint32_t snan_bits = 0x7f800001u;
    std::memcpy(&snan, &snan_bits, 4);
    EXPECT_EQ(bf16_of(snan), 0x7fc0u);                          // made quiet (bit 6), not rounded to Inf
}

// ---- NaN and Inf ----

// The basic types never fail and never crash on NaN, ±Inf or ±FLT_MAX: a row holding one gives
// bytes (ggml's, see the reference test), the same every time and whatever the threads, and the
// rows beside it are unaffected.
TEST(Quantize, NonFiniteInputNeverFails) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const std::int64_t n = 512;
    std::vector<float> x = gaussian(6 * n, 7);
    x[0 * n + 5] = nan;
    x[1 * n + 300] = inf;
    x[2 * n + 1] = -inf;
    std::fill_n(x.begin() + 3 * n, n, nan);  // a row of NaN only
    x[4 * n + 7] = std::numeric_limits<float>::max();
    x[4 * n + 8] = -std::numeric_limits<float>::max();
    const std::vector<float> clean(x.begin() + 5 * n, x.end());
    std::vector<float> w(n, 1.f);
    for (const bound& b : bounds()) {
        for (bool weighted : {false, true}) {
            const std::span<const float> imp = weighted ? std::span<const float>(w) : std::span<const float>();
            const auto once = quantized(b.type, x, n, imp);
            std::vector<std::byte> threaded(once.size());
            ASSERT_TRUE(q::quantize_rows_parallel(b.type, x, n, imp, threaded, 3)) << gguf::to_string(b.type);
            EXPECT_EQ(once, threaded) << gguf::to_string(b.type);
            EXPECT_EQ(once, quantized(b.type, x, n, imp)) << gguf::to_string(b.type);
            const auto alone = quantized(b.type, clean, n, imp);
            EXPECT_TRUE(std::equal(alone.begin(), alone.end(), once.end() - static_cast<std::ptrdiff_t>(alone.size())))
                << gguf::to_string(b.type) << ": a clean row changed beside non-finite ones";
        }
    }
}

// The documented results (docs/QUANT.md, "Quantizing"). q8_0 stores a NaN as level 0, and its
// scale comes from the values after the block's last NaN (ggml's MAX(amax, |v|) takes the NaN, then
// drops it at the next comparison): NaN only when the NaN is the block's last value. q4_0 ignores
// a NaN for the scale and stores it as level 0 (-8 d).
// quantize's input check: the first NaN or infinity, at every position of a stretch and across the
// 4096-value stretches of the branch-free pass (first, last, both sides of a boundary), the
// smallest and largest non-finite bit patterns, and finite extremes that are not caught.
TEST(Quantize, FirstNonFiniteFindsTheFirst) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> v(3 * 4096 + 17, 1.f);
    EXPECT_EQ(minfer::quant::first_non_finite(v), v.size());
    EXPECT_EQ(minfer::quant::first_non_finite(std::span<const float>()), 0u);
    v[0] = std::numeric_limits<float>::max();
    v[1] = -std::numeric_limits<float>::max();
    v[2] = std::numeric_limits<float>::denorm_min();
    v[3] = -0.f;
    EXPECT_EQ(minfer::quant::first_non_finite(v), v.size());
    for (std::size_t at : {std::size_t{0}, std::size_t{4095}, std::size_t{4096}, std::size_t{8191}, v.size() - 1}) {
        for (std::uint32_t bits : {0x7f800000u, 0xff800000u, 0x7f800001u, 0xffffffffu, 0x7fc00000u}) {
            std::vector<float> w = v;
            std::memcpy(&w[at], &bits, sizeof bits);
            EXPECT_EQ(minfer::quant::first_non_finite(w), at) << at << " " << bits;
            if (at + 5 < w.size()) {
                w[at + 5] = nan;  // a later one does not hide the first
                EXPECT_EQ(minfer::quant::first_non_finite(w), at);
            }
        }
    }
    std::vector<float> two(5000, 0.f);
    two[4999] = inf;
    two[4100] = -inf;
    EXPECT_EQ(minfer::quant::first_non_finite(two), 4100u);
}

TEST(Quantize, DocumentedNaNResults) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto u16 = [](const std::vector<std::byte>& b) {
        return std::to_integer<unsigned>(b[0]) | (std::to_integer<unsigned>(b[1]) << 8);
    };
    std::vector<float> x(32);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 16.f;
    x[3] = nan;
    auto b8 = quantized(tensor_type::q8_0, x, 32);
    std::vector<float> back8(32);
    ASSERT_TRUE(q::dequantize(tensor_type::q8_0, b8, back8));
    EXPECT_EQ(b8[2 + 3], std::byte{0});
    EXPECT_NEAR(back8[31], 15.f, 0.01f);  // the scale is 15 / 127 (f16-rounded): -16, before the NaN, is not seen
    // -16 / d rounds to -135, which ggml narrows to int8 without clamping: it wraps to +121.
    EXPECT_EQ(std::to_integer<int>(b8[2]), 121);
    x[3] = 0.f;
    x[31] = nan;
    b8 = quantized(tensor_type::q8_0, x, 32);
    EXPECT_EQ(u16(b8), 0x7e00u);  // NaN last: a NaN scale
    for (std::size_t i = 2; i < b8.size(); ++i) EXPECT_EQ(b8[i], std::byte{0}) << i;

    x[31] = 15.f;
    x[3] = nan;
    const auto b4 = quantized(tensor_type::q4_0, x, 32);
    std::vector<float> back(32);
    ASSERT_TRUE(q::dequantize(tensor_type::q4_0, b4, back));
    EXPECT_EQ(std::to_integer<unsigned>(b4[2 + 3]) & 15u, 0u);  // value 3: level 0
    EXPECT_EQ(back[0], -16.f);                                  // the scale came from the finite values
}

TEST(Quantize, ThreadCountsGiveTheSameBytes) {
    const std::int64_t n = 256;
    const std::vector<float> x = gaussian(5 * n, 8);
    for (tensor_type t : {tensor_type::q4_k, tensor_type::q8_0, tensor_type::iq4_xs}) {
        const auto one = quantized(t, x, n);
        for (unsigned threads : {0u, 2u, 5u, 64u}) {
            std::vector<std::byte> out(one.size());
            ASSERT_TRUE(q::quantize_rows_parallel(t, x, n, {}, out, threads));
            EXPECT_EQ(out, one) << gguf::to_string(t) << ", " << threads << " threads";
        }
    }
}

}  // namespace
