// minfer::quant::quantize_rows against ggml itself: for every type of the basic family, the bytes
// must be those ggml_quantize_chunk writes for the same rows (the library from $MINFER_LLAMA_LIB,
// see tests/support/llama_ref), without and with importance weights, on many kinds of rows: heavy
// tails, outliers, zeros, constants, tiny and huge magnitudes, one dominant value, exact rounding
// ties, zero blocks inside a row. A failure names the first differing block and prints both.
//
// Every test skips loudly when no library is named, and fails when one is named but unusable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/quant/validate.hpp"

namespace {

namespace q = minfer::quant;
namespace gguf = minfer::gguf;
namespace lr = minfer::llama_ref;
using gguf::tensor_type;

constexpr unsigned needed = lr::part::quantize_chunk | lr::part::ggml_types | lr::part::type_count |
                            lr::part::gguf_read | lr::part::log;

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

// The basic family (the codebook types are checked with their own quantizers).
const std::vector<tensor_type>& basic_types() {
    static const std::vector<tensor_type> types = {
        tensor_type::f32,   tensor_type::f16,    tensor_type::bf16,   tensor_type::q8_0,  tensor_type::q4_0,
        tensor_type::q4_1,  tensor_type::q5_0,   tensor_type::q5_1,   tensor_type::q2_k,  tensor_type::q3_k,
        tensor_type::q4_k,  tensor_type::q5_k,   tensor_type::q6_k,   tensor_type::iq4_nl, tensor_type::iq4_xs,
        tensor_type::tq1_0, tensor_type::tq2_0,  tensor_type::mxfp4,  tensor_type::nvfp4, tensor_type::q1_0,
        tensor_type::q2_0};
    return types;
}

std::uint32_t block_of(tensor_type t) { return gguf::traits(t)->block_elems; }
std::uint32_t bytes_of(tensor_type t) { return gguf::traits(t)->block_bytes; }

// ---- rows ----

constexpr int row_kinds = 16;
const char* const kind_names[row_kinds] = {"gaussian", "student-t(3)", "outliers", "zeros", "constant", "tiny 1e-30",
                                           "huge 1e30", "one dominates", "positive", "negative", "sparse",
                                           "small integers", "half ties", "zero blocks", "uniform [-1,1]",
                                           "student-t(1) wide"};

std::vector<float> make_row(int kind, std::int64_t n, std::mt19937& rng) {
    std::normal_distribution<float> g(0.f, 1.f);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::chi_squared_distribution<float> chi3(3.f);
    std::vector<float> x(static_cast<std::size_t>(n));
    const float c = u(rng) * 3.f;
    for (std::int64_t i = 0; i < n; ++i) {
        float& v = x[static_cast<std::size_t>(i)];
        switch (kind) {
            case 0: v = g(rng) * 0.02f; break;
            case 1: v = g(rng) / std::sqrt(chi3(rng) / 3.f); break;
            case 2: v = g(rng) * ((rng() % 100 == 0) ? 50.f : 1.f); break;
            case 3: v = 0.f; break;
            case 4: v = c; break;
            case 5: v = g(rng) * 1e-30f; break;
            case 6: v = g(rng) * 1e30f; break;
            case 7: v = g(rng) * 0.01f; break;
            case 8: v = std::fabs(u(rng)); break;
            case 9: v = -std::fabs(u(rng)) - 0.5f; break;
            case 10: v = (rng() % 10 == 0) ? g(rng) : 0.f; break;
            case 11: v = static_cast<float>(static_cast<int>(rng() % 16) - 8); break;
            case 12: v = static_cast<float>(static_cast<int>(rng() % 16) - 8) + 0.5f; break;
            case 13: v = g(rng); break;
            case 14: v = u(rng); break;
            default: v = g(rng) / std::max(1e-3f, std::fabs(g(rng))); break;
        }
    }
    if (kind == 7) x[rng() % static_cast<std::size_t>(n)] = (rng() % 2 ? 1000.f : -1000.f);
    if (kind == 13)
        for (std::int64_t b = 0; b < n / 32; ++b)
            if (rng() % 3 == 0) std::fill_n(x.begin() + b * 32, 32, 0.f);
    return x;
}

// Importance weights: 0 none, 1 positive heavy-tailed, 2 with zeros, 3 all ones.
std::vector<float> make_importance(int kind, std::int64_t n, std::mt19937& rng) {
    std::vector<float> w;
    if (kind == 0) return w;
    std::normal_distribution<float> g(0.f, 1.5f);
    w.resize(static_cast<std::size_t>(n));
    for (float& v : w) {
        if (kind == 1) v = std::exp(g(rng));
        else if (kind == 2) v = (rng() % 3 == 0) ? 0.f : std::exp(g(rng));
        else v = 1.f;
    }
    return w;
}

std::string hex(const std::uint8_t* p, std::size_t n) {
    std::string s;
    char buf[4];
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", p[i]);
        s += buf;
    }
    return s;
}

