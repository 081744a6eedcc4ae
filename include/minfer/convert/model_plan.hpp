#pragma once
// model_plan: everything convert_hf_to_gguf.py would write for a checkpoint directory, decided before
// any tensor byte is read — every metadata key in the reference's order, every output tensor's name,
// type, shape and size and where its values come from. tensor_stream.hpp produces the bytes.
//
// The reference's steps (conversion/base.py ModelBase.__init__, prepare_tensors, prepare_metadata;
// conversion/llama.py LlamaModel; conversion/qwen.py Qwen2Model, Qwen3Model, Qwen2MoeModel), for
// the supported architectures:
//   - the output type: --outtype; `auto` is BF16 when the first tensor with 2 or more dimensions (in
//     the checkpoint's order) is BF16, else F16;
//   - the tensors: Llama's rope_freqs first (llama3 rope scaling: generate_extra_tensors), then the
//     checkpoint's tensors in its order (checkpoint.hpp), each renamed (tensor_names.hpp); Llama's
//     q_proj / k_proj weights and biases with their rows permuted per head (LlamaModel.permute:
//     reshape(heads, 2, rows/heads/2, …).swapaxes(1, 2)); Qwen3-MoE's experts
//     model.layers.N.mlp.experts.E.{down,gate,up}_proj.weight stacked into one 3-D tensor each, written
//     (down, gate, up) where the layer's last expert tensor is in the order;
//   - each tensor's type: F32 for 1-D tensors, names ending in "_norm.weight", ffn_gate_inp and names
//     not ending in ".weight"; else the output type; Q8_0 falls back to F16 for rows that are not a
//     multiple of 32 values (gguf-py's QuantError);
//   - the keys: general.* (model_metadata.hpp), the hyperparameters (hyperparameters.hpp), the
//     vocabulary (spm_vocab.hpp when tokenizer.model is a file and the class reads it, else
//     bpe_vocab.hpp).
//
// Beyond the reference, every tensor's shape is checked against config.json (codes::bad_tensor),
// so a checkpoint that llama.cpp could not load is refused here instead of converted.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/convert/checkpoint.hpp"
#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/hyperparameters.hpp"
#include "minfer/convert/model_metadata.hpp"
#include "minfer/convert/vocab_keys.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::convert {

/// --outtype.
enum class output_type : std::uint8_t { f32, f16, bf16, q8_0, automatic };

/// "f32", "f16", "bf16", "q8_0", "auto", exactly as convert_hf_to_gguf.py spells them (lower case: an
/// upper-case "F16" or "Q8_0" is llama-quantize's type, which toolbox::convert applies to the f32 conversion).
std::optional<output_type> output_type_from_name(std::string_view name) noexcept;

struct conversion_options {
    output_type outtype = output_type::automatic;
    std::optional<std::string> model_name;  ///< --model-name
    std::string pre;                        ///< --pre: tokenizer.ggml.pre for an unknown BPE check hash
    bool vocab_only = false;                ///< --vocab-only: the keys, no tensors
};

/// How an output tensor's values come from the checkpoint.
enum class tensor_op : std::uint8_t {
    copy,           ///< one input, as it is
    permute_heads,  ///< one input, its first dimension permuted per head (Llama's Q and K)
    stack,          ///< several inputs (the experts, in order) one after the other
    values,         ///< computed values (rope_freqs)
};

struct planned_tensor {
    std::string name;                  ///< the GGUF name
    gguf::tensor_type type = gguf::tensor_type::f32;
    std::vector<std::int64_t> ne;      ///< GGUF order (innermost first)
    std::uint64_t n_elements = 0;
    std::uint64_t n_bytes = 0;         ///< the output bytes (unpadded)
    tensor_op op = tensor_op::copy;
    std::vector<std::uint32_t> inputs; ///< indices into checkpoint::tensors()
    std::uint32_t heads = 0;           ///< permute_heads: the head count the rows are grouped by
    std::vector<float> values;         ///< values: the tensor's values
};

struct model_plan {
    hf_config config;
    std::optional<checkpoint> weights;  ///< absent for vocab_only
    conversion_file_type file_type = conversion_file_type::mostly_f16;
    /// Every key, in the reference's order; a vocab_array value stands for the vectors below.
    std::vector<vocab_key> keys;
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<std::int32_t> token_types;
    std::vector<planned_tensor> tensors;
    std::vector<std::string> warnings;  ///< what the reference logs as warnings
};

/// Plan the conversion of the checkpoint in `directory`. @returns the errors of read_hf_config,
/// checkpoint::open, check_convertible, the vocabularies, hyperparameter_keys, general_metadata;
/// codes::bad_tensor; codes::unsupported_architecture (a Qwen3 reranker); out_of_memory.
gguf::result<model_plan> plan_conversion(const std::filesystem::path& directory,
                                         const conversion_options& options) noexcept;

/// The parameter counts gguf-py's writer reports for `tensors` (get_total_parameter_count): total,
/// shared, expert (per expert), and the expert count summed over expert tensors / their number.
parameter_counts count_parameters(const std::vector<planned_tensor>& tensors) noexcept;

}  // namespace minfer::convert
