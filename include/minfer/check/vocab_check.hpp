#pragma once
// vocab_check: what llama.cpp asserts on, throws on or quietly works around when it loads a model's
// vocabulary (llama_vocab::impl::load, src/llama-vocab.cpp, read at ggml-org/llama.cpp 1fd6dfe9f),
// checked over the metadata alone, so that `minfer verify` never calls "clean" a model llama.cpp
// would abort on.
//
// Findings (llama.cpp aborts or refuses the model):
// - tokenizer.ggml.tokens not an array of strings (gguf_get_arr_n / gguf_get_arr_str assert);
// - a token that repeats an earlier one (GGML_ASSERT(id_to_token.size() == token_to_id.size())
//   aborts the process; an empty token counts as "[EMPTY_<i>]", the text llama.cpp gives it);
// - tokenizer.ggml.scores / token_type shorter than the vocabulary (it throws "Index out of array
//   bounds"), not an array, an array of strings (asserts), or of elements other than 4 bytes wide
//   (it reads 4 bytes per token: past the array, or garbled);
// - a special-token id key (bos, eos, eot, eom, unknown, seperator, padding, mask, fim_*, prefix,
//   suffix, middle) stored as anything but u32 (its loader throws "key has wrong type");
// - tokenizer.ggml.merges not an array of strings when the tokenizer model reads merges (gpt2,
//   hybriddna, whitespace, gemma4).
// Warnings (llama.cpp loads the model):
// - an empty token (renamed "[EMPTY_<i>]");
// - scores / token_type longer than the vocabulary (the rest is ignored), or of another 4-byte type
//   (scores read as f32 bits; token types as i32, u32 being the same for every valid type);
// - a special-token id >= the vocabulary size (ignored with a log line; its default id is used);
// - a merge without a space between two parts (stored as an empty pair, never applied), or one
//   whose parts, or whose joined result, are not tokens (it can never produce a token). Merges are
//   checked only for the tokenizer models that read them.
// With tokenizer.ggml.model "none" or "no_vocab" llama.cpp reads no token list: nothing is checked.
// Without tokenizer.ggml.tokens there is no vocabulary to check.
//
// Bounded: one hash set of string_views into the file's bytes (one entry per token), no allocation
// per token or merge; a 256k vocabulary with 300k merges checks in tens of milliseconds.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::check {

enum class vocab_problem : std::uint8_t {
    tokens_not_strings,
    duplicate_token,
    empty_token,
    array_short,         ///< scores / token_type shorter than the vocabulary
    array_long,          ///< longer than the vocabulary
    array_not_array,     ///< a scalar where llama.cpp reads an array
    array_element_type,  ///< an element type llama.cpp cannot read (strings, not 4 bytes wide)
    array_reinterpreted, ///< another 4-byte type: read as f32 / i32 bits
    special_id_type,
    special_id_out_of_range,
    merges_not_strings,
    merge_without_space,
    merge_part_absent,
};
/// "tokens_not_strings", "duplicate_token", ... (the enumerator's name; JSON's `problem`).
std::string_view to_string(vocab_problem p) noexcept;

struct vocab_finding {
    vocab_problem problem = vocab_problem::duplicate_token;
    bool warning = false;       ///< false: llama.cpp aborts or refuses the model; true: it loads it
    std::string_view key;       ///< the metadata key (static text)
    std::uint64_t index = 0;    ///< the first offender: token/array/merge index, or the id for special ids
    std::uint64_t count = 1;    ///< offenders of this problem under this key
    std::string what;           ///< one sentence, untrusted text escaped (gguf::escape)
};

/// Check the vocabulary in `metadata` (a model's part 1). Findings first, then warnings, each in key
/// order as above. @returns out_of_memory.
gguf::result<std::vector<vocab_finding>> check_vocab(const gguf::file_view& metadata) noexcept;

}  // namespace minfer::check
