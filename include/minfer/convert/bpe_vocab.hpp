#pragma once
// The vocabulary keys of a byte-level BPE checkpoint, exactly as convert_hf_to_gguf.py writes them
// (conversion/base.py TextModel._set_vocab_gpt2 → get_vocab_base, get_vocab_base_pre, and gguf-py's
// SpecialVocab(load_merges=True).add_to_gguf; LlamaModel.set_vocab adds add_space_prefix first), for
// LlamaForCausalLM / MistralForCausalLM with a tokenizer.json (Llama 3) and Qwen2 / Qwen3 /
// Qwen3-MoE. The keys, in the order the reference writes them (each only when the reference writes
// it):
//
//   tokenizer.ggml.add_space_prefix   bool      Llama/Mistral: tokenizer_config.json's add_prefix_space, if not null
//   tokenizer.ggml.model              string    "gpt2"
//   tokenizer.ggml.pre                string    the pre-tokenizer: pre_tokenizer.hpp's hash, or --pre
//   tokenizer.ggml.tokens             [string]  ids 0..vocab_size-1 (config.json's vocab_size): the
//                                               token, "[PAD{i}]" for an id no token has
//   tokenizer.ggml.token_type         [i32]     1 normal, 3 control (an added token that is special or
//                                               looks special: <|…|>, <｜…｜>, <unused…>, <pad>,
//                                               <mask>, <2mass>, [@BOS@]), 4 user-defined (another
//                                               added token), 5 unused ([PAD…])
//   tokenizer.ggml.merges             [string]  when there are merges: "a b" in file order
//   tokenizer.ggml.<special>_token_id u32       in the order SpecialVocab found them: tokenizer_config's
//                                               <typ>_token (by the content of tokenizer.json's
//                                               added_tokens) for bos, eos, unk, sep, pad, cls, mask
//                                               (and eot, eom when a TemplateProcessing moved the EOS),
//                                               then config.json's <typ>_token_id for those not found;
//                                               keys bos_token_id, eos_token_id, unknown_token_id,
//                                               seperator_token_id (sic), padding_token_id,
//                                               mask_token_id, eot_token_id, eom_token_id (cls has
//                                               none: never written)
//   tokenizer.ggml.add_<typ>_token    bool      bos, eos, sep, in the order first set: by the
//                                               post-processor's TemplateProcessing, then by
//                                               tokenizer_config's add_<typ>_token
//   tokenizer.chat_template           string    tokenizer_config's chat_template, else
//                                               chat_template.jinja (newlines as Python's text mode
//                                               reads them), else chat_template.json's
//
// The reference outputs of the test models (docs/CONVERT_REFERENCE.md) have, in order: Qwen2.5 /
// Qwen3 / Qwen3-MoE: model, pre (qwen2), tokens, token_type, merges, eos_token_id, padding_token_id,
// bos_token_id, add_bos_token, chat_template; Llama 3 (npm's early revision): model, pre (smaug-bpe),
// tokens, token_type, merges, bos_token_id, eos_token_id, chat_template; Llama 3.2 (BOS
// post-processor): model, pre (llama-bpe), tokens, token_type, merges, bos_token_id, eos_token_id,
// add_bos_token, add_sep_token, chat_template.
//
// An added token that is not normalized is written as decode(encode(token)) (transformers' decode
// with clean_up_tokenization when tokenizer_config.json asks for it), as the reference does; the
// reference harness refuses a folder where clean_up_tokenization_spaces is absent and the clean-up
// would change a token, and so does this (transformers' default changed across versions).
//
// Refused (codes::unsupported_tokenizer) where the reference takes another path: a tokenizer.model
// beside it (SentencePiece; Qwen3-MoE excepted, whose class never looks), a HybridDNATokenizer,
// Llama's vocab_size 32016 (CodeLlama's extra SpecialVocab), a chat template given as a list or with
// additional_chat_templates/. tokenizer_config.json and chat_template.json must be JSON objects
// (codes::bad_tokenizer).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/vocab_keys.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

struct bpe_vocab_options {
    /// tokenizer.ggml.pre to write instead of the one the check hash names (`--pre NAME`); must be one
    /// of supported_pre_tokenizer_names(). Empty: found by the hash, an unknown hash refused.
    std::string pre;
};

/// The vocabulary keys of the checkpoint (vocab_keys.hpp: the arrays as values, token types as i32) in `dir` (tokenizer.json, tokenizer_config.json if present,
/// chat_template.jinja/.json if present), in the reference's order, with `config` its config.json.
/// @returns codes::bad_tokenizer, codes::unsupported_tokenizer, the tokenizer's and the hash's errors,
/// io_error, out_of_memory.
gguf::result<std::vector<vocab_key>> bpe_vocab(const std::filesystem::path& dir, const hf_config& config,
                                              const bpe_vocab_options& options = {}) noexcept;

/// The tokens of tokenizer.ggml.tokens: does a token look like a control token to the reference
/// (TextModel.does_token_look_special).
bool looks_special(std::string_view token) noexcept;

}  // namespace minfer::convert
