// The synthetic per-architecture models (arch_models.hpp). Shapes follow llama.cpp's load_tensors
// (ggml order: ne[0] is the input width). Weights are zeros (holes), in f32.
#include "arch_models.hpp"

#include <cstdint>
#include <span>
#include <vector>

#include "minfer/gguf_write/writer.hpp"
#include "sample_model.hpp"

namespace minfer::estimate_test {
namespace {

using gguf::tensor_type;

// Shared shapes: 128 wide, 4 heads of 32 (a q8_0 / q4_0 block divides a head: llama.cpp requires
// it of a quantized cache), 2 KV heads (GQA), 4 layers, 512-token vocabulary.
constexpr std::int64_t n_embd = 128;
constexpr std::int64_t n_head = 4;
constexpr std::int64_t n_head_kv = 2;
constexpr std::int64_t head_dim = 32;
constexpr std::int64_t n_ff = 256;
constexpr std::uint32_t n_layer = 4;

struct model {
    gguf::writer w;
    std::string arch;
    std::int64_t n_vocab = sample::n_vocab;  ///< the tokens written (phi3 has three more)

    void key_u32(const std::string& k, std::uint32_t v) { w.set_u32(arch + "." + k, v); }
    void key_f32(const std::string& k, float v) { w.set_f32(arch + "." + k, v); }
    void key_bool(const std::string& k, bool v) { w.set_bool(arch + "." + k, v); }
    void key_u32s(const std::string& k, const std::vector<std::uint32_t>& v) {
        w.set_array(arch + "." + k, gguf::value_type::u32, std::span<const std::uint32_t>(v));
    }
    void t(const std::string& name, std::vector<std::int64_t> ne) {
        w.add_zero_tensor(name, tensor_type::f32, std::span<const std::int64_t>(ne));
    }
    void blk(std::uint32_t i, const std::string& name, std::vector<std::int64_t> ne) {
        t(std::string("blk.").append(std::to_string(i)).append(".").append(name), std::move(ne));
    }
};

void common_metadata(model& m, std::uint32_t n_head_kv_all = static_cast<std::uint32_t>(n_head_kv)) {
    m.w.set_string("general.architecture", m.arch);
    m.w.set_string("general.type", "model");
    m.w.set_string("general.name", std::string("minfer synthetic ").append(m.arch));
    m.w.set_u32("general.file_type", 0);
    m.key_u32("block_count", n_layer);
    m.key_u32("context_length", 8192);
    m.key_u32("embedding_length", static_cast<std::uint32_t>(n_embd));
    m.key_u32("feed_forward_length", static_cast<std::uint32_t>(n_ff));
    m.key_u32("attention.head_count", static_cast<std::uint32_t>(n_head));
    if (n_head_kv_all != 0) m.key_u32("attention.head_count_kv", n_head_kv_all);
    m.key_f32("rope.freq_base", 10000.0f);
    m.key_f32("attention.layer_norm_rms_epsilon", 1e-6f);

    const sample::vocabulary v = sample::sample_vocabulary();
    m.w.set_string("tokenizer.ggml.model", "gpt2");
    m.w.set_string("tokenizer.ggml.pre", "qwen2");
    std::vector<std::string> tokens = v.tokens;
    std::vector<std::int32_t> types = v.token_types;
    if (m.arch == "phi3") {  // llama.cpp's phi3 vocabulary looks these up (token_to_id.at("</s>"), ...)
        tokens.back() = "<|end|>";
        for (const char* t : {"<s>", "</s>", "<unk>"}) {
            tokens.emplace_back(t);
            types.push_back(sample::token_type_control);
        }
    }
    m.n_vocab = static_cast<std::int64_t>(tokens.size());
    m.w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(tokens));
    m.w.set_array("tokenizer.ggml.token_type", gguf::value_type::i32, std::span<const std::int32_t>(types));
    m.w.set_strings("tokenizer.ggml.merges", std::span<const std::string>(v.merges));
    m.w.set_u32("tokenizer.ggml.eos_token_id", sample::eos_token_id);
    m.w.set_u32("tokenizer.ggml.padding_token_id", sample::pad_token_id);
    m.w.set_u32("tokenizer.ggml.bos_token_id", sample::bos_token_id);
    m.w.set_bool("tokenizer.ggml.add_bos_token", false);
}

void embeddings(model& m, bool output = true) {
    m.t("token_embd.weight", {n_embd, m.n_vocab});
    m.t("output_norm.weight", {n_embd});
    if (output) m.t("output.weight", {n_embd, m.n_vocab});
}

// q, k, v, o of a layer with `kv` KV heads.
void attention(model& m, std::uint32_t i, std::int64_t kv, bool bias = false, bool qk_norm = false) {
    m.blk(i, "attn_norm.weight", {n_embd});
    m.blk(i, "attn_q.weight", {n_embd, n_head * head_dim});
    m.blk(i, "attn_k.weight", {n_embd, kv * head_dim});
    m.blk(i, "attn_v.weight", {n_embd, kv * head_dim});
    m.blk(i, "attn_output.weight", {n_head * head_dim, n_embd});
    if (bias) {
        m.blk(i, "attn_q.bias", {n_head * head_dim});
        m.blk(i, "attn_k.bias", {kv * head_dim});
        m.blk(i, "attn_v.bias", {kv * head_dim});
    }
    if (qk_norm) {
        m.blk(i, "attn_q_norm.weight", {head_dim});
        m.blk(i, "attn_k_norm.weight", {head_dim});
    }
}

void dense_ffn(model& m, std::uint32_t i, bool norm = true) {
    if (norm) m.blk(i, "ffn_norm.weight", {n_embd});
    m.blk(i, "ffn_gate.weight", {n_embd, n_ff});
    m.blk(i, "ffn_down.weight", {n_ff, n_embd});
    m.blk(i, "ffn_up.weight", {n_embd, n_ff});
}

void moe_ffn(model& m, std::uint32_t i, std::int64_t n_expert, std::int64_t ff_exp) {
    m.blk(i, "ffn_norm.weight", {n_embd});
    m.blk(i, "ffn_gate_inp.weight", {n_embd, n_expert});
    m.blk(i, "ffn_gate_exps.weight", {n_embd, ff_exp, n_expert});
    m.blk(i, "ffn_down_exps.weight", {ff_exp, n_embd, n_expert});
    m.blk(i, "ffn_up_exps.weight", {n_embd, ff_exp, n_expert});
}

void make_llama(model& m) {
    // head_count_kv as a per-layer array (llama.cpp's llama loader reads an array, but its tensors
    // take one width for all layers, so the values are equal).
    const std::vector<std::uint32_t> kv = {2, 2, 2, 2};
    common_metadata(m, 0);
    m.key_u32s("attention.head_count_kv", kv);
    m.key_u32("rope.dimension_count", static_cast<std::uint32_t>(head_dim));
    m.w.set_u32("llama.vocab_size", static_cast<std::uint32_t>(m.n_vocab));
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        attention(m, i, kv[i]);
        dense_ffn(m, i);
    }
}

