// `minfer estimate` against llama.cpp itself: for each synthetic architecture model (arch_models.hpp),
// three context sizes and two cache types, llama.cpp's own KV cache (+ recurrent state) buffer bytes
// must equal the estimate's kv_cache_bytes exactly, and its CPU compute buffer be within 10 % of
// cpu_only.cpu.compute_buffer_bytes. The harness itself is tested first: every model loads, decodes a
// token and allocates a KV cache (or recurrent state), the exact bytes agree with the MiB figures
// llama.cpp logs, and the context parameters read back as set. Skipped, saying why, when the library
// is not available (MINFER_LLAMA_LIB) or the binary has no `estimate` command.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "arch_models.hpp"
#include "llama_memory.hpp"

namespace minfer::estimate_test {
namespace {

namespace fs = std::filesystem;
namespace part = minfer::llama_ref::part;

const fs::path& model_dir() {
    static const fs::path d = [] {
        std::string tmpl = (fs::temp_directory_path() / "minfer-estimate-llama-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        return fs::path(tmpl);
    }();
    return d;
}
struct cleanup {
    ~cleanup() {
        std::error_code ec;
        if (!model_dir().empty()) fs::remove_all(model_dir(), ec);
    }
};

// The model of `arch`, written once per process.
const fs::path& model_of(const std::string& arch) {
    static cleanup c;
    static std::map<std::string, fs::path> made;
    auto it = made.find(arch);
    if (it != made.end()) return it->second;
    const fs::path p = model_dir() / (arch + ".gguf");
    auto r = make_arch_model(arch, p);
    if (!r) throw std::runtime_error(std::string("make_arch_model(").append(arch).append("): ").append(r.error().message()));
    return made.emplace(arch, p).first->second;
}

const minfer::llama_ref::llama_lib* ready_lib(std::string& why) {
    const minfer::llama_ref::llama_lib* lib = minfer::llama_ref::llama_lib::require(part::llama_model, why);
    if (lib != nullptr && !lib->llama_ready()) {
        why = "llama backend could not be initialised: skipped";
        return nullptr;
    }
    return lib;
}

#define REQUIRE_LLAMA(lib)                          \
    std::string lib##_why;                          \
    const auto* lib = ready_lib(lib##_why);         \
    if ((lib) == nullptr) MINFER_SKIP_REFERENCE(lib##_why)

// The MiB figure llama.cpp logs (%8.2f) of `bytes`.
double logged_mib(std::uint64_t bytes) { return std::round(static_cast<double>(bytes) / 1048576.0 * 100.0) / 100.0; }

class Arch : public ::testing::TestWithParam<std::string> {};

TEST_P(Arch, LlamaLoadsDecodesAndAllocates) {
    REQUIRE_LLAMA(lib);
    llama_memory_request req;
    req.n_ctx = 256;
    req.n_ubatch = 256;
    std::string why;
    const auto f = llama_memory(*lib, model_of(GetParam()).string(), req, why);
    ASSERT_TRUE(f.has_value()) << why;
    EXPECT_TRUE(f->decoded) << f->log;
    EXPECT_EQ(f->n_ctx, 256u);
    EXPECT_EQ(f->n_ubatch, 256u);
    EXPECT_EQ(f->n_seq_max, 1u);
    if (GetParam() == "mamba") {
        EXPECT_GT(f->rs_bytes, 0u) << f->log;
        EXPECT_EQ(f->rs_lines, 1);
    } else {
        EXPECT_GT(f->kv_bytes, 0u) << f->log;
        EXPECT_GE(f->kv_lines, 1);
        EXPECT_EQ(f->k_type, "f16");
        EXPECT_EQ(f->v_type, "f16");
    }
    EXPECT_GT(f->compute_bytes, 0u);
    EXPECT_EQ(f->compute_lines, 1);
    // The exact bytes read through the interposed functions are the ones the log rounds.
    if (f->kv_lines == 1) {
        EXPECT_DOUBLE_EQ(logged_mib(f->kv_bytes), f->kv_log_mib) << f->kv_bytes;
    }
    if (f->rs_lines == 1) {
        EXPECT_DOUBLE_EQ(logged_mib(f->rs_bytes), f->rs_log_mib) << f->rs_bytes;
    }
    EXPECT_DOUBLE_EQ(logged_mib(f->compute_bytes), f->compute_log_mib) << f->compute_bytes;
}

INSTANTIATE_TEST_SUITE_P(EstimateLlama, Arch, ::testing::ValuesIn(arch_names()),
                         [](const auto& param_info) {
                             std::string n = param_info.param;
                             for (char& c : n)
                                 if (c == '-') c = '_';
                             return n;
                         });

// The harness's exact bytes against sizes computed by hand. llama: 4 layers, 2 KV heads of 32: 256 K
// values per cell and as many V; f16 2 bytes each (1024 bytes per cell), q8_0 34 bytes per 32 values
// (544 bytes per cell). llama.cpp pads n_ctx up to a multiple of 256 (1000 -> 1024 cells).
TEST(EstimateLlamaHarness, LlamaKvBytesByHand) {
    REQUIRE_LLAMA(lib);
    const std::pair<std::uint32_t, std::uint32_t> ctx_cells[] = {{256, 256}, {1000, 1024}, {4096, 4096}};
    for (const auto& [ctx, cells] : ctx_cells) {
        for (const char* type : {"f16", "q8_0"}) {
            llama_memory_request req;
            req.n_ctx = ctx;
            req.cache_type_k = req.cache_type_v = type;
            req.decode_one = false;
            std::string why;
            const auto f = llama_memory(*lib, model_of("llama").string(), req, why);
            ASSERT_TRUE(f.has_value()) << why;
            EXPECT_EQ(f->n_ctx, cells) << ctx;
            EXPECT_EQ(f->cells, cells) << ctx;
            const std::uint64_t per_cell = std::string(type) == "f16" ? 1024 : 544;
            EXPECT_EQ(f->kv_bytes, per_cell * cells) << "ctx " << ctx << " " << type << "\n" << f->log;
        }
    }
}

// deepseek2 with MLA caches K only: kv_lora_rank 64 + n_rot 32 = 96 values per cell and layer, 4
// layers, f16: 768 bytes per cell. mamba: per layer a conv state (d_conv - 1) * d_inner = 3 * 256 and
// an SSM state d_state * d_inner = 16 * 256 f32 values for the one sequence: 4 * 4864 * 4 = 77824 bytes.
TEST(EstimateLlamaHarness, MlaAndRecurrentBytesByHand) {
    REQUIRE_LLAMA(lib);
    llama_memory_request req;
    req.n_ctx = 1000;
    req.decode_one = false;
    std::string why;
    const auto d = llama_memory(*lib, model_of("deepseek2").string(), req, why);
    ASSERT_TRUE(d.has_value()) << why;
    EXPECT_EQ(d->kv_bytes, 768u * 1024u) << d->log;
    const auto m = llama_memory(*lib, model_of("mamba").string(), req, why);
    ASSERT_TRUE(m.has_value()) << why;
    EXPECT_EQ(m->kv_bytes, 0u);
    EXPECT_EQ(m->rs_bytes, 77824u) << m->log;
}

// gemma2 (window 128, every other layer SWA): with swa_full off the SWA cache holds the window plus
// a ubatch, padded to 256: 128 + 512 -> 768 cells; with llama.cpp's default (swa_full on), all 4096.
TEST(EstimateLlamaHarness, SlidingWindowCells) {
    REQUIRE_LLAMA(lib);
    llama_memory_request req;
    req.n_ctx = 4096;
    req.decode_one = false;
    req.swa_full = false;
    std::string why;
    const auto f = llama_memory(*lib, model_of("gemma2").string(), req, why);
    ASSERT_TRUE(f.has_value()) << why;
    EXPECT_EQ(f->cells, 4096u) << f->log;
    EXPECT_EQ(f->swa_cells, 768u) << f->log;
    // 2 full layers * 4096 cells + 2 SWA layers * 768 cells, 2 KV heads of 32, K and V f16.
    EXPECT_EQ(f->kv_bytes, (2u * 4096u + 2u * 768u) * 2u * 32u * 2u * 2u);
    req.swa_full = true;
    const auto full = llama_memory(*lib, model_of("gemma2").string(), req, why);
    ASSERT_TRUE(full.has_value()) << why;
    EXPECT_EQ(full->swa_cells, 4096u) << full->log;
}

// openelm's per-layer KV heads 1, 2, 2, 4 of 32: (1+2+2+4) * 32 = 288 K values per cell and as many
// V, f16: 1152 bytes per cell.
TEST(EstimateLlamaHarness, PerLayerKvHeadsByHand) {
    REQUIRE_LLAMA(lib);
    llama_memory_request req;
    req.n_ctx = 1000;
    req.decode_one = false;
    std::string why;
    const auto f = llama_memory(*lib, model_of("openelm").string(), req, why);
    ASSERT_TRUE(f.has_value()) << why;
    EXPECT_EQ(f->kv_bytes, 1152u * 1024u) << f->log;
}

// The parameters set at their offsets are the ones the context reports.
TEST(EstimateLlamaHarness, ParametersReadBack) {
    REQUIRE_LLAMA(lib);
    llama_memory_request req;
    req.n_ctx = 1000;
    req.n_batch = 512;
    req.n_ubatch = 128;
    req.n_seq_max = 2;
    req.cache_type_k = "q8_0";
    req.cache_type_v = "q8_0";
    req.flash_attn = "on";
    req.decode_one = false;
    std::string why;
    const auto f = llama_memory(*lib, model_of("qwen2").string(), req, why);
    ASSERT_TRUE(f.has_value()) << why;
    EXPECT_EQ(f->n_ctx, 1024u);  // padded to a multiple of 256
    EXPECT_EQ(f->n_batch, 512u);
    EXPECT_EQ(f->n_ubatch, 128u);
    EXPECT_EQ(f->n_seq_max, 2u);
    EXPECT_EQ(f->k_type, "q8_0");
    EXPECT_EQ(f->v_type, "q8_0");
    EXPECT_EQ(f->flash_attn, "enabled") << f->log;
}

// --- the comparison with `minfer estimate` ------------------------------------------------------

struct command_result {
    int rc = -1;
    std::string out;
};

command_result run_minfer(const std::string& args) {
    command_result r;
    const std::string cmd = std::string("'").append(MINFER_EXE).append("' ").append(args).append(" 2>/dev/null");
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = ::pclose(p);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

// `minfer estimate --help` succeeds and describes the estimate's options (an unknown subcommand's
// --help prints the main help, also with status 0).
bool estimate_exists() {
    static const bool yes = [] {
        const command_result r = run_minfer("estimate --help");
        return r.rc == 0 && r.out.find("--cache-type-k") != std::string::npos;
    }();
    return yes;
}

// The number after "key": at or after `from` in `json` (no JSON library: the keys are unique enough).
std::optional<std::uint64_t> number_after(const std::string& json, const std::string& key, std::size_t from = 0) {
    const auto p = json.find(std::string("\"").append(key).append("\""), from);
    if (p == std::string::npos) return std::nullopt;
    const auto colon = json.find(':', p);
    if (colon == std::string::npos) return std::nullopt;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(json.c_str() + colon + 1, &end, 10);
    if (end == json.c_str() + colon + 1) return std::nullopt;
    return v;
}

TEST_P(Arch, EstimateMatchesLlama) {
    REQUIRE_LLAMA(lib);
    if (!estimate_exists()) GTEST_SKIP() << "`minfer estimate --help` fails or lacks --cache-type-k: no estimate command in this "
                                       "build: skipped";
    const std::string model = model_of(GetParam()).string();
    for (std::uint32_t ctx : {256u, 1000u, 4096u}) {
        for (const char* type : {"f16", "q8_0"}) {
            SCOPED_TRACE(GetParam() + " ctx " + std::to_string(ctx) + " cache " + type);
            llama_memory_request req;
            req.n_ctx = ctx;
            req.cache_type_k = type;
            req.cache_type_v = type;
            req.decode_one = false;
            req.swa_full = false;  // as llama-server and llama-cli, and `minfer estimate`
            std::string why;
            const auto f = llama_memory(*lib, model, req, why);
            ASSERT_TRUE(f.has_value()) << why;
            const command_result e = run_minfer(std::string("estimate '").append(model).append("' --ctx ").append(std::to_string(ctx))
                                                    .append(" --cache-type-k ").append(type).append(" --cache-type-v ")
                                                    .append(type).append(" --json"));
            ASSERT_EQ(e.rc, 0) << e.out;
            // openelm (the per-layer KV heads model) is beyond the ten architectures the issue names:
            // compared once the estimate knows it, skipped loudly until then.
            if (GetParam() == "openelm" && e.out.find("\"architecture_known\": false") != std::string::npos)
                GTEST_SKIP() << "minfer estimate does not know openelm (architecture_known false): skipped";
            const auto kv = number_after(e.out, "kv_cache_bytes");
            ASSERT_TRUE(kv.has_value()) << e.out;
            EXPECT_EQ(*kv, f->kv_bytes + f->rs_bytes) << "llama.cpp: KV " << f->kv_bytes << " + RS " << f->rs_bytes
                                                      << "\nestimate: " << e.out;
            const auto cpu = e.out.find("\"cpu_only\"");
            ASSERT_NE(cpu, std::string::npos) << e.out;
            const auto compute = number_after(e.out, "compute_buffer_bytes", cpu);
            ASSERT_TRUE(compute.has_value()) << e.out;
            const double ratio = static_cast<double>(*compute) / static_cast<double>(f->compute_bytes);
            EXPECT_NEAR(ratio, 1.0, 0.10) << "estimate " << *compute << ", llama.cpp " << f->compute_bytes;
        }
    }
}

// The other options, on a dense and a SWA model: flash attention off (a full KQ matrix in the compute
// buffer), several sequences, a smaller ubatch and batch.
TEST(EstimateLlamaOptions, EstimateMatchesLlama) {
    REQUIRE_LLAMA(lib);
    if (!estimate_exists()) GTEST_SKIP() << "`minfer estimate --help` fails or lacks --cache-type-k: no estimate command in this "
                                            "build: skipped";
    struct variant {
        const char* args;
        std::uint32_t n_batch, n_ubatch, n_seq_max;
        const char* flash_attn;
    };
    const variant variants[] = {{"--flash-attn off", 2048, 512, 1, "off"},
                                {"--parallel 4", 2048, 512, 4, "auto"},
                                {"--batch 256 --ubatch 128", 256, 128, 1, "auto"},
                                {"--ubatch 256 --parallel 2 --cache-type-k q8_0 --cache-type-v q8_0", 2048, 256, 2, "auto"}};
    for (const char* arch : {"qwen2", "gemma2"}) {
        const std::string model = model_of(arch).string();
        for (const variant& v : variants) {
            SCOPED_TRACE(std::string(arch) + " ctx 4096 " + v.args);
            llama_memory_request req;
            req.n_ctx = 4096;
            req.n_batch = v.n_batch;
            req.n_ubatch = v.n_ubatch;
            req.n_seq_max = v.n_seq_max;
            req.flash_attn = v.flash_attn;
            if (std::string(v.args).find("q8_0") != std::string::npos) req.cache_type_k = req.cache_type_v = "q8_0";
            req.decode_one = false;
            req.swa_full = false;
            std::string why;
            const auto f = llama_memory(*lib, model, req, why);
            ASSERT_TRUE(f.has_value()) << why;
            const command_result e = run_minfer(std::string("estimate '").append(model).append("' --ctx 4096 ").append(v.args).append(" --json"));
            ASSERT_EQ(e.rc, 0) << e.out;
            const auto kv = number_after(e.out, "kv_cache_bytes");
            ASSERT_TRUE(kv.has_value()) << e.out;
            EXPECT_EQ(*kv, f->kv_bytes + f->rs_bytes) << "estimate: " << e.out;
            const auto cpu = e.out.find("\"cpu_only\"");
            ASSERT_NE(cpu, std::string::npos) << e.out;
            const auto compute = number_after(e.out, "compute_buffer_bytes", cpu);
            ASSERT_TRUE(compute.has_value()) << e.out;
            EXPECT_NEAR(static_cast<double>(*compute) / static_cast<double>(f->compute_bytes), 1.0, 0.10)
                << "estimate " << *compute << ", llama.cpp " << f->compute_bytes;
        }
    }
}

}  // namespace
}  // namespace minfer::estimate_test
