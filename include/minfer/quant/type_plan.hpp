#pragma once
// minfer::quant's type plan: which type each tensor of a model gets when it is quantized to a file
// type ("Q4_K_M", "IQ4_XS", …), the choice llama.cpp's llama_model_quantize makes (llama_tensor_get_type
// and the rules around it in its src/llama-quant.cpp), so that a quantizer writing the planned types
// with quantize_rows() produces llama-quantize's file. No I/O: the input is a plain list of tensors
// (name, type, shape) and the few hyperparameters the rules read, so the CLI, the Python module and
// the tests can all feed it. The rules, in words: docs/QUANT.md, "Which type each tensor gets".
//
//     auto ft = minfer::quant::parse_file_type("Q4_K_M");          // or "15"
//     minfer::quant::plan_options opt;  opt.ftype = ft->ftype;
//     auto plan = minfer::quant::plan_types(facts, opt);            // one choice per tensor
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::quant {

using gguf::result;
using gguf::tensor_type;

/// llama.cpp's llama_ftype numbers (general.file_type): what a whole file is quantized "to". Only the
/// numbers llama_ftype_get_default_type() of the reference build maps to a tensor type are listed.
enum class file_type : std::uint32_t {
    f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q8_0 = 7, q5_0 = 8, q5_1 = 9,
    q2_k = 10, q3_k_s = 11, q3_k_m = 12, q3_k_l = 13, q4_k_s = 14, q4_k_m = 15, q5_k_s = 16, q5_k_m = 17,
    q6_k = 18, iq2_xxs = 19, iq2_xs = 20, q2_k_s = 21, iq3_xs = 22, iq3_xxs = 23, iq1_s = 24, iq4_nl = 25,
    iq3_s = 26, iq3_m = 27, iq2_s = 28, iq2_m = 29, iq4_xs = 30, iq1_m = 31, bf16 = 32,
    tq1_0 = 36, tq2_0 = 37, mxfp4_moe = 38, q1_0 = 40, q2_0 = 41,
};

/// One TYPE llama-quantize accepts: its name and the file type it stands for. "COPY" is the one
/// name that is not a file type: tensors are copied unchanged (copy == true, ftype f32 unused).
struct file_type_name {
    std::string_view name;  ///< as llama-quantize spells it: "Q4_K_M", "IQ2_XXS", "F16", "COPY"
    file_type ftype;
    bool copy = false;
};

/// Every TYPE name accepted, in llama-quantize's listing order; aliases ("Q4_K" = Q4_K_M, "Q3_K" =
/// Q3_K_M, "Q5_K" = Q5_K_M) included.
std::span<const file_type_name> file_type_names() noexcept;

/// The canonical name of a file type ("Q4_K_M"); "unknown" for a number not in the enum.
std::string_view to_string(file_type ftype) noexcept;

/// The tensor type a file type quantizes to when no rule says otherwise (Q4_K_M -> q4_K, IQ2_S ->
/// iq2_xs, …); nullopt for a number llama.cpp maps to nothing.
std::optional<tensor_type> default_type(file_type ftype) noexcept;

/// Parse llama-quantize's TYPE argument: a name of file_type_names() in any case ("q4_k_m"), or a
/// file-type number ("15"). Error bad_value_text (detail says why) for anything else.
result<file_type_name> parse_file_type(std::string_view text);

/// One tensor of the model, as its file lists it.
struct tensor_fact {
    std::string name;
    tensor_type type = tensor_type::f32;
    std::array<std::int64_t, 4> ne{1, 1, 1, 1};  ///< ggml's ne: ne[0] is the row length
};

/// What the rules read of a model: its architecture and hyperparameters, and its tensors in file order.
struct model_facts {
    std::string arch;              ///< general.architecture ("llama", "falcon", "qwen3moe", …)
    std::uint32_t n_layer = 0;     ///< <arch>.block_count
    std::uint32_t n_head = 0;      ///< attention heads of layer 0
    std::uint32_t n_head_kv = 0;   ///< KV heads of layer 0 (n_gqa = n_head / n_head_kv, 0 when 0)
    std::uint32_t n_expert = 0;    ///< <arch>.expert_count (0 for dense models)
    /// llama.cpp's LLM_TYPE_70B (attn_v gets one more k-quant step); is_llama_70b() says it for "llama".
    bool type_70b = false;
    std::vector<tensor_fact> tensors;
};

/// llama.cpp's loader calls a "llama" model of 80 layers with grouped KV heads 70B.
bool is_llama_70b(std::string_view arch, std::uint32_t n_layer, std::uint32_t n_head,
                  std::uint32_t n_head_kv) noexcept;

/// A --tensor-type PATTERN=TYPE override: the first pattern (ECMAScript regex, searched anywhere in
/// the name) that matches a quantized tensor's name decides its type, before fallbacks.
struct type_override {
    std::string pattern;
    tensor_type type = tensor_type::f32;
};

/// llama-quantize's options that change a type choice.
struct plan_options {
    file_type ftype = file_type::q8_0;
    bool copy = false;                             ///< COPY: every tensor keeps its type
    std::optional<tensor_type> output_type;        ///< --output-tensor-type
    std::optional<tensor_type> token_embd_type;    ///< --token-embedding-type
    bool leave_output = false;                     ///< --leave-output-tensor (output.weight unquantized)
    bool pure = false;                             ///< --pure: no mixtures, the default type everywhere
    std::vector<type_override> overrides;          ///< --tensor-type, in the order given
    bool has_imatrix = false;                      ///< an importance matrix is given (--imatrix)
};

/// The decision for one tensor.
struct tensor_choice {
    std::string name;
    tensor_type from = tensor_type::f32;  ///< the type in the input
    tensor_type to = tensor_type::f32;    ///< the type in the output
    bool quantizable = false;  ///< llama.cpp's rules allow this tensor to change type at all
    bool converted = false;    ///< to != from: the values are converted (quantized) on the way
    bool fallback = false;     ///< ne[0] did not fit the chosen type's blocks: `to` is the fallback
    bool needs_importance = false;  ///< llama.cpp refuses to write `to` here without an imatrix
    std::string why;           ///< one line: the rule that decided
};

/// The decisions for a model, in the order llama.cpp writes the output's tensors (by layer number
/// of "blk.N.", names without one first, then by name).
struct type_plan {
    std::vector<tensor_choice> tensors;
    std::uint32_t n_fallback = 0;    ///< tensors that needed a fallback type (llama.cpp's warning count)
    bool needs_importance = false;   ///< some tensor needs an imatrix and plan_options has none
};

/// The plan. Errors: bad_value_text (an override pattern that is not a regex; an ftype llama.cpp does
/// not map), not_block_multiple (ne[0] fits neither the chosen type nor its fallback, or the type has
/// no fallback: llama.cpp stops there too; subject = the tensor), bad_hyperparameter (a MoE tensor
/// whose layer cannot be read from its name or is outside block_count).
result<type_plan> plan_types(const model_facts& model, const plan_options& options) noexcept;

/// llama.cpp's order of a model's tensors (the loader's weight map): by the number after "blk."
/// (-1 without one), then by name. Returns indices into `tensors`.
std::vector<std::size_t> llama_tensor_order(std::span<const tensor_fact> tensors);

}  // namespace minfer::quant
