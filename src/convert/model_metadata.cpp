// The general.* keys as convert_hf_to_gguf.py writes them (model_metadata.hpp): gguf-py's Metadata.load for a
// local directory, ModelBase.prepare_metadata, gguf.size_label and naming_convention.
#include "minfer/convert/model_metadata.hpp"

#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <variant>

#include "json_events.hpp"  // in_quotes
#include "json_tree.hpp"
#include "model_card.hpp"
#include "minfer/convert/architecture.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/gguf/text.hpp"
#include "capped_file.hpp"
#include "bpe_text.hpp"
#include "tokenizer_files.hpp"  // is_file, valid_utf8, convert_failure

namespace minfer::convert {
namespace {

using detail::py_node;
using detail::py_tree;

[[noreturn]] void fail(std::string file, std::uint64_t offset, std::string_view subject, std::string detail,
                       gguf::section where = gguf::section::metadata) {
    detail::fail_file(codes::bad_model_card, std::move(file), offset, subject, std::move(detail), where);
}

// ---- Python's str methods on code points (ICU's Unicode data; a byte that starts no UTF-8 character is
// kept as Python's surrogate escape keeps it: U+DC80 + byte, which no method changes) ----

using u32 = std::u32string;

u32 decode(std::string_view s) {
    u32 out;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = gguf::utf8_length_at(s, i);
        const auto c = static_cast<unsigned char>(s[i]);
        if (n == 0) {
            out += static_cast<char32_t>(0xDC00 + c);
            ++i;
            continue;
        }
        char32_t cp = n == 1 ? c : c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
        for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
        out += cp;
        i += n;
    }
    return out;
}

std::string encode(const u32& s) {
    std::string out;
    for (const char32_t cp : s) {
        if (cp >= 0xDC80 && cp <= 0xDCFF) {
            out += static_cast<char>(cp - 0xDC00);  // a surrogate-escaped byte back as that byte
        } else {
            detail::append_utf8(out, cp);
        }
    }
    return out;
}

bool is_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }
bool py_isdecimal(char32_t c) { return !is_surrogate(c) && u_charType(static_cast<UChar32>(c)) == U_DECIMAL_DIGIT_NUMBER; }
bool py_isalpha(char32_t c) { return !is_surrogate(c) && u_isalpha(static_cast<UChar32>(c)); }
bool py_isalnum(char32_t c) {
    return !is_surrogate(c) && (u_isalpha(static_cast<UChar32>(c)) ||
                                u_getNumericValue(static_cast<UChar32>(c)) != U_NO_NUMERIC_VALUE);
}
bool py_isspace(char32_t c) {  // Py_UNICODE_ISSPACE: White_Space plus the ASCII separators 0x1C-0x1F
    return (c >= 0x1C && c <= 0x1F) || (!is_surrogate(c) && u_isUWhiteSpace(static_cast<UChar32>(c)));
}
bool py_iscased(char32_t c) { return !is_surrogate(c) && u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_CASED); }
bool py_isupper_or_title(char32_t c) {
    return !is_surrogate(c) && (u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_UPPERCASE) || u_istitle(static_cast<UChar32>(c)));
}
bool py_islower_char(char32_t c) { return !is_surrogate(c) && u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_LOWERCASE); }

// str.islower(): at least one cased character, none upper or title case.
bool py_islower(const u32& s) {
    bool cased = false;
    for (const char32_t c : s) {
        if (py_isupper_or_title(c)) return false;
        if (!cased && py_islower_char(c)) cased = true;
    }
    return cased;
}

enum class casing { lower, upper, title };

// A code point's full case mapping (SpecialCasing's unconditional ones, as Python's).
u32 map_case(char32_t c, casing how) {
    if (is_surrogate(c)) return u32(1, c);
    if (c < 0x80) {
        char32_t m = c;
        if (how == casing::lower && c >= 'A' && c <= 'Z') m = c + 32;
        if (how != casing::lower && c >= 'a' && c <= 'z') m = c - 32;
        return u32(1, m);
    }
    UChar src[2];
    int32_t n = 0;
    if (c < 0x10000) {
        src[n++] = static_cast<UChar>(c);
    } else {
        src[n++] = static_cast<UChar>(0xD800 + ((c - 0x10000) >> 10));
        src[n++] = static_cast<UChar>(0xDC00 + ((c - 0x10000) & 0x3FF));
    }
    UChar dst[16];
    UErrorCode status = U_ZERO_ERROR;
    int32_t len = 0;
    switch (how) {
        case casing::lower: len = u_strToLower(dst, 16, src, n, "", &status); break;
        case casing::upper: len = u_strToUpper(dst, 16, src, n, "", &status); break;
        case casing::title:
            len = u_strToTitle(dst, 16, src, n, nullptr, "", &status);
            break;
    }
    if (U_FAILURE(status) || len > 16) return u32(1, c);
    u32 out;
    for (int32_t i = 0; i < len; ++i) {
        const char32_t u = dst[i];
        if (u >= 0xD800 && u <= 0xDBFF && i + 1 < len && dst[i + 1] >= 0xDC00 && dst[i + 1] <= 0xDFFF) {
            out += 0x10000 + ((u - 0xD800) << 10) + (static_cast<char32_t>(dst[i + 1]) - 0xDC00);
            ++i;
        } else {
            out += u;
        }
    }
    return out;
}

