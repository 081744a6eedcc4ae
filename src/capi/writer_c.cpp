// The C API's writer (minfer_writer_*): a registered handle around gguf::writer, which does all the
// work — the loader's rules (plan), the serialization, the atomic output. This file adds what a C
// caller needs: checked handles and arguments, each change checked when it is made, callbacks in C
// form, and a write that reads the file's head back through the loader before naming it.
//
// A change is checked by making it first on an empty writer of its own and planning that (the key's
// or tensor's own rules: the plan is the loader's), and only then on the caller's writer: a refused
// call leaves the writer as it was, and the caller learns which call was wrong. What depends on the
// whole model (two tensors of one name) is the full plan's, at minfer_writer_write.
#include "minfer.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi_errors.hpp"
#include "context_metadata.hpp"
#include "handle_registry.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/source.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/gguf_write/written_head.hpp"

namespace gguf = minfer::gguf;
using namespace minfer::capi;

struct minfer_gguf_writer {
    gguf::writer model;
};

namespace {

constexpr unsigned known_write_flags = MINFER_WRITE_REPLACE;

handle_registry& writers() { return registry_of<minfer_gguf_writer>(); }

minfer_gguf_writer* checked(minfer_gguf_writer* w, const char* fn) noexcept {
    try {
        if (w != nullptr && writers().contains(w)) return w;
    } catch (...) {
    }
    record_code(invalid_handle, fn, "the writer handle is NULL, freed or not one minfer_writer_new returned");
    return nullptr;
}

bool refuse_null(const void* p, const char* fn, const char* argument) noexcept {
    if (p != nullptr) return false;
    record_code(null_argument, fn, argument);
    return true;
}

// A refusal found on the probe: its rule, subject and values stand. There is no file yet, so no
// location (section access: the message names no byte), and the probe's index (of a record of the
// probe) becomes the index the record would have had in the caller's model.
void record_refusal(gguf::error e, const gguf::writer& model) noexcept {
    if (e.index >= 0) {
        const bool about_a_key = e.where == gguf::section::metadata;
        e.index += static_cast<std::int64_t>(about_a_key ? model.kv_count() : model.tensor_count());
    }
    e.where = gguf::section::access;
    e.offset = 0;
    record(e);
}

// `apply(gguf::writer&)` on a probe, planned; then on the caller's writer. 0, or -1 recorded.
template <class Apply>
int change(minfer_gguf_writer* w, const char* fn, Apply&& apply) noexcept {
    try {
        gguf::writer probe;
        apply(probe);
        if (auto p = probe.make_plan(); !p) {
            record_refusal(std::move(p).error(), w->model);
            return -1;
        }
        apply(w->model);  // an allocation failure here is kept by the writer and reported by the write
        return 0;
    } catch (...) {
        record_exception(fn);
        return -1;
    }
}

template <class T, class Set>
int set_scalar(minfer_gguf_writer* w, const char* key, T val, const char* fn, Set set) noexcept {
    if (checked(w, fn) == nullptr || refuse_null(key, fn, "key")) return -1;
    return change(w, fn, [&](gguf::writer& into) { (into.*set)(key, val); });
}

// The tensor's shape as a span, or false recorded (ne read only for 0..4 dimensions).
bool shape_of(int n_dims, const int64_t* ne, const char* fn, std::span<const std::int64_t>& out) noexcept {
    if (n_dims < 0 || n_dims > 4) {
        gguf::error e;
        e.code = gguf::errc::bad_n_dims;
        e.where = gguf::section::tensor_info;
        e.expected = 4;
        e.found = static_cast<std::uint64_t>(static_cast<std::int64_t>(n_dims));
        record(e);
        return false;
    }
    if (n_dims > 0 && refuse_null(ne, fn, "ne")) return false;
    out = std::span<const std::int64_t>(ne, static_cast<std::size_t>(n_dims));
    return true;
}

// A C read callback as a tensor source's fill function: a non-zero return ends the write with
// callback_failed (the writer adds the tensor's name, index and output offset).
gguf::tensor_source::fill_fn fill_from(minfer_tensor_read_fn read, void* user) {
    return [read, user](std::uint64_t offset, std::span<std::byte> out) -> gguf::result<void> {
        const int rc = read(user, offset, out.data(), out.size());
        if (rc == 0) return {};
        gguf::error e;
        e.code = callback_failed;
        e.found = static_cast<std::uint64_t>(static_cast<std::int64_t>(rc));
        e.detail = "for bytes [" + std::to_string(offset) + ", " + std::to_string(offset + out.size()) + ") of the tensor";
        return gguf::unexpected(std::move(e));
    };
}

// The write: the caller's refusal of an existing file first (check_output_path, the commands'
// check), the plan, the bytes into an unnamed temporary, its head read back through the loader,
// then the name (atomic_file::commit: fsync, rename that the kernel refuses for an existing file
// without replace, directory fsync). Any failure drops the temporary: nothing at the path.
gguf::result<void> write_model(const gguf::writer& model, const char* path, bool replace) {
    if (auto checked_path = gguf::check_output_path(path, replace); !checked_path)
        return gguf::unexpected(std::move(checked_path).error());
    auto planned = model.make_plan();
    if (!planned) return gguf::unexpected(std::move(planned).error());
    gguf::write_options options;
    options.file.replace_existing = replace;
    auto file = model.write_uncommitted(path, options);
    if (!file) return gguf::unexpected(std::move(file).error());
    if (auto r = gguf::verify_written_head(*file, planned->data_offset(), path); !r) return r;
    return file->commit();
}

}  // namespace

