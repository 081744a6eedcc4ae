// minfer::quant against ggml itself: for every type ggml can convert, the f32 bits of
// minfer::quant::dequantize_with(isa, ...) must equal those of ggml's own to_float (the library
// from $MINFER_LLAMA_LIB, see tests/support/llama_ref), NaN matching NaN whatever its payload.
// Inputs: blocks made by ggml's quantizer from varied data, blocks of random bytes, and random
// blocks whose scale fields hold the special values (NaN, ±Inf, subnormal, zero, max) — every bit
// pattern is a valid block, so the kernels must agree on all of them. The scalar kernels are
// compared, and the AVX2 ones when this CPU runs them.
//
// Every test skips loudly when no library is named, and fails when one is named but unusable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"

namespace {

namespace q = minfer::quant;
namespace gguf = minfer::gguf;
namespace lr = minfer::llama_ref;
using gguf::tensor_type;

constexpr unsigned needed = lr::part::type_traits | lr::part::type_count | lr::part::quantize_chunk |
                            lr::part::f16 | lr::part::bf16;

// Tests that need the library: skipped when none is named, failed when one is named but unusable.
class WithGgml : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        lib = lr::llama_lib::require(needed, why);
        if (lib != nullptr) return;
        if (lr::llama_lib::configured()) FAIL() << why;
        MINFER_SKIP_REFERENCE(why);
    }
    const lr::llama_lib* lib = nullptr;
};

std::uint32_t id_of(tensor_type t) { return static_cast<std::uint32_t>(t); }
std::string name_of(tensor_type t) { return std::string(gguf::to_string(t)); }

// ggml's to_float for `t` from its type_traits, nullptr when the library has none (or does not
// know the id).
lr::row_dequantize ggml_traits_to_float(const lr::llama_lib& lib, tensor_type t) {
    const lr::ggml_type_traits* tr = lib.type_traits(id_of(t));
    return tr != nullptr ? tr->to_float : nullptr;
}

// What this test compares with: the to_float of the type_traits, or for q8_K (which ggml's traits
// leave without one) the exported dequantize_row_q8_K.
lr::row_dequantize ggml_to_float(const lr::llama_lib& lib, tensor_type t) {
    if (lr::row_dequantize f = ggml_traits_to_float(lib, t)) return f;
    if (t == tensor_type::q8_k) return lib.api().dequantize_row_q8_K;
    return nullptr;
}

// The types this test compares: what minfer converts, except the plain types ggml has no to_float
// for (f32 is copied, f64 and the integers are C casts: tests/unit/test_quant.cpp checks them).
std::vector<tensor_type> compared_types() {
    std::vector<tensor_type> out;
    for (std::uint32_t id = 0; id < gguf::tensor_type_count; ++id) {
        const auto t = static_cast<tensor_type>(id);
        if (!q::can_dequantize(t)) continue;
        if (t == tensor_type::f32 || t == tensor_type::f64 || t == tensor_type::i8 || t == tensor_type::i16 ||
            t == tensor_type::i32)
            continue;
        out.push_back(t);
    }
    return out;
}

std::uint32_t bits_of(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

bool same_value(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b); }

std::vector<q::isa> isas_to_check() {
    std::vector<q::isa> v{q::isa::scalar};
    if (q::isa_supported(q::isa::avx2)) v.push_back(q::isa::avx2);
    return v;
}

