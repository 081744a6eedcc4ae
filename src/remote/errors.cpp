// The HTTP byte source's error codes: names and descriptions.
// The numbers are the low bytes of codes:: in minfer/remote/errors.hpp; names never change (JSON, Python).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/remote/errors.hpp"

namespace minfer::remote {
namespace {

// Index n - 1 is code n.
constexpr std::array<std::string_view, 3> names{
    "range_ignored",
    "bad_content_range",
    "library_unavailable"};

std::string_view name(std::uint8_t code) noexcept {
    return code >= 1 && code <= names.size() ? names[code - 1u] : std::string_view();
}

std::string describe(const gguf::error& e, bool /*path_said*/) {
    switch (gguf::number_in_domain(e.code)) {  // the low byte: the codes are not enumerators of errc
        case gguf::number_in_domain(codes::range_ignored):
            return "the server does not serve byte ranges" + (e.detail.empty() ? std::string() : ": " + e.detail);
        case gguf::number_in_domain(codes::bad_content_range):
            return "the server's Content-Range cannot be used" + (e.detail.empty() ? std::string() : ": " + e.detail);
        case gguf::number_in_domain(codes::library_unavailable):
            return "libcurl, which reads http(s):// and hf:// models, cannot be loaded" +
                   (e.detail.empty() ? std::string() : ": " + e.detail);
        default: break;
    }
    return "unknown error";
}

constexpr gguf::error_domain domain{gguf::domains::remote, "remote", &name, &describe};

}  // namespace

const gguf::error_domain& errors_domain() noexcept { return domain; }

}  // namespace minfer::remote
