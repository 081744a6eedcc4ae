// The C API (libminfer.so): tests/capi/print_gguf.c built against minfer and against llama.cpp's
// ggml prints the same for every real fixture (and both refuse the same files); its misuse mode
// ends normally on every fixture; minfer_dequantize equals minfer::quant's dequantizer bit for bit
// (minfer::quant is itself compared with ggml's to_float in tests/unit/test_quant_ggml.cpp); the
// error paths of the API.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer.h"
#include "run_program.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/errors.hpp"  // registers the writer's codes in this program too
#include "minfer/quant/errors.hpp"
#include "minfer/quant/dequantize.hpp"

namespace fs = std::filesystem;
namespace gguf = minfer::gguf;

namespace {

std::vector<fs::path> real_files() {
    std::vector<fs::path> out;
    const fs::path dir = fs::path(MINFER_SHARED_DIR) / "fixtures" / "real";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".gguf") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

#define REQUIRE_REAL_FILES(files)                                                                  \
    const std::vector<fs::path> files = real_files();                                              \
    if ((files).empty()) GTEST_SKIP() << "SKIPPED: no real fixtures in " MINFER_SHARED_DIR "/fixtures/real"

using minfer::capi_test::quoted;
using minfer::capi_test::run;
using minfer::capi_test::run_result;

// libggml-base.so: $MINFER_LLAMA_LIB, else the path configured in the cache; empty when neither names a file.
std::string ggml_library() {
    std::string path;
    if (const char* env = std::getenv("MINFER_LLAMA_LIB"); env != nullptr && *env != '\0') path = env;
#ifdef CAPI_LLAMA_LIB_DEFAULT
    if (path.empty()) path = CAPI_LLAMA_LIB_DEFAULT;
#endif
    std::error_code ec;
    return !path.empty() && fs::is_regular_file(path, ec) ? path : std::string();
}

// The first line where two outputs differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
    std::size_t line = 1, start = 0;
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n && a[i] == b[i]; ++i)
        if (a[i] == '\n') { ++line; start = i + 1; }
    auto line_of = [start](const std::string& s) { return s.substr(start, std::min<std::size_t>(s.find('\n', start) - start, 300)); };
    return "line " + std::to_string(line) + ":\n  minfer: " + line_of(a) + "\n  ggml:   " + line_of(b);
}

TEST(CApiCompare, PrintsWhatGgmlPrintsOnEveryRealFile) {
    REQUIRE_REAL_FILES(files);
    const std::string lib = ggml_library();
    if (lib.empty())
        MINFER_SKIP_REFERENCE("SKIPPED: llama.cpp's libggml-base.so not found (set MINFER_LLAMA_LIB, see scripts/llama-ref.sh)");
    int same = 0, refused = 0;
    for (const fs::path& f : files) {
        SCOPED_TRACE(f.filename().string());
        const run_result mine = run(std::string(CAPI_PRINT_MINFER) + " " + quoted(f.string()));
        const run_result ref = run(std::string(CAPI_PRINT_GGML) + " " + quoted(lib) + " " + quoted(f.string()) + " 2>/dev/null");
        ASSERT_NE(ref.status, 3) << "the ggml build could not bind " << lib;
        ASSERT_TRUE(mine.status == 0 || mine.status == 1) << "minfer's build ended abnormally: " << mine.status;
        EXPECT_EQ(mine.status, ref.status) << (ref.status == 1 ? "ggml refuses the file, minfer opens it"
                                                               : "minfer refuses the file, ggml opens it");
        EXPECT_TRUE(mine.out == ref.out) << first_difference(mine.out, ref.out);
        if (mine.status == 0 && mine.out == ref.out) ++same;
        if (mine.status == 1 && ref.status == 1) ++refused;
    }
    std::printf("capi compare: %zu real files, %d printed identically, %d refused by both\n", files.size(), same, refused);
}

TEST(CApiMisuse, EveryAbortOfGgmlEndsNormallyOnEveryRealFile) {
    REQUIRE_REAL_FILES(files);
    for (const fs::path& f : files) {
        SCOPED_TRACE(f.filename().string());
        const run_result r = run(std::string(CAPI_PRINT_MINFER) + " --misuse " + quoted(f.string()));
        EXPECT_EQ(r.status, 0);
        EXPECT_NE(r.out.find("misuse: done\n"), std::string::npos);
        // No wrong-typed call passed unnoticed: every line of a call names an error.
        EXPECT_EQ(r.out.find("-> ok\n"), std::string::npos) << r.out.substr(0, 2000);
    }
}

