// The SIMD kernels agree with the scalar reference bit for bit (a NaN only has to stay a NaN):
// for every convertible type, dequantize_with(isa::avx2) against dequantize_with(isa::scalar) on
// random blocks, on blocks whose scale fields hold the special values of their format (NaN, ±Inf,
// subnormals, ±0, max, e8m0/ue4m3 edge bytes), on all-zero and all-0xff blocks, on block counts
// that leave SIMD tails, and from unaligned sources into unaligned destinations. The scalar
// kernels are checked against ggml elsewhere; this file only proves that the fast path changes
// nothing. Skipped when the CPU (or the build) has no AVX2 kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/isa.hpp"

namespace {

using minfer::gguf::tensor_type;
namespace quant = minfer::quant;
using quant::isa;

struct type_info {
    tensor_type type;
    std::string name;
    std::size_t block_elems;
    std::size_t block_bytes;
};

std::vector<type_info> convertible_types() {
    std::vector<type_info> out;
    for (std::uint32_t id = 0; id < minfer::gguf::tensor_type_count; ++id) {
        const auto t = static_cast<tensor_type>(id);
        if (!quant::can_dequantize(t)) continue;
        const minfer::gguf::type_traits* tr = minfer::gguf::traits(t);
        out.push_back({t, std::string(minfer::gguf::to_string(t)), tr->block_elems, tr->block_bytes});
    }
    return out;
}

bool same(float a, float b) {
    if (a != a && b != b) return true;  // both NaN: payload and sign may differ
    std::uint32_t x = 0, y = 0;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
}

std::string hex_bits(float f) {
    std::uint32_t x = 0;
    std::memcpy(&x, &f, 4);
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", x);
    return buf;
}

std::string hex_block(const std::byte* p, std::size_t n) {
    std::string s;
    char buf[4];
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(p[i]));
        s.append(buf);
    }
    return s;
}

// Converts `blocks` (whole blocks of t) both ways, the source starting `src_shift` bytes into a
// buffer and the output `dst_shift` floats in, and reports the first disagreement (type, case,
// block, value index, both bit patterns and the block's bytes). Also checks that neither kernel
// writes past its output. Returns whether all was well (so a loop can go on to the next type and
// report each broken type once).
bool agree(const type_info& t, const std::vector<std::byte>& blocks, const std::string& what, std::size_t src_shift = 0,
           std::size_t dst_shift = 0) {
    const std::string where = std::string(t.name).append(" ").append(what).append(" (src +")
                                  .append(std::to_string(src_shift)).append(", dst +").append(std::to_string(dst_shift))
                                  .append(")");
    if (blocks.size() % t.block_bytes != 0) {
        ADD_FAILURE() << where << ": not whole blocks";
        return false;
    }
    const std::size_t n_blocks = blocks.size() / t.block_bytes;
    const std::size_t n = n_blocks * t.block_elems;
    std::vector<std::byte> src(blocks.size() + src_shift);
    if (!blocks.empty()) std::memcpy(src.data() + src_shift, blocks.data(), blocks.size());
    const std::span<const std::byte> in(src.data() + src_shift, blocks.size());

    constexpr float canary = -12345.5f;
    constexpr std::size_t guard = 16;
    std::vector<float> simd(n + dst_shift + guard, canary), ref(n + guard, canary);
    const std::span<float> out_simd(simd.data() + dst_shift, n), out_ref(ref.data(), n);

    if (auto r = quant::dequantize_with(isa::scalar, t.type, in, out_ref); !r) {
        ADD_FAILURE() << where << ": scalar: " << r.error().message();
        return false;
    }
    if (auto r = quant::dequantize_with(isa::avx2, t.type, in, out_simd); !r) {
        ADD_FAILURE() << where << ": avx2: " << r.error().message();
        return false;
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (same(out_simd[i], out_ref[i])) continue;
        const std::size_t b = i / t.block_elems;
        ADD_FAILURE() << where << ": block " << b << " of " << n_blocks << ", value " << i % t.block_elems << ": avx2 "
                      << hex_bits(out_simd[i]) << " (" << out_simd[i] << "), scalar " << hex_bits(out_ref[i]) << " ("
                      << out_ref[i] << ")\n  block bytes: " << hex_block(in.data() + b * t.block_bytes, t.block_bytes);
        return false;
    }
    for (std::size_t i = 0; i < dst_shift; ++i)
        if (!same(simd[i], canary)) {
            ADD_FAILURE() << where << ": avx2 wrote before dst";
            return false;
        }
    for (std::size_t i = 0; i < guard; ++i) {
        if (!same(simd[dst_shift + n + i], canary) || !same(ref[n + i], canary)) {
            ADD_FAILURE() << where << ": " << (same(ref[n + i], canary) ? "avx2" : "scalar") << " wrote past dst";
            return false;
        }
    }
    return true;
}