// "" when equal, else the first differing block of the first differing row, both sides in hex.
std::string first_difference(tensor_type t, const std::vector<std::uint8_t>& ours, const std::vector<std::uint8_t>& ref,
                             std::int64_t n_per_row) {
    if (ours.size() != ref.size()) return "sizes differ";
    const std::size_t bb = bytes_of(t);
    const std::size_t row_bytes = static_cast<std::size_t>(n_per_row) / block_of(t) * bb;
    for (std::size_t i = 0; i < ours.size(); ++i) {
        if (ours[i] == ref[i]) continue;
        const std::size_t block = i / bb;
        std::ostringstream o;
        o << "first difference at byte " << i << ": row " << i / row_bytes << ", block " << (i % row_bytes) / bb
          << " (block " << block << " overall)\n  ours: " << hex(ours.data() + block * bb, bb)
          << "\n  ggml: " << hex(ref.data() + block * bb, bb);
        return o.str();
    }
    return "";
}

std::vector<std::uint8_t> ggml_bytes(const lr::llama_lib& lib, tensor_type t, const std::vector<float>& src,
                                     std::int64_t n_per_row, const std::vector<float>& imp) {
    const std::int64_t rows = static_cast<std::int64_t>(src.size()) / n_per_row;
    std::vector<std::uint8_t> out(q::bytes_for(t, src.size()) + 64, 0xcd);
    const std::size_t written = lib.api().ggml_quantize_chunk(static_cast<int>(t), src.data(), out.data(), 0, rows,
                                                             n_per_row, imp.empty() ? nullptr : imp.data());
    EXPECT_EQ(written, q::bytes_for(t, src.size()));
    out.resize(q::bytes_for(t, src.size()));
    return out;
}

std::vector<std::uint8_t> bytes_with_active_isa(tensor_type t, const std::vector<float>& src, std::int64_t n_per_row,
                                                 const std::vector<float>& imp, unsigned threads) {
    std::vector<std::byte> out(q::bytes_for(t, src.size()), std::byte{0xab});
    auto r = threads == 1 ? q::quantize_rows(t, src, n_per_row, imp, out)
                          : q::quantize_rows_parallel(t, src, n_per_row, imp, out, threads);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    std::vector<std::uint8_t> bytes(out.size());
    std::memcpy(bytes.data(), out.data(), out.size());
    return bytes;
}

// Our bytes with the scalar searches, after checking that every other instruction set this CPU has
// (the k-quants' AVX2 lanes) gives the same bytes: so each set is compared with ggml, whichever
// MINFER_QUANT_ISA chose.
std::vector<std::uint8_t> our_bytes(tensor_type t, const std::vector<float>& src, std::int64_t n_per_row,
                                    const std::vector<float>& imp, unsigned threads = 1) {
    const q::isa before = q::active_isa();
    EXPECT_TRUE(q::select_isa(q::isa::scalar));
    std::vector<std::uint8_t> scalar = bytes_with_active_isa(t, src, n_per_row, imp, threads);
    for (q::isa i : {q::isa::avx2, q::isa::avx512, q::isa::neon}) {
        if (!q::select_isa(i)) continue;
        const std::string diff = first_difference(t, bytes_with_active_isa(t, src, n_per_row, imp, threads), scalar, n_per_row);
        EXPECT_EQ(diff, "") << gguf::to_string(t) << ": isa " << q::to_string(i) << " against scalar (\"ggml\" is scalar)";
    }
    q::select_isa(before);
    return scalar;
}

// The library's idea of the type must be ours (block size and bytes) before bytes are compared.
void expect_same_layout(const lr::llama_lib& lib, tensor_type t) {
    const auto id = static_cast<int>(t);
    ASSERT_LT(static_cast<std::uint32_t>(id), lib.type_count()) << gguf::to_string(t);
    ASSERT_EQ(lib.api().ggml_blck_size(id), static_cast<std::int64_t>(block_of(t))) << gguf::to_string(t);
    ASSERT_EQ(lib.api().ggml_type_size(id), bytes_of(t)) << gguf::to_string(t);
}

class BasicTypes : public WithGgml, public ::testing::WithParamInterface<tensor_type> {};

