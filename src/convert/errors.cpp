// minfer::convert's error codes: names and descriptions.
// The numbers are the low bytes of codes:: in minfer/convert/errors.hpp; names never change (JSON, Python).
#include "minfer/convert/errors.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/gguf/text.hpp"

namespace minfer::convert {
namespace {

// Index n - 1 is code n.
constexpr std::array<std::string_view, 10> names{
    "bad_safetensors",
    "unsupported_dtype",
    "bad_model_config",
    "bad_checkpoint_index",
    "unsupported_architecture",
    "no_weights",
    "bad_tokenizer",
    "unsupported_tokenizer",
    "bad_tensor",
    "bad_model_card"};

std::string_view name(std::uint8_t code) noexcept {
    return code >= 1 && code <= names.size() ? names[code - 1u] : std::string_view();
}

// "<head>: '<subject>': <detail>". The subject is untrusted text (a tensor name, a key): escaped. The
// detail is built by this library, which escapes what it quotes.
std::string said(std::string head, const gguf::error& e) {
    if (!e.subject.empty()) {
        head += ": '";
        head += gguf::escape(e.subject.view());
        head += '\'';
    }
    if (!e.detail.empty()) {
        head += ": ";
        head += e.detail;
    }
    return head;
}

std::string describe(const gguf::error& e, bool /*path_said*/) {
    switch (gguf::number_in_domain(e.code)) {  // the low byte: the codes are not enumerators of errc
        case gguf::number_in_domain(codes::bad_safetensors): return said("invalid safetensors file", e);
        case gguf::number_in_domain(codes::unsupported_dtype): return said("unsupported tensor dtype", e);
        case gguf::number_in_domain(codes::bad_model_config): return said("invalid model config", e);
        case gguf::number_in_domain(codes::bad_checkpoint_index): return said("invalid checkpoint index", e);
        case gguf::number_in_domain(codes::unsupported_architecture): return said("unsupported architecture", e);
        case gguf::number_in_domain(codes::no_weights): return said("no safetensors weights", e);
        case gguf::number_in_domain(codes::bad_tokenizer): return said("invalid tokenizer", e);
        case gguf::number_in_domain(codes::unsupported_tokenizer): return said("unsupported tokenizer", e);
        case gguf::number_in_domain(codes::bad_tensor): return said("tensor does not fit the architecture", e);
        case gguf::number_in_domain(codes::bad_model_card): return said("invalid model card or generation config", e);
        default: break;
    }
    return "unknown error";
}

constexpr gguf::error_domain domain{error_domain_id, "convert", &name, &describe};

}  // namespace

const gguf::error_domain& errors_domain() noexcept { return domain; }

}  // namespace minfer::convert
