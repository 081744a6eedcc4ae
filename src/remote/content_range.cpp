// Content-Range parsing: strict, allocation-free, total (nullopt for anything unexpected).
#include "minfer/remote/content_range.hpp"

#include <cstddef>

namespace minfer::remote {
namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Decimal digits at s[i…] (at least one, at most 20, no overflow); i moves past them.
bool number(std::string_view s, std::size_t& i, std::uint64_t& out) noexcept {
    const std::size_t start = i;
    std::uint64_t v = 0;
    while (i < s.size() && is_digit(s[i])) {
        const auto d = static_cast<std::uint64_t>(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
        ++i;
    }
    if (i == start) return false;
    out = v;
    return true;
}

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::optional<content_range> parse_content_range(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    constexpr std::string_view unit = "bytes";
    if (s.size() < unit.size() + 1) return std::nullopt;
    for (std::size_t k = 0; k < unit.size(); ++k)
        if (lower(s[k]) != unit[k]) return std::nullopt;
    std::size_t i = unit.size();
    if (s[i] != ' ') return std::nullopt;
    ++i;
    content_range r;
    if (i < s.size() && s[i] == '*') {
        r.unsatisfied = true;
        ++i;
    } else {
        if (!number(s, i, r.first)) return std::nullopt;
        if (i >= s.size() || s[i] != '-') return std::nullopt;
        ++i;
        if (!number(s, i, r.last)) return std::nullopt;
    }
    if (i >= s.size() || s[i] != '/') return std::nullopt;
    ++i;
    if (!number(s, i, r.total)) return std::nullopt;
    if (i != s.size()) return std::nullopt;
    if (!r.unsatisfied && (r.first > r.last || r.last >= r.total)) return std::nullopt;
    return r;
}

}  // namespace minfer::remote
