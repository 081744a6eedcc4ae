// minfer::quant::plan_types, the per-tensor type choice of llama-quantize: unit cases on the rules,
// and (label reference) the plan of llama-shaped models for every file type and option set compared
// tensor by tensor with llama.cpp's own llama_quant_compute_types (skips loudly without the library).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/quant/type_plan.hpp"

namespace {

using minfer::gguf::errc;
using minfer::gguf::tensor_type;
using namespace minfer::quant;
using tt = tensor_type;

struct shape {
    std::string arch = "llama";
    std::uint32_t n_layer = 16, n_embd = 512, n_ff = 1536, n_head = 8, n_head_kv = 2, n_expert = 0;
    std::uint32_t n_vocab = 1000;
    bool fused_qkv = false;  // falcon/phi style attn_qkv instead of q, k, v
    bool mla = false;        // deepseek2-style attn_kv_b
    bool extras = true;      // tensors llama.cpp never quantizes (position table, conv kernel, …)
    bool tied = false;       // no output.weight: token_embd doubles as the output
    tt weights = tt::f16;
};

// A llama-shaped tensor list, file order deliberately not llama.cpp's (layers interleaved by kind).
model_facts make_model(const shape& s) {
    model_facts m;
    m.arch = s.arch;
    m.n_layer = s.n_layer;
    m.n_head = s.n_head;
    m.n_head_kv = s.n_head_kv;
    m.n_expert = s.n_expert;
    m.type_70b = is_llama_70b(s.arch, s.n_layer, s.n_head, s.n_head_kv);
    const std::int64_t e = s.n_embd, f = s.n_ff, kv = e / s.n_head * s.n_head_kv;
    auto add = [&](std::string name, tt type, std::array<std::int64_t, 4> ne) {
        m.tensors.push_back({std::move(name), type, ne});
    };
    add("token_embd.weight", s.weights, {e, s.n_vocab, 1, 1});
    add("output_norm.weight", tt::f32, {e, 1, 1, 1});
    if (!s.tied) add("output.weight", s.weights, {e, s.n_vocab, 1, 1});
    if (s.extras) {
        add("position_embd.weight", s.weights, {e, 64, 1, 1});
        add("rope_freqs.weight", tt::f32, {32, 1, 1, 1});
    }
    for (std::uint32_t l = 0; l < s.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", tt::f32, {e, 1, 1, 1});
        if (s.fused_qkv) {
            add(b + "attn_qkv.weight", s.weights, {e, e + 2 * kv, 1, 1});
        } else {
            add(b + "attn_q.weight", s.weights, {e, e, 1, 1});
            add(b + "attn_k.weight", s.weights, {e, kv, 1, 1});
            if (s.mla) add(b + "attn_kv_b.weight", s.weights, {kv, 2 * e, 1, 1});
            else add(b + "attn_v.weight", s.weights, {e, kv, 1, 1});
            add(b + "attn_q.bias", tt::f32, {e, 1, 1, 1});
        }
        add(b + "attn_output.weight", s.weights, {e, e, 1, 1});
        add(b + "ffn_norm.weight", tt::f32, {e, 1, 1, 1});
        if (s.n_expert > 1) {
            add(b + "ffn_gate_inp.weight", tt::f32, {e, s.n_expert, 1, 1});
            add(b + "ffn_gate_exps.weight", s.weights, {e, f, s.n_expert, 1});
            add(b + "ffn_up_exps.weight", s.weights, {e, f, s.n_expert, 1});
            add(b + "ffn_down_exps.weight", s.weights, {f, e, s.n_expert, 1});
        } else {
            add(b + "ffn_gate.weight", s.weights, {e, f, 1, 1});
            add(b + "ffn_up.weight", s.weights, {e, f, 1, 1});
            add(b + "ffn_down.weight", s.weights, {f, e, 1, 1});
        }
        if (s.extras && l == 0) add(b + "ssm_conv1d.weight", s.weights, {4, e, 1, 1});
    }
    // File order: the layer tensors of odd layers first (llama.cpp reorders by layer, then name).
    std::stable_partition(m.tensors.begin(), m.tensors.end(), [](const tensor_fact& t) {
        return t.name.rfind("blk.", 0) == 0 && (t.name[4] - '0') % 2 == 1;
    });
    return m;
}

const tensor_choice& find(const type_plan& p, const std::string& name) {
    for (const auto& c : p.tensors)
        if (c.name == name) return c;
    static tensor_choice none;
    ADD_FAILURE() << "no tensor " << name;
    return none;
}

type_plan plan_ok(const model_facts& m, const plan_options& o) {
    auto p = plan_types(m, o);
    EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message());
    return p ? *p : type_plan{};
}

