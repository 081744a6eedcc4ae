#include "llama_memory.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace {

// The last values the interposed functions returned (the harness is single-threaded while it reads them).
std::uint64_t g_last_buffer_size = 0;
std::uint64_t g_last_sched_size = 0;
bool g_buffer_hook_called = false;
bool g_sched_hook_called = false;

void* real_symbol(const char* name) {
    const minfer::llama_ref::llama_lib* lib = minfer::llama_ref::llama_lib::get();
    if (lib == nullptr) return nullptr;
    void* h = ::dlopen(lib->path().c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    void* s = ::dlsym(h, name);
    ::dlclose(h);  // the binding keeps its own reference
    return s;
}

}  // namespace

// Interposed: libllama (and libggml) resolve these to the executable's definitions first.
extern "C" __attribute__((visibility("default"))) std::size_t ggml_backend_buffer_get_size(void* buffer) {
    static std::size_t (*real)(void*) = [] {
        std::size_t (*f)(void*) = nullptr;
        void* s = real_symbol("ggml_backend_buffer_get_size");
        std::memcpy(&f, &s, sizeof f);
        return f;
    }();
    if (real == nullptr) std::abort();  // cannot happen once the library is loaded
    const std::size_t n = real(buffer);
    g_last_buffer_size = n;
    g_buffer_hook_called = true;
    return n;
}

extern "C" __attribute__((visibility("default"))) std::size_t ggml_backend_sched_get_buffer_size(void* sched,
                                                                                                  void* backend) {
    static std::size_t (*real)(void*, void*) = [] {
        std::size_t (*f)(void*, void*) = nullptr;
        void* s = real_symbol("ggml_backend_sched_get_buffer_size");
        std::memcpy(&f, &s, sizeof f);
        return f;
    }();
    if (real == nullptr) std::abort();
    const std::size_t n = real(sched, backend);
    g_last_sched_size = n;
    g_sched_hook_called = true;
    return n;
}

