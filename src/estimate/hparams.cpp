// Reading llama.cpp's hyperparameters (see hparams.hpp). Each rule names the llama.cpp code it
// follows: src/llama-model.cpp (load_hparams and the per-architecture loaders) and
// src/llama-hparams.cpp (n_embd_k_gqa, n_embd_r, n_embd_s, set_swa_pattern).
#include "minfer/estimate/hparams.hpp"

#include <algorithm>
#include <new>
#include <optional>
#include <string_view>

namespace minfer::estimate {

using gguf::errc;
using gguf::error;
using gguf::result;
using gguf::unexpected;

const char* to_string(arch a) noexcept {
    switch (a) {
        case arch::llama: return "llama";
        case arch::qwen2: return "qwen2";
        case arch::qwen3: return "qwen3";
        case arch::qwen3moe: return "qwen3moe";
        case arch::gemma2: return "gemma2";
        case arch::gemma3: return "gemma3";
        case arch::phi3: return "phi3";
        case arch::deepseek2: return "deepseek2";
        case arch::mamba: return "mamba";
        case arch::openelm: return "openelm";
        case arch::unknown: break;
    }
    return "unknown";
}

bool hparams::any_swa() const noexcept { return std::find(swa_layers.begin(), swa_layers.end(), true) != swa_layers.end(); }

std::uint64_t hparams::n_embd_k_gqa(std::uint32_t il) const noexcept {
    const std::uint64_t kv = il < n_head_kv.size() ? n_head_kv[il] : 0;
    return std::uint64_t{n_embd_head_k} * kv;
}
std::uint64_t hparams::n_embd_v_gqa(std::uint32_t il) const noexcept {
    const std::uint64_t kv = il < n_head_kv.size() ? n_head_kv[il] : 0;
    return std::uint64_t{n_embd_head_v} * kv;
}
std::uint64_t hparams::n_embd_v_gqa_max() const noexcept {
    std::uint64_t m = 0;
    for (std::uint32_t il = 0; il < n_layer; ++il) m = std::max(m, n_embd_v_gqa(il));
    return m;
}
// llama_hparams::n_embd_r: (d_conv - 1) * (d_inner + 2 * n_group * d_state); the conv state.
std::uint64_t hparams::n_embd_r() const noexcept {
    if (!recurrent()) return 0;
    const std::uint64_t conv = ssm_d_conv > 0 ? ssm_d_conv - 1 : 0;
    return conv * (std::uint64_t{ssm_d_inner} + 2 * std::uint64_t{ssm_n_group} * ssm_d_state);
}
// llama_hparams::n_embd_s: d_state * d_inner; the scan state.
std::uint64_t hparams::n_embd_s() const noexcept {
    if (!recurrent()) return 0;
    return std::uint64_t{ssm_d_state} * ssm_d_inner;
}

namespace {

arch arch_of(std::string_view name) noexcept {
    constexpr std::pair<std::string_view, arch> table[] = {
        {"llama", arch::llama},   {"qwen2", arch::qwen2},   {"qwen3", arch::qwen3},         {"qwen3moe", arch::qwen3moe},
        {"gemma2", arch::gemma2}, {"gemma3", arch::gemma3}, {"phi3", arch::phi3},           {"deepseek2", arch::deepseek2},
        {"mamba", arch::mamba},   {"openelm", arch::openelm},
    };
    for (const auto& [n, a] : table)
        if (n == name) return a;
    return arch::unknown;
}

error bad_value(std::string_view key, std::uint64_t expected, std::uint64_t found, std::string why) {
    error e;
    e.code = errc::bad_hyperparameter;
    e.where = gguf::section::metadata;
    e.subject = key;
    e.expected = expected;
    e.found = found;
    e.detail = std::move(why);
    return e;
}

// A per-layer array whose length is not the layer count.
error not_one_per_layer(const std::string& k, std::uint64_t n_layer, std::uint64_t size) {
    return bad_value(k, n_layer, size,
                     std::string("key ").append(k).append(" has ").append(std::to_string(size))
                         .append(" elements, expected one per layer (").append(std::to_string(n_layer)).append(")"));
}

// A failure of the library's accessors, given a detail in words and the key as subject.
error with_key(error e, std::string_view key, std::string why) {
    if (e.subject.empty()) e.subject = key;
    if (e.detail.empty()) e.detail = std::move(why);
    return e;
}

// Every width key within max_width (see hparams.hpp): the estimate's products then stay within
// 64 bits for any context llama.cpp accepts (its own figures are checked again as they are summed).
std::optional<error> check_widths(const std::string& prefix, const hparams& hp) {
    auto key = [&](std::string_view suffix) { return std::string(prefix).append(".").append(suffix); };
    auto first_over = [](const std::vector<std::uint32_t>& v) {
        std::uint32_t m = 0;
        for (const std::uint32_t x : v) m = std::max(m, x);
        return m;
    };
    const std::pair<const char*, std::uint32_t> widths[] = {
        {"embedding_length", hp.n_embd},
        {"feed_forward_length", first_over(hp.n_ff)},
        {"attention.head_count", first_over(hp.n_head)},
        {"attention.head_count_kv", first_over(hp.n_head_kv)},
        {"attention.key_length", hp.n_embd_head_k},
        {"attention.value_length", hp.n_embd_head_v},
        {"rope.dimension_count", hp.n_rot},
        {"attention.key_length_mla", hp.n_embd_head_k_mla},
        {"attention.value_length_mla", hp.n_embd_head_v_mla},
        {"attention.kv_lora_rank", hp.n_lora_kv},
        {"attention.q_lora_rank", hp.n_lora_q},
        {"expert_feed_forward_length", hp.n_ff_exp},
        {"expert_shared_feed_forward_length", hp.n_ff_shexp},
        {"expert_shared_count", hp.n_expert_shared},
        {"attention.sliding_window", hp.n_swa},
        {"ssm.conv_kernel", hp.ssm_d_conv},
        {"ssm.inner_size", hp.ssm_d_inner},
        {"ssm.state_size", hp.ssm_d_state},
        {"ssm.time_step_rank", hp.ssm_dt_rank},
        {"ssm.group_count", hp.ssm_n_group},
    };
    for (const auto& [suffix, v] : widths) {
        // The window is a number of tokens, not a width: bounded by the context instead.
        if (std::string_view(suffix) == "attention.sliding_window") continue;
        if (v <= max_width) continue;
        const std::string k = key(suffix);
        return bad_value(k, max_width, v,
                         std::string("key ").append(k).append(" = ").append(std::to_string(v))
                             .append(": more than ").append(std::to_string(max_width))
                             .append(", wider than any model; llama.cpp's sizes computed from it would overflow"));
    }
    return std::nullopt;
}

class reader {
public:
    reader(const gguf::model& m, std::string arch_name) : m_(m), prefix_(std::move(arch_name)) {}

