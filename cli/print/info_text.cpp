// `minfer info` as text: the seed's startup lines, the metadata, the tensor table, a summary per tensor
// type and the totals. Every key, name and string goes through gguf::escape; columns are aligned by
// display width (common/display_width), not by bytes.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "../common/plural.hpp"
#include "../common/display_width.hpp"
#include "../common/exit_codes.hpp"
#include "../common/quote.hpp"
#include "../common/sizes.hpp"
#include "../common/value_visit.hpp"
#include "file_type.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"
#include "model_facts.hpp"
#include "printers.hpp"

namespace minfer::cli {
namespace {

constexpr std::size_t preview_items = 8;    // array items shown without --full
constexpr std::size_t preview_bytes = 60;   // string bytes shown without --full
constexpr std::size_t max_key_width = 40;   // alignment caps: longer cells just push the row
constexpr std::size_t max_type_width = 20;
constexpr std::size_t max_name_width = 48;

// A number written straight into the buffer (a --full dump of 10^7 items makes no string per item).
template <class T>
void put_number(out_buffer& out, T v) {
    if constexpr (std::is_same_v<T, bool>) {
        out.write(v ? "true" : "false");
    } else if constexpr (sizeof(T) == 1) {
        out.print("{}", static_cast<int>(v));
    } else {
        out.print("{}", v);
    }
}

std::string type_label(const gguf::kv& e) {
    if (!e.is_array()) return std::string(gguf::to_string(e.type));
    return fmt::format("[{} x {}]", gguf::to_string(e.element_type), e.count);
}

bool is_chat_template(std::string_view key) {
    constexpr std::string_view k = "tokenizer.chat_template";
    return key == k || (key.size() > k.size() && key.substr(0, k.size() + 1) == "tokenizer.chat_template.");
}

// What a person needs to read an id: the named file type, the token a special id stands for.
std::string annotation(const gguf::kv& e, const special_tokens& specials) {
    if (e.key == "general.file_type") {
        auto v = e.as_i64();
        // fmt rather than `" " + std::string`: GCC 12 at -O3 reports a false -Wrestrict on the latter.
        return v ? fmt::format(" {}", file_type_name(*v)) : std::string();
    }
    const special_token* t = specials.find(e.key);
    if (t == nullptr || !specials.has_vocab) return {};
    if (t->text) return fmt::format(" = {}", quoted(*t->text, preview_bytes));
    return fmt::format(" (not a token: the vocabulary has {})", specials.vocab_size);
}

std::string scalar_text(const gguf::kv& e, bool full) { return scalar_value_text(e, full ? 0 : preview_bytes); }

// The first `limit` items of an array, comma-separated.
std::string preview(const gguf::array_view& a) {
    std::string items;
    std::uint64_t i = 0;
    auto add = [&](const std::string& text) {
        if (i > 0) items += ", ";
        items += text;
        ++i;
    };
    if (a.element_type() == gguf::value_type::string) {
        for (std::string_view s : a.strings()) {
            if (i >= preview_items) break;
            add(quoted(s, preview_bytes));
        }
    } else {
        visit_fixed(a.element_type(), [&](auto tag) {
            using T = decltype(tag);
            while (i < preview_items && i < a.size()) {
                auto v = a.at<T>(i);
                add(v ? number_text<T>(*v) : std::string("?"));
            }
        });
    }
    if (a.size() > preview_items) items += ", …";
    return items;
}

// Every item, one per line, with its index.
void all_items(const gguf::array_view& a, out_buffer& out) {
    if (a.element_type() == gguf::value_type::string) {
        std::uint64_t i = 0;
        for (std::string_view s : a.strings()) out.print("      [{}] {}\n", i++, quoted(s));
        return;
    }
    visit_fixed(a.element_type(), [&](auto tag) {
        using T = decltype(tag);
        for (std::uint64_t i = 0; i < a.size(); ++i) {
            out.print("      [{}] ", i);
            auto v = a.at<T>(i);
            if (v) {
                put_number<T>(out, *v);
            } else {
                out.put('?');
            }
            out.put('\n');
        }
    });
}

// A chat template as the lines it holds: real newlines, every other control character escaped. A
// backslash is shown as itself (Jinja's '\n' stays readable); --key gives the exact bytes.
void template_block(std::string_view s, out_buffer& out) {
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t end = s.find('\n', start);
        if (end == std::string_view::npos) end = s.size();
        std::string_view line = s.substr(start, end - start);
        out.write("      | ");
        std::size_t p = 0;
        while (p <= line.size()) {
            std::size_t q = line.find('\\', p);
            if (q == std::string_view::npos) q = line.size();
            out.write(gguf::escape(line.substr(p, q - p), '\0'));
            if (q < line.size()) out.put('\\');
            p = q + 1;
        }
        out.put('\n');
        if (end == s.size()) break;
        start = end + 1;
    }
}

void print_metadata(const gguf::model& m, const info_options& opt, out_buffer& out) {
    const auto kvs = m.metadata().metadata();
    out.print("\nmetadata ({}):\n", kvs.size());
    if (kvs.empty()) {
        out.write("  (none)\n");
        return;
    }
    const special_tokens specials = resolve_special_tokens(m);
    std::vector<std::string> keys;
    keys.reserve(kvs.size());
    std::size_t key_w = 0, type_w = 0;
    for (const gguf::kv& e : kvs) {
        keys.push_back(gguf::escape(e.key));
        key_w = std::max(key_w, std::min(display_width(keys.back()), max_key_width));
        type_w = std::max(type_w, std::min(type_label(e).size(), max_type_width));
    }
    // One row: key, type, value; trailing padding is trimmed (a --full array's items follow on their own lines).
    auto row = [&](std::size_t k, const std::string& label, const std::string& value) {
        std::string line = "  " + pad_right(keys[k], key_w) + "  " + pad_right(label, type_w) + "  " + value;
        line.erase(line.find_last_not_of(' ') + 1);
        line += '\n';
        out.write(line);
    };
    for (std::size_t k = 0; k < kvs.size(); ++k) {
        const gguf::kv& e = kvs[k];
        const std::string label = type_label(e);
        if (!e.is_array()) {
            if (opt.full && e.type == gguf::value_type::string && is_chat_template(e.key)) {
                auto s = e.get<std::string_view>();
                if (s) {
                    row(k, label, fmt::format("({} bytes, as text below)", s->size()));
                    template_block(*s, out);
                    continue;
                }
            }
            row(k, label, scalar_text(e, opt.full) + annotation(e, specials));
            continue;
        }
        auto got = e.get<gguf::array_view>();
        if (!got) {
            row(k, label, "?");
        } else if (opt.no_arrays) {
            row(k, label, "");
        } else if (opt.full) {
            row(k, label, "");
            all_items(*got, out);
        } else {
            row(k, label, preview(*got));
        }
    }
}

std::string shape_text(const gguf::tensor_info& t) {
    std::string s = "[";
    for (std::uint32_t d = 0; d < t.n_dims && d < gguf::max_dims; ++d) {
        if (d > 0) s += ", ";
        s += fmt::format("{}", t.ne[d]);
    }
    s += "]";
    return s;
}

void print_tensors(const gguf::model& m, out_buffer& out) {
    const auto tensors = m.tensors();
    const auto parts = m.parts();
    const bool split = parts.size() > 1;
    out.print("\ntensors ({}):\n", tensors.size());
    if (tensors.empty()) {
        out.write("  (none)\n");
        return;
    }
    struct row {
        std::string name, shape;
        std::uint64_t absolute;
    };
    std::vector<row> rows;
    rows.reserve(tensors.size());
    std::size_t name_w = 4, type_w = 4, shape_w = 5, bytes_w = 5, off_w = 6;
    for (const gguf::tensor_ref& t : tensors) {
        row r{gguf::escape(t.info->name), shape_text(*t.info), parts[t.part].view.data_offset() + t.info->offset};
        name_w = std::max(name_w, std::min(display_width(r.name), max_name_width));
        type_w = std::max(type_w, gguf::to_string(t.info->type).size());
        shape_w = std::max(shape_w, r.shape.size());
        bytes_w = std::max(bytes_w, fmt::formatted_size("{}", t.info->n_bytes));
        off_w = std::max(off_w, fmt::formatted_size("{}", r.absolute));
        rows.push_back(std::move(r));
    }
    out.print("  {}  {:<{}}  {:<{}}  {:>{}}  {:>{}}", pad_right("name", name_w), "type", type_w, "shape", shape_w,
              "bytes", bytes_w, "offset", off_w);
    out.write(split ? "  part\n" : "\n");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const gguf::tensor_ref& t = tensors[i];
        out.print("  {}  {:<{}}  {:<{}}  {:>{}}  {:>{}}", pad_right(rows[i].name, name_w),
                  gguf::to_string(t.info->type), type_w, rows[i].shape, shape_w, t.info->n_bytes, bytes_w,
                  rows[i].absolute, off_w);
        if (split) {
            out.print("  {:>4}\n", t.part + 1);
        } else {
            out.write("\n");
        }
    }
}

