// toolbox::quantize's converted tensors: a writer callback source per tensor. The writer asks for
// the output bytes [offset, offset + len) in increasing order, chunk by chunk; the source keeps one
// batch of quantized rows and copies out of it, converting the next batch when the offsets pass its
// end. A batch is whole rows of one matrix (an expert's importance weights change at a matrix
// boundary), about batch_values values: the memory is a batch, never a tensor.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/quant/validate.hpp"
#include "minfer/quant/errors.hpp"
#include "quantize_internal.hpp"

#include "minfer/quant/value_stream.hpp"

namespace minfer::toolbox::quantize_detail {
namespace {

std::uint64_t row_bytes(gguf::tensor_type to, std::int64_t n_per_row) noexcept {
    const gguf::type_traits* tr = gguf::traits(to);
    if (tr == nullptr || tr->block_elems == 0) return 0;
    return static_cast<std::uint64_t>(n_per_row) / tr->block_elems * tr->block_bytes;
}

class converter {
public:
    explicit converter(const convert_job& job) : job_(job) {
        const auto& ne = job_.t.info->ne;
        n_per_row_ = static_cast<std::uint64_t>(ne[0]);
        rows_per_matrix_ = static_cast<std::uint64_t>(ne[1]);
        n_rows_ = rows_per_matrix_ * static_cast<std::uint64_t>(ne[2]) * static_cast<std::uint64_t>(ne[3]);
        out_row_ = row_bytes(job_.to, ne[0]);
        batch_rows_ = std::max<std::uint64_t>(1, job_.batch_values / std::max<std::uint64_t>(1, n_per_row_));
    }

    gguf::result<void> fill(std::uint64_t offset, std::span<std::byte> out) {
        while (!out.empty()) {
            if (offset < begin_ || offset >= end_) {
                // The writer reads in order: the next batch starts at the row holding `offset`.
                if (out_row_ == 0 || offset % out_row_ != 0 || offset / out_row_ >= n_rows_) return order_error(offset);
                if (auto r = convert(offset / out_row_); !r) return r;
            }
            const std::uint64_t n = std::min<std::uint64_t>(out.size(), end_ - offset);
            std::memcpy(out.data(), quantized_.data() + (offset - begin_), static_cast<std::size_t>(n));
            out = out.subspan(static_cast<std::size_t>(n));
            offset += n;
        }
        if (offset == static_cast<std::uint64_t>(n_rows_) * out_row_) release();  // the tensor is done
        return {};
    }

private:
    // Rows [row, row + k) of one matrix, converted and quantized into quantized_.
    gguf::result<void> convert(std::uint64_t row) {
        const std::uint64_t matrix = row / rows_per_matrix_;
        const std::uint64_t matrix_end = (matrix + 1) * rows_per_matrix_;
        const std::uint64_t k = std::min(batch_rows_, matrix_end - row);
        const std::uint64_t n_values = k * n_per_row_;
        const std::uint64_t first = row * n_per_row_;
        values_.resize(static_cast<std::size_t>(n_values));
        quantized_.resize(static_cast<std::size_t>(k * out_row_));

        const gguf::tensor_info& info = *job_.t.info;
        const std::span<const std::byte> bytes = job_.values ? std::span<const std::byte>() : job_.m->tensor_data(job_.t);
        if (job_.values) {
            if (auto r = job_.values->read(job_.t, first, values_); !r) return r;
        } else if (info.type == gguf::tensor_type::f32) {
            // memcpy: the mapping's alignment is the file's, which need not be a float's.
            if (bytes.size() < (first + n_values) * sizeof(float)) return short_error(bytes.size());
            std::memcpy(values_.data(), bytes.data() + first * sizeof(float), static_cast<std::size_t>(n_values * sizeof(float)));
        } else if (auto r = quant::dequantize_range(info.type, bytes, first, values_, job_.threads); !r) {
            gguf::error e = std::move(r).error();
            if (e.subject.empty()) e.subject = info.name;
            return gguf::unexpected(std::move(e));
        }
        if (const std::size_t i = quant::first_non_finite(values_); i != values_.size()) {
            gguf::error e;
            e.code = quant::codes::non_finite_weight;
            e.subject = info.name;
            e.index = static_cast<std::int64_t>(first + i);
            return gguf::unexpected(std::move(e));
        }
        std::span<const float> importance;
        if (!job_.importance.empty())
            importance = job_.importance.subspan(static_cast<std::size_t>(matrix * n_per_row_),
                                                 static_cast<std::size_t>(n_per_row_));
        auto q = quant::quantize_rows_parallel(job_.to, values_, static_cast<std::int64_t>(n_per_row_), importance,
                                               quantized_, job_.threads);
        if (!q) {
            gguf::error e = std::move(q).error();
            if (e.subject.empty()) e.subject = info.name;
            if (e.index >= 0) e.index += static_cast<std::int64_t>(row);  // the row within the tensor
            return gguf::unexpected(std::move(e));
        }
        if (auto r = validate(row, k); !r) return r;
        begin_ = row * out_row_;
        end_ = begin_ + k * out_row_;
        // The input bytes of these rows are read for good (the writer asks in order): their pages
        // leave this process (they stay in the page cache), so the resident set is the batch, not
        // the whole input. Only for a mapping: memory a file was read into must not be discarded.
        if (!job_.values && job_.m->parts()[job_.t.part].file.mapped()) quant::release_value_pages(info.type, bytes, first, n_values);
        return {};
    }

