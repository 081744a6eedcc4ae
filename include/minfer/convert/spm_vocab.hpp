#pragma once
// spm_vocab: the vocabulary convert_hf_to_gguf.py writes for a checkpoint with a SentencePiece
// tokenizer.model, built natively (no Python, no libsentencepiece): tokens, scores, token types and
// every tokenizer.* key, with the reference's values and in the reference's order.
//
// Which classes take this path (conversion/llama.py, conversion/qwen.py): LlamaModel (LlamaForCausalLM,
// MistralForCausalLM) and Qwen2Model (Qwen2ForCausalLM, Qwen3ForCausalLM) try the SentencePiece
// vocabulary first and fall back to tokenizer.json when there is no tokenizer.model; Qwen3-MoE never
// reads tokenizer.model (refused here: codes::unsupported_tokenizer, as is a directory without one).
//
// The reference's rules, in its order:
//
// 1. LlamaModel.set_vocab only: tekken.json without tokenizer.json is Mistral's own format (refused);
//    tokenizer_config.json's add_prefix_space, when not null, is written first, as
//    tokenizer.ggml.add_space_prefix (a bool; the reference writes any value's truthiness, refused
//    here); tokenizer_class HybridDNATokenizer is another vocabulary (refused).
// 2. TextModel._create_vocab_sentencepiece: V = config.json's vocab_size (vocab_size_per_layer_input
//    first when present: refused here when it differs, as llama.vocab_size would be the other one).
//    Every id starts as "[PAD<id>]", score -10000, UNUSED. Piece i < V (ids past V are dropped, with a
//    warning) gives its text, its score (the f32 of the file) and a type from the Python API's
//    classification: UNKNOWN if IsUnknown, else CONTROL if IsControl, else UNUSED if IsUnused, else
//    BYTE if IsByte, else NORMAL — so a USER_DEFINED piece is written NORMAL. Then added_tokens.json
//    ({"text": id}, in the file's order): each id < V becomes that text, score -1000, USER_DEFINED.
//    Then tokenizer_config.json's added_tokens_decoder ({"id": {"content": …, "special": …}}, in the
//    file's order): each id < V becomes its content, score -1000, CONTROL when `special` is true or the
//    content looks special (does_token_look_special: "<pad>", "<mask>", "<2mass>", "[@BOS@]",
//    "<|…|>", "<｜…｜>", "<unused…>"), otherwise USER_DEFINED with every U+2581 replaced by a space.
//    (Its final padding with "[PAD<i>]" never runs: the list already has V entries.)
// 3. TextModel._set_vocab_sentencepiece: tokenizer.ggml.model "llama", tokenizer.ggml.pre "default",
//    tokens, scores, token_type; then gguf-py's SpecialVocab(dir, n_vocab = V) without merges:
//    - special ids from config.json's bos/eos/unk/sep/pad/cls/mask_token_id (an integer below V; a
//      list is ignored), written in that order as bos_token_id, eos_token_id, unknown_token_id,
//      seperator_token_id, padding_token_id, mask_token_id (cls has no GGUF key: dropped, with a
//      warning). tokenizer_config.json's bos_token etc. name tokens of tokenizer.json's added_tokens,
//      so without tokenizer.json they give nothing;
//    - when tokenizer_config.json is a non-empty object: add_bos_token, add_eos_token, add_sep_token
//      (each when a JSON bool; add_unk/pad/cls/mask_token have no GGUF key);
//    - the chat template: tokenizer_config.json's chat_template when the key is there (null: none),
//      else chat_template.jinja (with additional_chat_templates/*.jinja: the list form), else
//      chat_template.json's chat_template. A string is tokenizer.chat_template; a list of {name,
//      template} gives tokenizer.chat_template.<name> per entry (the name's characters outside
//      [A-Za-z0-9] become '_'), tokenizer.chat_templates (the names but "default") and
//      tokenizer.chat_template for "default". Text files are read as Python reads text: UTF-8, with
//      "\r\n" and "\r" turned into "\n".
// 4. LlamaModel.set_vocab again: vocab_size 32016 (CodeLlama) adds tokenizer.ggml.eot_token_id,
//    config.json's eot_token_id or 32010; vocab_size 49152 (Granite) sets add_bos_token to false.
//
// A directory holding tokenizer.json beside tokenizer.model is refused (codes::unsupported_tokenizer):
// SpecialVocab would also take special ids from its added_tokens, add_bos/add_eos from its
// post_processor and normalizer flags from its normalizer; that part of SpecialVocab is not built here.
// special_tokens_map.json is not read by the reference at all.
//
// The keys the reference writes for the three SentencePiece test checkpoints (tests/convert/
// make_models.py; from `minfer info --json` of its outputs), in its order:
//
//   Tiny-Llama-SPM, Tiny-Llama-SPM-Sharded   Tiny-Mistral-v0.3-SPM
//   --------------------------------------   ---------------------------------------
//                                            tokenizer.ggml.add_space_prefix   bool
//   tokenizer.ggml.model         string      tokenizer.ggml.model              string
//   tokenizer.ggml.pre           string      tokenizer.ggml.pre                string
//   tokenizer.ggml.tokens        [string]    tokenizer.ggml.tokens             [string]
//   tokenizer.ggml.scores        [f32]       tokenizer.ggml.scores             [f32]
//   tokenizer.ggml.token_type    [i32]       tokenizer.ggml.token_type         [i32]
//   tokenizer.ggml.bos_token_id  u32         tokenizer.ggml.bos_token_id       u32
//   tokenizer.ggml.eos_token_id  u32         tokenizer.ggml.eos_token_id       u32
//   tokenizer.ggml.add_bos_token bool        tokenizer.ggml.add_bos_token      bool
//   tokenizer.ggml.add_eos_token bool        tokenizer.ggml.add_eos_token      bool
//   tokenizer.chat_template      string      tokenizer.chat_template           string
//
// Where the reference would fail (a Python exception) or read a value by accident, the input is
// refused (codes::bad_tokenizer with the file and the offending value's offset): a tokenizer file that
// is not JSON or not an object; an added token id that is not a non-negative integer (a negative one
// would index from the end of the list), an added_tokens_decoder key that is not decimal digits, an
// entry without a string content, a `special` that is not a bool; a chat template entry that is not an
// object of string name and template. Caps: each JSON or template file at tokenizer_file_max_bytes, V
// at spm_vocab_max_tokens (bad_model_config).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/vocab_keys.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// A tokenizer_config.json, added_tokens.json, chat_template.json or .jinja above this is refused.
inline constexpr std::uint64_t tokenizer_file_max_bytes = std::uint64_t{16} << 20;
/// The most tokens a vocabulary may have (config.json's vocab_size): 8 times the largest real ones.
inline constexpr std::uint32_t spm_vocab_max_tokens = std::uint32_t{1} << 21;

struct spm_vocab {
    std::vector<std::string> tokens;        ///< raw bytes (UTF-8 from the files)
    std::vector<float> scores;
    std::vector<std::int32_t> token_types;  ///< token_type values
    /// Every tokenizer.* key, in the reference's order; the arrays stand for the three vectors above.
    std::vector<vocab_key> keys;
    /// What the reference logs as warnings (ids out of range, replaced tokens, values it ignores).
    std::vector<std::string> warnings;
    std::size_t pieces = 0;                 ///< the tokenizer.model's pieces
};

/// Whether `directory` holds a tokenizer.model that is a file (Path.is_file(): a link to one counts).
bool has_sentencepiece_model(const std::filesystem::path& directory) noexcept;

/// Build the vocabulary of the checkpoint in `directory`, whose config.json is `config`.
/// @returns codes::unsupported_tokenizer (no tokenizer.model, tokenizer.json or tekken.json beside it,
/// an architecture whose class does not read it), codes::bad_tokenizer (file = the file at fault),
/// codes::bad_model_config (vocab_size), io_error, out_of_memory.
gguf::result<spm_vocab> build_spm_vocab(const std::filesystem::path& directory, const hf_config& config) noexcept;

}  // namespace minfer::convert