std::string bpw_text(const totals& t) {
    const double bpw = t.bits_per_weight();
    return bpw < 0 ? std::string("n/a") : fmt::format("{:.2f}", bpw);
}

void print_type_summary(const gguf::model& m, out_buffer& out) {
    const std::vector<type_totals> types = gather_type_totals(m);
    if (types.empty()) return;
    out.write("\ntensor types:\n");
    std::size_t type_w = 4, bytes_w = 5, mib_w = 3;
    for (const type_totals& x : types) {
        type_w = std::max(type_w, gguf::to_string(x.type).size());
        bytes_w = std::max(bytes_w, fmt::formatted_size("{}", x.t.n_bytes));
        mib_w = std::max(mib_w, mib_text(x.t.n_bytes).size() - 4);
    }
    out.print("  {:<{}}  {:>7}  {:>{}}  {:>{}}  {:>11}\n", "type", type_w, "tensors", "bytes", bytes_w, "MiB", mib_w,
              "bits/weight");
    for (const type_totals& x : types) {
        std::string mib = mib_text(x.t.n_bytes);
        mib.resize(mib.size() - 4);  // the unit is in the heading
        out.print("  {:<{}}  {:>7}  {:>{}}  {:>{}}  {:>11}\n", gguf::to_string(x.type), type_w, x.t.n_tensors,
                  x.t.n_bytes, bytes_w, mib, mib_w, bpw_text(x.t));
    }
}

}  // namespace

