// The C API's writing side (libminfer.so): minfer_quantize against ggml_quantize_chunk byte for byte
// on every type ggml quantizes, and its refusals; the writer (minfer_writer_*) read back by minfer and
// by ggml, byte-identical with ggml's own writer (gguf_init_empty / gguf_set_* / gguf_add_tensor /
// gguf_write_to_file), and its failures (a callback, bad arguments and handles, an existing path, a
// full disk, a kill) leaving nothing at the path; the verdict of a file (minfer_gguf_check_file,
// minfer_gguf_open) with the error out-parameter.
//
// The ggml comparisons use llama.cpp's libggml-base.so through tests/support/llama_ref: skipped
// loudly without it, failed under MINFER_REQUIRE_REFERENCE=1.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer.h"
#include "scratch_dir.hpp"

namespace fs = std::filesystem;
namespace lr = minfer::llama_ref;

namespace {

// ---- files ----

// A fresh directory, removed with everything in it (tests/support/scratch_dir.hpp).
class temp_dir : public minfer::test_support::temp_dir {
public:
    temp_dir() : minfer::test_support::temp_dir("capi_write") {}
};

// The names in a directory, sorted: what a failed write must leave unchanged.
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::uint8_t* data, std::size_t n) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
}

minfer_error last_error() {
    minfer_error e;
    minfer_last_error(&e);
    return e;
}

std::vector<float> gaussian(std::size_t n, std::uint64_t seed, float scale = 1.f) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = g(rng);
    return v;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng() | 1);  // never 0: no byte is a hole
    return v;
}

// ---- minfer_quantize against ggml_quantize_chunk ----

constexpr std::int64_t quant_rows = 3;
constexpr std::int64_t quant_per_row = 512;  // a multiple of every block (32 … 256)

// What ggml_quantize_chunk does for one type on the same rows, without and with importance weights:
// whether it returned (it aborts on a type it does not quantize, and on missing weights where it
// needs them), its result and its bytes. Asked in a child process, which hands the bytes back in
// shared memory; one child runs both calls when it can, since ggml's codebook types build their
// tables on first use in the process (seconds each).
struct ggml_quantized {
    bool returned[2] = {false, false};  // [0] without, [1] with importance weights
    std::size_t size[2] = {0, 0};
    std::vector<std::uint8_t> bytes[2];
};

class shared_memory {
public:
    explicit shared_memory(std::size_t n) : n_(n) {
        p_ = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    }
    ~shared_memory() { ::munmap(p_, n_); }
    shared_memory(const shared_memory&) = delete;
    shared_memory& operator=(const shared_memory&) = delete;
    std::uint8_t* data() const { return static_cast<std::uint8_t*>(p_); }

private:
    void* p_;
    std::size_t n_;
};

ggml_quantized quantize_with_ggml(const lr::llama_api& api, int type, const float* src, const float* imatrix,
                                  std::size_t max_bytes) {
    // Per call: a u64 "returned" mark, the u64 result, then max_bytes of output.
    const std::size_t slot = 16 + max_bytes;
    shared_memory shared(2 * slot);
    // The call ggml is expected to refuse (without weights where it requires them) goes last.
    const int first = api.ggml_quantize_requires_imatrix(type) ? 1 : 0;
    auto run_from = [&](int start) {
        const pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) {
            const int null_fd = ::open("/dev/null", O_WRONLY);
            if (null_fd >= 0) {
                ::dup2(null_fd, 1);
                ::dup2(null_fd, 2);
            }
            ::setenv("GGML_NO_BACKTRACE", "1", 1);  // ggml's abort would otherwise attach gdb
            for (int k = start; k < 2; ++k) {
                const int call = k == 0 ? first : 1 - first;
                std::uint8_t* at = shared.data() + static_cast<std::size_t>(call) * slot;
                const std::uint64_t n = api.ggml_quantize_chunk(type, src, at + 16, 0, quant_rows, quant_per_row,
                                                                call == 1 ? imatrix : nullptr);
                const std::uint64_t done = 1;
                std::memcpy(at + 8, &n, 8);
                std::memcpy(at, &done, 8);
            }
            ::_exit(0);
        }
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    };
    run_from(0);
    auto returned = [&](int call) {
        std::uint64_t done = 0;
        std::memcpy(&done, shared.data() + static_cast<std::size_t>(call) * slot, 8);
        return done == 1;
    };
    if (!returned(first)) run_from(1);  // the first call aborted: the second gets a child of its own
    ggml_quantized out;
    for (int call = 0; call < 2; ++call) {
        if (!returned(call)) continue;
        const std::uint8_t* at = shared.data() + static_cast<std::size_t>(call) * slot;
        std::uint64_t n = 0;
        std::memcpy(&n, at + 8, 8);
        out.returned[call] = true;
        out.size[call] = static_cast<std::size_t>(n);
        out.bytes[call].assign(at + 16, at + 16 + std::min<std::uint64_t>(n, max_bytes));
    }
    return out;
}

TEST(CApiQuantize, EqualsGgmlQuantizeChunkOnEveryTypeGgmlQuantizes) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, lr::part::quantize_chunk | lr::part::type_count | lr::part::gguf_read |
                                        lr::part::log | lr::part::ggml_types);
    const lr::llama_api& api = lib->api();
    const std::uint32_t ggml_types = lib->type_count();
    const std::size_t n_values = static_cast<std::size_t>(quant_rows * quant_per_row);
    const std::vector<float> imatrix = [] {
        std::vector<float> w = gaussian(static_cast<std::size_t>(quant_per_row), 7, 1.5f);
        for (float& x : w) x = std::exp(x);  // positive, heavy-tailed: like a real importance matrix
        return w;
    }();
    int compared = 0, types = 0;
    std::string ggml_list;
    for (std::uint32_t id = 0; id < ggml_types; ++id) {
        const int type = static_cast<int>(id);
        SCOPED_TRACE("type " + std::to_string(id) + " " + (minfer_ggml_type_name(type) ? minfer_ggml_type_name(type) : "?"));
        const std::vector<float> src = gaussian(n_values, 1000 + id, id % 2 ? 0.02f : 1.f);
        EXPECT_EQ(minfer_quantize_requires_imatrix(type), api.ggml_quantize_requires_imatrix(type));
        const ggml_quantized theirs =
            quantize_with_ggml(api, type, src.data(), imatrix.data(), n_values * sizeof(float));  // f32 writes the most
        const bool ggml_any = theirs.returned[0] || theirs.returned[1];
        EXPECT_EQ(minfer_quantize_dst_size(type, quant_rows, quant_per_row) > 0, ggml_any)
            << "minfer and ggml disagree on whether the type can be quantized";
        if (ggml_any) {
            ++types;
            ggml_list += std::string(" ") + api.ggml_type_name(type);
        }
        for (int call = 0; call < 2; ++call) {
            const char* how = call == 1 ? "with importance weights" : "without importance weights";
            const std::size_t need = minfer_quantize_dst_size(type, quant_rows, quant_per_row);
            std::vector<std::uint8_t> ours(std::max<std::size_t>(need, 1), 0xA5);
            minfer_error err{};
            const std::int64_t wrote = minfer_quantize(type, src.data(), quant_rows, quant_per_row,
                                                       call == 1 ? imatrix.data() : nullptr, ours.data(), ours.size(), &err);
            if (!theirs.returned[call]) {
                EXPECT_EQ(wrote, -1) << how << " ggml refuses the type";
                EXPECT_NE(err.code, 0);
                continue;
            }
            ASSERT_EQ(wrote, static_cast<std::int64_t>(need)) << how << ": " << err.message;
            EXPECT_EQ(err.code, 0);
            EXPECT_STREQ(err.name, "ok");
            ASSERT_EQ(theirs.size[call], need) << how;
            EXPECT_TRUE(ours == theirs.bytes[call]) << how << ": bytes differ";
            ++compared;
        }
    }
    std::printf("capi quantize: %d types ggml quantizes (%s), %d comparisons byte for byte\n", types,
                ggml_list.c_str() + (ggml_list.empty() ? 0 : 1), compared);
    EXPECT_GE(types, 25);
}

