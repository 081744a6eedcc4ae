// Parse → write → parse. Any file the loader accepts must be rewritable by the writer (metadata
// copied record by record, tensors borrowed from the parsed bytes), and the rewrite must read back
// with the same metadata (keys, types, counts, payload bytes), the same tensor table and the same
// tensor bytes, at the layout the writer's plan announced. This ties the writer's rules to the
// parser's: a rule one of them has and the other lacks shows up as a crash here.
#include <algorithm>
#include <cstring>
#include <vector>

#include "fuzz_common.hpp"
#include "minfer/gguf_write/writer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace minfer;
    using fuzz::require;
    auto in = gguf::file_view::parse(std::as_bytes(std::span(data, size)));
    if (!in) return 0;

    gguf::writer w;
    for (const gguf::kv& e : in->metadata()) w.set(e);
    for (const gguf::tensor_info& t : in->tensors())
        w.add_tensor(t.name, t.type, std::span<const std::int64_t>(t.ne.data(), t.n_dims),
                     gguf::tensor_source::borrow(in->tensor_data(t)));
    auto bytes = w.to_bytes();
    if (!bytes && bytes.error().code == gguf::errc::out_of_memory) return 0;
    require(bytes.has_value());
    auto plan = w.make_plan();
    require(plan.has_value() && plan->file_size() == bytes->size());

    auto out = gguf::file_view::parse(*bytes);
    require(out.has_value());
    require(out->alignment() == in->alignment());
    require(out->data_offset() == in->data_offset() && out->data_offset() == plan->data_offset());
    require(out->data_size() == in->data_size());

    const auto a = in->metadata(), b = out->metadata();
    require(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        require(a[i].key == b[i].key && a[i].type == b[i].type && a[i].element_type == b[i].element_type);
        require(a[i].count == b[i].count && a[i].offset == b[i].offset);
        require(std::equal(a[i].payload.begin(), a[i].payload.end(), b[i].payload.begin(), b[i].payload.end()));
    }
    const auto s = in->tensors(), t = out->tensors();
    require(s.size() == t.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        require(s[i].name == t[i].name && s[i].type == t[i].type && s[i].n_dims == t[i].n_dims);
        require(s[i].ne == t[i].ne && s[i].nb == t[i].nb && s[i].offset == t[i].offset);
        require(s[i].n_elements == t[i].n_elements && s[i].n_bytes == t[i].n_bytes);
        require(s[i].info_offset == t[i].info_offset && plan->tensors()[i].offset == t[i].offset);
        const auto x = in->tensor_data(s[i]), y = out->tensor_data(t[i]);
        require(std::equal(x.begin(), x.end(), y.begin(), y.end()));
    }
    fuzz::consume(fuzz::touch_all(*out));
    return 0;
}