// ---- minfer_dequantize against minfer::quant ----

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(CApiDequantize, EveryTensorOfTheRealFilesAsMinferQuant) {
    REQUIRE_REAL_FILES(files);
    std::map<std::string, int> per_type;
    for (const fs::path& f : files) {
        const minfer_gguf_init_params params{true, nullptr};
        minfer_gguf_context* ctx = minfer_gguf_init_from_file(f.c_str(), params);
        if (ctx == nullptr) continue;
        for (std::int64_t i = 0; i < minfer_gguf_get_n_tensors(ctx); ++i) {
            const int type = static_cast<int>(minfer_gguf_get_tensor_type(ctx, i));
            if (!minfer::quant::can_dequantize(static_cast<gguf::tensor_type>(type))) continue;
            const std::int64_t n = minfer_tensor_n_elements(ctx, i);
            const std::size_t size = minfer_gguf_get_tensor_size(ctx, i);
            if (n <= 0 || n > (64 << 20)) continue;  // bounded memory
            const void* data = minfer_gguf_get_tensor_data(ctx, i);
            ASSERT_NE(data, nullptr);
            ASSERT_EQ(minfer_dequantize_src_size(type, n), size);
            std::vector<float> got(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(n));
            ASSERT_EQ(minfer_dequantize(type, data, size, got.data(), n), n) << minfer_last_error_message();
            ASSERT_TRUE(minfer::quant::dequantize(static_cast<gguf::tensor_type>(type),
                                                  {static_cast<const std::byte*>(data), size}, want));
            EXPECT_TRUE(same_bits(got, want)) << f.filename() << " tensor " << minfer_gguf_get_tensor_name(ctx, i);
            ++per_type[minfer_ggml_type_name(type)];
        }
        minfer_gguf_free(ctx);
    }
    std::string summary;
    for (const auto& [name, count] : per_type) summary += " " + name + ":" + std::to_string(count);
    std::printf("capi dequantize: real tensors by type:%s\n", summary.c_str());
    EXPECT_FALSE(per_type.empty());
}

TEST(CApiDequantize, SyntheticBlocksOfEveryTypeAsMinferQuant) {
    std::mt19937_64 rng(32);
    int types = 0;
    for (std::uint32_t id = 0; id < gguf::tensor_type_count; ++id) {
        const auto type = static_cast<gguf::tensor_type>(id);
        if (!minfer::quant::can_dequantize(type)) {
            float out[256];
            unsigned char in[1024] = {};
            EXPECT_EQ(minfer_dequantize(static_cast<int>(id), in, sizeof in, out, 256), -1) << id;
            continue;
        }
        const gguf::type_traits* t = gguf::traits(id);
        const std::size_t blocks = 7;
        const auto n = static_cast<std::int64_t>(blocks * t->block_elems);
        std::vector<unsigned char> src(blocks * t->block_bytes);
        for (auto& b : src) b = static_cast<unsigned char>(rng());
        std::vector<float> got(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(n));
        ASSERT_EQ(minfer_dequantize(static_cast<int>(id), src.data(), src.size(), got.data(), n), n)
            << t->name << ": " << minfer_last_error_message();
        ASSERT_TRUE(minfer::quant::dequantize(type, {reinterpret_cast<const std::byte*>(src.data()), src.size()}, want));
        EXPECT_TRUE(same_bits(got, want)) << t->name;
        ++types;
        // Sizes: one byte short, and a count that is not whole blocks (block types only).
        EXPECT_EQ(minfer_dequantize(static_cast<int>(id), src.data(), src.size() - 1, got.data(), n), -1);
        EXPECT_STREQ(minfer_last_error_name(), "buffer_size_mismatch");
        if (t->block_elems > 1) {
            EXPECT_EQ(minfer_dequantize(static_cast<int>(id), src.data(), src.size(), got.data(), n - 1), -1);
            EXPECT_STREQ(minfer_last_error_name(), "not_block_multiple");
        }
    }
    std::printf("capi dequantize: %d types of synthetic blocks\n", types);
    EXPECT_GE(types, 30);
}

