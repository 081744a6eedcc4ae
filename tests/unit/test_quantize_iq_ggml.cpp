// The codebook quantizers (src/quant/quantize_iq*.cpp, detail::iq_quantizer) against ggml itself:
// for iq3_xxs, iq3_s, iq2_xxs, iq2_xs, iq2_s, iq1_s and iq1_m, the bytes of ggml_quantize_chunk
// (the library from $MINFER_LLAMA_LIB, see tests/support/llama_ref) and ours must be equal, with
// and without importance weights (where ggml accepts none), on rows of varied heavy-tailed data.
//
// ggml aborts the process on some inputs (a grid search left without a candidate: huge values
// whose squares overflow). So ggml runs in a forked child; when it dies, each row is run alone to
// find the first one it dies on, and our quantizer must report exactly that row (and agree on the
// bytes of the rows before it).
//
// Tests that need the library skip loudly when none is named and fail when one is named but
// unusable. The thread test needs no library.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/gguf/types.hpp"
#include "quantize_kernels.hpp"

namespace {

namespace gguf = minfer::gguf;
namespace lr = minfer::llama_ref;
namespace detail = minfer::quant::detail;
using gguf::tensor_type;

const tensor_type codebook_types[] = {tensor_type::iq3_xxs, tensor_type::iq3_s, tensor_type::iq2_xxs,
                                      tensor_type::iq2_xs,  tensor_type::iq2_s, tensor_type::iq1_s,
                                      tensor_type::iq1_m};

std::string name_of(tensor_type t) { return std::string(gguf::to_string(t)); }
std::size_t row_bytes(tensor_type t, std::int64_t n_per_row) {
    const gguf::type_traits* tr = gguf::traits(t);
    return static_cast<std::size_t>(n_per_row) / tr->block_elems * tr->block_bytes;
}

class WithGgml : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        lib = lr::llama_lib::require(lr::part::quantize_chunk, why);
        if (lib != nullptr) return;
        if (lr::llama_lib::configured()) FAIL() << why;
        MINFER_SKIP_REFERENCE(why);
    }
    const lr::llama_lib* lib = nullptr;
};

// ---- inputs ------------------------------------------------------------------------------------

enum class shape {
    gaussian,
    student_t,   // 3 degrees of freedom: heavy tails
    outliers,    // gaussian with a few values 20-100 sigma out
    zeros,
    constant,
    tiny,        // magnitudes near 1e-30 (below the groups' epsilons, or not)
    dominant,    // one value dwarfs the rest of its row
    ties,        // few distinct values: equal values straddle the iq1 cut points
    sparse,      // mostly zero, whole groups of zeros
    mixed_scale, // each group on its own scale, 1e-6 to 1e6
    huge,        // magnitudes near 1e30: squares overflow (ggml asserts on many)
};
const shape all_shapes[] = {shape::gaussian, shape::student_t, shape::outliers, shape::zeros, shape::constant, shape::tiny,
                            shape::dominant, shape::ties, shape::sparse, shape::mixed_scale, shape::huge};