void make_llama_moe(model& m) {  // Mixtral-style: llama arch with experts
    common_metadata(m);
    m.key_u32("expert_count", 4);
    m.key_u32("expert_used_count", 2);
    m.key_u32("rope.dimension_count", static_cast<std::uint32_t>(head_dim));
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        attention(m, i, n_head_kv);
        moe_ffn(m, i, 4, n_ff);
    }
}

void make_qwen2(model& m) {
    common_metadata(m);
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        attention(m, i, n_head_kv, true);
        dense_ffn(m, i);
    }
}

void make_qwen3(model& m) {
    common_metadata(m);
    m.key_u32("attention.key_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("attention.value_length", static_cast<std::uint32_t>(head_dim));
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        attention(m, i, n_head_kv, false, true);
        dense_ffn(m, i);
    }
}

void make_qwen3moe(model& m) {
    common_metadata(m);
    m.key_u32("attention.key_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("attention.value_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("expert_count", 8);
    m.key_u32("expert_used_count", 2);
    m.key_u32("expert_feed_forward_length", 32);
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        attention(m, i, n_head_kv, false, true);
        moe_ffn(m, i, 8, 32);
    }
}

void gemma_layer(model& m, std::uint32_t i, bool qk_norm) {
    attention(m, i, n_head_kv, false, qk_norm);
    m.blk(i, "post_attention_norm.weight", {n_embd});
    dense_ffn(m, i);
    m.blk(i, "post_ffw_norm.weight", {n_embd});
}

