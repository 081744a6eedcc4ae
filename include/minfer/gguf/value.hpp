#pragma once
// Metadata values as views. A kv borrows its key and payload from the file's bytes; nothing is copied
// at parse time, and reading a value decodes it on demand (memcpy, so unaligned payloads are fine).
// Every view lives as long as the bytes it was parsed from (the model or mapped_file that owns them).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>
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
concept fixed_value_type = requires { value_type_of<T>::v; };
template <class T>
inline constexpr bool is_fixed_value = fixed_value_type<T>;

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
/// records. The parser walked and bounded every record, but the iterator reads each length again
/// from the file's bytes, and those may be rewritten by another process after the parse (a resumed
/// download, an in-place edit of a mapped file). So each step is clamped to the byte range that was
/// verified: a changed length can change the strings seen, never make a read leave the range.
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
            if (left() < 8) return {};
            return {reinterpret_cast<const char*>(p_ + 8), static_cast<std::size_t>(length())};
        }
        iterator& operator++() noexcept {
            p_ = left() < 8 ? end_ : p_ + 8 + length();  // never past end_
            return *this;
        }
        iterator operator++(int) noexcept { auto t = *this; ++*this; return t; }
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.p_ == b.p_; }

    private:
        friend class string_range;
        iterator(const std::byte* p, const std::byte* end) noexcept : p_(p), end_(end) {}
        std::uint64_t left() const noexcept { return static_cast<std::uint64_t>(end_ - p_); }
        // The record's length, read once per call and clamped to the bytes left after its prefix
        // (the caller has checked that the 8-byte prefix itself fits).
        std::uint64_t length() const noexcept {
            const std::uint64_t n = detail::load<std::uint64_t>(p_);
            return n <= left() - 8 ? n : left() - 8;
        }
        const std::byte* p_ = nullptr;
        const std::byte* end_ = nullptr;
    };

    string_range() noexcept = default;
    iterator begin() const noexcept { return iterator(first(), bytes_.data() + bytes_.size()); }
    iterator end() const noexcept { return iterator(bytes_.data() + bytes_.size(), bytes_.data() + bytes_.size()); }
    /// The count the file declared (and the parser verified). If the file changed since, iteration
    /// may yield fewer strings; it never reads outside the range.
    std::uint64_t size() const noexcept { return count_; }
    bool empty() const noexcept { return count_ == 0; }

private:
    friend class array_view;
    // Only a verified array hands out a range (array_view::strings()).
    string_range(std::span<const std::byte> records, std::uint64_t count) noexcept : bytes_(records), count_(count) {}
    // A range too short for even one length prefix is empty (begin == end).
    const std::byte* first() const noexcept {
        return bytes_.size() >= 8 ? bytes_.data() : bytes_.data() + bytes_.size();
    }
    std::span<const std::byte> bytes_;
    std::uint64_t count_ = 0;
};

/// A typed array value. Elements are read on demand from the file's bytes. Only a verified kv
/// hands one out (kv::get<array_view>), with a payload proven to hold every element.
class array_view {
public:
    array_view() noexcept = default;

    value_type element_type() const noexcept { return type_; }
    std::uint64_t size() const noexcept { return count_; }
    bool empty() const noexcept { return count_ == 0; }
    /// The elements exactly as stored (for strings: the length-prefixed records).
    std::span<const std::byte> raw() const noexcept { return bytes_; }

    /// Element i of a fixed-size array. @returns type_mismatch if T is not the element type,
    /// index_out_of_range if i >= size().
    template <class T>
    result<T> at(std::uint64_t i) const noexcept {
        static_assert(detail::is_fixed_value<T>, "array_view::at<T>: T must be one of std::uint8_t, std::int8_t, "
                                                 "std::uint16_t, std::int16_t, std::uint32_t, std::int32_t, "
                                                 "std::uint64_t, std::int64_t, float, double, bool");
        if (type_ != detail::value_type_of<T>::v) return unexpected(mismatch(detail::value_type_of<T>::v));
        if (i >= count_) return unexpected(out_of_range(i));
        return detail::load<T>(bytes_.data() + i * sizeof(T));
    }

    /// Copy every element into `out` (which must hold size() elements; extra room is left alone),
    /// converting each to T: any integer element type into any integer T with a range check, f32
    /// into float or double, f64 into double, bool into bool. One memcpy when T is the stored
    /// type. @returns the number of elements copied, or type_mismatch (strings, or a conversion that
    /// is not exact by construction), index_out_of_range (out too small: expected = size(), found =
    /// out.size()), value_out_of_range (found = the item's index).
    template <class T>
    result<std::size_t> copy_to(std::span<T> out) const noexcept;
    template <class T, std::size_t N>
        requires(N != std::dynamic_extent)
    result<std::size_t> copy_to(std::span<T, N> out) const noexcept {
        return copy_to(std::span<T>(out));
    }

