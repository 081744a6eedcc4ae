#pragma once
// metadata_edit: what a person asks of a model's metadata ("set this key to this text", "delete
// that key", "use this chat template", "make </s> the eos token") turned into the rewrite engine's
// metadata_change list (rewrite.hpp), with every request checked against the opened model before a
// byte is written: the value text parses as its type and fits it, the key exists (or a type is
// given), a token is in the vocabulary. It also returns the structured diff (what each touched key
// held and will hold) for a dry run. Nothing here prints or writes a file.
//
// Value text (parse_value_text):
//   u8 … i64   decimal, or hexadecimal after 0x/0X; a '-' only for signed types; strictly
//              range-checked; nothing else (no '+', no spaces, no exponent, no trailing text)
//   f32, f64   std::from_chars (shortest round-trip text reads back exactly); finite values only:
//              nan and inf are refused (no llama.cpp key means them; a typo is likelier)
//   bool       `true` or `false`
//   str        any bytes that are valid UTF-8 (GGUF strings are UTF-8)
// Arrays cannot be given as text.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf/value.hpp"
#include "minfer/gguf_write/rewrite.hpp"

namespace minfer::gguf {

/// A type name as given after KEY: — u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str (also
/// `string`). nullopt for anything else (arrays have no text form).
std::optional<value_type> value_type_from_name(std::string_view name) noexcept;

/// The names value_type_from_name accepts, for messages: "u8, i8, …, bool, str".
std::string_view value_type_names() noexcept;

/// `text` as a value of `type`, encoded as stored after the type tag (scalars: little-endian bytes;
/// strings: u64 length + bytes). @returns bad_value_text (subject = key, detail e.g. "'-1' is not a
/// u32 (0 to 4294967295)"; type array: "arrays cannot be given as text"), or out_of_memory.
result<std::vector<std::byte>> parse_value_text(std::string_view key, value_type type, std::string_view text) noexcept;

/// Whether `s` is valid UTF-8 (no stray continuation, overlong form, surrogate, or cut sequence).
bool valid_utf8(std::string_view s) noexcept;

/// One change as a person asks it.
struct metadata_edit {
    enum class op : std::uint8_t {
        set,            ///< key = value text; the key must exist and keeps its type
        set_typed,      ///< key : type = value text; a new key, or (allow_type_change) a new type
        erase,          ///< the key must exist
        chat_template,  ///< every tokenizer.chat_template* key goes, then tokenizer.chat_template = text
        special_token,  ///< key = a special token's name or full key; text = a token's text or id
    };
    op what = op::set;
    std::string key;
    value_type type = value_type::string;  ///< set_typed only
    std::string text;                      ///< the value, template or token as given

    static metadata_edit set(std::string key, std::string text);
    static metadata_edit set_typed(std::string key, value_type type, std::string text);
    static metadata_edit erase(std::string key);
    static metadata_edit chat_template(std::string text);
    static metadata_edit special_token(std::string name, std::string token);
    /// general.name = text, general.description = text (strings, added when absent).
    static metadata_edit name(std::string text);
    static metadata_edit description(std::string text);
};

/// `--set` text, `KEY=VALUE` or `KEY:TYPE=VALUE`, split at the first '='. A ':' before it starts a
/// type only when what follows the last ':' is a type name (value_type_from_name); otherwise the
/// whole left side is the key (a key may hold ':'; if such a key does not exist, plan_metadata_edit
/// reports the unknown type). @returns bad_value_text (no '=': detail says so), or out_of_memory.
result<metadata_edit> parse_set_text(std::string_view text) noexcept;

/// The key a special-token name stands for: bos eos eot eom unk (unknown) sep (seperator: llama.cpp's
/// spelling; separator too) pad (padding) cls mask fim_pre fim_suf fim_mid fim_pad fim_rep fim_sep
/// become `tokenizer.ggml.<key name>_token_id`; a full key `tokenizer.ggml.*_token_id` is taken as is.
/// nullopt for anything else.
std::optional<std::string> special_token_key(std::string_view name);

/// A key's value after the edit: its type and the bytes stored after the tag.
struct new_value {
    value_type type = value_type::u8;
    std::vector<std::byte> bytes;
    /// A kv view of it (count 1, offset 0; for a string the payload is the bytes after the length),
    /// to render it like a parsed record. Lives as long as this object.
    kv view(std::string_view key) const noexcept;
};

/// One key the edit adds, changes (type or value) or removes.
struct metadata_diff_entry {
    std::string key;
    const kv* before = nullptr;       ///< the input's record; nullptr when the key is new
    std::optional<new_value> after;   ///< nullopt when the key is removed
    /// Empty, or — when the edit stores the key in a type it must not have, which only
    /// metadata_edit_options::allow_type_change permits — the type it should have, as text ("u32",
    /// "an array of str", …), for the diff to say so.
    std::string forced_over;
};

struct metadata_edit_options {
    /// A full rewrite (-o): drop the in-place padding key (minfer.padding) an earlier in-place edit
    /// left. An in-place edit keeps it: plan_in_place sizes it anew.
    bool drop_padding = true;
    /// Permit a set_typed whose type differs from the type the key must keep: the type llama.cpp
    /// reads it as (a key of its table: general.*, tokenizer.*, the {arch}.* hyperparameters), or
    /// else the type the key already has. Without it such an edit is bad_value_text naming that type.
    /// With it the edit is done, its diff entry has forced_over set, and a key llama.cpp reads adds
    /// a warning. general.alignment must still be a u32 power of two (the loader's rule).
    bool allow_type_change = false;
};

/// The checked result of a list of edits.
struct metadata_edit_plan {
    std::vector<metadata_change> changes;   ///< for rewrite(), in the order given
    std::vector<metadata_diff_entry> diff;  ///< the input's keys in file order, then new keys in order added
    std::vector<std::string> warnings;      ///< things done that a person should know (plain text, escaped)
};

/// Check `edits` against `m` (applied in order: a key added by an earlier edit exists for a later
/// one) and turn them into changes. @returns, before anything is written:
///   bad_value_text   value text that does not parse or fit; a set of an array key; a key that is
///                    empty, holds NUL or is not UTF-8; general.alignment not a u32 power of two; an
///                    unknown type name; an unknown special-token name; a type that differs from the
///                    one the key must keep (see allow_type_change; the detail names that type); a
///                    set or erase of a split.* key (only split and merge write those)
///   key_not_found    set without a type, or erase, of a key the model does not have (detail: why)
///   token_not_found  a special token's id not below the vocabulary size, its text not in the
///                    vocabulary, or no vocabulary (detail says which)
///   out_of_memory
/// key_not_found and token_not_found have file = the model's path; bad_value_text is about the
/// request, not the file, and has none.
result<metadata_edit_plan> plan_metadata_edit(const model& m, std::span<const metadata_edit> edits,
                                              const metadata_edit_options& options = {}) noexcept;

}  // namespace minfer::gguf
