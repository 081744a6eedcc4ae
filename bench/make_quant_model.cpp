// minfer-bench-quant-model: the model of scripts/bench-quantize.sh, quantized by llama.cpp and by
// `minfer quantize` in turn. A llama-architecture model shaped like TinyLlama-1.1B (n_embd 2048,
// n_ff 5632, 32 heads, 4 KV heads, n_vocab 32000) with fewer layers, so that its tensors are the
// shapes real quantizations see (rows of 2048 and 5632 values, GQA attn_k/attn_v, a 32000-row
// token_embd and output), and a matching importance matrix for the types that need one.
//
//   minfer-bench-quant-model OUT [--layers N] [--type f16|bf16|f32] [--imatrix OUT.imatrix.gguf] [--experts E]
//
// --experts E makes each block's feed-forward network E experts of a Mixtral-style llama MoE
// (ffn_{gate,up,down}_exps with a quarter of n_ff each, an f32 router ffn_gate_inp, 2 experts used):
// the model of scripts/bench-prune.sh's expert prune.
//
// 4 layers (the default) in f16 make 614 MiB. The weights are heavy-tailed (a Student t with 4
// degrees of freedom, times a per-column scale drawn log-normal, like the outlier columns of
// trained weights), so the quantizers' searches take the paths real weights make them take;
// uniform or Gaussian values would flatter some of them. Every value is a pure function of the
// tensor name and its index (a counter-based hash), so the same build writes the same bytes and
// the writer may ask for any range in any order. The metadata is what llama.cpp's quantizer reads
// (llama.* hyperparameters; a llama tokenizer of 32000 plain tokens for the vocabulary size).
//
// The imatrix is a GGUF one as llama-imatrix writes it (docs/QUANT.md "Importance matrices"):
// NAME.in_sum2 [ne0, 1] and NAME.counts [1, 1] for every matrix llama-imatrix sees (every 2-D weight
// but token_embd), with log-normal column energies, imatrix.datasets/chunk_count/chunk_size.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf_write/writer.hpp"
#include "quant.hpp"  // tools/sample: f32 -> f16 / bf16 as ggml rounds

