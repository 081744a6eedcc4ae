// The C API (include/minfer.h): ggml's gguf.h reading functions over minfer's verified loader, plus
// tensor bytes, split sets and the dequantizer (the errors: capi_errors.cpp; the verdict, the
// quantizer and the writer: their own files). Every entry point is extern "C", noexcept and
// catches everything: no exception, abort or out-of-bounds read crosses into C. Where ggml aborts,
// a function returns its neutral value and records the error in a thread-local slot.
//
// A context verifies the file at open (gguf::file_view::parse, or gguf::model::open for a set) and
// copies what the C getters must hand out in another form than the file's into one arena: keys and
// string values NUL-terminated, scalar values 8-byte aligned. Arrays and tensor names are copied
// only when first asked for (data_of, names_of): ggml copies every one at open, and a vocabulary of
// 150k tokens and as many merges is most of the metadata, which an open that reads only
// hyperparameters never needs (the C API's open then costs what the C++ open costs: PERFORMANCE.md). Then fixed-size elements are 8-byte aligned (a C caller casts
// gguf_get_arr_data to const float*; the file's payloads sit at any offset) and strings
// NUL-terminated. Tensor bytes stay in the mapping.
#include "minfer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/errors.hpp"

#include "capi_errors.hpp"
#include "context_metadata.hpp"
#include "handle_registry.hpp"

namespace gguf = minfer::gguf;
using namespace minfer::capi;  // the errors and the registry shared by the C API's files

namespace {

// ---- contexts ----

struct kv_entry {
    const char* key;          // arena, NUL-terminated
    gguf::value_type type;    // the value's type; an array's element type
    bool is_array;
    std::uint64_t n;          // 1 for a scalar
    // A scalar: in the arena (fixed: the aligned value; string: const char*). An array: nullptr here;
    // its copy is made on first use (minfer_gguf_context::arrays: the aligned elements, or for
    // strings a const char* const* table).
    const void* data;
    std::string_view key_view;
    const gguf::kv* record;   // the verified record, in the mapping
};

struct tensor_entry {
    const gguf::tensor_info* info;
    std::uint32_t part;
    std::span<const std::byte> bytes;
};

}  // namespace

struct minfer_gguf_context {
    gguf::model set;          // minfer_gguf_init_from_split
    gguf::mapped_file file;   // minfer_gguf_init_from_file
    gguf::file_view view;
    const gguf::file_view* meta = nullptr;  // part 1's view, in either case
    std::uint32_t n_parts = 1;
    std::vector<kv_entry> kvs;
    std::vector<tensor_entry> tensors;
    std::unique_ptr<std::uint64_t[]> arena;  // uint64_t: every slot may be 8-byte aligned
    // Arrays, copied on first use: per kv id, the copy's address once made (acquire/release: a
    // reader that sees it sees the bytes), and the copies themselves, made under the mutex.
    std::unique_ptr<std::atomic<const void*>[]> arrays;
    std::mutex lazy_mutex;  // making a copy of an array or the names
    std::vector<std::unique_ptr<std::uint64_t[]>> array_copies;
    // The tensor names NUL-terminated, made on the first minfer_gguf_get_tensor_name (the loader's
    // find_tensor needs none): a table of their addresses, then the texts.
    std::atomic<const char* const*> names{nullptr};
    std::unique_ptr<std::uint64_t[]> names_copy;
};