u32 py_upper(const u32& s) {
    u32 out;
    for (const char32_t c : s) out += map_case(c, casing::upper);
    return out;
}

// str.title(): title case after a non-cased character, lower case after a cased one.
u32 py_title(const u32& s) {
    u32 out;
    bool previous_cased = false;
    for (const char32_t c : s) {
        out += map_case(c, previous_cased ? casing::lower : casing::title);
        previous_cased = py_iscased(c);
    }
    return out;
}

u32 py_strip(const u32& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && py_isspace(s[b])) ++b;
    while (e > b && py_isspace(s[e - 1])) --e;
    return s.substr(b, e - b);
}

std::vector<u32> py_split_ws(const u32& s) {
    std::vector<u32> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && py_isspace(s[i])) ++i;
        const std::size_t b = i;
        while (i < s.size() && !py_isspace(s[i])) ++i;
        if (i > b) out.push_back(s.substr(b, i - b));
    }
    return out;
}

std::vector<u32> py_split(const u32& s, char32_t sep) {
    std::vector<u32> out;
    std::size_t b = 0;
    for (std::size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) {
            out.push_back(s.substr(b, i - b));
            b = i + 1;
        }
    return out;
}

char32_t ascii_lower(char32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// the case-insensitive match of an ASCII word (re.IGNORECASE on ASCII letters)
bool iequals(const u32& s, std::size_t from, std::size_t to, std::string_view word) {
    if (to - from != word.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i)
        if (ascii_lower(s[from + i]) != static_cast<char32_t>(word[i])) return false;
    return true;
}

bool word_char(char32_t c) { return c == '_' || py_isalnum(c); }  // re's \w

// (v|iter)?\d+([.]\d+)*, whole, ignoring case
bool is_version_part(const u32& p) {
    std::size_t i = 0;
    if (!p.empty() && ascii_lower(p[0]) == 'v')
        i = 1;
    else if (p.size() >= 4 && iequals(p, 0, 4, "iter"))
        i = 4;
    auto digits = [&](std::size_t& k) {
        const std::size_t b = k;
        while (k < p.size() && py_isdecimal(p[k])) ++k;
        return k > b;
    };
    if (!digits(i)) return false;
    while (i < p.size()) {
        if (p[i] != '.') return false;
        ++i;
        if (!digits(i)) return false;
    }
    return true;
}

// i?q\d(_\w)*|b?fp?(16|32), whole, ignoring case
bool is_type_part(const u32& p) {
    std::size_t i = 0;
    if (i < p.size() && ascii_lower(p[i]) == 'i') ++i;
    if (i < p.size() && ascii_lower(p[i]) == 'q') {
        ++i;
        if (i < p.size() && py_isdecimal(p[i])) {
            ++i;
            while (i + 1 < p.size() && p[i] == '_' && word_char(p[i + 1])) i += 2;
            if (i == p.size()) return true;
        }
    }
    i = 0;
    if (i < p.size() && ascii_lower(p[i]) == 'b') ++i;
    if (!(i < p.size() && ascii_lower(p[i]) == 'f')) return false;
    ++i;
    if (i < p.size() && ascii_lower(p[i]) == 'p') ++i;
    return p.size() - i == 2 && ((p[i] == '1' && p[i + 1] == '6') || (p[i] == '3' && p[i + 1] == '2'));
}

bool is_scale_letter(char32_t c) {
    const char32_t l = ascii_lower(c);
    return l == 'k' || l == 'm' || l == 'b' || l == 't';
}

// \d+([._]\d+)?[KMBT]\d? from `from` to the end
bool is_size_rest(const u32& p, std::size_t i) {
    const std::size_t b = i;
    while (i < p.size() && py_isdecimal(p[i])) ++i;
    if (i == b) return false;
    if (i < p.size() && (p[i] == '.' || p[i] == '_')) {
        const std::size_t f = ++i;
        while (i < p.size() && py_isdecimal(p[i])) ++i;
        if (i == f) return false;
    }
    if (!(i < p.size() && is_scale_letter(p[i]))) return false;
    ++i;
    if (i < p.size() && py_isdecimal(p[i])) ++i;
    return i == p.size();
}

// (([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl), whole, ignoring case
bool is_size_part(const u32& p) {
    for (std::string_view w : {"small", "mini", "medium", "large", "xl", "xxl"})
        if (iequals(p, 0, p.size(), w)) return true;
    if (is_size_rest(p, 0)) return true;
    if (!p.empty() && ascii_lower(p[0]) == 'a' && is_size_rest(p, 1)) return true;
    std::size_t i = 0;
    while (i < p.size() && py_isdecimal(p[i])) ++i;
    return i > 0 && i < p.size() && ascii_lower(p[i]) == 'x' && is_size_rest(p, i + 1);
}

// float(text) for the texts a size part leaves: decimal digits (any script) with at most one '.'
std::optional<double> py_float(const u32& s) {
    std::string ascii;
    bool dot = false, digits = false;
    for (const char32_t c : s) {
        if (c == '.') {
            if (dot) return std::nullopt;
            dot = true;
            ascii += '.';
        } else if (py_isdecimal(c)) {
            digits = true;
            ascii += static_cast<char>('0' + u_charDigitValue(static_cast<UChar32>(c)));
        } else {
            return std::nullopt;
        }
    }
    if (!digits) return std::nullopt;
    return std::strtod(ascii.c_str(), nullptr);
}

// Python's exact comparison of a float with an int (|int| < 2^63)
int compare(double a, std::int64_t b) {
    const long double x = a, y = static_cast<long double>(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

// Python's floor division by 8
std::int64_t floor_div8(std::int64_t v) { return v >= 0 ? v / 8 : -((-v + 7) / 8); }

enum type_bit : std::uint8_t { t_basename = 1, t_size = 2, t_finetune = 4, t_version = 8, t_type = 16 };

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) out += '-';
        out += parts[i];
    }
    return out;
}

