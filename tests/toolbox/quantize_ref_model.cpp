// The quantize reference test's models and importance matrices (quantize_ref_model.hpp).
#include "quantize_ref_model.hpp"

#include <cmath>
#include <cstring>
#include <span>
#include <string_view>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/toolbox/split_write.hpp"
#include "sample_model.hpp"

namespace minfer_quantize_ref {
namespace {

namespace gguf = minfer::gguf;
using gguf::tensor_type;

// splitmix64: a fixed generator (std's distributions differ between libraries).
struct rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in (0, 1): 53 random bits, never 0.
    double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }
    // Laplace(0, 1), and one value in 256 multiplied by 6: heavy tails like real weights' outliers.
    double heavy() {
        const double u = uniform() - 0.5;
        double x = u < 0 ? std::log(1 + 2 * u) : -std::log(1 - 2 * u);
        if ((next() & 255) == 0) x *= 6;
        return x;
    }
};

std::uint64_t seed_of(std::string_view name) {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return h;
}

std::int64_t elements(const std::vector<std::int64_t>& ne) {
    std::int64_t n = 1;
    for (const std::int64_t d : ne) n *= d;
    return n;
}

bool is_norm(const std::string& name) { return name.find("_norm.") != std::string::npos; }

std::vector<float> values_of(const tensor_shape& t) {
    rng r{seed_of(t.name)};
    std::vector<float> v(static_cast<std::size_t>(elements(t.ne)));
    if (is_norm(t.name)) {
        for (float& x : v) x = static_cast<float>(1.0 + 0.05 * r.heavy());
        return v;
    }
    // Roughly 1/sqrt(fan-in) so that activations stay of order one through the layers; a per-row
    // scale that varies by 4x (rows of real matrices differ in magnitude too).
    const double base = 1.0 / std::sqrt(static_cast<double>(t.ne[0]));
    const std::int64_t rows = elements(t.ne) / t.ne[0];
    for (std::int64_t i = 0; i < rows; ++i) {
        const double row_scale = base * (0.5 + 1.5 * r.uniform());
        for (std::int64_t j = 0; j < t.ne[0]; ++j)
            v[static_cast<std::size_t>(i * t.ne[0] + j)] = static_cast<float>(row_scale * 0.7 * r.heavy());
    }
    return v;
}

std::uint32_t file_type_of(tensor_type store) {
    switch (store) {
        case tensor_type::f16: return 1;
        case tensor_type::bf16: return 32;
        default: return 0;
    }
}

}  // namespace

std::vector<tensor_shape> model_tensors(const model_options& o) {
    const std::int64_t n_vocab = minfer::sample::n_vocab;
    std::vector<tensor_shape> t;
    t.push_back({"token_embd.weight", {n_embd, n_vocab}});
    for (std::uint32_t i = 0; i < o.n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        t.push_back({b + "attn_norm.weight", {n_embd}});
        t.push_back({b + "attn_q.weight", {n_embd, n_head * head_dim}});
        t.push_back({b + "attn_k.weight", {n_embd, n_head_kv * head_dim}});
        t.push_back({b + "attn_v.weight", {n_embd, n_head_kv * head_dim}});
        t.push_back({b + "attn_output.weight", {n_head * head_dim, n_embd}});
        t.push_back({b + "ffn_norm.weight", {n_embd}});
        if (o.moe) {
            t.push_back({b + "ffn_gate_inp.weight", {n_embd, n_expert}});
            t.push_back({b + "ffn_gate_exps.weight", {n_embd, n_ff_expert, n_expert}});
            t.push_back({b + "ffn_down_exps.weight", {n_ff_expert, n_embd, n_expert}});
            t.push_back({b + "ffn_up_exps.weight", {n_embd, n_ff_expert, n_expert}});
        } else {
            const std::int64_t ff = o.n_ff != 0 ? o.n_ff : n_ff_dense;
            t.push_back({b + "ffn_gate.weight", {n_embd, ff}});
            t.push_back({b + "ffn_down.weight", {ff, n_embd}});
            t.push_back({b + "ffn_up.weight", {n_embd, ff}});
        }
    }
    t.push_back({"output_norm.weight", {n_embd}});
    t.push_back({"output.weight", {n_embd, n_vocab}});
    return t;
}

