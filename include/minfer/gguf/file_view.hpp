#pragma once
// file_view: one GGUF file's bytes, verified once. parse() runs every structural check of the format
// (header, metadata, tensor table, data layout) in a single pass over bytes [0, data_offset) and
// never reads the data section. After a successful parse every accessor is noexcept and every view
// it returns is in bounds of the parsed bytes. A file_view does not own the bytes: it must not
// outlive them (model and mapped_file own them).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/detail/name_index.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf/value.hpp"

namespace minfer::gguf {

inline constexpr std::uint32_t gguf_version = 3;            ///< the newest version this library reads
inline constexpr std::uint32_t default_alignment = 32;      ///< GGUF_DEFAULT_ALIGNMENT
inline constexpr std::uint64_t max_string_bytes = 1ull << 30;  ///< GGUF_MAX_STRING_LENGTH
inline constexpr std::uint64_t max_array_elems = 1ull << 30;   ///< cap on one array's element count
inline constexpr std::string_view alignment_key = "general.alignment";

/// The caps of a parse. The defaults are llama.cpp's (a file it loads, we load); a caller that
/// knows its inputs (a metadata editor, a server that inspects uploads) may lower them. Whatever
/// the caps, counts are also bounded by what the file's remaining bytes can hold, and memory by
/// the records actually present.
struct limits {
    std::uint64_t max_string_bytes = gguf::max_string_bytes;  ///< one string (key, value, name); string_too_long
    std::uint64_t max_array_elems = gguf::max_array_elems;    ///< one array's count; array_too_long
    std::uint64_t max_kvs = UINT64_MAX;      ///< n_kv; count_too_large (expected = this cap)
    std::uint64_t max_tensors = UINT64_MAX;  ///< n_tensors; count_too_large (expected = this cap)
};

class file_view;

/// The metadata entries whose key starts with a prefix, in file order (file_view::with_prefix).
class kv_prefix_range {
public:
    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = kv;
        using difference_type = std::ptrdiff_t;
        using pointer = const kv*;
        using reference = const kv&;
        iterator() noexcept = default;
        const kv& operator*() const noexcept { return *p_; }
        const kv* operator->() const noexcept { return p_; }
        iterator& operator++() noexcept {
            ++p_;
            skip();
            return *this;
        }
        iterator operator++(int) noexcept { auto t = *this; ++*this; return t; }
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.p_ == b.p_; }

    private:
        friend class kv_prefix_range;
        iterator(const kv* p, const kv* end, std::string_view prefix) noexcept : p_(p), end_(end), prefix_(prefix) {
            skip();
        }
        void skip() noexcept {
            while (p_ != end_ && !p_->key.starts_with(prefix_)) ++p_;
        }
        const kv* p_ = nullptr;
        const kv* end_ = nullptr;
        std::string_view prefix_;
    };
    kv_prefix_range(std::span<const kv> all, std::string_view prefix) noexcept : all_(all), prefix_(prefix) {}
    iterator begin() const noexcept { return {all_.data(), all_.data() + all_.size(), prefix_}; }
    iterator end() const noexcept { return {all_.data() + all_.size(), all_.data() + all_.size(), prefix_}; }

private:
    std::span<const kv> all_;
    std::string_view prefix_;
};

class file_view {
public:
    /// Verify `bytes` as a GGUF file. Reads only [0, data_offset).
    /// @returns the first failed check as an error (section, offset, subject set; file left empty),
    /// or out_of_memory.
    static result<file_view> parse(std::span<const std::byte> bytes, const limits& caps = {}) noexcept;
    /// A temporary buffer would dangle: refuse it at compile time.
    static result<file_view> parse(std::vector<std::byte>&&, const limits& = {}) = delete;
    /// Verify a file of `file_size` bytes from its first head.size() bytes (a remote file's head).
    /// Every check is the whole file's: counts, strings and arrays are bounded by the file's size,
    /// and every tensor must lie inside the file. @returns the verdict parse() gives for the whole
    /// file, or head_incomplete (expected = a head length that lets the parse go on) when the
    /// head ends before [0, data_offset) is read. On success tensor_data() is empty for a tensor
    /// whose bytes are not in the head.
    static result<file_view> parse_head(std::span<const std::byte> head, std::uint64_t file_size,
                                        const limits& caps = {}) noexcept;
    static result<file_view> parse_head(std::vector<std::byte>&&, std::uint64_t, const limits& = {}) = delete;

    file_view() noexcept = default;
    // Move-only: a copy would duplicate every record and both indexes, silently (as `auto md =
    // m->metadata();` did). Take a reference instead.
    file_view(file_view&&) noexcept = default;
    file_view& operator=(file_view&&) noexcept = default;
    file_view(const file_view&) = delete;
    file_view& operator=(const file_view&) = delete;

