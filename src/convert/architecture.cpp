// The supported architectures' names.
#include "minfer/convert/architecture.hpp"

#include <array>

namespace minfer::convert {
namespace {

struct architecture_row {
    std::string_view hf;
    std::string_view gguf;
};

// In the enum's order.
constexpr std::array<architecture_row, 5> rows{{
    {"LlamaForCausalLM", "llama"},
    {"MistralForCausalLM", "llama"},
    {"Qwen2ForCausalLM", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3"},
    {"Qwen3MoeForCausalLM", "qwen3moe"},
}};

}  // namespace

std::string_view hf_name(architecture a) noexcept {
    const auto i = static_cast<std::size_t>(a);
    return i < rows.size() ? rows[i].hf : std::string_view();
}

std::string_view gguf_name(architecture a) noexcept {
    const auto i = static_cast<std::size_t>(a);
    return i < rows.size() ? rows[i].gguf : std::string_view();
}

std::optional<architecture> architecture_from_hf_name(std::string_view name) noexcept {
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].hf == name) return static_cast<architecture>(i);
    return std::nullopt;
}

std::string_view supported_architecture_names() noexcept {
    return "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM";
}

bool is_moe(architecture a) noexcept { return a == architecture::qwen3_moe; }

}  // namespace minfer::convert