TEST(CApiQuantize, RefusalsByCodeLeaveDstUntouched) {
    const std::vector<float> src = gaussian(4 * 256, 3);
    const std::vector<float> imatrix(256, 1.f);
    std::vector<std::uint8_t> dst(4096, 0xCD);
    const std::vector<std::uint8_t> untouched = dst;
    minfer_error err{};
    auto refused = [&](int type, const float* s, std::int64_t rows, std::int64_t per_row, const float* imat, void* d,
                       std::size_t size, const char* name) {
        SCOPED_TRACE(name);
        minfer_clear_error();
        EXPECT_EQ(minfer_quantize(type, s, rows, per_row, imat, d, size, &err), -1);
        EXPECT_STREQ(err.name, name);
        EXPECT_STREQ(minfer_last_error_name(), name);
        EXPECT_EQ(err.code, minfer_last_error_code());
        EXPECT_EQ(std::string(err.message), minfer_last_error_message());
        EXPECT_TRUE(dst == untouched) << "dst was written on error";
    };
    refused(MINFER_GGML_TYPE_Q4_0, nullptr, 4, 256, nullptr, dst.data(), dst.size(), "null_argument");
    EXPECT_EQ(err.code, MINFER_ERROR_NULL_ARGUMENT);
    EXPECT_STREQ(err.domain, "capi");
    refused(MINFER_GGML_TYPE_Q4_0, src.data(), 4, 256, nullptr, nullptr, dst.size(), "null_argument");
    refused(MINFER_GGML_TYPE_Q4_0, src.data(), 8, 128, nullptr, dst.data(), 10, "buffer_size_mismatch");
    EXPECT_EQ(err.expected, 8u * 4 * 18);  // 8 rows of 4 blocks of 18 bytes
    EXPECT_EQ(err.found, 10u);
    EXPECT_STREQ(err.domain, "loader");
    refused(MINFER_GGML_TYPE_Q4_0, src.data(), 4, 100, nullptr, dst.data(), dst.size(), "not_block_multiple");
    EXPECT_EQ(err.expected, 32u);
    EXPECT_EQ(err.found, 100u);
    refused(MINFER_GGML_TYPE_Q4_K, src.data(), 4, 0, nullptr, dst.data(), dst.size(), "not_block_multiple");
    refused(MINFER_GGML_TYPE_Q4_K, src.data(), 4, -256, nullptr, dst.data(), dst.size(), "not_block_multiple");
    refused(MINFER_GGML_TYPE_Q4_0, src.data(), -1, 256, nullptr, dst.data(), dst.size(), "buffer_size_mismatch");
    refused(MINFER_GGML_TYPE_IQ2_XXS, src.data(), 4, 256, nullptr, dst.data(), dst.size(), "importance_required");
    EXPECT_STREQ(err.domain, "quant");
    EXPECT_EQ(err.found, static_cast<std::uint64_t>(MINFER_GGML_TYPE_IQ2_XXS));
    refused(MINFER_GGML_TYPE_IQ1_S, src.data(), 4, 256, nullptr, dst.data(), dst.size(), "importance_required");
    for (const int type : {static_cast<int>(MINFER_GGML_TYPE_Q8_1), static_cast<int>(MINFER_GGML_TYPE_Q8_K),
                           static_cast<int>(MINFER_GGML_TYPE_I32), static_cast<int>(MINFER_GGML_TYPE_F64), 4, 43, 1000, -1})
        refused(type, src.data(), 4, 256, imatrix.data(), dst.data(), dst.size(), "type_not_quantizable");
    refused(MINFER_GGML_TYPE_F32, src.data(), INT64_MAX / 2, 256, nullptr, dst.data(), dst.size(), "size_overflow");
    refused(MINFER_GGML_TYPE_Q4_0, src.data(), INT64_MAX / 256 + 1, 256, nullptr, dst.data(), dst.size(), "size_overflow");

    // The imatrix requirement is ggml's list, and a type that needs one is quantized with one.
    EXPECT_TRUE(minfer_quantize_requires_imatrix(MINFER_GGML_TYPE_IQ2_XXS));
    EXPECT_TRUE(minfer_quantize_requires_imatrix(MINFER_GGML_TYPE_IQ2_XS));
    EXPECT_TRUE(minfer_quantize_requires_imatrix(MINFER_GGML_TYPE_IQ1_S));
    EXPECT_FALSE(minfer_quantize_requires_imatrix(MINFER_GGML_TYPE_Q4_K));
    EXPECT_FALSE(minfer_quantize_requires_imatrix(-1));
    EXPECT_FALSE(minfer_quantize_requires_imatrix(1000));
    const std::size_t need = minfer_quantize_dst_size(MINFER_GGML_TYPE_IQ2_XXS, 4, 256);
    EXPECT_EQ(need, 4u * 66);
    EXPECT_EQ(minfer_quantize(MINFER_GGML_TYPE_IQ2_XXS, src.data(), 4, 256, imatrix.data(), dst.data(), dst.size(), &err),
              static_cast<std::int64_t>(need));
    EXPECT_EQ(err.code, 0);
    EXPECT_TRUE(std::equal(dst.begin() + static_cast<std::ptrdiff_t>(need), dst.end(), untouched.begin() + static_cast<std::ptrdiff_t>(need)))
        << "bytes past the output were written";

    // Zero rows: nothing to write, not an error. err may be NULL.
    EXPECT_EQ(minfer_quantize(MINFER_GGML_TYPE_Q4_0, src.data(), 0, 256, nullptr, dst.data(), 0, nullptr), 0);
    EXPECT_EQ(minfer_quantize_dst_size(MINFER_GGML_TYPE_Q4_0, 0, 256), 0u);

    // minfer_quantize_dst_size: 0 and the code.
    EXPECT_EQ(minfer_quantize_dst_size(MINFER_GGML_TYPE_Q8_0, 2, 64), 2u * 2 * 34);
    EXPECT_EQ(minfer_quantize_dst_size(MINFER_GGML_TYPE_F16, 3, 5), 30u);
    EXPECT_EQ(minfer_quantize_dst_size(MINFER_GGML_TYPE_Q8_0, 2, 48), 0u);
    EXPECT_STREQ(minfer_last_error_name(), "not_block_multiple");
    EXPECT_EQ(minfer_quantize_dst_size(MINFER_GGML_TYPE_Q8_1, 2, 64), 0u);
    EXPECT_STREQ(minfer_last_error_name(), "type_not_quantizable");
    EXPECT_EQ(minfer_quantize_dst_size(MINFER_GGML_TYPE_Q8_0, -2, 64), 0u);
    EXPECT_STREQ(minfer_last_error_name(), "buffer_size_mismatch");
    EXPECT_EQ(minfer_quantize_dst_size(MINFER_GGML_TYPE_F32, INT64_MAX, 1), 0u);
    EXPECT_STREQ(minfer_last_error_name(), "size_overflow");
}

// ---- the content of a model, written by minfer's C writer and by ggml's ----

