#pragma once
// Internal: the text machinery of the BPE encoder — UTF-8 steps, PCRE2 patterns with limits, ICU's
// NFC, and the Unicode classes the Rust core's added-token matching uses. Nothing here throws except
// std::bad_alloc; failures are values.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minfer::convert::detail {

/// The code point at s[i] and its length; s must be valid UTF-8 (checked once, before).
struct utf8_char {
    char32_t c = 0;
    std::size_t length = 0;
};
utf8_char utf8_at(std::string_view s, std::size_t i) noexcept;
/// The start of the character ending just before s[end] (end > 0).
std::size_t utf8_previous(std::string_view s, std::size_t end) noexcept;
void append_utf8(std::string& out, char32_t c);
/// The offset of the first byte that starts no valid UTF-8 sequence, or npos.
std::size_t first_invalid_utf8(std::string_view s) noexcept;
/// Rust's String::from_utf8_lossy: each maximal invalid subsequence becomes one U+FFFD.
std::string utf8_lossy(std::string_view bytes);

/// Rust's char::is_whitespace (the White_Space property; a fixed list of 25 code points).
bool is_white_space(char32_t c) noexcept;
/// Rust regex's Unicode \w: Alphabetic, M, Nd, Pc, Join_Control (by PCRE2's property tables).
bool is_word_char(char32_t c) noexcept;

/// Why a pattern is refused: `unsupported` when it is valid but means something else in Oniguruma.
struct pattern_failure {
    bool unsupported = false;
    std::size_t offset = 0;  ///< in the pattern
    std::string detail;
};

/// A compiled PCRE2 pattern (UTF, UCP), shared by copies; matching is thread-safe.
class regex {
public:
    /// Compile `pattern` as Oniguruma's syntax means it: \s and \S as White_Space, escapes whose
    /// meaning differs refused.
    static std::optional<regex> compile(std::string_view pattern, pattern_failure& failure);

    /// Every match of the pattern in `text`, left to right, as [begin, end) byte ranges (empty
    /// matches dropped, the search then moving one character on). False when a match exceeded the
    /// limits (match_limit, depth_limit) or another PCRE2 error: `failed_at` says where.
    bool find_all(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& matches,
                  std::size_t& failed_at) const;

private:
    struct compiled;
    std::shared_ptr<const compiled> code_;
};

/// NFC of valid UTF-8 text by ICU. False when ICU fails (out of memory).
bool nfc(std::string_view text, std::string& out);

}  // namespace minfer::convert::detail
