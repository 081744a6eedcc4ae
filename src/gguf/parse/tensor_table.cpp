// Parse stage 3 of 4, the tensor table: names, dims, types, shapes (rules::shape).
// (parser.hpp has the order of the stages and the one failure path.)
#include "parser.hpp"

#include "record_count.hpp"
#include "../shape_check.hpp"

namespace minfer::gguf {

bool parser::tensor_table() {
    const std::size_t n =
        detail::records_to_reserve(n_tensors_, [&] { return detail::count_tensor_records(cur_, n_tensors_); });
    view_.tensors_.reserve(n);
    view_.tensor_index_.reset(n);
    const bool ok = tensor_records();
    // A repeat found by the window itself is the first one in the file: the names still queued
    // after it are later and must not replace it.
    if (!ok && err_.code == errc::duplicate_tensor) return false;
    if (auto d = names_.flush(tensor_name_of())) return duplicate(*d, errc::duplicate_tensor, section::tensor_info);
    return ok;
}

bool parser::tensor_records() {
    for (std::uint64_t i = 0; i < n_tensors_; ++i) {
        err_.index = static_cast<std::int64_t>(i);
        tensor_info t{};
        t.info_offset = cur_.tell();
        if (!read_string(t.name, section::tensor_info, "tensor name")) return false;
        about_ = t.name;  // every later failure of this record is about this tensor
        if (t.name.empty() || t.name.size() > max_name_bytes)
            return fail(errc::bad_name_length, section::tensor_info, t.info_offset, max_name_bytes, t.name.size());
        if (const auto nul = t.name.find('\0'); nul != std::string_view::npos)
            return fail(errc::nul_in_name, section::tensor_info, t.info_offset + 8 + nul, 0, nul);
        if (auto d = names_.push(t.name, static_cast<std::uint32_t>(i), t.info_offset, tensor_name_of()))
            return duplicate(*d, errc::duplicate_tensor, section::tensor_info);
        const std::uint64_t dims_at = cur_.tell();
        if (!read(t.n_dims, section::tensor_info, "n_dims")) return false;
        if (t.n_dims > max_dims) return fail(errc::bad_n_dims, section::tensor_info, dims_at, max_dims, t.n_dims);
        std::array<std::int64_t, 4> ne{1, 1, 1, 1};
        for (std::uint32_t d = 0; d < t.n_dims; ++d)
            if (!read(ne[d], section::tensor_info, "tensor dimension")) return false;
        const std::uint64_t type_at = cur_.tell();
        std::uint32_t type_id = 0;
        if (!read(type_id, section::tensor_info, "tensor type")) return false;
        if (!read(t.offset, section::tensor_info, "tensor offset")) return false;

        shape_facts facts;
        if (const verdict v = rules::shape(type_id, std::span(ne.data(), t.n_dims), facts); !v)
            return bad_shape(v, type_id, facts, dims_at, type_at);
        t.type = static_cast<tensor_type>(type_id);
        t.ne = facts.ne;
        t.nb = facts.nb;
        t.n_elements = facts.n_elements;
        t.n_bytes = facts.n_bytes;
        view_.tensors_.push_back(t);
        about_ = {};
    }
    err_.index = -1;
    return true;
}

bool parser::bad_shape(const verdict& v, std::uint32_t type_id,
                                            const shape_facts& facts, std::uint64_t dims_at, std::uint64_t type_at) {
    const error se = detail::shape_error(v, type_id, facts);
    err_.shape = se.shape;
    err_.detail = se.detail;
    std::uint64_t at = dims_at + 4;  // ne[0]
    if (se.code == errc::bad_dim) at += 8 * se.expected;
    if (se.code == errc::bad_tensor_type || se.code == errc::removed_tensor_type) at = type_at;
    return fail(se.code, section::tensor_info, at, se.expected, se.found);
}

}  // namespace minfer::gguf
