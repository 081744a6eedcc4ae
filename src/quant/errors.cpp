// The values library's error codes: names and descriptions.
// The numbers are the low bytes of codes:: in minfer/quant/errors.hpp; names never change (JSON, Python).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "minfer/quant/errors.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::quant {
namespace {

// Index n - 1 is code n.
constexpr std::array<std::string_view, 9> names{
    "type_not_convertible",
    "type_not_quantizable",
    "importance_required",
    "quantize_failed",
    "bad_imatrix",
    "imatrix_mismatch",
    "requantize_refused",
    "non_finite_weight",
    "row_too_long"};

std::string_view name(std::uint8_t code) noexcept {
    return code >= 1 && code <= names.size() ? names[code - 1u] : std::string_view();
}

std::string num(std::uint64_t v) { return std::to_string(v); }
std::string snum(std::uint64_t v) { return std::to_string(static_cast<std::int64_t>(v)); }
std::string quoted(std::string_view raw) {
    std::string out(1, '\'');
    out += gguf::escape(raw);
    out += '\'';
    return out;
}
// "q8_1 (id 9)", "id 77".
std::string type_name(std::uint64_t t) {
    std::string out;
    if (t < gguf::tensor_type_count) out.append(gguf::to_string(static_cast<gguf::tensor_type>(t))).append(" (id ");
    else out.append("id ");
    out.append(num(t));
    if (t < gguf::tensor_type_count) out += ')';
    return out;
}

std::string describe(const gguf::error& e, bool /*path_said*/) {
    const std::string s = quoted(e.subject);
    switch (gguf::number_in_domain(e.code)) {  // the low byte: the codes are not enumerators of errc
        case gguf::number_in_domain(codes::type_not_convertible):
            return (e.subject.empty() ? std::string() : "tensor " + s + ": ") + "type " + type_name(e.found) +
                   " cannot be converted to f32" + (e.detail.empty() ? std::string() : " (" + e.detail + ")");
        case gguf::number_in_domain(codes::type_not_quantizable):
            return (e.subject.empty() ? std::string() : "tensor " + s + ": ") + "values cannot be quantized to type " +
                   type_name(e.found) + (e.detail.empty() ? std::string() : " (" + e.detail + ")");
        case gguf::number_in_domain(codes::importance_required):  // subject: the tensor, when a whole model is quantized
            return (e.subject.empty() ? std::string() : "tensor " + s + ": ") + "type " + type_name(e.found) +
                   " needs importance weights (an imatrix) to be quantized" +
                   (e.detail.empty() ? std::string() : " (" + e.detail + ")");
        case gguf::number_in_domain(codes::quantize_failed):
            // detail: why, when the caller knows (toolbox::quantize's validation of the output).
            return (e.subject.empty() ? std::string() : "tensor " + s + ", ") + "row " + std::to_string(e.index) +
                   ": quantizing to " + type_name(e.found) + " failed" +
                   (e.detail.empty() ? std::string(" (an input ggml's quantizer would stop on)") : ": " + e.detail);
        case gguf::number_in_domain(codes::bad_imatrix):
            return std::string("the importance matrix is malformed") + (e.subject.empty() ? std::string() : " at entry " + s) +
                   (e.detail.empty() ? std::string() : ": " + e.detail);
        case gguf::number_in_domain(codes::imatrix_mismatch):
            return "the importance matrix has " + num(e.found) + " weights for tensor " + s + ", which needs " +
                   num(e.expected);
        case gguf::number_in_domain(codes::requantize_refused):
            return "tensor " + s + " is already quantized (" + type_name(e.found) +
                   "); requantizing loses precision twice, allow it explicitly (--allow-requantize)";
        case gguf::number_in_domain(codes::row_too_long):
            return "tensor " + s + " has rows of " + num(e.found) + " values, more than the " + num(e.expected) +
                   " a model quantization converts at once (a row is quantized whole)";
        case gguf::number_in_domain(codes::non_finite_weight):
            return "tensor " + s + " holds a NaN or an infinity at value " + snum(static_cast<std::uint64_t>(e.index)) +
                   ", which no quantized type can represent";
        default: break;
    }
    return "unknown error";
}

constexpr gguf::error_domain domain{gguf::domains::quant, "quant", &name, &describe};

}  // namespace

const gguf::error_domain& errors_domain() noexcept { return domain; }

gguf::error type_not_convertible_error(const gguf::tensor_info& t) {
    gguf::error e;
    e.code = codes::type_not_convertible;
    e.found = static_cast<std::uint32_t>(t.type);
    e.subject = t.name;
    return e;
}

}  // namespace minfer::quant
