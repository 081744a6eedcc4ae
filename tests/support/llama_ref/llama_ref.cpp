#include "llama_ref.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>
#include <vector>

namespace minfer::llama_ref {

struct llama_lib::state {
    std::vector<std::pair<const char*, unsigned>> missing;  ///< symbol, its part
    std::once_flag type_count_once, strides_once, traits_once, params_once, llama_once, quant_params_once;
    std::uint32_t type_count = 0;
    bool strides_readable = false;
    bool traits_readable = false;
    bool params_sized = false;
    bool quant_params_ok = false;
    bool llama_ready = false;
    std::string llama_open_error;  ///< why libllama / libggml could not be opened ("" when they were)
};

namespace {

// llama.cpp logs every refusal; collect the lines instead of letting them reach stderr.
std::string& log_buffer() {
    static std::string buf;
    return buf;
}
bool log_verbose() {
    static const bool v = [] {
        const char* e = std::getenv("MINFER_REFERENCE_VERBOSE");
        return e != nullptr && *e != '\0';
    }();
    return v;
}
void collect_log(int /*level*/, const char* text, void* /*user*/) {
    if (text == nullptr) return;
    if (log_verbose()) std::fputs(text, stderr);
    std::string& b = log_buffer();
    if (b.size() < 16384) b += text;
}

// The fields of struct ggml_tensor read here: int type; (pad); void* buffer; int64 ne[4];
// size_t nb[4]. Only read after the layout was confirmed on a tensor of known shape.
struct tensor_head {
    std::int32_t type;
    void* buffer;
    std::int64_t ne[4];
    std::size_t nb[4];
};

const tensor_head* head_of(const void* t) { return static_cast<const tensor_head*>(t); }

std::string& why_storage() {
    static std::string s;
    return s;
}

const char* configured_path() {
    const char* path = std::getenv("MINFER_LLAMA_LIB");
#ifdef MINFER_LLAMA_LIB_DEFAULT
    if (path == nullptr || *path == '\0') path = MINFER_LLAMA_LIB_DEFAULT;
#endif
    return path != nullptr && *path != '\0' ? path : nullptr;
}

}  // namespace

llama_lib::llama_lib() : state_(std::make_unique<state>()) {}

llama_lib::~llama_lib() = default;  // the library stays loaded: its code may still be on the log path

bool llama_lib::configured() { return configured_path() != nullptr; }

std::string llama_lib::configured_library() {
    const char* p = configured_path();
    return p != nullptr ? std::string(p) : std::string();
}

const llama_lib* llama_lib::get() {
    static const llama_lib* lib = []() -> const llama_lib* {
        const char* path = configured_path();
        if (path == nullptr) {
            why_storage() =
                "llama.cpp reference library not available (MINFER_LLAMA_LIB unset; scripts/llama-ref.sh installs it "
                "and prints the path): skipped";
            return nullptr;
        }
        void* handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* e = ::dlerror();
            why_storage() = std::string("llama.cpp reference library not available (cannot dlopen '") + path +
                            "': " + (e != nullptr ? e : "?") + "): skipped";
            return nullptr;
        }
        static llama_lib l;
        l.handle_ = handle;
        l.path_ = path;
        llama_api& a = l.api_;
        void* from = handle;  // the library symbols are looked up in
        auto bind = [&](const char* name, auto& out, unsigned which) {
            void* sym = from != nullptr ? ::dlsym(from, name) : nullptr;
            if (sym == nullptr) {
                l.state_->missing.emplace_back(name, which);
                return;
            }
            static_assert(sizeof out == sizeof sym);
            std::memcpy(&out, &sym, sizeof out);  // object pointer to function pointer, as POSIX allows
        };
#define MINFER_BIND(sym, which) bind(#sym, a.sym, part::which)
        MINFER_BIND(gguf_init_from_file, gguf_read);
        MINFER_BIND(gguf_free, gguf_read);
        MINFER_BIND(gguf_get_version, gguf_read);
        MINFER_BIND(gguf_get_alignment, gguf_read);
        MINFER_BIND(gguf_get_data_offset, gguf_read);
        MINFER_BIND(gguf_get_n_kv, gguf_read);
        MINFER_BIND(gguf_get_key, gguf_read);
        MINFER_BIND(gguf_get_kv_type, gguf_read);
        MINFER_BIND(gguf_get_arr_type, gguf_read);
        MINFER_BIND(gguf_get_arr_n, gguf_read);
        MINFER_BIND(gguf_get_arr_data, gguf_read);
        MINFER_BIND(gguf_get_arr_str, gguf_read);
        MINFER_BIND(gguf_get_val_u8, gguf_read);
        MINFER_BIND(gguf_get_val_i8, gguf_read);
        MINFER_BIND(gguf_get_val_u16, gguf_read);
        MINFER_BIND(gguf_get_val_i16, gguf_read);
        MINFER_BIND(gguf_get_val_u32, gguf_read);
        MINFER_BIND(gguf_get_val_i32, gguf_read);
        MINFER_BIND(gguf_get_val_f32, gguf_read);
        MINFER_BIND(gguf_get_val_u64, gguf_read);
        MINFER_BIND(gguf_get_val_i64, gguf_read);
        MINFER_BIND(gguf_get_val_f64, gguf_read);
        MINFER_BIND(gguf_get_val_bool, gguf_read);
        MINFER_BIND(gguf_get_val_str, gguf_read);
        MINFER_BIND(gguf_get_n_tensors, gguf_read);
        MINFER_BIND(gguf_get_tensor_name, gguf_read);
        MINFER_BIND(gguf_get_tensor_type, gguf_read);
        MINFER_BIND(gguf_get_tensor_offset, gguf_read);
        MINFER_BIND(gguf_get_tensor_size, gguf_read);
        MINFER_BIND(gguf_get_tensor_ne, gguf_tensor_ne);
        MINFER_BIND(gguf_init_empty, gguf_write);
        MINFER_BIND(gguf_set_val_u8, gguf_write);
        MINFER_BIND(gguf_set_val_i8, gguf_write);
        MINFER_BIND(gguf_set_val_u16, gguf_write);
        MINFER_BIND(gguf_set_val_i16, gguf_write);
        MINFER_BIND(gguf_set_val_u32, gguf_write);
        MINFER_BIND(gguf_set_val_i32, gguf_write);
        MINFER_BIND(gguf_set_val_f32, gguf_write);
        MINFER_BIND(gguf_set_val_u64, gguf_write);
        MINFER_BIND(gguf_set_val_i64, gguf_write);
        MINFER_BIND(gguf_set_val_f64, gguf_write);
        MINFER_BIND(gguf_set_val_bool, gguf_write);
        MINFER_BIND(gguf_set_val_str, gguf_write);
        MINFER_BIND(gguf_set_arr_data, gguf_write);
        MINFER_BIND(gguf_set_arr_str, gguf_write);
        MINFER_BIND(gguf_remove_key, gguf_write);
        MINFER_BIND(gguf_add_tensor, gguf_write);
        MINFER_BIND(gguf_set_tensor_data, gguf_write);
        MINFER_BIND(gguf_write_to_file, gguf_write);
        MINFER_BIND(ggml_init, ggml_tensors);
        MINFER_BIND(ggml_free, ggml_tensors);
        MINFER_BIND(ggml_new_tensor, ggml_tensors);
        MINFER_BIND(ggml_set_name, ggml_tensors);
        MINFER_BIND(ggml_get_name, ggml_tensors);
        MINFER_BIND(ggml_get_data, ggml_tensors);
        MINFER_BIND(ggml_get_first_tensor, ggml_tensors);
        MINFER_BIND(ggml_get_next_tensor, ggml_tensors);
        MINFER_BIND(ggml_get_tensor, ggml_tensors);
        MINFER_BIND(ggml_nelements, ggml_tensors);
        MINFER_BIND(ggml_nbytes, ggml_tensors);
        MINFER_BIND(ggml_n_dims, ggml_tensors);
        MINFER_BIND(ggml_tensor_overhead, ggml_tensors);
        MINFER_BIND(ggml_blck_size, ggml_types);
        MINFER_BIND(ggml_type_size, ggml_types);
        MINFER_BIND(ggml_type_name, ggml_types);
        MINFER_BIND(ggml_log_set, log);
        MINFER_BIND(ggml_fp32_to_fp16, f16);
        MINFER_BIND(ggml_fp16_to_fp32, f16);
        MINFER_BIND(ggml_fp32_to_bf16, bf16);
        MINFER_BIND(ggml_bf16_to_fp32, bf16);
        MINFER_BIND(quantize_row_q4_0_ref, quant_ref);
        MINFER_BIND(quantize_row_q8_0_ref, quant_ref);
        MINFER_BIND(dequantize_row_q4_0, quant_ref);
        MINFER_BIND(dequantize_row_q8_0, quant_ref);
        MINFER_BIND(quantize_row_q8_K_ref, q8_k);
        MINFER_BIND(dequantize_row_q8_K, q8_k);
        MINFER_BIND(ggml_get_type_traits, type_traits);
        MINFER_BIND(ggml_quantize_chunk, quantize_chunk);
        MINFER_BIND(ggml_quantize_requires_imatrix, quantize_chunk);
        MINFER_BIND(ggml_validate_row_data, quantize_chunk);
        // libllama and libggml sit beside libggml-base; their RUNPATH ($ORIGIN) resolves libggml-base
        // to the copy already loaded (same soname).
        const std::filesystem::path dir = std::filesystem::path(path).parent_path();
        auto open_beside = [&](const char* name) -> void* {
            const std::string p = (dir / name).string();
            void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (h == nullptr) {
                const char* e = ::dlerror();
                if (!l.state_->llama_open_error.empty()) l.state_->llama_open_error += "; ";
                l.state_->llama_open_error += "cannot dlopen '" + p + "': " + (e != nullptr ? e : "?");
            }
            return h;
        };
        l.llama_handle_ = open_beside("libllama.v0.5.0.so");
        l.ggml_handle_ = open_beside("libggml.v0.5.0.so");
        from = l.llama_handle_;
        MINFER_BIND(llama_backend_init, llama_model);
        MINFER_BIND(llama_log_set, llama_model);
        MINFER_BIND(llama_model_default_params, llama_model);
        MINFER_BIND(llama_model_load_from_file, llama_model);
        MINFER_BIND(llama_model_free, llama_model);
        MINFER_BIND(llama_model_n_params, llama_model);
        MINFER_BIND(llama_model_size, llama_model);
        MINFER_BIND(llama_model_chat_template, llama_model);
        MINFER_BIND(llama_model_meta_count, llama_model);
        MINFER_BIND(llama_model_meta_val_str, llama_model);
        MINFER_BIND(llama_model_get_vocab, llama_model);
        MINFER_BIND(llama_vocab_n_tokens, llama_model);
        MINFER_BIND(llama_context_default_params, llama_model);
        MINFER_BIND(llama_init_from_model, llama_model);
        MINFER_BIND(llama_free, llama_model);
        MINFER_BIND(llama_set_n_threads, llama_model);
        MINFER_BIND(llama_n_threads, llama_model);
        MINFER_BIND(llama_batch_get_one, llama_model);
        MINFER_BIND(llama_decode, llama_model);
        MINFER_BIND(llama_get_logits_ith, llama_model);
        MINFER_BIND(llama_model_quantize_default_params, llama_quant);
        MINFER_BIND(llama_model_quantize, llama_quant);
        auto bind_as = [&](const char* mangled, auto& out) { bind(mangled, out, part::llama_quant); };
        bind_as("_Z16llama_quant_initPK11llama_modelPK27llama_model_quantize_params", a.llama_quant_init);
        bind_as("_Z16llama_quant_freeP19quantize_state_impl", a.llama_quant_free);
        bind_as("_Z31llama_quant_model_from_metadataPK22llama_quant_model_desc", a.llama_quant_model_from_metadata);
        bind_as("_Z38llama_quant_tensor_allows_quantizationPK19quantize_state_implPK11ggml_tensor",
                a.llama_quant_tensor_allows_quantization);
        bind_as("_Z25llama_quant_compute_typesP19quantize_state_impl11llama_ftypePP11ggml_tensorP9ggml_typem",
                a.llama_quant_compute_types);
        bind_as("_Z28llama_ftype_get_default_type11llama_ftype", a.llama_ftype_get_default_type);
        from = l.ggml_handle_;
        MINFER_BIND(ggml_backend_load_all_from_path, llama_model);
#undef MINFER_BIND
        if (a.ggml_log_set != nullptr) a.ggml_log_set(collect_log, nullptr);
        return &l;
    }();
    return lib;
}