TEST(TypePlan, ParsesTypeNamesAndNumbers) {
    auto a = parse_file_type("Q4_K_M");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->ftype, file_type::q4_k_m);
    EXPECT_EQ(parse_file_type("q4_k")->ftype, file_type::q4_k_m);
    EXPECT_EQ(parse_file_type("15")->ftype, file_type::q4_k_m);
    EXPECT_EQ(parse_file_type("15")->name, "Q4_K_M");
    EXPECT_EQ(parse_file_type("IQ4_XS")->ftype, file_type::iq4_xs);
    EXPECT_EQ(parse_file_type("7")->ftype, file_type::q8_0);
    EXPECT_TRUE(parse_file_type("copy")->copy);
    EXPECT_EQ(parse_file_type("Q9_K").error().code, errc::bad_value_text);
    EXPECT_EQ(parse_file_type("4").error().code, errc::bad_value_text);  // removed Q4_1_SOME_F16
    EXPECT_EQ(parse_file_type("").error().code, errc::bad_value_text);
    EXPECT_EQ(default_type(file_type::iq2_s), tt::iq2_xs);
    EXPECT_EQ(default_type(file_type::iq3_xs), tt::iq3_s);
    EXPECT_EQ(to_string(file_type::q5_k_m), "Q5_K_M");
}

TEST(TypePlan, Q4KMMixture) {
    const auto m = make_model({});
    plan_options o;
    o.ftype = file_type::q4_k_m;
    const auto p = plan_ok(m, o);
    EXPECT_EQ(find(p, "blk.0.attn_norm.weight").to, tt::f32);
    EXPECT_FALSE(find(p, "blk.0.attn_norm.weight").quantizable);
    EXPECT_EQ(find(p, "position_embd.weight").to, tt::f16);
    EXPECT_EQ(find(p, "blk.0.ssm_conv1d.weight").to, tt::f16);
    EXPECT_EQ(find(p, "output.weight").to, tt::q6_k);
    EXPECT_EQ(find(p, "token_embd.weight").to, tt::q4_k);
    EXPECT_EQ(find(p, "blk.5.attn_q.weight").to, tt::q4_k);
    // use_more_bits(i, 16): layers 0, 1 (first eighth), 14, 15 (last eighth), and 4, 7, 10, 13.
    for (int l : {0, 1, 4, 7, 10, 13, 14, 15}) EXPECT_EQ(find(p, "blk." + std::to_string(l) + ".ffn_down.weight").to, tt::q6_k) << l;
    for (int l : {2, 3, 5, 6, 8, 9, 11, 12}) EXPECT_EQ(find(p, "blk." + std::to_string(l) + ".ffn_down.weight").to, tt::q4_k) << l;
    EXPECT_EQ(find(p, "blk.4.attn_v.weight").to, tt::q6_k);
    EXPECT_EQ(find(p, "blk.5.attn_v.weight").to, tt::q4_k);
    EXPECT_EQ(p.n_fallback, 0u);
    // Output order: llama.cpp's (no "blk." first, then by layer number, then by name).
    EXPECT_EQ(p.tensors.front().name, "output.weight");
    EXPECT_EQ(p.tensors.back().name, "blk.15.ffn_up.weight");
}

TEST(TypePlan, OptionsAndOverrides) {
    const auto m = make_model({});
    plan_options o;
    o.ftype = file_type::q4_0;
    o.pure = true;
    auto p = plan_ok(m, o);
    EXPECT_EQ(find(p, "output.weight").to, tt::q4_0);
    o.pure = false;
    o.leave_output = true;
    o.token_embd_type = tt::q8_0;
    o.overrides = {{"attn_v", tt::q8_0}, {"ffn_down", tt::q5_k}};
    p = plan_ok(m, o);
    EXPECT_EQ(find(p, "output.weight").to, tt::f16);
    EXPECT_EQ(find(p, "token_embd.weight").to, tt::q8_0);
    EXPECT_EQ(find(p, "blk.3.attn_v.weight").to, tt::q8_0);
    EXPECT_EQ(find(p, "blk.3.ffn_down.weight").to, tt::q5_k);
    EXPECT_EQ(find(p, "blk.3.ffn_up.weight").to, tt::q4_0);
    o.overrides = {{"(", tt::q8_0}};
    EXPECT_EQ(plan_types(m, o).error().code, errc::bad_value_text);
    o = {};
    o.copy = true;
    p = plan_ok(m, o);
    for (const auto& c : p.tensors) EXPECT_FALSE(c.converted) << c.name;
}