std::vector<std::byte> random_blocks(const type_info& t, std::size_t n_blocks, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> b(n_blocks * t.block_bytes);
    for (auto& x : b) x = static_cast<std::byte>(rng() & 0xff);
    return b;
}

class QuantIsa : public ::testing::Test {
protected:
    void SetUp() override {
        if (!quant::isa_supported(isa::avx2)) GTEST_SKIP() << "no AVX2 kernels on this CPU or in this build";
        types = convertible_types();
        ASSERT_FALSE(types.empty());
    }
    std::vector<type_info> types;
};

// Outputs of 8 MiB and more (quant::detail::stream_min_bytes) take the kernels with non-temporal
// stores when the output is 16-byte aligned — a path none of the small cases here reach. The same
// blocks into an output one float off take the normal-store kernels, which the other tests hold
// to the scalar ones; the two outputs must be equal bit for bit. (SIMD against SIMD: a scalar pass
// over 9 MiB per type would cost half a minute under the sanitizers.)
TEST_F(QuantIsa, LargeOutputsAgree) {
    struct free_deleter {
        void operator()(float* p) const noexcept { std::free(p); }
    };
    for (const type_info& t : types) {
        const std::size_t n_blocks = (std::size_t{9} << 20) / sizeof(float) / t.block_elems + 3;  // 9 MiB out and more
        const std::size_t n = n_blocks * t.block_elems;
        const auto blocks = random_blocks(t, n_blocks, 0x1a46e000u + static_cast<unsigned>(t.type));
        const std::size_t bytes = (n + 16) * sizeof(float) / 64 * 64 + 64;
        std::unique_ptr<float, free_deleter> streamed(static_cast<float*>(std::aligned_alloc(64, bytes)));
        std::unique_ptr<float, free_deleter> normal(static_cast<float*>(std::aligned_alloc(64, bytes)));
        ASSERT_TRUE(streamed && normal);
        ASSERT_TRUE(quant::dequantize_with(isa::avx2, t.type, blocks, std::span<float>(streamed.get(), n)));
        ASSERT_TRUE(quant::dequantize_with(isa::avx2, t.type, blocks, std::span<float>(normal.get() + 1, n)));
        for (std::size_t i = 0; i < n; ++i) {
            if (same(streamed.get()[i], normal.get()[1 + i])) continue;
            const std::size_t b = i / t.block_elems;
            ADD_FAILURE() << t.name << " 9 MiB output: streaming stores differ at block " << b << ", value "
                          << i % t.block_elems << ": " << hex_bits(streamed.get()[i]) << " vs normal stores "
                          << hex_bits(normal.get()[1 + i]) << "\n  block bytes: "
                          << hex_block(blocks.data() + b * t.block_bytes, t.block_bytes);
            break;
        }
    }
}

TEST_F(QuantIsa, RandomBlocksAgree) {
    for (const type_info& t : types) {
        // About a million values per type (a few thousand blocks of the 256-value formats).
        const std::size_t n_blocks = std::max<std::size_t>(2048, (1u << 20) / t.block_elems / 64);
        agree(t, random_blocks(t, n_blocks, 0x5eed0000u + static_cast<unsigned>(t.type)), "random blocks");
    }
}