namespace minfer::estimate_test {
namespace {

using minfer::llama_ref::llama_lib;

// Offsets in this build's llama_context_params (160 bytes), from its llama_context_default_params.
constexpr std::size_t off_n_ctx = 0x00, off_n_batch = 0x04, off_n_ubatch = 0x08, off_n_seq_max = 0x0c;
constexpr std::size_t off_flash_attn = 0x34, off_type_k = 0x68, off_type_v = 0x6c;
constexpr std::size_t off_swa_full = 0x84;  // bool, after embeddings, offload_kqv, no_perf, op_offload
static_assert(sizeof(minfer::llama_ref::llama_context_params) == 160);
static_assert(off_type_v + 4 <= sizeof(minfer::llama_ref::llama_context_params));

template <class T>
T get_at(const minfer::llama_ref::llama_context_params& p, std::size_t off) {
    T v;
    std::memcpy(&v, p.bytes + off, sizeof v);
    return v;
}
template <class T>
void set_at(minfer::llama_ref::llama_context_params& p, std::size_t off, T v) {
    std::memcpy(p.bytes + off, &v, sizeof v);
}

int ggml_type_of(const std::string& t) {
    static const std::pair<const char*, int> types[] = {{"f32", 0},  {"f16", 1},  {"q4_0", 2}, {"q4_1", 3},
                                                        {"q5_0", 6}, {"q5_1", 7}, {"q8_0", 8}, {"iq4_nl", 20},
                                                        {"bf16", 30}};
    for (const auto& [n, id] : types)
        if (t == n) return id;
    return -1;
}

struct collector {
    llama_memory_figures* f = nullptr;
};
collector g_collector;

double mib_after(const std::string& line, const char* key) {
    const auto p = line.find(key);
    if (p == std::string::npos) return -1;
    return std::strtod(line.c_str() + p + std::strlen(key), nullptr);
}

void on_log(int /*level*/, const char* text, void* /*user*/) {
    if (text == nullptr) return;
    if (std::getenv("MINFER_REFERENCE_VERBOSE") != nullptr) std::fputs(text, stderr);
    llama_memory_figures* f = g_collector.f;
    if (f == nullptr) return;
    const std::string line(text);
    if (f->log.size() < (1u << 20)) f->log += line;
    if (line.find("KV buffer size = ") != std::string::npos) {
        f->kv_bytes += g_last_buffer_size;
        f->kv_log_mib += mib_after(line, "KV buffer size = ");
        ++f->kv_lines;
    } else if (line.find("RS buffer size = ") != std::string::npos) {
        f->rs_bytes += g_last_buffer_size;
        f->rs_log_mib += mib_after(line, "RS buffer size = ");
        ++f->rs_lines;
    } else if (line.find(" CPU compute buffer size = ") != std::string::npos) {
        f->compute_bytes = g_last_sched_size;
        f->compute_log_mib = mib_after(line, "compute buffer size = ");
        ++f->compute_lines;
    } else if (line.find("flash_attn            = ") != std::string::npos) {
        const auto p = line.find("= ");
        f->flash_attn = line.substr(p + 2);
        while (!f->flash_attn.empty() && (f->flash_attn.back() == '\n' || f->flash_attn.back() == ' '))
            f->flash_attn.pop_back();
    }
    // "llama_kv_cache: size =    1.00 MiB (   256 cells,   4 layers,  1/1 seqs), K (f16):    0.50 MiB, V (f16):    0.50 MiB"
    if (line.find(" cells, ") != std::string::npos && line.find("K (") != std::string::npos) {
        const auto c = line.find('(');
        const std::uint64_t cells = std::strtoull(line.c_str() + c + 1, nullptr, 10);
        // With SWA (llama_kv_cache_iswa) the non-SWA cache is created first, then the SWA one.
        if (f->cells == 0) f->cells = cells;
        else f->swa_cells = cells;
        const auto k = line.find("K (");
        const auto k_end = line.find(')', k);
        f->k_type = line.substr(k + 3, k_end - k - 3);
        f->k_log_mib += mib_after(line, std::string("K (").append(f->k_type).append("): ").c_str());
        const auto v = line.find("V (");
        const auto v_end = line.find(')', v);
        f->v_type = line.substr(v + 3, v_end - v - 3);
        f->v_log_mib += mib_after(line, std::string("V (").append(f->v_type).append("): ").c_str());
    }
}

}  // namespace

std::optional<llama_memory_figures> llama_memory(const llama_lib& lib, const std::string& model_path,
                                                 const llama_memory_request& req, std::string& why) {
    const auto& a = lib.api();
    const std::string llama_path = (std::filesystem::path(lib.path()).parent_path() / "libllama.v0.5.0.so").string();
    void* h = ::dlopen(llama_path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
    if (h == nullptr) {
        why = std::string("libllama is not loaded (").append(llama_path).append(")");
        return std::nullopt;
    }
    auto sym_u32 = [&](const char* name) {
        std::uint32_t (*f)(const void*) = nullptr;
        void* s = ::dlsym(h, name);
        std::memcpy(&f, &s, sizeof f);
        return f;
    };
    const auto n_ctx_fn = sym_u32("llama_n_ctx");
    const auto n_batch_fn = sym_u32("llama_n_batch");
    const auto n_ubatch_fn = sym_u32("llama_n_ubatch");
    const auto n_seq_max_fn = sym_u32("llama_n_seq_max");
    ::dlclose(h);
    if (n_ctx_fn == nullptr || n_batch_fn == nullptr || n_ubatch_fn == nullptr || n_seq_max_fn == nullptr) {
        why = "libllama lacks llama_n_ctx / llama_n_batch / llama_n_ubatch / llama_n_seq_max";
        return std::nullopt;
    }

    minfer::llama_ref::llama_context_params cp = a.llama_context_default_params();
    // The defaults of this build at the offsets used: anything else means another layout.
    if (get_at<std::uint32_t>(cp, off_n_ctx) != 512 || get_at<std::uint32_t>(cp, off_n_batch) != 2048 ||
        get_at<std::uint32_t>(cp, off_n_ubatch) != 512 || get_at<std::uint32_t>(cp, off_n_seq_max) != 1 ||
        get_at<std::int32_t>(cp, off_flash_attn) != -1 || get_at<std::int32_t>(cp, off_type_k) != 1 ||
        get_at<std::int32_t>(cp, off_type_v) != 1 || get_at<std::uint8_t>(cp, off_swa_full) != 1) {
        why = "llama_context_default_params() does not have the expected defaults at the expected offsets "
              "(another llama.cpp version?)";
        return std::nullopt;
    }
    const int tk = ggml_type_of(req.cache_type_k), tv = ggml_type_of(req.cache_type_v);
    if (tk < 0 || tv < 0) {
        why = std::string("unknown cache type ").append(tk < 0 ? req.cache_type_k : req.cache_type_v);
        return std::nullopt;
    }
    const std::int32_t fa = req.flash_attn == "on" ? 1 : req.flash_attn == "off" ? 0 : -1;
    set_at<std::uint32_t>(cp, off_n_ctx, req.n_ctx);
    set_at<std::uint32_t>(cp, off_n_batch, req.n_batch);
    set_at<std::uint32_t>(cp, off_n_ubatch, req.n_ubatch);
    set_at<std::uint32_t>(cp, off_n_seq_max, req.n_seq_max);
    set_at<std::int32_t>(cp, off_flash_attn, fa);
    set_at<std::int32_t>(cp, off_type_k, tk);
    set_at<std::int32_t>(cp, off_type_v, tv);
    set_at<std::uint8_t>(cp, off_swa_full, req.swa_full ? 1 : 0);

    llama_memory_figures f;
    a.llama_log_set(on_log, nullptr);
    g_collector.f = &f;
    struct unhook {
        ~unhook() { g_collector.f = nullptr; }
    } guard_hook;

    minfer::llama_ref::llama_model* m = a.llama_model_load_from_file(model_path.c_str(), a.llama_model_default_params());
    if (m == nullptr) {
        why = std::string("llama_model_load_from_file('").append(model_path).append("') failed; llama.cpp said:\n").append(f.log);
        return std::nullopt;
    }
    struct model_free {
        const llama_lib* lib;
        void operator()(minfer::llama_ref::llama_model* p) const { lib->api().llama_model_free(p); }
    };
    std::unique_ptr<minfer::llama_ref::llama_model, model_free> model_guard(m, {&lib});
    f = llama_memory_figures{};  // the context's figures only (not the model's buffers)
    g_buffer_hook_called = g_sched_hook_called = false;
    minfer::llama_ref::llama_context* ctx = a.llama_init_from_model(m, cp);
    if (ctx == nullptr) {
        why = std::string("llama_init_from_model failed; llama.cpp said:\n").append(f.log);
        return std::nullopt;
    }
    struct ctx_free {
        const llama_lib* lib;
        void operator()(minfer::llama_ref::llama_context* c) const { lib->api().llama_free(c); }
    };
    std::unique_ptr<minfer::llama_ref::llama_context, ctx_free> ctx_guard(ctx, {&lib});
    f.n_ctx = n_ctx_fn(ctx);
    f.n_batch = n_batch_fn(ctx);
    f.n_ubatch = n_ubatch_fn(ctx);
    f.n_seq_max = n_seq_max_fn(ctx);
    if (!g_buffer_hook_called || !g_sched_hook_called) {
        why = "the interposed ggml_backend_buffer_get_size / ggml_backend_sched_get_buffer_size were not called "
              "(is the executable linked with ENABLE_EXPORTS?)";
        return std::nullopt;
    }
    if (req.decode_one) {
        a.llama_set_n_threads(ctx, 1, 1);
        std::int32_t tok = 1;
        f.decoded = a.llama_decode(ctx, a.llama_batch_get_one(&tok, 1)) == 0;
    }
    return f;
}

std::string to_json(const llama_memory_figures& f) {
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "{\"n_ctx\": %u, \"n_batch\": %u, \"n_ubatch\": %u, \"n_seq_max\": %u, \"flash_attn\": \"%s\", "
                  "\"k_type\": \"%s\", \"v_type\": \"%s\", \"kv_cells\": %llu, \"swa_cells\": %llu, "
                  "\"kv_cache_bytes\": %llu, \"recurrent_state_bytes\": %llu, \"compute_buffer_bytes\": %llu, "
                  "\"log_mib\": {\"kv\": %.2f, \"k\": %.2f, \"v\": %.2f, \"rs\": %.2f, \"compute\": %.2f}, "
                  "\"decoded\": %s}",
                  f.n_ctx, f.n_batch, f.n_ubatch, f.n_seq_max, f.flash_attn.c_str(), f.k_type.c_str(), f.v_type.c_str(),
                  static_cast<unsigned long long>(f.cells), static_cast<unsigned long long>(f.swa_cells),
                  static_cast<unsigned long long>(f.kv_bytes), static_cast<unsigned long long>(f.rs_bytes),
                  static_cast<unsigned long long>(f.compute_bytes), f.kv_log_mib, f.k_log_mib, f.v_log_mib,
                  f.rs_log_mib, f.compute_log_mib, f.decoded ? "true" : "false");
    return buf;
}

}  // namespace minfer::estimate_test
