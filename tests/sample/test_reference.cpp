// Differential tests against llama.cpp's own reference code: our f16/bf16 converters and Q4_0/Q8_0
// quantizers must give exactly ggml's bits. The library is dlopen'ed by the shared binding
// (tests/support/llama_ref) from $MINFER_LLAMA_LIB (the path of libggml-base.so, see
// scripts/llama-ref.sh); without it every test skips.
#include <gtest/gtest.h>

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "quant.hpp"
#include "sample_model.hpp"

namespace ms = minfer::sample;

namespace {

using minfer::llama_ref::ggml_bf16;
namespace part = minfer::llama_ref::part;

// Skip unless the library has ggml's f16 converters and its reference Q4_0/Q8_0 code; then `ggml` is
// its C API and `lib` the library (bf16 and the gguf reader are optional: lib->has()).
#define REQUIRE_GGML()                                                    \
    MINFER_REQUIRE_LLAMA_PARTS(lib, part::f16 | part::quant_ref);        \
    const minfer::llama_ref::llama_api& ggml = lib->api()

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// Rows for the quantizers: normal data at many scales, uniform data, zeros, constants, extremes,
// ties, blocks with equal largest magnitudes of both signs, tiny and huge values mixed.
std::vector<std::vector<float>> test_rows() {
    std::vector<std::vector<float>> rows;
    std::mt19937 gen(20240601);
    const float fmax = std::numeric_limits<float>::max();
    for (int r = 0; r < 400; ++r) {
        const std::size_t n = 32 * (1 + static_cast<std::size_t>(gen() % 16));
        const float scale = std::ldexp(1.0f, static_cast<int>(gen() % 60) - 30);
        std::vector<float> x(n);
        if (r % 2 == 0) {
            std::normal_distribution<float> d(0.0f, scale);
            for (float& v : x) v = d(gen);
        } else {
            std::uniform_real_distribution<float> d(-scale, scale);
            for (float& v : x) v = d(gen);
        }
        rows.push_back(std::move(x));
    }
    rows.push_back(std::vector<float>(4096, 0.0f));
    rows.push_back(std::vector<float>(64, -0.0f));
    for (float c : {1.0f, -1.0f, 0.1f, -1234.5f, 65504.0f, 1e-7f, 3.0e38f, -fmax, fmax})
        rows.push_back(std::vector<float>(96, c));
    {
        std::vector<float> x(128);  // +/- extremes alternating, and with zeros
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? 0.0f : (i % 2 == 0 ? fmax : -fmax);
        rows.push_back(x);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 == 0 ? 1e30f : -1e-30f;
        rows.push_back(x);
    }
    {
        std::vector<float> x(64);  // half-step ties: x / d + 8.5 lands on integers and halves
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 33) - 16) * 0.25f;
        x[0] = -8.0f;
        x[32] = 8.0f;
        rows.push_back(x);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 255) - 127) * 0.5f;
        rows.push_back(x);  // Q8_0: round-half-away ties
    }
    {
        std::vector<float> x(32, 0.5f);  // equal magnitudes, both signs: the first one wins
        x[5] = -2.0f;
        x[9] = 2.0f;
        rows.push_back(x);
        x[5] = 2.0f;
        x[9] = -2.0f;
        rows.push_back(x);
    }
    {
        std::vector<float> x(64);  // f32 subnormals next to a normal maximum
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = from_bits(static_cast<std::uint32_t>(i * 977 + 1));
        x[0] = 1e-30f;
        x[40] = -1e-30f;
        rows.push_back(x);
    }
    {
        std::vector<float> x(256);  // scales at the f16 boundaries: d becomes subnormal, or overflows to inf
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = d(gen) * (i < 128 ? 1e-6f : 3e5f);
        rows.push_back(x);
    }
    {
        std::vector<float> x(32 * 64);  // random bit patterns restricted to finite values of sane range
        for (float& v : x) {
            std::uint32_t u = static_cast<std::uint32_t>(gen());
            u = (u & 0x807fffffu) | ((60u + (u >> 23) % 130u) << 23);
            v = from_bits(u);
        }
        rows.push_back(x);
    }
    return rows;
}

