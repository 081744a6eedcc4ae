#pragma once
// hf_config: a checkpoint's config.json, read strictly into the fields the supported architectures
// need, with the whole document kept for any other lookup (raw(), find_hparam()).
//
// What convert_hf_to_gguf.py reads (conversion/base.py TextModel.__init__ and set_gguf_parameters,
// conversion/llama.py LlamaModel, conversion/qwen.py Qwen2Model, Qwen3Model, Qwen2MoeModel and
// Qwen3MoeModel, gguf-py's SpecialVocab and Metadata). A list of keys is find_hparam's: the first key
// of the list that is present wins, even when its value is null (then the field is absent). This
// reader takes the same key, and refuses a config where two keys of one list hold different values
// (the reference reads such lists in different orders in different places: n_heads before
// num_attention_heads in LlamaModel.modify_tensors, after it in set_gguf_parameters).
//
// | field (keys)                                   | reference: use, default when absent              | here                 |
// |------------------------------------------------|--------------------------------------------------|----------------------|
// | architectures[0]                               | the converter class; none: "Failed to detect"    | required; arch       |
// | text_config, llm_config, lm_config,            | merged into the root (multimodal wrappers)       | refused (unsupported |
// |   thinker_config, language_config, lfm         |                                                  |   architecture)      |
// | n_layers, num_hidden_layers, n_layer,          | block_count; required (KeyError)                 | required             |
// |   num_layers                                   |                                                  |                      |
// | max_position_embeddings, n_ctx, n_positions,   | context_length; omitted when absent              | required (llama.cpp  |
// |   max_length, max_sequence_length,             |                                                  |   needs it)          |
// |   model_max_length                             |                                                  |                      |
// | hidden_size, n_embd, dim                       | embedding_length; LlamaModel's rope dimension    | required             |
// | prefix_dense_intermediate_size,                | feed_forward_length; omitted when absent         | required             |
// |   intermediate_size, n_inner, hidden_dim       |                                                  |                      |
// | num_attention_heads, n_head, n_heads           | head_count; LlamaModel's Q/K permutation         | required             |
// | num_key_value_heads, n_kv_heads                | head_count_kv, omitted when absent (llama.cpp:   | llama, mistral:      |
// |                                                |   = heads); LlamaModel's K permutation: required | required; else = heads|
// | vocab_size                                     | LlamaModel: {arch}.vocab_size, required; the     | required             |
// |                                                |   vocabulary padded to it (tokenizer's size      |                      |
// |                                                |   otherwise); 32016 (CodeLlama) and 49152 change |                      |
// |                                                |   LlamaModel's special tokens / add_bos          |                      |
// | rope_parameters, else rope_scaling (null: {})  | rope_type (or type), factor,                     | raw: rope_parameters;|
// |                                                |   original_max_position_embeddings, yarn's       |   rope_type typed    |
// |                                                |   attention_factor/attn_factor,                  |                      |
// |                                                |   extrapolation_factor, beta_fast, beta_slow;    |                      |
// |                                                |   llama3's rope_freqs (factor 8.0,               |                      |
// |                                                |   low_freq_factor 1.0, high_freq_factor 4.0,     |                      |
// |                                                |   original_max_position_embeddings 8192);        |                      |
// |                                                |   full_attention / sliding_attention; mrope      |                      |
// | rope_parameters.rope_theta, else               | rope.freq_base; omitted when absent (llama.cpp:  | optional; rope_theta |
// |   global_rope_theta, rope_global_theta,        |   10000); llama3 rope_freqs' base (10000.0)      |                      |
// |   rope_theta_global, rope_theta,               |                                                  |                      |
// |   rotary_emb_base                              |                                                  |                      |
// | rms_norm_eps, norm_eps                         | layer_norm_rms_epsilon; omitted when absent      | required, > 0        |
// | head_dim                                       | key_length and value_length; LlamaModel's rope   | optional (else       |
// |                                                |   dimension (else hidden_size // heads)          |   hidden % heads = 0)|
// | num_local_experts, num_experts,                | expert_count; Qwen2MoeModel stacks that many     | qwen3_moe: required  |
// |   n_routed_experts                             |   experts per layer (required there)             |                      |
// | num_experts_per_tok, num_experts_per_token,    | expert_used_count                                | qwen3_moe: required  |
// |   top_k_experts                                |                                                  |                      |
// | moe_intermediate_size                          | expert_feed_forward_length                       | qwen3_moe: required  |
// | shared_expert_intermediate_size                | expert_shared_feed_forward_length                | optional             |
// | bos/eos/unk/sep/pad/cls/mask _token_id         | SpecialVocab: an int is used (a negative one     | typed; negative      |
// |                                                |   raises), a list or null ignored; the tokenizer |   refused            |
// |                                                |   files' ids come first                          |                      |
// | tie_word_embeddings                            | Qwen3Model's reranker only (default False)       | optional             |
// | _name_or_path, model_type                      | general.* naming heuristics (a name with at most | optional             |
// |                                                |   one '/'); Qwen3 reranker detection             |                      |
// | draft_vocab_size (with 1 layer),               | LlamaModel: an EAGLE-3 draft model               | refused (unsupported |
// |   transformer_layer_config                     |                                                  |   architecture)      |
// | quantization_config                            | FP8/GPTQ/bitnet/NVFP4/… dequantization           | has_quantization_config |
// | is_causal, n_group, topk_group, score_function | keys of other architectures                      | raw                  |
// |   …, layer_norm_eps …, partial_rotary_factor … |                                                  |                      |
//
// Not read by the reference for these architectures, kept typed for the converter's own checks:
// torch_dtype (or dtype; the output type is guessed from the first 2-D tensor instead: "some finetunes
// lie"), sliding_window and use_sliding_window (not written for Qwen2/Qwen3/Mistral), norm_topk_prob,
// decoder_sparse_step and mlp_only_layers (a Qwen3-MoE with dense layers: llama.cpp's qwen3moe expects
// experts in every layer).
//
// The reference first asks transformers' AutoConfig, which fills in the model class's defaults for
// absent fields, and reads config.json as it is only when that fails; this reader reads config.json
// as it is (the reference tests run without transformers, on complete configs).
//
// JSON: RFC 8259 as nlohmann reads it, which refuses what Python's json module accepts beyond the RFC
// (NaN, Infinity, lone surrogate escapes); a repeated key is refused (Python keeps the last), as is a
// UTF-8 byte order mark (Python refuses it too), nesting deeper than 64 and more than 2^19 values.
// Errors are codes::bad_model_config with the key as subject and the offset of its value (of the
// object, for an absent key); codes::unsupported_architecture names the architecture.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/convert/architecture.hpp"
#include "minfer/convert/json_value.hpp"
#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// config.json above this is refused (real ones are a few KiB; the largest, with label maps, < 1 MiB).
inline constexpr std::uint64_t hf_config_max_bytes = 16u << 20;