std::uint64_t mag(std::int64_t v) { return v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v); }

}  // namespace

// ---- gguf-py's pure functions ----

std::string rounded_count(std::uint64_t count) {
    const double c = static_cast<double>(count);
    double scaled = 0;
    char suffix = 'K';
    if (c > 1e12) {
        scaled = c * 1e-12;
        suffix = 'T';
    } else if (c > 1e9) {
        scaled = c * 1e-9;
        suffix = 'B';
    } else if (c > 1e6) {
        scaled = c * 1e-6;
        suffix = 'M';
    } else {
        scaled = c * 1e-3;
    }
    // fix = max(2 - len(str(round(scaled)).lstrip('0')), 0); round() is half to even
    const double r = std::nearbyint(scaled);
    const std::string digits = r == 0 ? std::string() : std::to_string(static_cast<unsigned long long>(r));
    const int fix = std::max(2 - static_cast<int>(digits.size()), 0);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%c", fix, scaled, suffix);
    return buf;
}

std::string size_label(const parameter_counts& c) {
    if (c.expert_count > 0) return std::to_string(c.expert_count) + "x" + rounded_count(c.shared + c.expert);
    return rounded_count(c.total);
}

std::string id_to_title(std::string_view id) {
    u32 s = py_strip(decode(id));
    for (char32_t& c : s)
        if (c == '-') c = ' ';
    std::string out;
    bool first = true;
    for (const u32& w : py_split_ws(s)) {
        // re.match(r'^(v\d+(?:\.\d+)*|\d.*)$', w)
        const bool numeric = (!w.empty() && py_isdecimal(w[0])) || (w.size() > 1 && w[0] == 'v' && is_version_part(w));
        if (!first) out += ' ';
        first = false;
        out += encode(py_islower(w) && !numeric ? py_title(w) : w);
    }
    return out;
}

model_id_components get_model_id_components(std::string_view model_id, std::int64_t total_params) {
    model_id_components r;
    if (model_id.find(' ') != std::string_view::npos) {
        r.full_name = std::string(model_id);
        return r;
    }
    const u32 id = decode(model_id);
    u32 name;
    std::optional<u32> org;
    if (const std::size_t slash = id.find(U'/'); slash != u32::npos) {
        org = id.substr(0, slash);
        name = id.substr(slash + 1);
    } else {
        name = id;
    }
    if (org && !org->empty() && (*org)[0] == '.') org.reset();
    r.full_name = encode(name);
    if (org) r.organization = encode(*org);

    std::vector<u32> parts;
    for (u32& p : py_split(name, U'-'))
        if (!p.empty()) parts.push_back(std::move(p));
    std::vector<std::uint8_t> types(parts.size(), 0);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        u32& part = parts[i];
        if (is_version_part(part)) {
            types[i] |= t_version;
        } else if (is_type_part(part)) {
            types[i] |= t_type;
            part = py_upper(part);
        } else if (i > 0 && is_size_part(part)) {
            for (char32_t& c : part)
                if (c == '_') c = '.';
            if (py_isdecimal(part.back()) && part.size() >= 2) {  // bloom-7b1 -> 7.1b
                const u32 head = part.substr(0, part.size() - 2);
                part = head + U"." + part.back() + part[part.size() - 2];
            }
            if (part.size() > 1 && py_isdecimal(part[part.size() - 2])) {
                const char32_t l = part.back();
                if (l == 'k' || l == 'm' || l == 'b' || l == 't') part.back() = l - 32;
            }
            if (total_params != 0) {
                const std::optional<double> f = py_float(part.substr(0, part.size() - 1));
                if (f) {
                    const std::size_t scale = std::u32string_view(U" KMBT").find(part.back());
                    const double label = scale == std::u32string_view::npos ? *f * 0.001 : *f * std::pow(1000.0, static_cast<double>(scale));
                    const bool lora_small = total_params < 0 && compare(label, static_cast<std::int64_t>(mag(total_params) / 8)) < 0;
                    bool far = false;
                    if (total_params > 0) {
                        const double diff = std::fabs(label - static_cast<double>(total_params));
                        far = compare(diff, floor_div8(7 * total_params)) > 0;
                    }
                    if (lora_small || far) {
                        types[i] |= t_finetune;
                        part.back() = static_cast<char32_t>(ascii_lower(part.back()));
                    }
                }
            }
            if (types[i] == 0) types[i] |= t_size;
        } else if (i > 0 && (iequals(part, 0, part.size(), "chat") || iequals(part, 0, part.size(), "instruct") ||
                             iequals(part, 0, part.size(), "vision") || iequals(part, 0, part.size(), "lora"))) {
            if (total_params < 0 && iequals(part, 0, part.size(), "lora"))
                types[i] |= t_type;
            else
                types[i] |= t_finetune;
        }
    }
    // word sizes dropped when a numeric one is there
    bool numeric_size = false;
    for (std::size_t i = 0; i < parts.size(); ++i)
        if (types[i] & t_size)
            for (const char32_t c : parts[i]) numeric_size = numeric_size || py_isdecimal(c);
    if (numeric_size)
        for (std::size_t i = 0; i < parts.size(); ++i)
            if (types[i] & t_size) {
                bool alpha = true;
                for (const char32_t c : parts[i]) alpha = alpha && py_isalpha(c);
                if (alpha) types[i] &= static_cast<std::uint8_t>(~t_size);
            }
    bool at_start = true;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (at_start && ((types[i] == 0 && py_isalpha(parts[i][0])) || (types[i] & t_version))) {
            types[i] |= t_basename;
        } else {
            at_start = false;
            if (types[i] == 0) types[i] |= t_finetune;
        }
    }
    for (std::size_t i = parts.size(); i-- > 0;) {
        if ((types[i] & t_basename) && types[i] != t_basename)
            types[i] &= static_cast<std::uint8_t>(~t_basename);
        else
            break;
    }
    std::vector<std::string> basename, sizes, finetune, version;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string p = encode(parts[i]);
        if (types[i] & t_basename) basename.push_back(p);
        if ((types[i] & t_size) && std::find(sizes.begin(), sizes.end(), p) == sizes.end()) sizes.push_back(p);
        if (types[i] & t_finetune) finetune.push_back(p);
        if ((types[i] & t_version) && !(types[i] & t_basename)) version.push_back(p);
    }
    if (!basename.empty()) r.basename = join(basename);
    if (!sizes.empty()) r.size_label = join(sizes);
    if (!finetune.empty()) r.finetune = join(finetune);
    if (!version.empty()) r.version = join(version);
    if (!r.size_label && !r.finetune && !r.version) r.basename.reset();
    return r;
}