    std::string key(std::string_view suffix) const {
        std::string k = prefix_;
        k += '.';
        k += suffix;
        return k;
    }

    // A required u32 scalar (any stored integer width, range-checked).
    result<std::uint32_t> u32(std::string_view suffix) const {
        const std::string k = key(suffix);
        if (m_.find(k) == nullptr) {
            error e;
            e.code = errc::key_not_found;
            e.where = gguf::section::metadata;
            e.subject = k;
            e.detail = std::string("key ").append(k).append(" not found; llama.cpp requires it for this architecture");
            return unexpected(std::move(e));
        }
        return scalar(k);
    }
    // An optional u32 scalar.
    result<std::uint32_t> u32_or(std::string_view suffix, std::uint32_t fallback) const {
        const std::string k = key(suffix);
        if (m_.find(k) == nullptr) return fallback;
        return scalar(k);
    }
    bool has(std::string_view suffix) const { return m_.find(key(suffix)) != nullptr; }

    // llama.cpp's get_key_or_arr: a scalar repeated for every layer, or an array of exactly n.
    // nullopt: absent (the caller decides whether that is allowed).
    result<std::optional<std::vector<std::uint32_t>>> per_layer(std::string_view suffix, std::uint32_t n) const {
        const std::string k = key(suffix);
        const gguf::kv* e = m_.find(k);
        if (e == nullptr) return std::optional<std::vector<std::uint32_t>>{};
        if (!e->is_array()) {
            auto v = scalar(k);
            if (!v) return unexpected(v.error());
            return std::optional<std::vector<std::uint32_t>>(std::vector<std::uint32_t>(n, *v));
        }
        auto a = e->get<gguf::array_view>();
        if (!a) return unexpected(with_key(a.error(), k, "per-layer array unreadable"));
        if (a->size() != n)
            return unexpected(not_one_per_layer(k, n, a->size()));
        std::vector<std::uint32_t> out(n);
        auto c = a->copy_to(std::span<std::uint32_t>(out));
        if (!c) return unexpected(with_key(c.error(), k, std::string("key ").append(k).append(": an element is not a 32-bit count")));
        return std::optional<std::vector<std::uint32_t>>(std::move(out));
    }

