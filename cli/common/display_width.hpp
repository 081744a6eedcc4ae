#pragma once
// How many terminal columns text takes, so tables line up with CJK names and combining accents:
// East Asian wide and fullwidth characters take 2 columns, combining marks and zero-width characters
// 0, everything else 1. A small table of our own (no wcwidth: it depends on the locale, and the
// "C" locale a tool often runs in calls every non-ASCII character unprintable).
#include <cstddef>
#include <string>
#include <string_view>

namespace minfer::cli {

/// Columns of one code point: 0, 1 or 2.
int code_point_width(char32_t cp) noexcept;

/// Columns of UTF-8 text (an invalid byte counts 1; printed text has been escaped anyway).
std::size_t display_width(std::string_view utf8) noexcept;

/// `s` followed by spaces up to `width` columns (nothing added when it is already as wide).
std::string pad_right(std::string_view s, std::size_t width);
/// Spaces, then `s`, up to `width` columns.
std::string pad_left(std::string_view s, std::size_t width);

}  // namespace minfer::cli
