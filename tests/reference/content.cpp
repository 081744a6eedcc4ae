#include "content.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <span>
#include <string_view>

#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::reference {

namespace gg = minfer::gguf;

namespace {

constexpr std::uint32_t tag_string = 8;
constexpr std::uint32_t tag_array = 9;
constexpr std::uint32_t fixed_size(std::uint32_t t) {
    constexpr std::uint32_t sizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < 13 ? sizes[t] : 0;
}
constexpr std::uint64_t pad(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

std::uint64_t below(std::mt19937_64& rng, std::uint64_t n) { return n == 0 ? 0 : rng() % n; }
bool chance(std::mt19937_64& rng, double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p; }

// A few multi-byte UTF-8 characters (2, 3 and 4 bytes).
constexpr std::string_view utf8_chars[] = {"\xc3\xa9", "\xc3\x9f", "\xce\xbb", "\xd0\x96", "\xe4\xb8\xad",
                                           "\xe2\x82\xac", "\xe3\x81\x82", "\xf0\x9f\x99\x82", "\xf0\x9f\xa6\x99"};
constexpr std::string_view words[] = {"general", "llama", "qwen2", "tokenizer", "ggml", "name", "context_length",
                                      "block_count", "attention", "head_count", "rope", "freq_base", "tokens",
                                      "scores", "merges", "bos_token_id", "chat_template", "expert", "vocab"};

// Up to `max_bytes` bytes of text: ASCII, UTF-8, or (raw) any byte but NUL (C strings on llama's side).
std::string random_text(std::mt19937_64& rng, std::size_t min_bytes, std::size_t max_bytes) {
    const std::size_t want = min_bytes + static_cast<std::size_t>(below(rng, max_bytes - min_bytes + 1));
    std::string s;
    const auto style = below(rng, 10);
    while (s.size() < want) {
        if (style < 5) {
            s += static_cast<char>(0x20 + below(rng, 0x5f));  // printable ASCII
        } else if (style < 8) {
            if (chance(rng, 0.5)) {
                s += static_cast<char>(0x21 + below(rng, 0x5e));
            } else {
                const std::string_view c = utf8_chars[below(rng, std::size(utf8_chars))];
                if (s.size() + c.size() > max_bytes) break;
                s += c;
            }
        } else {
            s += static_cast<char>(1 + below(rng, 255));  // any byte but NUL, valid UTF-8 or not
        }
    }
    if (s.size() < min_bytes) s.append(min_bytes - s.size(), 'x');
    return s;
}

std::string random_key(std::mt19937_64& rng) {
    if (chance(rng, 0.35)) {
        std::string k(words[below(rng, std::size(words))]);
        const auto parts = 1 + below(rng, 3);
        for (std::uint64_t i = 0; i < parts; ++i) {
            k += '.';
            k += words[below(rng, std::size(words))];
        }
        if (chance(rng, 0.3)) k += "." + std::to_string(below(rng, 100));
        return k;
    }
    return random_text(rng, 1, chance(rng, 0.1) ? 200 : 40);
}

std::string random_tensor_name(std::mt19937_64& rng) {
    const auto style = below(rng, 10);
    if (style < 5) {
        static constexpr std::string_view parts[] = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_up",
                                                     "ffn_down", "ffn_gate", "attn_norm", "ffn_norm"};
        // One draw per statement: the order of evaluation of operands is unspecified, and a seed must
        // make the same file whichever compiler built the test.
        const auto layer = below(rng, 40);
        const std::string_view part = parts[below(rng, std::size(parts))];
        const bool weight = chance(rng, 0.8);
        return "blk." + std::to_string(layer) + "." + std::string(part) + (weight ? ".weight" : ".bias");
    }
    if (style < 6) return random_text(rng, 63, 63);  // the longest name ggml can hold
    return random_text(rng, 1, 63);
}

void append_random_bytes(std::mt19937_64& rng, std::vector<std::byte>& out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::byte>(rng() & 0xFFu));
}

value random_fixed(std::mt19937_64& rng, std::uint32_t t, std::uint64_t n) {
    value v;
    v.type = v.elem = t;
    v.count = n;
    for (std::uint64_t i = 0; i < n; ++i) {
        if (t == 7) {
            v.fixed.push_back(static_cast<std::byte>(rng() & 1u));
        } else {
            append_random_bytes(rng, v.fixed, fixed_size(t));
        }
    }
    return v;
}

