// `minfer info --json`: the same facts as the text output, as one JSON document with every array item.
// JSON strings must be UTF-8: valid text is kept byte for byte, each invalid byte becomes the text \xNN
// (json_string), so dump() never meets invalid UTF-8.
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "info.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::cli {
namespace {

using json = nlohmann::ordered_json;

json float_json(double v, const std::string& shortest) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    // The shortest text that reads back as the value, parsed as a double: a float 1e-5 prints as 1e-05
    // and not as 9.999999747378752e-06.
    return std::strtod(shortest.c_str(), nullptr);
}

template <class T>
json number_json(T v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v;
    } else if constexpr (std::is_floating_point_v<T>) {
        return float_json(static_cast<double>(v), float_text(v));
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<std::int64_t>(v);
    } else {
        return static_cast<std::uint64_t>(v);
    }
}

json value_json(const gguf::kv& e) {
    json v = json::object();
    v["type"] = std::string(gguf::to_string(e.type));
    if (e.type == gguf::value_type::string) {
        auto s = e.get<std::string_view>();
        bool changed = false;
        v["value"] = s ? json_string(*s, &changed) : std::string();
        if (changed) v["invalid_utf8"] = true;
    } else if (e.is_array()) {
        v["element_type"] = std::string(gguf::to_string(e.element_type));
        v["count"] = e.count;
        json items = json::array();
        auto got = e.get<gguf::array_view>();
        if (got) {
            const gguf::array_view a = *got;
            auto& list = items.get_ref<json::array_t&>();
            list.reserve(static_cast<std::size_t>(a.size()));
            if (a.element_type() == gguf::value_type::string) {
                json bad = json::array();
                std::uint64_t i = 0;
                for (std::string_view s : a.strings()) {
                    bool changed = false;
                    list.emplace_back(json_string(s, &changed));
                    if (changed) bad.push_back(i);
                    ++i;
                }
                v["items"] = std::move(items);
                if (!bad.empty()) v["invalid_utf8_items"] = std::move(bad);
            } else {
                visit_fixed(a.element_type(), [&](auto tag) {
                    using T = decltype(tag);
                    for (std::uint64_t i = 0; i < a.size(); ++i) {
                        auto x = a.at<T>(i);
                        list.push_back(x ? number_json<T>(*x) : json());
                    }
                });
                v["items"] = std::move(items);
            }
        } else {
            v["items"] = std::move(items);
        }
    } else {
        visit_fixed(e.type, [&](auto tag) {
            using T = decltype(tag);
            auto x = e.get<T>();
            v["value"] = x ? number_json<T>(*x) : json();
        });
    }
    v["offset"] = e.offset;
    return v;
}

json build(const gguf::model& m, const info_options& opt) {
    const auto parts = m.parts();
    json doc = json::object();
    doc["file"] = json_string(opt.path);
    doc["file_bytes"] = m.file_bytes();
    doc["n_parts"] = parts.size();

    json plist = json::array();
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const gguf::model_part& p = parts[i];
        json j = json::object();
        j["part"] = i + 1;
        j["path"] = json_string(p.path.string());
        j["size"] = p.file.size();
        j["version"] = p.view.version();
        j["alignment"] = p.view.alignment();
        j["data_offset"] = p.view.data_offset();
        j["data_size"] = p.view.data_size();
        j["n_kv"] = p.view.metadata().size();
        j["n_tensors"] = p.view.tensors().size();
        plist.push_back(std::move(j));
    }
    doc["parts"] = std::move(plist);

    // Keys are unique in the file; pushing onto ordered_map's vector keeps file order in O(n). Two
    // distinct raw keys can only collide after json_string (invalid bytes vs a literal "\xNN"): the later
    // one gets "#<index>" appended.
    json meta = json::object();
    auto& map = meta.get_ref<json::object_t&>();
    const auto kvs = m.metadata().metadata();
    map.reserve(kvs.size());
    std::unordered_set<std::string> seen;
    seen.reserve(kvs.size());
    for (std::size_t i = 0; i < kvs.size(); ++i) {
        std::string key = json_string(kvs[i].key);
        if (!seen.insert(key).second) {
            key += fmt::format("#{}", i);
            seen.insert(key);
        }
        map.push_back({std::move(key), value_json(kvs[i])});
    }
    doc["metadata"] = std::move(meta);

    json tlist = json::array();
    tlist.get_ref<json::array_t&>().reserve(m.tensors().size());
    for (const gguf::tensor_ref& r : m.tensors()) {
        const gguf::tensor_info& t = *r.info;
        json j = json::object();
        j["name"] = json_string(t.name);
        j["type"] = std::string(gguf::to_string(t.type));
        j["type_id"] = static_cast<std::uint32_t>(t.type);
        j["n_dims"] = t.n_dims;
        json shape = json::array();
        for (std::uint32_t d = 0; d < t.n_dims && d < gguf::max_dims; ++d) shape.push_back(t.ne[d]);
        j["shape"] = std::move(shape);
        json nb = json::array();
        for (std::uint64_t s : t.nb) nb.push_back(s);
        j["nb"] = std::move(nb);
        j["n_elements"] = t.n_elements;
        j["n_bytes"] = t.n_bytes;
        j["offset"] = t.offset;
        j["absolute_offset"] = parts[r.part].view.data_offset() + t.offset;
        j["part"] = r.part + 1;
        tlist.push_back(std::move(j));
    }
    doc["tensors"] = std::move(tlist);

    const totals tt = gather_totals(m);
    json tot = json::object();
    tot["n_tensors"] = tt.n_tensors;
    tot["n_parameters"] = tt.n_parameters;
    tot["n_bytes"] = tt.n_bytes;
    const double bpw = tt.bits_per_weight();
    tot["bits_per_weight"] = bpw < 0 ? json() : json(bpw);
    doc["totals"] = std::move(tot);
    return doc;
}

}  // namespace

int print_json(const gguf::model& m, const info_options& opt, out_buffer& out) {
    try {
        const json doc = build(m, opt);
        // Every string was made valid UTF-8 above; `replace` is a second line of defence so dump never throws.
        const std::string text = doc.dump(2, ' ', false, json::error_handler_t::replace);
        out.write(text);
        out.write("\n");
    } catch (const std::bad_alloc&) {
        out.flush();
        fmt::print(stderr, "Error: out of memory while building the JSON document\n");
        return exit_io;
    } catch (const std::exception& e) {
        out.flush();
        fmt::print(stderr, "Error: cannot build the JSON document: {}\n", e.what());
        return exit_io;
    }
    return exit_ok;  // run_info reports a failed write
}

}  // namespace minfer::cli