extern "C" {

struct minfer_gguf_writer* minfer_writer_new(void) noexcept {
    try {
        auto w = std::make_unique<minfer_gguf_writer>();
        // ggml's writer pads the tensor table to the alignment even without tensors: the same bytes.
        w->model.pad_table_without_tensors(true);
        writers().add(w.get());
        return w.release();
    } catch (...) {
        record_exception("minfer_writer_new");
        return nullptr;
    }
}

void minfer_writer_free(struct minfer_gguf_writer* w) noexcept {
    if (w == nullptr) return;  // as free(NULL)
    try {
        if (!writers().remove(w)) {
            record_code(invalid_handle, "minfer_writer_free",
                        "the writer handle is NULL, freed or not one minfer_writer_new returned");
            return;
        }
        delete w;
    } catch (...) {
        record_exception("minfer_writer_free");
    }
}

int minfer_writer_set_u8(struct minfer_gguf_writer* w, const char* key, uint8_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_u8", &gguf::writer::set_u8);
}
int minfer_writer_set_i8(struct minfer_gguf_writer* w, const char* key, int8_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_i8", &gguf::writer::set_i8);
}
int minfer_writer_set_u16(struct minfer_gguf_writer* w, const char* key, uint16_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_u16", &gguf::writer::set_u16);
}
int minfer_writer_set_i16(struct minfer_gguf_writer* w, const char* key, int16_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_i16", &gguf::writer::set_i16);
}
int minfer_writer_set_u32(struct minfer_gguf_writer* w, const char* key, uint32_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_u32", &gguf::writer::set_u32);
}
int minfer_writer_set_i32(struct minfer_gguf_writer* w, const char* key, int32_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_i32", &gguf::writer::set_i32);
}
int minfer_writer_set_f32(struct minfer_gguf_writer* w, const char* key, float val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_f32", &gguf::writer::set_f32);
}
int minfer_writer_set_u64(struct minfer_gguf_writer* w, const char* key, uint64_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_u64", &gguf::writer::set_u64);
}
int minfer_writer_set_i64(struct minfer_gguf_writer* w, const char* key, int64_t val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_i64", &gguf::writer::set_i64);
}
int minfer_writer_set_f64(struct minfer_gguf_writer* w, const char* key, double val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_f64", &gguf::writer::set_f64);
}
int minfer_writer_set_bool(struct minfer_gguf_writer* w, const char* key, bool val) noexcept {
    return set_scalar(w, key, val, "minfer_writer_set_bool", &gguf::writer::set_bool);
}

int minfer_writer_set_str(struct minfer_gguf_writer* w, const char* key, const char* val) noexcept {
    constexpr const char* fn = "minfer_writer_set_str";
    if (checked(w, fn) == nullptr || refuse_null(key, fn, "key") || refuse_null(val, fn, "val")) return -1;
    return change(w, fn, [&](gguf::writer& into) { into.set_string(key, val); });
}

int minfer_writer_set_arr_data(struct minfer_gguf_writer* w, const char* key, enum minfer_gguf_type elem_type,
                               const void* data, size_t n) noexcept {
    constexpr const char* fn = "minfer_writer_set_arr_data";
    if (checked(w, fn) == nullptr || refuse_null(key, fn, "key") || (n > 0 && refuse_null(data, fn, "data")))
        return -1;
    // An enum value outside 0..12 becomes a tag the writer refuses (bad_value_type): never a size.
    const auto type = static_cast<gguf::value_type>(static_cast<std::uint32_t>(elem_type));
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(n, static_cast<std::size_t>(gguf::value_size(type)), &bytes)) {
        gguf::error e;
        e.code = gguf::errc::size_overflow;
        e.where = gguf::section::metadata;
        e.subject = key;
        e.expected = SIZE_MAX;
        e.found = n;
        record(e);
        return -1;
    }
    const std::span<const std::byte> elements(static_cast<const std::byte*>(data), data == nullptr ? 0 : bytes);
    return change(w, fn, [&](gguf::writer& into) { into.set_array(key, type, elements); });
}