constexpr std::array<std::size_t, 13> gguf_type_size{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

struct kv_item {
    std::string key;
    int type = 0;                     // MINFER_GGUF_TYPE_*; ARRAY for arrays
    int elem = -1;                    // arrays: the element type
    std::vector<std::uint8_t> bytes;  // a fixed-size scalar or the array's elements
    std::vector<std::string> strings; // a string scalar (one) or a string array
    std::size_t n = 1;                // elements of an array
};

struct tensor_item {
    std::string name;
    int type = 0;
    std::vector<std::int64_t> ne;  // n_dims = ne.size(), ggml_n_dims (no trailing 1)
    std::vector<std::uint8_t> data;
    bool from_callback = false;
};

struct content {
    std::vector<kv_item> kvs;
    std::vector<tensor_item> tensors;
};

template <class T>
kv_item scalar(std::string key, int type, T v) {
    kv_item k;
    k.key = std::move(key);
    k.type = type;
    k.bytes.resize(sizeof v);
    std::memcpy(k.bytes.data(), &v, sizeof v);
    return k;
}

kv_item string_kv(std::string key, std::string v) {
    kv_item k;
    k.key = std::move(key);
    k.type = MINFER_GGUF_TYPE_STRING;
    k.strings.push_back(std::move(v));
    return k;
}

kv_item array_kv(std::string key, int elem, std::size_t n, std::uint64_t seed) {
    kv_item k;
    k.key = std::move(key);
    k.type = MINFER_GGUF_TYPE_ARRAY;
    k.elem = elem;
    k.n = n;
    k.bytes = random_bytes(n * gguf_type_size[static_cast<std::size_t>(elem)], seed);
    if (elem == MINFER_GGUF_TYPE_BOOL)
        for (auto& b : k.bytes) b &= 1;  // 0 or 1
    if (elem == MINFER_GGUF_TYPE_FLOAT32 || elem == MINFER_GGUF_TYPE_FLOAT64) {
        // Finite values, so that a comparison by value would also hold.
        for (std::size_t i = 0; i < n; ++i) {
            const double v = static_cast<double>(i) * 0.5 - 1.25;
            if (elem == MINFER_GGUF_TYPE_FLOAT32) {
                const float f = static_cast<float>(v);
                std::memcpy(k.bytes.data() + i * 4, &f, 4);
            } else {
                std::memcpy(k.bytes.data() + i * 8, &v, 8);
            }
        }
    }
    return k;
}

kv_item string_array_kv(std::string key, std::vector<std::string> items) {
    kv_item k;
    k.key = std::move(key);
    k.type = MINFER_GGUF_TYPE_ARRAY;
    k.elem = MINFER_GGUF_TYPE_STRING;
    k.n = items.size();
    k.strings = std::move(items);
    return k;
}

std::size_t tensor_bytes(int type, const std::vector<std::int64_t>& ne) {
    const std::size_t need = minfer_dequantize_src_size(type, ne.empty() ? 1 : ne[0]);
    std::size_t rows = 1;
    for (std::size_t d = 1; d < ne.size(); ++d) rows *= static_cast<std::size_t>(ne[d]);
    return need * rows;
}

tensor_item tensor(std::string name, int type, std::vector<std::int64_t> ne, bool from_callback, std::uint64_t seed) {
    tensor_item t;
    t.name = std::move(name);
    t.type = type;
    t.ne = std::move(ne);
    t.from_callback = from_callback;
    t.data = random_bytes(tensor_bytes(type, t.ne), seed);
    return t;
}

// Every kv type (scalars, strings, arrays of every fixed type, of strings, empty), and tensors of
// several types, shapes and sizes (one of 8 MiB: several callback chunks), half from callbacks.
content sample_content(bool with_tensors = true) {
    content c;
    c.kvs.push_back(string_kv("general.architecture", "llama"));
    c.kvs.push_back(scalar<std::uint8_t>("test.u8", MINFER_GGUF_TYPE_UINT8, 200));
    c.kvs.push_back(scalar<std::int8_t>("test.i8", MINFER_GGUF_TYPE_INT8, -100));
    c.kvs.push_back(scalar<std::uint16_t>("test.u16", MINFER_GGUF_TYPE_UINT16, 60000));
    c.kvs.push_back(scalar<std::int16_t>("test.i16", MINFER_GGUF_TYPE_INT16, -30000));
    c.kvs.push_back(scalar<std::uint32_t>("test.u32", MINFER_GGUF_TYPE_UINT32, 4000000000u));
    c.kvs.push_back(scalar<std::int32_t>("test.i32", MINFER_GGUF_TYPE_INT32, -2000000000));
    c.kvs.push_back(scalar<float>("test.f32", MINFER_GGUF_TYPE_FLOAT32, 3.25f));
    c.kvs.push_back(scalar<std::uint8_t>("test.bool", MINFER_GGUF_TYPE_BOOL, 1));
    c.kvs.push_back(scalar<std::uint64_t>("test.u64", MINFER_GGUF_TYPE_UINT64, std::uint64_t{1} << 60));
    c.kvs.push_back(scalar<std::int64_t>("test.i64", MINFER_GGUF_TYPE_INT64, -(std::int64_t{1} << 60)));
    c.kvs.push_back(scalar<double>("test.f64", MINFER_GGUF_TYPE_FLOAT64, -2.5e300));
    c.kvs.push_back(string_kv("general.name", "C API writer: h\xc3\xa9llo \xe2\x9c\x93"));
    c.kvs.push_back(string_kv("test.empty_string", ""));
    const int fixed[] = {MINFER_GGUF_TYPE_UINT8,  MINFER_GGUF_TYPE_INT8,    MINFER_GGUF_TYPE_UINT16,
                         MINFER_GGUF_TYPE_INT16,  MINFER_GGUF_TYPE_UINT32,  MINFER_GGUF_TYPE_INT32,
                         MINFER_GGUF_TYPE_FLOAT32, MINFER_GGUF_TYPE_BOOL,   MINFER_GGUF_TYPE_UINT64,
                         MINFER_GGUF_TYPE_INT64,  MINFER_GGUF_TYPE_FLOAT64};
    for (const int t : fixed)
        c.kvs.push_back(array_kv(std::string("test.arr_") + minfer_gguf_type_name(static_cast<minfer_gguf_type>(t)), t,
                                 5 + static_cast<std::size_t>(t), 50 + static_cast<std::uint64_t>(t)));
    c.kvs.push_back(array_kv("test.arr_empty", MINFER_GGUF_TYPE_UINT32, 0, 1));
    c.kvs.push_back(string_array_kv("tokenizer.ggml.tokens", {"<s>", "", "tokens with spaces", "\xc3\xbc", "</s>"}));
    if (!with_tensors) return c;
    c.tensors.push_back(tensor("token_embd.weight", MINFER_GGML_TYPE_F32, {8, 4}, false, 1));
    c.tensors.push_back(tensor("blk.0.attn_q.weight", MINFER_GGML_TYPE_Q4_0, {64, 2}, true, 2));
    c.tensors.push_back(tensor("blk.0.ffn_up.weight", MINFER_GGML_TYPE_Q8_0, {32, 3, 2}, false, 3));
    c.tensors.push_back(tensor("blk.0.odd", MINFER_GGML_TYPE_I32, {5}, true, 4));  // 20 bytes: padding after
    c.tensors.push_back(tensor("blk.0.ffn_down.weight", MINFER_GGML_TYPE_Q4_K, {256, 1, 3}, false, 5));
    c.tensors.push_back(tensor("output_norm.weight", MINFER_GGML_TYPE_F16, {16}, true, 6));
    c.tensors.push_back(tensor("output.weight", MINFER_GGML_TYPE_F32, {1 << 20, 2}, true, 7));  // 8 MiB
    c.tensors.push_back(tensor("blk.0.bf16", MINFER_GGML_TYPE_BF16, {3, 2, 2, 2}, false, 8));
    return c;
}

// The callback of a tensor from callbacks: copies its bytes and records the calls.
struct callback_source {
    const tensor_item* tensor = nullptr;
    std::vector<std::pair<std::uint64_t, std::size_t>> calls;
    int fail_at_call = -1;  // return 7 on this call (0-based); -1: never
};

int read_tensor(void* user, std::uint64_t offset, void* dst, std::size_t n) {
    auto* s = static_cast<callback_source*>(user);
    if (static_cast<int>(s->calls.size()) == s->fail_at_call) return 7;
    s->calls.emplace_back(offset, n);
    if (offset > s->tensor->data.size() || n > s->tensor->data.size() - offset) return 99;
    std::memcpy(dst, s->tensor->data.data() + offset, n);
    return 0;
}

// Fill a C writer with `c`; the callback sources live in `sources` (one per tensor).
void fill_writer(minfer_gguf_writer* w, const content& c, std::vector<callback_source>& sources) {
    for (const kv_item& k : c.kvs) {
        SCOPED_TRACE(k.key);
        const char* key = k.key.c_str();
        auto get = [&k](auto v) {
            std::memcpy(&v, k.bytes.data(), sizeof v);
            return v;
        };
        int rc = -1;
        if (k.type == MINFER_GGUF_TYPE_ARRAY && k.elem == MINFER_GGUF_TYPE_STRING) {
            std::vector<const char*> items;
            for (const std::string& s : k.strings) items.push_back(s.c_str());
            rc = minfer_writer_set_arr_str(w, key, items.data(), items.size());
        } else if (k.type == MINFER_GGUF_TYPE_ARRAY) {
            rc = minfer_writer_set_arr_data(w, key, static_cast<minfer_gguf_type>(k.elem), k.bytes.data(), k.n);
        } else {
            switch (k.type) {
                case MINFER_GGUF_TYPE_UINT8: rc = minfer_writer_set_u8(w, key, get(std::uint8_t{})); break;
                case MINFER_GGUF_TYPE_INT8: rc = minfer_writer_set_i8(w, key, get(std::int8_t{})); break;
                case MINFER_GGUF_TYPE_UINT16: rc = minfer_writer_set_u16(w, key, get(std::uint16_t{})); break;
                case MINFER_GGUF_TYPE_INT16: rc = minfer_writer_set_i16(w, key, get(std::int16_t{})); break;
                case MINFER_GGUF_TYPE_UINT32: rc = minfer_writer_set_u32(w, key, get(std::uint32_t{})); break;
                case MINFER_GGUF_TYPE_INT32: rc = minfer_writer_set_i32(w, key, get(std::int32_t{})); break;
                case MINFER_GGUF_TYPE_FLOAT32: rc = minfer_writer_set_f32(w, key, get(float{})); break;
                case MINFER_GGUF_TYPE_BOOL: rc = minfer_writer_set_bool(w, key, k.bytes[0] != 0); break;
                case MINFER_GGUF_TYPE_STRING: rc = minfer_writer_set_str(w, key, k.strings[0].c_str()); break;
                case MINFER_GGUF_TYPE_UINT64: rc = minfer_writer_set_u64(w, key, get(std::uint64_t{})); break;
                case MINFER_GGUF_TYPE_INT64: rc = minfer_writer_set_i64(w, key, get(std::int64_t{})); break;
                case MINFER_GGUF_TYPE_FLOAT64: rc = minfer_writer_set_f64(w, key, get(double{})); break;
                default: break;
            }
        }
        EXPECT_EQ(rc, 0) << minfer_last_error_message();
    }
    sources.assign(c.tensors.size(), {});
    for (std::size_t i = 0; i < c.tensors.size(); ++i) {
        const tensor_item& t = c.tensors[i];
        SCOPED_TRACE(t.name);
        int rc = -1;
        if (t.from_callback) {
            sources[i].tensor = &t;
            rc = minfer_writer_add_tensor_cb(w, t.name.c_str(), t.type, static_cast<int>(t.ne.size()), t.ne.data(),
                                             t.data.size(), &read_tensor, &sources[i]);
        } else {
            rc = minfer_writer_add_tensor(w, t.name.c_str(), t.type, static_cast<int>(t.ne.size()), t.ne.data(),
                                          t.data.data(), t.data.size());
        }
        EXPECT_EQ(rc, 0) << minfer_last_error_message();
    }
}

// Write `c` with the C writer to `path`; 0 or the code.
int write_with_minfer(const content& c, const fs::path& path, unsigned flags = 0) {
    minfer_gguf_writer* w = minfer_writer_new();
    EXPECT_NE(w, nullptr);
    std::vector<callback_source> sources;
    fill_writer(w, c, sources);
    minfer_error err{};
    const int rc = minfer_writer_write(w, path.c_str(), flags, &err);
    EXPECT_EQ(rc == 0 ? 0 : err.code, rc == 0 ? 0 : minfer_last_error_code());
    minfer_writer_free(w);
    // Every callback tensor was read once, in consecutive chunks of at most 4 MiB.
    for (const callback_source& s : sources) {
        if (s.tensor == nullptr || rc != 0) continue;
        std::uint64_t next = 0;
        for (const auto& [offset, n] : s.calls) {
            EXPECT_EQ(offset, next) << s.tensor->name;
            EXPECT_LE(n, std::size_t{4} << 20);
            next = offset + n;
        }
        EXPECT_EQ(next, s.tensor->data.size()) << s.tensor->name;
    }
    return rc == 0 ? 0 : err.code;
}

// Everything minfer's reader reports for the file at `path` equals `c`.
void expect_minfer_reads(const fs::path& path, const content& c) {
    minfer_error err{};
    minfer_gguf_context* ctx = minfer_gguf_open(path.c_str(), 0, &err);
    ASSERT_NE(ctx, nullptr) << err.message;
    EXPECT_EQ(minfer_gguf_get_version(ctx), 3u);
    EXPECT_EQ(minfer_gguf_get_alignment(ctx), 32u);
    ASSERT_EQ(minfer_gguf_get_n_kv(ctx), static_cast<std::int64_t>(c.kvs.size()));
    for (std::size_t i = 0; i < c.kvs.size(); ++i) {
        const kv_item& k = c.kvs[i];
        SCOPED_TRACE(k.key);
        const auto id = static_cast<std::int64_t>(i);
        EXPECT_STREQ(minfer_gguf_get_key(ctx, id), k.key.c_str());
        ASSERT_EQ(minfer_gguf_get_kv_type(ctx, id), k.type);
        if (k.type == MINFER_GGUF_TYPE_ARRAY) {
            ASSERT_EQ(minfer_gguf_get_arr_type(ctx, id), k.elem);
            ASSERT_EQ(minfer_gguf_get_arr_n(ctx, id), k.n);
            if (k.elem == MINFER_GGUF_TYPE_STRING) {
                for (std::size_t j = 0; j < k.n; ++j) EXPECT_STREQ(minfer_gguf_get_arr_str(ctx, id, j), k.strings[j].c_str());
            } else if (!k.bytes.empty()) {
                const void* data = minfer_gguf_get_arr_data(ctx, id);
                ASSERT_NE(data, nullptr);
                EXPECT_EQ(std::memcmp(data, k.bytes.data(), k.bytes.size()), 0);
            }
        } else if (k.type == MINFER_GGUF_TYPE_STRING) {
            EXPECT_STREQ(minfer_gguf_get_val_str(ctx, id), k.strings[0].c_str());
        } else {
            const void* data = minfer_gguf_get_val_data(ctx, id);
            ASSERT_NE(data, nullptr);
            EXPECT_EQ(std::memcmp(data, k.bytes.data(), k.bytes.size()), 0);
        }
    }
    ASSERT_EQ(minfer_gguf_get_n_tensors(ctx), static_cast<std::int64_t>(c.tensors.size()));
    for (std::size_t i = 0; i < c.tensors.size(); ++i) {
        const tensor_item& t = c.tensors[i];
        SCOPED_TRACE(t.name);
        const auto id = static_cast<std::int64_t>(i);
        EXPECT_STREQ(minfer_gguf_get_tensor_name(ctx, id), t.name.c_str());
        EXPECT_EQ(minfer_gguf_get_tensor_type(ctx, id), t.type);
        std::int64_t ne[4] = {};
        EXPECT_EQ(minfer_tensor_shape(ctx, id, ne), static_cast<int>(t.ne.size()));
        for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(ne[d], d < t.ne.size() ? t.ne[d] : 1);
        ASSERT_EQ(minfer_gguf_get_tensor_size(ctx, id), t.data.size());
        const void* data = minfer_gguf_get_tensor_data(ctx, id);
        ASSERT_NE(data, nullptr);
        EXPECT_EQ(std::memcmp(data, t.data.data(), t.data.size()), 0);
    }
    minfer_gguf_free(ctx);
}

// ---- ggml's writer and reader (the reference) ----

constexpr unsigned ggml_writer_parts = lr::part::gguf_read | lr::part::gguf_tensor_ne | lr::part::gguf_write |
                                       lr::part::ggml_tensors | lr::part::ggml_types | lr::part::log;

// `c` written by ggml: gguf_init_empty, gguf_set_* in order, one ggml tensor per tensor with its
// bytes, gguf_add_tensor, gguf_write_to_file. "" on success, else why.
std::string write_with_ggml(const lr::llama_lib& lib, const content& c, const fs::path& path) {
    const lr::llama_api& a = lib.api();
    lr::gguf_context* ctx = a.gguf_init_empty();
    for (const kv_item& k : c.kvs) {
        const char* key = k.key.c_str();
        auto get = [&k](auto v) {
            std::memcpy(&v, k.bytes.data(), sizeof v);
            return v;
        };
        if (k.type == MINFER_GGUF_TYPE_ARRAY && k.elem == MINFER_GGUF_TYPE_STRING) {
            std::vector<const char*> items;
            for (const std::string& s : k.strings) items.push_back(s.c_str());
            a.gguf_set_arr_str(ctx, key, items.data(), items.size());
        } else if (k.type == MINFER_GGUF_TYPE_ARRAY) {
            a.gguf_set_arr_data(ctx, key, k.elem, k.bytes.data(), k.n);
        } else {
            switch (k.type) {
                case MINFER_GGUF_TYPE_UINT8: a.gguf_set_val_u8(ctx, key, get(std::uint8_t{})); break;
                case MINFER_GGUF_TYPE_INT8: a.gguf_set_val_i8(ctx, key, get(std::int8_t{})); break;
                case MINFER_GGUF_TYPE_UINT16: a.gguf_set_val_u16(ctx, key, get(std::uint16_t{})); break;
                case MINFER_GGUF_TYPE_INT16: a.gguf_set_val_i16(ctx, key, get(std::int16_t{})); break;
                case MINFER_GGUF_TYPE_UINT32: a.gguf_set_val_u32(ctx, key, get(std::uint32_t{})); break;
                case MINFER_GGUF_TYPE_INT32: a.gguf_set_val_i32(ctx, key, get(std::int32_t{})); break;
                case MINFER_GGUF_TYPE_FLOAT32: a.gguf_set_val_f32(ctx, key, get(float{})); break;
                case MINFER_GGUF_TYPE_BOOL: a.gguf_set_val_bool(ctx, key, k.bytes[0] != 0); break;
                case MINFER_GGUF_TYPE_STRING: a.gguf_set_val_str(ctx, key, k.strings[0].c_str()); break;
                case MINFER_GGUF_TYPE_UINT64: a.gguf_set_val_u64(ctx, key, get(std::uint64_t{})); break;
                case MINFER_GGUF_TYPE_INT64: a.gguf_set_val_i64(ctx, key, get(std::int64_t{})); break;
                case MINFER_GGUF_TYPE_FLOAT64: a.gguf_set_val_f64(ctx, key, get(double{})); break;
                default: break;
            }
        }
    }
    std::size_t mem = 4096 + (c.tensors.size() + 1) * a.ggml_tensor_overhead();
    for (const tensor_item& t : c.tensors) mem += t.data.size() + 64;
    lr::ggml_context* g = a.ggml_init({mem, nullptr, false});
    if (g == nullptr) {
        a.gguf_free(ctx);
        return "ggml_init failed";
    }
    std::string why;
    for (const tensor_item& t : c.tensors) {
        std::int64_t ne[4] = {1, 1, 1, 1};
        std::copy(t.ne.begin(), t.ne.end(), ne);
        lr::ggml_tensor* gt = a.ggml_new_tensor(g, t.type, static_cast<int>(t.ne.size()), ne);
        if (gt == nullptr || a.ggml_nbytes(gt) != t.data.size()) {
            why = "ggml_new_tensor disagrees on " + t.name;
            break;
        }
        std::memcpy(a.ggml_get_data(gt), t.data.data(), t.data.size());
        a.ggml_set_name(gt, t.name.c_str());
        a.gguf_add_tensor(ctx, gt);
    }
    if (why.empty() && !a.gguf_write_to_file(ctx, path.c_str(), false)) why = "gguf_write_to_file failed: " + lib.take_log();
    a.ggml_free(g);
    a.gguf_free(ctx);
    return why;
}

// Everything ggml's reader reports for the file at `path` (with the tensors' bytes loaded) equals `c`.
void expect_ggml_reads(const lr::llama_lib& lib, const fs::path& path, const content& c) {
    const lr::llama_api& a = lib.api();
    lr::ggml_context* g = nullptr;
    lr::gguf_context* ctx = a.gguf_init_from_file(path.c_str(), {false, &g});
    ASSERT_NE(ctx, nullptr) << "ggml refuses the file: " << lib.take_log();
    EXPECT_EQ(a.gguf_get_version(ctx), 3u);
    EXPECT_EQ(a.gguf_get_n_kv(ctx), static_cast<std::int64_t>(c.kvs.size()));
    for (std::size_t i = 0; i < c.kvs.size() && i < static_cast<std::size_t>(a.gguf_get_n_kv(ctx)); ++i) {
        const kv_item& k = c.kvs[i];
        SCOPED_TRACE(k.key);
        const auto id = static_cast<std::int64_t>(i);
        EXPECT_STREQ(a.gguf_get_key(ctx, id), k.key.c_str());
        if (a.gguf_get_kv_type(ctx, id) != k.type) {
            ADD_FAILURE() << "type " << a.gguf_get_kv_type(ctx, id) << ", expected " << k.type;
            continue;
        }
        if (k.type == MINFER_GGUF_TYPE_ARRAY) {
            EXPECT_EQ(a.gguf_get_arr_type(ctx, id), k.elem);
            EXPECT_EQ(a.gguf_get_arr_n(ctx, id), k.n);
            if (k.elem == MINFER_GGUF_TYPE_STRING) {
                for (std::size_t j = 0; j < k.n; ++j) EXPECT_STREQ(a.gguf_get_arr_str(ctx, id, j), k.strings[j].c_str());
            } else if (!k.bytes.empty()) {
                EXPECT_EQ(std::memcmp(a.gguf_get_arr_data(ctx, id), k.bytes.data(), k.bytes.size()), 0);
            }
        } else if (k.type == MINFER_GGUF_TYPE_STRING) {
            EXPECT_STREQ(a.gguf_get_val_str(ctx, id), k.strings[0].c_str());
        } else {
            // ggml answers gguf_get_arr_data for a fixed-size scalar with its value's bytes.
            EXPECT_EQ(std::memcmp(a.gguf_get_arr_data(ctx, id), k.bytes.data(), k.bytes.size()), 0);
        }
    }
    EXPECT_EQ(a.gguf_get_n_tensors(ctx), static_cast<std::int64_t>(c.tensors.size()));
    for (std::size_t i = 0; i < c.tensors.size() && i < static_cast<std::size_t>(a.gguf_get_n_tensors(ctx)); ++i) {
        const tensor_item& t = c.tensors[i];
        SCOPED_TRACE(t.name);
        const auto id = static_cast<std::int64_t>(i);
        EXPECT_STREQ(a.gguf_get_tensor_name(ctx, id), t.name.c_str());
        EXPECT_EQ(a.gguf_get_tensor_type(ctx, id), t.type);
        EXPECT_EQ(a.gguf_get_tensor_size(ctx, id), t.data.size());
        const std::int64_t* ne = a.gguf_get_tensor_ne(ctx, id);
        for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(ne[d], d < t.ne.size() ? t.ne[d] : 1);
        lr::ggml_tensor* gt = a.ggml_get_tensor(g, t.name.c_str());
        ASSERT_NE(gt, nullptr);
        ASSERT_EQ(a.ggml_nbytes(gt), t.data.size());
        EXPECT_EQ(std::memcmp(a.ggml_get_data(gt), t.data.data(), t.data.size()), 0);
    }
    a.gguf_free(ctx);
    if (g != nullptr) a.ggml_free(g);
}

// ---- the writer ----

TEST(CApiWriter, EveryKvTypeArraysStringsAndTensorsReadBackByMinfer) {
    temp_dir dir;
    const content c = sample_content();
    ASSERT_EQ(write_with_minfer(c, dir / "model.gguf"), 0) << minfer_last_error_message();
    expect_minfer_reads(dir / "model.gguf", c);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"model.gguf"});  // no temporary left
    EXPECT_EQ(minfer_gguf_check_file((dir / "model.gguf").c_str(), 0, nullptr), 0);
}

