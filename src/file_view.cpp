// file_view::parse: the verifier. One pass over [0, data_offset): header, metadata, tensor table,
// then the layout of the data section is proven from the table alone (the data is never read).
// Each check fails through one place (fail()) that records code, section, offset and subject.
#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include "byte_cursor.hpp"
#include "insert_window.hpp"
#include "record_count.hpp"
#include "shape_check.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/tensor.hpp"

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian; a byte-swapping path is not written");

namespace minfer::gguf {

error key_not_found_error(std::string_view key) {
    error e;
    e.code = errc::key_not_found;
    e.where = section::access;
    e.subject = std::string(key.substr(0, 256));
    return e;
}

namespace {
// The smallest records, used to bound counts before anything is allocated.
constexpr std::uint64_t min_kv_bytes = 8 + 1 + 4 + 1;          // key length, 1-byte key, type, u8
constexpr std::uint64_t min_tensor_bytes = 8 + 1 + 4 + 4 + 8;  // name length, 1-byte name, n_dims, type, offset
// Room reserved up front for records: a count the file merely declares (bounded by the file size
// above, but a multi-GB file still allows hundreds of millions) must not size an allocation. Up to
// this many are reserved as declared; a larger table is first counted (record_count.hpp) and sized
// for the records that are really there.
constexpr std::uint64_t initial_records = 4096;

template <class Count>
std::size_t records_to_reserve(std::uint64_t declared, Count&& count) noexcept {
    return static_cast<std::size_t>(declared <= initial_records ? declared : count());
}
}  // namespace

class parser {
public:
    explicit parser(std::span<const std::byte> bytes) noexcept : cur_(bytes) { view_.bytes_ = bytes; }

    result<file_view> run() {
        if (!header() || !metadata() || !tensor_table() || !layout()) return unexpected(std::move(err_));
        return std::move(view_);
    }

private:
    // ---- the one failure path -------------------------------------------------------------
    // Cold and out of line, so the checks on the hot path stay a compare and a branch.
    [[gnu::cold, gnu::noinline]] bool fail(errc code, section where, std::uint64_t offset, std::uint64_t expected = 0,
                                           std::uint64_t found = 0) {
        err_.code = code;
        err_.where = where;
        err_.offset = offset;
        err_.expected = expected;
        err_.found = found;
        if (err_.subject.empty() && !about_.empty()) subject(about_);
        return false;
    }
    void subject(std::string_view s) { err_.subject.assign(s.substr(0, 256)); }

    template <class T>
    bool read(T& v, section where, const char* what) {
        if (cur_.read(v)) return true;
        err_.detail = what;
        return fail(errc::truncated, where, cur_.tell(), sizeof(T), cur_.remaining());
    }

    // u64 length + bytes; the view points into the file. `what` names the string for errors.
    bool read_string(std::string_view& out, section where, const char* what) {
        const std::uint64_t at = cur_.tell();
        std::uint64_t n = 0;
        if (!read(n, where, what)) return false;
        if (n > max_string_bytes) {
            err_.detail = what;
            return fail(errc::string_too_long, where, at, max_string_bytes, n);
        }
        if (!cur_.has(n)) {
            err_.detail = what;
            return fail(errc::string_exceeds_file, where, at, cur_.remaining(), n);
        }
        out = std::string_view(reinterpret_cast<const char*>(cur_.here()), static_cast<std::size_t>(n));
        cur_.skip(n);
        return true;
    }

