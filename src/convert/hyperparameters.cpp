// hyperparameters.hpp: TextModel.set_gguf_parameters and the supported classes' additions.
#include "minfer/convert/hyperparameters.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "minfer/convert/errors.hpp"
#include "tokenizer_files.hpp"

namespace minfer::convert {
namespace {

using detail::fail_file;

class keys_builder {
public:
    keys_builder(const hf_config& c, conversion_file_type ft) : c_(c), ft_(ft), arch_(gguf_name(c.arch)) {}

    std::vector<vocab_key> build() {
        u32(c_.find_hparam({"n_layers", "num_hidden_layers", "n_layer", "num_layers"}), "block_count", true);
        u32(c_.find_hparam({"max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length",
                            "model_max_length"}),
            "context_length");
        u32(c_.find_hparam({"hidden_size", "n_embd", "dim"}), "embedding_length");
        u32(c_.find_hparam({"prefix_dense_intermediate_size", "intermediate_size", "n_inner", "hidden_dim"}),
            "feed_forward_length");
        u32(c_.find_hparam({"num_attention_heads", "n_head", "n_heads"}), "attention.head_count");
        u32(c_.find_hparam({"num_key_value_heads", "n_kv_heads"}), "attention.head_count_kv");
        const json_value causal = c_.raw().member("is_causal");
        if (causal.as_bool() == false) put("attention.causal", false);
        rope_scaling();
        if (c_.rope_theta) put("rope.freq_base", static_cast<float>(*c_.rope_theta));
        f32(c_.find_hparam({"rms_norm_eps", "norm_eps"}), "attention.layer_norm_rms_epsilon");
        f32(c_.find_hparam({"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}), "attention.layer_norm_epsilon");
        u32(c_.find_hparam({"num_local_experts", "num_experts", "n_routed_experts"}), "expert_count");
        u32(c_.find_hparam({"num_experts_per_tok", "num_experts_per_token", "top_k_experts"}), "expert_used_count");
        u32(c_.raw().member("n_group"), "expert_group_count");
        u32(c_.raw().member("topk_group"), "expert_group_used_count");
        gating_function();
        const json_value head_dim = c_.raw().member("head_dim");
        if (!head_dim.is_none()) {
            u32(head_dim, "attention.key_length");
            u32(head_dim, "attention.value_length");
        }
        keys_.push_back({"general.file_type", static_cast<std::uint32_t>(ft_)});
        if (c_.arch == architecture::llama || c_.arch == architecture::mistral) {
            put("vocab_size", c_.vocab_size);
            put("rope.dimension_count", c_.head_size());  // head_dim, else hidden_size // heads
        }
        if (c_.arch == architecture::qwen3_moe) {
            u32(c_.raw().member("moe_intermediate_size"), "expert_feed_forward_length");
            u32(c_.raw().member("shared_expert_intermediate_size"), "expert_shared_feed_forward_length");
        }
        keys_.push_back({"general.quantization_version", std::uint32_t{2}});
        return std::move(keys_);
    }

private:
    [[noreturn]] void bad(const json_value& v, std::string_view key, std::string detail) const {
        fail_file(codes::bad_model_config, c_.file, v.present() ? v.offset() : c_.raw().offset(), key, std::move(detail));
    }

    void put(std::string_view suffix, vocab_value v) { set_key(keys_, std::string(arch_) + "." + std::string(suffix), std::move(v)); }

    // add_uint32: struct.pack("<I") of an int in [0, 2^32).
    void u32(const json_value& v, std::string_view suffix, bool required = false) {
        if (v.is_none()) {
            if (required) bad(v, suffix, "absent");
            return;
        }
        const auto n = v.as_uint();
        if (!n || !v.is_integer() || *n > std::numeric_limits<std::uint32_t>::max())
            bad(v, suffix, std::string("not an integer in [0, 2^32): ") + std::string(describe(v.kind())));
        put(suffix, static_cast<std::uint32_t>(*n));
    }

    // add_float32: struct.pack("<f") of a Python number (rounded to the nearest float; too large fails).
    void f32(const json_value& v, std::string_view suffix) {
        if (v.is_none()) return;
        const auto d = v.as_double();
        if (!d || v.as_bool()) bad(v, suffix, "not a number");
        if (std::fabs(*d) > static_cast<double>(std::numeric_limits<float>::max()) * (1.0 + 0x1p-24))
            bad(v, suffix, "out of float32's range");
        put(suffix, static_cast<float>(*d));
    }

    void rope_scaling() {
        const json_value rp = c_.rope_parameters();
        if (!rp.present()) return;
        for (std::string_view section : {"full_attention", "sliding_attention", "mrope_section"})
            if (rp.member(section).present())
                bad(rp.member(section), section, "rope parameters per attention kind or mrope sections are not converted here");
        if (!c_.rope_type) return;
        const std::string_view type = *c_.rope_type;
        const json_value factor = rp.member("factor");
        if (type == "linear" || type == "yarn") {
            if (factor.is_none()) return;  // the reference writes nothing then
            put("rope.scaling.type", std::string(type));
            f32(factor, "rope.scaling.factor");
            if (type == "yarn") {
                const json_value orig = rp.member("original_max_position_embeddings");
                if (orig.is_none()) bad(rp, "original_max_position_embeddings", "absent (yarn needs it)");
                u32(orig, "rope.scaling.original_context_length");
                f32(rp.member("extrapolation_factor"), "rope.scaling.yarn_ext_factor");
                const json_value attn = rp.member("attention_factor");
                f32(attn.present() ? attn : rp.member("attn_factor"), "rope.scaling.yarn_attn_factor");
                f32(rp.member("beta_fast"), "rope.scaling.yarn_beta_fast");
                f32(rp.member("beta_slow"), "rope.scaling.yarn_beta_slow");
            }
            return;
        }
        if (type == "default") return;  // the reference logs "Unknown RoPE type" and writes nothing
        std::string lower(type);
        for (char& ch : lower)
            if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
        if (lower == "llama3") {
            if (c_.arch != architecture::llama && c_.arch != architecture::mistral)
                bad(rp, "rope_type", "llama3 rope scaling outside a Llama checkpoint: the reference writes no rope_freqs then");
            return;  // model_plan adds rope_freqs
        }
        bad(rp, "rope_type", "'" + std::string(type) + "' is not converted here (linear, yarn, llama3 and default are)");
    }

    void gating_function() {
        const json_value f = c_.find_hparam({"score_function", "scoring_func", "score_func", "moe_router_activation",
                                             "moe_router_activation_func", "expert_selection_fn"});
        if (f.is_none()) return;
        const auto s = f.as_string();
        if (s == "softmax") put("expert_gating_func", std::uint32_t{1});
        else if (s == "sigmoid") put("expert_gating_func", std::uint32_t{2});
        else if (s == "sqrtsoftplus") put("expert_gating_func", std::uint32_t{4});
        else bad(f, "score_function", "not softmax, sigmoid or sqrtsoftplus");
    }

    const hf_config& c_;
    conversion_file_type ft_;
    std::string_view arch_;
    std::vector<vocab_key> keys_;
};

}  // namespace

gguf::result<std::vector<vocab_key>> hyperparameter_keys(const hf_config& config, conversion_file_type file_type) noexcept {
    try {
        return keys_builder(config, file_type).build();
    } catch (detail::convert_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("the hyperparameter keys"));
    }
}

}  // namespace minfer::convert
