// The k-quants' scale searches in AVX2 lanes (src/quant/avx2_fit.cpp) against the scalar searches
// they replace (qb::fit_with_min, ggml's make_qkx2_quants; qb::fit_symmetric, make_qx_quants;
// qb::fit_q3, make_q3_quants),
// called directly: 8 sub-blocks of every kind
// side by side in one call (so a lane's branch must not leak into its neighbours), with every
// parameter set the quantizers use, nstep 0, constant and all-zero sub-blocks, exact rounding ties,
// NaN and Inf in values and weights. Levels, mins and scales must have the same bits (a NaN only
// has to be a NaN). This needs no ggml: the scalar search is checked against ggml by
// test_quantize_ggml, which also compares whole rows made with each instruction set.
// The IQ searches in lanes (src/quant/avx2_iq_search.cpp: iq4's trial sums and level rounding, the
// codebook types' neighbour search and lattice rounding; src/quant/avx2_iq1_search.cpp: iq1_s and
// iq1_m's split search) are checked the same way at the end.
// Skipped when the CPU (or the build) has no AVX2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "minfer/quant/isa.hpp"
#include "iq_lattice.hpp"
#include "quantize_basic.hpp"
#include "quantize_kernels.hpp"

namespace {

namespace quant = minfer::quant;
namespace detail = minfer::quant::detail;

struct search {
    const char* used_by;
    int nmax;
    float rmin, rdelta;
    int nstep;
    bool use_mad;
};

// Every parameter set the quantizers pass (quantize_k.cpp, quantize_legacy.cpp), and nstep 0.
const search searches[] = {
    {"q2_K", 3, -0.5f, 0.1f, 15, true},        {"q2_K weighted", 3, -0.9f, 0.05f, 36, false},
    {"q4_K", 15, -1.f, 0.1f, 20, false},       {"q5_K", 31, -0.5f, 0.1f, 15, false},
    {"q4_K/q5_K weighted", 15, -0.9f, 0.05f, 36, false}, {"q5_K weighted", 31, -0.9f, 0.05f, 36, false},
    {"no search", 15, -1.f, 0.1f, 0, false},   {"no search, mad", 3, -0.5f, 0.1f, 0, true},
};

constexpr int kinds = 12;

// One sub-block of n values of kind `kind`, and its weights.
void make_sub_block(int kind, int n, std::mt19937& rng, float* x, float* w) {
    std::normal_distribution<float> g(0.f, 1.f);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const float c = u(rng) * 4.f;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (int i = 0; i < n; ++i) {
        float v = 0.f;
        switch (kind) {
            case 0: v = g(rng); break;                                    // gaussian
            case 1: v = g(rng) / std::max(0.05f, std::fabs(g(rng))); break;  // heavy tails
            case 2: v = c; break;                                         // constant: the early exit
            case 3: v = 0.f; break;                                       // zeros
            case 4: v = std::fabs(u(rng)) + 0.25f; break;                 // positive only: min clamped to 0
            case 5: v = -std::fabs(u(rng)) - 0.5f; break;                 // negative only
            case 6: v = static_cast<float>(static_cast<int>(rng() % 8)) * 0.5f - 1.f; break;  // ties
            case 7: v = g(rng) * 1e-30f; break;                           // tiny
            case 8: v = g(rng) * 1e30f; break;                            // huge
            case 9: v = (i == static_cast<int>(rng() % static_cast<unsigned>(n))) ? 100.f : g(rng) * 0.01f; break;
            case 10: v = (i == 3) ? nan : g(rng); break;                  // a NaN
            default: v = (i == 5) ? (rng() % 2 ? inf : -inf) : g(rng); break;  // an Inf
        }
        x[i] = v;
    }
    const int weighting = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
        switch (weighting) {
            case 0: w[i] = std::fabs(x[i]); break;                        // q2_K
            case 1: w[i] = 0.5f + std::fabs(x[i]); break;                 // q4_K: rms + |x|
            case 2: w[i] = std::exp(g(rng)); break;                       // importance-like
            case 3: w[i] = (rng() % 3 == 0) ? 0.f : std::exp(g(rng)); break;  // with zeros
            default: w[i] = (i == 7 && rng() % 4 == 0) ? nan : 1.f; break;    // ones, sometimes a NaN
        }
    }
}