    // ---- header ---------------------------------------------------------------------------
    bool header() {
        std::uint32_t magic = 0;
        if (!cur_.has(4)) {
            err_.detail = "magic";
            return fail(errc::truncated, section::header, 0, 4, cur_.remaining());
        }
        (void)cur_.read(magic);
        if (magic != 0x46554747u) return fail(errc::bad_magic, section::header, 0, 0x46554747u, magic);  // "GGUF"
        std::uint32_t version = 0;
        if (!read(version, section::header, "version")) return false;
        if (version == 0) return fail(errc::bad_version, section::header, 4, gguf_version, version);
        if ((version & 0xFFFFu) == 0) return fail(errc::byte_swapped, section::header, 4, gguf_version, version);
        if (version == 1) return fail(errc::version_unsupported, section::header, 4, gguf_version, version);
        if (version > gguf_version) return fail(errc::version_too_new, section::header, 4, gguf_version, version);
        view_.version_ = version;

        std::int64_t n_tensors = 0, n_kv = 0;
        if (!read(n_tensors, section::header, "n_tensors") || !read(n_kv, section::header, "n_kv")) return false;
        if (n_tensors < 0) {
            subject("n_tensors");
            return fail(errc::negative_count, section::header, 8, 0, static_cast<std::uint64_t>(n_tensors));
        }
        if (n_kv < 0) {
            subject("n_kv");
            return fail(errc::negative_count, section::header, 16, 0, static_cast<std::uint64_t>(n_kv));
        }
        // Bound both counts by what the rest of the file could hold, before reserving anything.
        const std::uint64_t rest = cur_.remaining();
        const std::uint64_t max_kv = rest / min_kv_bytes;
        if (static_cast<std::uint64_t>(n_kv) > max_kv) {
            subject("n_kv");
            return fail(errc::count_too_large, section::header, 16, max_kv, static_cast<std::uint64_t>(n_kv));
        }
        const std::uint64_t max_tensors = (rest - static_cast<std::uint64_t>(n_kv) * min_kv_bytes) / min_tensor_bytes;
        if (static_cast<std::uint64_t>(n_tensors) > max_tensors) {
            subject("n_tensors");
            return fail(errc::count_too_large, section::header, 8, max_tensors, static_cast<std::uint64_t>(n_tensors));
        }
        n_kv_ = static_cast<std::uint64_t>(n_kv);
        n_tensors_ = static_cast<std::uint64_t>(n_tensors);
        return true;
    }

    // ---- metadata -------------------------------------------------------------------------
    // The names of records already parsed, for the indexes' comparisons.
    auto key_of() {
        return [this](std::uint32_t k) { return view_.kvs_[k].key; };
    }
    auto tensor_name_of() {
        return [this](std::uint32_t k) { return view_.tensors_[k].name; };
    }

    bool metadata() {
        const std::size_t n = records_to_reserve(n_kv_, [&] { return detail::count_kv_records(cur_, n_kv_); });
        view_.kvs_.reserve(n);
        view_.kv_index_.reset(n);
        const bool ok = kv_records();
        // Keys still queued are checked before any failure is reported: a repeated key earlier in
        // the file, or the failing record's own key, comes first.
        if (auto d = keys_.flush(key_of())) return duplicate(*d, errc::duplicate_key, section::metadata);
        return ok;
    }

    // A repeated name found by an insert window: the failure of the record that repeats it.
    bool duplicate(const detail::insert_window::duplicate& d, errc code, section where) {
        err_ = error{};
        err_.index = d.id;
        about_ = d.name;
        return fail(code, where, d.offset, d.first, d.id);
    }

    bool kv_records() {
        for (std::uint64_t i = 0; i < n_kv_; ++i) {
            err_.index = static_cast<std::int64_t>(i);
            kv e{};
            e.offset = cur_.tell();
            about_ = {};
            if (!read_string(e.key, section::metadata, "key")) return false;
            about_ = e.key;  // every later failure of this record is about this key
            if (e.key.empty()) return fail(errc::empty_key, section::metadata, e.offset);
            if (const auto nul = e.key.find('\0'); nul != std::string_view::npos)
                return fail(errc::nul_in_name, section::metadata, e.offset + 8 + nul, 0, nul);
            if (auto d = keys_.push(e.key, static_cast<std::uint32_t>(i), e.offset, key_of()))
                return duplicate(*d, errc::duplicate_key, section::metadata);
            if (!value(e)) return false;
            if (e.key == alignment_key && !alignment(e)) return false;
            view_.kvs_.push_back(e);
        }
        about_ = {};
        err_.index = -1;
        return true;
    }

    bool type_tag(value_type& t, const char* what) {
        const std::uint64_t at = cur_.tell();
        std::uint32_t raw = 0;
        if (!read(raw, section::metadata, what)) return false;
        if (raw >= value_type_count) {
            err_.detail = what;
            return fail(errc::bad_value_type, section::metadata, at, 0, raw);
        }
        t = static_cast<value_type>(raw);
        return true;
    }

    bool value(kv& e) {
        if (!type_tag(e.type, "value type")) return false;
        e.element_type = e.type;
        e.count = 1;
        if (e.type == value_type::string) {
            std::string_view s;
            if (!read_string(s, section::metadata, "string value")) return false;
            e.payload = std::as_bytes(std::span(s.data(), s.size()));
            return true;
        }
        if (e.type != value_type::array) return fixed(e, 1);

        const std::uint64_t at = cur_.tell();
        if (!type_tag(e.element_type, "array element type")) return false;
        if (e.element_type == value_type::array) return fail(errc::nested_array, section::metadata, at);
        if (!read(e.count, section::metadata, "array count")) return false;
        if (e.count > max_array_elems) return fail(errc::array_too_long, section::metadata, at + 4, max_array_elems, e.count);
        if (e.element_type != value_type::string) return fixed(e, e.count);

        // Strings: each is (u64 length, bytes); at least 8 bytes apiece bounds the count first.
        if (e.count > cur_.remaining() / 8) {
            err_.detail = "string";
            return fail(errc::array_exceeds_file, section::metadata, at + 4, cur_.remaining(), e.count);
        }
        const std::byte* start = cur_.here();
        for (std::uint64_t k = 0; k < e.count; ++k) {
            std::string_view s;
            if (!read_string(s, section::metadata, "array string")) return false;
        }
        e.payload = std::span(start, static_cast<std::size_t>(cur_.here() - start));
        return true;
    }