void expect_same_floats(const std::vector<float>& ours, const std::vector<float>& theirs, const char* what,
                        std::size_t row) {
    for (std::size_t i = 0; i < ours.size(); ++i)
        ASSERT_EQ(bits(ours[i]), bits(theirs[i])) << what << " row " << row << " element " << i << ": " << ours[i]
                                                  << " vs " << theirs[i];
}

}  // namespace

TEST(LlamaReference, F16ToF32AllPatterns) {
    REQUIRE_GGML();
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const auto h16 = static_cast<std::uint16_t>(h);
        ASSERT_EQ(bits(ms::f16_to_f32(h16)), bits(ggml.ggml_fp16_to_fp32(h16))) << std::hex << h;
    }
}

TEST(LlamaReference, F32ToF16Sweep) {
    REQUIRE_GGML();
    auto check = [&](float f) {
        ASSERT_EQ(ms::f32_to_f16(f), ggml.ggml_fp32_to_fp16(f)) << std::hex << bits(f) << " (" << f << ")";
    };
    // Every f16 value, every midpoint between neighbours, and the f32 values either side of both.
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const float f = ms::f16_to_f32(static_cast<std::uint16_t>(h));
        if (std::isnan(f)) continue;
        const std::uint32_t u = bits(f);
        for (std::uint32_t v : {u, u + 1, u - 1}) ASSERT_NO_FATAL_FAILURE(check(from_bits(v)));
        if ((h & 0x7fffu) < 0x7c00u) {
            const std::uint32_t next = (h & 0x7fffu) == 0x7bffu ? 0x47800000u : bits(ms::f16_to_f32(static_cast<std::uint16_t>((h & 0x7fffu) + 1)));
            const double mid = (static_cast<double>(from_bits(u & 0x7fffffffu)) + from_bits(next)) / 2;
            const std::uint32_t m = bits(static_cast<float>(mid)) | (u & 0x80000000u);
            for (std::uint32_t v : {m, m + 1, m - 1}) ASSERT_NO_FATAL_FAILURE(check(from_bits(v)));
        }
    }
    // Strided over all patterns, plus random patterns (NaNs and infinities included).
    for (std::uint64_t u = 0; u <= 0xffffffffu; u += 65537) ASSERT_NO_FATAL_FAILURE(check(from_bits(static_cast<std::uint32_t>(u))));
    std::mt19937 gen(99);
    for (int i = 0; i < 1000000; ++i) ASSERT_NO_FATAL_FAILURE(check(from_bits(static_cast<std::uint32_t>(gen()))));
    for (std::uint32_t u : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffffffffu, 0x00000001u, 0x80000001u,
                            0x33000000u, 0x33000001u, 0x477ff000u, 0x477fefffu})
        ASSERT_NO_FATAL_FAILURE(check(from_bits(u)));
}

TEST(LlamaReference, BF16) {
    REQUIRE_GGML();
    if (!lib->has(part::bf16)) MINFER_SKIP_REFERENCE(lib->path() + " lacks " + lib->missing(part::bf16));
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const auto h16 = static_cast<std::uint16_t>(h);
        ASSERT_EQ(bits(ms::bf16_to_f32(h16)), bits(ggml.ggml_bf16_to_fp32(ggml_bf16{h16}))) << std::hex << h;
        for (std::uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
            const float f = from_bits((h << 16) | low);
            ASSERT_EQ(ms::f32_to_bf16(f), ggml.ggml_fp32_to_bf16(f).bits) << std::hex << bits(f);
        }
    }
}

