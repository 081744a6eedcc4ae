#pragma once
// The hyperparameters of a model that decide what llama.cpp allocates for it, read from its
// metadata with llama.cpp's own keys ({arch}.block_count, {arch}.attention.head_count_kv, …) and
// llama.cpp's defaults and per-architecture rules (which layers use a sliding window, MLA's
// compressed KV, the recurrent state of mamba). The reference is the llama.cpp of the npm package
// @node-llama-cpp/linux-x64@3.22.1 (src/llama-model.cpp load_hparams, src/llama-hparams.cpp).
//
// Architectures with a model here: llama (also with experts, mistral-style MoE), qwen2, qwen3,
// qwen3moe, gemma2, gemma3, phi3, deepseek2 and mamba. Any other architecture reads as
// known == false: its name and what generic keys say, never an error for keys it may lack.
#include <cstdint>
#include <string>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::estimate {

/// llama.cpp's LLAMA_MAX_LAYERS: a block_count above it is refused (llama.cpp cannot load it).
inline constexpr std::uint32_t max_layers = 512;
/// llama.cpp's LLAMA_MAX_EXPERTS.
inline constexpr std::uint32_t max_experts = 512;
/// The widest a width key may be (embedding, feed-forward, head sizes and counts, ranks, ssm sizes):
/// 2^24. The widest real models are below 2^17; past this, llama.cpp's uint32 products of widths
/// overflow and no estimate means anything (bad_hyperparameter naming the key).
inline constexpr std::uint32_t max_width = std::uint32_t{1} << 24;

// openelm: llama-like, with per-layer head counts, KV head counts and feed-forward widths (arrays).
enum class arch : std::uint8_t { llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, deepseek2, mamba, openelm, unknown };

/// The name minfer uses for `a` (general.architecture's spelling); "unknown" for arch::unknown.
const char* to_string(arch a) noexcept;

struct hparams {
    std::string architecture;  ///< general.architecture as stored
    arch kind = arch::unknown;
    bool known() const noexcept { return kind != arch::unknown; }
    bool recurrent() const noexcept { return kind == arch::mamba; }

    std::uint32_t n_layer = 0;      ///< {arch}.block_count
    std::uint32_t n_ctx_train = 0;  ///< {arch}.context_length (0 when absent on an unknown architecture)
    std::uint32_t n_embd = 0;       ///< {arch}.embedding_length
    std::uint64_t n_vocab = 0;      ///< tokenizer.ggml.tokens' length, else {arch}.vocab_size, else token_embd's rows, else 0

    std::vector<std::uint32_t> n_head;     ///< per layer ({arch}.attention.head_count, scalar or array)
    std::vector<std::uint32_t> n_head_kv;  ///< per layer (head_count_kv; default: n_head)
    std::vector<std::uint32_t> n_ff;       ///< per layer ({arch}.feed_forward_length; 0 when absent)
    std::uint32_t n_embd_head_k = 0;       ///< {arch}.attention.key_length (default n_embd / n_head[0])
    std::uint32_t n_embd_head_v = 0;       ///< {arch}.attention.value_length (default n_embd / n_head[0])
    std::uint32_t n_rot = 0;               ///< {arch}.rope.dimension_count (default n_embd_head_k)

    /// Sliding-window attention: the window ({arch}.attention.sliding_window) and which layers use it
    /// (gemma2: every other layer from layer 0; gemma3: 5 of every 6; or the per-layer bool array
    /// {arch}.attention.sliding_window_pattern when present). Empty swa_layers: no SWA layer.
    std::uint32_t n_swa = 0;
    std::vector<bool> swa_layers;
    bool is_swa(std::uint32_t il) const noexcept { return il < swa_layers.size() && swa_layers[il]; }
    bool any_swa() const noexcept;

    /// MLA (deepseek2): key_length_mla / value_length_mla both present. The cache then holds K only
    /// (kv_lora_rank + n_rot values per token and layer, stored as key_length with head_count_kv 1).
    bool is_mla = false;
    std::uint32_t n_embd_head_k_mla = 0;
    std::uint32_t n_embd_head_v_mla = 0;
    std::uint32_t n_lora_kv = 0;  ///< {arch}.attention.kv_lora_rank
    std::uint32_t n_lora_q = 0;   ///< {arch}.attention.q_lora_rank

    /// Mixture of experts ({arch}.expert_count, expert_used_count, expert_feed_forward_length,
    /// expert_shared_count, leading_dense_block_count, expert_shared_feed_forward_length).
    std::uint32_t n_expert = 0;
    std::uint32_t n_expert_used = 0;
    std::uint32_t n_ff_exp = 0;
    std::uint32_t n_ff_shexp = 0;
    std::uint32_t n_expert_shared = 0;
    std::uint32_t n_layer_dense_lead = 0;

    /// Mamba ({arch}.ssm.conv_kernel, inner_size, state_size, time_step_rank, group_count).
    std::uint32_t ssm_d_conv = 0;
    std::uint32_t ssm_d_inner = 0;
    std::uint32_t ssm_d_state = 0;
    std::uint32_t ssm_dt_rank = 0;
    std::uint32_t ssm_n_group = 0;

    /// Values of K / V per token in layer il, all KV heads (llama.cpp's n_embd_k_gqa / n_embd_v_gqa).
    std::uint64_t n_embd_k_gqa(std::uint32_t il) const noexcept;
    std::uint64_t n_embd_v_gqa(std::uint32_t il) const noexcept;
    std::uint64_t n_embd_v_gqa_max() const noexcept;
    /// Recurrent state per sequence and layer: the conv state (r) and the scan state (s), in values.
    std::uint64_t n_embd_r() const noexcept;
    std::uint64_t n_embd_s() const noexcept;
};

/// Read the hyperparameters of `m`. Errors (subject = the key, detail = why in words):
/// key_not_found for a key llama.cpp requires; type_mismatch for a key of the wrong type;
/// value_out_of_range for a number too wide for the type llama.cpp reads it as (a context_length
/// above 32 bits; expected = the limit, found = the value); bad_hyperparameter for a value
/// llama.cpp cannot use: block_count 0 or above max_layers, zero attention heads, head_count_kv 0 or
/// not dividing head_count, a per-layer array whose length is not block_count, expert counts beyond
/// max_experts or used > count, a width above max_width. Allocates at most block_count entries per
/// array, after block_count is checked.
gguf::result<hparams> read_hparams(const gguf::model& m) noexcept;

}  // namespace minfer::estimate