std::vector<float> make_rows(shape s, std::int64_t n_rows, std::int64_t n_per_row, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::student_t_distribution<float> student(3.0f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const auto n = static_cast<std::size_t>(n_rows * n_per_row);
    std::vector<float> v(n);
    switch (s) {
        case shape::gaussian:
            for (auto& x : v) x = normal(rng) * 0.02f;
            break;
        case shape::student_t:
            for (auto& x : v) x = student(rng);
            break;
        case shape::outliers:
            for (auto& x : v) x = normal(rng);
            for (std::size_t i = 0; i < n / 64 + 1; ++i) v[rng() % n] = (unit(rng) < 0.5f ? -1.0f : 1.0f) * (20.0f + 80.0f * unit(rng));
            break;
        case shape::zeros:
            break;
        case shape::constant: {
            const float c = normal(rng);
            for (auto& x : v) x = c;
            break;
        }
        case shape::tiny:
            for (auto& x : v) x = normal(rng) * 1e-30f;
            break;
        case shape::dominant:
            for (auto& x : v) x = normal(rng) * 1e-3f;
            for (std::int64_t r = 0; r < n_rows; ++r) v[static_cast<std::size_t>(r * n_per_row) + rng() % static_cast<std::size_t>(n_per_row)] = 1e4f;
            break;
        case shape::ties:
            for (auto& x : v) x = std::round(normal(rng) * 2.0f) * 0.5f;
            break;
        case shape::sparse:
            for (auto& x : v) x = unit(rng) < 0.05f ? student(rng) : 0.0f;
            for (std::size_t g = 0; g + 32 <= n; g += 32)
                if (rng() % 4 == 0) std::fill(v.begin() + static_cast<std::ptrdiff_t>(g), v.begin() + static_cast<std::ptrdiff_t>(g + 32), 0.0f);
            break;
        case shape::mixed_scale:
            for (std::size_t g = 0; g < n; g += 16) {
                const float scale = std::pow(10.0f, -6.0f + 12.0f * unit(rng));
                for (std::size_t i = g; i < g + 16 && i < n; ++i) v[i] = normal(rng) * scale;
            }
            break;
        case shape::huge:
            for (auto& x : v) x = normal(rng) * 1e30f;
            break;
    }
    return v;
}

enum class weights { none, random, with_zeros, ones };
const weights all_weights[] = {weights::none, weights::random, weights::with_zeros, weights::ones};

std::vector<float> make_importance(weights w, std::int64_t n_per_row, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::exponential_distribution<float> expo(1.0f);
    std::vector<float> v(static_cast<std::size_t>(n_per_row), 1.0f);
    if (w == weights::random || w == weights::with_zeros)
        for (auto& x : v) x = expo(rng) + 1e-3f;
    if (w == weights::with_zeros)
        for (auto& x : v)
            if (rng() % 5 == 0) x = 0.0f;
    return v;
}

// ---- ggml in a child process ---------------------------------------------------------------------

// Runs ggml_quantize_chunk on rows [first, first + n) in a forked child writing into `shared`
// (MAP_SHARED). false when the child died (an assert) or failed otherwise.
bool ggml_in_child(const lr::llama_lib& lib, tensor_type t, const float* src, std::int64_t first, std::int64_t n,
                   std::int64_t n_per_row, const float* imatrix, std::uint8_t* shared) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        const int devnull = ::open("/dev/null", O_WRONLY);  // ggml's "Oops" and abort messages
        if (devnull >= 0) {
            ::dup2(devnull, 1);
            ::dup2(devnull, 2);
        }
        const std::size_t rb = row_bytes(t, n_per_row);
        const std::size_t written = lib.api().ggml_quantize_chunk(static_cast<int>(t), src + first * n_per_row,
                                                                  shared + static_cast<std::size_t>(first) * rb, 0, n,
                                                                  n_per_row, imatrix);
        ::_exit(written == rb * static_cast<std::size_t>(n) ? 0 : 3);
    }
    if (pid < 0) return false;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct ggml_result {
    std::vector<std::uint8_t> bytes;
    std::int64_t failed_row = -1;  // the first row ggml dies on, -1 if none
};

ggml_result ggml_quantize(const lr::llama_lib& lib, tensor_type t, const std::vector<float>& src, std::int64_t n_per_row,
                          const float* imatrix) {
    const std::int64_t n_rows = static_cast<std::int64_t>(src.size()) / n_per_row;
    const std::size_t total = row_bytes(t, n_per_row) * static_cast<std::size_t>(n_rows);
    void* map = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(map, MAP_FAILED);
    auto* shared = static_cast<std::uint8_t*>(map);
    ggml_result r;
    if (!ggml_in_child(lib, t, src.data(), 0, n_rows, n_per_row, imatrix, shared)) {
        for (std::int64_t row = 0; row < n_rows; ++row) {
            if (!ggml_in_child(lib, t, src.data(), row, 1, n_per_row, imatrix, shared)) {
                r.failed_row = row;
                break;
            }
        }
        EXPECT_GE(r.failed_row, 0) << "ggml died on the rows together but on none alone";
    }
    r.bytes.assign(shared, shared + total);
    ::munmap(map, total);
    return r;
}

// Builds ggml's tables in this process (ggml_quantize_chunk initialises them on first use), so that
// the forked children do not each rebuild them.
void warm_up(const lr::llama_lib& lib, tensor_type t) {
    const std::vector<float> row = make_rows(shape::gaussian, 1, 256, 1);
    const std::vector<float> ones(256, 1.0f);
    std::vector<std::uint8_t> out(row_bytes(t, 256));
    lib.api().ggml_quantize_chunk(static_cast<int>(t), row.data(), out.data(), 0, 1, 256, ones.data());
}

// ---- the comparison ------------------------------------------------------------------------------

struct case_stats {
    int compared_rows = 0;
    int ggml_failures = 0;
};