/// A special token id as config.json gives it: one id, or a list of them (Llama 3's eos_token_id).
struct special_token_id {
    std::vector<std::int64_t> ids;  ///< empty: absent or null
    bool listed = false;            ///< given as a list
    /// The id the reference uses: a single integer (a list is ignored by SpecialVocab).
    std::optional<std::int64_t> single() const noexcept {
        if (listed || ids.empty()) return std::nullopt;
        return ids.front();
    }
};

struct hf_config {
    std::string file;                 ///< the path read (errors name it)
    std::string architecture_name;    ///< architectures[0]
    convert::architecture arch = convert::architecture::llama;

    std::uint32_t num_hidden_layers = 0;
    std::uint32_t vocab_size = 0;
    std::uint32_t hidden_size = 0;
    std::uint32_t intermediate_size = 0;
    std::uint32_t num_attention_heads = 0;
    std::optional<std::uint32_t> num_key_value_heads;  ///< as given; kv_heads() applies the default
    std::uint32_t max_position_embeddings = 0;
    double rms_norm_eps = 0;
    std::optional<double> rope_theta;                  ///< the effective one (see the table)
    std::optional<std::string> rope_type;              ///< rope_type, else type, of the rope parameters
    std::optional<std::uint32_t> head_dim;
    std::optional<bool> tie_word_embeddings;
    std::optional<std::string> torch_dtype;            ///< torch_dtype, else dtype (transformers 4.56+)
    std::optional<std::uint64_t> sliding_window;
    std::optional<bool> use_sliding_window;
    std::optional<std::string> name_or_path;           ///< _name_or_path
    std::optional<std::string> model_type;
    bool has_quantization_config = false;              ///< quantization_config present and not null

    special_token_id bos_token_id, eos_token_id, unk_token_id, sep_token_id, pad_token_id, cls_token_id,
        mask_token_id;

    // mixture of experts (required for qwen3_moe)
    std::optional<std::uint32_t> num_experts;
    std::optional<std::uint32_t> num_experts_per_tok;
    std::optional<std::uint32_t> moe_intermediate_size;
    std::optional<std::uint32_t> shared_expert_intermediate_size;
    std::optional<bool> norm_topk_prob;
    std::optional<std::uint32_t> decoder_sparse_step;
    std::vector<std::uint32_t> mlp_only_layers;

    /// num_key_value_heads, or the heads when absent (what llama.cpp assumes).
    std::uint32_t kv_heads() const noexcept { return num_key_value_heads.value_or(num_attention_heads); }
    /// head_dim, or hidden_size / heads (checked to divide when head_dim is absent).
    std::uint32_t head_size() const noexcept {
        return head_dim.value_or(num_attention_heads > 0 ? hidden_size / num_attention_heads : 0);
    }

    /// The whole document (an object).
    json_value raw() const& noexcept MINFER_LIFETIMEBOUND;
    json_value raw() const&& = delete;
    /// find_hparam: the value of the first of `keys` present in the root object (absent when none is;
    /// null when that key holds null, which the reference takes as absent).
    json_value find_hparam(std::initializer_list<std::string_view> keys) const& noexcept MINFER_LIFETIMEBOUND;
    /// The rope parameters object as the reference picks it: `rope_parameters` when present (null:
    /// absent), else `rope_scaling`; absent when neither is an object.
    json_value rope_parameters() const& noexcept MINFER_LIFETIMEBOUND;

    std::shared_ptr<const detail::json_tree> document;  ///< what raw() views (shared by copies)
};

/// Read and check `path` (a config.json). @returns codes::bad_model_config (also for a missing file:
/// sys_errno ENOENT; larger than hf_config_max_bytes: expected = the cap), codes::unsupported_architecture,
/// io_error (a file that exists but cannot be read), out_of_memory.
gguf::result<hf_config> read_hf_config(const std::filesystem::path& path) noexcept;

/// The same for text already read; `file` is the name errors give.
gguf::result<hf_config> parse_hf_config(std::string_view text, std::string file) noexcept;

}  // namespace minfer::convert
