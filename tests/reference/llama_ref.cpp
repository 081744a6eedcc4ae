#include "llama_ref.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace minfer::reference {

namespace {

// llama.cpp logs every refusal; collect the lines instead of letting them reach stderr.
std::string& log_buffer() {
    static std::string buf;
    return buf;
}
void collect_log(int /*level*/, const char* text, void* /*user*/) {
    if (text == nullptr) return;
    std::string& b = log_buffer();
    if (b.size() < 16384) b += text;
}

template <class F>
bool bind(void* handle, const char* name, F& out, std::string& missing) {
    void* sym = ::dlsym(handle, name);
    if (sym == nullptr) {
        missing += missing.empty() ? name : std::string(", ") + name;
        return false;
    }
    static_assert(sizeof(F) == sizeof(void*));
    std::memcpy(&out, &sym, sizeof out);  // object pointer to function pointer, without a cast warning
    return true;
}

// The fields of struct ggml_tensor this harness reads: int type; (pad); void* buffer; int64 ne[4];
// size_t nb[4]. Only used after check_layout() confirmed it on a tensor of known shape.
struct tensor_head {
    std::int32_t type;
    void* buffer;
    std::int64_t ne[4];
    std::size_t nb[4];
};

const tensor_head* head_of(const ggml_tensor* t) { return static_cast<const tensor_head*>(static_cast<const void*>(t)); }

}  // namespace

bool llama_lib::load(const std::string& path, std::string& why) {
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
        const char* e = ::dlerror();
        why = "llama.cpp reference library not available (cannot dlopen '" + path + "': " + (e ? e : "?") +
              "): differential test skipped";
        return false;
    }
    path_ = path;
    std::string missing;
    llama_api& a = api_;
#define MINFER_BIND(sym) bind(handle_, #sym, a.sym, missing)
    MINFER_BIND(gguf_init_from_file);
    MINFER_BIND(gguf_free);
    MINFER_BIND(gguf_get_version);
    MINFER_BIND(gguf_get_alignment);
    MINFER_BIND(gguf_get_data_offset);
    MINFER_BIND(gguf_get_n_kv);
    MINFER_BIND(gguf_get_key);
    MINFER_BIND(gguf_get_kv_type);
    MINFER_BIND(gguf_get_arr_type);
    MINFER_BIND(gguf_get_arr_n);
    MINFER_BIND(gguf_get_arr_data);
    MINFER_BIND(gguf_get_arr_str);
    MINFER_BIND(gguf_get_val_u8);
    MINFER_BIND(gguf_get_val_i8);
    MINFER_BIND(gguf_get_val_u16);
    MINFER_BIND(gguf_get_val_i16);
    MINFER_BIND(gguf_get_val_u32);
    MINFER_BIND(gguf_get_val_i32);
    MINFER_BIND(gguf_get_val_f32);
    MINFER_BIND(gguf_get_val_u64);
    MINFER_BIND(gguf_get_val_i64);
    MINFER_BIND(gguf_get_val_f64);
    MINFER_BIND(gguf_get_val_bool);
    MINFER_BIND(gguf_get_val_str);
    MINFER_BIND(gguf_get_n_tensors);
    MINFER_BIND(gguf_get_tensor_name);
    MINFER_BIND(gguf_get_tensor_type);
    MINFER_BIND(gguf_get_tensor_offset);
    MINFER_BIND(gguf_get_tensor_size);
    MINFER_BIND(gguf_get_tensor_ne);
    MINFER_BIND(gguf_init_empty);
    MINFER_BIND(gguf_set_val_u8);
    MINFER_BIND(gguf_set_val_i8);
    MINFER_BIND(gguf_set_val_u16);
    MINFER_BIND(gguf_set_val_i16);
    MINFER_BIND(gguf_set_val_u32);
    MINFER_BIND(gguf_set_val_i32);
    MINFER_BIND(gguf_set_val_f32);
    MINFER_BIND(gguf_set_val_u64);
    MINFER_BIND(gguf_set_val_i64);
    MINFER_BIND(gguf_set_val_f64);
    MINFER_BIND(gguf_set_val_bool);
    MINFER_BIND(gguf_set_val_str);
    MINFER_BIND(gguf_set_arr_data);
    MINFER_BIND(gguf_set_arr_str);
    MINFER_BIND(gguf_remove_key);
    MINFER_BIND(gguf_add_tensor);
    MINFER_BIND(gguf_set_tensor_data);
    MINFER_BIND(gguf_write_to_file);
    MINFER_BIND(ggml_init);
    MINFER_BIND(ggml_free);
    MINFER_BIND(ggml_new_tensor);
    MINFER_BIND(ggml_set_name);
    MINFER_BIND(ggml_get_name);
    MINFER_BIND(ggml_get_data);
    MINFER_BIND(ggml_get_first_tensor);
    MINFER_BIND(ggml_get_next_tensor);
    MINFER_BIND(ggml_get_tensor);
    MINFER_BIND(ggml_nelements);
    MINFER_BIND(ggml_nbytes);
    MINFER_BIND(ggml_n_dims);
    MINFER_BIND(ggml_blck_size);
    MINFER_BIND(ggml_type_size);
    MINFER_BIND(ggml_type_name);
    MINFER_BIND(ggml_tensor_overhead);
    MINFER_BIND(ggml_log_set);
