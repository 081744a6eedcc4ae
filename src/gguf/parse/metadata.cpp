// Parse stage 2 of 4, metadata: the KV records, their types, strings, arrays and general.alignment.
// (parser.hpp has the order of the stages and the one failure path.)
#include "parser.hpp"

#include "record_count.hpp"

namespace minfer::gguf {

bool parser::metadata() {
    const std::size_t n = detail::records_to_reserve(n_kv_, [&] { return detail::count_kv_records(cur_, n_kv_); });
    view_.kvs_.reserve(n);
    view_.kv_index_.reset(n);
    const bool ok = kv_records();
    // A repeat found by the window itself is the first one in the file (see tensor_table()).
    if (!ok && err_.code == errc::duplicate_key) return false;
    // Keys still queued are checked before any failure is reported: a repeated key earlier in
    // the file, or the failing record's own key, comes first.
    if (auto d = keys_.flush(key_of())) return duplicate(*d, errc::duplicate_key, section::metadata);
    return ok;
}

bool parser::kv_records() {
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

bool parser::type_tag(value_type& t, const char* what) {
    const std::uint64_t at = cur_.tell();
    std::uint32_t raw = 0;
    if (!read(raw, section::metadata, what)) return false;
    if (const verdict v = rules::value_tag(raw); !v) {
        err_.detail = what;
        return fail(v, section::metadata, at);
    }
    t = static_cast<value_type>(raw);
    return true;
}

bool parser::value(kv& e) {
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
    if (const verdict v = rules::element_tag(static_cast<std::uint32_t>(e.element_type)); !v)
        return fail(v, section::metadata, at);
    if (!read(e.count, section::metadata, "array count")) return false;
    if (e.count > caps_.max_array_elems)
        return fail(errc::array_too_long, section::metadata, at + 4, caps_.max_array_elems, e.count);
    if (e.element_type != value_type::string) return fixed(e, e.count);

    // Strings: each is (u64 length, bytes); at least 8 bytes apiece bounds the count first.
    if (e.count > cur_.file_remaining() / 8) {
        err_.detail = "string";
        return fail(errc::array_exceeds_file, section::metadata, at + 4, cur_.file_remaining(), e.count);
    }
    const std::byte* start = cur_.here();
    // Marks every string_mark_stride items, so that file_view::string_item finds an item of the
    // vocabulary without walking it (reserved first: the loop below does not allocate).
    std::vector<std::uint64_t>* marks = nullptr;
    if (e.count > file_view::string_mark_stride) {
        view_.string_marks_.push_back({view_.kvs_.size(), {}});
        marks = &view_.string_marks_.back().offsets;
        marks->reserve(static_cast<std::size_t>((e.count - 1) / file_view::string_mark_stride));
    }
    // The vocabulary and the merges are most of a file's strings (300k in a Qwen2.5 file): they
    // are checked in this tight loop with exactly read_string's conditions (8 bytes for the
    // length, at most max_string_bytes, inside the bytes). The first item that fails one is read
    // again by read_string below, which says why.
    std::uint64_t k = 0;
    {
        const std::byte* p = start;
        std::uint64_t left = cur_.remaining();
        const std::uint64_t max = caps_.max_string_bytes;
        for (; k < e.count; ++k) {
            if (left < 8) break;
            const std::uint64_t n = detail::load<std::uint64_t>(p);
            if (n > max || n > left - 8) break;
            if (marks != nullptr && k != 0 && k % file_view::string_mark_stride == 0)
                marks->push_back(static_cast<std::uint64_t>(p - start));
            p += 8 + n;
            left -= 8 + n;
        }
        cur_.skip(static_cast<std::uint64_t>(p - start));
    }
    for (; k < e.count; ++k) {
        std::string_view s;
        if (!read_string(s, section::metadata, "array string")) {
            err_.item = static_cast<std::int64_t>(k);  // "item 2 of 'tokenizer.ggml.tokens'"
            return false;
        }
    }
    e.payload = std::span(start, static_cast<std::size_t>(cur_.here() - start));
    return true;
}

// A fixed-size scalar or array of n elements.
bool parser::fixed(kv& e, std::uint64_t n) {
    const std::uint64_t at = cur_.tell();
    const std::uint64_t size = value_size(e.element_type);
    if (n > cur_.file_remaining() / size) {
        if (e.is_array()) {
            err_.detail = std::string(to_string(e.element_type));
            return fail(errc::array_exceeds_file, section::metadata, at, cur_.file_remaining(), n);
        }
        err_.detail = std::string(to_string(e.type)) + " value";
        return fail(errc::truncated, section::metadata, at, size, cur_.file_remaining());
    }
    if (n > cur_.remaining() / size) return need_head(at + n * size);  // fits the file, not the head
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

bool parser::alignment(const kv& e) {
    const std::uint32_t a = e.type == value_type::u32 ? detail::load<std::uint32_t>(e.payload.data()) : 0;
    if (const verdict v = rules::alignment(e.type, a); !v) return fail(v, section::metadata, e.offset);
    view_.alignment_ = a;
    return true;
}

}  // namespace minfer::gguf