TEST(TypePlan, FallbacksAndImatrix) {
    shape s;
    s.n_embd = 320;  // a multiple of 32, not of 256
    s.n_ff = 1280;
    const auto m = make_model(s);
    plan_options o;
    o.ftype = file_type::q4_k_m;
    auto p = plan_ok(m, o);
    EXPECT_EQ(find(p, "blk.2.attn_q.weight").to, tt::q5_0);     // q4_K -> q5_0
    EXPECT_EQ(find(p, "blk.0.ffn_down.weight").to, tt::q6_k);   // 1280 = 5 * 256
    EXPECT_EQ(find(p, "blk.2.attn_v.weight").to, tt::q5_0);
    EXPECT_TRUE(find(p, "blk.2.attn_q.weight").fallback);
    EXPECT_EQ(find(p, "output.weight").to, tt::q8_0);          // the output rule's own fallback
    EXPECT_GT(p.n_fallback, 0u);
    o.ftype = file_type::q8_0;  // q8_0 rows of 100 fall back to f16 (32-block types have no smaller one)
    s.n_embd = 100;
    s.n_head = 4;
    s.n_head_kv = 4;
    p = plan_ok(make_model(s), o);
    EXPECT_EQ(find(p, "blk.0.attn_q.weight").to, tt::f16);
    o.overrides = {{"attn_q", tt::q1_0}};  // q1_0 (128-blocks) has no fallback: llama.cpp stops, we fail
    EXPECT_EQ(plan_types(make_model(s), o).error().code, errc::not_block_multiple);
    o.overrides.clear();

    o.ftype = file_type::iq3_xxs;  // attn_v: iq3_s without an imatrix, iq3_xxs with one (n_gqa < 4)
    shape g;
    g.n_head_kv = 8;
    p = plan_ok(make_model(g), o);
    EXPECT_EQ(find(p, "blk.1.attn_v.weight").to, tt::iq3_s);
    EXPECT_TRUE(p.needs_importance);
    o.has_imatrix = true;
    p = plan_ok(make_model(g), o);
    EXPECT_EQ(find(p, "blk.1.attn_v.weight").to, tt::iq3_xxs);
    EXPECT_EQ(find(p, "blk.1.ffn_down.weight").to, tt::iq3_xxs);
    EXPECT_FALSE(p.needs_importance);
}

// ---- against llama.cpp -------------------------------------------------------------------------

namespace lr = minfer::llama_ref;

struct variant {
    std::string label;
    bool pure = false, leave_output = false, copy = false;
    std::optional<tt> output_type, token_embd_type;
    std::vector<type_override> overrides;
};

std::vector<variant> variants() {
    std::vector<variant> v(6);
    v[0].label = "plain";
    v[1].label = "--pure";
    v[1].pure = true;
    v[2].label = "--leave-output-tensor";
    v[2].leave_output = true;
    v[3].label = "--output-tensor-type q8_0 --token-embedding-type q4_K";
    v[3].output_type = tt::q8_0;
    v[3].token_embd_type = tt::q4_k;
    v[4].label = "--tensor-type attn_v=q8_0 --tensor-type blk\\.[0-3]\\.ffn_down=q5_K";
    v[4].overrides = {{"attn_v", tt::q8_0}, {"blk\\.[0-3]\\.ffn_down", tt::q5_k}};
    v[5].label = "--output-tensor-type q5_K (tied token_embd follows it)";
    v[5].output_type = tt::q5_k;
    return v;
}

