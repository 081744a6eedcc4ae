#pragma once
// minfer::quant's importance matrix ("imatrix"): per-column weights that tell a quantizer which
// columns of a tensor matter most, computed by llama.cpp's llama-imatrix over a calibration text.
// llama-quantize reads two file formats (the GGUF one, tensors "<name>.in_sum2" and "<name>.counts",
// and the legacy binary ".dat") and hands the quantizer, per tensor, ne[0] weights per expert matrix;
// this is that reader, with the same values, so that a quantization given the same file writes
// llama-quantize's bytes. The file is untrusted input: every count and length is checked against
// the file's size before anything is allocated, and a malformed file is a precise error.
//
//     auto im = minfer::quant::read_importance("model.imatrix.gguf", {});
//     if (const auto* e = im->find("blk.0.attn_q.weight")) use(e->values);
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"

namespace minfer::quant {

using gguf::result;

/// One tensor's weights, as llama-quantize passes them to ggml_quantize_chunk: n_per_row values for
/// each of the tensor's matrices (ne[2] experts of a MoE tensor, one otherwise), matrix after matrix.
struct importance_entry {
    std::string name;           ///< the tensor's name ("blk.0.ffn_down.weight")
    std::vector<float> values;  ///< n_per_row * n_matrices weights
};

/// A whole importance matrix, after llama-quantize's include/exclude filtering. llama-quantize
/// writes its quantize.imatrix.* keys only when `entries` is not empty (after the filter):
/// file, dataset when has_dataset, entries_count = entries.size(), chunks_count when > 0.
struct importance_matrix {
    std::string file;              ///< quantize.imatrix.file: the path as given, cut to 127 bytes as llama-quantize does
    std::string dataset;           ///< quantize.imatrix.dataset: the first dataset named (up to a NUL, at most
                                   ///< 127 bytes), "" if none
    bool has_dataset = false;      ///< the file names a dataset (possibly ""): llama-quantize writes the key then
    std::int32_t chunks_count = 0; ///< quantize.imatrix.chunks_count: the chunks the file was computed over
                                   ///< (a GGUF file's u32 as llama-quantize's int: above INT32_MAX it is negative)
    std::vector<importance_entry> entries;  ///< sorted by name (bytewise), names unique

    /// The entry of `tensor`, or nullptr.
    const importance_entry* find(std::string_view tensor) const noexcept;
};

/// llama-quantize's --include-weights / --exclude-weights: keep only the entries whose name contains
/// one of `include` (when not empty), then drop those whose name contains one of `exclude`.
struct importance_filter {
    std::vector<std::string> include;
    std::vector<std::string> exclude;
};

/// Read an importance matrix in either format (told apart by the GGUF magic), then filter it.
/// Errors: io_error (cannot open/read), input_too_large (over the reader's cap), the loader's errors
/// for a malformed GGUF file, truncated / bad_imatrix for a malformed file of either format
/// (subject = the entry, offset = where), out_of_memory.
result<importance_matrix> read_importance(const std::filesystem::path& path,
                                          const importance_filter& filter = {}) noexcept;

}  // namespace minfer::quant