gguf::result<void> write_model(const fs::path& path, const model_options& o) noexcept {
    try {
        gguf::writer w;
        const std::string a = "llama.";
        w.set_string("general.architecture", "llama");
        w.set_string("general.type", "model");
        w.set_string("general.name", o.moe ? "minfer quantize reference (MoE)" : "minfer quantize reference");
        w.set_u32("general.file_type", file_type_of(o.store));
        w.set_u32(a + "block_count", o.n_layer);
        w.set_u32(a + "context_length", 2048);
        w.set_u32(a + "embedding_length", static_cast<std::uint32_t>(n_embd));
        w.set_u32(a + "feed_forward_length", static_cast<std::uint32_t>(o.moe ? n_ff_expert : o.n_ff != 0 ? o.n_ff : n_ff_dense));
        w.set_u32(a + "attention.head_count", static_cast<std::uint32_t>(n_head));
        w.set_u32(a + "attention.head_count_kv", static_cast<std::uint32_t>(n_head_kv));
        w.set_f32(a + "rope.freq_base", 10000.0f);
        w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
        w.set_u32(a + "rope.dimension_count", static_cast<std::uint32_t>(head_dim));
        w.set_u32(a + "vocab_size", minfer::sample::n_vocab);
        if (o.moe) {
            w.set_u32(a + "expert_count", static_cast<std::uint32_t>(n_expert));
            w.set_u32(a + "expert_used_count", static_cast<std::uint32_t>(n_expert_used));
        }
        // sample_model's byte-level BPE tokenizer (what llama.cpp's gpt2 vocabulary loader needs).
        const minfer::sample::vocabulary v = minfer::sample::sample_vocabulary();
        w.set_string("tokenizer.ggml.model", "gpt2");
        w.set_string("tokenizer.ggml.pre", "qwen2");
        w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(v.tokens));
        w.set_array("tokenizer.ggml.token_type", gguf::value_type::i32, std::span<const std::int32_t>(v.token_types));
        w.set_strings("tokenizer.ggml.merges", std::span<const std::string>(v.merges));
        w.set_u32("tokenizer.ggml.eos_token_id", minfer::sample::eos_token_id);
        w.set_u32("tokenizer.ggml.padding_token_id", minfer::sample::pad_token_id);
        w.set_u32("tokenizer.ggml.bos_token_id", minfer::sample::bos_token_id);
        w.set_bool("tokenizer.ggml.add_bos_token", false);

        for (const tensor_shape& t : model_tensors(o)) {
            std::vector<float> f = values_of(t);
            if (o.outlier != 0 && t.name == "blk.0.attn_q.weight") f[5] = o.outlier;
            // Norms and the expert router stay f32, as convert_hf_to_gguf.py leaves 1-D tensors (and
            // as llama.cpp keeps the router's type).
            const bool keep_f32 = t.ne.size() == 1 || t.name.find("ffn_gate_inp") != std::string::npos;
            const tensor_type type = keep_f32 ? tensor_type::f32 : o.store;
            std::vector<std::byte> bytes;
            if (type == tensor_type::f32) {
                bytes.resize(f.size() * sizeof(float));
                std::memcpy(bytes.data(), f.data(), bytes.size());
            } else {
                bytes.resize(f.size() * 2);
                if (auto r = minfer::quant::quantize_rows(type, f, t.ne[0], {}, bytes); !r)
                    return gguf::unexpected(std::move(r).error());
            }
            w.add_tensor(t.name, type, std::span<const std::int64_t>(t.ne), std::span<const std::byte>(bytes));
        }
        return w.write(path);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("a test model"));
    }
}