TEST(CApiWriter, SameBytesAsGgmlsWriterAndGgmlReadsTheSameContent) {
    MINFER_REQUIRE_LLAMA_PARTS(lib, ggml_writer_parts);
    temp_dir dir;
    for (const bool with_tensors : {true, false}) {
        SCOPED_TRACE(with_tensors ? "with tensors" : "metadata only");
        const content c = sample_content(with_tensors);
        const fs::path ours = dir / (with_tensors ? "ours.gguf" : "ours_meta.gguf");
        const fs::path theirs = dir / (with_tensors ? "theirs.gguf" : "theirs_meta.gguf");
        ASSERT_EQ(write_with_minfer(c, ours), 0) << minfer_last_error_message();
        const std::string why = write_with_ggml(*lib, c, theirs);
        ASSERT_EQ(why, "");
        const std::vector<std::uint8_t> a = read_bytes(ours), b = read_bytes(theirs);
        ASSERT_EQ(a.size(), b.size());
        const auto diff = std::mismatch(a.begin(), a.end(), b.begin());
        EXPECT_TRUE(diff.first == a.end()) << "first difference at byte " << (diff.first - a.begin());
        expect_ggml_reads(*lib, ours, c);
        expect_minfer_reads(theirs, c);
    }
}

TEST(CApiWriter, SetKvFromCopiesEveryKvOfAContextInOrder) {
    temp_dir dir;
    const content c = sample_content(false);
    ASSERT_EQ(write_with_minfer(c, dir / "source.gguf"), 0);
    minfer_gguf_context* src = minfer_gguf_open((dir / "source.gguf").c_str(), 0, nullptr);
    ASSERT_NE(src, nullptr);
    minfer_gguf_writer* w = minfer_writer_new();
    ASSERT_EQ(minfer_writer_set_kv_from(w, src), 0) << minfer_last_error_message();
    minfer_gguf_free(src);  // the records were copied
    ASSERT_EQ(minfer_writer_write(w, (dir / "copy.gguf").c_str(), 0, nullptr), 0) << minfer_last_error_message();
    expect_minfer_reads(dir / "copy.gguf", c);
    EXPECT_TRUE(read_bytes(dir / "copy.gguf") == read_bytes(dir / "source.gguf"));
    // A freed context is refused, the writer unchanged.
    EXPECT_EQ(minfer_writer_set_kv_from(w, src), -1);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_INVALID_HANDLE);
    EXPECT_EQ(minfer_writer_set_kv_from(w, nullptr), -1);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_INVALID_HANDLE);
    minfer_writer_free(w);
}