TEST(CApiDequantize, BadArgumentsAreErrorsNotCrashes) {
    float out[32];
    unsigned char in[128] = {};
    minfer_clear_error();
    EXPECT_EQ(minfer_dequantize(-1, in, sizeof in, out, 32), -1);
    EXPECT_STREQ(minfer_last_error_name(), "type_not_convertible");
    EXPECT_EQ(minfer_dequantize(1000, in, sizeof in, out, 32), -1);
    EXPECT_EQ(minfer_dequantize(MINFER_GGML_TYPE_Q8_1, in, 36, out, 32), -1);  // ggml has no to_float for q8_1
    EXPECT_STREQ(minfer_last_error_name(), "type_not_convertible");
    EXPECT_EQ(minfer_dequantize(MINFER_GGML_TYPE_F32, in, sizeof in, nullptr, 32), -1);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_NULL_ARGUMENT);
    EXPECT_EQ(minfer_dequantize(MINFER_GGML_TYPE_F32, nullptr, sizeof in, out, 32), -1);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_NULL_ARGUMENT);
    EXPECT_EQ(minfer_dequantize(MINFER_GGML_TYPE_F32, in, sizeof in, out, -32), -1);
    EXPECT_EQ(minfer_dequantize(MINFER_GGML_TYPE_F32, nullptr, 0, nullptr, 0), 0);
    EXPECT_EQ(minfer_dequantize_src_size(MINFER_GGML_TYPE_Q4_0, 64), 36u);
    EXPECT_EQ(minfer_dequantize_src_size(MINFER_GGML_TYPE_Q4_0, 33), 0u);
    EXPECT_STREQ(minfer_last_error_name(), "not_block_multiple");
    EXPECT_STREQ(minfer_ggml_type_name(MINFER_GGML_TYPE_Q4_K), "q4_K");
    EXPECT_EQ(minfer_ggml_type_name(-1), nullptr);
    EXPECT_EQ(minfer_ggml_type_name(43), nullptr);
}

// ---- the API's own error paths ----

TEST(CApiErrors, OpenFailuresSayWhy) {
    const minfer_gguf_init_params params{true, nullptr};
    minfer_clear_error();
    EXPECT_EQ(minfer_last_error_code(), 0);
    EXPECT_STREQ(minfer_last_error_name(), "ok");
    EXPECT_STREQ(minfer_last_error_message(), "");
    EXPECT_EQ(minfer_gguf_init_from_file("/nonexistent/x.gguf", params), nullptr);
    EXPECT_STREQ(minfer_last_error_name(), "io_error");
    EXPECT_NE(std::string(minfer_last_error_message()).find("/nonexistent/x.gguf"), std::string::npos);
    EXPECT_EQ(minfer_gguf_init_from_file(nullptr, params), nullptr);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_NULL_ARGUMENT);
    void* ggml_ctx = nullptr;
    const minfer_gguf_init_params with_ctx{false, &ggml_ctx};
    EXPECT_EQ(minfer_gguf_init_from_file("/nonexistent/x.gguf", with_ctx), nullptr);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_UNSUPPORTED_PARAM);
    EXPECT_STREQ(minfer_last_error_name(), "unsupported_param");

    // A file that is not GGUF: the loader's code and offset.
    const fs::path p = fs::temp_directory_path() / ("capi_bad_" + std::to_string(::getpid()) + ".gguf");
    {
        FILE* f = std::fopen(p.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        const char head[] = {'G', 'G', 'U', 'F', 3, 0, 0, 0};  // the header ends after the version
        ASSERT_EQ(std::fwrite(head, 1, sizeof head, f), sizeof head);
        std::fclose(f);
    }
    EXPECT_EQ(minfer_gguf_init_from_file(p.c_str(), params), nullptr);
    EXPECT_STREQ(minfer_last_error_name(), "truncated");
    EXPECT_EQ(minfer_last_error_offset(), 8u);
    fs::remove(p);
}

TEST(CApiErrors, LastErrorIsPerThread) {
    minfer_clear_error();
    EXPECT_EQ(minfer_gguf_get_n_kv(nullptr), 0);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_INVALID_HANDLE);
    int other = -1;
    std::thread([&other] { other = minfer_last_error_code(); }).join();
    EXPECT_EQ(other, 0);
    EXPECT_NE(std::string(minfer_last_error_message()).find("minfer_gguf_get_n_kv"), std::string::npos);
}

