#include "quote.hpp"

#include "minfer/gguf/text.hpp"
#include "value_visit.hpp"

namespace minfer::cli {

std::string quoted(std::string_view s, std::size_t limit) {
    std::string_view shown = s;
    const bool cut = limit > 0 && s.size() > limit;
    if (cut) {
        std::size_t n = limit;
        // Back off to the start of a UTF-8 sequence (at most 3 continuation bytes).
        for (int k = 0; k < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++k) --n;
        shown = s.substr(0, n);
    }
    std::string out = '"' + gguf::escape(shown, '"');
    out += '"';
    if (cut) out += fmt::format("… ({} bytes)", s.size());
    return out;
}

std::string float_text(float v) { return fmt::format("{}", v); }
std::string float_text(double v) { return fmt::format("{}", v); }

std::string scalar_value_text(const gguf::kv& e, std::size_t string_limit) {
    if (e.is_array()) return {};
    if (e.type == gguf::value_type::string) {
        auto s = e.get<std::string_view>();
        return s ? quoted(*s, string_limit) : std::string("?");
    }
    std::string text = "?";
    visit_fixed(e.type, [&](auto tag) {
        using T = decltype(tag);
        auto v = e.get<T>();
        if (v) text = number_text<T>(*v);
    });
    return text;
}

}  // namespace minfer::cli
