// model_plan.hpp: what convert_hf_to_gguf.py writes, planned from the headers alone.
#include "minfer/convert/model_plan.hpp"

#include <cmath>
#include <map>
#include <numbers>
#include <string>
#include <utility>

#include "minfer/convert/bpe_vocab.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/convert/model_metadata.hpp"
#include "minfer/convert/spm_vocab.hpp"
#include "minfer/convert/tensor_names.hpp"
#include "minfer/quant/dequantize.hpp"
#include "tokenizer_files.hpp"

namespace minfer::convert {
namespace {

using detail::fail_file;
using detail::convert_failure;

[[noreturn]] void rethrow(gguf::error e) { throw convert_failure{std::move(e)}; }

bool ends_with(std::string_view s, std::string_view suffix) noexcept {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string shape_text(std::span<const std::int64_t> shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// The shape config.json gives a tensor (outermost first, as safetensors writes it), by its GGUF name's
// role; empty when the name has no fixed shape here.
struct expected_shape {
    std::vector<std::int64_t> dims;
    std::string why;
};

class planner {
public:
    planner(const std::filesystem::path& dir, const conversion_options& options) : dir_(dir), options_(options) {}

    model_plan run() {
        auto config = read_hf_config(dir_ / "config.json");
        if (!config) rethrow(std::move(config).error());
        plan_.config = *std::move(config);
        refuse_reranker();
        auto weights = checkpoint::open(dir_);
        if (!weights) rethrow(std::move(weights).error());
        if (auto ok = weights->check_convertible(); !ok) rethrow(std::move(ok).error());
        plan_.weights.emplace(*std::move(weights));
        plan_.file_type = file_type();
        if (!options_.vocab_only) plan_tensors();
        keys();
        return std::move(plan_);
    }

private:
    const hf_config& config() const { return plan_.config; }
    const checkpoint& weights() const { return *plan_.weights; }
    bool is_llama() const { return config().arch == architecture::llama || config().arch == architecture::mistral; }

    // Qwen3Model._is_qwen3_reranker: such a checkpoint is converted with a classifier head and a rank
    // pooling, which this converter does not do.
    void refuse_reranker() {
        if (config().arch != architecture::qwen3) return;
        auto lower = [](std::string s) {
            for (char& c : s)
                if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            return s;
        };
        bool rerank = false;
        for (const std::string& hint : {dir_.filename().string(), config().name_or_path.value_or(""),
                                        config().model_type.value_or(""), config().architecture_name}) {
            const std::string h = lower(hint);
            rerank = rerank || h.find("qwen3-reranker") != std::string::npos || h.find("qwen3-vl-reranker") != std::string::npos;
        }
        if (auto readme = detail::read_text_if_file(dir_ / "README.md", model_card_max_bytes, codes::bad_model_card)) {
            const std::string r = lower(*readme);
            rerank = rerank || r.find("# qwen3-reranker") != std::string::npos || r.find("# qwen3-vl-reranker") != std::string::npos;
        }
        if (rerank)
            fail_file(codes::unsupported_architecture, config().file, 0, config().architecture_name,
                      "a Qwen3 reranker (the reference converts it with a classifier head and rank pooling; not done here)");
    }

    // ModelBase.__init__'s guess for auto: the first tensor of 2+ dimensions decides.
    conversion_file_type file_type() const {
        switch (options_.outtype) {
            case output_type::f32: return conversion_file_type::all_f32;
            case output_type::f16: return conversion_file_type::mostly_f16;
            case output_type::bf16: return conversion_file_type::mostly_bf16;
            case output_type::q8_0: return conversion_file_type::mostly_q8_0;
            case output_type::automatic: break;
        }
        for (const checkpoint_tensor& t : weights().tensors()) {
            if (t.entry->shape.size() < 2) continue;
            if (t.entry->dtype == dtype::bf16) return conversion_file_type::mostly_bf16;
            if (t.entry->dtype == dtype::f16) return conversion_file_type::mostly_f16;
        }
        return conversion_file_type::mostly_f16;
    }

    gguf::tensor_type file_tensor_type() const {
        switch (plan_.file_type) {
            case conversion_file_type::all_f32: return gguf::tensor_type::f32;
            case conversion_file_type::mostly_f16: return gguf::tensor_type::f16;
            case conversion_file_type::mostly_bf16: return gguf::tensor_type::bf16;
            case conversion_file_type::mostly_q8_0: return gguf::tensor_type::q8_0;
        }
        return gguf::tensor_type::f16;
    }

    [[noreturn]] void bad_tensor(const checkpoint_tensor& t, std::string detail, std::uint64_t expected = 0,
                                 std::uint64_t found = 0) const {
        fail_file(codes::bad_tensor, weights().shards()[t.shard].path(), t.entry->header_offset, t.name(),
                  std::move(detail), gguf::section::tensor_info, expected, found);
    }

    expected_shape shape_for(std::string_view gguf_name) const {
        const hf_config& c = config();
        const std::int64_t hidden = c.hidden_size, vocab = c.vocab_size, ff = c.intermediate_size;
        const std::int64_t hd = c.head_size(), heads = c.num_attention_heads, kv = c.kv_heads();
        const std::int64_t q_rows = heads * hd, kv_rows = kv * hd;
        const std::int64_t experts = c.num_experts.value_or(0), moe_ff = c.moe_intermediate_size.value_or(0);
        const std::string h = "hidden_size " + std::to_string(hidden);
        const std::string qh = "num_attention_heads " + std::to_string(heads) + " × head size " + std::to_string(hd);
        const std::string kvh = "key-value heads " + std::to_string(kv) + " × head size " + std::to_string(hd);
        std::string_view n = gguf_name;
        const bool bias = ends_with(n, ".bias");
        if (const auto dot = n.rfind('.'); dot != std::string_view::npos) n = n.substr(0, dot);
        if (n.substr(0, 4) == "blk.") n = n.substr(n.find('.', 4) + 1);
        auto two = [&](std::int64_t a, std::int64_t b, std::string why) {
            return bias ? expected_shape{{a}, std::move(why)} : expected_shape{{a, b}, std::move(why)};
        };
        if (n == "token_embd" || n == "output") return {{vocab, hidden}, "vocab_size " + std::to_string(vocab) + ", " + h};
        if (n == "output_norm" || n == "attn_norm" || n == "ffn_norm") return {{hidden}, h};
        if (n == "attn_q") return two(q_rows, hidden, qh + ", " + h);
        if (n == "attn_k" || n == "attn_v") return two(kv_rows, hidden, kvh + ", " + h);
        if (n == "attn_output") return two(hidden, q_rows, h + ", " + qh);
        if (n == "attn_q_norm" || n == "attn_k_norm") return {{hd}, "head size " + std::to_string(hd)};
        if (n == "ffn_gate" || n == "ffn_up") return {{ff, hidden}, "intermediate_size " + std::to_string(ff) + ", " + h};
        if (n == "ffn_down") return {{hidden, ff}, h + ", intermediate_size " + std::to_string(ff)};
        if (n == "ffn_gate_inp") return {{experts, hidden}, "num_experts " + std::to_string(experts) + ", " + h};
        const std::string m = "moe_intermediate_size " + std::to_string(moe_ff);
        if (n == "ffn_gate_exps" || n == "ffn_up_exps") return {{moe_ff, hidden}, m + ", " + h};  // one expert
        if (n == "ffn_down_exps") return {{hidden, moe_ff}, h + ", " + m};
        return {};
    }

    void check_shape(const checkpoint_tensor& t, std::string_view gguf_name) const {
        const expected_shape e = shape_for(gguf_name);
        if (e.dims.empty()) return;
        const auto& shape = t.entry->shape;
        if (shape.size() != e.dims.size())
            bad_tensor(t, "shape " + shape_text(shape) + ", expected " + shape_text(e.dims) + " (" + e.why + ")", e.dims.size(),
                       shape.size());
        for (std::size_t i = 0; i < shape.size(); ++i)
            if (shape[i] != e.dims[i])
                bad_tensor(t, "shape " + shape_text(shape) + ", expected " + shape_text(e.dims) + " (" + e.why + ")",
                           static_cast<std::uint64_t>(e.dims[i]), static_cast<std::uint64_t>(shape[i]));
    }

    // TextModel.prepare_tensors' choice of type for a tensor of `ne` named `name`.
    gguf::tensor_type type_for(std::string_view name, std::span<const std::int64_t> ne) {
        const bool f32 = ne.size() <= 1 || ends_with(name, "_norm.weight") || ends_with(name, "ffn_gate_inp.weight") ||
                         !ends_with(name, ".weight");
        if (f32) return gguf::tensor_type::f32;
        const gguf::tensor_type t = file_tensor_type();
        if (t == gguf::tensor_type::q8_0 && ne[0] % 32 != 0) {
            plan_.warnings.push_back(std::string(name) + ": rows of " + std::to_string(ne[0]) +
                                     " values are not whole Q8_0 blocks of 32, falling back to F16 (as the reference does)");
            return gguf::tensor_type::f16;
        }
        return t;
    }

    void add(planned_tensor p, std::span<const std::int64_t> torch_shape) {
        p.ne.assign(torch_shape.rbegin(), torch_shape.rend());
        p.n_elements = 1;
        for (std::int64_t d : p.ne) p.n_elements *= static_cast<std::uint64_t>(d);
        p.type = type_for(p.name, p.ne);
        p.n_bytes = quant::bytes_for(p.type, p.n_elements);
        if (!names_.emplace(p.name, plan_.tensors.size()).second)
            fail_file(codes::bad_tensor, config().file, 0, p.name, "two tensors of the checkpoint have this GGUF name");
        plan_.tensors.push_back(std::move(p));
    }

    // LlamaModel.generate_extra_tensors: rope_freqs for llama3 rope scaling, float32 arithmetic as
    // torch does it (docs/CONVERT_REFERENCE.md: pow in double rounded once equals torch's here).
    void rope_freqs() {
        if (!is_llama() || !config().rope_type) return;
        std::string type = *config().rope_type;
        for (char& c : type)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (type != "llama3") return;
        const json_value rp = config().rope_parameters();
        auto number = [&](std::string_view key, double fallback) {
            const json_value v = rp.member(key);
            if (v.is_none()) return fallback;
            const auto d = v.as_double();
            if (!d || v.as_bool()) fail_file(codes::bad_model_config, config().file, v.offset(), key, "not a number");
            return *d;
        };
        const double base = config().rope_theta.value_or(10000.0);
        const std::uint32_t dim = config().head_size();
        const float factor = static_cast<float>(number("factor", 8.0));
        const double low_freq_factor = number("low_freq_factor", 1.0), high_freq_factor = number("high_freq_factor", 4.0);
        const double old_context_len = number("original_max_position_embeddings", 8192);
        const double low_freq_wavelen = old_context_len / low_freq_factor, high_freq_wavelen = old_context_len / high_freq_factor;
        planned_tensor p;
        p.name = "rope_freqs.weight";
        p.op = tensor_op::values;
        // Every operation as torch does it on float32 tensors: a Python scalar is rounded to float32
        // first, `scalar / tensor` is tensor.reciprocal() * scalar, comparisons are in float32.
        const float base32 = static_cast<float>(base), two_pi = static_cast<float>(2.0 * std::numbers::pi);
        const float high32 = static_cast<float>(high_freq_wavelen), low32 = static_cast<float>(low_freq_wavelen);
        for (std::uint32_t i = 0; i < dim; i += 2) {
            const float exponent = static_cast<float>(i) / static_cast<float>(dim);
            const float powed = static_cast<float>(std::pow(static_cast<double>(base32), static_cast<double>(exponent)));
            const float freq = 1.0f / powed;
            const float wavelen = (1.0f / freq) * two_pi;
            float value;
            if (wavelen < high32) value = 1.0f;
            else if (wavelen > low32) value = factor;
            else {
                const float smooth = ((1.0f / wavelen) * static_cast<float>(old_context_len) - static_cast<float>(low_freq_factor)) /
                                     static_cast<float>(high_freq_factor - low_freq_factor);
                value = 1.0f / ((1.0f - smooth) / factor + smooth);
            }
            p.values.push_back(value);
        }
        const std::int64_t n = static_cast<std::int64_t>(p.values.size());
        add(std::move(p), std::span<const std::int64_t>(&n, 1));
    }

    // One checkpoint tensor: renamed, checked, planned (experts collected instead).
    void plan_tensor(std::uint32_t index) {
        const checkpoint_tensor& t = weights().tensors()[index];
        const std::string_view name = t.name();
        if (is_dropped_tensor(name)) return;
        const auto bid = block_of(name);
        if (bid && *bid >= config().num_hidden_layers)
            bad_tensor(t, "block " + std::to_string(*bid) + " is not below num_hidden_layers " +
                              std::to_string(config().num_hidden_layers), config().num_hidden_layers, *bid);
        if (config().arch == architecture::qwen3_moe && name.find("experts") != std::string_view::npos) {
            expert(index, bid);
            return;
        }
        const auto gguf = gguf_tensor_name(config().arch, name);
        if (!gguf) bad_tensor(t, std::string("no GGUF name for it in ") + std::string(gguf_name(config().arch)) + " (the reference: \"Can not map tensor\")");
        check_shape(t, *gguf);
        planned_tensor p;
        p.name = *gguf;
        p.inputs = {index};
        if (is_llama() && (ends_with(name, "q_proj.weight") || ends_with(name, "q_proj.bias") ||
                           ends_with(name, "k_proj.weight") || ends_with(name, "k_proj.bias"))) {
            const bool q = name.find("q_proj.") != std::string_view::npos;
            p.op = tensor_op::permute_heads;
            p.heads = q ? config().num_attention_heads : config().kv_heads();
            const std::int64_t rows = t.entry->shape.empty() ? 1 : t.entry->shape[0];
            if (p.heads == 0 || rows % (2 * static_cast<std::int64_t>(p.heads)) != 0)
                bad_tensor(t, "its " + std::to_string(rows) + " rows are not 2 halves per head of " + std::to_string(p.heads) +
                                  " heads (LlamaModel.permute)");
        }
        add(std::move(p), t.entry->shape);
    }

    // Qwen2MoeModel.modify_tensors: experts of one layer collected, stacked when all are there.
    void expert(std::uint32_t index, std::optional<std::uint32_t> bid) {
        const checkpoint_tensor& t = weights().tensors()[index];
        const std::string_view name = t.name();
        const std::uint32_t n_experts = config().num_experts.value_or(0);
        // model.layers.{bid}.mlp.experts.{xid}.{w}.weight
        const std::string prefix = "model.layers." + std::to_string(bid.value_or(0)) + ".mlp.experts.";
        std::uint32_t xid = 0;
        int which = -1;
        bool ok = bid && name.substr(0, prefix.size()) == prefix;
        if (ok) {
            std::string_view rest = name.substr(prefix.size());
            const auto dot = rest.find('.');
            const std::string_view number = rest.substr(0, dot);
            ok = dot != std::string_view::npos && !number.empty() && number.size() <= 9 &&
                 (number.size() == 1 || number[0] != '0');
            for (char c : number) ok = ok && c >= '0' && c <= '9';
            if (ok) {
                for (char c : number) xid = xid * 10 + static_cast<std::uint32_t>(c - '0');
                const std::string_view w = rest.substr(dot + 1);
                which = w == "down_proj.weight" ? 0 : w == "gate_proj.weight" ? 1 : w == "up_proj.weight" ? 2 : -1;
                ok = which >= 0 && xid < n_experts;
            }
        }
        if (!ok)
            bad_tensor(t, "not an expert tensor the reference stacks (model.layers.N.mlp.experts.E.{down,gate,up}_proj.weight, E below num_experts " +
                              std::to_string(n_experts) + ")");
        auto& layer = experts_[*bid];
        if (layer.empty()) layer.assign(3 * std::size_t{n_experts}, UINT32_MAX);
        auto& slot = layer[static_cast<std::size_t>(which) * n_experts + xid];
        if (slot != UINT32_MAX) bad_tensor(t, "this expert tensor is in the checkpoint twice");
        slot = index;
        if (++expert_seen_[*bid] < 3 * std::size_t{n_experts}) return;
        static constexpr std::string_view names[3] = {"ffn_down_exps", "ffn_gate_exps", "ffn_up_exps"};
        for (int w = 0; w < 3; ++w) {
            planned_tensor p;
            p.name = "blk." + std::to_string(*bid) + "." + std::string(names[w]) + ".weight";
            p.op = tensor_op::stack;
            std::vector<std::int64_t> shape;
            for (std::uint32_t x = 0; x < n_experts; ++x) {
                const std::uint32_t in = layer[static_cast<std::size_t>(w) * n_experts + x];
                const checkpoint_tensor& e = weights().tensors()[in];
                check_shape(e, p.name);
                p.inputs.push_back(in);
                if (shape.empty()) shape = e.entry->shape;
            }
            shape.insert(shape.begin(), n_experts);
            add(std::move(p), shape);
        }
        experts_.erase(*bid);
    }

    void plan_tensors() {
        rope_freqs();
        const auto n = static_cast<std::uint32_t>(weights().tensors().size());
        for (std::uint32_t i = 0; i < n; ++i) plan_tensor(i);
        if (!experts_.empty()) {
            const auto& [bid, layer] = *experts_.begin();
            for (std::uint32_t in : layer)
                if (in != UINT32_MAX) bad_tensor(weights().tensors()[in], "layer " + std::to_string(bid) + "'s experts are incomplete (the reference: \"Unprocessed experts\")");
        }
    }

    void keys() {
        std::vector<vocab_key>& k = plan_.keys;
        metadata_options mo;
        mo.model_name = options_.model_name;
        auto general = general_metadata(dir_, config(), count_parameters(plan_.tensors), mo);
        if (!general) rethrow(std::move(general).error());
        k = *std::move(general);
        auto hparams = hyperparameter_keys(config(), plan_.file_type);
        if (!hparams) rethrow(std::move(hparams).error());
        for (vocab_key& key : *hparams) set_key(k, key.name, std::move(key.value));
        const bool spm = config().arch != architecture::qwen3_moe && has_sentencepiece_model(dir_);
        std::vector<vocab_key> vocab;
        if (spm) {
            auto v = build_spm_vocab(dir_, config());
            if (!v) rethrow(std::move(v).error());
            plan_.tokens = std::move(v->tokens);
            plan_.scores = std::move(v->scores);
            plan_.token_types = std::move(v->token_types);
            for (std::string& w : v->warnings) plan_.warnings.push_back(std::move(w));
            vocab = std::move(v->keys);
        } else {
            bpe_vocab_options bo;
            bo.pre = options_.pre;
            auto v = bpe_vocab(dir_, config(), bo);
            if (!v) rethrow(std::move(v).error());
            vocab = *std::move(v);
        }
        for (vocab_key& key : vocab) set_key(k, key.name, std::move(key.value));
    }

    std::filesystem::path dir_;
    const conversion_options& options_;
    model_plan plan_;
    std::map<std::string, std::size_t, std::less<>> names_;
    std::map<std::uint32_t, std::vector<std::uint32_t>> experts_;
    std::map<std::uint32_t, std::size_t> expert_seen_;
};

}  // namespace

std::optional<output_type> output_type_from_name(std::string_view name) noexcept {
    // As convert_hf_to_gguf.py's choices: lower case only (llama-quantize's names are upper case).
    if (name == "f32") return output_type::f32;
    if (name == "f16") return output_type::f16;
    if (name == "bf16") return output_type::bf16;
    if (name == "q8_0") return output_type::q8_0;
    if (name == "auto") return output_type::automatic;
    return std::nullopt;
}

parameter_counts count_parameters(const std::vector<planned_tensor>& tensors) noexcept {
    parameter_counts t;
    std::uint64_t expert_sum = 0, expert_tensors = 0;
    for (const planned_tensor& p : tensors) {
        const std::uint64_t size = p.n_elements;
        if (p.name.find("_exps.") != std::string::npos && p.ne.size() >= 3) {
            // shape[-3] (shape[-2] for a bias) outermost-first: ne[2] (ne[1])
            const bool bias = p.name.find(".bias") != std::string::npos;
            const std::uint64_t count = static_cast<std::uint64_t>(p.ne[bias ? 1 : 2]);
            if (count > 0) t.expert += size / count;
            expert_sum += count;
            ++expert_tensors;
        } else {
            t.shared += size;
        }
        t.total += size;
    }
    t.expert_count = static_cast<std::uint32_t>(expert_tensors > 0 ? expert_sum / expert_tensors : 0);
    return t;
}

gguf::result<model_plan> plan_conversion(const std::filesystem::path& directory, const conversion_options& options) noexcept {
    try {
        return planner(directory, options).run();
    } catch (convert_failure& f) {
        return gguf::unexpected(std::move(f.e));
    } catch (...) {
        return gguf::unexpected(gguf::out_of_memory_error("planning the conversion"));
    }
}

}  // namespace minfer::convert
