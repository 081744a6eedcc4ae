#pragma once
// bpe_tokenizer: a Hugging Face tokenizer.json of the byte-level BPE kind (GPT-2, Llama 3, Qwen2/3),
// read strictly, and an encoder that gives the ids Hugging Face tokenizers' Rust core gives (the
// core transformers' fast tokenizers call, which convert_hf_to_gguf.py asks for the ids of its check
// text: pre_tokenizer.hpp).
//
// What is read (everything else is refused: codes::bad_tokenizer when the file is not what the
// format says, codes::unsupported_tokenizer when it is valid but not this kind):
//
// | field                    | accepted                                                              |
// |--------------------------|-----------------------------------------------------------------------|
// | version                  | any string                                                            |
// | truncation, padding      | null (either changes what encode returns)                             |
// | model                    | type "BPE"; vocab {token: id} with ids 0..n-1 once each; merges all   |
// |                          |   "a b" strings (one space) or all ["a", "b"] pairs, each part and    |
// |                          |   their concatenation a token, no pair twice; ignore_merges; dropout  |
// |                          |   null; unk_token null or a token; continuing_subword_prefix and      |
// |                          |   end_of_word_suffix null or ""; byte_fallback false; fuse_unk        |
// | added_tokens             | objects {id, content, single_word, lstrip, rstrip, normalized,        |
// |                          |   special}, all seven; content not empty, once; id = the content's    |
// |                          |   vocab id, or for a content outside the vocab the next id after it   |
// |                          |   in file order (what the Rust core assigns; it would warn and        |
// |                          |   renumber otherwise)                                                 |
// | normalizer               | null or {"type": "NFC"} (Qwen2/3)                                     |
// | pre_tokenizer            | ByteLevel, or Sequence of Split steps then one ByteLevel; Split:      |
// |                          |   pattern {"Regex": …}, behavior "Isolated", invert false; ByteLevel: |
// |                          |   add_prefix_space, trim_offsets, use_regex (GPT-2's pattern)         |
// | post_processor           | null, ByteLevel, TemplateProcessing (single: SpecialToken and         |
// |                          |   Sequence A), or a Sequence of those                                 |
// | decoder                  | ByteLevel                                                             |
//
// Split patterns are Oniguruma's in the Rust core and PCRE2's here (compiled with UTF and UCP; a
// match limit of 10^7 steps and 64 MiB of backtracking heap per match). \s and \S become the
// White_Space property, which Oniguruma's \s is (PCRE2's also takes U+180E). Escapes whose meaning
// differs between the two engines (\w, \b, \h, \v, \R, \X, \K, \G, …), POSIX and nested classes and
// ^/$ are refused by name, so a pattern either means the same or is not run; the property tables may
// differ by a Unicode version.
// NFC is ICU's (libicu, Unicode 15 in Debian 12; the Rust core's unicode-normalization crate has 16).
//
// Bounds: the file at most tokenizer_json_max_bytes, its JSON at most 2^22 values and 64 levels,
// the vocabulary and the merges at most 2^21 and 2^22 entries, a text to encode at most
// encode_max_bytes. Qwen3's tokenizer (11 MB, 600k JSON values) takes about 95 MB to read; a hostile
// file at the caps, a few hundred MB at most. Encoding is O(n log n) in the text's length (merges by
// a heap), every PCRE2 match bounded by its limits. Errors carry the file, the absolute offset of the offending JSON value, the
// field or token as subject.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/convert/json_value.hpp"
#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// tokenizer.json above this is refused (Llama 3's is 9 MB, Qwen3's 11 MB, Gemma 3's 33 MB).
inline constexpr std::uint64_t tokenizer_json_max_bytes = 64u << 20;
/// Most tokens of a vocabulary, and most merges (Gemma 3: 262k tokens, 514k merges).
inline constexpr std::size_t tokenizer_max_tokens = std::size_t{1} << 21;
inline constexpr std::size_t tokenizer_max_merges = std::size_t{1} << 22;
/// The longest text encode() takes (the converter encodes its 400-byte check text and added tokens).
inline constexpr std::size_t encode_max_bytes = std::size_t{1} << 20;

/// One entry of tokenizer.json's added_tokens, as the Rust core's AddedToken.
struct added_token {
    std::uint32_t id = 0;
    std::string content;
    bool single_word = false;  ///< matched only between non-word characters (Rust regex's \w)
    bool lstrip = false;       ///< takes the whitespace before it
    bool rstrip = false;       ///< takes the whitespace after it
    bool normalized = true;    ///< matched in the normalized text (else in the raw text, first)
    bool special = false;
    std::uint64_t offset = 0;  ///< its object in the file
};

/// A pre-tokenizer step, in order.
struct pre_tokenizer_step {
    enum class kind : std::uint8_t { split, byte_level } type = kind::split;
    std::string pattern;            ///< split: the regex as the file gives it
    bool add_prefix_space = false;  ///< byte_level
    bool use_regex = false;         ///< byte_level: split with GPT-2's pattern first
    std::uint64_t offset = 0;
};