void make_gemma2(model& m) {
    common_metadata(m);
    m.key_u32("attention.key_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("attention.value_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("attention.sliding_window", 128);
    m.key_f32("attn_logit_softcapping", 50.0f);
    m.key_f32("final_logit_softcapping", 30.0f);
    embeddings(m, false);
    for (std::uint32_t i = 0; i < n_layer; ++i) gemma_layer(m, i, false);
}

void make_gemma3(model& m) {
    common_metadata(m);
    m.key_u32("attention.key_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("attention.value_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("attention.sliding_window", 96);
    m.key_u32("block_count", 8);
    embeddings(m, false);
    for (std::uint32_t i = 0; i < 8; ++i) gemma_layer(m, i, true);  // 8 layers: SWA pattern 6 gives 2 global
}

void make_phi3(model& m) {
    common_metadata(m);
    m.key_u32("rope.dimension_count", static_cast<std::uint32_t>(head_dim));
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        m.blk(i, "attn_norm.weight", {n_embd});
        m.blk(i, "attn_qkv.weight", {n_embd, n_head * head_dim + 2 * n_head_kv * head_dim});
        m.blk(i, "attn_output.weight", {n_head * head_dim, n_embd});
        m.blk(i, "ffn_norm.weight", {n_embd});
        m.blk(i, "ffn_down.weight", {n_ff, n_embd});
        m.blk(i, "ffn_up.weight", {n_embd, 2 * n_ff});
    }
}

// DeepSeek-V2-style MLA: q_lora_rank 64, kv_lora_rank 64, qk_nope 32 + qk_rope 32, v 32; layer 0
// dense, the others MoE with 4 routed experts (2 used) and one shared expert.
void make_deepseek2(model& m) {
    constexpr std::int64_t q_lora = 64, kv_lora = 64, nope = 32, rope = 32, vdim = 32, ff_exp = 64, n_expert = 4;
    common_metadata(m, 1);  // MLA: one KV "head", the compressed kv shared by all heads
    // MLA as current conversions write it: the cached K is the compressed kv (kv_lora + rope) and V
    // its first kv_lora values; the per-head sizes are the *_mla keys.
    m.key_u32("attention.key_length", static_cast<std::uint32_t>(kv_lora + rope));
    m.key_u32("attention.value_length", static_cast<std::uint32_t>(kv_lora));
    m.key_u32("attention.key_length_mla", static_cast<std::uint32_t>(nope + rope));
    m.key_u32("attention.value_length_mla", static_cast<std::uint32_t>(vdim));
    m.key_u32("attention.kv_lora_rank", static_cast<std::uint32_t>(kv_lora));
    m.key_u32("attention.q_lora_rank", static_cast<std::uint32_t>(q_lora));
    m.key_u32("rope.dimension_count", static_cast<std::uint32_t>(rope));
    m.key_u32("leading_dense_block_count", 1);
    m.key_u32("expert_feed_forward_length", static_cast<std::uint32_t>(ff_exp));
    m.key_u32("expert_count", static_cast<std::uint32_t>(n_expert));
    m.key_u32("expert_used_count", 2);
    m.key_u32("expert_shared_count", 1);
    m.key_f32("expert_weights_scale", 1.0f);
    m.w.set_u32("deepseek2.vocab_size", static_cast<std::uint32_t>(m.n_vocab));
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        m.blk(i, "attn_norm.weight", {n_embd});
        m.blk(i, "attn_q_a.weight", {n_embd, q_lora});
        m.blk(i, "attn_q_a_norm.weight", {q_lora});
        m.blk(i, "attn_q_b.weight", {q_lora, n_head * (nope + rope)});
        m.blk(i, "attn_kv_a_mqa.weight", {n_embd, kv_lora + rope});
        m.blk(i, "attn_kv_a_norm.weight", {kv_lora});
        m.blk(i, "attn_k_b.weight", {nope, kv_lora, n_head});
        m.blk(i, "attn_v_b.weight", {kv_lora, vdim, n_head});
        m.blk(i, "attn_output.weight", {n_head * vdim, n_embd});
        if (i == 0) {
            dense_ffn(m, i);
        } else {
            moe_ffn(m, i, n_expert, ff_exp);
            m.blk(i, "ffn_gate_shexp.weight", {n_embd, ff_exp});
            m.blk(i, "ffn_down_shexp.weight", {ff_exp, n_embd});
            m.blk(i, "ffn_up_shexp.weight", {n_embd, ff_exp});
        }
    }
}