namespace {

// Every open context (handle_registry.hpp): a NULL, freed or foreign handle is refused.
handle_registry& contexts() { return registry_of<minfer_gguf_context>(); }

const minfer_gguf_context* checked(const minfer_gguf_context* ctx, const char* fn) noexcept {
    try {
        if (ctx != nullptr && contexts().contains(ctx)) return ctx;
    } catch (...) {
    }
    record_code(invalid_handle, fn);
    return nullptr;
}

const kv_entry* checked_kv(const minfer_gguf_context* ctx, std::int64_t id, const char* fn) noexcept {
    const minfer_gguf_context* c = checked(ctx, fn);
    if (c == nullptr) return nullptr;
    if (id < 0 || static_cast<std::uint64_t>(id) >= c->kvs.size()) {
        record_code(id_out_of_range, fn, "key", c->kvs.size(), static_cast<std::uint64_t>(id));
        return nullptr;
    }
    return &c->kvs[static_cast<std::size_t>(id)];
}

const tensor_entry* checked_tensor(const minfer_gguf_context* ctx, std::int64_t id, const char* fn) noexcept {
    const minfer_gguf_context* c = checked(ctx, fn);
    if (c == nullptr) return nullptr;
    if (id < 0 || static_cast<std::uint64_t>(id) >= c->tensors.size()) {
        record_code(id_out_of_range, fn, "tensor", c->tensors.size(), static_cast<std::uint64_t>(id));
        return nullptr;
    }
    return &c->tensors[static_cast<std::size_t>(id)];
}

void record_type_mismatch(const kv_entry& e, gguf::value_type wanted) noexcept {
    gguf::error err;
    err.code = gguf::errc::type_mismatch;
    err.where = gguf::section::access;
    err.subject = e.key_view;
    err.expected = static_cast<std::uint64_t>(wanted);
    err.found = static_cast<std::uint64_t>(e.is_array ? gguf::value_type::array : e.type);
    record(err);
}

const void* data_of(const minfer_gguf_context* ctx, const kv_entry& e, const char* fn) noexcept;

// ggml's get_val<T>: a value of exactly type T holding one element (a scalar, or an array of one).
const void* scalar_of(const minfer_gguf_context* ctx, std::int64_t id, gguf::value_type wanted, const char* fn) noexcept {
    const kv_entry* e = checked_kv(ctx, id, fn);
    if (e == nullptr) return nullptr;
    if (e->type != wanted || e->n != 1) {
        record_type_mismatch(*e, wanted);
        return nullptr;
    }
    return data_of(ctx, *e, fn);
}

template <class T>
T get_val(const minfer_gguf_context* ctx, std::int64_t id, gguf::value_type wanted, const char* fn) noexcept {
    const void* p = scalar_of(ctx, id, wanted, fn);
    if (p == nullptr) return T{};
    if constexpr (std::is_same_v<T, bool>) {
        return *static_cast<const unsigned char*>(p) != 0;
    } else {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
}

// One bump allocation for every value, sized exactly in a first pass.
class arena_writer {
public:
    explicit arena_writer(char* base) noexcept : p_(base) {}
    const char* text(std::string_view s) noexcept {
        char* at = p_;
        if (!s.empty()) std::memcpy(at, s.data(), s.size());
        at[s.size()] = '\0';
        p_ += s.size() + 1;
        return at;
    }
    char* aligned(std::size_t bytes) noexcept {
        align();
        char* at = p_;
        p_ += bytes;
        return at;
    }

private:
    void align() noexcept {
        const auto at = reinterpret_cast<std::uintptr_t>(p_);
        p_ += (8 - at % 8) % 8;
    }
    char* p_;
};

constexpr std::size_t slot(std::size_t bytes) noexcept { return bytes + 7; }  // with its worst-case padding

// Fill kvs, tensors and the arena from the verified views. Throws bad_alloc only.
void build(minfer_gguf_context& c, std::span<const gguf::tensor_ref> refs) {
    const gguf::file_view& m = *c.meta;
    std::size_t total = 0;
    for (const gguf::kv& kv : m.metadata()) {
        total += kv.key.size() + 1;
        if (kv.type == gguf::value_type::string)
            total += kv.payload.size() + 1;
        else if (!kv.is_array())
            total += slot(kv.payload.size());
    }

    c.arena.reset(new std::uint64_t[total / 8 + 1]);
    arena_writer w(reinterpret_cast<char*>(c.arena.get()));

    c.kvs.reserve(m.metadata().size());
    c.arrays = std::make_unique<std::atomic<const void*>[]>(m.metadata().size());
    for (const gguf::kv& kv : m.metadata()) {
        kv_entry e{};
        e.key = w.text(kv.key);
        e.key_view = kv.key;
        e.record = &kv;
        e.is_array = kv.is_array();
        e.type = e.is_array ? kv.element_type : kv.type;
        e.n = e.is_array ? kv.count : 1;
        if (e.is_array) {
            e.data = nullptr;  // copied by data_of() on first use
        } else if (e.type == gguf::value_type::string) {
            e.data = w.text(std::string_view(reinterpret_cast<const char*>(kv.payload.data()), kv.payload.size()));
        } else {
            char* at = w.aligned(kv.payload.size());
            if (!kv.payload.empty()) std::memcpy(at, kv.payload.data(), kv.payload.size());
            e.data = at;
        }
        c.kvs.push_back(e);
    }

    c.tensors.reserve(refs.size());
    for (const gguf::tensor_ref& t : refs) {
        tensor_entry e{};
        e.info = t.info;
        e.part = t.part;
        e.bytes = c.set.parts().empty() ? c.view.tensor_data(*t.info) : c.set.tensor_data(t);
        c.tensors.push_back(e);
    }
}

// An array's copy, made once: fixed-size elements 8-byte aligned; strings NUL-terminated with a table
// of their addresses. Throws bad_alloc only.
const void* copy_array(minfer_gguf_context& c, const kv_entry& e) {
    const gguf::kv& kv = *e.record;
    const auto n = static_cast<std::size_t>(kv.count);
    std::size_t bytes = 0;
    if (e.type == gguf::value_type::string) {
        // the table, and each string without its 8-byte length plus a NUL: at most the payload
        bytes = n * sizeof(const char*) + kv.payload.size() + n;
    } else {
        bytes = kv.payload.size();
    }
    auto block = std::make_unique<std::uint64_t[]>(bytes / 8 + 1);
    char* base = reinterpret_cast<char*>(block.get());
    if (e.type == gguf::value_type::string) {
        auto** table = reinterpret_cast<const char**>(base);
        arena_writer w(base + n * sizeof(const char*));
        std::size_t i = 0;
        if (auto arr = kv.get<gguf::array_view>()) {
            for (std::string_view s : arr->strings()) {
                if (i == n) break;
                table[i++] = w.text(s);
            }
        }
        // Fewer records than the count only if the file changed after the parse (value.hpp): "".
        for (; i < n; ++i) table[i] = w.text({});
    } else if (!kv.payload.empty()) {
        std::memcpy(base, kv.payload.data(), kv.payload.size());
    }
    c.array_copies.push_back(std::move(block));  // may throw: then nothing was published
    return base;
}

// The bytes a getter hands out for kv `e` (its entry in c.kvs): a scalar's, or an array's copy,
// made on the first call for it (by one thread; the others wait for it). nullptr with
// out_of_memory recorded when the copy cannot be allocated.
const void* data_of(const minfer_gguf_context* ctx, const kv_entry& e, const char* fn) noexcept {
    if (!e.is_array) return e.data;
    auto& c = const_cast<minfer_gguf_context&>(*ctx);  // the copy is a cache: the context stays the same to callers
    std::atomic<const void*>& slot = c.arrays[static_cast<std::size_t>(&e - c.kvs.data())];
    if (const void* p = slot.load(std::memory_order_acquire)) return p;
    try {
        const std::lock_guard lock(c.lazy_mutex);
        const void* p = slot.load(std::memory_order_relaxed);
        if (p == nullptr) {
            p = copy_array(c, e);
            slot.store(p, std::memory_order_release);
        }
        return p;
    } catch (...) {
        record_exception(fn);
        return nullptr;
    }
}

// The table of NUL-terminated tensor names, made on first use like the arrays. nullptr with
// out_of_memory recorded when it cannot be allocated.
const char* const* names_of(const minfer_gguf_context* ctx, const char* fn) noexcept {
    auto& c = const_cast<minfer_gguf_context&>(*ctx);  // a cache, as data_of's copies
    if (const char* const* p = c.names.load(std::memory_order_acquire)) return p;
    try {
        const std::lock_guard lock(c.lazy_mutex);
        if (const char* const* p = c.names.load(std::memory_order_relaxed)) return p;
        std::size_t bytes = c.tensors.size() * sizeof(const char*);
        for (const tensor_entry& t : c.tensors) bytes += t.info->name.size() + 1;
        auto block = std::make_unique<std::uint64_t[]>(bytes / 8 + 1);
        auto** table = reinterpret_cast<const char**>(block.get());
        arena_writer w(reinterpret_cast<char*>(block.get()) + c.tensors.size() * sizeof(const char*));
        for (std::size_t i = 0; i < c.tensors.size(); ++i) table[i] = w.text(c.tensors[i].info->name);
        c.names_copy = std::move(block);
        c.names.store(table, std::memory_order_release);
        return table;
    } catch (...) {
        record_exception(fn);
        return nullptr;
    }
}

bool refuse_params(const minfer_gguf_init_params& params, const char* fname, const char* fn) noexcept {
    if (params.ctx != nullptr) {
        record_code(unsupported_param, fn,
                    "params.ctx is not NULL: minfer creates no ggml context or tensors (pass NULL; tensor bytes "
                    "are in the mapping: minfer_gguf_get_tensor_data)");
        return true;
    }
    if (fname == nullptr) {
        record_code(null_argument, fn, "fname");
        return true;
    }
    return false;
}

minfer_gguf_context* publish(std::unique_ptr<minfer_gguf_context> c) {
    contexts().add(c.get());
    return c.release();
}

}  // namespace

const gguf::file_view* minfer::capi::context_metadata(const minfer_gguf_context* ctx, const char* fn) noexcept {
    const minfer_gguf_context* c = checked(ctx, fn);
    return c == nullptr ? nullptr : c->meta;
}

extern "C" {

struct minfer_gguf_context* minfer_gguf_init_from_file(const char* fname, struct minfer_gguf_init_params params) noexcept {
    constexpr const char* fn = "minfer_gguf_init_from_file";
    try {
        if (refuse_params(params, fname, fn)) return nullptr;
        auto c = std::make_unique<minfer_gguf_context>();
        auto file = gguf::mapped_file::open(fname);
        if (!file) {
            record_open_error(file.error(), fname);
            return nullptr;
        }
        c->file = std::move(*file);
        auto view = gguf::file_view::parse(c->file.bytes());
        if (!view) {
            record_open_error(view.error(), fname);
            return nullptr;
        }
        c->view = std::move(*view);
        c->meta = &c->view;
        std::vector<gguf::tensor_ref> refs;
        refs.reserve(c->view.tensors().size());
        for (const gguf::tensor_info& t : c->view.tensors()) refs.push_back({&t, 0});
        build(*c, refs);
        return publish(std::move(c));
    } catch (...) {
        record_exception(fn);
        return nullptr;
    }
}

struct minfer_gguf_context* minfer_gguf_init_from_split(const char* fname, struct minfer_gguf_init_params params) noexcept {
    constexpr const char* fn = "minfer_gguf_init_from_split";
    try {
        if (refuse_params(params, fname, fn)) return nullptr;
        auto c = std::make_unique<minfer_gguf_context>();
        auto set = gguf::model::open(fname);
        if (!set) {
            record_open_error(set.error(), fname);
            return nullptr;
        }
        c->set = std::move(*set);
        c->meta = &c->set.metadata();
        c->n_parts = static_cast<std::uint32_t>(c->set.parts().size());
        build(*c, c->set.tensors());
        return publish(std::move(c));
    } catch (...) {
        record_exception(fn);
        return nullptr;
    }
}

void minfer_gguf_free(struct minfer_gguf_context* ctx) noexcept {
    if (ctx == nullptr) return;  // as ggml's gguf_free(NULL)
    try {
        if (!contexts().remove(ctx)) {
            record_code(invalid_handle, "minfer_gguf_free");
            return;
        }
        delete ctx;
    } catch (...) {
        record_exception("minfer_gguf_free");
    }
}

const char* minfer_gguf_type_name(enum minfer_gguf_type type) noexcept {
    // ggml's names (gguf.cpp's GGUF_TYPE_NAME), which differ from the loader's ("str", "arr").
    static constexpr std::array<const char*, 13> names{"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                                      "bool", "str", "arr", "u64", "i64", "f64"};
    const int t = static_cast<int>(type);
    return t >= 0 && t < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(t)] : nullptr;
}

uint32_t minfer_gguf_get_version(const struct minfer_gguf_context* ctx) noexcept {
    const minfer_gguf_context* c = checked(ctx, "minfer_gguf_get_version");
    return c == nullptr ? 0 : c->meta->version();
}

size_t minfer_gguf_get_alignment(const struct minfer_gguf_context* ctx) noexcept {
    const minfer_gguf_context* c = checked(ctx, "minfer_gguf_get_alignment");
    return c == nullptr ? 0 : c->meta->alignment();
}

size_t minfer_gguf_get_data_offset(const struct minfer_gguf_context* ctx) noexcept {
    const minfer_gguf_context* c = checked(ctx, "minfer_gguf_get_data_offset");
    return c == nullptr ? 0 : static_cast<size_t>(c->meta->data_offset());
}

int64_t minfer_gguf_get_n_kv(const struct minfer_gguf_context* ctx) noexcept {
    const minfer_gguf_context* c = checked(ctx, "minfer_gguf_get_n_kv");
    return c == nullptr ? 0 : static_cast<int64_t>(c->kvs.size());
}

int64_t minfer_gguf_find_key(const struct minfer_gguf_context* ctx, const char* key) noexcept {
    constexpr const char* fn = "minfer_gguf_find_key";
    const minfer_gguf_context* c = checked(ctx, fn);
    if (c == nullptr) return -1;
    if (key == nullptr) {
        record_code(null_argument, fn, "key");
        return -1;
    }
    // The verified index (O(1)); keys hold no NUL byte (the loader refuses them), so comparing the
    // whole C string is ggml's strcmp.
    const std::string_view k(key);
    const gguf::kv* e = c->meta->find(k);
    if (e == nullptr) {
        gguf::error err = gguf::key_not_found_error(k);
        record(err);
        return -1;
    }
    return static_cast<int64_t>(e - c->meta->metadata().data());
}

const char* minfer_gguf_get_key(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    const kv_entry* e = checked_kv(ctx, key_id, "minfer_gguf_get_key");
    return e == nullptr ? nullptr : e->key;
}

enum minfer_gguf_type minfer_gguf_get_kv_type(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    const kv_entry* e = checked_kv(ctx, key_id, "minfer_gguf_get_kv_type");
    if (e == nullptr) return MINFER_GGUF_TYPE_COUNT;
    return e->is_array ? MINFER_GGUF_TYPE_ARRAY : static_cast<minfer_gguf_type>(e->type);
}

enum minfer_gguf_type minfer_gguf_get_arr_type(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    const kv_entry* e = checked_kv(ctx, key_id, "minfer_gguf_get_arr_type");
    if (e == nullptr) return MINFER_GGUF_TYPE_COUNT;
    if (!e->is_array) {
        record_type_mismatch(*e, gguf::value_type::array);
        return MINFER_GGUF_TYPE_COUNT;
    }
    return static_cast<minfer_gguf_type>(e->type);
}

uint8_t minfer_gguf_get_val_u8(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<uint8_t>(ctx, key_id, gguf::value_type::u8, "minfer_gguf_get_val_u8");
}
int8_t minfer_gguf_get_val_i8(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<int8_t>(ctx, key_id, gguf::value_type::i8, "minfer_gguf_get_val_i8");
}
uint16_t minfer_gguf_get_val_u16(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<uint16_t>(ctx, key_id, gguf::value_type::u16, "minfer_gguf_get_val_u16");
}
int16_t minfer_gguf_get_val_i16(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<int16_t>(ctx, key_id, gguf::value_type::i16, "minfer_gguf_get_val_i16");
}
uint32_t minfer_gguf_get_val_u32(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<uint32_t>(ctx, key_id, gguf::value_type::u32, "minfer_gguf_get_val_u32");
}
int32_t minfer_gguf_get_val_i32(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<int32_t>(ctx, key_id, gguf::value_type::i32, "minfer_gguf_get_val_i32");
}
float minfer_gguf_get_val_f32(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<float>(ctx, key_id, gguf::value_type::f32, "minfer_gguf_get_val_f32");
}
uint64_t minfer_gguf_get_val_u64(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<uint64_t>(ctx, key_id, gguf::value_type::u64, "minfer_gguf_get_val_u64");
}
int64_t minfer_gguf_get_val_i64(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<int64_t>(ctx, key_id, gguf::value_type::i64, "minfer_gguf_get_val_i64");
}
double minfer_gguf_get_val_f64(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<double>(ctx, key_id, gguf::value_type::f64, "minfer_gguf_get_val_f64");
}
bool minfer_gguf_get_val_bool(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    return get_val<bool>(ctx, key_id, gguf::value_type::boolean, "minfer_gguf_get_val_bool");
}

const char* minfer_gguf_get_val_str(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    const void* p = scalar_of(ctx, key_id, gguf::value_type::string, "minfer_gguf_get_val_str");
    if (p == nullptr) return nullptr;
    const kv_entry& e = ctx->kvs[static_cast<std::size_t>(key_id)];
    // A one-element string array answers too (ggml's get_ne() == 1): its item 0.
    return e.is_array ? static_cast<const char* const*>(p)[0] : static_cast<const char*>(p);
}

const void* minfer_gguf_get_val_data(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    constexpr const char* fn = "minfer_gguf_get_val_data";
    const kv_entry* e = checked_kv(ctx, key_id, fn);
    if (e == nullptr) return nullptr;
    if (e->n != 1 || e->type == gguf::value_type::string) {
        // ggml asserts one element that is not a string; "a fixed-size scalar" is what was wanted.
        record_type_mismatch(*e, e->type == gguf::value_type::string ? gguf::value_type::u8 : e->type);
        return nullptr;
    }
    return data_of(ctx, *e, fn);
}

size_t minfer_gguf_get_arr_n(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    const kv_entry* e = checked_kv(ctx, key_id, "minfer_gguf_get_arr_n");
    return e == nullptr ? 0 : static_cast<size_t>(e->n);
}

const void* minfer_gguf_get_arr_data(const struct minfer_gguf_context* ctx, int64_t key_id) noexcept {
    constexpr const char* fn = "minfer_gguf_get_arr_data";
    const kv_entry* e = checked_kv(ctx, key_id, fn);
    if (e == nullptr) return nullptr;
    if (e->type == gguf::value_type::string) {  // ggml aborts: strings have no raw element data
        record_type_mismatch(*e, gguf::value_type::array);
        return nullptr;
    }
    return data_of(ctx, *e, fn);
}

const char* minfer_gguf_get_arr_str(const struct minfer_gguf_context* ctx, int64_t key_id, size_t i) noexcept {
    constexpr const char* fn = "minfer_gguf_get_arr_str";
    const kv_entry* e = checked_kv(ctx, key_id, fn);
    if (e == nullptr) return nullptr;
    if (e->type != gguf::value_type::string) {
        record_type_mismatch(*e, gguf::value_type::string);
        return nullptr;
    }
    if (i >= e->n) {
        gguf::error err;
        err.code = gguf::errc::index_out_of_range;
        err.where = gguf::section::access;
        err.subject = e->key_view;
        err.expected = e->n;
        err.found = i;
        record(err);
        return nullptr;
    }
    const void* p = data_of(ctx, *e, fn);
    if (p == nullptr) return nullptr;
    return e->is_array ? static_cast<const char* const*>(p)[i] : static_cast<const char*>(p);
}

int64_t minfer_gguf_get_n_tensors(const struct minfer_gguf_context* ctx) noexcept {
    const minfer_gguf_context* c = checked(ctx, "minfer_gguf_get_n_tensors");
    return c == nullptr ? 0 : static_cast<int64_t>(c->tensors.size());
}

int64_t minfer_gguf_find_tensor(const struct minfer_gguf_context* ctx, const char* name) noexcept {
    constexpr const char* fn = "minfer_gguf_find_tensor";
    const minfer_gguf_context* c = checked(ctx, fn);
    if (c == nullptr) return -1;
    if (name == nullptr) {
        record_code(null_argument, fn, "name");
        return -1;
    }
    const std::string_view n(name);
    std::int64_t id = -1;
    if (c->set.parts().empty()) {
        if (const gguf::tensor_info* t = c->view.find_tensor(n)) id = t - c->view.tensors().data();
    } else {
        if (const gguf::tensor_ref* t = c->set.find_tensor(n)) id = t - c->set.tensors().data();
    }
    if (id < 0) {
        gguf::error err;
        err.code = gguf::errc::tensor_not_found;
        err.where = gguf::section::access;
        err.subject = n;
        record(err);
    }
    return id;
}

size_t minfer_gguf_get_tensor_offset(const struct minfer_gguf_context* ctx, int64_t tensor_id) noexcept {
    const tensor_entry* t = checked_tensor(ctx, tensor_id, "minfer_gguf_get_tensor_offset");
    return t == nullptr ? 0 : static_cast<size_t>(t->info->offset);
}

const char* minfer_gguf_get_tensor_name(const struct minfer_gguf_context* ctx, int64_t tensor_id) noexcept {
    constexpr const char* fn = "minfer_gguf_get_tensor_name";
    const tensor_entry* t = checked_tensor(ctx, tensor_id, fn);
    if (t == nullptr) return nullptr;
    const char* const* names = names_of(ctx, fn);
    return names == nullptr ? nullptr : names[static_cast<std::size_t>(tensor_id)];
}

enum minfer_ggml_type minfer_gguf_get_tensor_type(const struct minfer_gguf_context* ctx, int64_t tensor_id) noexcept {
    const tensor_entry* t = checked_tensor(ctx, tensor_id, "minfer_gguf_get_tensor_type");
    // ids < 43 (verified at open): inside the enum's range, removed ids included
    return t == nullptr ? MINFER_GGML_TYPE_COUNT : static_cast<minfer_ggml_type>(t->info->type);
}

size_t minfer_gguf_get_tensor_size(const struct minfer_gguf_context* ctx, int64_t tensor_id) noexcept {
    const tensor_entry* t = checked_tensor(ctx, tensor_id, "minfer_gguf_get_tensor_size");
    return t == nullptr ? 0 : static_cast<size_t>(t->info->n_bytes);
}

int minfer_gguf_get_n_parts(const struct minfer_gguf_context* ctx) noexcept {
    const minfer_gguf_context* c = checked(ctx, "minfer_gguf_get_n_parts");
    return c == nullptr ? 0 : static_cast<int>(c->n_parts);
}

int minfer_gguf_get_tensor_part(const struct minfer_gguf_context* ctx, int64_t tensor_id) noexcept {
    const tensor_entry* t = checked_tensor(ctx, tensor_id, "minfer_gguf_get_tensor_part");
    return t == nullptr ? -1 : static_cast<int>(t->part);
}

const void* minfer_gguf_get_tensor_data(const struct minfer_gguf_context* ctx, int64_t tensor_id) noexcept {
    const tensor_entry* t = checked_tensor(ctx, tensor_id, "minfer_gguf_get_tensor_data");
    return t == nullptr || t->bytes.empty() ? nullptr : t->bytes.data();
}

int64_t minfer_tensor_n_elements(const struct minfer_gguf_context* ctx, int64_t tensor_id) noexcept {
    const tensor_entry* t = checked_tensor(ctx, tensor_id, "minfer_tensor_n_elements");
    return t == nullptr ? -1 : static_cast<int64_t>(t->info->n_elements);  // < 2^63: verified at open
}

int minfer_tensor_shape(const struct minfer_gguf_context* ctx, int64_t tensor_id, int64_t ne[4]) noexcept {
    constexpr const char* fn = "minfer_tensor_shape";
    const tensor_entry* t = checked_tensor(ctx, tensor_id, fn);
    if (t == nullptr) return -1;
    if (ne == nullptr) {
        record_code(null_argument, fn, "ne");
        return -1;
    }
    for (std::size_t i = 0; i < 4; ++i) ne[i] = t->info->ne[i];
    return static_cast<int>(t->info->n_dims);
}

int64_t minfer_dequantize(int ggml_type, const void* src, size_t src_size, float* dst, int64_t n_elements) noexcept {
    constexpr const char* fn = "minfer_dequantize";
    try {
        if (ggml_type < 0 || ggml_type >= static_cast<int>(gguf::tensor_type_count)) {
            record_code(minfer::quant::codes::type_not_convertible, fn, {}, 0, static_cast<std::uint64_t>(ggml_type));
            return -1;
        }
        if (n_elements < 0) {
            record_code(gguf::errc::buffer_size_mismatch, fn, "n_elements is negative", 0,
                        static_cast<std::uint64_t>(n_elements));
            return -1;
        }
        if (n_elements > 0 && dst == nullptr) {
            record_code(null_argument, fn, "dst");
            return -1;
        }
        if (src_size > 0 && src == nullptr) {
            record_code(null_argument, fn, "src");
            return -1;
        }
        const std::span<const std::byte> in(static_cast<const std::byte*>(src), src == nullptr ? 0 : src_size);
        const std::span<float> out(dst, dst == nullptr ? 0 : static_cast<std::size_t>(n_elements));
        auto r = minfer::quant::dequantize(static_cast<gguf::tensor_type>(ggml_type), in, out);
        if (!r) {
            record(r.error());
            return -1;
        }
        return n_elements;
    } catch (...) {
        record_exception(fn);
        return -1;
    }
}

size_t minfer_dequantize_src_size(int ggml_type, int64_t n_elements) noexcept {
    constexpr const char* fn = "minfer_dequantize_src_size";
    if (ggml_type < 0 || ggml_type >= static_cast<int>(gguf::tensor_type_count) ||
        !minfer::quant::can_dequantize(static_cast<gguf::tensor_type>(ggml_type))) {
        record_code(minfer::quant::codes::type_not_convertible, fn, {}, 0, static_cast<std::uint64_t>(ggml_type));
        return 0;
    }
    const std::uint64_t bytes =
        n_elements < 0 ? 0 : minfer::quant::bytes_for(static_cast<gguf::tensor_type>(ggml_type), static_cast<std::uint64_t>(n_elements));
    if (bytes == 0 && n_elements != 0) {
        const gguf::type_traits* tr = gguf::traits(static_cast<std::uint32_t>(ggml_type));
        record_code(gguf::errc::not_block_multiple, fn, {}, tr == nullptr ? 0 : tr->block_elems,
                    static_cast<std::uint64_t>(n_elements));
    }
    return static_cast<size_t>(bytes);
}

const char* minfer_ggml_type_name(int ggml_type) noexcept {
    const gguf::type_traits* t = ggml_type < 0 ? nullptr : gguf::traits(static_cast<std::uint32_t>(ggml_type));
    // the table's names are string literals: NUL-terminated, static
    return t == nullptr ? nullptr : t->name.data();
}

}  // extern "C"