/// A piece of the single-sequence template of a TemplateProcessing post-processor.
struct template_piece {
    bool is_sequence = false;          ///< the text's own ids (sequence A)
    std::string special;               ///< else: the special token's name in special_tokens
    std::vector<std::uint32_t> ids;    ///< and its ids
};

struct bpe_tokenizer_data;

class bpe_tokenizer {
public:
    /// Read and check `path` (a tokenizer.json). @returns codes::bad_tokenizer (a missing file:
    /// sys_errno ENOENT; larger than tokenizer_json_max_bytes: expected = the cap),
    /// codes::unsupported_tokenizer, io_error, out_of_memory.
    static gguf::result<bpe_tokenizer> read(const std::filesystem::path& path) noexcept;
    /// The same for text already read; `file` is the name errors give.
    static gguf::result<bpe_tokenizer> parse(std::string_view text, std::string file) noexcept;

    bpe_tokenizer() noexcept;
    bpe_tokenizer(const bpe_tokenizer&) noexcept;
    bpe_tokenizer(bpe_tokenizer&&) noexcept;
    bpe_tokenizer& operator=(const bpe_tokenizer&) noexcept;
    bpe_tokenizer& operator=(bpe_tokenizer&&) noexcept;
    ~bpe_tokenizer();

    const std::string& file() const noexcept;
    /// The model's vocabulary by id (ids 0..n-1), added tokens not included.
    std::span<const std::string> model_tokens() const noexcept;
    /// The model token of `text`, if any.
    std::optional<std::uint32_t> model_token_id(std::string_view text) const noexcept;
    /// added_tokens in file order.
    std::span<const added_token> added_tokens() const noexcept;
    /// The added token with this id, if any.
    const added_token* find_added(std::uint32_t id) const noexcept;
    /// Model tokens and added tokens: one more than the largest id.
    std::size_t id_count() const noexcept;
    /// The text of an id as get_vocab gives it (an added token's content first), empty if none.
    std::string_view token_text(std::uint32_t id) const noexcept;

    /// The merges as convert_hf_to_gguf.py writes tokenizer.ggml.merges: "a b" strings as the file
    /// has them; a pair's parts joined by one space, each space inside a part written U+0120.
    std::vector<std::string> gguf_merges() const;
    std::size_t merge_count() const noexcept;
    /// Whether the file gives merges as ["a", "b"] pairs (transformers 4.45+).
    bool merges_are_pairs() const noexcept;
    bool ignore_merges() const noexcept;
    bool normalizes_nfc() const noexcept;
    std::span<const pre_tokenizer_step> pre_tokenizer() const noexcept;
    /// The single-sequence template of a TemplateProcessing post-processor; empty when there is none.
    std::span<const template_piece> single_template() const noexcept;

    /// The ids of `text` as the Rust core's Tokenizer::encode(text, add_special_tokens) gives them:
    /// added tokens first (the raw text split on the non-normalized ones, the rest normalized and
    /// split on the normalized ones, leftmost-longest, honoring single_word/lstrip/rstrip), then the
    /// pre-tokenizer, the byte-level map and the BPE merges on each piece, then (with
    /// add_special_tokens) the template. @returns gguf::errc::input_too_large above encode_max_bytes,
    /// codes::bad_tokenizer for text that is not UTF-8 (offset = the byte) or a pattern that exceeds
    /// PCRE2's match limit, out_of_memory.
    gguf::result<std::vector<std::uint32_t>> encode(std::string_view text, bool add_special_tokens) const noexcept;

    /// The text of `ids` as the Rust core's decode(ids, skip_special_tokens=false) gives it: each
    /// token's text through the ByteLevel decoder (a token whose characters are all byte-level
    /// characters becomes those bytes, any other its own text), invalid UTF-8 replaced by U+FFFD.
    /// Unknown ids are skipped, as the core does.
    gguf::result<std::string> decode(std::span<const std::uint32_t> ids) const noexcept;

    /// The whole document (an object), for what the converter reads beyond the typed fields
    /// (post_processor for SpecialVocab, normalizer).
    json_value raw() const& noexcept MINFER_LIFETIMEBOUND;
    json_value raw() const&& = delete;

private:
    const bpe_tokenizer_data& data() const noexcept;
    std::shared_ptr<const bpe_tokenizer_data> data_;
    friend struct bpe_tokenizer_access;
};

/// GPT-2's byte-level alphabet (bytes_to_unicode): the code point byte b is written as. Printable
/// Latin-1 bytes (!..~, ¡..¬, ®..ÿ) stand for themselves; the other 68, in byte order, for 256, 257, ….
char32_t byte_level_char(std::uint8_t byte) noexcept;
/// The byte a code point stands for, if it is one of the 256.
std::optional<std::uint8_t> byte_level_byte(char32_t c) noexcept;

}  // namespace minfer::convert