// Converts `blocks` with ggml's to_float and with minfer's kernels of every ISA to check (reading
// from a misaligned copy, so that unaligned loads are exercised) and expects equal bits. Returns
// the number of values compared (per ISA).
std::uint64_t expect_same_as_ggml(lr::row_dequantize to_float, tensor_type type, std::span<const std::byte> blocks,
                                  const std::string& what) {
    const gguf::type_traits* tr = gguf::traits(type);
    const std::size_t n_blocks = blocks.size() / tr->block_bytes;
    const std::size_t n = n_blocks * tr->block_elems;
    if (n == 0) return 0;
    std::vector<float> want(n);
    to_float(blocks.data(), want.data(), static_cast<std::int64_t>(n));

    std::vector<std::byte> shifted(blocks.size() + 1);
    std::memcpy(shifted.data() + 1, blocks.data(), blocks.size());
    const std::span<const std::byte> src = std::span<const std::byte>(shifted).subspan(1);
    for (q::isa i : isas_to_check()) {
        std::vector<float> got(n, -12345.0f);
        const auto r = q::dequantize_with(i, type, src, got);
        if (!r) {
            ADD_FAILURE() << name_of(type) << " " << what << ": dequantize_with(" << q::to_string(i) << ") failed";
            continue;
        }
        std::size_t bad = 0;
        for (std::size_t k = 0; k < n; ++k) {
            if (same_value(got[k], want[k])) continue;
            if (++bad <= 3) {
                char line[256];
                std::snprintf(line, sizeof line, "value %zu (block %zu, #%zu): ggml %.9g (0x%08x), minfer %.9g (0x%08x)", k,
                              k / tr->block_elems, k % tr->block_elems, static_cast<double>(want[k]), bits_of(want[k]),
                              static_cast<double>(got[k]), bits_of(got[k]));
                ADD_FAILURE() << name_of(type) << " " << what << " [" << q::to_string(i) << "] " << line;
            }
        }
        if (bad > 3) ADD_FAILURE() << name_of(type) << " " << what << " [" << q::to_string(i) << "]: " << bad << " of " << n
                                   << " values differ";
    }
    return n;
}

// ---- inputs ----

constexpr std::int64_t n_per_row = 1024;  // a whole number of blocks of every type (32, 64, 128, 256)

// Rows of varied data for ggml's quantizer, `per_kind` rows of each kind.
std::vector<float> quantizer_input(std::vector<std::string>& kinds, int per_kind) {
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> out;
    auto add_rows = [&](const char* kind, auto make) {
        for (int r = 0; r < per_kind; ++r) {
            for (std::int64_t k = 0; k < n_per_row; ++k) out.push_back(make(k));
            kinds.emplace_back(kind);
        }
    };
    add_rows("normal", [&](std::int64_t) { return normal(rng); });
    add_rows("wide range", [&](std::int64_t) {
        const float sign = unit(rng) < 0.5f ? -1.0f : 1.0f;
        return sign * std::pow(10.0f, -8.0f + 13.0f * unit(rng));
    });
    add_rows("zeros", [&](std::int64_t) { return 0.0f; });
    add_rows("tiny", [&](std::int64_t) { return normal(rng) * 1e-7f; });
    add_rows("small", [&](std::int64_t) { return normal(rng) * 1e-5f; });
    add_rows("large", [&](std::int64_t) { return normal(rng) * 3e4f; });
    add_rows("outliers", [&](std::int64_t k) { return k % 97 == 5 ? normal(rng) * 500.0f : normal(rng) * 0.01f; });
    add_rows("constant", [&](std::int64_t) { return 0.7f; });
    add_rows("ramp", [&](std::int64_t k) { return -1.0f + 2.0f * static_cast<float>(k) / static_cast<float>(n_per_row); });
    add_rows("positive", [&](std::int64_t) { return 2.0f + unit(rng); });
    return out;
}

// Where a block keeps its scales, and in which format.
enum class scale_kind { f16, e8m0, ue4m3, f32, iq1m_d };
struct scale_field {
    std::size_t offset;
    scale_kind kind;
};

