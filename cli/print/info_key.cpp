// `minfer info --key K`: one value, raw, for scripts: a string as its exact bytes (no newline added,
// on a terminal too: `info --key tokenizer.chat_template > t` then `edit --chat-template-file t` must
// give back the same template, not one a byte longer each round), a number in the same text as the
// table and a newline, an array one item per line. Nothing is escaped: the caller asked for the bytes.
#include <cstdio>
#include <type_traits>

#include <fmt/format.h>

#include "../common/exit_codes.hpp"
#include "../common/quote.hpp"
#include "../common/value_visit.hpp"
#include "minfer/gguf/text.hpp"
#include "printers.hpp"

namespace minfer::cli {

int print_key(const gguf::model& m, const info_options& opt, out_buffer& out) {
    const gguf::kv* e = m.find(opt.key);
    if (e == nullptr) {
        fmt::print(stderr, "Error: no key '{}' in {}\n", gguf::escape(opt.key), gguf::escape(opt.path));
        return exit_parse;
    }
    if (e->type == gguf::value_type::string) {
        auto s = e->get<std::string_view>();
        if (s) out.write(*s);
        return exit_ok;
    }
    if (!e->is_array()) {
        visit_fixed(e->type, [&](auto tag) {
            using T = decltype(tag);
            auto v = e->get<T>();
            if (v) out.write(number_text<T>(*v));
        });
        out.put('\n');
        return exit_ok;
    }
    auto a = e->get<gguf::array_view>();
    if (!a) return exit_ok;
    if (a->element_type() == gguf::value_type::string) {
        for (std::string_view s : a->strings()) {
            out.write(s);
            out.put('\n');
        }
        return exit_ok;
    }
    visit_fixed(a->element_type(), [&](auto tag) {
        using T = decltype(tag);
        for (std::uint64_t i = 0; i < a->size(); ++i) {
            auto v = a->at<T>(i);
            if (v) out.write(number_text<T>(*v));
            out.put('\n');
        }
    });
    return exit_ok;
}

}  // namespace minfer::cli