    /// The strings of a string array (empty range for other types; check element_type()).
    string_range strings() const noexcept {
        return type_ == value_type::string ? string_range(bytes_, count_) : string_range();
    }
    /// String i, found by walking the records: O(i). For random access over many items build a
    /// string_index once (O(1) per item after one walk). @returns type_mismatch or index_out_of_range.
    result<std::string_view> string_at(std::uint64_t i) const noexcept;
    /// All strings as one vector of views (one allocation, no string copied).
    /// @returns type_mismatch, or out_of_memory.
    result<std::vector<std::string_view>> string_table() const noexcept;

private:
    friend struct kv;
    friend class string_index;
    array_view(value_type element_type, std::uint64_t count, std::span<const std::byte> payload) noexcept
        : type_(element_type), count_(count), bytes_(payload) {}
    error mismatch(value_type wanted) const noexcept;
    error out_of_range(std::uint64_t i) const noexcept;
    error item_out_of_range(std::uint64_t i) const noexcept;
    value_type type_ = value_type::u8;
    std::uint64_t count_ = 0;
    std::span<const std::byte> bytes_;
};

/// O(1) access to the items of a string array (a vocabulary looked up by token id). One walk at
/// build() records where each record ends (8 bytes per item, one allocation: half of what
/// string_table() takes); afterwards at(i) is two loads from the index and a bounds check, and
/// never reads a length from the file again, so a file rewritten after the build cannot move an
/// item outside the verified range.
class string_index {
public:
    string_index() noexcept = default;
    /// @returns type_mismatch (not a string array) or out_of_memory.
    static result<string_index> build(const array_view& a) noexcept;
    std::uint64_t size() const noexcept { return ends_.size(); }
    bool empty() const noexcept { return ends_.empty(); }
    /// Item i. @returns index_out_of_range (expected = size(), found = i).
    result<std::string_view> at(std::uint64_t i) const noexcept {
        if (i >= ends_.size()) return unexpected(out_of_range(i));
        const std::uint64_t begin = (i == 0 ? 0 : ends_[static_cast<std::size_t>(i - 1)]) + 8;
        const std::uint64_t end = ends_[static_cast<std::size_t>(i)];
        return std::string_view(reinterpret_cast<const char*>(bytes_.data() + begin), static_cast<std::size_t>(end - begin));
    }

private:
    error out_of_range(std::uint64_t i) const noexcept;
    std::span<const std::byte> bytes_;
    std::vector<std::uint64_t> ends_;  // offset just past record i within bytes_; begin of i is end of i-1 + 8
};

/// One metadata key-value pair, as parsed. Its fields are plain data for reading; the getters
/// check that the payload really holds what type and count say, so a kv built or altered by hand
/// can make a getter fail, never read outside its payload.
struct kv {
    std::string_view key;        ///< the key, a view into the file (may hold any bytes: escape to print)
    value_type type;             ///< the value's tag; value_type::array for arrays
    value_type element_type;     ///< the element type of an array; equal to type for scalars
    std::uint64_t count;         ///< 1 for scalars and strings, the element count for arrays
    std::span<const std::byte> payload;  ///< scalar bytes, string bytes (no length), or array elements
    std::uint64_t offset;        ///< absolute offset of this record (its key length) in the file

    bool is_array() const noexcept { return type == value_type::array; }

    /// The value as T, which must be the stored type exactly (no conversion, no narrowing; see
    /// as<T>() for numbers of any width). @returns type_mismatch (expected = the type asked for,
    /// found = the stored type).
    template <class T>
    result<T> get() const noexcept {
        static_assert(detail::is_fixed_value<T> || std::is_same_v<T, std::string_view> || std::is_same_v<T, array_view>,
                      "kv::get<T>: T must be one of std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, "
                      "std::uint32_t, std::int32_t, std::uint64_t, std::int64_t, float, double, bool, "
                      "std::string_view, minfer::gguf::array_view");
        if constexpr (std::is_same_v<T, std::string_view>) {
            if (type != value_type::string) return unexpected(mismatch(value_type::string));
            return std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size());
        } else if constexpr (std::is_same_v<T, array_view>) {
            if (type != value_type::array) return unexpected(mismatch(value_type::array));
            const std::uint32_t size = value_size(element_type);
            // Fixed elements must fill the payload exactly (a string array's records are bounded by
            // string_range itself).
            if (element_type != value_type::string && (size == 0 || payload.size() / size < count))
                return unexpected(mismatch(value_type::array));
            return array_view(element_type, count, payload);
        } else {
            constexpr value_type want = detail::value_type_of<T>::v;
            if (type != want || payload.size() < sizeof(T)) return unexpected(mismatch(want));
            return detail::load<T>(payload.data());
        }
    }

    /// A number as T, whatever width it is stored in: any integer type (u8…i64) into any integer T
    /// when the value fits, f32 into float or double, f64 into double. So `as<std::uint32_t>()`
    /// reads a block count stored as u32, u64 or i32 alike. @returns type_mismatch (a string, an
    /// array, a bool, a float asked as an integer or narrowed) or value_out_of_range (found = the
    /// value's bits, expected = T's maximum).
    template <class T>
    result<T> as() const noexcept;

    /// Any integer scalar (u8…i64) widened to int64. @returns type_mismatch for other types and for
    /// a u64 above INT64_MAX.
    result<std::int64_t> as_i64() const noexcept;
    /// Any non-negative integer scalar widened to uint64. @returns type_mismatch for other types
    /// and for negative values.
    result<std::uint64_t> as_u64() const noexcept;