namespace {

namespace gg = minfer::gguf;

constexpr std::int64_t n_embd = 2048;
constexpr std::int64_t n_ff = 5632;
constexpr std::int64_t n_head = 32;
constexpr std::int64_t n_head_kv = 4;
constexpr std::int64_t head_dim = n_embd / n_head;  // 64
constexpr std::int64_t n_vocab = 32000;

std::uint64_t splitmix(std::uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
std::uint64_t name_seed(std::string_view name) noexcept {  // FNV-1a
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return splitmix(h);
}
// A uniform in (0, 1] from 32 bits.
double unit(std::uint32_t b) noexcept { return (static_cast<double>(b) + 1.0) * (1.0 / 4294967296.0); }

// An approximately normal value from 64 bits: the sum of four 16-bit uniforms (Irwin-Hall), scaled
// to unit variance. Bounded by +-3.46, which keeps the t below finite and f16-representable.
double normalish(std::uint64_t h) noexcept {
    double s = 0;
    for (int k = 0; k < 4; ++k) s += static_cast<double>((h >> (16 * k)) & 0xFFFF) * (1.0 / 65536.0);
    return (s - 2.0) * 1.7320508075688772;  // var of the sum is 4/12
}

// One weight tensor: value(i) = scale * col[i % ne0] * t4(i).
struct weight_tensor {
    std::string name;
    gg::tensor_type type;
    std::vector<std::int64_t> ne;
    float scale;
    float mean;                 ///< norms: 1 + small noise
    std::uint64_t seed;
    std::vector<float> column;  ///< per-column factors (empty: 1)

    double value(std::uint64_t i) const noexcept {
        const std::uint64_t h1 = splitmix(seed ^ (2 * i));
        const std::uint64_t h2 = splitmix(seed ^ (2 * i + 1));
        const double z = normalish(h1);
        // t with 4 dof: z / sqrt(chi2_4 / 4), chi2_4 = -2 ln(u1 u2); the chi2 floored at 0.1 so
        // that |t| stays below 6.4 * 3.46 (the tails are heavy, not unbounded).
        const double chi2 = std::max(0.1, -2.0 * std::log(unit(static_cast<std::uint32_t>(h2)) *
                                                         unit(static_cast<std::uint32_t>(h2 >> 32))));
        const double t = z / std::sqrt(chi2 / 4.0);
        const double c = column.empty() ? 1.0 : column[i % static_cast<std::uint64_t>(ne[0])];
        return mean + scale * c * t;
    }
    std::uint64_t elements() const noexcept {
        std::uint64_t n = 1;
        for (const auto d : ne) n *= static_cast<std::uint64_t>(d);
        return n;
    }
};

std::size_t elem_bytes(gg::tensor_type t) { return t == gg::tensor_type::f32 ? 4 : 2; }

void encode(gg::tensor_type t, double v, unsigned char* out) {
    const float f = static_cast<float>(v);
    if (t == gg::tensor_type::f32) {
        std::memcpy(out, &f, 4);
        return;
    }
    const std::uint16_t h = t == gg::tensor_type::f16 ? minfer::sample::f32_to_f16(f) : minfer::sample::f32_to_bf16(f);
    std::memcpy(out, &h, 2);
}

weight_tensor make_weight(std::string name, gg::tensor_type type, std::vector<std::int64_t> ne, float scale) {
    weight_tensor w{std::move(name), type, std::move(ne), scale, 0.0f, 0, {}};
    w.seed = name_seed(w.name);
    w.column.resize(static_cast<std::size_t>(w.ne[0]));
    for (std::size_t j = 0; j < w.column.size(); ++j)  // log-normal, sigma 0.5
        w.column[j] = static_cast<float>(std::exp(0.5 * normalish(splitmix(w.seed + 0x5151 + j))));
    return w;
}
weight_tensor make_norm(std::string name) {
    weight_tensor w{std::move(name), gg::tensor_type::f32, {n_embd}, 0.02f, 1.0f, 0, {}};
    w.seed = name_seed(w.name);
    return w;
}

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "minfer-bench-quant-model: %s\n", what.c_str());
    std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    std::string out, imatrix_out;
    int layers = 4;
    int experts = 0;
    gg::tensor_type wtype = gg::tensor_type::f16;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--layers" && i + 1 < argc) {
            layers = std::atoi(argv[++i]);
        } else if (a == "--type" && i + 1 < argc) {
            const std::string_view t = argv[++i];
            if (t == "f16") wtype = gg::tensor_type::f16;
            else if (t == "bf16") wtype = gg::tensor_type::bf16;
            else if (t == "f32") wtype = gg::tensor_type::f32;
            else die("--type is f16, bf16 or f32");
        } else if (a == "--imatrix" && i + 1 < argc) {
            imatrix_out = argv[++i];
        } else if (a == "--experts" && i + 1 < argc) {
            experts = std::atoi(argv[++i]);
            if (experts < 1 || experts > 256) die("--experts is 1..256");
        } else if (out.empty() && !a.starts_with("--")) {
            out = a;
        } else {
            die("usage: minfer-bench-quant-model OUT [--layers N] [--type f16|bf16|f32] [--imatrix OUT] [--experts E]");
        }
    }
    if (out.empty() || layers < 1 || layers > 200) die("usage: minfer-bench-quant-model OUT [--layers N] [--type f16|bf16|f32] [--imatrix OUT] [--experts E]");

    // Tensors in a converter's order: token_embd, output_norm, output, then each block.
    std::vector<weight_tensor> ts;
    ts.push_back(make_weight("token_embd.weight", wtype, {n_embd, n_vocab}, 0.02f));
    ts.push_back(make_norm("output_norm.weight"));
    ts.push_back(make_weight("output.weight", wtype, {n_embd, n_vocab}, 0.02f));
    for (int l = 0; l < layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        ts.push_back(make_norm(b + "attn_norm.weight"));
        ts.push_back(make_weight(b + "attn_q.weight", wtype, {n_embd, n_embd}, 0.02f));
        ts.push_back(make_weight(b + "attn_k.weight", wtype, {n_embd, n_head_kv * head_dim}, 0.03f));
        ts.push_back(make_weight(b + "attn_v.weight", wtype, {n_embd, n_head_kv * head_dim}, 0.01f));
        ts.push_back(make_weight(b + "attn_output.weight", wtype, {n_embd, n_embd}, 0.015f));
        ts.push_back(make_norm(b + "ffn_norm.weight"));
        if (experts > 0) {
            const std::int64_t e = experts, ff = n_ff / 4;
            ts.push_back(make_weight(b + "ffn_gate_inp.weight", gg::tensor_type::f32, {n_embd, e}, 0.02f));
            ts.push_back(make_weight(b + "ffn_gate_exps.weight", wtype, {n_embd, ff, e}, 0.02f));
            ts.push_back(make_weight(b + "ffn_up_exps.weight", wtype, {n_embd, ff, e}, 0.02f));
            ts.push_back(make_weight(b + "ffn_down_exps.weight", wtype, {ff, n_embd, e}, 0.015f));
            continue;
        }
        ts.push_back(make_weight(b + "ffn_gate.weight", wtype, {n_embd, n_ff}, 0.02f));
        ts.push_back(make_weight(b + "ffn_up.weight", wtype, {n_embd, n_ff}, 0.02f));
        ts.push_back(make_weight(b + "ffn_down.weight", wtype, {n_ff, n_embd}, 0.015f));
    }

    gg::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "minfer quantize benchmark");
    w.set_u32("general.file_type", wtype == gg::tensor_type::f32 ? 0u : wtype == gg::tensor_type::f16 ? 1u : 32u);
    w.set_u32("llama.context_length", 2048);
    w.set_u32("llama.embedding_length", static_cast<std::uint32_t>(n_embd));
    w.set_u32("llama.block_count", static_cast<std::uint32_t>(layers));
    w.set_u32("llama.feed_forward_length", static_cast<std::uint32_t>(experts > 0 ? n_ff / 4 : n_ff));
    if (experts > 0) {
        w.set_u32("llama.expert_count", static_cast<std::uint32_t>(experts));
        w.set_u32("llama.expert_used_count", 2);
    }
    w.set_u32("llama.rope.dimension_count", static_cast<std::uint32_t>(head_dim));
    w.set_u32("llama.attention.head_count", static_cast<std::uint32_t>(n_head));
    w.set_u32("llama.attention.head_count_kv", static_cast<std::uint32_t>(n_head_kv));
    w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_f32("llama.rope.freq_base", 10000.0f);
    w.set_u32("llama.vocab_size", static_cast<std::uint32_t>(n_vocab));
    w.set_string("tokenizer.ggml.model", "llama");
    {
        std::vector<std::string> tokens;
        std::vector<float> scores;
        std::vector<std::int32_t> types;
        for (std::int64_t i = 0; i < n_vocab; ++i) {
            tokens.push_back(i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : "tok" + std::to_string(i));
            scores.push_back(static_cast<float>(-i));
            types.push_back(i < 3 ? 3 : 1);  // control, normal
        }
        w.set_strings("tokenizer.ggml.tokens", tokens);
        w.set_array("tokenizer.ggml.scores", gg::value_type::f32, std::span<const float>(scores));
        w.set_array("tokenizer.ggml.token_type", gg::value_type::i32, std::span<const std::int32_t>(types));
    }
    w.set_u32("tokenizer.ggml.bos_token_id", 1);
    w.set_u32("tokenizer.ggml.eos_token_id", 2);
    w.set_u32("tokenizer.ggml.unknown_token_id", 0);

    for (const auto& t : ts) {
        const std::size_t es = elem_bytes(t.type);
        const std::uint64_t bytes = t.elements() * es;
        const weight_tensor* tp = &t;
        w.add_tensor(t.name, t.type, t.ne,
                     gg::tensor_source::callback(bytes, [tp, es](std::uint64_t off, std::span<std::byte> dst) {
                         // Any byte range: whole elements from the one holding `off` on.
                         unsigned char buf[4];
                         std::size_t k = 0;
                         for (std::uint64_t e = off / es; k < dst.size(); ++e) {
                             encode(tp->type, tp->value(e), buf);
                             const std::size_t from = k == 0 ? static_cast<std::size_t>(off % es) : 0;
                             const std::size_t n = std::min(es - from, dst.size() - k);
                             std::memcpy(dst.data() + k, buf + from, n);
                             k += n;
                         }
                         return gg::result<void>{};
                     }));
    }
    if (auto r = w.write(out); !r) die(r.error().message());

    if (!imatrix_out.empty()) {
        constexpr std::uint32_t chunks = 100, chunk_size = 512;
        const float count = static_cast<float>(chunks * chunk_size);
        gg::writer m;
        m.set_string("general.type", "imatrix");
        const std::vector<std::string> datasets{"minfer-bench-random"};
        m.set_strings("imatrix.datasets", datasets);
        m.set_u32("imatrix.chunk_count", chunks);
        m.set_u32("imatrix.chunk_size", chunk_size);
        for (const auto& t : ts) {
            if (t.ne.size() != 2 || t.name == "token_embd.weight") continue;
            const std::string base = t.name;
            std::vector<float> sum2(static_cast<std::size_t>(t.ne[0]));
            const std::uint64_t s = name_seed(base + ".activations");
            for (std::size_t j = 0; j < sum2.size(); ++j)  // energy per column, log-normal sigma 1
                sum2[j] = count * static_cast<float>(std::exp(normalish(splitmix(s + j))));
            const std::int64_t s_ne[] = {t.ne[0], 1};
            const std::int64_t c_ne[] = {1, 1};
            const float counts[] = {count};
            m.add_tensor(base + ".in_sum2", gg::tensor_type::f32, s_ne, std::as_bytes(std::span<const float>(sum2)));
            m.add_tensor(base + ".counts", gg::tensor_type::f32, c_ne, std::as_bytes(std::span<const float>(counts)));
        }
        if (auto r = m.write(imatrix_out); !r) die(r.error().message());
    }
    return 0;
}
