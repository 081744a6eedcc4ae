// Evaluating an assembly config for a tensor: mergekit's parameter lookup (config.py ConfigReader
// and evaluate_setting), the Hugging Face names its filters are written for, the `tensors:` rules.
// Nothing here allocates on the way to a parameter's value.
#include <algorithm>
#include <array>
#include <new>
#include <string>

#include "minfer/toolbox/assemble_config.hpp"

namespace minfer::toolbox {

namespace {

// ---- mergekit's names of GGUF tensors ----

// Architectures whose mergekit definitions use the Llama layout (model.layers.N.self_attn.*, mlp.*).
enum class layout : std::uint8_t { none, llama, gemma2 };  // gemma2: gemma2/gemma3's four norms

layout layout_of(std::string_view arch) noexcept {
    if (arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "granite" || arch == "gemma") return layout::llama;
    if (arch == "gemma2" || arch == "gemma3" || arch == "olmo2") return layout::gemma2;
    return layout::none;
}

struct kind_name {
    std::string_view gguf;
    std::string_view mergekit;
};
// blk.N.<gguf> -> model.layers.N.<mergekit> (llama.cpp's gguf-py tensor_mapping.py, in reverse)
constexpr kind_name block_kinds[] = {
    {"attn_norm", "input_layernorm"},
    {"attn_q", "self_attn.q_proj"},
    {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},
    {"attn_output", "self_attn.o_proj"},
    {"attn_q_norm", "self_attn.q_norm"},
    {"attn_k_norm", "self_attn.k_norm"},
    {"ffn_gate", "mlp.gate_proj"},
    {"ffn_up", "mlp.up_proj"},
    {"ffn_down", "mlp.down_proj"},
};
// gemma2, gemma3, olmo2: the sandwich norms (ffn_norm is the pre-feedforward norm there)
constexpr kind_name gemma2_kinds[] = {
    {"ffn_norm", "pre_feedforward_layernorm"},
    {"post_attention_norm", "post_attention_layernorm"},
    {"post_ffw_norm", "post_feedforward_layernorm"},
};
constexpr kind_name llama_kinds[] = {
    {"ffn_norm", "post_attention_layernorm"},
};
constexpr kind_name top_kinds[] = {
    {"token_embd", "model.embed_tokens"},
    {"output_norm", "model.norm"},
    {"output", "lm_head"},
};

// A name written into a fixed buffer (no allocation): mergekit's names are at most ~70 bytes for the
// GGUF names llama.cpp allows (63 bytes).
class name_buffer {
public:
    void put(std::string_view s) noexcept {
        const std::size_t n = std::min(s.size(), buf_.size() - size_);
        std::copy_n(s.data(), n, buf_.data() + size_);
        size_ += n;
        overflow_ = overflow_ || n < s.size();
    }
    std::string_view view() const noexcept { return overflow_ ? std::string_view() : std::string_view(buf_.data(), size_); }

private:
    std::array<char, 256> buf_{};
    std::size_t size_ = 0;
    bool overflow_ = false;
};

std::string_view lookup(std::span<const kind_name> table, std::string_view kind) noexcept {
    for (const kind_name& k : table)
        if (k.gguf == kind) return k.mergekit;
    return {};
}

std::string_view mergekit_name(std::string_view arch, std::string_view name, name_buffer& out) noexcept {
    const layout l = layout_of(arch);
    if (l == layout::none) return {};
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos) return {};
    const std::string_view suffix = name.substr(dot);  // ".weight", ".bias"
    if (suffix != ".weight" && suffix != ".bias") return {};
    std::string_view stem = name.substr(0, dot);
    if (stem.starts_with("blk.")) {
        stem.remove_prefix(4);
        std::size_t d = 0;
        while (d < stem.size() && stem[d] >= '0' && stem[d] <= '9') ++d;
        if (d == 0 || d >= stem.size() || stem[d] != '.') return {};
        const std::string_view layer = stem.substr(0, d);
        const std::string_view kind = stem.substr(d + 1);
        std::string_view mk = lookup(block_kinds, kind);
        if (mk.empty()) mk = lookup(l == layout::gemma2 ? std::span<const kind_name>(gemma2_kinds) : std::span<const kind_name>(llama_kinds), kind);
        if (mk.empty()) return {};
        out.put("model.layers.");
        out.put(layer);
        out.put(".");
        out.put(mk);
        out.put(suffix);
        return out.view();
    }
    const std::string_view mk = lookup(top_kinds, stem);
    if (mk.empty()) return {};
    out.put(mk);
    out.put(suffix);
    return out.view();
}

// ---- evaluate_setting ----

double evaluate(const scalar_or_gradient& v, double t) noexcept {
    if (!v.gradient || v.numbers.size() == 1) return v.numbers.empty() ? 0.0 : v.numbers[0];
    // scaled = t * (len - 1); i0 = int(scaled); i1 = min(len - 1, i0 + 1); frac = scaled - i0
    const std::size_t last = v.numbers.size() - 1;
    const double scaled = t * static_cast<double>(last);
    const auto i0 = std::min(static_cast<std::size_t>(scaled), last);  // t <= 1: i0 <= last
    const std::size_t i1 = std::min(last, i0 + 1);
    const double frac = scaled - static_cast<double>(i0);
    return (1 - frac) * v.numbers[i0] + frac * v.numbers[i1];
}

bool filter_matches(const std::optional<std::string>& filter, std::string_view name, std::string_view mergekit) noexcept {
    if (!filter || *filter == "*") return true;
    // `cond.filter in tensor_name`, only for a non-empty name
    return (!name.empty() && name.find(*filter) != std::string_view::npos) ||
           (!mergekit.empty() && mergekit.find(*filter) != std::string_view::npos);
}

std::optional<double> evaluate(const parameter_setting& s, std::string_view name, std::string_view mergekit, double t) noexcept {
    if (s.conditions.empty()) {
        if (s.value.numbers.empty()) return std::nullopt;  // a setting built by hand without a value
        return evaluate(s.value, t);
    }
    for (const parameter_condition& c : s.conditions)
        if (filter_matches(c.filter, name, mergekit)) {
            if (c.value.numbers.empty()) return std::nullopt;
            return evaluate(c.value, t);
        }
    return std::nullopt;
}

}  // namespace

