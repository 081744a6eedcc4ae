#pragma once
// The keys convert_hf_to_gguf.py writes between the general.* metadata and the vocabulary for the
// supported architectures, in its order, with its GGUF types: TextModel.set_gguf_parameters (block
// count, context, embedding, feed-forward, heads, KV heads, causal, rope scaling, rope base, RMS
// epsilon, layer-norm epsilon, experts, expert groups, gating function, key/value length, the file
// type), then the class's own (LlamaModel: vocab_size, rope.dimension_count; Qwen2MoeModel and so
// Qwen3-MoE: expert_feed_forward_length, expert_shared_feed_forward_length), then
// general.quantization_version (2). A key of a list (find_hparam) is written only when its first
// present key is not null, as the reference does.
//
// Rope parameters (rope_parameters, else rope_scaling): rope_type "linear" (with factor: type and
// factor), "yarn" (with factor: type, factor, original_context_length, and yarn's ext/attn/beta keys
// when given), "llama3" (the rope_freqs tensor instead: model_plan), "default"/absent (nothing);
// any other type, and full_attention / sliding_attention / mrope_section sections, are refused
// (codes::bad_model_config) rather than written differently from the reference.
#include <cstdint>
#include <vector>

#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/vocab_keys.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// llama.cpp's file type (general.file_type) of a conversion: ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q8_0 7,
/// MOSTLY_BF16 32.
enum class conversion_file_type : std::uint32_t { all_f32 = 0, mostly_f16 = 1, mostly_q8_0 = 7, mostly_bf16 = 32 };

/// The keys, in order. @returns codes::bad_model_config (a value of the wrong kind or range, a rope
/// type or section not converted; file = config.json, offset = the value), out_of_memory.
gguf::result<std::vector<vocab_key>> hyperparameter_keys(const hf_config& config, conversion_file_type file_type) noexcept;

}  // namespace minfer::convert