const std::string& llama_lib::unavailable_reason() {
    (void)get();
    return why_storage();
}

const llama_lib* llama_lib::require(unsigned parts, std::string& why) {
    const llama_lib* lib = get();
    if (lib == nullptr) {
        why = why_storage();
        return nullptr;
    }
    const std::string lacks = lib->missing(parts);
    if (!lacks.empty()) {
        why = "llama.cpp reference library '" + lib->path_ + "' lacks " + lacks + ": skipped";
        return nullptr;
    }
    why.clear();
    return lib;
}

std::string llama_lib::missing(unsigned parts) const {
    std::string out;
    auto add = [&out](const char* what) {
        if (!out.empty()) out += ", ";
        out += what;
    };
    for (const auto& [name, which] : state_->missing)
        if ((parts & which) != 0) add(name);
    if ((parts & part::type_count) != 0 && type_count() == 0) add("GGML_TYPE_COUNT (cannot be learned)");
    if ((parts & part::llama_model) != 0) {
        if (!state_->llama_open_error.empty()) add(state_->llama_open_error.c_str());
        if (out.empty() && !llama_params_sized())
            add("llama_model_params/llama_context_params of the declared sizes (80/160 bytes; another llama.cpp version?)");
        if (out.empty() && !llama_ready()) add("llama backend initialisation");
    }
    if ((parts & part::llama_quant) != 0 && out.empty() && !quantize_params_checked())
        add("llama_model_quantize_params of the declared layout (another llama.cpp version?)");
    return out;
}