// Quantizes `src` with both and checks: same failing row (or none), same bytes before it.
void compare_case(const lr::llama_lib& lib, tensor_type t, const std::vector<float>& src, std::int64_t n_per_row,
                  const float* imatrix, const std::string& what, case_stats& stats) {
    const std::int64_t n_rows = static_cast<std::int64_t>(src.size()) / n_per_row;
    const ggml_result want = ggml_quantize(lib, t, src, n_per_row, imatrix);
    const detail::row_quantizer ours = detail::iq_quantizer(t);
    ASSERT_NE(ours, nullptr) << name_of(t);
    std::vector<std::uint8_t> got(want.bytes.size(), 0xcd);
    const std::int64_t failed = ours(src.data(), got.data(), n_rows, n_per_row, imatrix);
    EXPECT_EQ(failed, want.failed_row) << what << ": the first row on which ggml asserts";
    const std::int64_t good_rows = want.failed_row < 0 ? n_rows : std::min(want.failed_row, failed < 0 ? n_rows : failed);
    const std::size_t good_bytes = row_bytes(t, n_per_row) * static_cast<std::size_t>(good_rows);
    const auto mismatch = std::mismatch(want.bytes.begin(), want.bytes.begin() + static_cast<std::ptrdiff_t>(good_bytes), got.begin());
    if (mismatch.first != want.bytes.begin() + static_cast<std::ptrdiff_t>(good_bytes)) {
        const auto offset = static_cast<std::size_t>(mismatch.first - want.bytes.begin());
        const std::size_t bb = gguf::traits(t)->block_bytes;
        const std::size_t blocks_per_row = row_bytes(t, n_per_row) / bb;
        ADD_FAILURE() << what << ": bytes differ first in block " << offset / bb << " (row " << offset / bb / blocks_per_row
                      << ", block " << offset / bb % blocks_per_row << " of the row), byte " << offset % bb
                      << " of the block: ggml " << int{*mismatch.first} << ", ours " << int{*mismatch.second};
    }
    stats.compared_rows += static_cast<int>(good_rows);
    stats.ggml_failures += want.failed_row >= 0 ? 1 : 0;
}

std::string shape_name(shape s) {
    static const char* names[] = {"gaussian", "student_t", "outliers", "zeros",       "constant", "tiny",
                                  "dominant", "ties",      "sparse",   "mixed_scale", "huge"};
    return names[static_cast<int>(s)];
}
std::string weights_name(weights w) {
    static const char* names[] = {"no importance", "random importance", "importance with zeros", "unit importance"};
    return names[static_cast<int>(w)];
}

class IqAgainstGgml : public WithGgml, public ::testing::WithParamInterface<tensor_type> {};

TEST_P(IqAgainstGgml, BytesEqualGgmlQuantizeChunk) {
    const tensor_type t = GetParam();
    warm_up(*lib, t);
    const bool needs_importance = lib->api().ggml_quantize_requires_imatrix(static_cast<int>(t));
    case_stats stats;
    std::uint32_t seed = 1000u * static_cast<std::uint32_t>(t);
    struct size_case {
        std::int64_t n_per_row;
        std::int64_t n_rows;
    };
    for (const size_case sc : {size_case{256, 8}, size_case{512, 4}, size_case{4096, 1}}) {
        for (const shape s : all_shapes) {
            for (const weights w : all_weights) {
                if (w == weights::none && needs_importance) continue;
                const std::vector<float> src = make_rows(s, sc.n_rows, sc.n_per_row, ++seed);
                const std::vector<float> imp = make_importance(w, sc.n_per_row, ++seed);
                const std::string what = name_of(t) + ", " + shape_name(s) + ", " + weights_name(w) + ", " +
                                         std::to_string(sc.n_rows) + " rows of " + std::to_string(sc.n_per_row);
                compare_case(*lib, t, src, sc.n_per_row, w == weights::none ? nullptr : imp.data(), what, stats);
                if (HasFatalFailure()) return;
            }
        }
    }
    // Rows mixing the shapes: a huge row between ordinary ones.
    {
        std::vector<float> src = make_rows(shape::student_t, 5, 256, ++seed);
        const std::vector<float> huge = make_rows(shape::huge, 1, 256, ++seed);
        std::copy(huge.begin(), huge.end(), src.begin() + 2 * 256);
        const std::vector<float> imp = make_importance(weights::random, 256, ++seed);
        compare_case(*lib, t, src, 256, imp.data(), name_of(t) + ", a huge row among student_t rows", stats);
    }
    std::printf("[ %s ] %d rows equal to ggml's; %d cases on which ggml asserts, found the same row\n", name_of(t).c_str(),
                stats.compared_rows, stats.ggml_failures);
}

