#include <cstdio>

#include "minfer/gguf/text.hpp"

namespace minfer::gguf {

std::size_t utf8_length_at(std::string_view s, std::size_t i) noexcept {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return 1;
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) { n = 2; cp = b0 & 0x1Fu; }
    else if (b0 >= 0xE0 && b0 <= 0xEF) { n = 3; cp = b0 & 0x0Fu; }
    else if (b0 >= 0xF0 && b0 <= 0xF4) { n = 4; cp = b0 & 0x07u; }
    else return 0;
    if (n > s.size() - i) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b & 0x3Fu);
    }
    const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    return overlong || surrogate || cp > 0x10FFFF ? 0 : n;
}

namespace {
// The code point of a valid sequence of length n at s[i].
std::uint32_t code_point(std::string_view s, std::size_t i, std::size_t n) noexcept {
    static constexpr unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    std::uint32_t cp = static_cast<unsigned char>(s[i]) & lead_mask[n];
    for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    return cp;
}
}  // namespace

// Valid UTF-8 that must not reach a reader as is: C1 controls can rewrite a terminal line; zero-width
// characters (U+200B-U+200D, U+2060-U+2064, U+FEFF) make two different keys look the same
// ("general.architecture" + U+200B); bidi marks, embeddings, overrides and isolates (U+061C,
// U+200E/F, U+202A-U+202E, U+2066-U+2069) reorder what is shown; U+2028/U+2029 break lines.
bool hidden_code_point(std::uint32_t cp) noexcept {
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0xFEFF;
}

std::string escape(std::string_view raw, char quote) {
    std::string out;
    out.reserve(raw.size());
    char buf[16];
    for (std::size_t i = 0; i < raw.size();) {
        const auto c = static_cast<unsigned char>(raw[i]);
        if (c >= 0x20 && c < 0x7F) {
            if (c == '\\' || c == static_cast<unsigned char>(quote)) out += '\\';
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        switch (c) {
            case '\n': out += "\\n"; ++i; continue;
            case '\t': out += "\\t"; ++i; continue;
            case '\r': out += "\\r"; ++i; continue;
            default: break;
        }
        const std::size_t n = c >= 0x80 ? utf8_length_at(raw, i) : 0;
        const std::uint32_t cp = n > 0 ? code_point(raw, i, n) : 0;
        const bool dangerous = n > 0 && hidden_code_point(cp);
        if (n > 0 && !dangerous) {
            out.append(raw.substr(i, n));
            i += n;
        } else if (n > 0) {
            std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
            out += buf;
            i += n;
        } else {
            std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(c));
            out += buf;
            ++i;
        }
    }
    return out;
}

}  // namespace minfer::gguf
