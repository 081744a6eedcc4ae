#pragma once
// The tokenizer metadata of a converted vocabulary as data: each key convert_hf_to_gguf.py writes for
// it, with its value, in the order the reference writes it. A GGUF writer copies the list as it is;
// nothing downstream decides an order or a type again.
//
// The reference writes its metadata into a Python dict (gguf-py's GGUFWriter.add_key_value), so a key
// written twice keeps the position of its first write with the value of the last: set_key() does the
// same.
//
// GGUF types: a string value is a GGUF string, a u32 a u32, a bool a bool; vocab_array::tokens is a
// string array, scores an f32 array, token_types an i32 array (the vocabulary's own vectors); a
// vector of strings is a string array (tokenizer.chat_templates; a BPE vocabulary's tokens and merges), a vector
// of int32 an i32 array (a BPE vocabulary's token types); a float an f32, an int32 an i32 (general.sampling.*,
// hyperparameters: the converted model's other keys use the same type).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace minfer::convert {

/// llama.cpp's token types (llama_token_type, gguf-py's TokenType and SentencePieceTokenTypes), the
/// values of tokenizer.ggml.token_type.
enum class token_type : std::int32_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

/// One of a vocabulary's arrays, which a key stands for (the values live in the vocabulary).
enum class vocab_array : std::uint8_t { tokens, scores, token_types };

using vocab_value = std::variant<std::string, std::uint32_t, bool, vocab_array, std::vector<std::string>,
                                 std::vector<std::int32_t>, float, std::int32_t>;

struct vocab_key {
    std::string name;
    vocab_value value;
};

/// The key called `name`, or nullptr.
const vocab_key* find_key(std::span<const vocab_key> keys, std::string_view name) noexcept;

/// Write `name` as the reference's dict does: replace the value in place when the key is there,
/// append it otherwise. Throws std::bad_alloc.
void set_key(std::vector<vocab_key>& keys, std::string_view name, vocab_value value);

/// gguf-py's key names (gguf/constants.py, Keys.Tokenizer) for the keys a vocabulary writes.
namespace tokenizer_key {
inline constexpr std::string_view model = "tokenizer.ggml.model";
inline constexpr std::string_view pre = "tokenizer.ggml.pre";
inline constexpr std::string_view tokens = "tokenizer.ggml.tokens";
inline constexpr std::string_view token_type = "tokenizer.ggml.token_type";
inline constexpr std::string_view scores = "tokenizer.ggml.scores";
inline constexpr std::string_view merges = "tokenizer.ggml.merges";
inline constexpr std::string_view bos_id = "tokenizer.ggml.bos_token_id";
inline constexpr std::string_view eos_id = "tokenizer.ggml.eos_token_id";
inline constexpr std::string_view eot_id = "tokenizer.ggml.eot_token_id";
inline constexpr std::string_view unk_id = "tokenizer.ggml.unknown_token_id";
inline constexpr std::string_view sep_id = "tokenizer.ggml.seperator_token_id";  // sic: gguf's spelling
inline constexpr std::string_view pad_id = "tokenizer.ggml.padding_token_id";
inline constexpr std::string_view mask_id = "tokenizer.ggml.mask_token_id";
inline constexpr std::string_view add_bos = "tokenizer.ggml.add_bos_token";
inline constexpr std::string_view add_eos = "tokenizer.ggml.add_eos_token";
inline constexpr std::string_view add_sep = "tokenizer.ggml.add_sep_token";
inline constexpr std::string_view add_space_prefix = "tokenizer.ggml.add_space_prefix";
inline constexpr std::string_view chat_template = "tokenizer.chat_template";
inline constexpr std::string_view chat_template_prefix = "tokenizer.chat_template.";  ///< + a template's name
inline constexpr std::string_view chat_templates = "tokenizer.chat_templates";
}  // namespace tokenizer_key

}  // namespace minfer::convert
