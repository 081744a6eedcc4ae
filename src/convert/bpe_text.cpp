// UTF-8 steps, PCRE2 patterns with limits, ICU's NFC (bpe_text.hpp).
#include "bpe_text.hpp"

#include <array>
#include <cstring>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "minfer/gguf/text.hpp"

namespace minfer::convert::detail {

utf8_char utf8_at(std::string_view s, std::size_t i) noexcept {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return {b0, 1};
    const std::size_t n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
    char32_t c = b0 & (0x7F >> n);
    for (std::size_t k = 1; k < n && i + k < s.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    return {c, n};
}

std::size_t utf8_previous(std::string_view s, std::size_t end) noexcept {
    std::size_t i = end - 1;
    while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
    return i;
}

void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

std::size_t first_invalid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = gguf::utf8_length_at(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

std::string utf8_lossy(std::string_view b) {
    std::string out;
    out.reserve(b.size());
    std::size_t i = 0;
    while (i < b.size()) {
        if (const std::size_t n = gguf::utf8_length_at(b, i); n > 0) {
            out.append(b.substr(i, n));
            i += n;
            continue;
        }
        // The maximal prefix of a well-formed sequence (Unicode's "maximal subpart", what Rust's
        // Utf8Chunks reports as one invalid chunk): the lead byte and the continuation bytes that
        // could still lead to a valid character.
        const auto lead = static_cast<unsigned char>(b[i]);
        std::size_t want = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) want = 1;
        else if (lead >= 0xE0 && lead <= 0xEF) {
            want = 2;
            if (lead == 0xE0) lo = 0xA0;
            if (lead == 0xED) hi = 0x9F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            want = 3;
            if (lead == 0xF0) lo = 0x90;
            if (lead == 0xF4) hi = 0x8F;
        }
        std::size_t taken = 1;
        for (std::size_t k = 0; k < want && i + taken < b.size(); ++k) {
            const auto c = static_cast<unsigned char>(b[i + taken]);
            if (c < (k == 0 ? lo : 0x80) || c > (k == 0 ? hi : 0xBF)) break;
            ++taken;
        }
        out += "\xEF\xBF\xBD";
        i += taken;
    }
    return out;
}

bool is_white_space(char32_t c) noexcept {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

namespace {

struct code_deleter {
    void operator()(pcre2_code* c) const noexcept { pcre2_code_free(c); }
};

// Limits of one pcre2_match call: the backtracking steps (PCRE2's default, 10^7) and the heap its
// backtracking frames may take (64 MiB instead of the default 20 GB).
constexpr std::uint32_t match_limit = 10'000'000;
constexpr std::uint32_t heap_limit_kib = 64 * 1024;
// A pattern longer than this is refused before compiling (real ones are under 200 bytes).
constexpr std::size_t max_pattern_bytes = 16 * 1024;

pcre2_code* compile_raw(std::string_view pattern, int& error, PCRE2_SIZE& at) noexcept {
    pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
    if (cc == nullptr) return nullptr;
    pcre2_set_max_pattern_length(cc, max_pattern_bytes);
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C, &error, &at, cc);
    pcre2_compile_context_free(cc);
    return code;
}

// The pattern in PCRE2's syntax with Oniguruma's meaning (Ruby syntax, UTF-8, as the Rust core builds
// its regexes). Escapes that mean the same in both pass as they are; \s and \S become White_Space
// and its complement (Oniguruma's \s is the White_Space property; PCRE2's also takes U+180E, which
// Unicode 6.3 took out of it); every other letter escape is refused. Also refused: a POSIX class
// ([:alpha:] is Alphabetic in Oniguruma, \p{L} in PCRE2), a nested class or && (Oniguruma's set
// operations, a literal in PCRE2), and ^ or $ outside a class (line anchors in Oniguruma, subject
// anchors in PCRE2).
bool translate(std::string_view p, std::string& out, pattern_failure& failure) {
    bool in_class = false;
    std::size_t class_start = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const char c = p[i];
        if (c == '\\') {
            if (i + 1 >= p.size()) {  // PCRE2 refuses a trailing backslash itself
                out += c;
                break;
            }
            const char e = p[i + 1];
            if (e == 's' || e == 'S') {
                out += e == 's' ? "\\p{White_Space}" : "\\P{White_Space}";
                ++i;
                continue;
            }
            const bool letter_or_digit = (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9');
            if (letter_or_digit && std::strchr("sSdDpPrntfexa", e) == nullptr) {
                failure.unsupported = true;
                failure.offset = i;
                failure.detail = std::string("the escape \\") + e +
                                 " means something else in Oniguruma (the Rust core's engine) than in PCRE2";
                return false;
            }
            out += c;
            out += e;
            ++i;
            continue;
        }
        out += c;
        if (in_class) {
            if (c == ']' && i > class_start) in_class = false;
            else if (c == '[' || (c == '&' && i + 1 < p.size() && p[i + 1] == '&')) {
                failure.unsupported = true;
                failure.offset = i;
                failure.detail = c == '[' ? "a class inside a class (a set operation in Oniguruma, a POSIX class or a "
                                            "literal in PCRE2)"
                                          : "&& in a class (intersection in Oniguruma, literal in PCRE2)";
                return false;
            }
            continue;
        }
        if (c == '[') {
            in_class = true;
            class_start = i + 1;
            if (class_start < p.size() && p[class_start] == '^') ++class_start;
            // a ']' right after '[' or '[^' is a literal in both engines
        } else if (c == '^' || c == '$') {
            failure.unsupported = true;
            failure.offset = i;
            failure.detail = std::string("the anchor ") + c +
                             " (a line anchor in Oniguruma, a subject anchor in PCRE2)";
            return false;
        }
    }
    return true;
}

}  // namespace

struct regex::compiled {
    std::unique_ptr<pcre2_code, code_deleter> code;
};

std::optional<regex> regex::compile(std::string_view pattern, pattern_failure& failure) {
    if (pattern.size() > max_pattern_bytes) {
        failure.unsupported = true;
        failure.detail = "a pattern of " + std::to_string(pattern.size()) + " bytes (at most " +
                         std::to_string(max_pattern_bytes) + " are compiled)";
        return std::nullopt;
    }
    std::string translated;
    if (!translate(pattern, translated, failure)) return std::nullopt;
    int error = 0;
    PCRE2_SIZE at = 0;
    std::unique_ptr<pcre2_code, code_deleter> code(compile_raw(translated, error, at));  // owned before anything may throw
    if (code == nullptr) {
        std::array<PCRE2_UCHAR, 256> message{};
        pcre2_get_error_message(error, message.data(), message.size());
        failure.offset = at;  // in the translated pattern (equal to the given one's before the first \\s)
        failure.detail = "not a valid pattern: " + std::string(reinterpret_cast<const char*>(message.data()));
        return std::nullopt;
    }
    auto c = std::make_shared<compiled>();
    c->code = std::move(code);
    regex r;
    r.code_ = std::move(c);
    return r;
}

bool regex::find_all(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& matches,
                     std::size_t& failed_at) const {
    // owned: matches.emplace_back below may throw std::bad_alloc
    const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md_owner(
        pcre2_match_data_create_from_pattern(code_->code.get(), nullptr), &pcre2_match_data_free);
    const std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)> mc_owner(
        pcre2_match_context_create(nullptr), &pcre2_match_context_free);
    pcre2_match_data* const md = md_owner.get();
    pcre2_match_context* const mc = mc_owner.get();
    if (md == nullptr || mc == nullptr) throw std::bad_alloc();
    pcre2_set_match_limit(mc, match_limit);
    pcre2_set_heap_limit(mc, heap_limit_kib);
    bool ok = true;
    std::size_t start = 0;
    while (start <= text.size()) {
        // the text was checked to be UTF-8 once: not again on every call
        const int rc = pcre2_match(code_->code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
                                   PCRE2_NO_UTF_CHECK, md, mc);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            failed_at = start;
            ok = false;
            break;
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const std::size_t b = ov[0], e = ov[1];
        if (e > b) {
            matches.emplace_back(b, e);
            start = e;
        } else {  // an empty match splits nothing: search again one character on
            if (b >= text.size()) break;
            start = b + utf8_at(text, b).length;
        }
    }
    return ok;
}

bool is_word_char(char32_t c) noexcept {
    static pcre2_code* const word = [] {
        int error = 0;
        PCRE2_SIZE at = 0;
        return compile_raw(R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}])", error, at);
    }();
    if (word == nullptr) return false;
    std::string one;
    try {
        append_utf8(one, c);
    } catch (...) {
        return false;
    }
    pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
    if (md == nullptr) return false;
    const int rc = pcre2_match(word, reinterpret_cast<PCRE2_SPTR>(one.data()), one.size(), 0, PCRE2_ANCHORED, md, nullptr);
    pcre2_match_data_free(md);
    return rc > 0;
}