value random_value(std::mt19937_64& rng, const generator_options& opt) {
    std::uint32_t t = static_cast<std::uint32_t>(below(rng, 13));
    const bool array = t == tag_array;
    if (array) {
        do t = static_cast<std::uint32_t>(below(rng, 13));
        while (t == tag_array);
    }
    std::uint64_t n = 1;
    if (array) {
        n = chance(rng, 0.15) ? 0 : below(rng, opt.max_array + 1);
        if (chance(rng, 0.05)) n = 100 + below(rng, 200);
    }
    value v;
    if (t == tag_string) {
        v.type = v.elem = tag_string;
        v.count = n;
        for (std::uint64_t i = 0; i < n; ++i)
            v.strings.push_back(random_text(rng, 0, chance(rng, 0.05) ? 300 : opt.max_string));
    } else {
        v = random_fixed(rng, t, n);
    }
    if (array) v.type = tag_array;
    return v;
}

// Types both libraries can store, the common ones (the brief's list) weighted up.
std::vector<std::uint32_t> usable_types(const llama_lib& lib) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t id = 0; id < lib.type_count(); ++id) {
        const gg::type_traits* t = gg::traits(id);
        if (t == nullptr || t->removed() || !lib.knows_type(id)) continue;
        out.push_back(id);
    }
    return out;
}

}  // namespace

std::uint32_t ggml_n_dims_of(const std::vector<std::int64_t>& ne) {
    for (std::size_t i = ne.size(); i-- > 1;)
        if (ne[i] > 1) return static_cast<std::uint32_t>(i + 1);
    return 1;
}

std::uint64_t ref_nbytes(const llama_lib& lib, std::uint32_t type, const std::vector<std::int64_t>& ne) {
    const auto blck = static_cast<std::uint64_t>(lib.api().ggml_blck_size(static_cast<int>(type)));
    std::uint64_t n = 1;
    for (std::int64_t d : ne) n *= static_cast<std::uint64_t>(d);
    return n / blck * lib.api().ggml_type_size(static_cast<int>(type));
}

content generate(std::mt19937_64& rng, const llama_lib& lib, const generator_options& opt) {
    content c;
    std::set<std::string> keys;
    const auto n_kv = below(rng, opt.max_kvs + 1);
    while (c.kvs.size() < n_kv) {
        std::string k = random_key(rng);
        if (k == gg::alignment_key || k.starts_with("split.") || !keys.insert(k).second) continue;
        c.kvs.push_back({std::move(k), random_value(rng, opt)});
    }
    if (chance(rng, opt.p_alignment)) {
        static constexpr std::uint32_t aligns[] = {1, 8, 32, 64, 256};
        c.alignment = aligns[below(rng, std::size(aligns))];
        value v = random_fixed(rng, 4, 1);
        std::memcpy(v.fixed.data(), &c.alignment, 4);
        const auto at = static_cast<std::ptrdiff_t>(below(rng, c.kvs.size() + 1));
        c.kvs.insert(c.kvs.begin() + at, kv_entry{std::string(gg::alignment_key), std::move(v)});
    }

    static thread_local std::vector<std::uint32_t> types;
    if (types.empty()) types = usable_types(lib);
    static constexpr std::uint32_t common[] = {0, 1, 30, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 15, 20, 24, 25, 26};
    std::set<std::string> names;
    const auto n_t = chance(rng, 0.2) ? 0 : below(rng, opt.max_tensors + 1);
    while (c.tensors.size() < n_t) {
        tensor_content t;
        t.name = random_tensor_name(rng);
        if (!names.insert(t.name).second) continue;
        t.type = chance(rng, 0.8) ? common[below(rng, std::size(common))] : types[below(rng, types.size())];
        if (!lib.knows_type(t.type)) t.type = 0;
        const auto blck = static_cast<std::int64_t>(lib.api().ggml_blck_size(static_cast<int>(t.type)));
        const auto n_dims = 1 + below(rng, 4);
        t.ne.push_back(blck * static_cast<std::int64_t>(1 + below(rng, blck >= 256 ? 2 : 4)));
        for (std::uint64_t d = 1; d < n_dims; ++d) t.ne.push_back(static_cast<std::int64_t>(1 + below(rng, 4)));
        if (n_dims > 1 && t.ne.back() == 1) t.ne.back() = 2;  // canonical: the last dimension is > 1
        while (ref_nbytes(lib, t.type, t.ne) > 8192 && t.ne.size() > 1) t.ne.pop_back();
        while (t.ne.size() > 1 && t.ne.back() == 1) t.ne.pop_back();  // keep n_dims == ggml_n_dims
        if (t.ne.size() < 4 && chance(rng, opt.p_noncanonical)) {
            t.ne.push_back(1);
            c.canonical_dims = false;
        }
        append_random_bytes(rng, t.data, static_cast<std::size_t>(ref_nbytes(lib, t.type, t.ne)));
        c.tensors.push_back(std::move(t));
    }
    return c;
}

