#include "llama_ref.hpp"

#include <array>
#include <cstring>
#include <sstream>

namespace minfer::reference {

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
        // gguf_get_tensor_ne points into a struct ggml_tensor: its nb[4] follows ne[4].
        if (std::array<std::uint64_t, 4> nb{}; lib.strides_after_ne(ne, nb)) t.nb = nb;
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