TEST(CApiWriter, WrittenTwiceFromTheSameWriterGivesTheSameBytes) {
    temp_dir dir;
    const content c = sample_content();
    minfer_gguf_writer* w = minfer_writer_new();
    std::vector<callback_source> sources;
    fill_writer(w, c, sources);
    ASSERT_EQ(minfer_writer_write(w, (dir / "a.gguf").c_str(), 0, nullptr), 0) << minfer_last_error_message();
    ASSERT_EQ(minfer_writer_write(w, (dir / "b.gguf").c_str(), 0, nullptr), 0) << minfer_last_error_message();
    minfer_writer_free(w);
    EXPECT_TRUE(read_bytes(dir / "a.gguf") == read_bytes(dir / "b.gguf"));
}

// A small model with one tensor from a callback, for the failure tests.
struct small_model {
    tensor_item t = tensor("weights", MINFER_GGML_TYPE_F32, {1 << 21}, true, 9);  // 8 MiB: two chunks
    callback_source source;
    minfer_gguf_writer* w = minfer_writer_new();
    small_model() {
        source.tensor = &t;
        minfer_writer_set_str(w, "general.architecture", "llama");
        minfer_writer_add_tensor_cb(w, t.name.c_str(), t.type, 1, t.ne.data(), t.data.size(), &read_tensor, &source);
    }
    ~small_model() { minfer_writer_free(w); }
    small_model(const small_model&) = delete;
    small_model& operator=(const small_model&) = delete;
};