std::string naming_convention(const std::optional<std::string>& model_name, const std::optional<std::string>& base_name,
                              const std::optional<std::string>& finetune, const std::optional<std::string>& version,
                              const std::optional<std::string>& size_label, const std::optional<std::string>& output_type,
                              const std::optional<std::string>& model_type) {
    auto dashed = [](std::string_view s, bool slashes) {
        u32 t = py_strip(decode(s));
        for (char32_t& c : t)
            if (c == ' ' || (slashes && c == '/')) c = '-';
        return encode(t);
    };
    std::string out = base_name ? dashed(*base_name, true) : model_name ? dashed(*model_name, true) : "ggml-model";
    // appended part by part: `"-" + std::string` trips g++ 12's -O3 -Werror=restrict false positive
    auto add = [&out](const std::string& part) {
        out += '-';
        out += part;
    };
    if (size_label) add(*size_label);
    if (finetune) add(dashed(*finetune, false));
    if (version) add(dashed(*version, false));
    if (output_type) add(encode(py_upper(decode(dashed(*output_type, false)))));
    if (model_type) add(dashed(*model_type, false));
    return out;
}

gguf::result<std::string> fill_templated_filename(std::string_view filename, const std::optional<std::string>& output_type) noexcept {
    try {
        const std::string lower = output_type ? [&] {
            std::string s = *output_type;
            u32 t = decode(s);
            for (char32_t& c : t) {
                const u32 m = map_case(c, casing::lower);
                c = m.size() == 1 ? m[0] : c;
            }
            return encode(t);
        }() : std::string();
        const std::string upper = output_type ? encode(py_upper(decode(*output_type))) : std::string();
        std::string out;
        int automatic = 0;
        bool manual = false;
        auto refuse = [&](std::string why) -> gguf::result<std::string> {
            gguf::error e;
            e.code = codes::bad_model_card;
            e.subject = filename;
            e.detail = std::move(why);
            return gguf::unexpected(std::move(e));
        };
        for (std::size_t i = 0; i < filename.size(); ++i) {
            const char c = filename[i];
            if (c == '}') {
                if (i + 1 < filename.size() && filename[i + 1] == '}') {
                    out += '}';
                    ++i;
                    continue;
                }
                return refuse("a single '}' in the file name template (Python's str.format fails on it)");
            }
            if (c != '{') {
                out += c;
                continue;
            }
            if (i + 1 < filename.size() && filename[i + 1] == '{') {
                out += '{';
                ++i;
                continue;
            }
            const std::size_t close = filename.find('}', i + 1);
            if (close == std::string_view::npos) return refuse("a '{' without its '}' in the file name template");
            const std::string_view field = filename.substr(i + 1, close - i - 1);
            if (field == "ftype" || field == "outtype") {
                out += lower;
            } else if (field == "FTYPE" || field == "OUTTYPE") {
                out += upper;
            } else if (field.empty() || field == "0") {
                if (field.empty() ? manual : automatic > 0)
                    return refuse("automatic and manual field numbering mixed in the file name template");
                if (field.empty()) {
                    if (automatic++ > 0) return refuse("a second '{}' in the file name template (it has one value)");
                } else {
                    manual = true;
                }
                out += lower;
            } else {
                return refuse("the field {" + gguf::escape(field) + "} in the file name template is not one of {ftype}, "
                              "{outtype}, {FTYPE}, {OUTTYPE}, {}");
            }
            i = close;
        }
        return out;
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("a file name"));
    }
}

// ---- Metadata.load and set_gguf_meta_model ----

