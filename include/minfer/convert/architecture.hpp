#pragma once
// The model architectures `minfer convert` converts: the Hugging Face class names config.json gives in
// `architectures`, and the converter of convert_hf_to_gguf.py each one goes through.
//
// convert_hf_to_gguf.py (conversion/llama.py) registers LlamaModel for "LlamaForCausalLM",
// "MistralForCausalLM" and "MixtralForCausalLM" among others. The first two are the same dense model
// (Mistral-style checkpoints are Llama's tensors; their sliding_window is not written by the
// converter); Mixtral is a mixture of experts through another path (block_sparse_moe experts merged),
// not supported here. Qwen2ForCausalLM is Qwen2Model, Qwen3ForCausalLM Qwen3Model, Qwen3MoeForCausalLM
// Qwen3MoeModel (conversion/qwen.py). Other names the reference maps to these classes (LlamaModel,
// Qwen2Model, Qwen3Model, LLaMAForCausalLM, vision-language wrappers, EAGLE-3 drafts) are refused.
#include <cstdint>
#include <optional>
#include <string_view>

namespace minfer::convert {

enum class architecture : std::uint8_t { llama, mistral, qwen2, qwen3, qwen3_moe };

/// The Hugging Face class name: "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM",
/// "Qwen3ForCausalLM", "Qwen3MoeForCausalLM".
std::string_view hf_name(architecture a) noexcept;

/// The GGUF architecture the reference writes (general.architecture): "llama" (Llama and Mistral),
/// "qwen2", "qwen3", "qwen3moe".
std::string_view gguf_name(architecture a) noexcept;

/// The architecture of a Hugging Face class name (exact match), if supported.
std::optional<architecture> architecture_from_hf_name(std::string_view name) noexcept;

/// "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM".
std::string_view supported_architecture_names() noexcept;

/// Whether the architecture is a mixture of experts (its config needs the expert fields).
bool is_moe(architecture a) noexcept;

}  // namespace minfer::convert