    // A fixed-size scalar or array of n elements.
    bool fixed(kv& e, std::uint64_t n) {
        const std::uint64_t at = cur_.tell();
        const std::uint64_t size = value_size(e.element_type);
        if (n > cur_.remaining() / size) {
            if (e.is_array()) {
                err_.detail = std::string(to_string(e.element_type));
                return fail(errc::array_exceeds_file, section::metadata, at, cur_.remaining(), n);
            }
            err_.detail = std::string(to_string(e.type)) + " value";
            return fail(errc::truncated, section::metadata, at, size, cur_.remaining());
        }
        e.payload = std::span(cur_.here(), static_cast<std::size_t>(n * size));
        if (e.element_type == value_type::boolean) {
            for (std::size_t k = 0; k < e.payload.size(); ++k) {
                const auto b = static_cast<std::uint8_t>(e.payload[k]);
                if (b > 1) return fail(errc::bad_bool, section::metadata, at + k, 1, b);
            }
        }
        cur_.skip(n * size);
        return true;
    }

    bool alignment(const kv& e) {
        if (e.type != value_type::u32)
            return fail(errc::alignment_wrong_type, section::metadata, e.offset, static_cast<std::uint64_t>(value_type::u32),
                        static_cast<std::uint64_t>(e.type));
        const auto a = detail::load<std::uint32_t>(e.payload.data());
        if (a == 0 || (a & (a - 1)) != 0) return fail(errc::bad_alignment, section::metadata, e.offset, 0, a);
        view_.alignment_ = a;
        return true;
    }

    // ---- tensor table ---------------------------------------------------------------------
    bool tensor_table() {
        const std::size_t n =
            records_to_reserve(n_tensors_, [&] { return detail::count_tensor_records(cur_, n_tensors_); });
        view_.tensors_.reserve(n);
        view_.tensor_index_.reset(n);
        const bool ok = tensor_records();
        if (auto d = names_.flush(tensor_name_of())) return duplicate(*d, errc::duplicate_tensor, section::tensor_info);
        return ok;
    }

    bool tensor_records() {
        for (std::uint64_t i = 0; i < n_tensors_; ++i) {
            err_.index = static_cast<std::int64_t>(i);
            tensor_info t{};
            t.info_offset = cur_.tell();
            if (!read_string(t.name, section::tensor_info, "tensor name")) return false;
            about_ = t.name;  // every later failure of this record is about this tensor
            if (t.name.empty() || t.name.size() > max_name_bytes)
                return fail(errc::bad_name_length, section::tensor_info, t.info_offset, max_name_bytes, t.name.size());
            if (const auto nul = t.name.find('\0'); nul != std::string_view::npos)
                return fail(errc::nul_in_name, section::tensor_info, t.info_offset + 8 + nul, 0, nul);
            if (auto d = names_.push(t.name, static_cast<std::uint32_t>(i), t.info_offset, tensor_name_of()))
                return duplicate(*d, errc::duplicate_tensor, section::tensor_info);
            const std::uint64_t dims_at = cur_.tell();
            if (!read(t.n_dims, section::tensor_info, "n_dims")) return false;
            if (t.n_dims > max_dims) return fail(errc::bad_n_dims, section::tensor_info, dims_at, max_dims, t.n_dims);
            std::array<std::int64_t, 4> ne{1, 1, 1, 1};
            for (std::uint32_t d = 0; d < t.n_dims; ++d)
                if (!read(ne[d], section::tensor_info, "tensor dimension")) return false;
            const std::uint64_t type_at = cur_.tell();
            std::uint32_t type_id = 0;
            if (!read(type_id, section::tensor_info, "tensor type")) return false;
            if (!read(t.offset, section::tensor_info, "tensor offset")) return false;

            shape_facts facts;
            if (const auto v = detail::check_shape_into(type_id, std::span(ne.data(), t.n_dims), facts); v.code != errc::ok)
                return bad_shape(v, type_id, facts, dims_at, type_at);
            t.type = static_cast<tensor_type>(type_id);
            t.ne = facts.ne;
            t.nb = facts.nb;
            t.n_elements = facts.n_elements;
            t.n_bytes = facts.n_bytes;
            view_.tensors_.push_back(t);
            about_ = {};
        }
        err_.index = -1;
        return true;
    }