namespace {

// A Metadata field: None, a text the heuristics made, or a value of the model card.
using field = std::variant<std::monostate, std::string, const py_node*>;

bool is_none(const field& f) { return std::holds_alternative<std::monostate>(f); }

field from_card(const py_node* n) {
    if (n == nullptr || n->k == py_node::kind::none) return std::monostate{};
    return n;
}

struct source_entry {  // a base model or dataset
    const py_node* dict = nullptr;  // a mapping of the card, taken as it is
    std::optional<std::string> name, organization, version, repo_url;
};

struct metadata {
    std::optional<std::string> sampling_sequence_text;
    field name, author, version, organization, finetune, basename, description, size_label, source_url, source_doi,
        source_uuid, source_repo_url, license, license_name, license_link;
    std::optional<std::vector<source_entry>> base_models, datasets;
    std::optional<std::vector<const py_node*>> tags, languages;
};

const char* describe_py(const py_node& n) {
    switch (n.k) {
        case py_node::kind::none: return "null";
        case py_node::kind::boolean: return "a boolean";
        case py_node::kind::integer: return "an integer";
        case py_node::kind::floating: return "a float";
        case py_node::kind::string: return "a string";
        case py_node::kind::date: return "a date";
        case py_node::kind::list: return "a list";
        case py_node::kind::dict: return "a mapping";
    }
    return "a value";
}

class card_reader {
public:
    card_reader(std::vector<vocab_key>& keys, const py_tree& tree, std::string file) : keys_(keys), tree_(tree), file_(std::move(file)) {}

    // gguf_writer.add_string(key, value): nothing for a falsy value; a value that is not a string fails
    void add_string(std::string_view key, const field& f) {
        if (const auto* s = std::get_if<std::string>(&f)) {
            if (!s->empty()) set_key(keys_, key, *s);
        } else if (const auto* p = std::get_if<const py_node*>(&f)) {
            const py_node& n = **p;
            if (!n.truthy) return;
            if (n.k != py_node::kind::string)
                fail(file_, n.offset, key,
                     std::string("the model card gives ") + describe_py(n) +
                         " where the reference writes a string (it fails on it: the value must be text)");
            set_key(keys_, key, n.text);
        }
    }

    void add_license(const field& f) {
        const auto* p = std::get_if<const py_node*>(&f);
        if (p == nullptr || (*p)->k != py_node::kind::list) return add_string("general.license", f);
        std::string joined;
        for (std::size_t i = 0; i < (*p)->items.size(); ++i) {
            const py_node& item = tree_.nodes[(*p)->items[i]];
            if (item.k != py_node::kind::string)
                fail(file_, item.offset, "license",
                     std::string("a license list item that is ") + describe_py(item) + ", not a string (the reference's join fails)");
            if (i > 0) joined += ',';
            joined += item.text;
        }
        if (!joined.empty()) set_key(keys_, "general.license", joined);
    }

    void add_entries(std::string_view prefix, std::string_view count_key, const std::vector<source_entry>& entries) {
        set_key(keys_, count_key, static_cast<std::uint32_t>(entries.size()));
        static constexpr std::array<std::string_view, 9> fields{"name", "author", "version", "organization", "description",
                                                                "url", "doi", "uuid", "repo_url"};
        for (std::size_t id = 0; id < entries.size(); ++id) {
            const source_entry& e = entries[id];
            for (std::string_view fld : fields) {
                const std::string key = std::string(prefix) + std::to_string(id) + "." + std::string(fld);
                if (e.dict != nullptr) {
                    if (const py_node* v = tree_.get(*e.dict, fld)) add_string(key, from_card(v));
                    continue;
                }
                const std::optional<std::string>* v = fld == "name"           ? &e.name
                                                      : fld == "organization" ? &e.organization
                                                      : fld == "version"      ? &e.version
                                                      : fld == "repo_url"     ? &e.repo_url
                                                                              : nullptr;
                if (v != nullptr && v->has_value()) add_string(key, field(**v));
            }
        }
    }