    // An optional per-layer bool array (llama.cpp's sliding_window_pattern); nullopt when absent.
    result<std::optional<std::vector<bool>>> bool_layers(std::string_view suffix, std::uint32_t n) const {
        const std::string k = key(suffix);
        const gguf::kv* e = m_.find(k);
        if (e == nullptr) return std::optional<std::vector<bool>>{};
        auto a = e->get<gguf::array_view>();
        if (!a) return unexpected(with_key(a.error(), k, std::string("key ").append(k).append(" must be an array of bool, one per layer")));
        if (a->size() != n)
            return unexpected(not_one_per_layer(k, n, a->size()));
        std::vector<std::uint8_t> raw(n);
        std::vector<bool> out(n);
        // copy_to<bool> needs a bool span; vector<bool> has none, so go through a plain array.
        std::unique_ptr<bool[]> tmp(new bool[n]);
        auto c = a->copy_to(std::span<bool>(tmp.get(), n));
        if (!c) return unexpected(with_key(c.error(), k, std::string("key ").append(k).append(" must be an array of bool")));
        for (std::uint32_t i = 0; i < n; ++i) out[i] = tmp[i];
        return std::optional<std::vector<bool>>(std::move(out));
    }

private:
    result<std::uint32_t> scalar(const std::string& k) const {
        auto v = m_.get_as<std::uint32_t>(k);
        if (!v) {
            error e = v.error();
            e.subject = k;
            if (e.code == errc::value_out_of_range)
                e.detail = std::string("key ").append(k).append(" does not fit in 32 bits (llama.cpp reads it as uint32)");
            else if (e.code == errc::type_mismatch)
                e.detail = std::string("key ").append(k).append(" is not an integer");
            return unexpected(std::move(e));
        }
        return *v;
    }

