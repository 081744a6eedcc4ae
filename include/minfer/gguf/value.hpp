#pragma once
// Metadata values as views. A kv borrows its key and payload from the file's bytes; nothing is copied
// at parse time, and reading a value decodes it on demand (memcpy, so unaligned payloads are fine).
// Every view lives as long as the bytes it was parsed from (the model or mapped_file that owns them).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::gguf {

namespace detail {
template <class T> struct value_type_of;
template <> struct value_type_of<std::uint8_t> { static constexpr value_type v = value_type::u8; };
template <> struct value_type_of<std::int8_t> { static constexpr value_type v = value_type::i8; };
template <> struct value_type_of<std::uint16_t> { static constexpr value_type v = value_type::u16; };
template <> struct value_type_of<std::int16_t> { static constexpr value_type v = value_type::i16; };
template <> struct value_type_of<std::uint32_t> { static constexpr value_type v = value_type::u32; };
template <> struct value_type_of<std::int32_t> { static constexpr value_type v = value_type::i32; };
template <> struct value_type_of<float> { static constexpr value_type v = value_type::f32; };
template <> struct value_type_of<bool> { static constexpr value_type v = value_type::boolean; };
template <> struct value_type_of<std::uint64_t> { static constexpr value_type v = value_type::u64; };
template <> struct value_type_of<std::int64_t> { static constexpr value_type v = value_type::i64; };
template <> struct value_type_of<double> { static constexpr value_type v = value_type::f64; };

template <class T>
T load(const std::byte* p) noexcept {
    if constexpr (std::is_same_v<T, bool>) {
        return *p != std::byte{0};
    } else {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
}
}  // namespace detail

/// The strings of a string array: a forward range of string_view over the stored (u64 length, bytes)
/// records. Every length was bounds-checked by the parser, so iteration does no checks of its own.
class string_range {
public:
    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = std::string_view;
        using difference_type = std::ptrdiff_t;
        using pointer = const std::string_view*;
        using reference = std::string_view;

        iterator() noexcept = default;
        std::string_view operator*() const noexcept {
            const auto n = detail::load<std::uint64_t>(p_);
            return {reinterpret_cast<const char*>(p_ + 8), static_cast<std::size_t>(n)};
        }
        iterator& operator++() noexcept {
            p_ += 8 + detail::load<std::uint64_t>(p_);
            return *this;
        }
        iterator operator++(int) noexcept { auto t = *this; ++*this; return t; }
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.p_ == b.p_; }

    private:
        friend class string_range;
        explicit iterator(const std::byte* p) noexcept : p_(p) {}
        const std::byte* p_ = nullptr;
    };

    string_range() noexcept = default;
    string_range(std::span<const std::byte> records, std::uint64_t count) noexcept : bytes_(records), count_(count) {}
    iterator begin() const noexcept { return iterator(bytes_.data()); }
    iterator end() const noexcept { return iterator(bytes_.data() + bytes_.size()); }
    std::uint64_t size() const noexcept { return count_; }
    bool empty() const noexcept { return count_ == 0; }

private:
    std::span<const std::byte> bytes_;
    std::uint64_t count_ = 0;
};

/// A typed array value. Elements are read on demand from the file's bytes.
class array_view {
public:
    array_view() noexcept = default;
    array_view(value_type element_type, std::uint64_t count, std::span<const std::byte> payload) noexcept
        : type_(element_type), count_(count), bytes_(payload) {}

    value_type element_type() const noexcept { return type_; }
    std::uint64_t size() const noexcept { return count_; }
    bool empty() const noexcept { return count_ == 0; }
    /// The elements exactly as stored (for strings: the length-prefixed records).
    std::span<const std::byte> raw() const noexcept { return bytes_; }

    /// Element i of a fixed-size array. @returns type_mismatch if T is not the element type,
    /// index_out_of_range if i >= size().
    template <class T>
    result<T> at(std::uint64_t i) const noexcept {
        if (type_ != detail::value_type_of<T>::v) return unexpected(mismatch(detail::value_type_of<T>::v));
        if (i >= count_) return unexpected(out_of_range(i));
        return detail::load<T>(bytes_.data() + i * sizeof(T));
    }
    /// The strings of a string array (empty range for other types; check element_type()).
    string_range strings() const noexcept {
        return type_ == value_type::string ? string_range(bytes_, count_) : string_range();
    }
    /// String i, found by walking the records: O(i). For random access build a table once with
    /// string_table(). @returns type_mismatch or index_out_of_range.
    result<std::string_view> string_at(std::uint64_t i) const noexcept;
    /// All strings as one vector of views (one allocation, no string copied).
    /// @returns type_mismatch, or out_of_memory.
    result<std::vector<std::string_view>> string_table() const noexcept;

private:
    error mismatch(value_type wanted) const noexcept;
    error out_of_range(std::uint64_t i) const noexcept;
    value_type type_ = value_type::u8;
    std::uint64_t count_ = 0;
    std::span<const std::byte> bytes_;
};

/// One metadata key-value pair, as parsed.
struct kv {
    std::string_view key;        ///< the key, a view into the file (may hold any bytes: escape to print)
    value_type type;             ///< the value's tag; value_type::array for arrays
    value_type element_type;     ///< the element type of an array; equal to type for scalars
    std::uint64_t count;         ///< 1 for scalars and strings, the element count for arrays
    std::span<const std::byte> payload;  ///< scalar bytes, string bytes (no length), or array elements
    std::uint64_t offset;        ///< absolute offset of this record (its key length) in the file

    bool is_array() const noexcept { return type == value_type::array; }

    /// The value as T, which must be the stored type exactly (no conversion, no narrowing).
    /// T: u8…i64, float, double, bool, std::string_view, array_view.
    /// @returns type_mismatch (expected = the type asked for, found = the stored type).
    template <class T>
    result<T> get() const noexcept {
        if constexpr (std::is_same_v<T, std::string_view>) {
            if (type != value_type::string) return unexpected(mismatch(value_type::string));
            return std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size());
        } else if constexpr (std::is_same_v<T, array_view>) {
            if (type != value_type::array) return unexpected(mismatch(value_type::array));
            return array_view(element_type, count, payload);
        } else {
            constexpr value_type want = detail::value_type_of<T>::v;
            if (type != want) return unexpected(mismatch(want));
            return detail::load<T>(payload.data());
        }
    }
    /// Any integer scalar (u8…i64) widened to int64. @returns type_mismatch for other types and for
    /// a u64 above INT64_MAX.
    result<std::int64_t> as_i64() const noexcept;
    /// Any non-negative integer scalar widened to uint64. @returns type_mismatch for other types
    /// and for negative values.
    result<std::uint64_t> as_u64() const noexcept;

private:
    error mismatch(value_type wanted) const noexcept;
};

}  // namespace minfer::gguf
