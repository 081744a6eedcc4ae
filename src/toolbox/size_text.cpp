#include "minfer/toolbox/size_text.hpp"

#include "minfer/gguf/text.hpp"

namespace minfer::toolbox {

std::optional<std::uint64_t> parse_count(std::string_view s) {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, static_cast<unsigned>(c - '0'), &v))
            return std::nullopt;
    }
    return v;
}

std::optional<std::uint64_t> parse_size(std::string_view text, std::string& why) {
    std::size_t i = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    const std::string_view whole = text.substr(0, i);
    std::string_view frac;
    if (i < text.size() && text[i] == '.') {
        const std::size_t start = ++i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
        frac = text.substr(start, i - start);
        if (frac.empty()) {
            why = "a '.' must be followed by digits";
            return std::nullopt;
        }
    }
    const std::string_view unit = text.substr(i);
    if (whole.empty()) {
        why = "it must start with a number";
        return std::nullopt;
    }
    struct unit_def {
        std::string_view name;
        std::uint64_t bytes;
    };
    constexpr unit_def units[] = {{"", 1},
                                  {"K", 1000},
                                  {"M", 1000 * 1000},
                                  {"G", 1000ull * 1000 * 1000},
                                  {"T", 1000ull * 1000 * 1000 * 1000},
                                  {"KiB", 1ull << 10},
                                  {"MiB", 1ull << 20},
                                  {"GiB", 1ull << 30},
                                  {"TiB", 1ull << 40}};
    std::uint64_t mult = 0;
    for (const unit_def& u : units)
        if (u.name == unit) mult = u.bytes;
    if (mult == 0) {
        why = "unknown unit '" + gguf::escape(unit) + "' (use K, M, G, T = 10^3..10^12 or KiB, MiB, GiB, TiB = 2^10..2^40)";
        return std::nullopt;
    }
    if (mult == 1 && !frac.empty()) {
        why = "a number of bytes must be whole";
        return std::nullopt;
    }
    if (frac.size() > 18) {
        why = "too many decimals";
        return std::nullopt;
    }
    const auto w = parse_count(whole);
    std::uint64_t bytes = 0;
    if (!w || __builtin_mul_overflow(*w, mult, &bytes)) {
        why = "too large";
        return std::nullopt;
    }
    if (!frac.empty()) {
        // fraction * mult / 10^digits, exactly (fraction < 10^18, mult <= 2^40: fits in 128 bits)
        __extension__ typedef unsigned __int128 u128;  // GCC/Clang: exact, no floating point
        u128 f = 0, scale = 1;
        for (char c : frac) {
            f = f * 10 + static_cast<unsigned>(c - '0');
            scale *= 10;
        }
        const auto extra = static_cast<std::uint64_t>(f * mult / scale);
        if (__builtin_add_overflow(bytes, extra, &bytes)) {
            why = "too large";
            return std::nullopt;
        }
    }
    if (bytes == 0) {
        why = "it must be at least 1 byte";
        return std::nullopt;
    }
    return bytes;
}

}  // namespace minfer::toolbox