private:
    error mismatch(value_type wanted) const noexcept;
    error out_of_range_value(std::uint64_t bits, std::uint64_t max) const noexcept;
};

namespace detail {
// One stored element converted to T (the rules of kv::as and array_view::copy_to). `ok` false:
// type_mismatch; `fits` false: value_out_of_range.
template <class T>
struct converted {
    T value{};
    bool ok = false;
    bool fits = false;
};

template <class T>
converted<T> convert(value_type stored, const std::byte* p) noexcept {
    converted<T> r;
    if constexpr (std::is_same_v<T, bool>) {
        if (stored == value_type::boolean) r = {load<bool>(p), true, true};
    } else if constexpr (std::is_floating_point_v<T>) {
        if (stored == value_type::f32) r = {static_cast<T>(load<float>(p)), true, true};
        if constexpr (std::is_same_v<T, double>)
            if (stored == value_type::f64) r = {load<double>(p), true, true};
    } else {
        static_assert(std::is_integral_v<T>, "convert<T>: T must be an integer, float, double or bool");
        auto put = [&r](auto v) {
            r.ok = true;
            r.fits = std::in_range<T>(v);
            if (r.fits) r.value = static_cast<T>(v);
        };
        switch (stored) {
            case value_type::u8: put(load<std::uint8_t>(p)); break;
            case value_type::i8: put(load<std::int8_t>(p)); break;
            case value_type::u16: put(load<std::uint16_t>(p)); break;
            case value_type::i16: put(load<std::int16_t>(p)); break;
            case value_type::u32: put(load<std::uint32_t>(p)); break;
            case value_type::i32: put(load<std::int32_t>(p)); break;
            case value_type::u64: put(load<std::uint64_t>(p)); break;
            case value_type::i64: put(load<std::int64_t>(p)); break;
            default: break;
        }
    }
    return r;
}
}  // namespace detail

template <class T>
result<T> kv::as() const noexcept {
    static_assert(detail::is_fixed_value<T>, "kv::as<T>: T must be an integer type, float, double or bool");
    const std::uint32_t size = value_size(type);
    if (type == value_type::array || size == 0 || payload.size() < size)
        return unexpected(mismatch(detail::value_type_of<T>::v));
    const detail::converted<T> c = detail::convert<T>(type, payload.data());
    if (!c.ok) return unexpected(mismatch(detail::value_type_of<T>::v));
    if (!c.fits) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, payload.data(), size);
        return unexpected(out_of_range_value(bits, static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
    }
    return c.value;
}

template <class T>
result<std::size_t> array_view::copy_to(std::span<T> out) const noexcept {
    static_assert(detail::is_fixed_value<T>, "array_view::copy_to: T must be an integer type, float, double or bool");
    if (type_ == value_type::string) return unexpected(mismatch(detail::value_type_of<T>::v));
    if (out.size() < count_) {
        error e = out_of_range(out.size());
        return unexpected(e);
    }
    const std::size_t n = static_cast<std::size_t>(count_);
    if (type_ == detail::value_type_of<T>::v) {
        if (n > 0) std::memcpy(out.data(), bytes_.data(), n * sizeof(T));
        return n;
    }
    const std::uint32_t size = value_size(type_);
    if (n > 0 && !detail::convert<T>(type_, bytes_.data()).ok) return unexpected(mismatch(detail::value_type_of<T>::v));
    for (std::size_t i = 0; i < n; ++i) {
        const detail::converted<T> c = detail::convert<T>(type_, bytes_.data() + i * size);
        if (!c.fits) return unexpected(item_out_of_range(i));
        out[i] = c.value;
    }
    return n;
}

}  // namespace minfer::gguf