std::uint32_t llama_lib::type_count() const {
    std::call_once(state_->type_count_once, [this] {
        const llama_api& a = api_;
        if (a.gguf_init_from_file == nullptr || a.gguf_free == nullptr || a.ggml_log_set == nullptr) return;
        // One tensor "t" of type 1000, shape (1): refused with "... invalid ggml type 1000. should be in [0, N)".
        std::vector<unsigned char> f = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        1, 0, 0, 0, 0, 0, 0, 0, 't', 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
                                        0xe8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        f.resize(f.size() + 64);
        std::string tmpl = (std::filesystem::temp_directory_path() / "minfer-ref-probe-XXXXXX").string();
        const int fd = ::mkstemp(tmpl.data());
        if (fd < 0) return;
        const bool wrote = ::write(fd, f.data(), f.size()) == static_cast<ssize_t>(f.size());
        ::close(fd);
        const std::string before = take_log();
        gguf_context* c = wrote ? a.gguf_init_from_file(tmpl.c_str(), {true, nullptr}) : nullptr;
        if (c != nullptr) a.gguf_free(c);
        const std::string log = take_log();
        log_buffer() = before;  // the probe's lines are not the caller's
        ::unlink(tmpl.c_str());
        const auto p = log.find("should be in [0, ");
        if (p == std::string::npos) return;
        const unsigned long n = std::strtoul(log.c_str() + p + 17, nullptr, 10);
        if (n > 0 && n <= 1000) state_->type_count = static_cast<std::uint32_t>(n);
    });
    return state_->type_count;
}

