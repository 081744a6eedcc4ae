// The estimate (see estimate.hpp). The KV figures restate llama.cpp's allocation exactly; the
// compute buffer restates the peak of ggml's allocator over the worst-case graph llama.cpp reserves
// (n_ubatch tokens, every one an output, the whole cache in view) from the tensors alive at each
// stage, with ggml's in-place reuse (softmax, norm and rope over their input).
#include "minfer/estimate/estimate.hpp"

#include <algorithm>
#include <new>
#include <string>

namespace minfer::estimate {

using gguf::errc;
using gguf::error;
using gguf::tensor_type;
using gguf::unexpected;

bool is_cache_type(tensor_type t) noexcept {
    switch (t) {
        case tensor_type::f32:
        case tensor_type::f16:
        case tensor_type::bf16:
        case tensor_type::q8_0:
        case tensor_type::q4_0:
        case tensor_type::q4_1:
        case tensor_type::iq4_nl:
        case tensor_type::q5_0:
        case tensor_type::q5_1: return true;
        default: return false;
    }
}

namespace {

// An option llama.cpp refuses for this model (section access: the caller's value, not the file).
error refuse(std::string_view subject, std::uint64_t expected, std::uint64_t found, std::string why) {
    error e;
    e.code = errc::bad_value_text;
    e.where = gguf::section::access;
    e.subject = subject;
    e.expected = expected;
    e.found = found;
    e.detail = std::move(why);
    return e;
}

// Saturating arithmetic for the figures: a product or sum past 2^64 - 1 stays there, and run()
// refuses a saturated figure (bad_hyperparameter), so a wrapped number is never shown.
struct sat {
    std::uint64_t v = 0;
    constexpr sat() = default;
    constexpr sat(std::uint64_t x) noexcept : v(x) {}  // NOLINT: implicit, so formulas read as before
    bool saturated() const noexcept { return v == UINT64_MAX; }
    friend constexpr sat operator+(sat a, sat b) noexcept {
        std::uint64_t r = 0;
        return __builtin_add_overflow(a.v, b.v, &r) ? sat(UINT64_MAX) : sat(r);
    }
    friend constexpr sat operator*(sat a, sat b) noexcept {
        std::uint64_t r = 0;
        return __builtin_mul_overflow(a.v, b.v, &r) ? sat(UINT64_MAX) : sat(r);
    }
    friend constexpr sat operator/(sat a, sat b) noexcept { return a.v == UINT64_MAX ? a : sat(a.v / b.v); }
    sat& operator+=(sat b) noexcept { return *this = *this + b; }
    friend constexpr auto operator<=>(sat a, sat b) noexcept = default;
};

constexpr std::uint64_t pad(std::uint64_t x, std::uint64_t n) { return (x + n - 1) / n * n; }

// ggml_row_size: n values of type t (n a multiple of the block).
std::uint64_t row_size(tensor_type t, std::uint64_t n) {
    const gguf::type_traits* tr = gguf::traits(t);
    return n / tr->block_elems * tr->block_bytes;
}

bool is_quantized(tensor_type t) {
    return t != tensor_type::f32 && t != tensor_type::f16 && t != tensor_type::bf16;
}

std::uint32_t max_of(const std::vector<std::uint32_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// The compute buffer of the worst-case graph, in bytes: the larger of a layer's peak (the inputs,
// with the KQ masks, beside the residual stream and attention or the FFN) and the output stage (the
// final norm and the logits of every token). `host_side`: the part llama.cpp keeps in host
// memory with full offload (the embeddings looked up on the CPU and the token ids).
struct compute_parts {
    sat device = 0;
    sat host = 0;
};

compute_parts compute_buffer(const hparams& hp, const figures& f) {
    constexpr sat f32{4};
    const sat T = f.n_ubatch;  // llama.cpp reserves min(n_ctx, n_ubatch) tokens, all outputs
    const sat E = hp.n_embd;
    const sat V = hp.n_vocab;
    const sat n_kv = f.n_ctx_seq;  // the whole cache is in view while reserving
    const sat n_kv_swa = f.kv && f.kv->swa_cells > 0 ? f.kv->swa_cells / f.n_stream : 0;

    // Inputs: token ids, positions, output ids (i32), the KQ mask(s) (f16 with flash attention).
    sat inputs = 3 * T * 4;
    sat layer_peak = 0;
    if (hp.recurrent()) {
        // Mamba: per token the residual stream and its norm, x and z (2 d_inner), the conv window
        // and output, the activations, the scan's output and y * silu(z): about 5.5 d_inner, plus
        // dt and B, C (dt_rank + 2 d_state), plus the scan's state (calibrated on llama.cpp).
        const sat di = hp.ssm_d_inner;
        layer_peak = T * (2 * E + 11 * di / 2 + hp.ssm_dt_rank + 2 * std::uint64_t{hp.ssm_d_state}) * f32 +
                     sat(hp.n_embd_s()) * f.n_seq_max * f32;
        inputs += T * 4;  // s_copy
    } else {
        const sat mask_elem = f.flash_attn ? 2 : 4;
        inputs += n_kv * T * mask_elem;
        if (n_kv_swa > 0) inputs += n_kv_swa * T * mask_elem;

        const sat H = max_of(hp.n_head);
        const sat Hkv = max_of(hp.n_head_kv);
        const sat dk = hp.n_embd_head_k;
        const sat dv = hp.n_embd_head_v;
        sat attn = 0;
        if (hp.is_mla) {
            // Q (decompressed then absorbed into the latent), the compressed KV of the batch,
            // the attention over the latent and its expansion to value heads.
            const sat lora = hp.n_lora_kv;
            const sat qk_mla = hp.n_embd_head_k_mla;
            const sat q = T * H * (qk_mla + dk) + T * sat(std::max<std::uint64_t>(hp.n_lora_q, 1));
            const sat kq = f.flash_attn ? T * H * lora : n_kv * T * H + T * H * lora;
            attn = (q + T * dk + kq + T * H * hp.n_embd_head_v_mla) * f32;
        } else if (f.flash_attn) {
            // Q, K, V of the batch and the attention's output.
            attn = T * (H * dk + Hkv * dk + Hkv * dv + H * dv) * f32;
        } else {
            // KQ (softmax in place over it), Q and the KQV output.
            attn = (n_kv * T * H + T * H * std::max(dk, dv) + T * H * dv) * f32;
        }
        sat ffn = 3 * T * std::uint64_t{max_of(hp.n_ff)} * f32;
        if (hp.n_expert > 0) {
            const sat used = hp.n_expert_used;
            // llama (mistral-style MoE) sizes its experts with feed_forward_length.
            const sat fe = hp.kind != arch::llama && hp.n_ff_exp > 0 ? hp.n_ff_exp : max_of(hp.n_ff);
            // router logits + probabilities, gate/up/activation of the chosen experts, then their
            // outputs beside the activation; a shared expert afterwards.
            const sat moe = 2 * T * hp.n_expert + std::max(3 * T * used * fe, T * used * fe + T * used * E);
            const sat shexp = 3 * T * (hp.n_ff_shexp > 0 ? sat(hp.n_ff_shexp) : fe * hp.n_expert_shared) + T * E;
            const sat moe_bytes = std::max(moe, shexp) * f32;
            ffn = hp.n_layer_dense_lead > 0 ? std::max(ffn, moe_bytes) : moe_bytes;
        }
        // Rows of n_embd per token alive beside the big tensors of a stage (the residual stream, the
        // normed input, the attention's output and their sum, as ggml's allocator happens to reuse
        // or not reuse them): fitted on llama.cpp's CPU reserve (docs/CLI.md, `minfer estimate`) —
        // two beside flash attention, three beside the KQ matrix (four for gemma, whose soft-capped
        // KQ takes more), three and a half beside the FFN.
        const bool gemma = hp.kind == arch::gemma2 || hp.kind == arch::gemma3;
        const sat attn_rows2 = f.flash_attn ? 4 : (gemma ? 8 : 6);  // in half rows
        layer_peak = std::max(attn_rows2 * T * E * f32 / 2 + attn, 7 * T * E * f32 / 2 + ffn);
    }
    // The final norm beside the residual stream, and the logits of every token.
    const sat output = 2 * T * E * f32 + T * V * f32;
    const sat embd = T * E * f32;  // the looked-up embeddings (host memory with full offload)

    compute_parts c;
    // The masks are freed after the last layer: the output stage has only the small inputs beside it.
    c.device = std::max(inputs + layer_peak, 3 * T * 4 + output);
    c.host = 2 * embd + 3 * T * 4;
    return c;
}

// Figures past 2^64 - 1 bytes: the model's widths with this context and batch.
error overflow(const hparams& h, const figures& f) {
    error e;
    e.code = errc::bad_hyperparameter;
    e.where = gguf::section::metadata;
    e.subject = h.architecture + ".embedding_length";
    e.expected = UINT64_MAX;
    e.found = UINT64_MAX;
    e.detail = "the KV cache and compute buffer of this model's widths (" + h.architecture +
               ".embedding_length and the head, feed-forward and state sizes) with a context of " +
               std::to_string(f.n_ctx) + " and a batch of " + std::to_string(f.n_ubatch) +
               " tokens need more than 2^64 bytes";
    return e;
}

gguf::result<figures> run(const gguf::model& m, const params& p) {
    figures f;
    // Weights: every tensor's bytes; token_embd stays on the CPU with full offload, and a model
    // without output.weight gets a copy of it on the output's device (llama.cpp's duplicated tensor).
    for (const auto& t : m.tensors()) {
        f.weights_bytes += t.info->n_bytes;
        if (t.info->name == "token_embd.weight") f.token_embd_bytes = t.info->n_bytes;
    }
    f.output_tied = m.find_tensor("output.weight") == nullptr && f.token_embd_bytes > 0;

    auto hp = read_hparams(m);
    if (!hp) {
        // Only a known architecture can fail here (an unknown one reads without errors).
        return unexpected(hp.error());
    }
    f.hp = std::move(*hp);

    // The context as llama.cpp resolves it (llama_context's constructor).
    if (p.n_seq_max == 0 || p.n_seq_max > max_sequences)
        return unexpected(refuse("n_seq_max", max_sequences, p.n_seq_max,
                                 std::string("--parallel ").append(std::to_string(p.n_seq_max))
                                     .append(": llama.cpp takes 1 to ")
                                     .append(std::to_string(max_sequences))
                                     .append(" sequences")));
    if (p.n_batch == 0 || p.n_ubatch == 0)
        return unexpected(refuse(p.n_batch == 0 ? "n_batch" : "n_ubatch", 1, 0, "batch sizes must be at least 1"));
    if (p.n_ctx > max_context)
        return unexpected(refuse("n_ctx", max_context, p.n_ctx,
                                 std::string("context ").append(std::to_string(p.n_ctx))
                                     .append(" is beyond what llama.cpp can hold (")
                                     .append(std::to_string(max_context))
                                     .append(")")));
    if (!is_cache_type(p.type_k) || !is_cache_type(p.type_v)) {
        const bool k = !is_cache_type(p.type_k);
        return unexpected(refuse(k ? "cache_type_k" : "cache_type_v", 0, static_cast<std::uint32_t>(k ? p.type_k : p.type_v),
                                 std::string("cache type ").append(gguf::to_string(k ? p.type_k : p.type_v))
                                     .append(" is not one llama.cpp accepts (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)")));
    }
    const std::uint64_t ctx_asked = p.n_ctx != 0 ? p.n_ctx : f.hp.n_ctx_train;
    f.n_seq_max = p.n_seq_max;
    f.kv_unified = p.kv_unified;
    f.n_stream = p.kv_unified ? 1 : p.n_seq_max;
    f.type_k = p.type_k;
    f.type_v = p.type_v;
    f.n_batch = static_cast<std::uint32_t>(std::min<std::uint64_t>(ctx_asked == 0 ? p.n_batch : ctx_asked, p.n_batch));
    f.n_ubatch = std::min(f.n_batch, p.n_ubatch);
    f.n_ctx = pad(ctx_asked, 256);
    if (p.kv_unified) {
        f.n_ctx_seq = f.n_ctx;
    } else {
        f.n_ctx_seq = pad(f.n_ctx / p.n_seq_max, 256);
        f.n_ctx = f.n_ctx_seq * p.n_seq_max;
    }
    // Flash attention: auto resolves to on where the device runs the op (llama.cpp's CPU backend
    // does for every architecture here); a quantized V cache needs it.
    const bool v_quant = is_quantized(p.type_v);
    if (p.flash_attn == flash_attn_mode::off && v_quant && f.hp.known() && !f.hp.recurrent())
        return unexpected(refuse("flash_attn", 1, 0,
                                 std::string("a quantized V cache (").append(gguf::to_string(p.type_v))
                                     .append(") needs flash attention; llama.cpp refuses it with --flash-attn off")));
    f.flash_attn = p.flash_attn != flash_attn_mode::off;

    // Weights per device.
    f.cpu_only.weights = f.weights_bytes;
    f.host.weights = f.token_embd_bytes;
    f.gpu.weights = f.weights_bytes - f.token_embd_bytes + (f.output_tied ? f.token_embd_bytes : 0);

    if (!f.hp.known()) return f;  // KV and compute stay absent
    const hparams& h = f.hp;

    kv_cache kv;
    sat state = 0, k_sum = 0, v_sum = 0;  // checked below: a saturated sum is refused
    if (h.recurrent()) {
        // llama_memory_recurrent: f32 r and s, max(1, n_seq_max) rows, every layer.
        const std::uint64_t rows = std::max<std::uint32_t>(1, p.n_seq_max);
        kv.cells = rows;
        for (std::uint32_t il = 0; il < h.n_layer; ++il) {
            kv_layer l;
            l.layer = il;
            l.cells = rows;
            const sat r = sat(h.n_embd_r()) * rows * 4, s = sat(h.n_embd_s()) * rows * 4;
            l.r_bytes = r.v;
            l.s_bytes = s.v;
            state = state + r + s;
            kv.layers.push_back(l);
        }
    } else {
        // The head sizes must be whole blocks of the cache types.
        const auto check_block = [&](tensor_type t, std::uint32_t head, const char* which) -> std::optional<error> {
            const std::uint32_t blk = gguf::traits(t)->block_elems;
            if (head % blk == 0) return std::nullopt;
            return refuse(which, blk, head,
                          std::string(which[11] == 'k' ? "K" : "V")
                              .append(" cache type ")
                              .append(gguf::to_string(t))
                              .append(" with block size ")
                              .append(std::to_string(blk))
                              .append(" does not divide the head size ")
                              .append(std::to_string(head)));
        };
        if (auto e = check_block(p.type_k, h.n_embd_head_k, "cache_type_k")) return unexpected(std::move(*e));
        if (!h.is_mla)
            if (auto e = check_block(p.type_v, h.n_embd_head_v, "cache_type_v")) return unexpected(std::move(*e));
        if (h.is_mla && p.type_k != p.type_v)
            return unexpected(refuse("cache_type_v", static_cast<std::uint32_t>(p.type_k), static_cast<std::uint32_t>(p.type_v),
                                     std::string("this model (MLA) does not support different K (")
                                         .append(gguf::to_string(p.type_k))
                                         .append(") and V (")
                                         .append(gguf::to_string(p.type_v))
                                         .append(") cache types")));

        // llama_kv_cache_iswa: the SWA cache holds the window of every sequence plus a ubatch, padded to 256.
        const bool swa = h.any_swa();
        const std::uint64_t swa_per_stream =
            swa ? pad(std::min<std::uint64_t>(f.n_ctx_seq, std::uint64_t{h.n_swa} * (p.kv_unified ? p.n_seq_max : 1) + f.n_ubatch), 256)
                : 0;
        kv.cells = f.n_ctx_seq * f.n_stream;
        kv.swa_cells = swa_per_stream * f.n_stream;
        // Without flash attention V is stored transposed, every layer at the widest layer's width.
        const std::uint64_t v_max = h.n_embd_v_gqa_max();
        for (std::uint32_t il = 0; il < h.n_layer; ++il) {
            kv_layer l;
            l.layer = il;
            l.swa = h.is_swa(il);
            l.cells = l.swa ? kv.swa_cells : kv.cells;
            const sat kb = sat(row_size(p.type_k, h.n_embd_k_gqa(il))) * l.cells;
            const sat vb = h.is_mla ? sat(0) : sat(row_size(p.type_v, f.flash_attn ? h.n_embd_v_gqa(il) : v_max)) * l.cells;
            l.k_bytes = kb.v;
            l.v_bytes = vb.v;
            k_sum += kb;
            v_sum += vb;
            kv.layers.push_back(l);
        }
    }
    kv.recurrent_state_bytes = state.v;
    kv.k_bytes = k_sum.v;
    kv.v_bytes = v_sum.v;
    f.kv = std::move(kv);

    const compute_parts c = compute_buffer(h, f);
    const sat kv_total = state + k_sum + v_sum;
    // Every figure and total within 64 bits, else refused (the widths are bounded by read_hparams;
    // what is left is a context or a batch too large for them).
    if ((sat(f.weights_bytes) + kv_total + c.device + c.host).saturated())
        return unexpected(overflow(h, f));
    f.cpu_only.kv = kv_total.v;
    f.cpu_only.compute = c.device.v;
    f.gpu.kv = kv_total.v;
    f.gpu.compute = c.device.v;
    f.host.kv = 0;
    f.host.compute = c.host.v;
    return f;
}

}  // namespace

gguf::result<figures> estimate(const gguf::model& m, const params& p) noexcept {
    try {
        return run(m, p);
    } catch (const std::bad_alloc&) {
        return unexpected(gguf::out_of_memory_error("estimating"));
    }
}

}  // namespace minfer::estimate