    // ggml_validate_row_data on every quantized row, as llama_model_quantize checks each chunk it
    // writes: finite inputs beyond a type's range (a weight of 1e5 to f16, of 1e7 to q8_0) quantize
    // to an infinite or NaN scale, a damaged model that llama.cpp refuses to write.
    gguf::result<void> validate(std::uint64_t row, std::uint64_t k) const {
        const auto bad = quant::validate_bytes(job_.to, std::span<const std::byte>(quantized_.data(),
                                                                                   static_cast<std::size_t>(k * out_row_)));
        if (!bad) return {};
        // The batch is whole rows: the block (a value, for f16/bf16/f32) says which row.
        const gguf::type_traits* tr = gguf::traits(job_.to);
        const std::uint64_t per_row = out_row_ / tr->block_bytes;
        gguf::error e;
        e.code = quant::codes::quantize_failed;
        e.subject = job_.t.info->name;
        e.index = static_cast<std::int64_t>(row + bad->block / per_row);
        e.found = static_cast<std::uint64_t>(job_.to);
        e.detail = std::string(tr->block_elems == 1 ? "value " : "the scale of block ") + std::to_string(bad->block % per_row) +
                   " of the row is " + (bad->nan ? "NaN" : "infinite") +
                   ": a weight is beyond the type's range (llama.cpp refuses it too: quantized data validation failed)";
        return gguf::unexpected(std::move(e));
    }

    void release() noexcept {
        std::vector<float>().swap(values_);
        std::vector<std::byte>().swap(quantized_);
        begin_ = end_ = 0;
    }

    gguf::result<void> order_error(std::uint64_t offset) const {
        gguf::error e;
        e.code = gguf::errc::index_out_of_range;
        e.subject = job_.t.info->name;
        e.expected = end_;
        e.found = offset;
        e.detail = "a quantized tensor's bytes were asked for out of order";
        return gguf::unexpected(std::move(e));
    }
    gguf::result<void> short_error(std::uint64_t have) const {
        gguf::error e;
        e.code = gguf::errc::data_truncated;
        e.subject = job_.t.info->name;
        e.expected = job_.t.info->n_bytes;
        e.found = have;
        return gguf::unexpected(std::move(e));
    }

    convert_job job_;
    std::uint64_t n_per_row_ = 0, rows_per_matrix_ = 0, n_rows_ = 0, out_row_ = 0, batch_rows_ = 1;
    std::vector<float> values_;
    std::vector<std::byte> quantized_;
    std::uint64_t begin_ = 0, end_ = 0;  // the output bytes quantized_ holds
};

}  // namespace

std::uint64_t converted_bytes(gguf::tensor_type to, const std::array<std::int64_t, 4>& ne) noexcept {
    return row_bytes(to, ne[0]) * static_cast<std::uint64_t>(ne[1]) * static_cast<std::uint64_t>(ne[2]) *
           static_cast<std::uint64_t>(ne[3]);
}

gguf::result<gguf::tensor_source> converted_source(const convert_job& job) noexcept {
    try {
        auto state = std::make_shared<converter>(job);
        return gguf::tensor_source::callback(
            converted_bytes(job.to, job.t.info->ne),
            [state](std::uint64_t offset, std::span<std::byte> out) noexcept -> gguf::result<void> {
                try {
                    return state->fill(offset, out);
                } catch (...) {
                    return gguf::unexpected(gguf::out_of_memory_error("quantizing a tensor"));
                }
            });
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("preparing a tensor's conversion"));
    }
}

}  // namespace minfer::toolbox::quantize_detail
