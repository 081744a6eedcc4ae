// The C API against llama.cpp's ggml (libggml-base.so from $MINFER_LLAMA_LIB, tests/support/llama_ref)
// beyond the real fixtures (test_capi.cpp):
//  - synthetic valid files (tests/reference/content.hpp's generator, written by our writer and by
//    ggml's own) printed by tests/capi/print_gguf.c built against minfer and against ggml: the same
//    output, and both open every file;
//  - the hostile corpus (mutants of those files: bit flips, overwritten length/count/offset fields,
//    truncations; and the loader's fuzz corpus, fuzz/corpus/parse): minfer's build ends normally on
//    every file (exit 0 or 1, never a signal: in the ASan build, never a sanitizer report), and where
//    both it and ggml open a mutant, both print the same;
//  - minfer_dequantize against ggml's to_float for every type ggml converts, bit for bit (random
//    blocks and blocks ggml's quantizer made), and minfer_quantize's counterpart lives in
//    test_capi_write.cpp.
// Reference parts skip loudly without the library and fail under MINFER_REQUIRE_REFERENCE=1; the
// hostile corpus of the fuzz directory runs without it.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "content.hpp"
#include "harness.hpp"
#include "llama_ref/llama_ref.hpp"
#include "minfer.h"
#include "run_program.hpp"
#include "minfer/gguf/types.hpp"
#include "mutate.hpp"

namespace fs = std::filesystem;
namespace gguf = minfer::gguf;
namespace lr = minfer::llama_ref;
namespace ref = minfer::reference;

namespace {

using minfer::capi_test::quoted;
using minfer::capi_test::run;
using minfer::capi_test::run_result;

std::string print_command(bool ggml, const std::string& lib, const std::vector<fs::path>& files) {
    std::string cmd = ggml ? std::string(CAPI_PRINT_GGML) + " " + quoted(lib) : std::string(CAPI_PRINT_MINFER);
    for (const fs::path& f : files) cmd += " " + quoted(f.string());
    return cmd + (ggml ? " 2>/dev/null" : "");
}

// The outputs of a multi-file run, split at its "file: PATH" lines: path -> that file's lines.
std::vector<std::pair<std::string, std::string>> per_file(const std::string& out) {
    std::vector<std::pair<std::string, std::string>> v;
    std::size_t pos = 0;
    while (pos < out.size()) {
        std::size_t eol = out.find('\n', pos);
        if (eol == std::string::npos) eol = out.size();
        const std::string line = out.substr(pos, eol - pos);
        if (line.rfind("file: ", 0) == 0)
            v.emplace_back(line.substr(6), std::string());
        else if (!v.empty())
            v.back().second += line + "\n";
        pos = eol + 1;
    }
    return v;
}

std::string first_difference(const std::string& a, const std::string& b) {
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    const std::size_t start = a.rfind('\n', i == 0 ? 0 : i - 1);
    const std::size_t s = start == std::string::npos ? 0 : start + 1;
    return "minfer: " + a.substr(s, 200) + "\nggml:   " + b.substr(s, 200);
}

#define REQUIRE_GGML(lib, parts)                                                                  \
    std::string lib##_why;                                                                         \
    const lr::llama_lib* lib = lr::llama_lib::require((parts), lib##_why);                         \
    if ((lib) == nullptr) {                                                                        \
        if (lr::llama_lib::configured()) FAIL() << lib##_why;                                      \
        MINFER_SKIP_REFERENCE(lib##_why);                                                          \
    }

// ---- synthetic valid files ----

TEST(CApiSynthetic, PrintsWhatGgmlPrintsOnValidFilesOfBothWriters) {
    REQUIRE_GGML(lib, lr::part::gguf_read | lr::part::gguf_write | lr::part::ggml_types | lr::part::type_count |
                          lr::part::log);
    ref::scratch_dir dir;
    const std::uint64_t n = std::min<std::uint64_t>(ref::run_files(), 200), seed = ref::run_seed();
    ref::generator_options opt;
    opt.p_noncanonical = 0.05;
    std::vector<fs::path> files;
    for (std::uint64_t i = 0; i < n; ++i) {
        std::mt19937_64 rng(ref::file_seed(seed, i));
        const ref::content c = ref::generate(rng, *lib, opt);
        std::string why;
        const fs::path ours = dir / ("ours-" + std::to_string(i) + ".gguf");
        const fs::path theirs = dir / ("ggml-" + std::to_string(i) + ".gguf");
        ASSERT_TRUE(ref::write_ours(c, ours, why)) << why;
        ASSERT_TRUE(ref::write_llama(*lib, c, theirs, /*alignment_workaround=*/true, why)) << why;
        files.push_back(ours);
        files.push_back(theirs);
    }
    const std::string path = lr::llama_lib::configured_library();
    const run_result mine = run(print_command(false, "", files));
    const run_result theirs = run(print_command(true, path, files));
    ASSERT_EQ(mine.status, 0) << "minfer's build refused a valid file or ended abnormally";
    ASSERT_EQ(theirs.status, 0) << "ggml's build refused a valid file or ended abnormally";
    const auto a = per_file(mine.out), b = per_file(theirs.out);
    ASSERT_EQ(a.size(), files.size());
    ASSERT_EQ(b.size(), files.size());
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].first, b[i].first);
        if (a[i].second == b[i].second)
            ++same;
        else
            ADD_FAILURE() << a[i].first << " (MINFER_DIFF_SEED=" << seed << "):\n" << first_difference(a[i].second, b[i].second);
    }
    std::printf("capi synthetic: %zu valid files (our writer and ggml's), %zu printed identically\n", files.size(), same);
}