TEST(CApiErrors, GettersOnARealFile) {
    REQUIRE_REAL_FILES(files);
    const minfer_gguf_init_params params{true, nullptr};
    minfer_gguf_context* ctx = nullptr;
    for (const fs::path& f : files)
        if (f.filename().string().find("stories260K") != std::string::npos) ctx = minfer_gguf_init_from_file(f.c_str(), params);
    if (ctx == nullptr) GTEST_SKIP() << "SKIPPED: stories260K fixture not found";
    const std::int64_t arch = minfer_gguf_find_key(ctx, "general.architecture");
    ASSERT_GE(arch, 0);
    EXPECT_EQ(minfer_gguf_get_kv_type(ctx, arch), MINFER_GGUF_TYPE_STRING);
    EXPECT_EQ(minfer_gguf_get_val_u32(ctx, arch), 0u);
    EXPECT_STREQ(minfer_last_error_name(), "type_mismatch");
    EXPECT_NE(std::string(minfer_last_error_message()).find("general.architecture"), std::string::npos);
    EXPECT_EQ(minfer_gguf_get_arr_n(ctx, arch), 1u);  // ggml: a scalar counts one element
    EXPECT_STREQ(minfer_gguf_get_arr_str(ctx, arch, 0), minfer_gguf_get_val_str(ctx, arch));
    EXPECT_EQ(minfer_gguf_find_key(ctx, "no.such.key"), -1);
    EXPECT_STREQ(minfer_last_error_name(), "key_not_found");
    EXPECT_EQ(minfer_gguf_get_key(ctx, minfer_gguf_get_n_kv(ctx)), nullptr);
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_ID_OUT_OF_RANGE);
    const std::int64_t tokens = minfer_gguf_find_key(ctx, "tokenizer.ggml.tokens");
    if (tokens >= 0) {
        const std::size_t n = minfer_gguf_get_arr_n(ctx, tokens);
        EXPECT_NE(minfer_gguf_get_arr_str(ctx, tokens, n - 1), nullptr);
        EXPECT_EQ(minfer_gguf_get_arr_str(ctx, tokens, n), nullptr);
        EXPECT_STREQ(minfer_last_error_name(), "index_out_of_range");
        EXPECT_EQ(minfer_gguf_get_arr_data(ctx, tokens), nullptr);
    }
    const std::int64_t scores = minfer_gguf_find_key(ctx, "tokenizer.ggml.scores");
    if (scores >= 0) {  // values are copied 8-byte aligned: a C caller may cast to const float*
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(minfer_gguf_get_arr_data(ctx, scores)) % 8, 0u);
    }
    ASSERT_GT(minfer_gguf_get_n_tensors(ctx), 0);
    std::int64_t ne[4] = {};
    EXPECT_GE(minfer_tensor_shape(ctx, 0, ne), 1);
    EXPECT_EQ(ne[0] * ne[1] * ne[2] * ne[3], minfer_tensor_n_elements(ctx, 0));
    EXPECT_EQ(minfer_gguf_get_tensor_part(ctx, 0), 0);
    EXPECT_EQ(minfer_gguf_get_n_parts(ctx), 1);
    minfer_gguf_free(ctx);
    minfer_clear_error();
    minfer_gguf_free(ctx);  // twice: refused, not a double free
    EXPECT_EQ(minfer_last_error_code(), MINFER_ERROR_INVALID_HANDLE);
    EXPECT_EQ(minfer_gguf_get_n_tensors(ctx), 0);
}

TEST(CApiErrors, TypeNamesAreGgmls) {
    EXPECT_STREQ(minfer_gguf_type_name(MINFER_GGUF_TYPE_STRING), "str");
    EXPECT_STREQ(minfer_gguf_type_name(MINFER_GGUF_TYPE_ARRAY), "arr");
    EXPECT_STREQ(minfer_gguf_type_name(MINFER_GGUF_TYPE_FLOAT64), "f64");
    EXPECT_EQ(minfer_gguf_type_name(MINFER_GGUF_TYPE_COUNT), nullptr);
    EXPECT_EQ(minfer_gguf_type_name(static_cast<minfer_gguf_type>(-5)), nullptr);
}

}  // namespace