// Every row kind, three row lengths, four kinds of importance: byte for byte.
TEST_P(BasicTypes, SameBytesAsGgml) {
    const tensor_type t = GetParam();
    expect_same_layout(*lib, t);
    const std::int64_t blk = block_of(t);
    std::mt19937 rng(1234u + static_cast<unsigned>(t));
    int compared = 0;
    for (std::int64_t n_per_row : {blk, 4 * blk, std::int64_t{4096}}) {
        if (n_per_row % blk != 0) continue;
        for (int imp_kind = 0; imp_kind < 4; ++imp_kind) {
            // All row kinds in one call (several rows each), so that rows of different kinds sit side by side.
            std::vector<float> src;
            std::vector<int> kinds;
            const int per_kind = n_per_row >= 4096 ? 1 : 3;
            for (int kind = 0; kind < row_kinds; ++kind) {
                for (int k = 0; k < per_kind; ++k) {
                    std::vector<float> row = make_row(kind, n_per_row, rng);
                    src.insert(src.end(), row.begin(), row.end());
                    kinds.push_back(kind);
                }
            }
            const std::vector<float> imp = make_importance(imp_kind, n_per_row, rng);
            const auto ref = ggml_bytes(*lib, t, src, n_per_row, imp);
            const auto ours = our_bytes(t, src, n_per_row, imp);
            const std::string diff = first_difference(t, ours, ref, n_per_row);
            if (!diff.empty()) {
                const std::size_t row_bytes = static_cast<std::size_t>(n_per_row) / block_of(t) * bytes_of(t);
                std::size_t row = 0;
                while (row < kinds.size() && std::memcmp(ours.data() + row * row_bytes, ref.data() + row * row_bytes, row_bytes) == 0) ++row;
                ADD_FAILURE() << gguf::to_string(t) << ", n_per_row " << n_per_row << ", importance kind " << imp_kind
                              << ", row kind '" << kind_names[kinds[row]] << "': " << diff;
                return;
            }
            ++compared;
        }
    }
    EXPECT_EQ(compared, 12);
}

// Many random heavy-tailed rows of one block each: the searches' tie-breaks get exercised.
TEST_P(BasicTypes, ManyShortRows) {
    const tensor_type t = GetParam();
    expect_same_layout(*lib, t);
    const std::int64_t blk = block_of(t);
    std::mt19937 rng(99u + static_cast<unsigned>(t));
    const int rows = blk >= 256 ? 400 : 2000;
    for (int imp_kind : {0, 1, 2}) {
        std::vector<float> src;
        for (int r = 0; r < rows; ++r) {
            const std::vector<float> row = make_row(static_cast<int>(rng() % row_kinds), blk, rng);
            src.insert(src.end(), row.begin(), row.end());
        }
        const std::vector<float> imp = make_importance(imp_kind, blk, rng);
        const std::string diff = first_difference(t, our_bytes(t, src, blk, imp), ggml_bytes(*lib, t, src, blk, imp), blk);
        EXPECT_EQ(diff, "") << gguf::to_string(t) << ", importance kind " << imp_kind;
    }
}

// The threaded path gives the same bytes (rows are independent).
TEST_P(BasicTypes, ThreadsGiveTheSameBytes) {
    const tensor_type t = GetParam();
    expect_same_layout(*lib, t);
    const std::int64_t n_per_row = 512;
    std::mt19937 rng(7u);
    std::vector<float> src;
    for (int r = 0; r < 23; ++r) {
        const std::vector<float> row = make_row(r % row_kinds, n_per_row, rng);
        src.insert(src.end(), row.begin(), row.end());
    }
    for (int imp_kind : {0, 1}) {
        const std::vector<float> imp = make_importance(imp_kind, n_per_row, rng);
        const auto ref = ggml_bytes(*lib, t, src, n_per_row, imp);
        for (unsigned threads : {2u, 7u}) {
            EXPECT_EQ(first_difference(t, our_bytes(t, src, n_per_row, imp, threads), ref, n_per_row), "")
                << gguf::to_string(t) << ", " << threads << " threads, importance kind " << imp_kind;
        }
    }
}

