// plan::make: every record checked with the loader's rules, every size and offset summed with an
// overflow check, so that a plan that succeeds describes a file the parser accepts and whose numbers
// are exact (the writer trusts them: it sizes buffers and files from them).
#include "minfer/gguf_write/plan.hpp"

#include <cstring>
#include <new>
#include <unordered_map>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/rules.hpp"

namespace minfer::gguf {
namespace {

constexpr std::uint64_t header_bytes = 4 + 4 + 8 + 8;  // magic, version, n_tensors, n_kv

template <class T>
T load(const std::byte* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Record the first failed rule; `false` so that callers can `return fail(...)`.
struct failure {
    error e;
    bool set(const verdict& v) noexcept {
        e.code = v.code;
        e.expected = v.expected;
        e.found = v.found;
        return false;
    }
};

// A value's bytes against its tag, as the parser reads them: sizes consistent with the tag, the
// loader's caps on strings and arrays, bool bytes 0 or 1. Nothing the writer encodes itself can fail
// here except the caps and bool bytes, but plan::make is public and takes any bytes.
verdict check_string_at(std::span<const std::byte> v, std::uint64_t& at) noexcept {
    if (v.size() - at < 8) return {errc::truncated, 8, v.size() - at};
    const auto len = load<std::uint64_t>(v.data() + at);
    if (len > max_string_bytes) return {errc::string_too_long, max_string_bytes, len};
    if (v.size() - at - 8 < len) return {errc::truncated, len, v.size() - at - 8};
    at += 8 + len;
    return {};
}

verdict check_fixed(value_type t, std::span<const std::byte> elems, std::uint64_t count) noexcept {
    std::uint64_t need = 0;
    if (__builtin_mul_overflow(count, std::uint64_t{value_size(t)}, &need) || need != elems.size())
        return {errc::truncated, need, elems.size()};
    if (t == value_type::boolean)
        for (std::byte b : elems)
            if (b != std::byte{0} && b != std::byte{1}) return {errc::bad_bool, 0, static_cast<std::uint64_t>(b)};
    return {};
}

verdict check_value(value_type type, std::span<const std::byte> v) noexcept {
    if (const verdict t = rules::value_tag(static_cast<std::uint32_t>(type)); !t) return t;
    if (type == value_type::string) {
        std::uint64_t at = 0;
        if (const verdict s = check_string_at(v, at); !s) return s;
        if (at != v.size()) return {errc::truncated, at, v.size()};
        return {};
    }
    if (type != value_type::array) return check_fixed(type, v, 1);
    if (v.size() < 12) return {errc::truncated, 12, v.size()};
    const auto elem = load<std::uint32_t>(v.data());
    if (const verdict t = rules::element_tag(elem); !t) return t;
    const auto count = load<std::uint64_t>(v.data() + 4);
    if (count > max_array_elems) return {errc::array_too_long, max_array_elems, count};
    if (static_cast<value_type>(elem) != value_type::string)
        return check_fixed(static_cast<value_type>(elem), v.subspan(12), count);
    std::uint64_t at = 12;
    for (std::uint64_t i = 0; i < count; ++i)
        if (const verdict s = check_string_at(v, at); !s) return s;
    if (at != v.size()) return {errc::truncated, at, v.size()};
    return {};
}

bool add(std::uint64_t& sum, std::uint64_t a) noexcept { return !__builtin_add_overflow(sum, a, &sum); }

// x rounded up to a multiple of align (a power of two), checked.
bool pad_checked(std::uint64_t x, std::uint64_t align, std::uint64_t& out) noexcept {
    if (__builtin_add_overflow(x, align - 1, &out)) return false;
    out &= ~(align - 1);
    return true;
}

// What plan::make computes, before it becomes a plan.
struct layout {
    std::uint32_t align = default_alignment;
    std::uint64_t metadata_end = 0, table_end = 0, data_offset = 0, data_bytes = 0;
    std::vector<plan::tensor> tensors;
};

result<void> lay_out(std::span<const kv_desc> kvs, std::span<const tensor_desc> tensors, layout& result_out,
                     bool pad_without_tensors) {
    std::vector<plan::tensor>& out = result_out.tensors;
    failure f;
    auto located = [&f](section s, std::size_t index, std::string_view name, std::uint64_t offset) {
        f.e.where = s;
        f.e.index = static_cast<std::int64_t>(index);
        f.e.subject.assign(name.substr(0, 256));
        f.e.offset = offset;
        return unexpected(std::move(f.e));
    };

    std::uint64_t at = header_bytes;
    std::uint32_t align = default_alignment;
    std::unordered_map<std::string_view, std::size_t> seen;
    seen.reserve(kvs.size());
    for (std::size_t i = 0; i < kvs.size(); ++i) {
        const kv_desc& k = kvs[i];
        if (const verdict v = rules::key(k.key); !v) {
            f.set(v);
            return located(section::metadata, i, k.key, at);
        }
        if (const auto [it, fresh] = seen.emplace(k.key, i); !fresh) {
            f.set({errc::duplicate_key, it->second, i});
            return located(section::metadata, i, k.key, at);
        }
        if (const verdict v = check_value(k.type, k.value); !v) {
            f.set(v);
            return located(section::metadata, i, k.key, at);
        }
        if (k.key == alignment_key) {
            const std::uint32_t a = k.type == value_type::u32 ? load<std::uint32_t>(k.value.data()) : 0;
            if (const verdict v = rules::alignment(k.type, a); !v) {
                f.set(v);
                return located(section::metadata, i, k.key, at);
            }
            align = a;
        }
        const std::uint64_t record_at = at;
        if (!add(at, 8) || !add(at, k.key.size()) || !add(at, 4) || !add(at, k.value.size())) {
            f.set({errc::size_overflow});
            return located(section::metadata, i, k.key, record_at);
        }
    }
    const std::uint64_t metadata_end = at;

    seen.clear();
    seen.reserve(tensors.size());
    out.reserve(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const tensor_desc& t = tensors[i];
        if (const verdict v = rules::tensor_name(t.name); !v) {
            f.set(v);
            return located(section::tensor_info, i, t.name, at);
        }
        if (const auto [it, fresh] = seen.emplace(t.name, i); !fresh) {
            f.set({errc::duplicate_tensor, it->second, i});
            return located(section::tensor_info, i, t.name, at);
        }
        auto facts = check_shape(static_cast<std::uint32_t>(t.type), t.ne);
        if (!facts) {
            f.e = std::move(facts).error();
            return located(section::tensor_info, i, t.name, at);
        }
        // A tensor is one object in memory for every reader (a span of a mapping, a vector).
        if (!rules::fits_in_memory(facts->n_bytes)) {
            f.set({errc::size_overflow, static_cast<std::uint64_t>(PTRDIFF_MAX), facts->n_bytes});
            f.e.shape = facts->ne;
            return located(section::tensor_info, i, t.name, at);
        }
        if (t.source_bytes && *t.source_bytes != facts->n_bytes) {
            f.set({errc::data_truncated, facts->n_bytes, *t.source_bytes});
            f.e.detail = "tensor bytes given to the writer";
            return located(section::data, i, t.name, at);
        }
        plan::tensor pt{};
        pt.name.assign(t.name);
        pt.type = t.type;
        pt.n_dims = static_cast<std::uint32_t>(t.ne.size());
        pt.ne = facts->ne;
        pt.n_bytes = facts->n_bytes;
        pt.info_offset = at;
        // (n_dims <= 4 here, so 8 * n_dims cannot overflow)
        if (!add(at, 8) || !add(at, t.name.size()) || !add(at, 4 + 8ull * pt.n_dims + 4 + 8)) {
            f.set({errc::size_overflow});
            return located(section::tensor_info, i, t.name, pt.info_offset);
        }
        out.push_back(std::move(pt));
    }
    const std::uint64_t table_end = at;

    // The loader's layout: data at the padded end of the table (no padding without tensors), each
    // tensor at the running sum of padded sizes, the last one padded too.
    std::uint64_t data_offset = table_end;
    if ((!tensors.empty() || pad_without_tensors) && !pad_checked(table_end, align, data_offset)) {
        f.set({errc::data_size_overflow, 0, table_end});
        return located(section::tensor_info, 0, {}, table_end);
    }
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        plan::tensor& pt = out[i];
        pt.offset = offset;
        if (!pad_checked(pt.n_bytes, align, pt.padded_bytes) || !add(offset, pt.padded_bytes)) {
            f.set({errc::data_size_overflow, pt.offset, pt.n_bytes});
            return located(section::tensor_info, i, pt.name, pt.info_offset);
        }
    }
    // Files are addressed with off_t: the whole file must fit in int64.
    std::uint64_t end = data_offset;
    if (!add(end, offset) || end > static_cast<std::uint64_t>(INT64_MAX)) {
        f.set({errc::data_size_overflow, static_cast<std::uint64_t>(INT64_MAX), offset});
        f.e.detail = "file size";
        return located(section::data, out.empty() ? 0 : out.size() - 1, {}, data_offset);
    }
    result_out.align = align;
    result_out.metadata_end = metadata_end;
    result_out.table_end = table_end;
    result_out.data_offset = data_offset;
    result_out.data_bytes = offset;
    return {};
}

}  // namespace

result<plan> plan::make(std::span<const kv_desc> kvs, std::span<const tensor_desc> tensors,
                        bool pad_without_tensors) noexcept {
    try {
        layout l;
        if (auto r = lay_out(kvs, tensors, l, pad_without_tensors); !r) return unexpected(std::move(r).error());
        plan p;
        p.alignment_ = l.align;
        p.kv_count_ = kvs.size();
        p.metadata_end_ = l.metadata_end;
        p.table_end_ = l.table_end;
        p.data_offset_ = l.data_offset;
        p.data_bytes_ = l.data_bytes;
        p.tensors_ = std::move(l.tensors);
        return p;
    } catch (const std::bad_alloc&) {
        return unexpected(out_of_memory_error("planning"));
    } catch (...) {  // std::length_error from a container: sizes beyond what memory can hold
        return unexpected(out_of_memory_error("planning"));
    }
}

}  // namespace minfer::gguf
