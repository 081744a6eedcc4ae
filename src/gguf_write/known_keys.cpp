// known_keys: the table (see known_keys.hpp for where it comes from and what it is for).
#include "minfer/gguf_write/known_keys.hpp"

#include <array>

namespace minfer::gguf::known_keys {
namespace {

struct entry {
    std::string_view name;
    key_type type;
};

constexpr key_type u32{value_type::u32, value_type::u32, false};
constexpr key_type f32{value_type::f32, value_type::f32, false};
constexpr key_type boolean{value_type::boolean, value_type::boolean, false};
constexpr key_type str{value_type::string, value_type::string, false};
constexpr key_type per_layer{value_type::u32, value_type::u32, true};
constexpr key_type array_of(value_type element) { return {value_type::array, element, false}; }

// Keys under their full name.
constexpr std::array<entry, 48> global_keys{{
    // general.*: the loader (alignment), llama_model_loader (architecture, file_type) and the
    // model card strings llama.cpp reads as strings.
    {"general.architecture", str},
    {"general.type", str},
    {"general.quantization_version", u32},
    {"general.alignment", u32},
    {"general.file_type", u32},
    {"general.name", str},
    {"general.author", str},
    {"general.version", str},
    {"general.url", str},
    {"general.description", str},
    {"general.license", str},
    {"general.source.url", str},
    {"general.source.huggingface.repository", str},
    // tokenizer.*: llama-vocab.cpp.
    {"tokenizer.ggml.model", str},
    {"tokenizer.ggml.pre", str},
    {"tokenizer.ggml.tokens", array_of(value_type::string)},
    {"tokenizer.ggml.token_type", array_of(value_type::i32)},
    {"tokenizer.ggml.token_type_count", u32},
    {"tokenizer.ggml.scores", array_of(value_type::f32)},
    {"tokenizer.ggml.merges", array_of(value_type::string)},
    {"tokenizer.ggml.suppress_tokens", array_of(value_type::i32)},
    {"tokenizer.ggml.precompiled_charsmap", array_of(value_type::u8)},
    {"tokenizer.ggml.bos_token_id", u32},
    {"tokenizer.ggml.eos_token_id", u32},
    {"tokenizer.ggml.eot_token_id", u32},
    {"tokenizer.ggml.eom_token_id", u32},
    {"tokenizer.ggml.unknown_token_id", u32},
    {"tokenizer.ggml.seperator_token_id", u32},
    {"tokenizer.ggml.padding_token_id", u32},
    {"tokenizer.ggml.cls_token_id", u32},
    {"tokenizer.ggml.mask_token_id", u32},
    {"tokenizer.ggml.fim_pre_token_id", u32},
    {"tokenizer.ggml.fim_suf_token_id", u32},
    {"tokenizer.ggml.fim_mid_token_id", u32},
    {"tokenizer.ggml.fim_pad_token_id", u32},
    {"tokenizer.ggml.fim_rep_token_id", u32},
    {"tokenizer.ggml.fim_sep_token_id", u32},
    {"tokenizer.ggml.prefix_token_id", u32},
    {"tokenizer.ggml.suffix_token_id", u32},
    {"tokenizer.ggml.middle_token_id", u32},
    {"tokenizer.ggml.add_bos_token", boolean},
    {"tokenizer.ggml.add_eos_token", boolean},
    {"tokenizer.ggml.add_sep_token", boolean},
    {"tokenizer.ggml.add_space_prefix", boolean},
    {"tokenizer.ggml.remove_extra_whitespaces", boolean},
    {"tokenizer.ggml.normalizer.lowercase", boolean},
    {"tokenizer.ggml.normalizer.strip_accents", boolean},
    {"tokenizer.chat_template", str},
}};

// Hyperparameters, under `{arch}.` (llama-model.cpp load_hparams).
constexpr std::array<entry, 73> arch_keys{{
    {"vocab_size", u32},
    {"context_length", u32},
    {"embedding_length", u32},
    {"block_count", u32},
    {"leading_dense_block_count", u32},
    {"feed_forward_length", per_layer},
    {"expert_feed_forward_length", u32},
    {"expert_shared_feed_forward_length", u32},
    {"use_parallel_residual", boolean},
    {"expert_count", u32},
    {"expert_used_count", u32},
    {"expert_shared_count", u32},
    {"expert_group_count", u32},
    {"expert_group_used_count", u32},
    {"expert_weights_scale", f32},
    {"expert_weights_norm", boolean},
    {"expert_gating_func", u32},
    {"interleave_moe_layer_step", u32},
    {"nextn_predict_layers", u32},
    {"pooling_type", u32},
    {"logit_scale", f32},
    {"decoder_start_token_id", u32},
    {"attn_logit_softcapping", f32},
    {"router_logit_softcapping", f32},
    {"final_logit_softcapping", f32},
    {"swin_norm", boolean},
    {"rescale_every_n_layers", u32},
    {"time_mix_extra_dim", u32},
    {"time_decay_extra_dim", u32},
    {"residual_scale", f32},
    {"embedding_scale", f32},
    {"token_shift_count", u32},
    {"attention.head_count", per_layer},
    {"attention.head_count_kv", per_layer},
    {"attention.max_alibi_bias", f32},
    {"attention.clamp_kqv", f32},
    {"attention.key_length", u32},
    {"attention.value_length", u32},
    {"attention.layer_norm_epsilon", f32},
    {"attention.layer_norm_rms_epsilon", f32},
    {"attention.group_norm_epsilon", f32},
    {"attention.group_norm_groups", u32},
    {"attention.causal", boolean},
    {"attention.q_lora_rank", u32},
    {"attention.kv_lora_rank", u32},
    {"attention.relative_buckets_count", u32},
    {"attention.sliding_window", u32},
    {"attention.scale", f32},
    {"attention.output_scale", f32},
    {"attention.key_length_mla", u32},
    {"attention.value_length_mla", u32},
    {"rope.dimension_count", u32},
    {"rope.freq_base", f32},
    {"rope.freq_base_swa", f32},
    {"rope.scale_linear", f32},
    {"rope.scaling.type", str},
    {"rope.scaling.factor", f32},
    {"rope.scaling.attn_factor", f32},
    {"rope.scaling.original_context_length", u32},
    {"rope.scaling.finetuned", boolean},
    {"rope.scaling.yarn_log_multiplier", f32},
    {"rope.scaling.yarn_ext_factor", f32},
    {"rope.scaling.yarn_attn_factor", f32},
    {"rope.scaling.yarn_beta_fast", f32},
    {"rope.scaling.yarn_beta_slow", f32},
    {"ssm.conv_kernel", u32},
    {"ssm.inner_size", u32},
    {"ssm.state_size", u32},
    {"ssm.time_step_rank", u32},
    {"ssm.group_count", u32},
    {"ssm.dt_b_c_rms", boolean},
    {"wkv.head_size", u32},
    {"classifier.output_labels", array_of(value_type::string)},
}};

}  // namespace

std::optional<key_type> lookup(std::string_view key, std::string_view arch) noexcept {
    for (const entry& e : global_keys)
        if (e.name == key) return e.type;
    if (arch.empty() || key.size() <= arch.size() + 1 || !key.starts_with(arch) || key[arch.size()] != '.')
        return std::nullopt;
    const std::string_view suffix = key.substr(arch.size() + 1);
    for (const entry& e : arch_keys)
        if (e.name == suffix) return e.type;
    return std::nullopt;
}

std::string describe(const key_type& t) {
    const auto name = [](value_type v) {
        return v == value_type::string ? std::string("str") : std::string(to_string(v));
    };
    if (t.type == value_type::array) return "an array of " + name(t.element);
    if (t.per_layer_array) return name(t.type) + " (or an array of i32/u32, one per layer)";
    return name(t.type);
}

}  // namespace minfer::gguf::known_keys