namespace {

// Arrays are copied on first use (minfer_c.cpp, data_of): threads asking for the same array at once
// must all get the one copy, whole.
TEST(CApiArrays, CopiedOnceOnFirstUseWhateverTheThreads) {
    const fs::path path = fs::temp_directory_path() / ("capi-arrays-" + std::to_string(::getpid()) + ".gguf");
    constexpr std::size_t n = 50000;
    std::vector<std::string> texts(n);
    std::vector<const char*> ptrs(n);
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i) {
        texts[i] = "token-" + std::to_string(i * 7919 % 100003);
        ptrs[i] = texts[i].c_str();
        values[i] = static_cast<float>(i) * 0.5f;
    }
    minfer_gguf_writer* w = minfer_writer_new();
    ASSERT_NE(w, nullptr);
    ASSERT_EQ(minfer_writer_set_str(w, "general.architecture", "llama"), 0);
    ASSERT_EQ(minfer_writer_set_arr_str(w, "tokenizer.ggml.tokens", ptrs.data(), n), 0);
    ASSERT_EQ(minfer_writer_set_arr_data(w, "tokenizer.ggml.scores", MINFER_GGUF_TYPE_FLOAT32, values.data(), n), 0);
    ASSERT_EQ(minfer_writer_write(w, path.c_str(), MINFER_WRITE_REPLACE, nullptr), 0) << minfer_last_error_message();
    minfer_writer_free(w);

    const minfer_gguf_init_params params{true, nullptr};
    minfer_gguf_context* ctx = minfer_gguf_init_from_file(path.c_str(), params);
    ASSERT_NE(ctx, nullptr) << minfer_last_error_message();
    const std::int64_t tokens = minfer_gguf_find_key(ctx, "tokenizer.ggml.tokens");
    const std::int64_t scores = minfer_gguf_find_key(ctx, "tokenizer.ggml.scores");
    constexpr int threads = 8;
    std::vector<std::vector<const char*>> seen(threads, std::vector<const char*>(n));
    std::vector<const void*> data(threads);
    std::vector<int> bad(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            data[static_cast<std::size_t>(t)] = minfer_gguf_get_arr_data(ctx, scores);
            for (std::size_t k = 0; k < n; ++k) {
                const std::size_t i = (k * 31 + static_cast<std::size_t>(t) * 977) % n;  // each thread its own order
                const char* s = minfer_gguf_get_arr_str(ctx, tokens, i);
                seen[static_cast<std::size_t>(t)][i] = s;
                if (s == nullptr || texts[i] != s) ++bad[static_cast<std::size_t>(t)];
            }
        });
    }
    for (std::thread& th : pool) th.join();
    for (int t = 0; t < threads; ++t) {
        EXPECT_EQ(bad[static_cast<std::size_t>(t)], 0) << "thread " << t;
        EXPECT_EQ(seen[static_cast<std::size_t>(t)], seen[0]) << "thread " << t << " got another copy";
        EXPECT_EQ(data[static_cast<std::size_t>(t)], data[0]);
    }
    ASSERT_NE(data[0], nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data[0]) % 8, 0u);  // ggml's callers cast it to float*
    EXPECT_EQ(std::memcmp(data[0], values.data(), n * sizeof(float)), 0);
    minfer_gguf_free(ctx);
    fs::remove(path);
}

}  // namespace

namespace {

// Every code the C API can record has a name through minfer_error_name (the one the C++ libraries
// give) and a row in docs/ERRORS.md; the C API's own domain (7) included, which no C++ test sees.
TEST(CApiErrors, EveryCodeIsNamedAndDocumented) {
    std::ifstream in(MINFER_ERRORS_MD);
    ASSERT_TRUE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    EXPECT_STREQ(minfer_error_name(0), "ok");
    EXPECT_EQ(minfer_error_name(-1), nullptr);
    EXPECT_EQ(minfer_error_name(0x10000), nullptr);
    EXPECT_EQ(minfer_error_name(0x07FF), nullptr);
    int named = 0, capi = 0;
    for (int code = 1; code <= 0xFFFF; ++code) {
        const char* name = minfer_error_name(code);
        if (name == nullptr) continue;
        ++named;
        if ((code >> 8) == 7) ++capi;
        EXPECT_NE(doc.find("| `" + std::string(name) + "` |"), std::string::npos) << "docs/ERRORS.md has no row for " << name;
        // The C++ libraries linked here (loader, writer, quantizer) name their codes the same.
        if ((code >> 8) <= 2) {
            EXPECT_EQ(std::string(name), std::string(gguf::to_string(static_cast<gguf::errc>(code))));
        }
    }
    EXPECT_EQ(capi, 6);
    EXPECT_GE(named, 70);  // 78 today: the loader's 57 with the shared ones, the writer's, the quantizer's, the C API's 6
    // The names of the C API's own codes are the header's.
    EXPECT_STREQ(minfer_error_name(MINFER_ERROR_INVALID_HANDLE), "invalid_handle");
    EXPECT_STREQ(minfer_error_name(MINFER_ERROR_CALLBACK_FAILED), "callback_failed");
}

}  // namespace