bool llama_lib::knows_type(std::uint32_t id) const {
    return id < type_count() && api_.ggml_blck_size != nullptr && api_.ggml_blck_size(static_cast<int>(id)) > 0;
}

bool llama_lib::strides_readable() const {
    std::call_once(state_->strides_once, [this] {
        const llama_api& a = api_;
        if (!has(part::ggml_tensors)) return;
        // A q4_0 (type 2) tensor of shape (64, 3, 5): ne as given, nb = 18, 36, 108, 540.
        ggml_context* g = a.ggml_init({4 * a.ggml_tensor_overhead(), nullptr, true});
        if (g == nullptr) return;
        const std::int64_t ne[3] = {64, 3, 5};
        const ggml_tensor* t = a.ggml_new_tensor(g, 2, 3, ne);
        const tensor_head* h = t != nullptr ? head_of(t) : nullptr;
        state_->strides_readable = h != nullptr && h->type == 2 && h->ne[0] == 64 && h->ne[1] == 3 && h->ne[2] == 5 &&
                                   h->ne[3] == 1 && h->nb[0] == 18 && h->nb[1] == 36 && h->nb[2] == 108 &&
                                   h->nb[3] == 540 && a.ggml_nbytes(t) == 540;
        a.ggml_free(g);
    });
    return state_->strides_readable;
}

bool llama_lib::strides_after_ne(const std::int64_t* ne, std::array<std::uint64_t, 4>& nb) const {
    if (ne == nullptr || !strides_readable()) return false;
    const tensor_head* h = head_of(static_cast<const char*>(static_cast<const void*>(ne)) - offsetof(tensor_head, ne));
    nb = {h->nb[0], h->nb[1], h->nb[2], h->nb[3]};
    return true;
}