    std::uint32_t version() const noexcept { return version_; }
    std::uint32_t alignment() const noexcept { return alignment_; }
    /// Absolute offset of the data section (the padded end of the tensor table; for a file without
    /// tensors, the end of the table itself).
    std::uint64_t data_offset() const noexcept { return data_offset_; }
    /// Size of the data section: the sum of the tensors' padded sizes.
    std::uint64_t data_size() const noexcept { return data_size_; }
    /// The bytes the view was parsed from (the whole file, or the head given to parse_head).
    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    /// The size of the whole file: bytes().size(), or the size given to parse_head.
    std::uint64_t file_size() const noexcept { return file_size_; }
    /// Whether bytes() is the whole file (false for a view of a head).
    bool complete() const noexcept { return bytes_.size() == file_size_; }

    /// All metadata in file order.
    std::span<const kv> metadata() const noexcept MINFER_LIFETIMEBOUND { return kvs_; }
    /// O(1) lookup; nullptr when absent.
    const kv* find(std::string_view key) const noexcept MINFER_LIFETIMEBOUND;
    /// The value of `key` as T (see kv::get). @returns key_not_found or type_mismatch.
    template <class T>
    result<T> get(std::string_view key) const noexcept;
    /// The number at `key` as T whatever width it is stored in, range-checked (see kv::as).
    /// @returns key_not_found, type_mismatch or value_out_of_range.
    template <class T>
    result<T> get_as(std::string_view key) const noexcept;
    /// `fallback` when `key` is absent; otherwise as get_as (numbers) or get (strings, arrays): a
    /// key present with the wrong type is still an error, never silently replaced.
    template <class T>
    result<T> get_or(std::string_view key, T fallback) const noexcept;
    /// The entries whose key starts with `prefix` ("tokenizer.ggml."), in file order.
    kv_prefix_range with_prefix(std::string_view prefix) const noexcept MINFER_LIFETIMEBOUND { return {kvs_, prefix}; }

    /// Item `i` of `array`, a string array of this view (tokenizer.ggml.tokens, say), found from the
    /// nearest of the marks the parse left every `string_mark_stride` items of a long string array:
    /// at most that many records walked, never the O(i) walk of array_view::string_at. A kv of another
    /// view is answered by that walk. @returns type_mismatch (not a string array) or index_out_of_range.
    result<std::string_view> string_item(const kv& array, std::uint64_t i) const noexcept;
    /// Items between two marks of a string array.
    static constexpr std::uint64_t string_mark_stride = 1024;

    /// All tensors in file order.
    std::span<const tensor_info> tensors() const noexcept MINFER_LIFETIMEBOUND { return tensors_; }
    /// O(1) lookup; nullptr when absent.
    const tensor_info* find_tensor(std::string_view name) const noexcept MINFER_LIFETIMEBOUND;
    /// A tensor's bytes: [data_offset + offset, + n_bytes), in bounds by construction. `t` must be
    /// one of this view's tensors(); a handle from another file (or a copy altered by hand) gets an
    /// empty span, never a read outside these bytes.
    /// A view of a head (parse_head) gives an empty span for a tensor whose bytes it does not hold.
    std::span<const std::byte> tensor_data(const tensor_info& t) const noexcept MINFER_LIFETIMEBOUND {
        if (!owns(t)) return {};
        if (!complete() && data_offset_ + t.offset + t.n_bytes > bytes_.size()) return {};
        return bytes_.subspan(static_cast<std::size_t>(data_offset_ + t.offset), static_cast<std::size_t>(t.n_bytes));
    }
    /// Whether `t` is an entry of this view's tensor table (by address).
    bool owns(const tensor_info& t) const noexcept {
        const auto at = reinterpret_cast<std::uintptr_t>(&t);
        const auto first = reinterpret_cast<std::uintptr_t>(tensors_.data());
        return at >= first && at < first + tensors_.size() * sizeof(tensor_info) && (at - first) % sizeof(tensor_info) == 0;
    }

private:
    friend class parser;
    std::span<const std::byte> bytes_;
    std::uint64_t file_size_ = 0;
    std::uint32_t version_ = 0;
    std::uint32_t alignment_ = default_alignment;
    std::uint64_t data_offset_ = 0;
    std::uint64_t data_size_ = 0;
    std::vector<kv> kvs_;
    std::vector<tensor_info> tensors_;
    // The marks of the string arrays longer than string_mark_stride: for kv `kv`, the byte offset
    // in its payload of items stride, 2 * stride, … (item 0 is at offset 0).
    struct string_marks {
        std::size_t kv = 0;
        std::vector<std::uint64_t> offsets;
    };
    std::vector<string_marks> string_marks_;
    detail::name_index kv_index_;
    detail::name_index tensor_index_;
};

error key_not_found_error(std::string_view key) noexcept;

template <class T>
result<T> file_view::get(std::string_view key) const noexcept {
    const kv* e = find(key);
    if (e == nullptr) return unexpected(key_not_found_error(key));
    return e->get<T>();
}

template <class T>
result<T> file_view::get_as(std::string_view key) const noexcept {
    const kv* e = find(key);
    if (e == nullptr) return unexpected(key_not_found_error(key));
    return e->as<T>();
}

template <class T>
result<T> file_view::get_or(std::string_view key, T fallback) const noexcept {
    const kv* e = find(key);
    if (e == nullptr) return fallback;
    if constexpr (detail::is_fixed_value<T>) {
        return e->as<T>();
    } else {
        return e->get<T>();
    }
}

}  // namespace minfer::gguf
