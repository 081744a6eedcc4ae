#pragma once
// json_value: a read-only view of one value of a verified JSON document (config.json), for the
// lookups a converter makes beyond the typed fields: `cfg.raw().member("rope_scaling").member("factor")
// .as_double()`. Every accessor is noexcept and returns an empty optional (or an absent value) instead
// of failing, so a chain of lookups needs no checks until its end. Each value knows the byte where it
// starts in its file, for errors that point at it.
//
// A view borrows its document: it is valid while the object that gave it (an hf_config, or a copy of
// it) lives.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace minfer::convert {

namespace detail {
struct json_tree;
}

/// What a value is; `absent` for a lookup that found nothing.
enum class json_kind : std::uint8_t { absent, null, boolean, number, string, array, object };

/// "absent", "null", "a boolean", "a number", "a string", "an array", "an object": for error texts.
std::string_view describe(json_kind kind) noexcept;

class json_value {
public:
    /// An absent value.
    json_value() noexcept = default;

    json_kind kind() const noexcept;
    bool present() const noexcept { return kind() != json_kind::absent; }
    /// Absent or null: what Python's `dict.get(key)` and convert_hf_to_gguf.py's `is None` treat alike.
    bool is_none() const noexcept { return kind() == json_kind::absent || kind() == json_kind::null; }

    std::optional<bool> as_bool() const noexcept;
    /// An integer written without fraction or exponent, if it fits.
    std::optional<std::int64_t> as_int() const noexcept;
    std::optional<std::uint64_t> as_uint() const noexcept;
    /// Any number, as the nearest double (an integer too).
    std::optional<double> as_double() const noexcept;
    /// Whether the number was written as an integer (no '.', no exponent).
    bool is_integer() const noexcept;
    /// The decoded string (escapes resolved; UTF-8, checked by the parser; may hold NUL bytes).
    std::optional<std::string_view> as_string() const noexcept;

    /// Items of an array, members of an object, 0 otherwise.
    std::size_t size() const noexcept;
    /// Item `i` of an array or the value of member `i` of an object (in the text's order); absent otherwise.
    json_value at(std::size_t i) const noexcept;
    /// The key of member `i` of an object; empty otherwise.
    std::string_view key_at(std::size_t i) const noexcept;
    /// The member `key` of an object (keys are unique: duplicates are refused when the text is read);
    /// absent when this is not an object or has no such member.
    json_value member(std::string_view key) const noexcept;

    /// The absolute byte offset in its file where the value starts (0 for an absent value).
    std::uint64_t offset() const noexcept;

private:
    friend struct json_access;
    json_value(const detail::json_tree* tree, std::uint32_t node) noexcept : tree_(tree), node_(node) {}
    const detail::json_tree* tree_ = nullptr;
    std::uint32_t node_ = 0;
};

}  // namespace minfer::convert