int print_text(const gguf::model& m, const info_options& opt, out_buffer& out) {
    const auto parts = m.parts();
    const gguf::file_view& first = m.metadata();
    const std::uint64_t n = m.file_bytes();
    const totals t = gather_totals(m);

    out.print("File: {} bytes ({}) in {}\n", n, mib_text(n), plural(parts.size(), "part", "parts"));
    out.print("GGUF: {} KV, {}\n", first.metadata().size(), plural(t.n_tensors, "tensor", "tensors"));
    out.print("version {}, alignment {}, data offset {}\n", first.version(), first.alignment(), first.data_offset());
    if (parts.size() > 1) {
        out.write("\nparts:\n");
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const gguf::model_part& p = parts[i];
            out.print("  {}  {}: {} bytes, version {}, alignment {}, data offset {}, {} KV, {}\n", i + 1,
                      gguf::escape(p.path.string()), p.view.file_size(), p.view.version(), p.view.alignment(),
                      p.view.data_offset(), p.view.metadata().size(), plural(p.view.tensors().size(), "tensor", "tensors"));
        }
    }
    // Bytes after the data section: llama.cpp ignores them, but a user checking a download wants to
    // know (an appended second file, a botched concatenation).
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::uint64_t extra = parts[i].trailing_bytes();
        if (extra == 0) continue;
        if (parts.size() > 1) {
            out.print("note: part {} has {} bytes after its data section (ignored)\n", i + 1, extra);
        } else {
            out.print("note: {} bytes after the data section (ignored)\n", extra);
        }
    }

    print_metadata(m, opt, out);
    if (!opt.no_tensors) print_tensors(m, out);
    print_type_summary(m, out);

    out.print("\ntotal: {}, {}, {} bytes ({}), ", plural(t.n_tensors, "tensor", "tensors"),
              plural(t.n_parameters, "parameter", "parameters"), t.n_bytes, mib_text(t.n_bytes));
    const std::string bpw = bpw_text(t);
    if (bpw == "n/a") {
        out.write("bits per weight n/a\n");
    } else {
        out.print("{} bits per weight\n", bpw);
    }
    return exit_ok;  // info_run reports a failed write
}

}  // namespace minfer::cli