#undef MINFER_BIND
    if (!missing.empty()) {
        why = "llama.cpp reference library '" + path + "' lacks symbols (" + missing + "): differential test skipped";
        return false;
    }
    a.ggml_log_set(collect_log, nullptr);

    // GGML_TYPE_COUNT: ggml_type_name() does not check its argument, so ask the reader instead: a
    // tensor of type 1000 is refused with "... invalid ggml type 1000. should be in [0, N)".
    {
        std::vector<unsigned char> f = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        1, 0, 0, 0, 0, 0, 0, 0, 't', 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
                                        0xe8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        f.resize(f.size() + 64);
        std::string tmpl = (std::filesystem::temp_directory_path() / "minfer-ref-probe-XXXXXX").string();
        const int fd = ::mkstemp(tmpl.data());
        if (fd >= 0) {
            const bool wrote = ::write(fd, f.data(), f.size()) == static_cast<ssize_t>(f.size());
            ::close(fd);
            (void)take_log();
            gguf_context* c = wrote ? a.gguf_init_from_file(tmpl.c_str(), {true, nullptr}) : nullptr;
            if (c != nullptr) a.gguf_free(c);
            const std::string log = take_log();
            ::unlink(tmpl.c_str());
            const auto p = log.find("should be in [0, ");
            if (p != std::string::npos) type_count_ = static_cast<std::uint32_t>(std::strtoul(log.c_str() + p + 17, nullptr, 10));
        }
        if (type_count_ == 0 || type_count_ > 1000) {
            why = "cannot learn GGML_TYPE_COUNT of '" + path + "': differential test skipped";
            return false;
        }
    }

    // Check the ggml_tensor layout on a q4_0 tensor of shape (64, 3, 5): ne and ggml's strides.
    ggml_context* g = a.ggml_init({4 * a.ggml_tensor_overhead(), nullptr, true});
    if (g != nullptr) {
        const std::int64_t ne[3] = {64, 3, 5};
        const ggml_tensor* t = a.ggml_new_tensor(g, 2, 3, ne);
        const tensor_head* h = t ? head_of(t) : nullptr;
        strides_readable_ = h != nullptr && h->type == 2 && h->ne[0] == 64 && h->ne[1] == 3 && h->ne[2] == 5 &&
                            h->ne[3] == 1 && h->nb[0] == 18 && h->nb[1] == 36 && h->nb[2] == 108 && h->nb[3] == 540 &&
                            a.ggml_nbytes(t) == 540;
        a.ggml_free(g);
    }
    return true;
}

namespace {
std::string& why_storage() {
    static std::string s;
    return s;
}
}  // namespace

const llama_lib* llama_lib::get() {
    static const llama_lib* lib = []() -> const llama_lib* {
        const char* env = std::getenv("MINFER_LLAMA_LIB");
        if (env == nullptr || *env == '\0') {
            why_storage() =
                "llama.cpp reference library not available (MINFER_LLAMA_LIB unset): differential test skipped";
            return nullptr;
        }
        static llama_lib l;
        if (!l.load(env, why_storage())) return nullptr;
        return &l;
    }();
    return lib;
}

const std::string& llama_lib::skip_reason() {
    (void)get();
    return why_storage();
}

bool llama_lib::knows_type(std::uint32_t id) const noexcept {
    return id < type_count_ && api_.ggml_blck_size(static_cast<int>(id)) > 0;
}

std::string llama_lib::take_log() const {
    std::string s = std::move(log_buffer());
    log_buffer().clear();
    return s;
}