gguf::result<std::vector<fs::path>> split_model(const fs::path& model, const fs::path& prefix,
                                                std::uint64_t max_tensors) noexcept {
    auto m = gguf::model::open(model);
    if (!m) return gguf::unexpected(std::move(m).error());
    gguf::split_options so;
    so.max_tensors = max_tensors;
    auto plan = gguf::split_plan::make(*m, so);
    if (!plan) return gguf::unexpected(std::move(plan).error());
    std::vector<std::string> targets;
    std::vector<fs::path> paths;
    for (std::uint32_t i = 0; i < plan->part_count(); ++i) {
        targets.push_back(plan->part_name(prefix.string(), i));
        paths.emplace_back(targets.back());
    }
    if (auto f = minfer::toolbox::write_split(*m, *plan, targets, {})) return gguf::unexpected(f->error);
    return paths;
}

imatrix_spec make_imatrix(const model_options& o) {
    imatrix_spec s;
    s.datasets = {"minfer-calibration.txt"};
    s.chunk_count = 42;
    for (const tensor_shape& t : model_tensors(o)) {
        if (t.ne.size() < 2 || t.name == "token_embd.weight") continue;
        imatrix_entry e;
        e.name = t.name;
        const std::int64_t n_mat = t.ne.size() == 3 ? t.ne[2] : 1;
        rng r{seed_of(t.name) ^ 0x5eedull};
        e.sums.resize(static_cast<std::size_t>(t.ne[0] * n_mat));
        // Sums of squares over ~count tokens: count * (a heavy-tailed positive per-column energy).
        for (std::int64_t m = 0; m < n_mat; ++m) {
            const float count = (o.moe && n_mat > 1 && m == 1) ? 0.0f : static_cast<float>(1000 + 37 * m);
            e.counts.push_back(count);
            for (std::int64_t j = 0; j < t.ne[0]; ++j) {
                const double h = r.heavy();
                e.sums[static_cast<std::size_t>(m * t.ne[0] + j)] = static_cast<float>((count > 0 ? count : 1.0) * (0.05 + h * h));
            }
        }
        s.entries.push_back(std::move(e));
    }
    return s;
}

gguf::result<void> write_imatrix(const fs::path& path, const imatrix_spec& spec) noexcept {
    try {
        gguf::writer w;
        w.set_string("general.type", "imatrix");
        w.set_strings("imatrix.datasets", std::span<const std::string>(spec.datasets));
        w.set_u32("imatrix.chunk_count", spec.chunk_count);
        w.set_u32("imatrix.chunk_size", spec.chunk_size);
        for (const imatrix_entry& e : spec.entries) {
            const auto n_mat = static_cast<std::int64_t>(e.counts.size());
            const std::int64_t s_ne[2] = {static_cast<std::int64_t>(e.sums.size()) / n_mat, n_mat};
            const std::int64_t c_ne[2] = {1, n_mat};
            w.add_tensor(e.name + ".in_sum2", tensor_type::f32, s_ne, std::as_bytes(std::span<const float>(e.sums)));
            w.add_tensor(e.name + ".counts", tensor_type::f32, c_ne, std::as_bytes(std::span<const float>(e.counts)));
        }
        return w.write(path);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("a test model"));
    }
}

std::vector<float> imatrix_weights(const imatrix_entry& e) {
    const std::size_t n_mat = e.counts.size();
    const std::size_t ne0 = e.sums.size() / n_mat;
    std::vector<float> w(e.sums.size());
    for (std::size_t m = 0; m < n_mat; ++m)
        for (std::size_t j = 0; j < ne0; ++j)
            w[m * ne0 + j] = e.counts[m] > 0.0f ? e.sums[m * ne0 + j] / e.counts[m] : 1.0f;
    return w;
}

}  // namespace minfer_quantize_ref