    const gguf::model& m_;
    std::string prefix_;
};

#define MINFER_TRY(var, expr)                          \
    auto var##_r = (expr);                             \
    if (!var##_r) return unexpected(var##_r.error()); \
    auto var = std::move(*var##_r)

result<hparams> read(const gguf::model& m) {
    hparams hp;
    auto name = m.get<std::string_view>("general.architecture");
    if (!name) {
        error e = name.error();
        e.subject = "general.architecture";
        e.detail = name.error().code == errc::key_not_found ? "key general.architecture not found; the architecture decides the KV cache"
                                                            : "key general.architecture is not a string";
        return unexpected(std::move(e));
    }
    hp.architecture = std::string(*name);
    hp.kind = arch_of(*name);
    reader r(m, hp.architecture);

    // The vocabulary: llama.cpp's n_vocab is the token list's length.
    if (const gguf::kv* t = m.find("tokenizer.ggml.tokens"); t != nullptr && t->is_array()) {
        hp.n_vocab = t->count;
    } else {
        MINFER_TRY(vs, r.u32_or("vocab_size", 0));
        hp.n_vocab = vs;
        // No vocabulary in the metadata: the token embedding's rows.
        if (const gguf::tensor_ref* emb = m.find_tensor("token_embd.weight"); hp.n_vocab == 0 && emb != nullptr && emb->info->n_dims >= 2)
            hp.n_vocab = static_cast<std::uint64_t>(emb->info->ne[1]);
    }

    if (!hp.known()) {
        // Unknown: whatever the generic keys say, never an error for their absence.
        auto ctx = r.u32_or("context_length", 0);
        hp.n_ctx_train = ctx ? *ctx : 0;
        auto nl = r.u32_or("block_count", 0);
        hp.n_layer = nl ? *nl : 0;
        auto ne = r.u32_or("embedding_length", 0);
        hp.n_embd = ne ? *ne : 0;
        return hp;
    }

    MINFER_TRY(n_layer, r.u32("block_count"));
    if (n_layer == 0 || n_layer > max_layers)
        return unexpected(bad_value(r.key("block_count"), max_layers, n_layer,
                                    std::string("key ").append(r.key("block_count")).append(" = ")
                                        .append(std::to_string(n_layer))
                                        .append(": llama.cpp loads 1 to ")
                                        .append(std::to_string(max_layers))
                                        .append(" layers")));
    hp.n_layer = n_layer;
    MINFER_TRY(ctx_train, r.u32("context_length"));
    if (ctx_train == 0)
        return unexpected(bad_value(r.key("context_length"), 1, 0,
                                    std::string("key ").append(r.key("context_length")).append(" = 0: no training context")));
    hp.n_ctx_train = ctx_train;
    MINFER_TRY(n_embd, r.u32("embedding_length"));
    if (n_embd == 0)
        return unexpected(bad_value(r.key("embedding_length"), 1, 0,
                                    std::string("key ").append(r.key("embedding_length")).append(" = 0")));
    hp.n_embd = n_embd;

    MINFER_TRY(ff, r.per_layer("feed_forward_length", n_layer));
    hp.n_ff = ff ? std::move(*ff) : std::vector<std::uint32_t>(n_layer, 0);

    if (hp.recurrent()) {
        // llama.cpp's mamba loader: the four ssm keys are required, group_count is mamba2's.
        MINFER_TRY(d_conv, r.u32("ssm.conv_kernel"));
        MINFER_TRY(d_inner, r.u32("ssm.inner_size"));
        MINFER_TRY(d_state, r.u32("ssm.state_size"));
        MINFER_TRY(dt_rank, r.u32("ssm.time_step_rank"));
        MINFER_TRY(n_group, r.u32_or("ssm.group_count", 0));
        hp.ssm_d_conv = d_conv;
        hp.ssm_d_inner = d_inner;
        hp.ssm_d_state = d_state;
        hp.ssm_dt_rank = dt_rank;
        hp.ssm_n_group = n_group;
        if (d_inner == 0 || d_state == 0)
            return unexpected(bad_value(r.key(d_inner == 0 ? "ssm.inner_size" : "ssm.state_size"), 1, 0,
                                        std::string("key ").append(r.key(d_inner == 0 ? "ssm.inner_size" : "ssm.state_size")).append(" = 0")));
        hp.n_head.assign(n_layer, 0);
        hp.n_head_kv.assign(n_layer, 0);
        if (auto e = check_widths(hp.architecture, hp)) return unexpected(std::move(*e));
        return hp;
    }

    // Attention. head_count: scalar or per layer; llama.cpp then defaults head_count_kv to it.
    MINFER_TRY(heads, r.per_layer("attention.head_count", n_layer));
    if (!heads) {
        error e;
        e.code = errc::key_not_found;
        e.where = gguf::section::metadata;
        e.subject = r.key("attention.head_count");
        e.detail = std::string("key ").append(r.key("attention.head_count")).append(" not found; llama.cpp requires it for this architecture");
        return unexpected(std::move(e));
    }
    hp.n_head = std::move(*heads);
    MINFER_TRY(heads_kv, r.per_layer("attention.head_count_kv", n_layer));
    hp.n_head_kv = heads_kv ? std::move(*heads_kv) : hp.n_head;
    for (std::uint32_t il = 0; il < n_layer; ++il) {
        const std::uint32_t h = hp.n_head[il];
        const std::uint32_t kv = hp.n_head_kv[il];
        if (h == 0)
            return unexpected(bad_value(r.key("attention.head_count"), 1, 0,
                                        std::string("key ").append(r.key("attention.head_count")).append(": layer ")
                                            .append(std::to_string(il))
                                            .append(" has 0 attention heads")));
        if (kv == 0 || h % kv != 0)
            return unexpected(bad_value(r.key("attention.head_count_kv"), h, kv,
                                        std::string("key ").append(r.key("attention.head_count_kv")).append(": layer ")
                                            .append(std::to_string(il))
                                            .append(" has ")
                                            .append(std::to_string(kv))
                                            .append(" KV heads, which must be at least 1 and divide its ")
                                            .append(std::to_string(h))
                                            .append(" attention heads")));
    }
    // llama.cpp: n_embd_head_k = n_embd / n_head(0) unless key_length says otherwise; the same for v.
    const std::uint32_t head_default = n_embd / hp.n_head[0];
    MINFER_TRY(hk, r.u32_or("attention.key_length", head_default));
    MINFER_TRY(hv, r.u32_or("attention.value_length", head_default));
    if (hk == 0 || hv == 0) {
        const char* which = hk == 0 ? "attention.key_length" : "attention.value_length";
        return unexpected(bad_value(r.key(which), 1, 0,
                                    std::string("key ").append(r.key(which)).append(" is 0 (or embedding_length is smaller than head_count)")));
    }
    hp.n_embd_head_k = hk;
    hp.n_embd_head_v = hv;
    MINFER_TRY(n_rot, r.u32_or("rope.dimension_count", hk));
    hp.n_rot = n_rot;

    // Experts (llama with experts is mistral-style MoE; qwen3moe; deepseek2).
    MINFER_TRY(n_expert, r.u32_or("expert_count", 0));
    MINFER_TRY(n_expert_used, r.u32_or("expert_used_count", 0));
    if (n_expert > max_experts)
        return unexpected(bad_value(r.key("expert_count"), max_experts, n_expert,
                                    std::string("key ").append(r.key("expert_count")).append(" = ")
                                        .append(std::to_string(n_expert))
                                        .append(": llama.cpp allows at most ")
                                        .append(std::to_string(max_experts))));
    if (n_expert_used > n_expert || (n_expert > 0 && n_expert_used == 0))
        return unexpected(bad_value(r.key("expert_used_count"), n_expert, n_expert_used,
                                    std::string("key ").append(r.key("expert_used_count")).append(" = ")
                                        .append(std::to_string(n_expert_used))
                                        .append(": must be 1 to expert_count (")
                                        .append(std::to_string(n_expert))
                                        .append(")")));
    hp.n_expert = n_expert;
    hp.n_expert_used = n_expert_used;
    MINFER_TRY(n_ff_exp, r.u32_or("expert_feed_forward_length", 0));
    MINFER_TRY(n_ff_shexp, r.u32_or("expert_shared_feed_forward_length", 0));
    MINFER_TRY(n_expert_shared, r.u32_or("expert_shared_count", 0));
    MINFER_TRY(n_dense_lead, r.u32_or("leading_dense_block_count", 0));
    hp.n_ff_exp = n_ff_exp;
    hp.n_ff_shexp = n_ff_shexp;
    hp.n_expert_shared = n_expert_shared;
    hp.n_layer_dense_lead = n_dense_lead;

    // Sliding window: gemma2 and gemma3 (llama.cpp's set_swa_pattern: layer il uses the window when
    // il % n < n - 1). phi3 reads the window but llama.cpp has its SWA disabled ("Phi SWA is
    // currently disabled"): full cache on every layer.
    auto pattern = [&](std::uint32_t n) {
        hp.swa_layers.assign(n_layer, false);
        for (std::uint32_t il = 0; il < n_layer; ++il) hp.swa_layers[il] = (n == 0) || (il % n < n - 1);
    };
    if (hp.kind == arch::gemma2 || hp.kind == arch::gemma3) {
        if (hp.kind == arch::gemma2) {
            MINFER_TRY(w, r.u32_or("attention.sliding_window", 4096));  // llama.cpp's gemma2 default
            hp.n_swa = w;
            pattern(2);
        } else {
            MINFER_TRY(w, r.u32("attention.sliding_window"));
            hp.n_swa = w;
            pattern(6);
        }
        MINFER_TRY(explicit_pattern, r.bool_layers("attention.sliding_window_pattern", n_layer));
        if (explicit_pattern) hp.swa_layers = std::move(*explicit_pattern);
        if (hp.n_swa == 0) hp.swa_layers.clear();  // no window: llama.cpp's SWA type none
    }

    // MLA (deepseek2 files converted for it carry key_length_mla and value_length_mla).
    if (hp.kind == arch::deepseek2) {
        MINFER_TRY(kmla, r.u32_or("attention.key_length_mla", 0));
        MINFER_TRY(vmla, r.u32_or("attention.value_length_mla", 0));
        MINFER_TRY(lora_kv, r.u32("attention.kv_lora_rank"));
        MINFER_TRY(lora_q, r.u32_or("attention.q_lora_rank", 0));
        hp.n_embd_head_k_mla = kmla;
        hp.n_embd_head_v_mla = vmla;
        hp.is_mla = kmla != 0 && vmla != 0;
        hp.n_lora_kv = lora_kv;
        hp.n_lora_q = lora_q;
    }
    if (auto e = check_widths(hp.architecture, hp)) return unexpected(std::move(*e));
    return hp;
}

}  // namespace

result<hparams> read_hparams(const gguf::model& m) noexcept {
    try {
        return read(m);
    } catch (const std::bad_alloc&) {
        return unexpected(gguf::out_of_memory_error("reading hyperparameters"));
    }
}

}  // namespace minfer::estimate
