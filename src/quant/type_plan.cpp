// The per-tensor type choice of llama.cpp's quantizer (src/llama-quant.cpp: tensor_allows_quantization,
// llama_tensor_get_type and _impl, tensor_type_fallback, tensor_requires_imatrix,
// llama_ftype_get_default_type), rewritten from its rules. The rules are checked tensor by tensor
// against the library's llama_quant_compute_types (tests/unit/test_type_plan.cpp); where a rule
// looks odd (the output tensor of a Q4_0 file is q6_K, a name shorter than "weight" counts as
// ending in it), it is llama.cpp's and kept, because the goal is llama-quantize's bytes.
#include "minfer/quant/type_plan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>

namespace minfer::quant {
namespace {

using gguf::errc;
using gguf::error;
using gguf::section;
using gguf::unexpected;
using tt = tensor_type;
using ft = file_type;

error plan_error(errc code, std::string_view subject, std::string detail, std::uint64_t expected = 0,
                 std::uint64_t found = 0) {
    error e;
    e.code = code;
    e.where = section::access;
    e.subject = subject;
    e.detail = std::move(detail);
    e.expected = expected;
    e.found = found;
    return e;
}

constexpr file_type_name k_names[] = {
    {"Q4_0", ft::q4_0},       {"Q4_1", ft::q4_1},       {"MXFP4_MOE", ft::mxfp4_moe},
    {"Q5_0", ft::q5_0},       {"Q5_1", ft::q5_1},       {"IQ2_XXS", ft::iq2_xxs},
    {"IQ2_XS", ft::iq2_xs},   {"IQ2_S", ft::iq2_s},     {"IQ2_M", ft::iq2_m},
    {"IQ1_S", ft::iq1_s},     {"IQ1_M", ft::iq1_m},     {"TQ1_0", ft::tq1_0},
    {"TQ2_0", ft::tq2_0},     {"Q1_0", ft::q1_0},       {"Q2_0", ft::q2_0},
    {"Q2_K", ft::q2_k},       {"Q2_K_S", ft::q2_k_s},   {"IQ3_XXS", ft::iq3_xxs},
    {"IQ3_S", ft::iq3_s},     {"IQ3_M", ft::iq3_m},     {"Q3_K", ft::q3_k_m},
    {"IQ3_XS", ft::iq3_xs},   {"Q3_K_S", ft::q3_k_s},   {"Q3_K_M", ft::q3_k_m},
    {"Q3_K_L", ft::q3_k_l},   {"IQ4_NL", ft::iq4_nl},   {"IQ4_XS", ft::iq4_xs},
    {"Q4_K", ft::q4_k_m},     {"Q4_K_S", ft::q4_k_s},   {"Q4_K_M", ft::q4_k_m},
    {"Q5_K", ft::q5_k_m},     {"Q5_K_S", ft::q5_k_s},   {"Q5_K_M", ft::q5_k_m},
    {"Q6_K", ft::q6_k},       {"Q8_0", ft::q8_0},       {"F16", ft::f16},
    {"BF16", ft::bf16},       {"F32", ft::f32},         {"COPY", ft::f32, true},
};

// Roles, as llama.cpp's tensor_get_category names them: found by substring, in this order, so that
// "attn_qkv.weight" is not taken for attn_q and "ffn_gate_exps" counts as ffn_gate.
enum class role { token_embd, attn_q, attn_v, attn_k, attn_qkv, attn_kv_b, attn_output, ffn_up, ffn_gate,
                  ffn_down, output, other };

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_token_embd_name(std::string_view n) { return n == "token_embd.weight" || n == "per_layer_token_embd.weight"; }

role role_of(std::string_view n) {
    if (n == "output.weight") return role::output;
    if (is_token_embd_name(n)) return role::token_embd;
    if (contains(n, "attn_qkv.weight")) return role::attn_qkv;
    if (contains(n, "attn_kv_b.weight")) return role::attn_kv_b;
    if (contains(n, "attn_v.weight")) return role::attn_v;
    if (contains(n, "attn_k.weight")) return role::attn_k;
    if (contains(n, "attn_q.weight")) return role::attn_q;
    if (contains(n, "attn_output.weight")) return role::attn_output;
    if (contains(n, "ffn_up")) return role::ffn_up;
    if (contains(n, "ffn_gate")) return role::ffn_gate;
    if (contains(n, "ffn_down")) return role::ffn_down;
    return role::other;
}

// attn_v and the tensors that hold it (fused qkv, MLA's kv_b): the most sensitive to quantization.
bool attn_v_like(role r) { return r == role::attn_v || r == role::attn_qkv || r == role::attn_kv_b; }

int n_dims(const std::array<std::int64_t, 4>& ne) {
    for (int i = 3; i >= 1; --i)
        if (ne[static_cast<std::size_t>(i)] > 1) return i + 1;
    return 1;
}

// sscanf(name, "blk.%d.", &layer): the number after "blk." (whitespace and a sign allowed, as %d
// does); nullopt when there is none. The trailing "." is not required (sscanf has assigned by then).
std::optional<long long> blk_number(std::string_view n) {
    if (n.substr(0, 4) != "blk.") return std::nullopt;
    std::size_t i = 4;
    while (i < n.size() && std::isspace(static_cast<unsigned char>(n[i])) != 0) ++i;
    bool neg = false;
    if (i < n.size() && (n[i] == '+' || n[i] == '-')) neg = n[i++] == '-';
    std::size_t start = i;
    long long v = 0;
    while (i < n.size() && n[i] >= '0' && n[i] <= '9' && v < (1LL << 40)) v = v * 10 + (n[i++] - '0');
    if (i == start) return std::nullopt;
    return neg ? -v : v;
}

// tensor_allows_quantization: whether the type may change at all. Tiny or structural 2-D weights
// (norms, routers, conv kernels, position tables, RWKV mixers, …) keep their type.
const char* keep_reason(std::string_view n, const tensor_fact& t, const plan_options& o) {
    if (o.copy) return "COPY: every tensor keeps its type";
    if (n_dims(t.ne) < 2) return "1-D tensor";
    // llama.cpp compares rfind("weight") with size() - 6; for a name shorter than 6 both are npos.
    const bool ends_weight = n.size() < 6 || n.rfind("weight") == n.size() - 6;
    if (!ends_weight) return "name does not end in \"weight\"";
    if (contains(n, "_norm.weight")) return "norm";
    if (o.leave_output && n == "output.weight") return "--leave-output-tensor";
    if (contains(n, "ffn_gate_inp.weight")) return "expert router (ffn_gate_inp)";
    if (contains(n, "ffn_gate_tid2eid.weight")) return "token-to-expert table";
    if (contains(n, "altup") || contains(n, "laurel")) return "small altup/laurel weight";
    if (contains(n, "per_layer_model_proj")) return "per_layer_model_proj";
    if (n == "position_embd.weight" || n == "token_types.weight") return "position embedding / token types";
    if (contains(n, "ssm_conv1d") || contains(n, "shortconv.conv.weight")) return "convolution kernel";
    if (contains(n, "indexer.k_proj.weight") || contains(n, "indexer.q_proj.weight")) return "indexer projection";
    static constexpr std::string_view rwkv[] = {
        "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
        "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
        "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
        "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight"};
    for (std::string_view r : rwkv)
        if (contains(n, r)) return "RWKV mixing weight";
    if (contains(n, "attn_rel_b.weight")) return "relative position bias";
    static constexpr std::string_view mm[] = {".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_",
                                              ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook",
                                              "mm.a.code_embd"};
    for (std::string_view m : mm)
        if (contains(n, m)) return "multimodal/audio table";
    return nullptr;
}

std::int64_t block_of(tt t) {
    const auto* tr = gguf::traits(t);
    return tr == nullptr || tr->block_elems == 0 ? 1 : tr->block_elems;
}

bool is_quantized_type(tt t) {
    switch (t) {
        case tt::f32: case tt::f16: case tt::bf16: case tt::f64: case tt::i8: case tt::i16: case tt::i32:
        case tt::i64: return false;
        default: return true;
    }
}

bool requires_importance(std::string_view name, tt to, file_type f) {
    if (is_token_embd_name(name) || name == "output.weight") return false;
    switch (to) {
        case tt::iq3_xxs: case tt::iq2_xxs: case tt::iq2_xs: case tt::iq2_s: case tt::iq1_m: case tt::iq1_s:
            return true;
        case tt::q2_k: return f == ft::q2_k_s;  // only a Q2_K_S file's q2_K tensors
        default: return false;
    }
}

struct state {
    const model_facts& m;
    const plan_options& o;
    bool falcon, bailing3;
    int n_expert;  // max(1, n_expert)
    std::uint32_t n_gqa;
    int n_attention_wv = 0, n_layers = 0;
    int i_attention_wv = 0, i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
    bool tied = true;  // token_embd doubles as the output until an output.weight is seen
};

bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// The layer of an FFN tensor: its position among its kind for dense models, the number in its name
// for MoE models (whose expert tensors are not in layer order in every file).
result<std::pair<int, int>> layer_info(const state& s, int counter, const std::string& name) {
    if (s.n_expert <= 1) return std::pair{counter, s.n_layers};
    auto b = blk_number(name);
    if (!b) return unexpected(plan_error(errc::bad_hyperparameter, name, "cannot read the layer of an expert tensor"));
    if (*b < 0 || *b >= s.n_layers)
        return unexpected(plan_error(errc::bad_hyperparameter, name, "layer outside block_count",
                                     static_cast<std::uint64_t>(s.n_layers), static_cast<std::uint64_t>(*b)));
    return std::pair{static_cast<int>(*b), s.n_layers};
}

bool in(file_type f, std::initializer_list<file_type> l) { return std::find(l.begin(), l.end(), f) != l.end(); }

// llama_tensor_get_type_impl: the mixture of the file type by role and layer.
result<tt> mixture(state& s, tt t, const tensor_fact& x, role r, std::string& why) {
    const file_type f = s.o.ftype;
    const std::uint32_t n_exp = s.m.n_expert;
    const tt before = t;
    auto said = [&](const char* rule) {
        if (t != before) why = rule;
    };
    const bool iq_low = in(f, {ft::iq2_xxs, ft::iq2_xs, ft::iq1_s, ft::iq2_s, ft::iq2_m, ft::iq1_m});
    if (r == role::output || (s.tied && r == role::token_embd)) {
        if (s.o.output_type) {
            t = *s.o.output_type;
        } else if (f == ft::mxfp4_moe || s.falcon || x.ne[0] % block_of(t) != 0) {
            t = tt::q8_0;
        } else if (in(f, {ft::iq2_xxs, ft::iq2_xs, ft::iq3_xxs, ft::iq1_s, ft::iq2_s, ft::iq2_m, ft::iq1_m})) {
            t = tt::q5_k;
        } else if (t != tt::q8_0) {
            t = tt::q6_k;
        }
        said(r == role::output ? "output tensor rule" : "token embedding tied to the output: output rule");
    } else if (f == ft::mxfp4_moe) {
        const bool ffn = r == role::ffn_up || r == role::ffn_gate || r == role::ffn_down;
        t = x.ne[2] > 1 && (!s.bailing3 || ffn) ? tt::mxfp4 : tt::q8_0;
        said("MXFP4_MOE: experts mxfp4, the rest q8_0");
    } else if (r == role::token_embd) {
        if (s.o.token_embd_type) t = *s.o.token_embd_type;
        else if (in(f, {ft::iq2_xxs, ft::iq2_xs, ft::iq1_s, ft::iq1_m})) t = tt::q2_k;
        else if (in(f, {ft::iq2_s, ft::iq2_m, ft::iq3_xxs})) t = tt::iq3_s;
        else if (in(f, {ft::tq1_0, ft::tq2_0, ft::q2_0})) t = tt::q4_k;
        said("token embedding rule");
    } else if (iq_low) {
        const bool s_or_m = f == ft::iq2_s || f == ft::iq2_m;
        if (attn_v_like(r)) {
            t = s.n_gqa >= 4 || n_exp >= 4 ? tt::q4_k : s_or_m ? tt::iq3_s : tt::q2_k;
            ++s.i_attention_wv;
            said("low-bit IQ: attn_v");
        } else if (n_exp == 8 && r == role::attn_k) {
            t = tt::q4_k;
            said("low-bit IQ, 8 experts: attn_k");
        } else if (r == role::ffn_down) {
            if (s.i_ffn_down < s.n_layers / 8) t = s_or_m ? tt::iq3_s : tt::q2_k;
            ++s.i_ffn_down;
            said("low-bit IQ: first eighth of ffn_down");
        } else if (r == role::attn_output) {
            if (n_exp == 8) t = tt::q5_k;
            else if (f == ft::iq1_s || f == ft::iq1_m) t = tt::iq2_xxs;
            else if (s_or_m) t = tt::iq3_s;
            said("low-bit IQ: attn_output");
        }
    } else if (attn_v_like(r)) {
        const int i = s.i_attention_wv, n = s.n_attention_wv;
        if (f == ft::q2_k) t = s.n_gqa >= 4 ? tt::q4_k : tt::q3_k;
        else if (f == ft::q2_k_s && s.n_gqa >= 4) t = tt::q4_k;
        else if (f == ft::iq3_xxs) t = s.n_gqa >= 4 ? tt::q4_k : !s.o.has_imatrix ? tt::iq3_s : tt::iq3_xxs;
        else if ((f == ft::iq3_xs || f == ft::iq3_s) && s.n_gqa >= 4) t = tt::q4_k;
        else if (f == ft::iq3_m) t = tt::q4_k;
        else if (f == ft::q3_k_m) t = i < 2 ? tt::q5_k : tt::q4_k;
        else if (f == ft::q3_k_l) t = tt::q5_k;
        else if ((f == ft::iq4_nl || f == ft::iq4_xs) && s.n_gqa >= 4) t = tt::q5_k;
        else if ((f == ft::q4_k_m || f == ft::q5_k_m) && use_more_bits(i, n)) t = tt::q6_k;
        else if (f == ft::q4_k_s && i < 4) t = tt::q5_k;
        if (s.m.type_70b && (t == tt::q3_k || t == tt::q4_k)) t = tt::q5_k;
        if (n_exp == 8) t = tt::q8_0;
        ++s.i_attention_wv;
        said("attn_v mixture (by GQA, experts, use_more_bits of its ordinal)");
    } else if (r == role::attn_k) {
        if (n_exp == 8) t = tt::q8_0;
        else if (f == ft::iq3_xs) t = tt::iq3_xxs;
        else if (f == ft::iq3_xxs) t = tt::iq2_s;
        said("attn_k rule");
    } else if (r == role::attn_q) {
        if (f == ft::iq3_xs) t = tt::iq3_xxs;
        else if (f == ft::iq3_xxs) t = tt::iq2_s;
        said("attn_q rule");
    } else if (r == role::ffn_down) {
        auto li = layer_info(s, s.i_ffn_down, x.name);
        if (!li) return unexpected(li.error());
        const auto [i, n] = *li;
        const bool h = s.o.has_imatrix;
        if (f == ft::q2_k) t = tt::q3_k;
        else if (f == ft::q2_k_s) { if (i < n / 8) t = tt::q4_k; }
        else if (f == ft::iq3_xxs && !h) t = i < n / 8 ? tt::q4_k : tt::q3_k;
        else if (f == ft::q3_k_m)
            t = i < n / 16 ? tt::q5_k : !s.falcon || use_more_bits(i, n) ? tt::q4_k : tt::q3_k;
        else if (f == ft::iq3_m && (i < n / 8 || (n_exp == 8 && use_more_bits(i, n)))) t = tt::q4_k;
        else if (f == ft::q3_k_l) t = s.falcon ? tt::q4_k : tt::q5_k;
        else if (f == ft::q4_k_m) {
            if (s.falcon) t = i < n / 16 ? tt::q6_k : use_more_bits(i, n) ? tt::q5_k : tt::q4_k;
            else if (use_more_bits(i, n)) t = tt::q6_k;
        }
        else if (i < n / 8 && (f == ft::iq4_nl || f == ft::iq4_xs) && !h) t = tt::q5_k;
        else if (f == ft::q5_k_m && use_more_bits(i, n)) t = tt::q6_k;
        else if (f == ft::q4_k_s && !s.falcon && i < n / 8) t = tt::q5_k;
        else if ((f == ft::q4_0 || f == ft::q5_0) && h && i < n / 8) t = f == ft::q4_0 ? tt::q4_1 : tt::q5_1;
        ++s.i_ffn_down;
        said("ffn_down mixture (by layer, use_more_bits)");
    } else if (r == role::attn_output) {
        if (!s.falcon) {
            if (n_exp == 8) {
                if (in(f, {ft::q2_k, ft::iq3_xs, ft::iq3_xxs, ft::q3_k_s, ft::q3_k_m, ft::iq4_nl, ft::q4_k_s,
                           ft::q4_k_m, ft::iq3_s, ft::iq3_m, ft::iq4_xs}))
                    t = tt::q5_k;
            } else {
                if (f == ft::q2_k) t = tt::q3_k;
                else if (f == ft::iq3_xxs) t = tt::iq3_s;
                else if (f == ft::q3_k_m) t = tt::q4_k;
                else if (f == ft::q3_k_l) t = tt::q5_k;
                else if (f == ft::iq3_m) t = tt::q4_k;
            }
        } else if (f == ft::q3_k_l) {
            t = tt::q4_k;
        }
        said("attn_output rule");
    } else if (r == role::attn_qkv) {
        // Unreachable: attn_qkv is attn_v-like and taken above; kept as llama.cpp has it.
    } else if (r == role::ffn_gate || r == role::ffn_up) {
        int& counter = r == role::ffn_gate ? s.i_ffn_gate : s.i_ffn_up;
        auto li = layer_info(s, counter, x.name);
        if (!li) return unexpected(li.error());
        const auto [i, n] = *li;
        if (f == ft::iq3_xs && i >= n / 8 && i < 7 * n / 8) t = tt::iq3_xxs;
        ++counter;
        said("IQ3_XS: middle ffn_gate/ffn_up");
    }
    return t;
}

// tensor_type_fallback: a row that is not whole blocks of the chosen type takes a type of smaller
// blocks (k-quants and 256-blocks IQ types to 32-block ones), or f16 when even that does not fit.
result<tt> fallback(state& s, const tensor_fact& x, tt t, tensor_choice& c, std::uint32_t& n_fallback) {
    const std::int64_t cols = x.ne[0];
    if (cols % block_of(t) == 0) return t;
    ++n_fallback;
    c.fallback = true;
    tt r;
    switch (t) {
        case tt::iq1_s: case tt::iq1_m: case tt::iq2_xxs: case tt::iq2_xs: case tt::iq2_s: case tt::iq3_xxs:
        case tt::iq3_s: case tt::iq4_xs: r = tt::iq4_nl; break;
        case tt::q2_0: case tt::q2_k: case tt::q3_k: case tt::tq1_0: case tt::tq2_0: r = tt::q4_0; break;
        case tt::q4_k: r = tt::q5_0; break;
        case tt::q5_k: r = tt::q5_1; break;
        case tt::q6_k: r = tt::q8_0; break;
        // The 32-block types have nothing smaller than themselves: f16 (learned from the reference
        // build, whose table has these rows; newer llama.cpp sources stop here instead).
        case tt::q4_0: case tt::q4_1: case tt::q5_0: case tt::q5_1: case tt::q8_0: case tt::q8_1:
        case tt::iq4_nl: case tt::mxfp4: r = tt::f16; break;
        default:
            return unexpected(plan_error(errc::not_block_multiple, x.name,
                                         std::string(gguf::to_string(t)),
                                         static_cast<std::uint64_t>(block_of(t)), static_cast<std::uint64_t>(cols)));
    }
    if (cols % block_of(r) != 0) r = tt::f16;
    c.why += "; ne[0] " + std::to_string(cols) + " not a multiple of " + std::to_string(block_of(t)) + " (" +
             std::string(gguf::to_string(t)) + "): fallback " + std::string(gguf::to_string(r));
    (void)s;
    return r;
}

}  // namespace

std::span<const file_type_name> file_type_names() noexcept { return k_names; }

std::string_view to_string(file_type f) noexcept {
    // The canonical name: the last listed for the number (Q4_K_M after its alias Q4_K), never COPY.
    std::string_view name = "unknown";
    for (const auto& n : k_names)
        if (n.ftype == f && !n.copy) name = n.name;
    return name;
}

std::optional<tensor_type> default_type(file_type f) noexcept {
    switch (f) {
        case ft::f32: return tt::f32;
        case ft::f16: return tt::f16;
        case ft::bf16: return tt::bf16;
        case ft::q4_0: return tt::q4_0;
        case ft::q4_1: return tt::q4_1;
        case ft::q5_0: return tt::q5_0;
        case ft::q5_1: return tt::q5_1;
        case ft::q8_0: return tt::q8_0;
        case ft::q1_0: return tt::q1_0;
        case ft::q2_0: return tt::q2_0;
        case ft::mxfp4_moe: return tt::mxfp4;
        case ft::q2_k: case ft::q2_k_s: return tt::q2_k;
        case ft::iq3_xs: return tt::iq3_s;
        case ft::q3_k_s: case ft::q3_k_m: case ft::q3_k_l: return tt::q3_k;
        case ft::q4_k_s: case ft::q4_k_m: return tt::q4_k;
        case ft::q5_k_s: case ft::q5_k_m: return tt::q5_k;
        case ft::q6_k: return tt::q6_k;
        case ft::tq1_0: return tt::tq1_0;
        case ft::tq2_0: return tt::tq2_0;
        case ft::iq2_xxs: return tt::iq2_xxs;
        case ft::iq2_xs: return tt::iq2_xs;
        case ft::iq2_s: return tt::iq2_xs;  // IQ2_S files are mostly iq2_xs, as llama.cpp maps them
        case ft::iq2_m: return tt::iq2_s;
        case ft::iq3_xxs: return tt::iq3_xxs;
        case ft::iq1_s: return tt::iq1_s;
        case ft::iq1_m: return tt::iq1_m;
        case ft::iq4_nl: return tt::iq4_nl;
        case ft::iq4_xs: return tt::iq4_xs;
        case ft::iq3_s: case ft::iq3_m: return tt::iq3_s;
    }
    return std::nullopt;
}

result<file_type_name> parse_file_type(std::string_view text) {
    std::string up(text);
    for (char& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    for (const auto& n : k_names)
        if (n.name == up) return n;
    std::uint32_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!text.empty() && ec == std::errc{} && end == text.data() + text.size()) {
        // A number names the file type itself (never COPY), if llama.cpp maps it to a tensor type.
        const auto f = static_cast<file_type>(v);
        if (default_type(f)) {
            for (const auto& n : k_names)
                if (n.ftype == f && !n.copy && n.name == to_string(f)) return n;
        }
        return unexpected(plan_error(errc::bad_value_text, text, "not a file type number llama.cpp maps to a tensor type"));
    }
    return unexpected(plan_error(errc::bad_value_text, text, "not a quantization type (Q4_K_M, IQ4_XS, Q8_0, … or a file type number)"));
}

bool is_llama_70b(std::string_view arch, std::uint32_t n_layer, std::uint32_t n_head, std::uint32_t n_head_kv) noexcept {
    return arch == "llama" && n_layer == 80 && n_head != n_head_kv;
}

std::vector<std::size_t> llama_tensor_order(std::span<const tensor_fact> tensors) {
    std::vector<std::size_t> idx(tensors.size());
    std::vector<long long> layer(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        idx[i] = i;
        layer[i] = blk_number(tensors[i].name).value_or(-1);
    }
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        if (layer[a] != layer[b]) return layer[a] < layer[b];
        return tensors[a].name < tensors[b].name;
    });
    return idx;
}