bool nfc(std::string_view text, std::string& out) {
    bool ascii = true;
    for (char ch : text) ascii = ascii && static_cast<unsigned char>(ch) < 0x80;
    if (ascii) {  // ASCII is its own NFC
        out.assign(text);
        return true;
    }
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFCInstance(&status);
    if (U_FAILURE(status)) return false;
    const auto length = static_cast<std::int32_t>(text.size());
    std::vector<UChar> utf16(text.size() + 1);
    std::int32_t utf16_length = 0;
    u_strFromUTF8(utf16.data(), static_cast<std::int32_t>(utf16.size()), &utf16_length, text.data(), length, &status);
    if (U_FAILURE(status)) return false;
    if (unorm2_isNormalized(n, utf16.data(), utf16_length, &status) && U_SUCCESS(status)) {
        out.assign(text);
        return true;
    }
    status = U_ZERO_ERROR;
    // NFC grows a text at most 3x (UAX #15's bound); should ICU say otherwise, retry at its length
    std::vector<UChar> normalized(static_cast<std::size_t>(utf16_length) * 3 + 1);
    std::int32_t normalized_length = unorm2_normalize(n, utf16.data(), utf16_length, normalized.data(),
                                                      static_cast<std::int32_t>(normalized.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
        status = U_ZERO_ERROR;
        normalized.resize(static_cast<std::size_t>(normalized_length) + 1);
        normalized_length = unorm2_normalize(n, utf16.data(), utf16_length, normalized.data(),
                                             static_cast<std::int32_t>(normalized.size()), &status);
    }
    if (U_FAILURE(status)) return false;
    out.assign(static_cast<std::size_t>(normalized_length) * 3, '\0');
    std::int32_t out_length = 0;
    u_strToUTF8(out.data(), static_cast<std::int32_t>(out.size()), &out_length, normalized.data(), normalized_length,
                &status);
    if (U_FAILURE(status)) return false;
    out.resize(static_cast<std::size_t>(out_length));
    return true;
}

}  // namespace minfer::convert::detail