const ggml_type_traits* llama_lib::type_traits(std::uint32_t id) const {
    std::call_once(state_->traits_once, [this] {
        if (api_.ggml_get_type_traits == nullptr || type_count() <= 2) return;
        const ggml_type_traits* q = api_.ggml_get_type_traits(2);
        state_->traits_readable = q != nullptr && q->type_name != nullptr && std::strcmp(q->type_name, "q4_0") == 0 &&
                                  q->blck_size == 32 && q->type_size == 18 && q->is_quantized;
    });
    if (!state_->traits_readable || id >= type_count()) return nullptr;
    return api_.ggml_get_type_traits(static_cast<int>(id));
}

bool llama_lib::llama_params_sized() const {
    std::call_once(state_->params_once, [this] {
        const llama_api& a = api_;
        if (a.llama_model_default_params == nullptr || a.llama_context_default_params == nullptr) return;
        // A struct returned in memory (x86-64 System V: larger than 16 bytes) is written by the callee
        // through a pointer passed as a hidden first argument, which it returns: called that way on a
        // 512-byte buffer, twice with different fillings, a byte differing from the filling in either
        // run was written. The last byte written must be in the last 8 of the declared size: nothing
        // past it (the struct is not larger) and something in its last word (not smaller).
        auto last_written = [](void* fn) {
#if defined(__x86_64__)
            void* (*f)(void*) = nullptr;
            std::memcpy(&f, &fn, sizeof f);
            alignas(16) unsigned char r1[512], r2[512];
            std::memset(r1, 0xaa, sizeof r1);
            std::memset(r2, 0x55, sizeof r2);
            (void)f(r1);
            (void)f(r2);
            int last = -1;
            for (int i = 0; i < 512; ++i)
                if (r1[i] != 0xaa || r2[i] != 0x55) last = i;
            return last;
#else
            (void)fn;
            return -1;  // the sizes were learned on x86-64 only
#endif
        };
        void* mp = nullptr;
        void* cp = nullptr;
        std::memcpy(&mp, &a.llama_model_default_params, sizeof mp);
        std::memcpy(&cp, &a.llama_context_default_params, sizeof cp);
        const int m = last_written(mp);
        const int c = last_written(cp);
        constexpr int ms = sizeof(llama_model_params);
        constexpr int cs = sizeof(llama_context_params);
        state_->params_sized = m >= ms - 8 && m < ms && c >= cs - 8 && c < cs;
    });
    return state_->params_sized;
}

bool llama_lib::quantize_params_checked() const {
    std::call_once(state_->quant_params_once, [this] {
        const llama_api& a = api_;
        if (a.llama_model_quantize_default_params == nullptr) return;
#if defined(__x86_64__)
        // Returned in memory like the other parameter structs: see llama_params_sized().
        void* (*f)(void*) = nullptr;
        std::memcpy(&f, &a.llama_model_quantize_default_params, sizeof f);
        alignas(16) unsigned char r1[256], r2[256];
        std::memset(r1, 0xaa, sizeof r1);
        std::memset(r2, 0x55, sizeof r2);
        (void)f(r1);
        (void)f(r2);
        int last = -1;
        for (int i = 0; i < 256; ++i)
            if (r1[i] != 0xaa || r2[i] != 0x55) last = i;
        if (last < 56 || last >= static_cast<int>(sizeof(llama_model_quantize_params))) return;
        const llama_model_quantize_params p = a.llama_model_quantize_default_params();
        const auto n = static_cast<std::int32_t>(type_count());
        state_->quant_params_ok = p.ftype == 7 && p.output_tensor_type == n && p.token_embedding_type == n &&
                                  n > 0 && p.quantize_output_tensor && !p.allow_requantize && !p.only_copy &&
                                  !p.pure && !p.keep_split && !p.dry_run && p.imatrix == nullptr &&
                                  p.kv_overrides == nullptr && p.tt_overrides == nullptr && p.prune_layers == nullptr;
#endif
    });
    return state_->quant_params_ok;
}

bool llama_lib::llama_ready() const {
    std::call_once(state_->llama_once, [this] {
        const llama_api& a = api_;
        for (const auto& [name, which] : state_->missing)
            if (which == part::llama_model) return;
        if (!state_->llama_open_error.empty() || !llama_params_sized()) return;
        a.llama_log_set(collect_log, nullptr);
        // The CPU backends are separate libraries (one per instruction set); llama.cpp picks the best.
        a.ggml_backend_load_all_from_path(std::filesystem::path(path_).parent_path().c_str());
        a.llama_backend_init();
        state_->llama_ready = true;
    });
    return state_->llama_ready;
}

std::string llama_lib::take_log() const {
    std::string s = std::move(log_buffer());
    log_buffer().clear();
    return s;
}

}  // namespace minfer::llama_ref