std::vector<scale_field> scale_fields(tensor_type t) {
    using tt = tensor_type;
    switch (t) {
        case tt::f16: case tt::bf16: return {};  // the value is the scale: checked exhaustively
        case tt::q4_0: case tt::q5_0: case tt::q8_0: case tt::iq4_nl: case tt::q1_0: case tt::q2_0:
        case tt::iq2_xxs: case tt::iq2_xs: case tt::iq2_s: case tt::iq3_xxs: case tt::iq3_s: case tt::iq1_s:
        case tt::iq4_xs:
            return {{0, scale_kind::f16}};
        case tt::q4_1: case tt::q5_1: case tt::q4_k: case tt::q5_k: return {{0, scale_kind::f16}, {2, scale_kind::f16}};
        case tt::q2_k: return {{80, scale_kind::f16}, {82, scale_kind::f16}};
        case tt::q3_k: return {{108, scale_kind::f16}};
        case tt::q6_k: return {{208, scale_kind::f16}};
        case tt::q8_k: return {{0, scale_kind::f32}};
        case tt::tq1_0: return {{52, scale_kind::f16}};
        case tt::tq2_0: return {{64, scale_kind::f16}};
        case tt::iq1_m: return {{48, scale_kind::iq1m_d}};
        case tt::mxfp4: return {{0, scale_kind::e8m0}};
        case tt::nvfp4:
            return {{0, scale_kind::ue4m3}, {1, scale_kind::ue4m3}, {2, scale_kind::ue4m3}, {3, scale_kind::ue4m3}};
        default: return {};
    }
}

std::vector<std::uint32_t> specials(scale_kind k) {
    switch (k) {
        case scale_kind::f16:
        case scale_kind::iq1m_d:
            // +Inf, -Inf, quiet NaN, signalling NaN, -NaN, smallest subnormals, largest subnormal,
            // zeros, max, -max, smallest normal, one.
            return {0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe01, 0x0001, 0x8001, 0x03ff, 0x0000, 0x8000, 0x7bff, 0xfbff, 0x0400, 0x3c00};
        case scale_kind::e8m0: return {0, 1, 2, 127, 254, 255};
        case scale_kind::ue4m3: return {0x00, 0x01, 0x38, 0x7e, 0x7f, 0x80, 0x81, 0xff};
        case scale_kind::f32:
            return {0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00000, 0x00000001, 0x80000001, 0x7f7fffff,
                    0x00000000, 0x80000000, 0x3f800000};
    }
    return {};
}

void put_scale(std::byte* block, scale_field f, std::uint32_t v) {
    switch (f.kind) {
        case scale_kind::e8m0:
        case scale_kind::ue4m3: block[f.offset] = static_cast<std::byte>(v); break;
        case scale_kind::f16:
            block[f.offset] = static_cast<std::byte>(v & 0xff);
            block[f.offset + 1] = static_cast<std::byte>(v >> 8);
            break;
        case scale_kind::f32:
            for (int b = 0; b < 4; ++b) block[f.offset + static_cast<std::size_t>(b)] = static_cast<std::byte>((v >> (8 * b)) & 0xff);
            break;
        case scale_kind::iq1m_d:
            // iq1_m's d: nibble k of its f16 bits is the top nibble of the k-th u16 of scales.
            for (std::size_t k = 0; k < 4; ++k) {
                std::byte& hi = block[f.offset + 2 * k + 1];
                hi = static_cast<std::byte>((static_cast<unsigned>(hi) & 0x0fu) | (((v >> (4 * k)) & 0xfu) << 4));
            }
            break;
    }
}

std::vector<std::byte> random_bytes(std::size_t n, std::mt19937& rng) {
    std::vector<std::byte> v(n);
    for (auto& b : v) b = static_cast<std::byte>(rng() & 0xff);
    return v;
}

// ---- tests ----

class QuantGgml : public WithGgml, public ::testing::WithParamInterface<tensor_type> {};