TEST(CApiWriter, AFailingCallbackLeavesNoFileAndNamesTheTensor) {
    temp_dir dir;
    small_model m;
    m.source.fail_at_call = 1;  // the second chunk: the first is written already
    const fs::path path = dir / "model.gguf";
    minfer_error err{};
    EXPECT_EQ(minfer_writer_write(m.w, path.c_str(), 0, &err), -1);
    EXPECT_EQ(err.code, MINFER_ERROR_CALLBACK_FAILED);
    EXPECT_STREQ(err.name, "callback_failed");
    EXPECT_STREQ(err.domain, "capi");
    EXPECT_EQ(err.found, 7u);
    EXPECT_GT(err.offset, 0u);  // where in the output the failed chunk goes
    EXPECT_NE(std::string(err.message).find("'weights'"), std::string::npos) << err.message;
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(entries(dir.path()).empty());
    // The same writer writes once the callback succeeds.
    m.source.fail_at_call = -1;
    m.source.calls.clear();
    EXPECT_EQ(minfer_writer_write(m.w, path.c_str(), 0, &err), 0) << err.message;
    EXPECT_EQ(err.code, 0);
    EXPECT_STREQ(err.name, "ok");
}

TEST(CApiWriter, AnExistingPathIsReplacedOnlyWithTheFlag) {
    temp_dir dir;
    small_model m;
    const fs::path path = dir / "model.gguf";
    const std::uint8_t old_bytes[] = {'o', 'l', 'd'};
    write_bytes(path, old_bytes, sizeof old_bytes);
    minfer_error err{};
    EXPECT_EQ(minfer_writer_write(m.w, path.c_str(), 0, &err), -1);
    EXPECT_STREQ(err.name, "io_error");
    EXPECT_NE(std::string(err.message).find("File exists"), std::string::npos) << err.message;
    EXPECT_EQ(read_bytes(path), std::vector<std::uint8_t>(std::begin(old_bytes), std::end(old_bytes)));
    EXPECT_TRUE(m.source.calls.empty()) << "refused before any byte was written";
    EXPECT_EQ(minfer_writer_write(m.w, path.c_str(), MINFER_WRITE_REPLACE, &err), 0) << err.message;
    EXPECT_EQ(minfer_gguf_check_file(path.c_str(), 0, nullptr), 0);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"model.gguf"});
    // A directory is never replaced, not even with the flag.
    fs::create_directory(dir / "sub");
    EXPECT_EQ(minfer_writer_write(m.w, (dir / "sub").c_str(), MINFER_WRITE_REPLACE, &err), -1);
    EXPECT_STREQ(err.name, "output_not_regular");
    EXPECT_STREQ(err.domain, "gguf_write");
    EXPECT_TRUE(fs::is_directory(dir / "sub"));
    // Unknown flag bits are refused.
    EXPECT_EQ(minfer_writer_write(m.w, (dir / "new.gguf").c_str(), 2u, &err), -1);
    EXPECT_EQ(err.code, MINFER_ERROR_UNSUPPORTED_PARAM);
    EXPECT_FALSE(fs::exists(dir / "new.gguf"));
}

TEST(CApiWriter, NullArgumentsAndBadHandlesAreRefusedAndLeaveNoFile) {
    temp_dir dir;
    const fs::path path = dir / "model.gguf";
    const std::int64_t ne[] = {4};
    const float data[4] = {1, 2, 3, 4};
    minfer_error err{};
    minfer_gguf_writer* w = minfer_writer_new();
    ASSERT_NE(w, nullptr);
    auto code_is = [](int rc, int code) {
        EXPECT_EQ(rc, -1);
        EXPECT_EQ(minfer_last_error_code(), code) << minfer_last_error_message();
    };
    code_is(minfer_writer_set_u32(nullptr, "k", 1), MINFER_ERROR_INVALID_HANDLE);
    code_is(minfer_writer_set_u32(w, nullptr, 1), MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_set_str(w, "k", nullptr), MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_set_arr_data(w, "k", MINFER_GGUF_TYPE_UINT32, nullptr, 3), MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_set_arr_str(w, "k", nullptr, 2), MINFER_ERROR_NULL_ARGUMENT);
    const char* with_null[] = {"a", nullptr};
    code_is(minfer_writer_set_arr_str(w, "k", with_null, 2), MINFER_ERROR_NULL_ARGUMENT);
    EXPECT_NE(std::string(minfer_last_error_message()).find("strs[1]"), std::string::npos);
    code_is(minfer_writer_add_tensor(w, nullptr, MINFER_GGML_TYPE_F32, 1, ne, data, sizeof data), MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, 1, nullptr, data, sizeof data), MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, 1, ne, nullptr, sizeof data), MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_add_tensor_cb(w, "t", MINFER_GGML_TYPE_F32, 1, ne, sizeof data, nullptr, nullptr),
            MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_write(w, nullptr, 0, &err), MINFER_ERROR_NULL_ARGUMENT);
    EXPECT_EQ(err.code, MINFER_ERROR_NULL_ARGUMENT);
    code_is(minfer_writer_write(nullptr, path.c_str(), 0, &err), MINFER_ERROR_INVALID_HANDLE);
    EXPECT_STREQ(err.name, "invalid_handle");
    EXPECT_NE(std::string(err.message).find("writer"), std::string::npos) << err.message;
    // Empty arrays may have NULL data.
    EXPECT_EQ(minfer_writer_set_arr_data(w, "empty", MINFER_GGUF_TYPE_UINT32, nullptr, 0), 0);
    EXPECT_EQ(minfer_writer_set_arr_str(w, "empty_strings", nullptr, 0), 0);

    // A handle of another kind, or one already freed, is refused without being read.
    minfer_gguf_writer* gone = minfer_writer_new();
    minfer_writer_free(gone);
    code_is(minfer_writer_set_u32(gone, "k", 1), MINFER_ERROR_INVALID_HANDLE);
    code_is(minfer_writer_write(gone, path.c_str(), 0, nullptr), MINFER_ERROR_INVALID_HANDLE);
    minfer_clear_error();
    minfer_writer_free(gone);  // twice: refused, not a double free
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_INVALID_HANDLE);
    minfer_writer_free(nullptr);  // ignored, as free(NULL)
    int not_a_writer = 0;
    code_is(minfer_writer_set_u32(reinterpret_cast<minfer_gguf_writer*>(&not_a_writer), "k", 1), MINFER_ERROR_INVALID_HANDLE);
    temp_dir other;
    const content c = sample_content(false);
    ASSERT_EQ(write_with_minfer(c, other / "m.gguf"), 0);
    minfer_gguf_context* ctx = minfer_gguf_open((other / "m.gguf").c_str(), 0, nullptr);
    ASSERT_NE(ctx, nullptr);
    code_is(minfer_writer_set_u32(reinterpret_cast<minfer_gguf_writer*>(ctx), "k", 1), MINFER_ERROR_INVALID_HANDLE);
    EXPECT_EQ(minfer_gguf_get_n_kv(reinterpret_cast<minfer_gguf_context*>(w)), 0);  // and the other way round
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_INVALID_HANDLE);
    minfer_gguf_free(ctx);
    EXPECT_TRUE(entries(dir.path()).empty());
    minfer_writer_free(w);
}