// ---- the hostile corpus ----

TEST(CApiHostile, MutantsEndNormallyAndMatchGgmlWhereBothOpen) {
    REQUIRE_GGML(lib, lr::part::gguf_read | lr::part::gguf_write | lr::part::ggml_types | lr::part::type_count |
                          lr::part::log);
    ref::scratch_dir dir;
    const std::uint64_t n = std::min<std::uint64_t>(ref::run_files(), 60), per = ref::run_mutants(),
                        seed = ref::run_seed() + 1;
    std::vector<fs::path> files;
    for (std::uint64_t i = 0; i < n; ++i) {
        std::mt19937_64 rng(ref::file_seed(seed, i));
        const ref::content c = ref::generate(rng, *lib, {});
        const std::vector<std::byte> bytes = ref::write_ours(c);
        ASSERT_FALSE(bytes.empty());
        const ref::field_map map = ref::map_fields(bytes, c.alignment);
        for (std::uint64_t m = 0; m < per; ++m) {
            const ref::mutant mu = ref::mutate(rng, bytes, map);
            const fs::path p = dir / ("mutant-" + std::to_string(i) + "-" + std::to_string(m) + ".gguf");
            ref::write_bytes(p, mu.bytes);
            files.push_back(p);
        }
    }
    const run_result mine = run(print_command(false, "", files));
    ASSERT_TRUE(mine.status == 0 || mine.status == 1) << "minfer's build ended abnormally on the mutants";
    const auto outs = per_file(mine.out);
    ASSERT_EQ(outs.size(), files.size()) << "minfer's build stopped before the last mutant";
    // Where minfer opens a mutant, ggml is asked alone (it may abort on a hostile file): when it
    // opens it too, both must say the same.
    const std::string path = lr::llama_lib::configured_library();
    std::size_t opened = 0, both = 0, ggml_refused = 0;
    for (const auto& [file, out] : outs) {
        if (out == "refused\n") continue;
        ++opened;
        const run_result r = run(print_command(true, path, {fs::path(file)}));
        if (r.status != 0) {
            ++ggml_refused;  // the documented stricter/laxer classes are tests/reference's business
            continue;
        }
        ++both;
        EXPECT_EQ(out, r.out) << file << ":\n" << first_difference(out, r.out);
    }
    std::printf("capi hostile: %zu mutants, minfer opened %zu (ggml too: %zu, ggml refused or aborted: %zu), "
                "refused %zu, none ended abnormally\n",
                files.size(), opened, both, ggml_refused, files.size() - opened);
}