    // add_array: nothing for an empty list; the items' GGUF type from the first, all the same
    void add_array(std::string_view key, const std::vector<const py_node*>& items) {
        if (items.empty()) return;
        const py_node::kind k = items.front()->k;
        for (const py_node* n : items)
            if (n->k != k || n->k == py_node::kind::none || n->k == py_node::kind::date || n->k == py_node::kind::dict)
                fail(file_, n->offset, key,
                     std::string("a list item that is ") + describe_py(*n) + " in a list of " + describe_py(*items.front()) +
                         " items (the reference's GGUF writer fails: all items must be strings, or all integers)");
        if (k == py_node::kind::string) {
            std::vector<std::string> v;
            for (const py_node* n : items) v.push_back(n->text);
            set_key(keys_, key, std::move(v));
            return;
        }
        if (k == py_node::kind::integer) {
            std::vector<std::int32_t> v;
            for (const py_node* n : items) {
                if (!n->int_fits || n->integer < std::numeric_limits<std::int32_t>::min() ||
                    n->integer > std::numeric_limits<std::int32_t>::max())
                    fail(file_, n->offset, key, "an integer beyond 32 bits (the reference's GGUF writer fails on it)");
                v.push_back(static_cast<std::int32_t>(n->integer));
            }
            set_key(keys_, key, std::move(v));
            return;
        }
        fail(file_, items.front()->offset, key,
             std::string("a list of ") + describe_py(*items.front()) +
                 " items (the reference writes such an array; not supported here: give strings)");
    }

private:
    std::vector<vocab_key>& keys_;
    const py_tree& tree_;
    std::string file_;
};

std::optional<std::string> read_small(const std::filesystem::path& p) {
    if (!detail::is_file(p)) return std::nullopt;
    auto text = detail::read_capped_file(p, model_card_max_bytes, codes::bad_model_card);
    if (!text) throw detail::convert_failure{std::move(text).error()};
    return std::move(*text);
}

// Metadata.load_model_card into a tree (empty: {}); errors name `file`.
void load_model_card(std::string_view text, const std::string& file, py_tree& tree) {
    detail::card_failure why;
    if (!detail::parse_model_card(text, tree, why))
        fail(file, 0, why.subject, "the YAML front matter: " + why.detail);
    const py_node* root = tree.root_node();
    if (root == nullptr || root->k != py_node::kind::dict) tree = py_tree{};  // logged and ignored by the reference
}

// Python's str of a list item appended by use_array_model_card_metadata: a str is appended, a list extended
void append_card_array(const py_tree& tree, const py_node* value, std::optional<std::vector<const py_node*>>& target) {
    if (value == nullptr || value->k == py_node::kind::none) return;
    if (!target) target.emplace();
    if (value->k == py_node::kind::string) {
        target->push_back(value);
    } else if (value->k == py_node::kind::list) {
        for (const std::uint32_t i : value->items) target->push_back(&tree.nodes[i]);
    }
}

// A base model or dataset given as a string: a URL (a Hugging Face one split into its parts) or an id.
source_entry source_of(std::string_view id, std::int64_t total, bool with_repo_url) {
    source_entry e;
    if (id.starts_with("http://") || id.starts_with("https://") || id.starts_with("ssh://")) {
        e.repo_url = std::string(id);
        if (id.find("huggingface.co") == std::string_view::npos) return e;
        // re.match(r"https?://huggingface.co/([^/]+/[^/]+)$", id): '.' any character but a newline
        std::string_view rest = id.substr(id.starts_with("https://") ? 8 : 7);
        if (id.starts_with("ssh://")) return e;
        if (rest.size() < 15 || rest.substr(0, 11) != "huggingface" || rest[11] == '\n' || rest.substr(12, 3) != "co/") return e;
        // [^/]+ takes a final newline too before '$' matches at the very end: the group keeps it
        const std::string_view group = rest.substr(15);
        const std::size_t slash = group.find('/');
        if (slash == std::string_view::npos || slash == 0 || slash + 1 == group.size() ||
            group.find('/', slash + 1) != std::string_view::npos)
            return e;
        const model_id_components c = get_model_id_components(group, total);
        if (c.full_name) e.name = id_to_title(*c.full_name);
        if (c.organization) e.organization = id_to_title(*c.organization);
        if (c.version) e.version = c.version;
        return e;
    }
    const model_id_components c = get_model_id_components(id, total);
    if (c.full_name) e.name = id_to_title(*c.full_name);
    if (c.organization) e.organization = id_to_title(*c.organization);
    if (c.version) e.version = c.version;
    if (with_repo_url && c.organization && c.full_name)
        e.repo_url = "https://huggingface.co/" + *c.organization + "/" + *c.full_name;
    return e;
}

void read_sources(const py_tree& tree, const py_node& card, std::initializer_list<std::string_view> names,
                  std::int64_t total, std::optional<std::vector<source_entry>>& target) {
    bool present = false;
    const py_node* value = nullptr;
    // model_card.get(a, model_card.get(b, model_card.get(c, None))): the first present key's value
    for (std::string_view n : names)
        if (const py_node* v = tree.get(card, n)) {
            if (!present) value = v;
            present = true;
        }
    if (!present) return;
    std::vector<const py_node*> ids;
    if (value != nullptr && value->k == py_node::kind::string) {
        ids.push_back(value);
    } else if (value != nullptr && value->k == py_node::kind::list) {
        for (const std::uint32_t i : value->items) ids.push_back(&tree.nodes[i]);
    }
    if (!target) target.emplace();
    for (const py_node* id : ids) {
        if (id->k == py_node::kind::string) {
            target->push_back(source_of(id->text, total, true));
        } else if (id->k == py_node::kind::dict) {
            source_entry e;
            e.dict = id;
            target->push_back(e);
        } else {
            target->push_back(source_entry{});  // "not in a known format": an entry without keys
        }
    }
}

// apply_metadata_heuristic's model card part.
void card_heuristics(const py_tree& tree, std::int64_t total, metadata& m) {
    const py_node* card = tree.root_node();
    if (card == nullptr) return;
    auto use = [&](field& target, std::string_view key) {
        if (!is_none(target)) return;
        if (const py_node* v = tree.get(*card, key)) target = from_card(v);
    };
    use(m.name, "name");
    use(m.author, "author");
    use(m.version, "version");
    use(m.organization, "organization");
    use(m.description, "description");
    use(m.finetune, "finetune");
    use(m.basename, "basename");
    use(m.size_label, "size_label");
    use(m.source_url, "url");
    use(m.source_doi, "doi");
    use(m.source_uuid, "uuid");
    use(m.source_repo_url, "repo_url");
    use(m.name, "model_name");
    use(m.author, "model_author");
    use(m.version, "model_version");
    use(m.organization, "model_organization");
    use(m.description, "model_description");
    use(m.finetune, "model_finetune");
    use(m.basename, "model_basename");
    use(m.size_label, "model_size_label");
    use(m.source_url, "model_url");
    use(m.source_doi, "model_doi");
    use(m.source_uuid, "model_uuid");
    use(m.source_repo_url, "model_repo_url");
    use(m.name, "model_name");
    use(m.author, "model_creator");
    use(m.basename, "model_type");
    read_sources(tree, *card, {"base_model", "base_models", "base_model_sources"}, total, m.base_models);
    read_sources(tree, *card, {"datasets", "dataset", "dataset_sources"}, total, m.datasets);
    use(m.license, "license");
    use(m.license_name, "license_name");
    use(m.license_link, "license_link");
    append_card_array(tree, tree.get(*card, "tags"), m.tags);
    append_card_array(tree, tree.get(*card, "pipeline_tag"), m.tags);
    append_card_array(tree, tree.get(*card, "languages"), m.languages);
    append_card_array(tree, tree.get(*card, "language"), m.languages);
}

void id_heuristics(std::string_view model_id, std::int64_t total, metadata& m) {
    const model_id_components c = get_model_id_components(model_id, total);
    if (is_none(m.name) && c.full_name) m.name = id_to_title(*c.full_name);
    if (is_none(m.organization) && c.organization) m.organization = id_to_title(*c.organization);
    if (is_none(m.basename) && c.basename) m.basename = *c.basename;
    if (is_none(m.finetune) && c.finetune) m.finetune = *c.finetune;
    if (is_none(m.version) && c.version) m.version = *c.version;
    if (is_none(m.size_label) && c.size_label) m.size_label = *c.size_label;
}

// Python's Path(p).name: the last component once empty and "." components are dropped ("" for "." or "/").
std::string path_name(const std::filesystem::path& p) {
    const std::string& s = p.native();
    std::string last;
    std::size_t i = 0;
    while (i <= s.size()) {
        const std::size_t j = std::min(s.find('/', i), s.size());
        const std::string_view part(s.data() + i, j - i);
        if (!part.empty() && part != ".") last = std::string(part);
        i = j + 1;
    }
    return last;
}

std::string number_text(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// Metadata.load_generation_config and the sampling keys it gives (set_gguf_meta_model's first keys).
void generation_config(const std::filesystem::path& dir, std::vector<vocab_key>& keys) {
    const std::filesystem::path p = dir / "generation_config.json";
    std::optional<std::string> raw;
    try {
        raw = read_small(p);
    } catch (detail::convert_failure& f) {
        if (f.e.code == gguf::errc::io_error) return;  // the reference's `except IOError`: ignored
        throw;
    }
    if (!raw) return;
    detail::require_utf8(*raw, p.string(), codes::bad_model_card, gguf::section::file);
    auto tree = std::make_shared<detail::json_tree>();
    detail::json_failure failure;
    if (!detail::build_json_tree(*raw, 0, detail::json_tree_limits{}, *tree, failure)) {
        if (failure.out_of_memory) throw std::bad_alloc();
        return;  // JSONDecodeError: ignored ("not all models have valid generation_config.json")
    }
    const std::string file = p.string();
    const json_value root = json_access::view(tree.get(), 0);
    if (root.kind() != json_kind::object) {
        const bool falsy = root.kind() == json_kind::null || (root.kind() == json_kind::boolean && !*root.as_bool()) ||
                           (root.kind() == json_kind::number && root.as_double() == 0.0) ||
                           (root.kind() == json_kind::string && root.as_string()->empty()) ||
                           (root.kind() == json_kind::array && root.size() == 0);
        if (falsy) return;
        fail(file, root.offset(), "", "JSON that is " + std::string(describe(root.kind())) +
                                          ", not an object (the reference's .get() fails on it)");
    }
    enum class as { text, i32, f32 };
    struct sampling {
        std::string_view json, key;
        as type;
    };
    static constexpr std::array<sampling, 12> table{{
        {"sequence", "general.sampling.sequence", as::text},
        {"top_k", "general.sampling.top_k", as::i32},
        {"top_p", "general.sampling.top_p", as::f32},
        {"min_p", "general.sampling.min_p", as::f32},
        {"xtc_probability", "general.sampling.xtc_probability", as::f32},
        {"xtc_threshold", "general.sampling.xtc_threshold", as::f32},
        {"temperature", "general.sampling.temp", as::f32},
        {"penalty_last_n", "general.sampling.penalty_last_n", as::i32},
        {"penalty_repeat", "general.sampling.penalty_repeat", as::f32},
        {"mirostat", "general.sampling.mirostat", as::i32},
        {"mirostat_tau", "general.sampling.mirostat_tau", as::f32},
        {"mirostat_eta", "general.sampling.mirostat_eta", as::f32},
    }};
    for (const sampling& s : table) {
        const json_value v = root.member(s.json);
        if (v.is_none()) continue;
        auto wrong = [&](std::string why) { fail(file, v.offset(), s.json, std::move(why)); };
        const std::string kind(describe(v.kind()));
        switch (s.type) {
            case as::text:
                if (const auto t = v.as_string()) {
                    if (!t->empty()) set_key(keys, s.key, std::string(*t));
                } else if (v.kind() == json_kind::boolean ? *v.as_bool()
                           : v.kind() == json_kind::number ? v.as_double() != 0.0
                                                            : v.size() > 0) {
                    wrong(kind + " where the reference writes a string (it fails on it)");
                }
                break;
            case as::i32: {
                if (const auto b = v.as_bool()) {
                    set_key(keys, s.key, static_cast<std::int32_t>(*b ? 1 : 0));
                    break;
                }
                if (v.kind() != json_kind::number || !v.is_integer())
                    wrong(kind == "a number" ? "a number with a fraction or exponent where the reference packs a 32-bit integer (it fails on it)"
                                             : kind + " where the reference packs a 32-bit integer (it fails on it)");
                const auto i = v.as_int();
                if (!i || *i < std::numeric_limits<std::int32_t>::min() || *i > std::numeric_limits<std::int32_t>::max())
                    wrong("an integer beyond 32 bits (the reference fails to pack it)");
                set_key(keys, s.key, static_cast<std::int32_t>(*i));
                break;
            }
            case as::f32: {
                double d = 0;
                if (const auto b = v.as_bool()) {
                    d = *b ? 1.0 : 0.0;
                } else if (v.kind() == json_kind::number) {
                    d = *v.as_double();
                } else {
                    wrong(kind + " where the reference packs a 32-bit float (it fails on it)");
                }
                const auto f = static_cast<float>(d);
                if (std::isinf(f) && !std::isinf(d))
                    wrong("the number " + number_text(d) + " is beyond a 32-bit float (the reference fails to pack it)");
                set_key(keys, s.key, f);
                break;
            }
        }
    }
}

// set_gguf_meta_model after the sampling keys, in its order.
void write_card_fields(card_reader& w, const metadata& m) {
        w.add_string("general.name", m.name);
        w.add_string("general.author", m.author);
        w.add_string("general.version", m.version);
        w.add_string("general.organization", m.organization);
        w.add_string("general.finetune", m.finetune);
        w.add_string("general.basename", m.basename);
        w.add_string("general.description", m.description);
        w.add_string("general.size_label", m.size_label);
        w.add_license(m.license);
        w.add_string("general.license.name", m.license_name);
        w.add_string("general.license.link", m.license_link);
        w.add_string("general.source.url", m.source_url);
        w.add_string("general.source.doi", m.source_doi);
        w.add_string("general.source.uuid", m.source_uuid);
        w.add_string("general.source.repo_url", m.source_repo_url);
        if (m.base_models) w.add_entries("general.base_model.", "general.base_model.count", *m.base_models);
        if (m.datasets) w.add_entries("general.dataset.", "general.dataset.count", *m.datasets);
        if (m.tags) w.add_array("general.tags", *m.tags);
        if (m.languages) w.add_array("general.languages", *m.languages);
}

}  // namespace

gguf::result<std::vector<vocab_key>> general_metadata(const std::filesystem::path& model_dir, const hf_config& config,
                                                      const parameter_counts& counts,
                                                      const metadata_options& options) noexcept {
    try {
        std::vector<vocab_key> keys;
        set_key(keys, "general.architecture", std::string(gguf_name(config.arch)));
        set_key(keys, "general.type", std::string("model"));
        const auto total = static_cast<std::int64_t>(std::min<std::uint64_t>(counts.total, std::numeric_limits<std::int64_t>::max() / 8));

        // Metadata.load: the model card (only for a directory), config.json, generation_config.json
        py_tree card;
        const std::filesystem::path readme = model_dir / "README.md";
        if (detail::is_directory(model_dir)) {
            if (std::optional<std::string> raw = read_small(readme)) {
                detail::require_utf8(*raw, readme.string(), codes::bad_model_card, gguf::section::file);
                load_model_card(detail::universal_newlines(*raw), readme.string(), card);
            }
        }
        metadata m;
        card_heuristics(card, total, m);
        if (config.name_or_path && std::count(config.name_or_path->begin(), config.name_or_path->end(), '/') <= 1)
            id_heuristics(*config.name_or_path, total, m);
        const std::string dir_name = path_name(model_dir);
        id_heuristics(dir_name, total, m);
        std::vector<vocab_key> sampling;
        if (detail::is_directory(model_dir)) generation_config(model_dir, sampling);
        if (options.model_name) m.name = *options.model_name;

        // prepare_metadata
        if (is_none(m.name)) m.name = dir_name;
        if (is_none(m.size_label) && counts.total > 0) m.size_label = size_label(counts);

        // set_gguf_meta_model
        for (vocab_key& k : sampling) set_key(keys, k.name, std::move(k.value));
        card_reader w(keys, card, readme.string());
        write_card_fields(w, m);
        return keys;
    } catch (detail::convert_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("the model's metadata"));
    }
}

gguf::result<std::vector<vocab_key>> model_card_metadata(std::string_view readme_text, std::string file) noexcept {
    try {
        std::vector<vocab_key> keys;
        std::string raw(readme_text);
        detail::require_utf8(raw, file, codes::bad_model_card, gguf::section::file);
        py_tree card;
        load_model_card(detail::universal_newlines(raw), file, card);
        metadata m;
        card_heuristics(card, 0, m);
        card_reader w(keys, card, file);
        write_card_fields(w, m);
        return keys;
    } catch (detail::convert_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("the model card"));
    }
}

}  // namespace minfer::convert