TEST(CApiWriter, EachCallIsCheckedByTheLoadersRulesAndARefusalChangesNothing) {
    temp_dir dir;
    minfer_gguf_writer* w = minfer_writer_new();
    ASSERT_EQ(minfer_writer_set_str(w, "general.architecture", "llama"), 0);
    auto refused = [](int rc, const char* name) {
        EXPECT_EQ(rc, -1);
        EXPECT_STREQ(minfer_last_error_name(), name) << minfer_last_error_message();
    };
    const std::int64_t ne4[] = {4};
    const float four[4] = {1, 2, 3, 4};
    const std::uint8_t bools[] = {0, 1, 2};
    refused(minfer_writer_set_u32(w, "", 1), "empty_key");
    refused(minfer_writer_set_arr_data(w, "bools", MINFER_GGUF_TYPE_BOOL, bools, 3), "bad_bool");
    refused(minfer_writer_set_arr_data(w, "strings", MINFER_GGUF_TYPE_STRING, bools, 3), "bad_value_type");
    refused(minfer_writer_set_arr_data(w, "nested", MINFER_GGUF_TYPE_ARRAY, bools, 3), "nested_array");
    refused(minfer_writer_set_arr_data(w, "bad", static_cast<minfer_gguf_type>(99), bools, 3), "bad_value_type");
    refused(minfer_writer_set_u8(w, "general.alignment", 64), "alignment_wrong_type");
    refused(minfer_writer_set_u32(w, "general.alignment", 48), "bad_alignment");
    refused(minfer_writer_add_tensor(w, std::string(64, 'x').c_str(), MINFER_GGML_TYPE_F32, 1, ne4, four, sizeof four),
            "bad_name_length");
    refused(minfer_writer_add_tensor(w, "", MINFER_GGML_TYPE_F32, 1, ne4, four, sizeof four), "bad_name_length");
    refused(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, 1, ne4, four, sizeof four - 4), "data_truncated");
    refused(minfer_writer_add_tensor(w, "t", 4, 1, ne4, four, sizeof four), "removed_tensor_type");
    refused(minfer_writer_add_tensor(w, "t", 1000, 1, ne4, four, sizeof four), "bad_tensor_type");
    refused(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_Q4_0, 1, ne4, four, sizeof four), "not_block_multiple");
    refused(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, 5, ne4, four, sizeof four), "bad_n_dims");
    refused(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, -1, ne4, four, sizeof four), "bad_n_dims");
    const std::int64_t negative[] = {-4};
    refused(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, 1, negative, four, sizeof four), "bad_dim");
    refused(minfer_writer_add_tensor_cb(w, "t", MINFER_GGML_TYPE_F32, 1, ne4, 12, &read_tensor, nullptr),
            "data_truncated");
    // None of the refused calls changed the writer: it writes the one key it was given.
    ASSERT_EQ(minfer_writer_write(w, (dir / "a.gguf").c_str(), 0, nullptr), 0) << minfer_last_error_message();
    minfer_gguf_context* ctx = minfer_gguf_open((dir / "a.gguf").c_str(), 0, nullptr);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(minfer_gguf_get_n_kv(ctx), 1);
    EXPECT_EQ(minfer_gguf_get_n_tensors(ctx), 0);
    minfer_gguf_free(ctx);

    // Setting a key again replaces its value in place; a second tensor of one name is the write's refusal.
    ASSERT_EQ(minfer_writer_set_u32(w, "test.n", 1), 0);
    ASSERT_EQ(minfer_writer_set_str(w, "general.architecture", "qwen2"), 0);
    ASSERT_EQ(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, 1, ne4, four, sizeof four), 0);
    ASSERT_EQ(minfer_writer_add_tensor(w, "t", MINFER_GGML_TYPE_F32, 1, ne4, four, sizeof four), 0);
    minfer_error err{};
    EXPECT_EQ(minfer_writer_write(w, (dir / "b.gguf").c_str(), 0, &err), -1);
    EXPECT_STREQ(err.name, "duplicate_tensor");
    EXPECT_EQ(err.expected, 0u);
    EXPECT_EQ(err.found, 1u);
    EXPECT_FALSE(fs::exists(dir / "b.gguf"));
    minfer_writer_free(w);

    w = minfer_writer_new();
    ASSERT_EQ(minfer_writer_set_str(w, "general.architecture", "llama"), 0);
    ASSERT_EQ(minfer_writer_set_u32(w, "test.n", 1), 0);
    ASSERT_EQ(minfer_writer_set_str(w, "general.architecture", "qwen2"), 0);
    ASSERT_EQ(minfer_writer_write(w, (dir / "c.gguf").c_str(), 0, nullptr), 0);
    minfer_writer_free(w);
    ctx = minfer_gguf_open((dir / "c.gguf").c_str(), 0, nullptr);
    ASSERT_NE(ctx, nullptr);
    ASSERT_EQ(minfer_gguf_get_n_kv(ctx), 2);
    EXPECT_STREQ(minfer_gguf_get_key(ctx, 0), "general.architecture");
    EXPECT_STREQ(minfer_gguf_get_val_str(ctx, 0), "qwen2");
    minfer_gguf_free(ctx);
}


TEST(CApiWriter, AFullDiskIsAnErrorAndLeavesNoOutputAndNoTemporary) {
    if (::geteuid() != 0) GTEST_SKIP() << "SKIPPED: not root: cannot mount a small tmpfs to fill";
    minfer::test_support::small_tmpfs disk("256k");  // tests/support/scratch_dir.hpp
    if (!disk.mounted()) GTEST_SKIP() << "SKIPPED: " << disk.why();
    const fs::path mnt = disk.path();
    content c = sample_content(false);
    c.tensors.push_back(tensor("big.weight", MINFER_GGML_TYPE_F32, {1 << 18}, false, 11));  // 1 MiB of non-zero bytes
    c.tensors.push_back(tensor("big.more", MINFER_GGML_TYPE_F32, {1 << 18}, true, 12));
    minfer_gguf_writer* w = minfer_writer_new();
    std::vector<callback_source> sources;
    fill_writer(w, c, sources);
    minfer_error err{};
    EXPECT_EQ(minfer_writer_write(w, (mnt / "model.gguf").c_str(), 0, &err), -1);
    minfer_writer_free(w);
    EXPECT_STREQ(err.name, "io_error");
    EXPECT_NE(std::string(err.message).find("No space left on device"), std::string::npos) << err.message;
    EXPECT_TRUE(entries(mnt).empty()) << "an output or a temporary was left on the full disk";
}

TEST(CApiWriter, AKillDuringTheWriteLeavesNoFileAtThePath) {
    temp_dir dir;
    const fs::path path = dir / "model.gguf";
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child writes a 64 MiB model from a callback that, once 8 MiB are written, tells the
        // parent and waits to be killed.
        ::close(ready[0]);
        struct stall {
            int fd;
        } s{ready[1]};
        auto slow = [](void* user, std::uint64_t offset, void* dst, std::size_t n) -> int {
            std::memset(dst, 0x3C, n);
            if (offset >= (std::uint64_t{8} << 20)) {
                const char byte = 1;
                if (::write(static_cast<stall*>(user)->fd, &byte, 1) != 1) ::_exit(3);
                for (;;) ::pause();
            }
            return 0;
        };
        minfer_gguf_writer* w = minfer_writer_new();
        const std::int64_t ne[] = {std::int64_t{16} << 20};
        minfer_writer_set_str(w, "general.architecture", "llama");
        if (minfer_writer_add_tensor_cb(w, "big", MINFER_GGML_TYPE_F32, 1, ne, std::size_t{64} << 20, slow, &s) != 0)
            ::_exit(4);
        minfer_writer_write(w, path.c_str(), 0, nullptr);
        ::_exit(5);  // not reached: killed in the callback
    }
    ::close(ready[1]);
    char byte = 0;
    const ssize_t got = ::read(ready[0], &byte, 1);
    ::close(ready[0]);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_EQ(got, 1) << "the child ended before its write reached the callback";
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(entries(dir.path()).empty()) << "a temporary was left by the kill";
}

// ---- the verdict of a file ----