// (a) ggml's own quantizer output, (b) random bytes, (c) special scale values.
TEST_P(QuantGgml, BitsEqualGgmlToFloat) {
    const tensor_type type = GetParam();
    const lr::row_dequantize to_float = ggml_to_float(*lib, type);
    if (to_float == nullptr) GTEST_SKIP() << "ggml's library (" << lib->path() << ") has no to_float for " << name_of(type);
    const gguf::type_traits* tr = gguf::traits(type);
    const std::size_t bb = tr->block_bytes;
    std::uint64_t from_quantizer = 0, from_random = 0, from_specials = 0;

    {  // (a)
        std::vector<std::string> kinds;
        // (ggml_quantize_init of iq1_s / iq2_s / iq2_xs builds its grid maps: seconds, once per process.)
        const std::vector<float> input = quantizer_input(kinds, 2);
        const auto rows = static_cast<std::int64_t>(kinds.size());
        const std::size_t row_bytes = static_cast<std::size_t>(n_per_row) / tr->block_elems * bb;
        std::vector<std::byte> quantized(row_bytes * kinds.size());
        if (type == tensor_type::q8_k) {
            // ggml_quantize_chunk has no q8_K case (nor its traits a from_float_ref); the exported
            // reference row quantizer makes its blocks.
            ASSERT_NE(lib->api().quantize_row_q8_K_ref, nullptr) << "quantize_row_q8_K_ref";
            lib->api().quantize_row_q8_K_ref(input.data(), quantized.data(), rows * n_per_row);
        } else {
            const std::vector<float> imatrix(static_cast<std::size_t>(n_per_row), 1.0f);
            const bool needs = lib->api().ggml_quantize_requires_imatrix(static_cast<int>(id_of(type)));
            const std::size_t written = lib->api().ggml_quantize_chunk(static_cast<int>(id_of(type)), input.data(), quantized.data(), 0,
                                                                       rows, n_per_row, needs ? imatrix.data() : nullptr);
            ASSERT_EQ(written, quantized.size());
        }
        for (std::size_t r = 0; r < kinds.size(); ++r)
            from_quantizer += expect_same_as_ggml(to_float, type, std::span<const std::byte>(quantized).subspan(r * row_bytes, row_bytes),
                                                  "quantized '" + kinds[r] + "' row");
        // All rows at once too: one call over many blocks.
        expect_same_as_ggml(to_float, type, quantized, "all quantized rows");
    }
    std::mt19937 rng(id_of(type) * 7919u + 1);
    {  // (b) random blocks, as one run and as short runs (1..7 blocks: the SIMD kernels' tails)
        const std::size_t n_blocks = 4096 * 32 / tr->block_elems;  // 128 Ki values
        const std::vector<std::byte> bytes = random_bytes(n_blocks * bb, rng);
        from_random += expect_same_as_ggml(to_float, type, bytes, "random bytes");
        std::size_t at = 0;
        for (std::size_t len = 1; len <= 7; ++len) {
            from_random += expect_same_as_ggml(to_float, type, std::span<const std::byte>(bytes).subspan(at * bb, len * bb),
                                               "random bytes, " + std::to_string(len) + " block(s)");
            at += len;
        }
    }
    {  // (c) special scales: each field alone (8 random blocks per value), and every pair of two fields
        const std::vector<scale_field> fields = scale_fields(type);
        if (type != tensor_type::f16 && type != tensor_type::bf16) {
            ASSERT_FALSE(fields.empty()) << "no scale fields known for " << name_of(type) << ": add them to scale_fields()";
        }
        for (const scale_field& f : fields) {
            for (std::uint32_t v : specials(f.kind)) {
                std::vector<std::byte> bytes = random_bytes(8 * bb, rng);
                for (std::size_t b = 0; b < 8; ++b) put_scale(bytes.data() + b * bb, f, v);
                char what[96];
                std::snprintf(what, sizeof what, "scale at byte %zu = 0x%x", f.offset, v);
                from_specials += expect_same_as_ggml(to_float, type, bytes, what);
            }
        }
        if (fields.size() == 2) {
            for (std::uint32_t v0 : specials(fields[0].kind)) {
                for (std::uint32_t v1 : specials(fields[1].kind)) {
                    std::vector<std::byte> bytes = random_bytes(2 * bb, rng);
                    for (std::size_t b = 0; b < 2; ++b) {
                        put_scale(bytes.data() + b * bb, fields[0], v0);
                        put_scale(bytes.data() + b * bb, fields[1], v1);
                    }
                    char what[96];
                    std::snprintf(what, sizeof what, "scales 0x%x, 0x%x", v0, v1);
                    from_specials += expect_same_as_ggml(to_float, type, bytes, what);
                }
            }
        }
    }
    std::printf("[ quant    ] %-8s %8llu values equal to ggml (quantizer %llu, random %llu, special scales %llu) on %s%s\n",
                name_of(type).c_str(), static_cast<unsigned long long>(from_quantizer + from_random + from_specials),
                static_cast<unsigned long long>(from_quantizer), static_cast<unsigned long long>(from_random),
                static_cast<unsigned long long>(from_specials), "scalar",
                q::isa_supported(q::isa::avx2) ? " and avx2" : "");
}