namespace {
gg::writer to_writer(const content& c) {
    gg::writer w;
    for (const kv_entry& e : c.kvs) {
        const value& v = e.v;
        auto get = [&v](auto x) {
            std::memcpy(&x, v.fixed.data(), sizeof x);
            return x;
        };
        if (v.type == tag_array) {
            if (v.elem == tag_string) {
                w.set_strings(e.key, std::span<const std::string>(v.strings));
            } else {
                w.set_array(e.key, static_cast<gg::value_type>(v.elem), std::span<const std::byte>(v.fixed));
            }
            continue;
        }
        switch (v.type) {
            case 0: w.set_u8(e.key, get(std::uint8_t{})); break;
            case 1: w.set_i8(e.key, get(std::int8_t{})); break;
            case 2: w.set_u16(e.key, get(std::uint16_t{})); break;
            case 3: w.set_i16(e.key, get(std::int16_t{})); break;
            case 4: w.set_u32(e.key, get(std::uint32_t{})); break;
            case 5: w.set_i32(e.key, get(std::int32_t{})); break;
            case 6: w.set_f32(e.key, get(float{})); break;
            case 7: w.set_bool(e.key, v.fixed[0] != std::byte{0}); break;
            case 8: w.set_string(e.key, v.strings[0]); break;
            case 10: w.set_u64(e.key, get(std::uint64_t{})); break;
            case 11: w.set_i64(e.key, get(std::int64_t{})); break;
            case 12: w.set_f64(e.key, get(double{})); break;
            default: break;
        }
    }
    for (const tensor_content& t : c.tensors)
        w.add_tensor(t.name, static_cast<gg::tensor_type>(t.type), std::span<const std::int64_t>(t.ne),
                     std::span<const std::byte>(t.data));
    return w;
}
}  // namespace

std::vector<std::byte> write_ours(const content& c) {
    auto r = to_writer(c).to_bytes();
    if (!r) return {};
    return std::move(*r);
}

bool write_ours(const content& c, const std::filesystem::path& path, std::string& why) {
    auto r = to_writer(c).write(path);
    if (!r) why = r.error().message();
    return r.has_value();
}