TEST(LlamaReference, Q4_0BytesAndValues) {
    REQUIRE_GGML();
    const auto rows = test_rows();
    std::size_t blocks = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::vector<float>& x = rows[r];
        const auto n = static_cast<std::int64_t>(x.size());
        std::vector<std::byte> ours(ms::q4_0_bytes(x.size())), theirs(ours.size(), std::byte{0xa5});
        ASSERT_TRUE(ms::quantize_q4_0(x, ours));
        ggml.quantize_row_q4_0_ref(x.data(), theirs.data(), n);
        ASSERT_EQ(ours, theirs) << "row " << r << " (n = " << n << ", x[0] = " << x[0] << ")";
        std::vector<float> ours_back(x.size()), theirs_back(x.size());
        ASSERT_TRUE(ms::dequantize_q4_0(ours, ours_back));
        ggml.dequantize_row_q4_0(theirs.data(), theirs_back.data(), n);
        ASSERT_NO_FATAL_FAILURE(expect_same_floats(ours_back, theirs_back, "q4_0 dequantize", r));
        blocks += x.size() / 32;
    }
    EXPECT_GT(blocks, 3000u);
}

TEST(LlamaReference, Q8_0BytesAndValues) {
    REQUIRE_GGML();
    const auto rows = test_rows();
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::vector<float>& x = rows[r];
        const auto n = static_cast<std::int64_t>(x.size());
        std::vector<std::byte> ours(ms::q8_0_bytes(x.size())), theirs(ours.size(), std::byte{0xa5});
        ASSERT_TRUE(ms::quantize_q8_0(x, ours));
        ggml.quantize_row_q8_0_ref(x.data(), theirs.data(), n);
        ASSERT_EQ(ours, theirs) << "row " << r << " (n = " << n << ", x[0] = " << x[0] << ")";
        std::vector<float> ours_back(x.size()), theirs_back(x.size());
        ASSERT_TRUE(ms::dequantize_q8_0(ours, ours_back));
        ggml.dequantize_row_q8_0(theirs.data(), theirs_back.data(), n);
        ASSERT_NO_FATAL_FAILURE(expect_same_floats(ours_back, theirs_back, "q8_0 dequantize", r));
    }
}

TEST(LlamaReference, DequantizeArbitraryBlocks) {
    // Blocks of random bytes (any scale, any nibbles) decode identically.
    REQUIRE_GGML();
    std::mt19937 gen(5);
    for (int r = 0; r < 200; ++r) {
        std::vector<std::byte> q4(18 * 8), q8(34 * 8);
        for (std::byte& b : q4) b = static_cast<std::byte>(gen() & 0xffu);
        for (std::byte& b : q8) b = static_cast<std::byte>(gen() & 0xffu);
        std::vector<float> ours(256), theirs(256);
        ASSERT_TRUE(ms::dequantize_q4_0(q4, ours));
        ggml.dequantize_row_q4_0(q4.data(), theirs.data(), 256);
        ASSERT_NO_FATAL_FAILURE(expect_same_floats(ours, theirs, "q4_0 random block", static_cast<std::size_t>(r)));
        ASSERT_TRUE(ms::dequantize_q8_0(q8, ours));
        ggml.dequantize_row_q8_0(q8.data(), theirs.data(), 256);
        ASSERT_NO_FATAL_FAILURE(expect_same_floats(ours, theirs, "q8_0 random block", static_cast<std::size_t>(r)));
    }
}

