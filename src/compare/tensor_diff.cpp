#include "minfer/compare/tensor_diff.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "minfer/gguf/page_advice.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/quant/value_stream.hpp"

namespace minfer::compare {
namespace {

// Values converted per step: 4 MiB of f32 per side; every block size divides it, so both chunks
// are whole blocks of their own types.
constexpr std::size_t chunk_values = std::size_t{1} << 20;

bool same_shape(const gguf::tensor_info& a, const gguf::tensor_info& b) noexcept {
    return a.n_dims == b.n_dims && a.ne == b.ne;
}

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) noexcept {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// Both tensors' values in step, chunk by chunk (they have the same element count: same ne).
gguf::result<value_compare> compare_values(const gguf::model& ma, const gguf::tensor_ref& ta, const gguf::model& mb,
                                           const gguf::tensor_ref& tb, const compare_progress& progress) {
    value_compare c;
    const auto bytes_a = ma.tensor_data(ta);
    const auto bytes_b = mb.tensor_data(tb);
    const std::uint64_t n = ta.info->n_elements;
    std::vector<float> va, vb;
    // A mapped side is read ahead and each chunk's pages given back once converted (a side read
    // into memory is left alone): the resident set is the chunks, not the tensors.
    const bool mapped_a = ma.parts()[ta.part].file.mapped(), mapped_b = mb.parts()[tb.part].file.mapped();
    if (mapped_a) gguf::advise_sequential(bytes_a);
    if (mapped_b) gguf::advise_sequential(bytes_b);
    for (std::uint64_t first = 0; first < n;) {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n - first, chunk_values));
        va.resize(k);
        vb.resize(k);
        // Each chunk converted on every hardware thread (the persistent pool of dequantize_parallel).
        if (auto r = quant::dequantize_range(ta.info->type, bytes_a, first, va, 0); !r) return gguf::unexpected(r.error());
        if (auto r = quant::dequantize_range(tb.info->type, bytes_b, first, vb, 0); !r) return gguf::unexpected(r.error());
        if (mapped_a) quant::release_value_pages(ta.info->type, bytes_a, first, k);
        if (mapped_b) quant::release_value_pages(tb.info->type, bytes_b, first, k);
        c.add(va, vb);
        first += k;
        if (progress) progress(ta.info->name, first * 4, n * 4);
    }
    return c;
}


}  // namespace

gguf::result<std::vector<tensor_difference>> diff_tensors(const gguf::model& ma, const gguf::model& mb, bool values,
                                                          tensor_counts& n, const compare_progress& progress) {
    // Two head-only models would compare two empty spans and call different tensors identical.
    if (auto whole = ma.require_complete(); !whole) return gguf::unexpected(whole.error());
    if (auto whole = mb.require_complete(); !whole) return gguf::unexpected(whole.error());
    using k = tensor_difference::kind;
    std::vector<tensor_difference> out;
    for (const gguf::tensor_ref& ta : ma.tensors()) {
        const gguf::tensor_ref* tb = mb.find_tensor(ta.info->name);
        if (tb == nullptr) {
            out.emplace_back(k::only_in_a, &ta, nullptr);
            ++n.only_a;
            continue;
        }
        tensor_difference d(k::changed, &ta, tb);
        d.type_changed = ta.info->type != tb->info->type;
        d.shape_changed = !same_shape(*ta.info, *tb->info);
        if (!d.type_changed && !d.shape_changed) {
            if (same_bytes(ma.tensor_data(ta), mb.tensor_data(*tb))) {
                ++n.identical;
                continue;
            }
            d.what = k::data_differs;
            ++n.data_differs;
        } else {
            ++n.changed;
        }
        // Values compare when ggml would call the shapes equal: the same ne.
        if (values && ta.info->ne == tb->info->ne) {
            if (!quant::can_dequantize(ta.info->type)) {
                d.values_error = quant::type_not_convertible_error(*ta.info);
            } else if (!quant::can_dequantize(tb->info->type)) {
                d.values_error = quant::type_not_convertible_error(*tb->info);
            } else if (auto c = compare_values(ma, ta, mb, *tb, progress)) {
                d.values = *c;
            } else {
                d.values_error = c.error();
            }
        }
        out.push_back(std::move(d));
    }
    for (const gguf::tensor_ref& tb : mb.tensors())
        if (ma.find_tensor(tb.info->name) == nullptr) {
            out.emplace_back(k::only_in_b, nullptr, &tb);
            ++n.only_b;
        }
    return out;
}

}  // namespace minfer::compare