// llama.cpp's plan of `m` for `ftype` under `var`, in llama order; nullopt when llama.cpp throws.
std::optional<std::vector<int>> llama_plan(const lr::llama_lib* lib, const shape& s, const model_facts& m,
                                           const std::vector<std::size_t>& order, file_type ftype,
                                           const variant& var) {
    const auto& a = lib->api();
    lr::llama_quant_model_desc d{s.arch.c_str(), s.n_embd, s.n_ff, s.n_layer, s.n_head, s.n_head_kv, s.n_expert,
                                 s.n_embd / s.n_head, s.n_embd / s.n_head};
    lr::llama_model* model = a.llama_quant_model_from_metadata(&d);
    if (model == nullptr) return std::nullopt;
    lr::llama_model_quantize_params p = a.llama_model_quantize_default_params();
    p.ftype = static_cast<int>(ftype);
    p.pure = var.pure;
    p.only_copy = var.copy;
    p.quantize_output_tensor = !var.leave_output;
    if (var.output_type) p.output_tensor_type = static_cast<int>(*var.output_type);
    if (var.token_embd_type) p.token_embedding_type = static_cast<int>(*var.token_embd_type);
    std::vector<lr::llama_tensor_type_override> ov;
    for (const auto& o : var.overrides) ov.push_back({o.pattern.c_str(), static_cast<int>(o.type)});
    ov.push_back({nullptr, 0});
    p.tt_overrides = ov.data();
    lr::quantize_state_impl* qs = a.llama_quant_init(model, &p);

    lr::ggml_context* ctx = a.ggml_init({m.tensors.size() * a.ggml_tensor_overhead() + 1024, nullptr, true});
    std::vector<lr::ggml_tensor*> ts;
    for (std::size_t k : order) {
        const auto& t = m.tensors[k];
        int nd = 1;
        for (int i = 3; i >= 1; --i)
            if (t.ne[static_cast<std::size_t>(i)] > 1) { nd = i + 1; break; }
        lr::ggml_tensor* g = a.ggml_new_tensor(ctx, static_cast<int>(t.type), nd, t.ne.data());
        a.ggml_set_name(g, t.name.c_str());
        ts.push_back(g);
    }
    std::vector<int> out(ts.size(), -1);
    bool threw = false;
    try {
        a.llama_quant_compute_types(qs, static_cast<int>(ftype), ts.data(), out.data(), ts.size());
    } catch (...) {  // llama.cpp throws where a row fits no type: we return an error there
        threw = true;
    }
    a.ggml_free(ctx);
    a.llama_quant_free(qs);
    a.llama_model_free(model);
    (void)lib->take_log();
    if (threw) return std::nullopt;
    return out;
}

void compare_with_llama(const lr::llama_lib* lib, const shape& s, const std::string& what, int& compared) {
    const model_facts m = make_model(s);
    const auto order = llama_tensor_order(m.tensors);
    for (const variant& var : variants()) {
        for (const file_type_name& ftn : file_type_names()) {
            if (ftn.copy) continue;
            plan_options o;
            o.ftype = ftn.ftype;
            o.pure = var.pure;
            o.leave_output = var.leave_output;
            o.output_type = var.output_type;
            o.token_embd_type = var.token_embd_type;
            o.overrides = var.overrides;
            const auto ours = plan_types(m, o);
            const auto theirs = llama_plan(lib, s, m, order, ftn.ftype, var);
            const std::string ctx = what + ", " + std::string(ftn.name) + ", " + var.label;
            ASSERT_EQ(ours.has_value(), theirs.has_value())
                << ctx << ": " << (ours ? "we planned, llama.cpp threw" : ours.error().message());
            if (!ours) continue;
            ASSERT_EQ(ours->tensors.size(), theirs->size());
            for (std::size_t i = 0; i < theirs->size(); ++i) {
                const auto& c = ours->tensors[i];
                ASSERT_EQ(c.name, m.tensors[order[i]].name);
                EXPECT_EQ(static_cast<int>(c.to), (*theirs)[i])
                    << ctx << ": " << c.name << " ours " << to_string(c.to) << " (" << c.why << "), llama.cpp "
                    << to_string(static_cast<tt>((*theirs)[i]));
                ++compared;
            }
        }
    }
}

const lr::llama_lib* quant_lib(std::string& why) {
    return lr::llama_lib::require(lr::part::llama_model | lr::part::llama_quant | lr::part::ggml_tensors |
                                      lr::part::type_count,
                                  why);
}