std::optional<double> parameter_value(const assemble_config& config, std::string_view parameter, const tensor_site& site,
                                      std::optional<std::size_t> source) noexcept {
    // plan.py: t = idx / (num_layers - 1), or 1 for one layer; 0 outside the layers (plan_module)
    double t = 0;
    if (site.layer) {
        if (*site.layer >= site.slice_layers) return std::nullopt;
        t = site.slice_layers > 1 ? static_cast<double>(*site.layer) / static_cast<double>(site.slice_layers - 1) : 1.0;
    }
    // plan_tensor: a model's parameters for its input tensor's name, the merge's for the output's
    const std::string_view name = source && !site.source_name.empty() ? site.source_name : site.name;
    name_buffer buffer;
    const std::string_view mk = mergekit_name(site.architecture, name, buffer);
    auto level = [&](const parameter_map& pm) -> std::optional<double> {
        const parameter_setting* s = pm.find(parameter);
        return s != nullptr ? evaluate(*s, name, mk, t) : std::nullopt;
    };
    // ConfigReader.parameter: the slice source's, the slice's, then the config's
    if (!config.slices.empty()) {
        if (site.slice >= config.slices.size()) return std::nullopt;
        const output_slice& slice = config.slices[site.slice];
        if (source) {
            if (*source >= slice.sources.size()) return std::nullopt;
            if (auto v = level(slice.sources[*source].parameters)) return v;
        }
        if (auto v = level(slice.parameters)) return v;
    } else {
        if (site.slice != 0) return std::nullopt;
        if (source) {
            if (*source >= config.models.size()) return std::nullopt;
            if (auto v = level(config.models[*source].parameters)) return v;
        }
    }
    return level(config.parameters);
}

std::string mergekit_tensor_name(std::string_view architecture, std::string_view gguf_name) noexcept {
    name_buffer buffer;
    const std::string_view mk = mergekit_name(architecture, gguf_name, buffer);
    try {
        return std::string(mk);
    } catch (...) {
        return {};
    }
}

gguf::result<const tensor_rule*> find_tensor_rule(const assemble_config& config, std::string_view output_name) noexcept {
    try {
        for (const tensor_rule& r : config.tensors)
            if (std::regex_search(output_name.begin(), output_name.end(), r.regex)) return &r;
        return static_cast<const tensor_rule*>(nullptr);
    } catch (const std::bad_alloc&) {
        return gguf::unexpected(gguf::out_of_memory_error("matching the tensors rules"));
    } catch (const std::exception& e) {
        // error_complexity / error_stack: not expected of the non-backtracking search on a bounded pattern
        gguf::error err;
        err.code = codes::bad_config;
        err.subject = output_name;
        try {
            err.file = config.file;
            err.detail = std::string("a tensors regex could not be searched in the name: ") + e.what();
        } catch (...) {
        }
        return gguf::unexpected(std::move(err));
    }
}

const model_source& donor_model(const assemble_config& config) noexcept {
    static const model_source none{};
    if (config.base_model) return *config.base_model;
    if (!config.models.empty()) return config.models[0].model;
    if (!config.slices.empty() && !config.slices[0].sources.empty()) return config.slices[0].sources[0].model;
    return none;
}

}  // namespace minfer::toolbox
