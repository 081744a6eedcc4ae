#pragma once
// Internal: one merged tensor of `minfer assemble` as a writer source. The sources' tensors (same
// shape, any types) are dequantized exactly, a batch of whole rows at a time, merged by
// merge_math (its statistics passes first, over the same batches), and the merged rows quantized
// back to the output type with minfer::quant's byte-exact quantizer, each batch checked as
// llama.cpp checks quantized rows. Memory: one batch per source plus the output batch.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/source.hpp"
#include "merge_math.hpp"

namespace minfer::toolbox::detail {

struct merge_job {
    merge_math::tensor_merge merge;                    ///< n_values set; name points into `name`
    std::string name;                                  ///< the output tensor's
    std::vector<const gguf::model*> models;            ///< one per merge input, in merge order
    std::vector<const gguf::tensor_ref*> tensors;      ///< each model's tensor
    /// Per input: empty for a local model (its mapping is read), or how to fetch the tensor's bytes
    /// [offset, + out.size()) of a remote one. A remote input is fetched once, when the tensor's
    /// merge starts, into an unlinked temporary file in spool_dir (the merge's passes read it again
    /// and again), which is gone once the tensor's last byte is produced.
    using read_fn = std::function<gguf::result<void>(std::uint64_t offset, std::span<std::byte> out)>;
    std::vector<read_fn> reads;
    std::filesystem::path spool_dir;
    gguf::tensor_type to = gguf::tensor_type::f32;     ///< the output type
    std::array<std::int64_t, 4> ne{1, 1, 1, 1};
    unsigned threads = 0;
    /// The output tensor's importance weights (ne[0] per matrix, ne[2] matrices), or empty: given to
    /// the quantizer as llama-quantize gives an imatrix entry. The caller keeps them alive.
    std::span<const float> importance;
};

/// The bytes of the output tensor (quant::bytes_for of its shape). The merger is created here (its
/// parameter errors returned now, before any output exists); the passes run on the writer's first
/// request.
gguf::result<gguf::tensor_source> merged_source(merge_job job) noexcept;

}  // namespace minfer::toolbox::detail
