// `minfer info` as text: the seed's startup lines, the metadata, the tensor table and totals.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "info.hpp"
#include "minfer/gguf/error.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::cli {
namespace {

constexpr std::size_t preview_items = 8;    // array items shown without --full
constexpr std::size_t preview_bytes = 60;   // string bytes shown without --full
constexpr std::size_t max_key_width = 40;   // alignment caps: longer cells just push the row
constexpr std::size_t max_type_width = 20;
constexpr std::size_t max_name_width = 48;

template <class T>
std::string number_text(T v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v ? "true" : "false";
    } else if constexpr (std::is_floating_point_v<T>) {
        return float_text(v);
    } else if constexpr (sizeof(T) == 1) {
        return fmt::format("{}", static_cast<int>(v));  // not as a character
    } else {
        return fmt::format("{}", v);
    }
}

std::string type_label(const gguf::kv& e) {
    if (!e.is_array()) return std::string(gguf::to_string(e.type));
    return fmt::format("[{} x {}]", gguf::to_string(e.element_type), e.count);
}

std::string scalar_text(const gguf::kv& e, bool full) {
    if (e.type == gguf::value_type::string) {
        auto s = e.get<std::string_view>();
        return s ? quoted(*s, full ? 0 : preview_bytes) : std::string("?");
    }
    std::string text = "?";
    visit_fixed(e.type, [&](auto tag) {
        using T = decltype(tag);
        auto v = e.get<T>();
        if (v) text = number_text<T>(*v);
    });
    return text;
}

// Call f(index, text) for the first `limit` items of an array.
template <class F>
void for_items(const gguf::array_view& a, std::uint64_t limit, std::size_t string_limit, F&& f) {
    if (a.element_type() == gguf::value_type::string) {
        std::uint64_t i = 0;
        for (std::string_view s : a.strings()) {
            if (i >= limit) break;
            f(i, quoted(s, string_limit));
            ++i;
        }
        return;
    }
    visit_fixed(a.element_type(), [&](auto tag) {
        using T = decltype(tag);
        for (std::uint64_t i = 0; i < limit && i < a.size(); ++i) {
            auto v = a.at<T>(i);
            f(i, v ? number_text<T>(*v) : std::string("?"));
        }
    });
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

void print_metadata(const gguf::model& m, const info_options& opt, out_buffer& out) {
    const auto kvs = m.metadata().metadata();
    out.print("\nmetadata ({}):\n", kvs.size());
    if (kvs.empty()) {
        out.write("  (none)\n");
        return;
    }
    std::vector<std::string> keys;
    keys.reserve(kvs.size());
    std::size_t key_w = 0, type_w = 0;
    for (const gguf::kv& e : kvs) {
        keys.push_back(gguf::escape(e.key));
        key_w = std::max(key_w, std::min(keys.back().size(), max_key_width));
        type_w = std::max(type_w, std::min(type_label(e).size(), max_type_width));
    }
    // One row: key, type, value; trailing padding is trimmed (a --full array's items follow on their own lines).
    auto row = [&](std::size_t k, const std::string& label, const std::string& value) {
        std::string line = fmt::format("  {:<{}}  {:<{}}  {}", keys[k], key_w, label, type_w, value);
        line.erase(line.find_last_not_of(' ') + 1);
        line += '\n';
        out.write(line);
    };
    for (std::size_t k = 0; k < kvs.size(); ++k) {
        const gguf::kv& e = kvs[k];
        const std::string label = type_label(e);
        if (!e.is_array()) {
            row(k, label, scalar_text(e, opt.full));
            continue;
        }
        auto got = e.get<gguf::array_view>();
        if (!got) {
            row(k, label, "?");
            continue;
        }
        const gguf::array_view a = *got;
        if (opt.full) {
            row(k, label, "");
            for_items(a, a.size(), 0, [&](std::uint64_t i, const std::string& text) {
                out.print("      [{}] {}\n", i, text);
            });
            continue;
        }
        std::string items;
        for_items(a, preview_items, preview_bytes, [&](std::uint64_t i, const std::string& text) {
            if (i > 0) items += ", ";
            items += text;
        });
        if (a.size() > preview_items) items += ", …";
        row(k, label, items);
    }
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
        name_w = std::max(name_w, std::min(r.name.size(), max_name_width));
        type_w = std::max(type_w, gguf::to_string(t.info->type).size());
        shape_w = std::max(shape_w, r.shape.size());
        bytes_w = std::max(bytes_w, fmt::formatted_size("{}", t.info->n_bytes));
        off_w = std::max(off_w, fmt::formatted_size("{}", r.absolute));
        rows.push_back(std::move(r));
    }
    out.print("  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}", "name", name_w, "type", type_w, "shape", shape_w, "bytes",
              bytes_w, "offset", off_w);
    out.write(split ? "  part\n" : "\n");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const gguf::tensor_ref& t = tensors[i];
        out.print("  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}", rows[i].name, name_w, gguf::to_string(t.info->type),
                  type_w, rows[i].shape, shape_w, t.info->n_bytes, bytes_w, rows[i].absolute, off_w);
        if (split) {
            out.print("  {:>4}\n", t.part + 1);
        } else {
            out.write("\n");
        }
    }
}

}  // namespace

int print_text(const gguf::model& m, const info_options& opt, out_buffer& out) {
    const auto parts = m.parts();
    const gguf::file_view& first = m.metadata();
    const std::uint64_t n = m.file_bytes();
    const totals t = gather_totals(m);

    out.print("File: {} bytes ({:.1f} MB) in {} part(s)\n", n, static_cast<double>(n) / 1048576.0, parts.size());
    out.print("GGUF: {} KV, {} tensors\n", first.metadata().size(), t.n_tensors);
    out.print("version {}, alignment {}, data offset {}\n", first.version(), first.alignment(), first.data_offset());
    if (parts.size() > 1) {
        out.write("\nparts:\n");
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const gguf::model_part& p = parts[i];
            out.print("  {}  {}: {} bytes, version {}, alignment {}, data offset {}, {} KV, {} tensors\n", i + 1,
                      gguf::escape(p.path.string()), p.file.size(), p.view.version(), p.view.alignment(),
                      p.view.data_offset(), p.view.metadata().size(), p.view.tensors().size());
        }
    }

    print_metadata(m, opt, out);
    print_tensors(m, out);

    const double bpw = t.bits_per_weight();
    out.print("\ntotal: {} tensors, {} parameters, {} bytes ({:.1f} MB), ", t.n_tensors, t.n_parameters, t.n_bytes,
              static_cast<double>(t.n_bytes) / 1048576.0);
    if (bpw < 0) {
        out.write("bits per weight n/a\n");
    } else {
        out.print("{:.2f} bits per weight\n", bpw);
    }
    return exit_ok;  // run_info reports a failed write
}

}  // namespace minfer::cli