bool same_float(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// `count` (8, or 16 for the two-group searches) sub-blocks of n values side by side, as one lanes
// call takes them: in round 0 one of each of the first 8 kinds (all finite), then random mixes (a
// NaN or an Inf in some of them: the searches that round in floats only when every value is finite
// take both paths).
struct eight_sub_blocks {
    std::vector<float> x, w;
    int kind_of[16];
    eight_sub_blocks(int n, int round, std::mt19937& rng, int count = 8)
        : x(static_cast<std::size_t>(count) * static_cast<std::size_t>(n)), w(x.size()) {
        for (int k = 0; k < count; ++k) {
            kind_of[k] = round == 0 ? k % 8 : static_cast<int>(rng() % kinds);
            make_sub_block(kind_of[k], n, rng, x.data() + k * n, w.data() + k * n);
        }
    }
};

// Lane k of both searches: the scale (and the min, when given) with the same bits, the same levels.
template <class Level>
::testing::AssertionResult lane_agrees(const std::string& where, int k, int n, const float* scale_lanes,
                                       const float* scale_scalar, const std::vector<Level>& L_lanes,
                                       const std::vector<Level>& L_scalar, const float* min_lanes = nullptr,
                                       const float* min_scalar = nullptr) {
    if (!same_float(scale_lanes[k], scale_scalar[k]))
        return ::testing::AssertionFailure() << where << ": scale " << scale_lanes[k] << " vs " << scale_scalar[k];
    if (min_lanes != nullptr && !same_float(min_lanes[k], min_scalar[k]))
        return ::testing::AssertionFailure() << where << ": min " << min_lanes[k] << " vs " << min_scalar[k];
    if (std::memcmp(L_lanes.data() + k * n, L_scalar.data() + k * n, static_cast<std::size_t>(n) * sizeof(Level)) != 0)
        return ::testing::AssertionFailure() << where << ": levels differ";
    return ::testing::AssertionSuccess();
}

std::string where(const std::string& what, int round, int k, const eight_sub_blocks& in) {
    return what + ", round " + std::to_string(round) + ", lane " + std::to_string(k) + " (kind " +
           std::to_string(in.kind_of[k]) + ")";
}

struct shape {
    int n, nmax;
};

// The k-quants' last step (ggml's requantization with the block's final scale, with and without
// the minimum added) in lanes against the scalar expression, value by value: every kind of
// sub-block, scales of every sign and size (0, subnormal, NaN, Inf included), each type's range.
TEST(QuantizeLanes, RequantizeInLanesIsTheScalarLoop) {
    const detail::requantize_fn lanes = detail::avx2_requantize();
    if (lanes == nullptr || !quant::isa_supported(quant::isa::avx2)) GTEST_SKIP() << "no AVX2 lanes in this build or CPU";
    struct range {
        bool with_add;
        int lo, hi, offset;
    };
    const range ranges[] = {{true, 0, 3, 0}, {false, -4, 3, 4}, {true, 0, 15, 0}, {true, 0, 31, 0}, {false, -32, 31, 32}};
    std::mt19937 rng(29);
    std::normal_distribution<float> g(0.f, 1.f);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float special_d[] = {0.f, -0.f, 1e-40f, -1e-40f, nan, inf, -inf, 1e30f, 1e-30f};
    float x[32], w[32];
    for (int round = 0; round < 20000; ++round) {
        const int n = round % 2 ? 32 : 16;
        make_sub_block(round % kinds, n, rng, x, w);
        const range& r = ranges[static_cast<std::size_t>(round) % std::size(ranges)];
        const float d = round % 7 == 0 ? special_d[static_cast<std::size_t>(round / 7) % std::size(special_d)]
                                       : g(rng) * (round % 3 ? 0.1f : 10.f);
        const float add = round % 5 == 0 ? special_d[static_cast<std::size_t>(round / 5) % std::size(special_d)] : g(rng);
        std::uint8_t got[32], want[32];
        lanes(x, n, d, r.with_add, add, r.lo, r.hi, r.offset, got);
        for (int i = 0; i < n; ++i) {
            const int l = r.with_add ? detail::qb::nearest_int((x[i] + add) / d) : detail::qb::nearest_int(x[i] / d);
            want[i] = static_cast<std::uint8_t>(detail::qb::clamp(l, r.lo, r.hi) + r.offset);
        }
        ASSERT_EQ(std::memcmp(got, want, static_cast<std::size_t>(n)), 0)
            << "round " << round << ", d " << d << ", add " << add << ", range " << r.lo << ".." << r.hi;
    }
}

// q3_K's high-bit split in lanes against the scalar one: levels 0..7 (what the quantizer makes) and
// every int8 value (what the comparison must treat as signed).
TEST(QuantizeLanes, Q3HighBitSplitInLanesIsTheScalarSplit) {
    const detail::q3_split_high_fn lanes = detail::avx2_q3_split_high();
    if (lanes == nullptr || !quant::isa_supported(quant::isa::avx2)) GTEST_SKIP() << "no AVX2 lanes in this build or CPU";
    std::mt19937 rng(3);
    std::int8_t L[256];
    for (int round = 0; round < 2000; ++round) {
        for (auto& l : L) l = static_cast<std::int8_t>(round % 2 ? static_cast<int>(rng() % 8) : static_cast<int>(rng() % 256) - 128);
        std::uint8_t u_lanes[256], u_scalar[256], h_lanes[32], h_scalar[32];
        lanes(L, u_lanes, h_lanes);
        detail::qb::q3_split_high(L, u_scalar, h_scalar);
        ASSERT_EQ(std::memcmp(u_lanes, u_scalar, 256), 0) << "round " << round;
        ASSERT_EQ(std::memcmp(h_lanes, h_scalar, 32), 0) << "round " << round;
    }
    // and the scalar split is ggml's branchy loop
    for (auto& l : L) l = static_cast<std::int8_t>(static_cast<int>(rng() % 256) - 128);
    std::int8_t ggml[256];
    std::memcpy(ggml, L, 256);
    std::uint8_t hmask[32] = {}, u[256], h[32];
    for (int j = 0; j < 256; ++j)
        if (ggml[j] > 3) {
            hmask[j % 32] = static_cast<std::uint8_t>(hmask[j % 32] | (1u << (j / 32)));
            ggml[j] = static_cast<std::int8_t>(ggml[j] - 4);
        }
    detail::qb::q3_split_high(L, u, h);
    EXPECT_EQ(std::memcmp(u, ggml, 256), 0);
    EXPECT_EQ(std::memcmp(h, hmask, 32), 0);
}

TEST(QuantizeLanes, FitWithMinInLanesIsTheScalarSearch) {
    if (!quant::isa_supported(quant::isa::avx2) || detail::avx2_fit_with_min_x8() == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build: the lanes search is never used here";
    const detail::fit_with_min_x8_fn lanes = detail::avx2_fit_with_min_x8();
    std::mt19937 rng(2026u);
    int compared = 0;
    for (const search& s : searches) {
        for (int n : {16, 32}) {
            for (int round = 0; round < 400; ++round) {
                const eight_sub_blocks in(n, round, rng);
                std::vector<std::uint8_t> L_scalar(in.x.size(), 0xee), L_lanes(in.x.size(), 0xdd), Laux(32);
                float min_scalar[8], scale_scalar[8], min_lanes[8], scale_lanes[8];
                for (int k = 0; k < 8; ++k)
                    scale_scalar[k] = detail::qb::fit_with_min(n, s.nmax, in.x.data() + k * n, in.w.data() + k * n,
                                                               L_scalar.data() + k * n, &min_scalar[k], Laux.data(),
                                                               s.rmin, s.rdelta, s.nstep, s.use_mad);
                lanes(n, s.nmax, in.x.data(), in.w.data(), L_lanes.data(), min_lanes, scale_lanes, s.rmin, s.rdelta,
                      s.nstep, s.use_mad);
                const std::string what = std::string(s.used_by) + ", n " + std::to_string(n);
                for (int k = 0; k < 8; ++k)
                    ASSERT_TRUE(lane_agrees(where(what, round, k, in), k, n, scale_lanes, scale_scalar, L_lanes, L_scalar,
                                            min_lanes, min_scalar));
                ++compared;
            }
        }
    }
    EXPECT_EQ(compared, 8 * 2 * 400);
}

// make_qx_quants (fit_symmetric) in lanes: q6_K's search (n 16, nmax 32), with ggml's x*x weights
// (nullptr) and with importance weights, and the legacy types' shapes (n 32, nmax 8 and 16), and n 12
// (a part of a transposition tile); 8 sub-blocks per call and 16 (two groups side by side, q6_K's call).
TEST(QuantizeLanes, FitSymmetricInLanesIsTheScalarSearch) {
    if (!quant::isa_supported(quant::isa::avx2) || detail::avx2_fit_symmetric_x8() == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build: the lanes search is never used here";
    std::mt19937 rng(6u);
    int compared = 0;
    for (const int count : {8, 16}) {
        const detail::fit_symmetric_x8_fn lanes = count == 8 ? detail::avx2_fit_symmetric_x8() : detail::avx2_fit_symmetric_x16();
        for (const shape sh : {shape{16, 32}, shape{32, 8}, shape{32, 16}, shape{16, 4}, shape{12, 32}}) {
            const int n = sh.n;
            for (bool own_weights : {false, true}) {
                for (int round = 0; round < 400; ++round) {
                    const eight_sub_blocks in(n, round, rng, count);
                    const float* weights = own_weights ? in.w.data() : nullptr;
                    std::vector<std::int8_t> L_scalar(in.x.size(), 99), L_lanes(in.x.size(), 77);
                    float scale_scalar[16], scale_lanes[16];
                    for (int k = 0; k < count; ++k)
                        scale_scalar[k] = detail::qb::fit_symmetric(n, sh.nmax, in.x.data() + k * n, L_scalar.data() + k * n,
                                                                    weights != nullptr ? weights + k * n : nullptr);
                    lanes(n, sh.nmax, in.x.data(), L_lanes.data(), weights, scale_lanes);
                    const std::string what = std::to_string(count) + " sub-blocks, n " + std::to_string(n) + ", nmax " +
                                             std::to_string(sh.nmax) + (own_weights ? ", weights" : ", x*x");
                    for (int k = 0; k < count; ++k)
                        ASSERT_TRUE(lane_agrees(where(what, round, k, in), k, n, scale_lanes, scale_scalar, L_lanes, L_scalar));
                    ++compared;
                }
            }
        }
    }
    EXPECT_EQ(compared, 2 * 5 * 2 * 400);
}

// make_q3_quants (fit_q3) in lanes: q3_K's search (n 16, nmax 4), whose refinement moves one level
// at a time; also n 32, n 12 and other nmax, so that lanes stop refining in different passes; 8 and
// 16 sub-blocks per call (q3_K's call is 16: two groups whose passes end together).
TEST(QuantizeLanes, FitQ3InLanesIsTheScalarSearch) {
    if (!quant::isa_supported(quant::isa::avx2) || detail::avx2_fit_q3_x8() == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build: the lanes search is never used here";
    std::mt19937 rng(33u);
    int compared = 0;
    for (const int count : {8, 16}) {
        const detail::fit_q3_x8_fn lanes = count == 8 ? detail::avx2_fit_q3_x8() : detail::avx2_fit_q3_x16();
        for (const shape sh : {shape{16, 4}, shape{32, 4}, shape{16, 8}, shape{32, 2}, shape{12, 4}}) {
            const int n = sh.n;
            for (int round = 0; round < 800; ++round) {
                const eight_sub_blocks in(n, round, rng, count);
                std::vector<std::int8_t> L_scalar(in.x.size(), 99), L_lanes(in.x.size(), 77);
                float scale_scalar[16], scale_lanes[16];
                for (int k = 0; k < count; ++k)
                    scale_scalar[k] = detail::qb::fit_q3(n, sh.nmax, in.x.data() + k * n, L_scalar.data() + k * n);
                lanes(n, sh.nmax, in.x.data(), L_lanes.data(), scale_lanes);
                const std::string what = std::to_string(count) + " sub-blocks, n " + std::to_string(n) + ", nmax " +
                                         std::to_string(sh.nmax);
                for (int k = 0; k < count; ++k)
                    ASSERT_TRUE(lane_agrees(where(what, round, k, in), k, n, scale_lanes, scale_scalar, L_lanes, L_scalar));
                ++compared;
            }
        }
    }
    EXPECT_EQ(compared, 2 * 5 * 800);
}

// A search that changes its mind late: a constant lane beside lanes whose best fit comes from the
// last trial scale; checked against the scalar search as above, and the constant lane must come out
// as the scalar early exit gives it (levels 0, scale 0, min = -min(value, 0)).
TEST(QuantizeLanes, ConstantLaneKeepsTheEarlyExit) {
    if (!quant::isa_supported(quant::isa::avx2) || detail::avx2_fit_with_min_x8() == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build";
    constexpr int n = 32;
    constexpr std::size_t values = 8 * n;
    std::vector<float> x(values), w(values, 1.f);
    for (int k = 0; k < 8; ++k)
        for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(k * n + i)] = (k == 5) ? -2.5f : static_cast<float>((i * 7 + k) % 13) - 3.f;
    std::vector<std::uint8_t> L(values, 0xff);
    float mins[8], scales[8];
    detail::avx2_fit_with_min_x8()(n, 15, x.data(), w.data(), L.data(), mins, scales, -1.f, 0.1f, 20, false);
    EXPECT_EQ(scales[5], 0.f);
    EXPECT_EQ(mins[5], 2.5f);
    for (int i = 0; i < n; ++i) EXPECT_EQ(L[static_cast<std::size_t>(5 * n + i)], 0) << i;
    std::vector<std::uint8_t> Laux(32), Ls(static_cast<std::size_t>(n));
    for (int k = 0; k < 8; ++k) {
        float m = 0;
        const float s = detail::qb::fit_with_min(n, 15, x.data() + k * n, w.data() + k * n, Ls.data(), &m, Laux.data(),
                                                 -1.f, 0.1f, 20, false);
        EXPECT_TRUE(same_float(s, scales[k])) << k;
        EXPECT_TRUE(same_float(m, mins[k])) << k;
        EXPECT_EQ(std::memcmp(Ls.data(), L.data() + k * n, n), 0) << k;
    }
}

// ---- The IQ searches in lanes (avx2_iq_search.cpp) against their scalar versions ----------------

namespace iq_lanes {

const float nan = std::numeric_limits<float>::quiet_NaN();
const float inf = std::numeric_limits<float>::infinity();

// n values of a random kind: the kinds of make_sub_block (gaussian, ties, constant, zeros, tiny,
// huge, NaN, Inf), and values straddling the iq4 levels' midpoints (exact ties of best_index_int8).
void values(int n, std::mt19937& rng, float* x) {
    std::vector<float> w(static_cast<std::size_t>(n));
    const int kind = static_cast<int>(rng() % (kinds + 2));
    if (kind < kinds) {
        make_sub_block(kind, n, rng, x, w.data());
        return;
    }
    constexpr float mids[] = {-115.5f, -93.5f, -74.f, -57.f, -42.f, -28.5f, -16.f, -4.5f, 7.f, 19.f, 31.5f, 45.5f, 61.f, 79.f, 101.f};
    for (int i = 0; i < n; ++i) {
        const float m = mids[rng() % 15];
        x[i] = kind == kinds ? m : std::nextafter(m, (rng() % 2) ? 1e9f : -1e9f);
    }
}

// Weights: importance-like, with zeros, NaN or Inf now and then, or x*x (ggml's default).
void weights(int n, std::mt19937& rng, const float* x, float* w) {
    std::normal_distribution<float> g(0.f, 1.f);
    const int kind = static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
        switch (kind) {
            case 0: w[i] = x[i] * x[i]; break;
            case 1: w[i] = std::exp(g(rng)); break;
            case 2: w[i] = (rng() % 3 == 0) ? 0.f : std::exp(g(rng)); break;
            default: w[i] = (rng() % 16 == 0) ? ((rng() % 2) ? nan : inf) : std::fabs(g(rng)); break;
        }
    }
}

bool same_floats(const float* a, const float* b, int n) {
    for (int i = 0; i < n; ++i)
        if (!same_float(a[i], b[i])) return false;
    return true;
}

}  // namespace iq_lanes

// iq4_nl / iq4_xs: the 16 tries' sums (first guess and itry -7..7, computed as the quantizer does,
// plus random and non-finite inverse scales) and the final rounding to levels.
TEST(QuantizeLanes, Iq4SearchesInLanesAreTheScalarSearches) {
    const detail::iq4_trial_sums_fn sums = detail::avx2_iq4_trial_sums();
    const detail::iq4_levels_fn levels = detail::avx2_iq4_levels();
    if (!quant::isa_supported(quant::isa::avx2) || sums == nullptr || levels == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build";
    std::mt19937 rng(44u);
    std::uniform_real_distribution<float> u(-3.f, 3.f);
    for (int round = 0; round < 20000; ++round) {
        float x[256], w[32], ids[16];
        iq_lanes::values(256, rng, x);
        iq_lanes::weights(32, rng, x, w);
        float max = 0, amax = 0;
        for (int j = 0; j < 32; ++j)
            if (std::fabs(x[j]) > amax) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        if (round % 4 != 3) {  // the quantizer's inverse scales
            ids[0] = 1 / (-max / -127.f);
            for (int t = -7; t <= 7; ++t) ids[t + 8] = static_cast<float>(t - 127) / max;
        } else {  // anything, zero and non-finite included
            for (float& id : ids) id = (rng() % 8 == 0) ? (rng() % 2 ? iq_lanes::nan : -iq_lanes::inf) : u(rng) * std::exp(u(rng) * 8);
        }
        float qx_s[16], q2_s[16], qx_l[16], q2_l[16];
        detail::qb::iq4_trial_sums(x, w, ids, qx_s, q2_s);
        sums(x, w, ids, qx_l, q2_l);
        ASSERT_TRUE(iq_lanes::same_floats(qx_s, qx_l, 16) && iq_lanes::same_floats(q2_s, q2_l, 16)) << "round " << round;
        const float id = (round % 5 == 0) ? ids[rng() % 16] : u(rng) * 50.f;
        for (int n : {32, 256}) {
            std::uint8_t L_s[256], L_l[256];
            std::memset(L_l, 0xee, sizeof L_l);
            detail::qb::iq4_levels(x, n, id, L_s);
            levels(x, n, id, L_l);
            ASSERT_EQ(std::memcmp(L_s, L_l, static_cast<std::size_t>(n)), 0) << "round " << round << ", n " << n;
        }
    }
}

// The codebook types' neighbour search: every off-grid key of every lattice (iq2_xxs, iq2_xs, iq2_s
// with 8 coordinates, iq3_xxs, iq3_s with 4) with random values, weights and scales, non-finite ones
// included; the same grid index (or -1) as the scalar search.
TEST(QuantizeLanes, NeighbourSearchInLanesIsTheScalarSearch) {
    if (!quant::isa_supported(quant::isa::avx2) || detail::avx2_best_neighbour(8) == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build";
    std::mt19937 rng(77u);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    const detail::iq_lattice* lattices[] = {&detail::iq2xxs_lattice(), &detail::iq2xs_lattice(), &detail::iq2s_lattice(),
                                            &detail::iq3xxs_lattice(), &detail::iq3s_lattice()};
    long compared = 0;
    for (const detail::iq_lattice* lat : lattices) {
        const detail::neighbour_search_fn lanes = detail::avx2_best_neighbour(lat->dim);
        ASSERT_NE(lanes, nullptr);
        for (std::size_t key = 0; key < lat->map.size(); ++key) {
            const std::int32_t entry = lat->map[key];
            if (entry >= 0) continue;
            const int tries = (key % 7 == 0) ? 3 : 1;
            for (int t = 0; t < tries; ++t) {
                float x[8], w[8];
                iq_lanes::values(8, rng, x);
                iq_lanes::weights(8, rng, x, w);
                for (float& v : x) v = std::fabs(v);  // magnitudes, as the quantizers pass them
                for (float& v : w) v = std::sqrt(v);
                float scale = 0.05f + u(rng) * 3.f;
                if (rng() % 50 == 0) scale = (rng() % 2) ? iq_lanes::nan : iq_lanes::inf;
                if (rng() % 50 == 0) scale = 0.f;
                const std::uint16_t* list = lat->neighbours_of(entry);
                const int s = detail::scalar_best_neighbour(lat->dim, list, lat->packed.data(), x, w, scale);
                const int l = lanes(list, lat->packed.data(), x, w, scale);
                ASSERT_EQ(s, l) << "dim " << lat->dim << ", key " << key << ", " << list[0] << " candidates";
                ++compared;
            }
        }
    }
    EXPECT_GT(compared, 10000);
}

// Ties between candidates at equal distance: the first in list order must win in both (all weights
// equal and values on the lattice's midpoints make many equal distances).
TEST(QuantizeLanes, NeighbourSearchKeepsTheFirstOfEqualDistances) {
    if (!quant::isa_supported(quant::isa::avx2) || detail::avx2_best_neighbour(4) == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build";
    for (const detail::iq_lattice* lat : {&detail::iq2s_lattice(), &detail::iq3s_lattice()}) {
        const detail::neighbour_search_fn lanes = detail::avx2_best_neighbour(lat->dim);
        for (std::size_t key = 0; key < lat->map.size(); ++key) {
            if (lat->map[key] >= 0) continue;
            float x[8], w[8];
            for (int i = 0; i < 8; ++i) {
                x[i] = static_cast<float>(2 * ((key >> (lat->bits * i)) & ((1u << lat->bits) - 1)) + 1);
                w[i] = 1.f;
            }
            const std::uint16_t* list = lat->neighbours_of(lat->map[key]);
            ASSERT_EQ(detail::scalar_best_neighbour(lat->dim, list, lat->packed.data(), x, w, 1.f),
                      lanes(list, lat->packed.data(), x, w, 1.f)) << key;
        }
    }
}

// The rounding of a group's values to lattice coordinates at its 32 trial scales, and the points'
// keys (every lmax, dim and group size the types use), any scales (NaN and Inf among them).
TEST(QuantizeLanes, TrialsRoundingInLanesIsTheScalarRounding) {
    const detail::trials_round_fn lanes = detail::avx2_trials_round();
    if (!quant::isa_supported(quant::isa::avx2) || lanes == nullptr) GTEST_SKIP() << "no AVX2 in this CPU or build";
    std::mt19937 rng(5u);
    std::uniform_real_distribution<float> u(-2.f, 2.f);
    for (int round = 0; round < 5000; ++round) {
        float x[32];
        iq_lanes::values(32, rng, x);
        for (float& v : x) v = std::fabs(v);
        float ids[32];
        for (float& id : ids) {
            id = std::exp(u(rng) * 4.f);
            if (rng() % 40 == 0) id = (rng() % 2) ? iq_lanes::nan : iq_lanes::inf;
        }
        for (int lmax : {2, 7}) {
            const int dim = lmax == 2 ? 8 : 4;
            for (int n : {16, 32}) {
                alignas(32) std::int8_t L_s[32 * 32], L_l[32 * 32];
                std::uint32_t k_s[8 * 32], k_l[8 * 32];
                detail::scalar_trials_round(x, n, ids, lmax, dim, L_s, k_s);
                lanes(x, n, ids, lmax, dim, L_l, k_l);
                ASSERT_EQ(std::memcmp(L_s, L_l, static_cast<std::size_t>(32 * n)), 0) << "round " << round;
                ASSERT_EQ(std::memcmp(k_s, k_l, sizeof(std::uint32_t) * static_cast<std::size_t>(32 * (n / dim))), 0)
                    << "round " << round;
            }
        }
    }
}

// The codebook types' trial sums (one trial per lane): every trial count the types use and others
// (1..32), groups of 16 and 32, any levels 0..7 (the lattice coordinates, after the neighbour
// search), every kind of values and weights (NaN, Inf, zeros, huge). Same bits as trial after trial.
TEST(QuantizeLanes, CodebookTrialSumsInLanesAreTheScalarSums) {
    const detail::codebook_sums_fn lanes = detail::avx2_codebook_sums();
    if (!quant::isa_supported(quant::isa::avx2) || lanes == nullptr) GTEST_SKIP() << "no AVX2 in this CPU or build";
    std::mt19937 rng(4848u);
    for (int round = 0; round < 20000; ++round) {
        float x[32], w[32];
        iq_lanes::values(32, rng, x);
        for (float& v : x) v = (rng() % 4 == 0) ? v : std::fabs(v);  // the searches see magnitudes, some negated
        iq_lanes::weights(32, rng, x, w);
        alignas(32) std::int8_t L[32 * 32];
        const unsigned lmax = rng() % 2 ? 3u : 8u;
        for (std::int8_t& l : L) l = static_cast<std::int8_t>(rng() % lmax);
        const int n = rng() % 2 ? 16 : 32;
        constexpr int used[] = {13, 19, 31};  // iq2_xxs; iq2_xs, iq2_s and iq3_s; iq3_xxs
        const int trials = round % 5 == 0 ? 1 + static_cast<int>(rng() % 32) : used[round % 3];
        float sx[32], s2[32], lx[32], l2[32];
        detail::scalar_codebook_sums(n, trials, w, x, L, sx, s2);
        lanes(n, trials, w, x, L, lx, l2);
        ASSERT_TRUE(iq_lanes::same_floats(sx, lx, trials)) << "round " << round;
        ASSERT_TRUE(iq_lanes::same_floats(s2, l2, trials)) << "round " << round;
    }
}

// iq1_s / iq1_m's split search: prefix sums of w·x and w over a group's values (sorted as the
// quantizers sort them, or in any order: the search takes any sums), every kind of values and
// weights, and groups made of ties (few distinct values, weights zero or equal: many candidates with
// the same score, the first in ggml's order must win, also across the lanes' steps). The same scale
// bits, cut points and shift as the scalar search.
namespace iq_lanes {

// sumx / sumw: n + 1 prefix sums per half (halves of n / halves values by index), as iq1_*_row
// builds them, over the values in `order`.
void prefix_sums(int n, int halves, const float* x, const float* w, const int* order, float* sumx, float* sumw) {
    const int stride = n + 1;
    for (int h = 0; h < halves; ++h) sumx[stride * h] = sumw[stride * h] = 0;
    for (int j = 0; j < n; ++j) {
        const int i = order[j];
        const int hi = halves == 1 ? 0 : (i < n / 2 ? 0 : 1);
        for (int h = 0; h < halves; ++h) {
            float* sx = sumx + stride * h;
            float* sw = sumw + stride * h;
            sx[j + 1] = h == hi ? sx[j] + w[i] * x[i] : sx[j];
            sw[j + 1] = h == hi ? sw[j] + w[i] : sw[j];
        }
    }
}

::testing::AssertionResult same_split(const detail::iq1_split& s, const detail::iq1_split& l) {
    if (same_float(s.scale, l.scale) && s.i1 == l.i1 && s.i2 == l.i2 && s.shift == l.shift)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "scalar (" << s.scale << ", " << s.i1 << ", " << s.i2 << ", " << s.shift
                                         << ") lanes (" << l.scale << ", " << l.i1 << ", " << l.i2 << ", " << l.shift << ")";
}

}  // namespace iq_lanes

TEST(QuantizeLanes, Iq1SplitSearchesInLanesAreTheScalarSearches) {
    const detail::iq1_split_fn s_lanes = detail::avx2_iq1s_split();
    const detail::iq1_split_fn m_lanes = detail::avx2_iq1m_split();
    if (!quant::isa_supported(quant::isa::avx2) || s_lanes == nullptr || m_lanes == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build";
    std::mt19937 rng(1515u);
    long ties = 0;
    for (int round = 0; round < 30000; ++round) {
        float x[256], w[32];
        const int kind = round % 4;
        if (kind < 3) {
            iq_lanes::values(256, rng, x);
            iq_lanes::weights(32, rng, x, w);
        } else {  // ties: a few distinct values, weights 0 or 1 (equal prefix sums, equal scores)
            const float c = 0.25f * static_cast<float>(1 + rng() % 8);
            for (int i = 0; i < 32; ++i) {
                x[i] = c * static_cast<float>(static_cast<int>(rng() % 5) - 2);
                w[i] = (rng() % 3 == 0) ? 0.f : 1.f;
            }
            ++ties;
        }
        for (int n : {32, 16}) {
            int order[32];
            for (int i = 0; i < n; ++i) order[i] = i;
            bool has_nan = false;
            for (int i = 0; i < n; ++i) has_nan = has_nan || std::isnan(x[i]);
            if (kind != 1 && !has_nan) std::stable_sort(order, order + n, [&](int a, int b) { return x[a] < x[b]; });
            float max = 0;
            for (int i = 0; i < n; ++i) max = std::max(max, std::fabs(x[i]));
            float sumx[34], sumw[34];
            detail::iq1_split s, l;
            if (n == 32) {
                iq_lanes::prefix_sums(32, 1, x, w, order, sumx, sumw);
                detail::scalar_iq1s_split(sumx, sumw, max, s);
                s_lanes(sumx, sumw, max, l);
            } else {
                iq_lanes::prefix_sums(16, 2, x, w, order, sumx, sumw);
                detail::scalar_iq1m_split(sumx, sumw, max, s);
                m_lanes(sumx, sumw, max, l);
            }
            ASSERT_TRUE(iq_lanes::same_split(s, l)) << "round " << round << ", n " << n;
        }
    }
    EXPECT_GT(ties, 1000);
}

// iq1_s / iq1_m's split lanes take the first candidate of the largest score when two checks show
// that the sequential choice ends there, and run the sequential search otherwise (see
// iq1m_split_lanes). Here the groups are made so that the checks fail often: a few distinct values
// and weights, each nudged by a few ulps (scores equal or a rounding apart), weights of both signs
// (sumq2 <= 0 for some candidates or all) and all-zero weights (no candidate qualifies).
TEST(QuantizeLanes, Iq1SplitLanesNearTiesAreTheScalarSearch) {
    const detail::iq1_split_fn s_lanes = detail::avx2_iq1s_split();
    const detail::iq1_split_fn m_lanes = detail::avx2_iq1m_split();
    if (!quant::isa_supported(quant::isa::avx2) || s_lanes == nullptr || m_lanes == nullptr)
        GTEST_SKIP() << "no AVX2 in this CPU or build";
    std::mt19937 rng(2626u);
    for (int round = 0; round < 40000; ++round) {
        float x[32], w[32];
        const int kind = round % 4;
        const float c = 0.25f * static_cast<float>(1 + rng() % 8);
        for (int i = 0; i < 32; ++i) {
            const float nudge = 1.f + static_cast<float>(static_cast<int>(rng() % 5) - 2) * 0x1p-23f;
            x[i] = c * static_cast<float>(static_cast<int>(rng() % 5) - 2) * (kind == 0 ? 1.f : nudge);
            switch (kind) {
                case 0: case 1: w[i] = static_cast<float>(1 + rng() % 2) * (rng() % 2 ? nudge : 1.f); break;
                case 2: w[i] = (rng() % 3 == 0 ? -1.f : 1.f) * nudge; break;  // sumq2 of either sign
                default: w[i] = round % 8 == 3 ? 0.f : nudge * 0x1p-20f; break;  // none qualifies / tiny
            }
        }
        const int n = round % 2 == 0 ? 16 : 32;
        int order[32];
        for (int i = 0; i < n; ++i) order[i] = i;
        std::stable_sort(order, order + n, [&](int a, int b) { return x[a] < x[b]; });
        float max = 0;
        for (int i = 0; i < n; ++i) max = std::max(max, std::fabs(x[i]));
        float sumx[34], sumw[34];
        detail::iq1_split s, l;
        if (n == 16) {
            iq_lanes::prefix_sums(16, 2, x, w, order, sumx, sumw);
            detail::scalar_iq1m_split(sumx, sumw, max, s);
            m_lanes(sumx, sumw, max, l);
        } else {
            iq_lanes::prefix_sums(32, 1, x, w, order, sumx, sumw);
            detail::scalar_iq1s_split(sumx, sumw, max, s);
            s_lanes(sumx, sumw, max, l);
        }
        ASSERT_TRUE(iq_lanes::same_split(s, l)) << "round " << round << ", n " << n;
    }
}

// iq1_s / iq1_m's sort: the lanes' ranks give the merge sort's order for values without NaN (ties,
// -0 beside +0, infinities, subnormals, huge and constant groups) and refuse a group with a NaN.
TEST(QuantizeLanes, Iq1OrderInLanesIsTheMergeSort) {
    const detail::iq1_order_fn lanes = detail::avx2_iq1_order();
    if (!quant::isa_supported(quant::isa::avx2) || lanes == nullptr) GTEST_SKIP() << "no AVX2 in this CPU or build";
    std::mt19937 rng(3737u);
    long refused = 0;
    for (int round = 0; round < 40000; ++round) {
        float x[256];
        const int kind = round % 4;
        if (kind == 0) {
            iq_lanes::values(256, rng, x);  // every kind of value, NaN and Inf among them
        } else {  // few distinct values: many ties, signed zeros
            const float levels[] = {0.f, -0.f, 1.f, -1.f, 0.5f, iq_lanes::inf, -iq_lanes::inf, 1e-40f, 3e38f};
            const unsigned distinct = kind == 1 ? 2u : kind == 2 ? 4u : 9u;
            for (float& v : x) v = levels[rng() % distinct];
        }
        for (int n : {16, 32}) {
            std::uint8_t s[32], l[32];
            detail::scalar_iq1_order(x, n, s);
            bool has_nan = false;
            for (int i = 0; i < n; ++i) has_nan = has_nan || std::isnan(x[i]);
            if (has_nan) {
                ASSERT_FALSE(lanes(x, n, l)) << "round " << round;
                ++refused;
                continue;
            }
            ASSERT_TRUE(lanes(x, n, l)) << "round " << round;
            ASSERT_EQ(std::memcmp(s, l, static_cast<std::size_t>(n)), 0) << "round " << round << ", n " << n;
        }
    }
    EXPECT_GT(refused, 100);
}

// iq1_s / iq1_m's neighbour search (iq1_find_best_neighbour2's list): every off-grid key of the iq1
// lattice with both level sets, random values, weights and scales (non-finite, zero and negative
// ones too), and points on the lattice with equal weights (many equal distances: the first wins).
TEST(QuantizeLanes, Iq1NeighbourSearchInLanesIsTheScalarSearch) {
    const detail::iq1_neighbour_fn lanes = detail::avx2_iq1_neighbour();
    if (!quant::isa_supported(quant::isa::avx2) || lanes == nullptr) GTEST_SKIP() << "no AVX2 in this CPU or build";
    const detail::iq_lattice& lat = detail::iq1s_lattice();
    constexpr float up[3] = {-1 + 0.125f, 0.125f, 1 + 0.125f};
    constexpr float down[3] = {-1 - 0.125f, -0.125f, 1 - 0.125f};
    std::mt19937 rng(1212u);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    long compared = 0, ties = 0;
    for (std::size_t key = 0; key < lat.map.size(); ++key) {
        const std::int32_t entry = lat.map[key];
        if (entry >= 0) continue;
        const std::uint16_t* list = lat.neighbours_of(entry);
        for (const float* levels : {up, down}) {
            float x[8], w[8];
            iq_lanes::values(8, rng, x);
            iq_lanes::weights(8, rng, x, w);
            float scale = 0.05f + u(rng) * 3.f;
            if (rng() % 50 == 0) scale = (rng() % 2) ? iq_lanes::nan : iq_lanes::inf;
            if (rng() % 50 == 0) scale = (rng() % 2) ? 0.f : -scale;
            ASSERT_EQ(detail::scalar_iq1_neighbour(list, lat.packed.data(), x, w, scale, levels),
                      lanes(list, lat.packed.data(), x, w, scale, levels)) << "key " << key;
            ++compared;
            if (key % 4 == 0) {  // the point itself at scale 1, equal weights: ties among its neighbours
                for (int i = 0; i < 8; ++i) {
                    const std::size_t l = (key >> (2 * i)) & 3u;  // 3 is no level: the top one instead
                    x[i] = levels[l < 3 ? l : 2];
                    w[i] = 1.f;
                }
                ASSERT_EQ(detail::scalar_iq1_neighbour(list, lat.packed.data(), x, w, 1.f, levels),
                          lanes(list, lat.packed.data(), x, w, 1.f, levels)) << "key " << key << " (ties)";
                ++ties;
            }
        }
    }
    EXPECT_GT(compared, 10000);
    EXPECT_GT(ties, 1000);
}

}  // namespace
