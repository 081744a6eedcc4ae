#pragma once
// The models and importance matrices of the quantize reference test (test_quantize_ref.cpp): a
// llama-architecture model that llama.cpp loads and decodes, wide enough for every block size (256),
// with heavy-tailed weights (Laplace with rare large outliers, the shape real weights have, which
// exercises the quantizers' scale searches), written as F32, F16 or BF16; a Mixtral-style variant
// with 4 experts (3-D ffn_*_exps tensors) for the per-expert importance path; and GGUF importance
// matrices for them, kept in memory too so that llama.cpp can be handed the same weights.
// Everything is a pure function of the options and a fixed seed: the same bytes every run.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer_quantize_ref {

namespace fs = std::filesystem;

/// Hyperparameters: 4 heads of 64, 2 KV heads (GQA), 512-token vocabulary (sample_model's tokenizer).
inline constexpr std::int64_t n_embd = 256;
inline constexpr std::int64_t n_head = 4;
inline constexpr std::int64_t n_head_kv = 2;
inline constexpr std::int64_t head_dim = n_embd / n_head;
inline constexpr std::int64_t n_ff_dense = 512;
inline constexpr std::int64_t n_ff_expert = 256;
inline constexpr std::int64_t n_expert = 4;
inline constexpr std::int64_t n_expert_used = 2;

struct model_options {
    bool moe = false;                                        ///< experts instead of a dense FFN
    minfer::gguf::tensor_type store = minfer::gguf::tensor_type::f32;  ///< f32, f16 or bf16 for the matrices
    std::uint32_t n_layer = 2;
    /// The dense FFN width (0: n_ff_dense); one that is not a multiple of 256 sends ffn_down (whose
    /// rows are n_ff long) to the k-quants' fallback types.
    std::int64_t n_ff = 0;
    /// Nonzero: value 5 of blk.0.attn_q.weight (row 0) becomes this, a finite weight that a type may
    /// not hold (1e5 overflows f16; 1e7 overflows q8_0's f16 block scale, max / 127).
    float outlier = 0;
};

/// One tensor of the model: name and ggml shape (ne[0] is the row length).
struct tensor_shape {
    std::string name;
    std::vector<std::int64_t> ne;
};

/// The model's tensors, in the order they are written.
std::vector<tensor_shape> model_tensors(const model_options& o);

/// Write the model to `path` (general.file_type 0, 1 or 32 after `store`; norms stay f32; no
/// general.alignment). @returns the writer's errors.
minfer::gguf::result<void> write_model(const fs::path& path, const model_options& o) noexcept;

/// Split `model` with minfer's split (split_plan + toolbox::write_split) into parts of at most
/// `max_tensors` tensors, named "<prefix>-%05d-of-%05d.gguf". @returns the part paths (part 1 first).
minfer::gguf::result<std::vector<fs::path>> split_model(const fs::path& model, const fs::path& prefix,
                                                        std::uint64_t max_tensors) noexcept;

/// An importance matrix as llama-imatrix stores it: per entry the sums of squared activations
/// (ne[0] per matrix, matrix after matrix) and one token count per matrix.
struct imatrix_entry {
    std::string name;
    std::vector<float> sums;
    std::vector<float> counts;  ///< one per matrix (ne[2] experts, or 1)
};
struct imatrix_spec {
    std::vector<imatrix_entry> entries;
    std::vector<std::string> datasets;
    std::uint32_t chunk_count = 0;
    std::uint32_t chunk_size = 512;
};

/// An importance matrix for every 2-D and 3-D weight of the model but token_embd (as llama-imatrix
/// collects: the matrices multiplied with activations), with heavy-tailed positive sums; in a MoE
/// model one expert of each expert tensor has count 0 (it saw no token: llama-quantize then uses 1).
imatrix_spec make_imatrix(const model_options& o);

/// Write it as llama-imatrix's GGUF file: imatrix.datasets / chunk_count / chunk_size, and per entry
/// "<name>.in_sum2" [ne0, n_mat] and "<name>.counts" [1, n_mat] (f32).
minfer::gguf::result<void> write_imatrix(const fs::path& path, const imatrix_spec& spec) noexcept;

/// The weights llama-quantize's load_imatrix derives from a GGUF imatrix, computed here independently
/// of minfer's reader: per matrix sums / count (a float division), or 1 where the count is not > 0.
std::vector<float> imatrix_weights(const imatrix_entry& e);

}  // namespace minfer_quantize_ref
