// The commands' shared readings of names and keys (model_keys.hpp).
#include "model_keys.hpp"

#include <charconv>

#include "minfer/gguf/text.hpp"

namespace minfer::toolbox::detail {

gguf::error make_error(gguf::errc code, std::string_view subject, std::string detail) {
    gguf::error e;
    e.code = code;
    e.subject = subject;
    e.detail = std::move(detail);
    return e;
}

std::optional<std::uint32_t> block_of(std::string_view name, std::string_view& rest) noexcept {
    if (!name.starts_with("blk.")) return std::nullopt;
    const std::string_view tail = name.substr(4);
    const std::size_t dot = tail.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    std::uint32_t n = 0;
    const auto [p, ec] = std::from_chars(tail.data(), tail.data() + dot, n);
    if (ec != std::errc() || p != tail.data() + dot) return std::nullopt;
    rest = tail.substr(dot + 1);
    return n;
}

std::string quoted_text(std::string_view v) {
    std::string s(1, '"');  // appended: GCC 12 -O3 warns falsely (-Wrestrict) on "\"" + string
    s += gguf::escape(v, '"');
    s += '"';
    return s;
}

std::string value_text(const gguf::kv& e) {
    if (e.is_array()) return "array[" + std::string(gguf::to_string(e.element_type)) + "] of " + std::to_string(e.count);
    if (e.type == gguf::value_type::string) {
        auto s = e.get<std::string_view>();
        return s ? quoted_text(*s) : std::string("?");
    }
    if (auto u = e.as<std::uint64_t>()) return std::to_string(*u);
    if (auto i = e.as<std::int64_t>()) return std::to_string(*i);
    if (auto d = e.as<double>()) return std::to_string(*d);
    if (auto b = e.get<bool>()) return *b ? "true" : "false";
    return "?";
}

std::uint32_t llama_file_type_of(gguf::tensor_type most_common) noexcept {
    using tt = gguf::tensor_type;
    std::uint32_t ftype = 0;
    switch (most_common) {
        case tt::f32: ftype = 0; break;
        case tt::f16: ftype = 1; break;
        case tt::bf16: ftype = 32; break;
        case tt::q4_0: ftype = 2; break;
        case tt::q4_1: ftype = 3; break;
        case tt::q5_0: ftype = 8; break;
        case tt::q5_1: ftype = 9; break;
        case tt::q8_0: ftype = 7; break;
        case tt::q2_k: ftype = 10; break;
        case tt::q3_k: ftype = 12; break;  // Q3_K_M
        case tt::q4_k: ftype = 15; break;  // Q4_K_M
        case tt::q5_k: ftype = 17; break;  // Q5_K_M
        case tt::q6_k: ftype = 18; break;
        case tt::tq1_0: ftype = 36; break;
        case tt::tq2_0: ftype = 37; break;
        case tt::iq2_xxs: ftype = 19; break;
        case tt::iq2_xs: ftype = 20; break;
        case tt::iq2_s: ftype = 28; break;
        case tt::iq3_xxs: ftype = 23; break;
        case tt::iq1_s: ftype = 24; break;
        case tt::iq1_m: ftype = 31; break;
        case tt::iq4_nl: ftype = 25; break;
        case tt::iq4_xs: ftype = 30; break;
        case tt::iq3_s: ftype = 26; break;
        case tt::nvfp4: ftype = 39; break;
        case tt::q1_0: ftype = 40; break;
        default: ftype = 0; break;
    }
    return ftype;
}

}  // namespace minfer::toolbox::detail
