// The toolbox's error codes: names and descriptions.
// The numbers are the low bytes of codes:: in minfer/toolbox/errors.hpp; names never change (JSON, Python).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/gguf/text.hpp"
#include "minfer/toolbox/errors.hpp"

namespace minfer::toolbox {
namespace {

// Index n - 1 is code n.
constexpr std::array<std::string_view, 5> names{
    "bad_selection",
    "key_not_adjustable",
    "sources_incompatible",
    "bad_config",
    "unsupported_config"};

std::string_view name(std::uint8_t code) noexcept {
    return code >= 1 && code <= names.size() ? names[code - 1u] : std::string_view();
}

std::string with_detail(std::string head, const gguf::error& e) {
    return e.detail.empty() ? head : head + ": " + e.detail;
}

// An assembly config's errors name the key path first: "slices[0].sources[0].layer_range: expected ...".
std::string with_subject(std::string head, const gguf::error& e) {
    if (!e.subject.empty()) head += ": " + gguf::escape(e.subject.view());
    return with_detail(std::move(head), e);
}

std::string describe(const gguf::error& e, bool /*path_said*/) {
    switch (gguf::number_in_domain(e.code)) {  // the low byte: the codes are not enumerators of errc
        case gguf::number_in_domain(codes::bad_selection): return with_detail("the selection cannot be applied", e);
        case gguf::number_in_domain(codes::key_not_adjustable):
            return with_detail("a key that counts or indexes layers cannot be kept consistent", e);
        case gguf::number_in_domain(codes::sources_incompatible): return with_detail("the sources do not fit together", e);
        case gguf::number_in_domain(codes::bad_config): return with_subject("the config is not valid", e);
        case gguf::number_in_domain(codes::unsupported_config):
            return with_subject("the config asks for what is not supported", e);
        default: break;
    }
    return "unknown error";
}

constexpr gguf::error_domain domain{gguf::domains::toolbox, "toolbox", &name, &describe};

}  // namespace

const gguf::error_domain& errors_domain() noexcept { return domain; }

}  // namespace minfer::toolbox
