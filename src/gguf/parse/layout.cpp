// Stage 4, the layout of the data section, proven from the table alone (the data is never read) of the parse (see parser.hpp for the order and the failure path).
#include "parser.hpp"

#include <algorithm>

namespace minfer::gguf {

bool parser::layout() {
    const std::uint64_t align = view_.alignment_;
    const std::uint64_t end_of_table = cur_.tell();
    // A file without tensors has no data section: it may end right after its table.
    view_.data_offset_ = n_tensors_ > 0 ? pad_to(end_of_table, align) : end_of_table;
    std::uint64_t expected = 0;  // the running sum of padded sizes
    for (std::size_t i = 0; i < view_.tensors_.size(); ++i) {
        const tensor_info& t = view_.tensors_[i];
        err_.index = static_cast<std::int64_t>(i);
        about_ = t.name;
        const std::uint64_t offset_field = t.info_offset + 8 + t.name.size() + 4 + 8ull * t.n_dims + 4;
        if (t.offset != expected)
            return fail(errc::offset_mismatch, section::tensor_info, offset_field, expected, t.offset);
        // (the builtins store the wrapped sum on overflow: keep `expected` intact for the report)
        std::uint64_t padded = 0, next = 0;
        if (__builtin_add_overflow(t.n_bytes, align - 1, &padded) ||
            __builtin_add_overflow(expected, padded & ~(align - 1), &next))
            return fail(errc::data_size_overflow, section::tensor_info, offset_field, expected, t.n_bytes);
        expected = next;
    }
    about_ = {};
    view_.data_size_ = expected;
    // The file must hold every tensor's bytes (trailing padding after the last one is optional).
    // The whole file's size: a head parsed by parse_head is judged as the file it begins.
    const std::uint64_t size = cur_.file_size();
    for (std::size_t i = 0; i < view_.tensors_.size(); ++i) {
        const tensor_info& t = view_.tensors_[i];
        std::uint64_t end = 0;
        if (__builtin_add_overflow(view_.data_offset_, t.offset, &end) || __builtin_add_overflow(end, t.n_bytes, &end) ||
            end > size) {
            err_.index = static_cast<std::int64_t>(i);
            subject(t.name);
            // Report what the whole data section needs, so the message says how much is missing.
            const tensor_info& last = view_.tensors_.back();
            std::uint64_t need = 0;
            if (__builtin_add_overflow(view_.data_offset_, last.offset + last.n_bytes, &need)) need = UINT64_MAX;
            std::uint64_t at = 0;
            if (__builtin_add_overflow(view_.data_offset_, t.offset, &at)) at = size;
            return fail(errc::data_truncated, section::data, std::min(at, size), need, size);
        }
    }
    err_.index = -1;
    err_.subject.clear();
    return true;
}

}  // namespace minfer::gguf