// Special inputs: NaN, ±Inf, subnormals, ±FLT_MAX, -0. ggml does not check its input; ours gives
// the same bytes its x86-64 build gives (docs/QUANT.md, "Quantizing").
TEST_P(BasicTypes, SpecialValuesAsGgml) {
    const tensor_type t = GetParam();
    expect_same_layout(*lib, t);
    const std::int64_t blk = std::max<std::int64_t>(256, block_of(t));
    const float inf = std::numeric_limits<float>::infinity();
    const float specials[] = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              inf, -inf, 1e-40f, -1e-45f, 3.4e38f, -3.4e38f, -0.0f, 1e-39f};
    std::mt19937 rng(5u);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> src;
    // Per special value: a row with one of it, a row of it only, and a row of subnormal noise.
    for (float s : specials) {
        for (int variant = 0; variant < 3; ++variant) {
            for (std::int64_t i = 0; i < blk; ++i) {
                float v = g(rng);
                if (variant == 1) v = s;
                if (variant == 2) v = v * 1e-39f;
                src.push_back(v);
            }
            if (variant == 0) src[src.size() - static_cast<std::size_t>(blk) + rng() % static_cast<std::size_t>(blk)] = s;
        }
    }
    for (int imp_kind : {0, 1}) {
        const std::vector<float> imp = make_importance(imp_kind, blk, rng);
        EXPECT_EQ(first_difference(t, our_bytes(t, src, blk, imp), ggml_bytes(*lib, t, src, blk, imp), blk), "")
            << gguf::to_string(t) << ", importance kind " << imp_kind;
    }
}

INSTANTIATE_TEST_SUITE_P(Basic, BasicTypes, ::testing::ValuesIn(basic_types()),
                         [](const ::testing::TestParamInfo<tensor_type>& p) { return std::string(gguf::to_string(p.param)); });

// Our list of quantizable types and of types needing importance weights is ggml's: what
// ggml_quantize_requires_imatrix says, and every type whose quantizer we have.
TEST_F(WithGgml, RequiresImportanceAsGgml) {
    for (std::uint32_t id = 0; id < gguf::tensor_type_count && id < lib->type_count(); ++id) {
        const auto t = static_cast<tensor_type>(id);
        EXPECT_EQ(q::requires_importance(t), lib->api().ggml_quantize_requires_imatrix(static_cast<int>(id)))
            << gguf::to_string(t);
    }
    for (tensor_type t : basic_types()) EXPECT_TRUE(q::can_quantize(t)) << gguf::to_string(t);
}

}  // namespace

// quant::validate_bytes against ggml's ggml_validate_row_data, the check llama_model_quantize runs on
// every chunk it writes: for every type minfer quantizes, single blocks of random bytes (a random f16
// scale is infinite or NaN about once in 32) and the same blocks with the scale's bytes forced to an
// infinity and to a NaN wherever they are; the verdicts must agree block for block.
namespace {
namespace gguf_ns = minfer::gguf;
}  // namespace

TEST_F(WithGgml, ValidationAgreesWithGgml) {
    ASSERT_NE(lib->api().ggml_validate_row_data, nullptr);
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    std::size_t types = 0, invalid_seen = 0;
    for (std::uint32_t id = 0; id < gguf_ns::tensor_type_count; ++id) {
        const auto t = static_cast<tensor_type>(id);
        if (!minfer::quant::can_quantize(t)) continue;
        ASSERT_TRUE(minfer::quant::can_validate(t)) << gguf_ns::to_string(t) << " is quantized but has no validation rule";
        const gguf_ns::type_traits* tr = gguf_ns::traits(t);
        ASSERT_NE(tr, nullptr);
        ++types;
        std::vector<std::byte> block(tr->block_bytes);
        for (int trial = 0; trial < 2000; ++trial) {
            for (std::byte& b : block) b = static_cast<std::byte>(next() & 0xFF);
            const bool theirs = lib->api().ggml_validate_row_data(static_cast<int>(id), block.data(), block.size());
            const bool ours = !minfer::quant::validate_bytes(t, block).has_value();
            ASSERT_EQ(ours, theirs) << gguf_ns::to_string(t) << ", trial " << trial;
            invalid_seen += theirs ? 0 : 1;
        }
        // Two blocks: the first valid (zeros), the second random: the block index is where it is.
        std::vector<std::byte> two(2 * tr->block_bytes, std::byte{0});
        for (int trial = 0; trial < 200; ++trial) {
            for (std::size_t i = tr->block_bytes; i < two.size(); ++i) two[i] = static_cast<std::byte>(next() & 0xFF);
            const bool theirs = lib->api().ggml_validate_row_data(static_cast<int>(id), two.data(), two.size());
            const auto bad = minfer::quant::validate_bytes(t, two);
            ASSERT_EQ(!bad.has_value(), theirs) << gguf_ns::to_string(t);
            if (bad && tr->block_elems > 1) {
                EXPECT_EQ(bad->block, 1u) << gguf_ns::to_string(t);
            }
        }
    }
    EXPECT_GE(types, 25u);
    EXPECT_GT(invalid_seen, 100u);  // the random blocks did trip both checks
}