namespace {
result<type_plan> plan_types_unchecked(const model_facts& m, const plan_options& o);
}  // namespace

result<type_plan> plan_types(const model_facts& m, const plan_options& o) noexcept {
    try {
        return plan_types_unchecked(m, o);
    } catch (const std::regex_error& e) {  // a pattern too complex to search (error_complexity, error_stack)
        try {
            return unexpected(plan_error(errc::bad_value_text, "tensor_types", std::string("a pattern could not be searched: ") + e.what()));
        } catch (...) {
            return unexpected(gguf::out_of_memory_error("planning the tensor types"));
        }
    } catch (...) {  // std::bad_alloc
        return unexpected(gguf::out_of_memory_error("planning the tensor types"));
    }
}

namespace {
result<type_plan> plan_types_unchecked(const model_facts& m, const plan_options& o) {
    const auto def = default_type(o.ftype);
    if (!def)
        return unexpected(plan_error(errc::bad_value_text, std::to_string(static_cast<std::uint32_t>(o.ftype)),
                                     "file type llama.cpp maps to no tensor type"));
    std::vector<std::pair<std::regex, tt>> patterns;
    for (const auto& ov : o.overrides) {
        try {
            patterns.emplace_back(std::regex(ov.pattern), ov.type);
        } catch (const std::regex_error& e) {
            return unexpected(plan_error(errc::bad_value_text, ov.pattern, std::string("not a regular expression: ") + e.what()));
        }
    }

    state s{m, o, m.arch == "falcon", m.arch == "bailingmoe3", std::max(1, static_cast<int>(m.n_expert)),
            m.n_head_kv == 0 ? 0u : m.n_head / m.n_head_kv};
    s.n_layers = static_cast<int>(m.n_layer);
    // Counted over every tensor of the file, quantized or not, before the first choice.
    for (const auto& t : m.tensors) {
        const role r = role_of(t.name);
        if (attn_v_like(r)) ++s.n_attention_wv;
        if (r == role::output) s.tied = false;
    }

    type_plan plan;
    const auto order = llama_tensor_order(m.tensors);
    plan.tensors.reserve(order.size());
    for (std::size_t k : order) {
        const tensor_fact& x = m.tensors[k];
        tensor_choice c;
        c.name = x.name;
        c.from = c.to = x.type;
        if (const char* keep = keep_reason(x.name, x, o)) {
            c.why = std::string("kept: ") + keep;
        } else {
            c.quantizable = true;
            const role r = role_of(x.name);
            if (o.token_embd_type && r == role::token_embd) {
                c.to = *o.token_embd_type;
                c.why = "--token-embedding-type";
            } else if (o.output_type && r == role::output) {
                c.to = *o.output_type;
                c.why = "--output-tensor-type";
            } else {
                tt t = *def;
                c.why = "default type of " + std::string(to_string(o.ftype));
                if (is_quantized_type(*def)) {
                    bool manual = false;
                    for (const auto& [re, type] : patterns) {
                        if (std::regex_search(x.name, re)) {
                            t = type;
                            manual = true;
                            c.why = "--tensor-type override";
                            break;
                        }
                    }
                    if (!manual && !o.pure) {
                        auto mixed = mixture(s, t, x, r, c.why);
                        if (!mixed) return unexpected(mixed.error());
                        t = *mixed;
                    } else if (!manual) {
                        c.why = "--pure: default type of " + std::string(to_string(o.ftype));
                    }
                    auto fb = fallback(s, x, t, c, plan.n_fallback);
                    if (!fb) return unexpected(fb.error());
                    t = *fb;
                }
                c.to = t;
            }
            c.needs_importance = requires_importance(x.name, c.to, o.ftype);
            if (c.needs_importance && !o.has_imatrix) plan.needs_importance = true;
        }
        c.converted = c.to != c.from;
        plan.tensors.push_back(std::move(c));
    }
    return plan;
}
}  // namespace

}  // namespace minfer::quant