// Mamba (v1): d_inner 256, d_state 16, d_conv 4, dt_rank 4.
void make_mamba(model& m) {
    constexpr std::int64_t d_inner = 256, d_state = 16, d_conv = 4, dt_rank = 4;
    common_metadata(m, 0);
    m.key_u32("feed_forward_length", 0);
    m.key_u32("attention.head_count", 0);
    m.key_u32("ssm.conv_kernel", static_cast<std::uint32_t>(d_conv));
    m.key_u32("ssm.inner_size", static_cast<std::uint32_t>(d_inner));
    m.key_u32("ssm.state_size", static_cast<std::uint32_t>(d_state));
    m.key_u32("ssm.time_step_rank", static_cast<std::uint32_t>(dt_rank));
    embeddings(m);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        m.blk(i, "attn_norm.weight", {n_embd});
        m.blk(i, "ssm_in.weight", {n_embd, 2 * d_inner});
        m.blk(i, "ssm_conv1d.weight", {d_conv, d_inner});
        m.blk(i, "ssm_conv1d.bias", {d_inner});
        m.blk(i, "ssm_x.weight", {d_inner, dt_rank + 2 * d_state});
        m.blk(i, "ssm_dt.weight", {dt_rank, d_inner});
        m.blk(i, "ssm_dt.bias", {d_inner});
        m.blk(i, "ssm_a", {d_state, d_inner});
        m.blk(i, "ssm_d", {d_inner});
        m.blk(i, "ssm_out.weight", {d_inner, n_embd});
    }
}

// OpenELM: per-layer head counts, KV head counts and feed-forward widths (arrays), fused qkv with
// q/k norms. The one architecture here whose per-layer KV heads differ (llama.cpp's llama loader
// reads an array but sizes every layer's tensors alike).
void make_openelm(model& m) {
    const std::vector<std::uint32_t> heads = {4, 4, 8, 8};
    const std::vector<std::uint32_t> kv = {1, 2, 2, 4};
    const std::vector<std::uint32_t> ff = {256, 256, 384, 384};
    common_metadata(m, 0);
    m.key_u32s("attention.head_count", heads);
    m.key_u32s("attention.head_count_kv", kv);
    m.key_u32s("feed_forward_length", ff);
    m.key_u32("attention.key_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("attention.value_length", static_cast<std::uint32_t>(head_dim));
    m.key_u32("rope.dimension_count", static_cast<std::uint32_t>(head_dim));
    embeddings(m, false);
    for (std::uint32_t i = 0; i < n_layer; ++i) {
        const std::int64_t h = heads[i], k = kv[i], f = ff[i];
        m.blk(i, "attn_norm.weight", {n_embd});
        m.blk(i, "attn_qkv.weight", {n_embd, head_dim * (h + 2 * k)});
        m.blk(i, "attn_q_norm.weight", {head_dim});
        m.blk(i, "attn_k_norm.weight", {head_dim});
        m.blk(i, "attn_output.weight", {head_dim * h, n_embd});
        m.blk(i, "ffn_norm.weight", {n_embd});
        m.blk(i, "ffn_gate.weight", {n_embd, f});
        m.blk(i, "ffn_down.weight", {f, n_embd});
        m.blk(i, "ffn_up.weight", {n_embd, f});
    }
}

}  // namespace

const std::vector<std::string>& arch_names() {
    static const std::vector<std::string> names = {"llama", "llama-moe", "qwen2", "qwen3", "qwen3moe",
                                                   "gemma2", "gemma3", "phi3", "deepseek2", "mamba",
                                                   "openelm"};
    return names;
}

gguf::result<void> make_arch_model(const std::string& arch, const std::filesystem::path& out) noexcept {
    try {
        model m;
        m.arch = arch == "llama-moe" ? std::string("llama") : arch;
        if (arch == "llama") make_llama(m);
        else if (arch == "llama-moe") make_llama_moe(m);
        else if (arch == "qwen2") make_qwen2(m);
        else if (arch == "qwen3") make_qwen3(m);
        else if (arch == "qwen3moe") make_qwen3moe(m);
        else if (arch == "gemma2") make_gemma2(m);
        else if (arch == "gemma3") make_gemma3(m);
        else if (arch == "phi3") make_phi3(m);
        else if (arch == "deepseek2") make_deepseek2(m);
        else if (arch == "mamba") make_mamba(m);
        else if (arch == "openelm") make_openelm(m);
        else {
            gguf::error e;
            e.code = gguf::errc::bad_value_type;
            e.subject = arch;
            e.detail = "unknown architecture (see arch_names())";
            return gguf::unexpected(e);
        }
        return m.w.write(out);
    } catch (...) {
        gguf::error e;
        e.code = gguf::errc::out_of_memory;
        return gguf::unexpected(e);
    }
}

}  // namespace minfer::estimate_test
