#pragma once
// tensor_stream: the output bytes of one planned tensor (model_plan.hpp), produced in order in
// batches of rows, whatever chunks the writer asks for — so memory is a batch (about 1 MiB of values)
// whatever the model, and the checkpoint's pages are released as they are consumed.
//
// Each output row is gathered from the checkpoint (a row of the input; for permute_heads the row
// LlamaModel.permute puts there; for stack the row of the expert it falls in), turned into float32
// as torch does it (F16 and BF16 exactly, F64 rounded to nearest, integers and bools as values), then
// into the output type as gguf-py does: F32 as it is, F16 rounded to nearest even (numpy's astype),
// BF16 rounded to nearest even with NaN made quiet, Q8_0 as ggml's reference (gguf-py's Q8_0 is
// "bit-exact" with it) — the same bytes as quant::quantize_rows gives.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "minfer/convert/model_plan.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

class tensor_stream {
public:
    /// A stream of plan.tensors[index]; `plan` must outlive it. `release_pages`: give the
    /// checkpoint's pages back to the kernel as they are consumed (madvise DONTNEED on the mapping).
    tensor_stream(const model_plan& plan, std::size_t index, bool release_pages = true);
    ~tensor_stream();
    tensor_stream(tensor_stream&&) noexcept;
    tensor_stream& operator=(tensor_stream&&) noexcept;

    /// Bytes [offset, offset + out.size()) of the tensor. Calls must come in increasing offset
    /// order, as gguf::writer makes them (a jump back restarts the tensor). @returns the quantizer's
    /// errors, out_of_memory; data_truncated when the range passes the tensor's end.
    gguf::result<void> fill(std::uint64_t offset, std::span<std::byte> out) noexcept;

    /// The values of output rows [first, first + n) as float32 (what a quantizer of another type
    /// starts from: toolbox::convert's llama-quantize types). Same errors.
    gguf::result<void> rows_f32(std::uint64_t first, std::uint64_t n, std::span<float> out) noexcept;

    std::uint64_t row_values() const noexcept;
    std::uint64_t rows() const noexcept;

private:
    struct state;
    std::unique_ptr<state> s_;
};

}  // namespace minfer::convert