TEST(CApiHostile, FuzzCorpusEndsNormally) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(MINFER_FUZZ_CORPUS_DIR) / "parse", ec))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GT(files.size(), 100u) << "fuzz/corpus/parse is missing";
    const run_result mine = run(print_command(false, "", files));
    ASSERT_TRUE(mine.status == 0 || mine.status == 1) << "minfer's build ended abnormally on the fuzz corpus";
    const auto outs = per_file(mine.out);
    ASSERT_EQ(outs.size(), files.size()) << "minfer's build stopped early";
    std::size_t opened = 0;
    for (const auto& o : outs) opened += o.second != "refused\n";
    // The misuse mode on every file it opens: wrong types, ids out of range, freed handles.
    std::size_t misused = 0;
    for (const auto& [file, out] : outs) {
        if (out == "refused\n") continue;
        const run_result r = run(std::string(CAPI_PRINT_MINFER) + " --misuse " + quoted(file));
        EXPECT_EQ(r.status, 0) << file;
        misused += r.status == 0;
    }
    std::printf("capi fuzz corpus: %zu files, %zu opened (misuse mode ended normally on %zu), %zu refused\n",
                files.size(), opened, misused, files.size() - opened);
}

// ---- minfer_dequantize against ggml's to_float ----

std::uint32_t bits_of(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

TEST(CApiDequantize, EveryTypeBitForBitAsGgmlToFloat) {
    REQUIRE_GGML(lib, lr::part::type_traits | lr::part::type_count | lr::part::quantize_chunk | lr::part::q8_k |
                          lr::part::gguf_read | lr::part::log);
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    int types = 0;
    std::uint64_t values = 0;
    for (std::uint32_t id = 0; id < gguf::tensor_type_count; ++id) {
        const gguf::type_traits* t = gguf::traits(id);
        if (t == nullptr) continue;
        const lr::ggml_type_traits* theirs = lib->type_traits(id);
        lr::row_dequantize to_float = theirs != nullptr ? theirs->to_float : nullptr;
        if (id == static_cast<std::uint32_t>(gguf::tensor_type::q8_k)) to_float = lib->api().dequantize_row_q8_K;
        if (to_float == nullptr) continue;  // f32, f64 and the integers: ggml has no to_float (test_capi.cpp)
        const std::size_t blocks = 16;
        const auto n = static_cast<std::int64_t>(blocks * t->block_elems);
        // Random bytes (every bit pattern is a valid block), then blocks ggml's quantizer made from
        // normal values (realistic scales). Not for the codebook types (iq*): their quantizers' grid
        // set-up takes ggml seconds, and their blocks are indices into the grids that random bytes
        // already cover whole (tests/unit/test_quant_ggml.cpp converts quantized ones).
        std::vector<std::vector<unsigned char>> inputs(1, std::vector<unsigned char>(blocks * t->block_bytes));
        for (auto& b : inputs[0]) b = static_cast<unsigned char>(rng());
        if (!t->name.starts_with("iq") && !lib->api().ggml_quantize_requires_imatrix(static_cast<int>(id)) &&
            id != static_cast<std::uint32_t>(gguf::tensor_type::q8_k)) {
            std::vector<float> src(static_cast<std::size_t>(n));
            for (float& v : src) v = normal(rng);
            std::vector<unsigned char> q(blocks * t->block_bytes);
            lib->api().ggml_quantize_chunk(static_cast<int>(id), src.data(), q.data(), 0, 1, n, nullptr);
            inputs.push_back(std::move(q));
        }
        for (const auto& in : inputs) {
            std::vector<float> got(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(n));
            ASSERT_EQ(minfer_dequantize(static_cast<int>(id), in.data(), in.size(), got.data(), n), n)
                << t->name << ": " << minfer_last_error_message();
            to_float(in.data(), want.data(), n);
            for (std::size_t k = 0; k < got.size(); ++k) {
                if (bits_of(got[k]) == bits_of(want[k])) continue;  // NaNs too: the same payload
                ADD_FAILURE() << t->name << " value " << k << ": minfer 0x" << std::hex << bits_of(got[k]) << ", ggml 0x"
                              << bits_of(want[k]);
                break;
            }
            values += got.size();
        }
        ++types;
    }
    std::printf("capi dequantize vs ggml: %d types, %llu values equal bit for bit\n", types,
                static_cast<unsigned long long>(values));
    EXPECT_GE(types, 28);
}

}  // namespace