int minfer_writer_set_arr_str(struct minfer_gguf_writer* w, const char* key, const char* const* strs, size_t n) noexcept {
    constexpr const char* fn = "minfer_writer_set_arr_str";
    if (checked(w, fn) == nullptr || refuse_null(key, fn, "key") || (n > 0 && refuse_null(strs, fn, "strs")))
        return -1;
    try {
        std::vector<std::string_view> items;
        items.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            if (strs[i] == nullptr) {
                const std::string which = "strs[" + std::to_string(i) + "]";
                record_code(null_argument, fn, which);
                return -1;
            }
            items.emplace_back(strs[i]);
        }
        const std::span<const std::string_view> all(items);
        return change(w, fn, [&](gguf::writer& into) { into.set_strings(key, all); });
    } catch (...) {
        record_exception(fn);
        return -1;
    }
}

int minfer_writer_set_kv_from(struct minfer_gguf_writer* w, const struct minfer_gguf_context* src) noexcept {
    constexpr const char* fn = "minfer_writer_set_kv_from";
    if (checked(w, fn) == nullptr) return -1;
    const gguf::file_view* meta = context_metadata(src, fn);
    if (meta == nullptr) return -1;
    return change(w, fn, [&](gguf::writer& into) {
        for (const gguf::kv& kv : meta->metadata()) into.set(kv);
    });
}

int minfer_writer_add_tensor(struct minfer_gguf_writer* w, const char* name, int ggml_type, int n_dims,
                             const int64_t* ne, const void* data, size_t size) noexcept {
    constexpr const char* fn = "minfer_writer_add_tensor";
    std::span<const std::int64_t> shape;
    if (checked(w, fn) == nullptr || refuse_null(name, fn, "name") || !shape_of(n_dims, ne, fn, shape) ||
        (size > 0 && refuse_null(data, fn, "data")))
        return -1;
    const auto type = static_cast<gguf::tensor_type>(static_cast<std::uint32_t>(ggml_type));
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(data), data == nullptr ? 0 : size);
    return change(w, fn, [&](gguf::writer& into) {
        // The probe needs only the size; the caller's writer borrows the buffer (no copy).
        into.add_tensor(name, type, shape,
                        &into == &w->model ? gguf::tensor_source::borrow(bytes) : gguf::tensor_source::zeros(size));
    });
}

int minfer_writer_add_tensor_cb(struct minfer_gguf_writer* w, const char* name, int ggml_type, int n_dims,
                                const int64_t* ne, size_t size, minfer_tensor_read_fn read, void* user) noexcept {
    constexpr const char* fn = "minfer_writer_add_tensor_cb";
    std::span<const std::int64_t> shape;
    if (checked(w, fn) == nullptr || refuse_null(name, fn, "name") || !shape_of(n_dims, ne, fn, shape) ||
        (read == nullptr && refuse_null(nullptr, fn, "read")))
        return -1;
    const auto type = static_cast<gguf::tensor_type>(static_cast<std::uint32_t>(ggml_type));
    return change(w, fn, [&](gguf::writer& into) {
        into.add_tensor(name, type, shape,
                        &into == &w->model ? gguf::tensor_source::callback(size, fill_from(read, user))
                                           : gguf::tensor_source::zeros(size));
    });
}

int minfer_writer_write(struct minfer_gguf_writer* w, const char* path, unsigned flags, struct minfer_error* err) noexcept {
    constexpr const char* fn = "minfer_writer_write";
    auto fail = [err]() noexcept {
        report(err, true);
        return -1;
    };
    if (checked(w, fn) == nullptr || refuse_null(path, fn, "path")) return fail();
    if ((flags & ~known_write_flags) != 0) {
        record_code(unsupported_param, fn, "unknown flag bits (MINFER_WRITE_REPLACE is the only flag)",
                    known_write_flags, flags);
        return fail();
    }
    try {
        if (auto r = write_model(w->model, path, (flags & MINFER_WRITE_REPLACE) != 0); !r) {
            record_open_error(std::move(r).error(), path);
            return fail();
        }
        report(err, false);
        return 0;
    } catch (...) {
        record_exception(fn);
        return fail();
    }
}

}  // extern "C"
