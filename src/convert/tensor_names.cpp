// tensor_names.hpp: the supported architectures' tensor map.
#include "minfer/convert/tensor_names.hpp"

#include <array>
#include <charconv>
#include <cstdint>

namespace minfer::convert {
namespace {

enum arch_bits : std::uint8_t {
    llama_bit = 1, qwen2_bit = 2, qwen3_bit = 4, qwen3moe_bit = 8,
    dense = llama_bit | qwen2_bit | qwen3_bit, all = dense | qwen3moe_bit,
};

std::uint8_t bit_of(architecture a) noexcept {
    switch (a) {
        case architecture::llama:
        case architecture::mistral: return llama_bit;
        case architecture::qwen2: return qwen2_bit;
        case architecture::qwen3: return qwen3_bit;
        case architecture::qwen3_moe: return qwen3moe_bit;
    }
    return 0;
}

struct name_row {
    std::string_view hf;    ///< without the suffix (".weight" / ".bias")
    std::string_view gguf;
    std::uint8_t archs;
    bool bias;              ///< whether ".bias" maps too
};

// Outside the blocks.
constexpr std::array<name_row, 3> top_rows{{
    {"model.embed_tokens", "token_embd", all, false},
    {"lm_head", "output", all, false},
    {"model.norm", "output_norm", all, false},
}};

// Inside block N: "model.layers.N." + hf → "blk.N." + gguf.
constexpr std::array<name_row, 15> block_rows{{
    {"input_layernorm", "attn_norm", all, false},
    {"post_attention_layernorm", "ffn_norm", all, false},
    {"self_attn.q_proj", "attn_q", all, true},
    {"self_attn.k_proj", "attn_k", all, true},
    {"self_attn.v_proj", "attn_v", all, true},
    {"self_attn.o_proj", "attn_output", all, true},
    {"self_attn.q_norm", "attn_q_norm", qwen3_bit | qwen3moe_bit, false},
    {"self_attn.k_norm", "attn_k_norm", qwen3_bit | qwen3moe_bit, false},
    {"mlp.gate_proj", "ffn_gate", dense, false},
    {"mlp.up_proj", "ffn_up", dense, false},
    {"mlp.down_proj", "ffn_down", dense, false},
    {"mlp.gate", "ffn_gate_inp", qwen3moe_bit, false},
    {"mlp.experts.gate_proj", "ffn_gate_exps", qwen3moe_bit, false},
    {"mlp.experts.up_proj", "ffn_up_exps", qwen3moe_bit, false},
    {"mlp.experts.down_proj", "ffn_down_exps", qwen3moe_bit, false},
}};

bool ends_with(std::string_view s, std::string_view suffix) noexcept {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool is_dropped_tensor(std::string_view hf_name) noexcept {
    return ends_with(hf_name, ".attention.masked_bias") || ends_with(hf_name, ".attention.bias") ||
           ends_with(hf_name, ".rotary_emb.inv_freq");
}

std::optional<std::uint32_t> block_of(std::string_view name) noexcept {
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('.', start);
        if (end == std::string_view::npos) end = name.size();
        const std::string_view part = name.substr(start, end - start);
        bool digits = !part.empty();
        for (char c : part) digits = digits && c >= '0' && c <= '9';
        if (digits) {
            std::uint32_t v = 0;
            const auto r = std::from_chars(part.data(), part.data() + part.size(), v);
            if (r.ec != std::errc() || r.ptr != part.data() + part.size()) return std::nullopt;
            return v;
        }
        start = end + 1;
    }
    return std::nullopt;
}

std::optional<std::string> gguf_tensor_name(architecture arch, std::string_view name) {
    std::string cleaned(name);
    if (const auto at = cleaned.find("language_model."); at != std::string::npos)
        cleaned.erase(at, std::string_view("language_model.").size());  // filter_tensors replaces the first too
    std::string_view n = cleaned;
    std::string_view suffix;
    if (ends_with(n, ".weight")) suffix = ".weight";
    else if (ends_with(n, ".bias")) suffix = ".bias";
    else return std::nullopt;
    n.remove_suffix(suffix.size());
    const bool bias = suffix == ".bias";
    const std::uint8_t bit = bit_of(arch);
    for (const name_row& r : top_rows)
        if (n == r.hf && (r.archs & bit) && (!bias || r.bias)) return std::string(r.gguf) + std::string(suffix);
    constexpr std::string_view layers = "model.layers.";
    if (n.substr(0, layers.size()) != layers) return std::nullopt;
    n.remove_prefix(layers.size());
    const std::size_t dot = n.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    const std::string_view number = n.substr(0, dot);
    for (char c : number)
        if (c < '0' || c > '9') return std::nullopt;
    if (number.size() > 1 && number[0] == '0') return std::nullopt;  // "{bid}".format(bid) never writes 01
    const std::string_view rest = n.substr(dot + 1);
    for (const name_row& r : block_rows)
        if (rest == r.hf && (r.archs & bit) && (!bias || r.bias))
            return "blk." + std::string(number) + "." + std::string(r.gguf) + std::string(suffix);
    return std::nullopt;
}

}  // namespace minfer::convert