// Scale fields may sit anywhere in a block (d first, d last, d and dmin, an e8m0 byte…), so each
// special value is written at every suitably aligned offset of a block, one block per offset,
// over random, all-zero and all-0xff backgrounds. That covers every f16/f32/e8m0/ue4m3 field of
// every format without restating the layouts here.
TEST_F(QuantIsa, SpecialScaleValuesAgree) {
    const std::uint16_t halves[] = {0x7e00, 0x7c01, 0xfe00, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x0000, 0x8000, 0x7bff, 0xfbff, 0x3c00};
    const std::uint32_t singles[] = {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7f800000u, 0xff800000u, 0x00000001u,
                                     0x807fffffu, 0x00000000u, 0x80000000u, 0x7f7fffffu};
    const std::uint8_t bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};  // e8m0 0/1/254/255, ue4m3 0/0x7f/0x80/0xff
    for (const type_info& t : types) {
        for (int background = 0; background < 3; ++background) {
            std::vector<std::byte> base = random_blocks(t, 1, 0xbac0u + static_cast<unsigned>(t.type));
            if (background == 1) std::fill(base.begin(), base.end(), std::byte{0});
            if (background == 2) std::fill(base.begin(), base.end(), std::byte{0xff});
            std::vector<std::byte> blocks;
            auto with = [&](std::size_t offset, const void* value, std::size_t size) {
                if (offset + size > t.block_bytes) return;
                const std::size_t at = blocks.size();
                blocks.insert(blocks.end(), base.begin(), base.end());
                std::memcpy(blocks.data() + at + offset, value, size);
            };
            for (std::uint16_t h : halves)
                for (std::size_t o = 0; o < t.block_bytes; o += 2) with(o, &h, 2);
            for (std::uint32_t f : singles)
                for (std::size_t o = 0; o < t.block_bytes; o += 4) with(o, &f, 4);
            for (std::uint8_t b : bytes)
                for (std::size_t o = 0; o < t.block_bytes; ++o) with(o, &b, 1);
            if (!agree(t, blocks, std::string("special values, background ").append(std::to_string(background)))) break;
        }
    }
}

// iq1_m has no d field: its f16 scale is the top nibbles of the four u16 at bytes 48..55.
TEST_F(QuantIsa, Iq1mSpecialScalesAgree) {
    const type_info* t = nullptr;
    for (const type_info& x : types)
        if (x.type == tensor_type::iq1_m) t = &x;
    if (t == nullptr) GTEST_SKIP() << "iq1_m is not convertible in this build";
    ASSERT_EQ(t->block_bytes, 56u);
    const std::uint16_t halves[] = {0x7e00, 0x7c01, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x0000, 0x8000, 0x7bff, 0x3c00};
    std::vector<std::byte> blocks = random_blocks(*t, std::size(halves), 0x1a1u);
    for (std::size_t k = 0; k < std::size(halves); ++k) {
        std::byte* sc = blocks.data() + k * 56 + 48;
        for (unsigned j = 0; j < 4; ++j) {
            std::uint16_t v = 0;
            std::memcpy(&v, sc + 2 * j, 2);
            v = static_cast<std::uint16_t>((v & 0x0fffu) | (((halves[k] >> (4 * j)) & 0xfu) << 12));
            std::memcpy(sc + 2 * j, &v, 2);
        }
    }
    agree(*t, blocks, "iq1_m special scales");
}

TEST_F(QuantIsa, AllZeroAndAllOnesBlocksAgree) {
    for (const type_info& t : types) {
        std::vector<std::byte> b(3 * t.block_bytes, std::byte{0});
        agree(t, b, "all-zero blocks");
        std::fill(b.begin(), b.end(), std::byte{0xff});
        agree(t, b, "all-0xff blocks");
    }
}

// Block counts that leave every remainder a SIMD loop over several blocks could have, and no
// kernel writing past the last value.
TEST_F(QuantIsa, OddBlockCountsAgree) {
    for (const type_info& t : types) {
        for (std::size_t n : {1u, 2u, 3u, 7u, 31u, 33u}) {
            if (!agree(t, random_blocks(t, n, 0x0dd0u + n), std::string("blocks: ").append(std::to_string(n)))) break;
        }
    }
}

// Blocks are packed byte arrays inside a mapped file: a tensor may start at any byte, and the
// caller's output need not be vector-aligned.
TEST_F(QuantIsa, UnalignedSourceAndDestinationAgree) {
    for (const type_info& t : types) {
        const std::vector<std::byte> b = random_blocks(t, 5, 0xa119u);
        for (std::size_t shift = 1; shift <= 7; ++shift) {
            if (!agree(t, b, "unaligned src", shift, 0) || !agree(t, b, "unaligned dst", 0, shift) ||
                !agree(t, b, "unaligned src and dst", shift, 8 - shift))
                break;
        }
    }
}

// Zero blocks is no work, and no write.
TEST_F(QuantIsa, ZeroBlocksWriteNothing) {
    for (const type_info& t : types) agree(t, {}, "zero blocks");
}

}  // namespace