TEST(TypePlanVsLlama, EveryFileTypeAndOption) {
    std::string why;
    const lr::llama_lib* lib = quant_lib(why);
    if (lib == nullptr) MINFER_SKIP_REFERENCE(why);
    std::vector<std::pair<std::string, shape>> models;
    models.emplace_back("llama gqa4", shape{});
    shape mha;
    mha.n_head_kv = 8;
    mha.weights = tt::bf16;
    models.emplace_back("llama mha bf16", mha);
    shape tied;
    tied.tied = true;
    tied.n_layer = 12;
    models.emplace_back("llama tied embeddings", tied);
    shape b70;
    b70.n_layer = 80;
    b70.n_head = 64;
    b70.n_head_kv = 8;
    b70.n_embd = 1024;
    b70.extras = false;
    models.emplace_back("llama 70B (80 layers, GQA)", b70);
    shape mixtral;
    mixtral.n_expert = 8;
    mixtral.n_layer = 8;
    models.emplace_back("llama 8 experts", mixtral);
    shape moe;
    moe.arch = "qwen3moe";
    moe.n_expert = 16;
    moe.n_layer = 10;
    models.emplace_back("qwen3moe 16 experts", moe);
    shape falcon;
    falcon.arch = "falcon";
    falcon.fused_qkv = true;
    falcon.n_head_kv = 1;
    models.emplace_back("falcon fused qkv", falcon);
    shape phi;
    phi.arch = "phi3";
    phi.fused_qkv = true;
    phi.n_head_kv = 8;
    models.emplace_back("phi3 fused qkv", phi);
    shape ds;
    ds.arch = "deepseek2";
    ds.mla = true;
    models.emplace_back("deepseek2 attn_kv_b", ds);
    shape odd;
    odd.n_embd = 320;
    odd.n_ff = 864;
    models.emplace_back("rows of 320/864 (not 256-blocks)", odd);
    shape odd2;
    odd2.n_embd = 96;
    odd2.n_head = 3;
    odd2.n_head_kv = 1;
    odd2.n_ff = 288;
    models.emplace_back("rows of 96/288", odd2);
    shape odd3;
    odd3.n_embd = 80;
    odd3.n_head = 5;
    odd3.n_head_kv = 5;
    odd3.n_ff = 160;
    models.emplace_back("rows of 80/160 (not 32-blocks)", odd3);
    int compared = 0;
    for (const auto& [what, s] : models) {
        compare_with_llama(lib, s, what, compared);
        if (HasFatalFailure()) return;
    }
    std::printf("type plan: %d tensor choices equal to llama.cpp's\n", compared);
    EXPECT_GT(compared, 10000);
}

}  // namespace
namespace {
// The fallback of every type a --tensor-type override can ask for, on rows of 80 (fits no block),
// 96 (32-blocks only) and 160 (32-blocks, not 64): ours equals llama.cpp's, refusals included.
TEST(TypePlanVsLlama, FallbackOfEveryType) {
    std::string why;
    const lr::llama_lib* lib = quant_lib(why);
    if (lib == nullptr) MINFER_SKIP_REFERENCE(why);
    for (std::uint32_t e : {80u, 96u, 160u}) {
        shape s;
        s.n_embd = s.n_ff = e;
        s.n_head = s.n_head_kv = s.n_layer = 1;
        s.extras = false;
        const model_facts m = make_model(s);
        const auto order = llama_tensor_order(m.tensors);
        for (std::uint32_t t = 0; t < minfer::gguf::tensor_type_count; ++t) {
            const auto* tr = minfer::gguf::traits(t);
            if (tr == nullptr || tr->removed()) continue;
            variant v;
            v.overrides = {{"attn_q\\.weight", static_cast<tt>(t)}};
            plan_options o;
            o.ftype = file_type::q4_0;
            o.overrides = v.overrides;
            const auto theirs = llama_plan(lib, s, m, order, file_type::q4_0, v);
            const auto ours = plan_types(m, o);
            ASSERT_EQ(ours.has_value(), theirs.has_value()) << "row " << e << ", override " << tr->name;
            if (!ours) continue;
            for (std::size_t i = 0; i < order.size(); ++i)
                EXPECT_EQ(static_cast<int>(ours->tensors[i].to), (*theirs)[i])
                    << "row " << e << ", override " << tr->name << ": " << ours->tensors[i].name;
        }
    }
}
}  // namespace
