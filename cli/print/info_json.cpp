// `minfer info --json`: the same facts as the text output as one JSON document, streamed through
// json_writer into the 1 MiB output buffer, so memory does not grow with the size of arrays or tables.
//
// JSON text is UTF-8, file strings are bytes. A string that is valid UTF-8 is written as itself. One
// that is not is written as json_text() (\xNN for each invalid byte, backslashes doubled) and flagged,
// with its exact bytes in hex beside it: field F gets F_hex and F_invalid_utf8 (for metadata values
// the flag keeps its first name, invalid_utf8). Different byte strings therefore never look the same.
#include <cstdint>
#include <string>
#include <type_traits>
#include <unordered_set>

#include <fmt/format.h>

#include "../common/exit_codes.hpp"
#include "../common/value_visit.hpp"
#include "json_writer.hpp"
#include "minfer/gguf/types.hpp"
#include "model_facts.hpp"
#include "printers.hpp"

namespace minfer::cli {
namespace {

template <class T>
void put_number(json_writer& w, T v) {
    if constexpr (std::is_same_v<T, bool>) {
        w.boolean(v);
    } else if constexpr (std::is_floating_point_v<T>) {
        w.number(v);
    } else if constexpr (std::is_signed_v<T>) {
        w.number(static_cast<std::int64_t>(v));
    } else {
        w.number(static_cast<std::uint64_t>(v));
    }
}

void string_array(json_writer& w, const gguf::array_view& a) {
    bool any_invalid = false;
    w.key("items");
    w.begin_array();
    for (std::string_view s : a.strings()) {
        if (valid_utf8(s)) {
            w.string(s);
        } else {
            any_invalid = true;
            w.string(json_text(s));
        }
    }
    w.end_array();
    if (!any_invalid) return;
    // A second walk instead of remembering indices: memory stays constant whatever the count.
    w.key("invalid_utf8_items");
    w.begin_array(true);
    std::uint64_t i = 0;
    for (std::string_view s : a.strings()) {
        if (!valid_utf8(s)) w.number(i);
        ++i;
    }
    w.end_array();
    w.key("invalid_utf8_items_hex");
    w.begin_array(true);
    for (std::string_view s : a.strings())
        if (!valid_utf8(s)) w.string(hex_bytes(s));
    w.end_array();
}

void value_members(json_writer& w, const gguf::kv& e, const info_options& opt) {
    w.key("type");
    w.string(gguf::to_string(e.type));
    if (e.type == gguf::value_type::string) {
        auto s = e.get<std::string_view>();
        string_member(w, "value", s ? *s : std::string_view(), "invalid_utf8");
    } else if (e.is_array()) {
        w.key("element_type");
        w.string(gguf::to_string(e.element_type));
        w.key("count");
        w.number(e.count);
        auto got = e.get<gguf::array_view>();
        if (!opt.no_arrays) {
            if (got && got->element_type() == gguf::value_type::string) {
                string_array(w, *got);
            } else {
                w.key("items");
                w.begin_array(true);
                if (got) {
                    const gguf::array_view a = *got;
                    visit_fixed(a.element_type(), [&](auto tag) {
                        using T = decltype(tag);
                        for (std::uint64_t i = 0; i < a.size(); ++i) {
                            auto x = a.at<T>(i);
                            if (x) {
                                put_number<T>(w, *x);
                            } else {
                                w.null();
                            }
                        }
                    });
                }
                w.end_array();
            }
        }
    } else {
        visit_fixed(e.type, [&](auto tag) {
            using T = decltype(tag);
            auto x = e.get<T>();
            w.key("value");
            if (x) {
                put_number<T>(w, *x);
            } else {
                w.null();
            }
        });
    }
    w.key("offset");
    w.number(e.offset);
}

// The member name of a metadata entry. A valid UTF-8 key is its own name (keys are unique in a file).
// An invalid key is named by its json_text, which can equal a valid key of the same file ("a\\xFF"
// literally); then "#<index>" is appended until the name is free. Only invalid keys are remembered.
std::string member_name(const gguf::model& m, const gguf::kv& e, std::size_t index,
                        std::unordered_set<std::string>& taken) {
    if (valid_utf8(e.key)) return std::string(e.key);
    std::string name = json_text(e.key);
    while (m.find(name) != nullptr || taken.count(name) != 0) name += fmt::format("#{}", index);
    taken.insert(name);
    return name;
}

void write_document(const gguf::model& m, const info_options& opt, json_writer& w) {
    const auto parts = m.parts();
    w.begin_object();
    string_member(w, "file", opt.path);
    w.key("file_bytes");
    w.number(m.file_bytes());
    w.key("n_parts");
    w.number(static_cast<std::uint64_t>(parts.size()));

    w.key("parts");
    w.begin_array();
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const gguf::model_part& p = parts[i];
        w.begin_object(true);
        w.key("part");
        w.number(static_cast<std::uint64_t>(i + 1));
        string_member(w, "path", p.path.string());
        w.key("size");
        w.number(p.view.file_size());
        w.key("version");
        w.number(static_cast<std::uint64_t>(p.view.version()));
        w.key("alignment");
        w.number(static_cast<std::uint64_t>(p.view.alignment()));
        w.key("data_offset");
        w.number(p.view.data_offset());
        w.key("data_size");
        w.number(p.view.data_size());
        w.key("trailing_bytes");
        w.number(p.trailing_bytes());
        w.key("n_kv");
        w.number(static_cast<std::uint64_t>(p.view.metadata().size()));
        w.key("n_tensors");
        w.number(static_cast<std::uint64_t>(p.view.tensors().size()));
        w.end_object();
    }
    w.end_array();