INSTANTIATE_TEST_SUITE_P(EveryType, QuantGgml, ::testing::ValuesIn(compared_types()),
                         [](const ::testing::TestParamInfo<tensor_type>& p) { return name_of(p.param); });

// Every f16 and every bf16 bit pattern, as one tensor each, against ggml's row conversion and its
// single-value functions.
using QuantGgmlFloats = WithGgml;
TEST_F(QuantGgmlFloats, EveryF16AndBf16Value) {
    for (tensor_type type : {tensor_type::f16, tensor_type::bf16}) {
        std::vector<std::byte> bytes(65536 * 2);
        for (std::uint32_t h = 0; h < 65536; ++h) {
            bytes[2 * h] = static_cast<std::byte>(h & 0xff);
            bytes[2 * h + 1] = static_cast<std::byte>(h >> 8);
        }
        const lr::row_dequantize to_float = ggml_to_float(*lib, type);
        ASSERT_NE(to_float, nullptr) << name_of(type);
        EXPECT_EQ(expect_same_as_ggml(to_float, type, bytes, "every value"), 65536u);
        std::vector<float> got(65536);
        ASSERT_TRUE(q::dequantize_with(q::isa::scalar, type, bytes, got));
        std::size_t bad = 0;
        for (std::uint32_t h = 0; h < 65536; ++h) {
            const float want = type == tensor_type::f16 ? lib->api().ggml_fp16_to_fp32(static_cast<std::uint16_t>(h))
                                                        : lib->api().ggml_bf16_to_fp32({static_cast<std::uint16_t>(h)});
            if (!same_value(got[h], want) && ++bad <= 3)
                ADD_FAILURE() << name_of(type) << " 0x" << std::hex << h << ": ggml 0x" << bits_of(want) << ", minfer 0x" << bits_of(got[h]);
        }
        EXPECT_EQ(bad, 0u) << name_of(type);
    }
}

// minfer converts exactly the types ggml has a to_float for, plus f32 / f64 / i8 / i16 / i32 (and
// names the types of ours ggml's library lacks).
using QuantGgmlCoverage = WithGgml;
TEST_F(QuantGgmlCoverage, ConvertibleTypesMatchGgml) {
    std::string lacks;
    for (std::uint32_t id = 0; id < gguf::tensor_type_count; ++id) {
        const auto t = static_cast<tensor_type>(id);
        const bool ggml_has = ggml_traits_to_float(*lib, t) != nullptr;
        if (ggml_has) {
            EXPECT_TRUE(q::can_dequantize(t)) << "ggml has a to_float for " << name_of(t) << " (id " << id
                                              << ") but minfer::quant cannot convert it"
                                              << (t == tensor_type::q8_1 ? ": q8_1 has gained a to_float in ggml" : "");
        } else if (q::can_dequantize(t)) {
            lacks.append(lacks.empty() ? "" : ", ").append(name_of(t));
        }
    }
    // q8_K: no to_float in ggml's traits, compared above through dequantize_row_q8_K instead.
    const std::string expected_lacks = "f32, q8_K, i8, i16, i32, f64";
    if (lacks != expected_lacks)
        std::printf("[ quant    ] NOTE: ggml's library (%s) has no to_float for: %s (expected only %s); "
                    "those types are not compared with ggml\n",
                    lib->path().c_str(), lacks.c_str(), expected_lacks.c_str());
    else
        std::printf("[ quant    ] ggml's type_traits have a to_float for every type minfer converts except %s "
                    "(q8_K is compared through dequantize_row_q8_K)\n", lacks.c_str());
}

}  // namespace
