#pragma once
// PyYAML's implicit resolvers (YAML 1.1, yaml/resolver.py) written by hand — no std::regex on
// untrusted text — for the two readers of YAML that must type scalars as Python's yaml.safe_load
// does: minfer::toolbox's mergekit configs (src/toolbox/assemble_config_yaml.cpp) and
// minfer::convert's model cards (src/convert/model_card.cpp). Header-only and internal: each library
// compiles its own copy of these inline functions, so neither depends on the other.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace minfer::detail::pyyaml {

/// "U+00E9", "U+1F600": a code point as messages name it.
inline std::string hex_code_point(std::uint32_t cp) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string s = "U+";
    const int width = cp > 0xFFFF ? 6 : 4;
    for (int i = width - 1; i >= 0; --i) s += digits[(cp >> (4 * i)) & 0xF];
    return s;
}

inline bool digit(char c) { return c >= '0' && c <= '9'; }

inline bool is_null_word(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

// [0-9_]* from k; returns the end
inline std::size_t digits_us(std::string_view s, std::size_t k) {
    while (k < s.size() && (digit(s[k]) || s[k] == '_')) ++k;
    return k;
}

// (:[0-5]?[0-9])+ from k; returns the end, or npos when there is not one group
inline std::size_t sexagesimal_groups(std::string_view s, std::size_t k) {
    std::size_t groups = 0;
    while (k < s.size() && s[k] == ':') {
        std::size_t j = k + 1;
        if (j + 1 < s.size() && s[j] >= '0' && s[j] <= '5' && digit(s[j + 1]))
            j += 2;
        else if (j < s.size() && digit(s[j]))
            j += 1;
        else
            break;
        k = j;
        ++groups;
    }
    return groups > 0 ? k : std::string_view::npos;
}

// ([eE][-+][0-9]+)? from k; returns the end (k when absent), npos when malformed
inline std::size_t exponent(std::string_view s, std::size_t k) {
    if (k >= s.size() || (s[k] != 'e' && s[k] != 'E')) return k;
    if (k + 1 >= s.size() || (s[k + 1] != '-' && s[k + 1] != '+')) return std::string_view::npos;
    std::size_t j = k + 2;
    const std::size_t d = j;
    while (j < s.size() && digit(s[j])) ++j;
    return j > d ? j : std::string_view::npos;
}

inline bool is_int11(std::string_view s) {
    std::size_t k = 0;
    if (k < s.size() && (s[k] == '-' || s[k] == '+')) ++k;
    const std::string_view r = s.substr(k);
    if (r.empty()) return false;
    auto all = [&](std::size_t from, auto pred) {
        if (from >= r.size()) return false;
        for (std::size_t j = from; j < r.size(); ++j)
            if (!pred(r[j])) return false;
        return true;
    };
    if (r.starts_with("0b")) return all(2, [](char c) { return c == '0' || c == '1' || c == '_'; });
    if (r.starts_with("0x"))
        return all(2, [](char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '_'; });
    if (r == "0") return true;
    if (r[0] == '0') return all(1, [](char c) { return (c >= '0' && c <= '7') || c == '_'; });
    if (r[0] < '1' || r[0] > '9') return false;
    const std::size_t e = digits_us(r, 1);
    if (e == r.size()) return true;
    return sexagesimal_groups(r, e) == r.size();
}

inline bool is_float11(std::string_view s) {
    if (s == ".nan" || s == ".NaN" || s == ".NAN") return true;
    std::size_t k = 0;
    const bool sign = k < s.size() && (s[k] == '-' || s[k] == '+');
    if (sign) ++k;
    const std::string_view r = s.substr(k);
    if (r == ".inf" || r == ".Inf" || r == ".INF") return true;
    if (r.empty()) return false;
    if (r[0] == '.') {  // \.[0-9][0-9_]*([eE][-+][0-9]+)?, without a sign
        if (sign || r.size() < 2 || !digit(r[1])) return false;
        return exponent(r, digits_us(r, 2)) == r.size();
    }
    if (!digit(r[0])) return false;
    const std::size_t e = digits_us(r, 1);
    if (e < r.size() && r[e] == '.') return exponent(r, digits_us(r, e + 1)) == r.size();
    const std::size_t g = sexagesimal_groups(r, e);  // [0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    return g != std::string_view::npos && g < r.size() && r[g] == '.' && digits_us(r, g + 1) == r.size();
}

/// PyYAML's bool resolver: yes/no, true/false, on/off in three cases each.
inline bool bool_word(std::string_view s, bool& value) noexcept {
    static constexpr std::string_view yes[] = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
    static constexpr std::string_view no[] = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
    for (std::string_view w : yes)
        if (s == w) return value = true, true;
    for (std::string_view w : no)
        if (s == w) return value = false, true;
    return false;
}

}  // namespace minfer::detail::pyyaml