INSTANTIATE_TEST_SUITE_P(CodebookTypes, IqAgainstGgml, ::testing::ValuesIn(codebook_types),
                         [](const ::testing::TestParamInfo<tensor_type>& param) { return name_of(param.param); });

// The failure path, pinned: a row of values near 1e30 (their squares overflow, every weight is
// infinite) makes ggml assert for iq3_xxs, iq3_s, iq2_xs and iq2_s (iq2_xxs, iq1_s and iq1_m give
// up on the groups instead); ours names that row instead of crashing, and agrees where ggml does not.
TEST_F(WithGgml, HugeRowFailsOnTheRowGgmlAssertsOn) {
    for (const tensor_type t : codebook_types) {
        warm_up(*lib, t);
        std::vector<float> src = make_rows(shape::gaussian, 4, 256, 7);
        const std::vector<float> huge = make_rows(shape::huge, 1, 256, 8);
        std::copy(huge.begin(), huge.end(), src.begin() + 3 * 256);
        const std::vector<float> imp = make_importance(weights::random, 256, 9);
        const ggml_result want = ggml_quantize(*lib, t, src, 256, imp.data());
        std::vector<std::uint8_t> got(want.bytes.size());
        const std::int64_t failed = detail::iq_quantizer(t)(src.data(), got.data(), 4, 256, imp.data());
        EXPECT_EQ(failed, want.failed_row) << name_of(t);
        const bool asserts = t != tensor_type::iq2_xxs && t != tensor_type::iq1_s && t != tensor_type::iq1_m;
        EXPECT_EQ(failed, asserts ? 3 : -1) << name_of(t);
        if (!asserts) {
            EXPECT_EQ(got, want.bytes) << name_of(t);
        }
        std::printf("[ %s ] ggml on a 1e30 row: %s\n", name_of(t).c_str(), want.failed_row >= 0 ? "asserts" : "quantizes it");
    }
}

// Where ggml requires importance weights, a null imatrix is its assert: the first row fails.
TEST_F(WithGgml, MissingImportanceFailsWhereGgmlRequiresIt) {
    for (const tensor_type t : codebook_types) {
        const bool required = lib->api().ggml_quantize_requires_imatrix(static_cast<int>(t));
        const std::vector<float> src = make_rows(shape::gaussian, 2, 256, 11);
        std::vector<std::uint8_t> got(row_bytes(t, 256) * 2);
        EXPECT_EQ(detail::iq_quantizer(t)(src.data(), got.data(), 2, 256, nullptr), required ? 0 : -1) << name_of(t);
        EXPECT_EQ(detail::iq_quantizer(t)(src.data(), got.data(), 0, 256, nullptr), -1) << name_of(t) << ": no rows";
    }
}

// No library needed: two threads quantize at once, the tables built concurrently on first use
// (each ctest run is a fresh process), and both get the bytes one thread gets afterwards.
TEST(IqQuantizeThreads, ConcurrentFirstUseIsDeterministic) {
    const std::vector<float> src = make_rows(shape::student_t, 8, 512, 21);
    const std::vector<float> imp = make_importance(weights::random, 512, 22);
    for (const tensor_type t : codebook_types) {
        const detail::row_quantizer q = detail::iq_quantizer(t);
        ASSERT_NE(q, nullptr) << name_of(t);
        const std::size_t size = row_bytes(t, 512) * 8;
        std::vector<std::uint8_t> a(size), b(size), c(size);
        std::int64_t ra = 0, rb = 0;
        std::thread ta([&] { ra = q(src.data(), a.data(), 8, 512, imp.data()); });
        std::thread tb([&] { rb = q(src.data(), b.data(), 8, 512, imp.data()); });
        ta.join();
        tb.join();
        const std::int64_t rc = q(src.data(), c.data(), 8, 512, imp.data());
        EXPECT_EQ(ra, -1) << name_of(t);
        EXPECT_EQ(rb, -1) << name_of(t);
        EXPECT_EQ(rc, -1) << name_of(t);
        EXPECT_EQ(a, c) << name_of(t);
        EXPECT_EQ(b, c) << name_of(t);
    }
}

TEST(IqQuantizeThreads, OnlyCodebookTypesHaveAnIqQuantizer) {
    for (const tensor_type t : codebook_types) EXPECT_NE(detail::iq_quantizer(t), nullptr) << name_of(t);
    for (const tensor_type t : {tensor_type::f32, tensor_type::q4_0, tensor_type::q4_k, tensor_type::iq4_nl, tensor_type::iq4_xs})
        EXPECT_EQ(detail::iq_quantizer(t), nullptr) << name_of(t);
}

}  // namespace