TEST(CApiVerdict, AValidFileIsZeroAndBrokenFilesGiveTheLoadersCodeWithOffsetExpectedFound) {
    temp_dir dir;
    const content c = sample_content();
    const fs::path good = dir / "good.gguf";
    ASSERT_EQ(write_with_minfer(c, good), 0);
    minfer_error err{};
    err.code = 12345;
    EXPECT_EQ(minfer_gguf_check_file(good.c_str(), 0, &err), 0);
    EXPECT_EQ(err.code, 0);
    EXPECT_STREQ(err.name, "ok");
    EXPECT_STREQ(err.domain, "");
    EXPECT_STREQ(err.message, "");
    const std::vector<std::uint8_t> bytes = read_bytes(good);

    // The header ends inside n_kv (bytes 16..24): 8 bytes needed, 4 left.
    const fs::path short_head = dir / "short_head.gguf";
    write_bytes(short_head, bytes.data(), 20);
    int rc = minfer_gguf_check_file(short_head.c_str(), 0, &err);
    EXPECT_EQ(rc, err.code);
    EXPECT_STREQ(err.name, "truncated");
    EXPECT_STREQ(err.domain, "loader");
    EXPECT_EQ(err.offset, 16u);
    EXPECT_EQ(err.expected, 8u);
    EXPECT_EQ(err.found, 4u);
    EXPECT_NE(std::string(err.message).find(short_head.string()), std::string::npos) << err.message;
    // The same as the opener's error, and as the thread's last error.
    const minfer_error verdict = err;
    EXPECT_EQ(minfer_gguf_init_from_file(short_head.c_str(), {true, nullptr}), nullptr);
    const minfer_error opened = last_error();
    EXPECT_EQ(opened.code, verdict.code);
    EXPECT_EQ(opened.offset, verdict.offset);
    EXPECT_EQ(opened.expected, verdict.expected);
    EXPECT_EQ(opened.found, verdict.found);
    EXPECT_STREQ(opened.message, verdict.message);

    // The data section cut short.
    const fs::path short_data = dir / "short_data.gguf";
    write_bytes(short_data, bytes.data(), bytes.size() - 100);
    EXPECT_NE(minfer_gguf_check_file(short_data.c_str(), 0, &err), 0);
    EXPECT_STREQ(err.name, "data_truncated");
    EXPECT_EQ(err.found, bytes.size() - 100);
    EXPECT_GT(err.expected, err.found);

    // A bad magic: found = the four bytes as a little-endian u32.
    std::vector<std::uint8_t> bad = bytes;
    bad[3] = 'X';
    const fs::path bad_magic = dir / "bad_magic.gguf";
    write_bytes(bad_magic, bad.data(), bad.size());
    rc = minfer_gguf_check_file(bad_magic.c_str(), 0, &err);
    EXPECT_EQ(rc, err.code);
    EXPECT_STREQ(err.name, "bad_magic");
    EXPECT_EQ(err.offset, 0u);
    EXPECT_EQ(err.found, 0x58554747u);  // "GGUX"
    // minfer_gguf_open gives the same error, NULL err is fine, and the context opens a good file.
    EXPECT_EQ(minfer_gguf_open(bad_magic.c_str(), 0, &err), nullptr);
    EXPECT_STREQ(err.name, "bad_magic");
    EXPECT_EQ(minfer_gguf_open(bad_magic.c_str(), 0, nullptr), nullptr);
    minfer_gguf_context* ctx = minfer_gguf_open(good.c_str(), 0, &err);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(err.code, 0);
    minfer_gguf_free(ctx);

    // Arguments.
    EXPECT_EQ(minfer_gguf_check_file(nullptr, 0, &err), MINFER_ERROR_NULL_ARGUMENT);
    EXPECT_STREQ(err.name, "null_argument");
    EXPECT_EQ(minfer_gguf_check_file(good.c_str(), 6u, &err), MINFER_ERROR_UNSUPPORTED_PARAM);
    EXPECT_EQ(err.found, 6u);
    EXPECT_EQ(minfer_gguf_open(good.c_str(), 2u, &err), nullptr);
    EXPECT_EQ(err.code, MINFER_ERROR_UNSUPPORTED_PARAM);
    rc = minfer_gguf_check_file((dir / "missing.gguf").c_str(), 0, &err);
    EXPECT_EQ(rc, err.code);
    EXPECT_STREQ(err.name, "io_error");
}

TEST(CApiVerdict, SplitSetsFromPartOneAndALaterPartRefused) {
    temp_dir dir;
    const fs::path part1 = dir / "set-00001-of-00002.gguf", part2 = dir / "set-00002-of-00002.gguf";
    const float values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::int64_t ne[] = {4};
    for (std::uint16_t i = 0; i < 2; ++i) {
        minfer_gguf_writer* w = minfer_writer_new();
        if (i == 0) {
            ASSERT_EQ(minfer_writer_set_str(w, "general.architecture", "llama"), 0);
        }
        ASSERT_EQ(minfer_writer_set_u16(w, "split.no", i), 0);
        ASSERT_EQ(minfer_writer_set_u16(w, "split.count", 2), 0);
        ASSERT_EQ(minfer_writer_set_i32(w, "split.tensors.count", 2), 0);
        ASSERT_EQ(minfer_writer_add_tensor(w, i == 0 ? "a" : "b", MINFER_GGML_TYPE_F32, 1, ne, values + 4 * i,
                                           4 * sizeof(float)),
                  0);
        ASSERT_EQ(minfer_writer_write(w, (i == 0 ? part1 : part2).c_str(), 0, nullptr), 0) << minfer_last_error_message();
        minfer_writer_free(w);
    }
    minfer_error err{};
    EXPECT_EQ(minfer_gguf_check_file(part1.c_str(), MINFER_OPEN_SPLIT, &err), 0) << err.message;
    minfer_gguf_context* set = minfer_gguf_open(part1.c_str(), MINFER_OPEN_SPLIT, &err);
    ASSERT_NE(set, nullptr) << err.message;
    EXPECT_EQ(minfer_gguf_get_n_parts(set), 2);
    EXPECT_EQ(minfer_gguf_get_n_tensors(set), 2);
    EXPECT_EQ(minfer_gguf_get_tensor_part(set, 1), 1);
    EXPECT_EQ(std::memcmp(minfer_gguf_get_tensor_data(set, 1), values + 4, 4 * sizeof(float)), 0);
    minfer_gguf_free(set);

    // A later part: refused as the entry of a set, a valid file on its own.
    const int rc = minfer_gguf_check_file(part2.c_str(), MINFER_OPEN_SPLIT, &err);
    EXPECT_EQ(rc, err.code);
    EXPECT_STREQ(err.name, "split_not_first");
    EXPECT_EQ(err.expected, 0u);
    EXPECT_EQ(err.found, 1u);
    EXPECT_EQ(minfer_gguf_open(part2.c_str(), MINFER_OPEN_SPLIT, &err), nullptr);
    EXPECT_STREQ(err.name, "split_not_first");
    EXPECT_EQ(minfer_gguf_check_file(part2.c_str(), 0, &err), 0);
    EXPECT_EQ(minfer_gguf_check_file(part1.c_str(), 0, &err), 0);

    // Part 2 missing: the set is refused, part 1 alone is a valid file.
    fs::remove(part2);
    EXPECT_NE(minfer_gguf_check_file(part1.c_str(), MINFER_OPEN_SPLIT, &err), 0);
    EXPECT_STREQ(err.name, "split_part_missing");
    EXPECT_EQ(minfer_gguf_check_file(part1.c_str(), 0, &err), 0);
}

TEST(CApiVerdict, LastErrorStructMatchesTheAccessorsAndCutsLongMessages) {
    // A path longer than the struct's message: cut to fit, NUL-terminated.
    const std::string dir(1500, 'd');
    const std::string path = "/nonexistent/" + dir + "/model.gguf";
    minfer_clear_error();
    minfer_error e = last_error();
    EXPECT_EQ(e.code, 0);
    EXPECT_STREQ(e.name, "ok");
    const int rc = minfer_gguf_check_file(path.c_str(), 0, nullptr);
    EXPECT_EQ(rc, minfer_last_error_code());
    e = last_error();
    EXPECT_EQ(e.code, minfer_last_error_code());
    EXPECT_STREQ(e.name, minfer_last_error_name());
    EXPECT_STREQ(e.name, "io_error");
    EXPECT_STREQ(e.domain, "loader");
    EXPECT_EQ(e.offset, minfer_last_error_offset());
    EXPECT_GT(std::strlen(minfer_last_error_message()), sizeof e.message);
    EXPECT_EQ(std::strlen(e.message), sizeof e.message - 1);
    EXPECT_EQ(std::string(minfer_last_error_message()).compare(0, sizeof e.message - 1, e.message), 0);
    minfer_last_error(nullptr);  // ignored, and the last error is kept
    EXPECT_STREQ(minfer_last_error_name(), "io_error");
}

}  // namespace