    w.key("metadata");
    w.begin_object();
    std::unordered_set<std::string> taken;
    const auto kvs = m.metadata().metadata();
    for (std::size_t i = 0; i < kvs.size(); ++i) {
        const gguf::kv& e = kvs[i];
        w.key(member_name(m, e, i, taken));
        w.begin_object(!e.is_array() || opt.no_arrays);
        if (!valid_utf8(e.key)) {
            w.key("key_hex");
            w.string(hex_bytes(e.key));
            w.key("key_invalid_utf8");
            w.boolean(true);
        }
        value_members(w, e, opt);
        w.end_object();
    }
    w.end_object();

    if (!opt.no_tensors) {
        w.key("tensors");
        w.begin_array();
        for (const gguf::tensor_ref& r : m.tensors()) {
            const gguf::tensor_info& t = *r.info;
            w.begin_object(true);
            string_member(w, "name", t.name);
            w.key("type");
            w.string(gguf::to_string(t.type));
            w.key("type_id");
            w.number(static_cast<std::uint64_t>(t.type));
            w.key("n_dims");
            w.number(static_cast<std::uint64_t>(t.n_dims));
            w.key("shape");
            w.begin_array(true);
            for (std::uint32_t d = 0; d < t.n_dims && d < gguf::max_dims; ++d) w.number(t.ne[d]);
            w.end_array();
            w.key("nb");
            w.begin_array(true);
            for (std::uint64_t s : t.nb) w.number(s);
            w.end_array();
            w.key("n_elements");
            w.number(t.n_elements);
            w.key("n_bytes");
            w.number(t.n_bytes);
            w.key("offset");
            w.number(t.offset);
            w.key("absolute_offset");
            w.number(parts[r.part].view.data_offset() + t.offset);
            w.key("part");
            w.number(static_cast<std::uint64_t>(r.part + 1));
            w.end_object();
        }
        w.end_array();
    }

    const totals tt = gather_totals(m);
    w.key("totals");
    w.begin_object(true);
    w.key("n_tensors");
    w.number(tt.n_tensors);
    w.key("n_parameters");
    w.number(tt.n_parameters);
    w.key("n_bytes");
    w.number(tt.n_bytes);
    w.key("bits_per_weight");
    const double bpw = tt.bits_per_weight();
    if (bpw < 0) {
        w.null();
    } else {
        w.number(bpw);
    }
    w.end_object();
    w.end_object();
    w.finish();
}

}  // namespace

int print_json(const gguf::model& m, const info_options& opt, out_buffer& out) {
    json_writer w(out);
    write_document(m, opt, w);
    return exit_ok;  // info_run reports a failed write, and out of memory
}

}  // namespace minfer::cli