bool write_llama(const llama_lib& lib, const content& c, const std::filesystem::path& path, bool alignment_workaround,
                 std::string& why) {
    const llama_api& a = lib.api();
    gguf_context* ctx = nullptr;
    if (alignment_workaround && c.alignment != 32) {
        const std::filesystem::path seed = path.string() + ".align";
        gguf_context* s = a.gguf_init_empty();
        a.gguf_set_val_u32(s, std::string(gg::alignment_key).c_str(), c.alignment);
        const bool ok = a.gguf_write_to_file(s, seed.c_str(), true);
        a.gguf_free(s);
        if (ok) ctx = a.gguf_init_from_file(seed.c_str(), {true, nullptr});
        std::error_code ec;
        std::filesystem::remove(seed, ec);
        if (ctx == nullptr) {
            why = "cannot make a context with alignment " + std::to_string(c.alignment) + ": " + lib.take_log();
            return false;
        }
        a.gguf_remove_key(ctx, std::string(gg::alignment_key).c_str());
    } else {
        ctx = a.gguf_init_empty();
    }
    for (const kv_entry& e : c.kvs) {
        const value& v = e.v;
        const char* k = e.key.c_str();
        auto get = [&v](auto x) {
            std::memcpy(&x, v.fixed.data(), sizeof x);
            return x;
        };
        if (v.type == tag_array) {
            if (v.elem == tag_string) {
                std::vector<const char*> p;
                for (const std::string& s : v.strings) p.push_back(s.c_str());
                a.gguf_set_arr_str(ctx, k, p.data(), p.size());
            } else {
                a.gguf_set_arr_data(ctx, k, static_cast<int>(v.elem), v.fixed.data(), static_cast<std::size_t>(v.count));
            }
            continue;
        }
        switch (v.type) {
            case 0: a.gguf_set_val_u8(ctx, k, get(std::uint8_t{})); break;
            case 1: a.gguf_set_val_i8(ctx, k, get(std::int8_t{})); break;
            case 2: a.gguf_set_val_u16(ctx, k, get(std::uint16_t{})); break;
            case 3: a.gguf_set_val_i16(ctx, k, get(std::int16_t{})); break;
            case 4: a.gguf_set_val_u32(ctx, k, get(std::uint32_t{})); break;
            case 5: a.gguf_set_val_i32(ctx, k, get(std::int32_t{})); break;
            case 6: a.gguf_set_val_f32(ctx, k, get(float{})); break;
            case 7: a.gguf_set_val_bool(ctx, k, v.fixed[0] != std::byte{0}); break;
            case 8: a.gguf_set_val_str(ctx, k, v.strings[0].c_str()); break;
            case 10: a.gguf_set_val_u64(ctx, k, get(std::uint64_t{})); break;
            case 11: a.gguf_set_val_i64(ctx, k, get(std::int64_t{})); break;
            case 12: a.gguf_set_val_f64(ctx, k, get(double{})); break;
            default: break;
        }
    }
    std::size_t mem = 1024 + (c.tensors.size() + 1) * a.ggml_tensor_overhead();
    for (const tensor_content& t : c.tensors) mem += t.data.size() + 64;
    ggml_context* g = a.ggml_init({mem, nullptr, false});
    if (g == nullptr) {
        a.gguf_free(ctx);
        why = "ggml_init failed";
        return false;
    }
    for (const tensor_content& t : c.tensors) {
        std::int64_t ne[4] = {1, 1, 1, 1};
        std::copy(t.ne.begin(), t.ne.end(), ne);
        ggml_tensor* gt = a.ggml_new_tensor(g, static_cast<int>(t.type), static_cast<int>(t.ne.size()), ne);
        if (gt == nullptr || a.ggml_nbytes(gt) != t.data.size()) {
            why = "ggml_new_tensor failed for '" + show(t.name) + "'";
            a.ggml_free(g);
            a.gguf_free(ctx);
            return false;
        }
        if (!t.data.empty()) std::memcpy(a.ggml_get_data(gt), t.data.data(), t.data.size());
        a.ggml_set_name(gt, t.name.c_str());
        a.gguf_add_tensor(ctx, gt);
        // A tensor of zero bytes has no data pointer in its ggml context, and gguf_write_to_file
        // aborts on GGML_ASSERT(info.t.data): give it one (nothing is read from it).
        static const std::byte dummy{};
        if (t.data.empty()) a.gguf_set_tensor_data(ctx, t.name.c_str(), &dummy);
    }
    const bool ok = a.gguf_write_to_file(ctx, path.c_str(), false);
    if (!ok) why = "gguf_write_to_file failed: " + lib.take_log();
    a.ggml_free(g);
    a.gguf_free(ctx);
    return ok;
}

snapshot expected_snapshot(const content& c, const llama_lib& lib, bool canonical) {
    snapshot s;
    s.version = 3;
    s.alignment = c.alignment;
    s.kvs = c.kvs;
    std::uint64_t at = 4 + 4 + 8 + 8;
    for (const kv_entry& e : c.kvs) {
        at += 8 + e.key.size() + 4;
        if (e.v.type == tag_array) at += 4 + 8;
        if (e.v.elem == tag_string) {
            for (const std::string& str : e.v.strings) at += 8 + str.size();
        } else {
            at += e.v.fixed.size();
        }
    }
    std::uint64_t offset = 0;
    for (const tensor_content& t : c.tensors) {
        const std::uint32_t n_dims = canonical ? ggml_n_dims_of(t.ne) : static_cast<std::uint32_t>(t.ne.size());
        at += 8 + t.name.size() + 4 + 8ull * n_dims + 4 + 8;
        tensor_entry te;
        te.name = t.name;
        te.type = t.type;
        std::copy(t.ne.begin(), t.ne.end(), te.ne.begin());
        std::array<std::uint64_t, 4> nb{};
        nb[0] = lib.api().ggml_type_size(static_cast<int>(t.type));
        nb[1] = nb[0] * static_cast<std::uint64_t>(te.ne[0] / lib.api().ggml_blck_size(static_cast<int>(t.type)));
        for (std::size_t d = 2; d < 4; ++d) nb[d] = nb[d - 1] * static_cast<std::uint64_t>(te.ne[d - 1]);
        te.nb = nb;
        te.offset = offset;
        te.size = ref_nbytes(lib, t.type, t.ne);
        offset += pad(te.size, c.alignment);
        s.tensors.push_back(std::move(te));
    }
    s.data_offset = c.tensors.empty() ? at : pad(at, c.alignment);
    return s;
}

}  // namespace minfer::reference
