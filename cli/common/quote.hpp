#pragma once
// Text of values for a person: quoted, escaped strings and the plain text of numbers.
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "minfer/gguf/value.hpp"

namespace minfer::cli {

/// `s` quoted with double quotes for text output: gguf::escape (control characters, invalid UTF-8,
/// invisible and bidi characters become \xNN or \uXXXX) plus \" for the quote. With `limit` > 0,
/// strings longer than `limit` bytes are cut at a UTF-8 boundary and followed by "… (N bytes)".
std::string quoted(std::string_view s, std::size_t limit = 0);

/// Shortest text that reads back as the same float/double ("1e-05", "0.1", "nan", "inf").
std::string float_text(float v);
std::string float_text(double v);

/// Plain text of a fixed-size value: integers in decimal (u8/i8 as numbers, not characters), floats
/// in the shortest round-trip form, bools as true/false.
template <class T>
std::string number_text(T v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v ? "true" : "false";
    } else if constexpr (std::is_floating_point_v<T>) {
        return float_text(v);
    } else if constexpr (sizeof(T) == 1) {
        return fmt::format("{}", static_cast<int>(v));
    } else {
        return fmt::format("{}", v);
    }
}

/// A scalar or string value as `minfer info` shows it: a string quoted (cut after `string_limit`
/// bytes, 0 = whole), a number by number_text; "?" for bytes that do not decode. Arrays: "".
std::string scalar_value_text(const gguf::kv& e, std::size_t string_limit);

}  // namespace minfer::cli
