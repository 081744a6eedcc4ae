// The download checks' error codes: names and descriptions.
// The numbers are the low bytes of codes:: in minfer/check/errors.hpp; names never change (JSON, Python).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/check/errors.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::check {
namespace {

// Index n - 1 is code n.
constexpr std::array<std::string_view, 3> names{
    "hash_unavailable",
    "manifest_too_large",
    "manifest_bad_line"};

std::string_view name(std::uint8_t code) noexcept {
    return code >= 1 && code <= names.size() ? names[code - 1u] : std::string_view();
}

std::string num(std::uint64_t v) { return std::to_string(v); }
std::string quoted(std::string_view raw) {
    std::string out(1, '\'');
    out += gguf::escape(raw);
    out += '\'';
    return out;
}

std::string describe(const gguf::error& e, bool /*path_said*/) {
    const std::string s = quoted(e.subject);
    switch (gguf::number_in_domain(e.code)) {  // the low byte: the codes are not enumerators of errc
        case gguf::number_in_domain(codes::hash_unavailable):
            return "the hash " + s + " cannot be computed" + (e.detail.empty() ? std::string() : ": " + e.detail);
        case gguf::number_in_domain(codes::manifest_too_large):
            return "the manifest has more than " + num(e.expected) + " bytes, the most that is read";
        case gguf::number_in_domain(codes::manifest_bad_line):
            return "manifest line " + std::to_string(e.index) + ": " + (e.subject.empty() ? std::string() : s + " entry ") +
                   e.detail;
        default: break;
    }
    return "unknown error";
}

constexpr gguf::error_domain domain{gguf::domains::check, "check", &name, &describe};

}  // namespace

const gguf::error_domain& errors_domain() noexcept { return domain; }

}  // namespace minfer::check