TEST(LlamaReference, SampleModelTensorsAreGgmlQuantized) {
    // Every quantized tensor of the sample model is what ggml makes of the same source values.
    REQUIRE_GGML();
    int checked = 0;
    for (const ms::tensor_spec& s : ms::sample_tensor_specs()) {
        const std::vector<float> v = ms::sample_values(s);
        const std::vector<std::byte> ours = ms::sample_tensor_bytes(s);
        std::vector<std::byte> theirs(ours.size());
        const auto n = static_cast<std::int64_t>(v.size());
        if (s.type == minfer::gguf::tensor_type::q4_0) {
            ggml.quantize_row_q4_0_ref(v.data(), theirs.data(), n);
        } else if (s.type == minfer::gguf::tensor_type::q8_0) {
            ggml.quantize_row_q8_0_ref(v.data(), theirs.data(), n);
        } else if (s.type == minfer::gguf::tensor_type::f16) {
            for (std::size_t i = 0; i < v.size(); ++i) {
                const std::uint16_t h = ggml.ggml_fp32_to_fp16(v[i]);
                std::memcpy(theirs.data() + 2 * i, &h, 2);
            }
        } else {
            continue;
        }
        EXPECT_EQ(ours, theirs) << s.name;
        ++checked;
    }
    EXPECT_EQ(checked, 1 + 2 * 7 + 1);  // token_embd, 6 Q4_0 + 1 F16 per block, output
}

TEST(LlamaReference, GgmlParsesTheSampleFiles) {
    // ggml's own GGUF reader sees the same keys, tensors, types and offsets as we wrote, for the
    // single file and for every part of a split set.
    REQUIRE_GGML();
    if (!lib->has(part::gguf_read)) MINFER_SKIP_REFERENCE(lib->path() + " lacks " + lib->missing(part::gguf_read));
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("minfer-sample-ref-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto single = ms::make_sample_model(dir / "single.gguf");
    ASSERT_TRUE(single.has_value()) << single.error().message();
    auto split = ms::make_sample_model(dir / "split.gguf", 3);
    ASSERT_TRUE(split.has_value()) << split.error().message();
    std::vector<ms::written_file> files = *single;
    files.insert(files.end(), split->begin(), split->end());
    std::size_t tensors_seen = 0;
    for (const ms::written_file& f : files) {
        SCOPED_TRACE(f.path.string());
        auto mapped = minfer::gguf::mapped_file::open(f.path);
        ASSERT_TRUE(mapped.has_value()) << mapped.error().message();
        auto view = minfer::gguf::file_view::parse(mapped->bytes());
        ASSERT_TRUE(view.has_value()) << view.error().message();
        minfer::llama_ref::gguf_context* ctx = ggml.gguf_init_from_file(f.path.c_str(), {true, nullptr});
        ASSERT_NE(ctx, nullptr) << "gguf_init_from_file failed";
        const auto kvs = view->metadata();
        EXPECT_EQ(ggml.gguf_get_n_kv(ctx), static_cast<std::int64_t>(kvs.size()));
        for (std::size_t i = 0; i < kvs.size() && static_cast<std::int64_t>(i) < ggml.gguf_get_n_kv(ctx); ++i) {
            const auto id = static_cast<std::int64_t>(i);
            EXPECT_EQ(std::string(ggml.gguf_get_key(ctx, id)), kvs[i].key);
            EXPECT_EQ(ggml.gguf_get_kv_type(ctx, id), static_cast<int>(kvs[i].type)) << kvs[i].key;
        }
        EXPECT_EQ(ggml.gguf_get_data_offset(ctx), view->data_offset());
        const auto ts = view->tensors();
        EXPECT_EQ(ggml.gguf_get_n_tensors(ctx), static_cast<std::int64_t>(ts.size()));
        for (std::size_t i = 0; i < ts.size() && static_cast<std::int64_t>(i) < ggml.gguf_get_n_tensors(ctx); ++i) {
            const auto id = static_cast<std::int64_t>(i);
            EXPECT_EQ(std::string(ggml.gguf_get_tensor_name(ctx, id)), ts[i].name);
            EXPECT_EQ(ggml.gguf_get_tensor_type(ctx, id), static_cast<int>(ts[i].type)) << ts[i].name;
            EXPECT_EQ(ggml.gguf_get_tensor_offset(ctx, id), ts[i].offset) << ts[i].name;
        }
        tensors_seen += ts.size();
        ggml.gguf_free(ctx);
    }
    EXPECT_EQ(tensors_seen, 2 * ms::sample_tensor_specs().size());
    std::error_code ec;
    fs::remove_all(dir, ec);
}