namespace {
value read_value(const llama_api& a, const gguf_context* c, std::int64_t i) {
    value v;
    const int t = a.gguf_get_kv_type(c, i);
    v.type = static_cast<std::uint32_t>(t);
    v.elem = v.type;
    v.count = 1;
    auto put = [&v](const auto x) {
        const auto* p = reinterpret_cast<const std::byte*>(&x);
        v.fixed.assign(p, p + sizeof x);
    };
    switch (t) {
        case 0: put(a.gguf_get_val_u8(c, i)); break;
        case 1: put(a.gguf_get_val_i8(c, i)); break;
        case 2: put(a.gguf_get_val_u16(c, i)); break;
        case 3: put(a.gguf_get_val_i16(c, i)); break;
        case 4: put(a.gguf_get_val_u32(c, i)); break;
        case 5: put(a.gguf_get_val_i32(c, i)); break;
        case 6: put(a.gguf_get_val_f32(c, i)); break;
        case 7: put(static_cast<std::uint8_t>(a.gguf_get_val_bool(c, i) ? 1 : 0)); break;
        case 8: v.strings.emplace_back(a.gguf_get_val_str(c, i)); break;
        case 10: put(a.gguf_get_val_u64(c, i)); break;
        case 11: put(a.gguf_get_val_i64(c, i)); break;
        case 12: put(a.gguf_get_val_f64(c, i)); break;
        case 9: {
            v.elem = static_cast<std::uint32_t>(a.gguf_get_arr_type(c, i));
            v.count = a.gguf_get_arr_n(c, i);
            if (v.elem == 8) {
                for (std::size_t k = 0; k < v.count; ++k) v.strings.emplace_back(a.gguf_get_arr_str(c, i, k));
            } else {
                static constexpr std::size_t sizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
                const std::size_t n = v.count * (v.elem < 13 ? sizes[v.elem] : 0);
                const auto* p = static_cast<const std::byte*>(a.gguf_get_arr_data(c, i));
                if (n > 0 && p != nullptr) v.fixed.assign(p, p + n);
            }
            break;
        }
        default: break;  // an unknown tag cannot survive gguf_init_from_file; keep the tag only
    }
    return v;
}
}  // namespace

ref_verdict ref_read(const llama_lib& lib, const std::filesystem::path& path, bool read_data) {
    const llama_api& a = lib.api();
    ref_verdict r;
    (void)lib.take_log();
    ggml_context* g = nullptr;
    gguf_context* c = a.gguf_init_from_file(path.c_str(), {!read_data, &g});
    r.log = lib.take_log();
    if (c == nullptr) {
        if (g != nullptr) a.ggml_free(g);
        return r;
    }
    r.accepted = true;
    snapshot& s = r.content;
    s.version = a.gguf_get_version(c);
    s.alignment = a.gguf_get_alignment(c);
    s.data_offset = a.gguf_get_data_offset(c);
    const std::int64_t n_kv = a.gguf_get_n_kv(c);
    for (std::int64_t i = 0; i < n_kv; ++i) s.kvs.push_back({a.gguf_get_key(c, i), read_value(a, c, i)});
    const std::int64_t n_t = a.gguf_get_n_tensors(c);
    std::ostringstream notes;
    // The ggml context holds one ggml_tensor per table entry, in order (after the data blob when
    // the data was loaded): they must agree with the gguf_context's own view.
    const ggml_tensor* gt = g != nullptr ? a.ggml_get_first_tensor(g) : nullptr;
    if (read_data && gt != nullptr) gt = a.ggml_get_next_tensor(g, gt);  // "GGUF tensor data binary blob"
    for (std::int64_t i = 0; i < n_t; ++i) {
        tensor_entry t;
        t.name = a.gguf_get_tensor_name(c, i);
        t.type = static_cast<std::uint32_t>(a.gguf_get_tensor_type(c, i));
        const std::int64_t* ne = a.gguf_get_tensor_ne(c, i);
        for (std::size_t d = 0; d < 4; ++d) t.ne[d] = ne[d];
        if (lib.strides_readable()) {
            // gguf_get_tensor_ne points into a struct ggml_tensor: its nb[4] follows ne[4].
            const tensor_head* h = reinterpret_cast<const tensor_head*>(
                static_cast<const char*>(static_cast<const void*>(ne)) - offsetof(tensor_head, ne));
            t.nb = std::array<std::uint64_t, 4>{h->nb[0], h->nb[1], h->nb[2], h->nb[3]};
        }
        t.offset = a.gguf_get_tensor_offset(c, i);
        t.size = a.gguf_get_tensor_size(c, i);
        if (gt == nullptr) {
            notes << "ggml context lacks tensor " << i << "\n";
        } else {
            if (std::strcmp(a.ggml_get_name(gt), t.name.c_str()) != 0) notes << "ggml tensor " << i << " has another name\n";
            if (a.ggml_nbytes(gt) != t.size) notes << "ggml tensor " << i << " has another size\n";
            if (read_data) {
                const auto* p = static_cast<const std::byte*>(a.ggml_get_data(gt));
                r.data.emplace_back(p, p + (p != nullptr ? a.ggml_nbytes(gt) : 0));
            }
            gt = a.ggml_get_next_tensor(g, gt);
        }
        s.tensors.push_back(std::move(t));
    }
    r.notes = notes.str();
    a.gguf_free(c);
    if (g != nullptr) a.ggml_free(g);
    return r;
}

}  // namespace minfer::reference
