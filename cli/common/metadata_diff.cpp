#include "common/metadata_diff.hpp"

#include <string_view>

#include "common/quote.hpp"
#include "common/value_visit.hpp"

namespace minfer::cli {

std::string type_text(const gguf::kv& e) {
    if (!e.is_array()) return std::string(gguf::to_string(e.type));
    return std::string("array[").append(gguf::to_string(e.element_type)).append("]");
}

std::string array_item_text(const gguf::kv& e, std::uint64_t i, std::size_t limit) {
    auto av = e.get<gguf::array_view>();
    if (!av || i >= av->size()) return {};
    if (e.element_type == gguf::value_type::string) {
        auto s = av->string_at(i);
        return s ? quoted(*s, limit) : std::string("?");
    }
    std::string text = "?";
    visit_fixed(e.element_type, [&](auto zero) {
        using T = decltype(zero);
        if (auto v = av->at<T>(i)) text = number_text(*v);
    });
    return text;
}

}  // namespace minfer::cli
