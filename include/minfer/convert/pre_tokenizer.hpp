#pragma once
// The pre-tokenizer name of a byte-level BPE (tokenizer.ggml.pre), found as convert_hf_to_gguf.py
// finds it: encode its fixed check text (conversion/base.py, get_vocab_base_pre: `chktxt`) with the
// tokenizer, special tokens included as transformers' encode adds them, write the ids as Python's
// str() of a list of ints ("[128000, 198, 720]"), take the SHA-256 of that text and look the hex
// digest up in the reference's table. The ids of 431 bytes of mixed scripts, emoji, digit runs,
// whitespace runs and contractions differ between pre-tokenizers, so the hash names the regex (and
// the vocabulary) without reading either.
//
// The table holds the reference's entries for the names this converter supports; each hash was
// computed with bpe_tokenizer::encode on the real tokenizers and is equal to the reference's entry
// (tests/convert/test_bpe_tokenizer.cpp), which is the proof that the encoder is right on the check
// text. An unknown hash is never a silent default: codes::unsupported_tokenizer with the hash and the
// names `--pre` takes.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "minfer/convert/bpe_tokenizer.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// convert_hf_to_gguf.py's check text, byte for byte (compatibility data: 431 bytes of UTF-8).
std::string_view pre_tokenizer_check_text() noexcept;

/// A name of the reference's table and one of its hashes (a name may have several).
struct known_pre_tokenizer {
    std::string_view name;    ///< tokenizer.ggml.pre
    std::string_view sha256;  ///< lowercase hex of the SHA-256 of the ids' text
    std::string_view model;   ///< the Hub model the reference computed it on (its comment)
};
/// The entries of the reference's table (llama.cpp 305ba519, conversion/base.py) for the supported
/// names: llama-bpe, qwen2 (two), smaug-bpe.
std::span<const known_pre_tokenizer> known_pre_tokenizers() noexcept;
/// The supported names, sorted, once each, comma-separated: "llama-bpe, qwen2, smaug-bpe".
std::string supported_pre_tokenizer_names();
/// Whether `name` is one of them.
bool is_supported_pre_tokenizer(std::string_view name) noexcept;

/// Python's str() of a list of ints: "[1, 2, 3]", "[]".
std::string python_list_text(std::span<const std::uint32_t> ids);

/// The SHA-256 (lowercase hex) of the check text's ids, as the reference computes `chkhsh`.
/// @returns encode's errors, hash_unavailable (libcrypto missing), out_of_memory.
gguf::result<std::string> pre_tokenizer_hash(const bpe_tokenizer& tokenizer) noexcept;

/// The name of the table whose hash the tokenizer gives. @returns codes::unsupported_tokenizer for a
/// hash not in the table (subject = the hash; detail names it and says to pass `--pre NAME` with the
/// supported names), and pre_tokenizer_hash's errors.
gguf::result<std::string> find_pre_tokenizer(const bpe_tokenizer& tokenizer) noexcept;

}  // namespace minfer::convert
