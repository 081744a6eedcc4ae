#pragma once
// Showing file text to a person: keys, names and strings come from untrusted files and may hold
// control characters, invalid UTF-8 or terminal escape sequences.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace minfer::gguf {

/// Length of the valid UTF-8 sequence starting at s[i] (1 for ASCII), or 0 when the byte starts no
/// valid sequence (stray continuation, overlong form, surrogate, past U+10FFFF, cut short).
std::size_t utf8_length_at(std::string_view s, std::size_t i) noexcept;

/// Whether a code point is one escape() shows as \uXXXX although it is valid: C1 controls, zero-width
/// characters, bidi marks/embeddings/overrides/isolates, U+2028, U+2029 (the list is escape()'s).
bool hidden_code_point(std::uint32_t cp) noexcept;

/// Escape bytes for display: printable ASCII as is (with `\` and `quote` backslashed), valid UTF-8
/// as is, \n \t \r as C escapes, and every other byte as \xNN. Valid characters a reader cannot see or
/// that change how a line is shown become \uXXXX: C1 controls, zero-width characters (U+200B-U+200D,
/// U+2060-U+2064, U+FEFF), bidi marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
/// U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators U+2028, U+2029. Used for every
/// key, name and string value shown to a person.
std::string escape(std::string_view raw, char quote = '\'');

}  // namespace minfer::gguf
