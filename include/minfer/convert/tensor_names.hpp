#pragma once
// The GGUF name of a Hugging Face tensor, as convert_hf_to_gguf.py maps it for the supported
// architectures (gguf-py's TensorNameMap restricted to each architecture's MODEL_TENSORS: a name
// the architecture does not have is not mapped, and the reference stops with "Can not map tensor").
//
// | Hugging Face (model.layers.N. …)       | GGUF (blk.N. …)        | architectures            |
// |----------------------------------------|------------------------|--------------------------|
// | model.embed_tokens.weight              | token_embd.weight      | all                      |
// | lm_head.weight                         | output.weight          | all                      |
// | model.norm.weight                      | output_norm.weight     | all                      |
// | input_layernorm.weight                 | attn_norm.weight       | all                      |
// | post_attention_layernorm.weight        | ffn_norm.weight        | all                      |
// | self_attn.{q,k,v}_proj.{weight,bias}   | attn_{q,k,v}.…         | all                      |
// | self_attn.o_proj.{weight,bias}         | attn_output.…          | all                      |
// | self_attn.{q,k}_norm.weight            | attn_{q,k}_norm.weight | qwen3, qwen3moe          |
// | mlp.{gate,up,down}_proj.weight         | ffn_{gate,up,down}.…   | llama, qwen2, qwen3      |
// | mlp.gate.weight                        | ffn_gate_inp.weight    | qwen3moe                 |
// | mlp.experts.{gate,up,down}_proj.weight | ffn_{…}_exps.weight    | qwen3moe (after stacking)|
//
// Dropped as the reference drops them: names ending in .attention.masked_bias, .attention.bias,
// .rotary_emb.inv_freq. `language_model.` is removed from a name first (ModelBase.filter_tensors).
#include <optional>
#include <string>
#include <string_view>

#include "minfer/convert/architecture.hpp"

namespace minfer::convert {

/// Whether the reference skips the tensor without mapping it.
bool is_dropped_tensor(std::string_view hf_name) noexcept;

/// The GGUF name, or nothing when the architecture has no such tensor. Throws std::bad_alloc.
std::optional<std::string> gguf_tensor_name(architecture arch, std::string_view hf_name);

/// The block number the reference gives a tensor: the first dot-separated part of its name that is
/// all decimal digits (str.isdecimal: ASCII digits here), if any and if it fits.
std::optional<std::uint32_t> block_of(std::string_view hf_name) noexcept;

}  // namespace minfer::convert