    [[gnu::cold, gnu::noinline]] bool bad_shape(const detail::shape_verdict& v, std::uint32_t type_id,
                                                const shape_facts& facts, std::uint64_t dims_at, std::uint64_t type_at) {
        const error se = detail::shape_error(v, type_id, facts);
        err_.shape = se.shape;
        err_.detail = se.detail;
        std::uint64_t at = dims_at + 4;  // ne[0]
        if (se.code == errc::bad_dim) at += 8 * se.expected;
        if (se.code == errc::bad_tensor_type || se.code == errc::removed_tensor_type) at = type_at;
        return fail(se.code, section::tensor_info, at, se.expected, se.found);
    }

    // ---- data layout ----------------------------------------------------------------------
    bool layout() {
        const std::uint64_t align = view_.alignment_;
        const std::uint64_t end_of_table = cur_.tell();
        // A file without tensors has no data section: it may end right after its table.
        view_.data_offset_ = n_tensors_ > 0 ? pad_to(end_of_table, align) : end_of_table;
        std::uint64_t expected = 0;  // the running sum of padded sizes
        for (std::size_t i = 0; i < view_.tensors_.size(); ++i) {
            const tensor_info& t = view_.tensors_[i];
            err_.index = static_cast<std::int64_t>(i);
            about_ = t.name;
            const std::uint64_t offset_field = t.info_offset + 8 + t.name.size() + 4 + 8ull * t.n_dims + 4;
            if (t.offset != expected)
                return fail(errc::offset_mismatch, section::tensor_info, offset_field, expected, t.offset);
            // (the builtins store the wrapped sum on overflow: keep `expected` intact for the report)
            std::uint64_t padded = 0, next = 0;
            if (__builtin_add_overflow(t.n_bytes, align - 1, &padded) ||
                __builtin_add_overflow(expected, padded & ~(align - 1), &next))
                return fail(errc::data_size_overflow, section::tensor_info, offset_field, expected, t.n_bytes);
            expected = next;
        }
        about_ = {};
        view_.data_size_ = expected;
        // The file must hold every tensor's bytes (trailing padding after the last one is optional).
        const std::uint64_t size = cur_.size();
        for (std::size_t i = 0; i < view_.tensors_.size(); ++i) {
            const tensor_info& t = view_.tensors_[i];
            std::uint64_t end = 0;
            if (__builtin_add_overflow(view_.data_offset_, t.offset, &end) || __builtin_add_overflow(end, t.n_bytes, &end) ||
                end > size) {
                err_.index = static_cast<std::int64_t>(i);
                subject(t.name);
                // Report what the whole data section needs, so the message says how much is missing.
                const tensor_info& last = view_.tensors_.back();
                std::uint64_t need = 0;
                if (__builtin_add_overflow(view_.data_offset_, last.offset + last.n_bytes, &need)) need = UINT64_MAX;
                std::uint64_t at = 0;
                if (__builtin_add_overflow(view_.data_offset_, t.offset, &at)) at = size;
                return fail(errc::data_truncated, section::data, std::min(at, size), need, size);
            }
        }
        err_.index = -1;
        err_.subject.clear();
        return true;
    }

    detail::byte_cursor cur_;
    std::string_view about_;  // the key or tensor the current checks are about (subject of a failure)
    file_view view_;
    detail::insert_window keys_{view_.kv_index_};
    detail::insert_window names_{view_.tensor_index_};
    error err_;
    std::uint64_t n_kv_ = 0;
    std::uint64_t n_tensors_ = 0;
};

result<file_view> file_view::parse(std::span<const std::byte> bytes) noexcept {
    try {
        return parser(bytes).run();
    } catch (const std::bad_alloc&) {
        error e;
        e.code = errc::out_of_memory;
        e.detail = "indexing the file";
        return unexpected(std::move(e));
    }
}

const kv* file_view::find(std::string_view key) const noexcept {
    const std::int64_t i = kv_index_.find(key, [this](std::uint32_t k) { return kvs_[k].key; });
    return i < 0 ? nullptr : &kvs_[static_cast<std::size_t>(i)];
}

const tensor_info* file_view::find_tensor(std::string_view name) const noexcept {
    const std::int64_t i = tensor_index_.find(name, [this](std::uint32_t k) { return tensors_[k].name; });
    return i < 0 ? nullptr : &tensors_[static_cast<std::size_t>(i)];
}

}  // namespace minfer::gguf
