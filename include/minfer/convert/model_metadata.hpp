#pragma once
// The general.* keys of a converted model, as convert_hf_to_gguf.py writes them before the
// architecture's hyperparameters: general.architecture, general.type, then gguf-py's
// Metadata.set_gguf_meta_model's keys in its order and with its GGUF types.
//
// Where the values come from (gguf-py's Metadata.load for a local directory, then
// ModelBase.prepare_metadata), in the reference's order:
//   1. README.md's YAML front matter (the model card): the first line must be exactly "---"; the lines up to
//      the next "---" line (or the end) are the YAML, after the reference's two text hacks ("- no\n" quoted,
//      each tab replaced by two spaces), read as PyYAML's safe_load types it (YAML 1.1: yes/no/on/off are
//      booleans, 1_000 and 0x1F integers, 2024-01-02 a date). A front matter that is not a mapping is ignored.
//      Fields: name, author, version, organization, description, finetune, basename, size_label,
//      url/doi/uuid/repo_url (general.source.*), the same with model_ in front, model_creator (author),
//      model_type (basename); base_model / base_models / base_model_sources and datasets / dataset /
//      dataset_sources (a string or a list; a Hugging Face id or URL is split into name, organization,
//      version and repo_url; a mapping is taken as it is; anything else is an entry without keys); license
//      (a list is joined with ","), license_name, license_link; tags then pipeline_tag appended, languages
//      then language appended (a string or a list).
//   2. config.json's `_name_or_path` when it has at most one '/', then the directory's name (Python's
//      Path.name: "." and empty components dropped): get_model_id_components' heuristics fill the name (title
//      cased), organization, basename, finetune, version and size label that are still unset. A size
//      written in the name that is more than 7/8 away from the real parameter count is taken as a finetune
//      ("32k" context lengths).
//   3. generation_config.json: sequence (string), top_k, penalty_last_n, mirostat (i32), top_p, min_p,
//      xtc_probability, xtc_threshold, temperature (as temp), penalty_repeat, mirostat_tau, mirostat_eta (f32).
//      A file that is not JSON is ignored silently, as the reference ignores its JSONDecodeError (and an
//      unreadable one, its IOError). Differences: what this library's one JSON reader refuses although Python's
//      json takes it — a repeated key (Python keeps the last), NaN/Infinity, nesting deeper than 64, more than
//      2^19 values — is ignored here too, where the reference would write the values.
//   4. --model-name replaces the name; with no name at all, the directory's name; the size label, when
//      nothing set it, from the parameter counts (size_label()).
// A string key whose value is empty (or a falsy YAML value: 0, false, an empty list) is not written; an
// empty tags/languages list neither (gguf-py's add_string/add_array).
//
// Errors (codes::bad_model_card; offset = a JSON value's first byte, 0 in README.md's YAML, whose line the
// detail gives), where the reference fails too: README.md not UTF-8 or its front matter
// not YAML (syntax, a second document, a key that is a list or a mapping, a control character PyYAML's reader
// refuses); a value of a string key that is not a string (a number, a date, true: Python's len() fails on
// it); a license list with a non-string item; tags or languages of mixed types; generation_config.json not
// UTF-8, or valid JSON that is not an object (unless empty/false/0/null), an integer key that is not an
// integer or beyond i32, a float key that is not a number, a sequence that is not a string. Deliberate
// differences, also refused (codes::bad_model_card) where the reference would write something: YAML anchors,
// aliases, merge keys (<<) and explicit tags other than !!str; tags/languages lists of floats, booleans or
// lists (the reference writes f32/bool/nested arrays); a string field given as a list of byte values (the
// reference writes those bytes). README.md and generation_config.json above 16 MiB are refused (the reference
// has no cap). Non-ASCII names: Python's str.title/islower/isalpha/isdecimal are followed through ICU per code
// point; the regular expressions' case-insensitive matching of the few non-ASCII letters Unicode folds to
// ASCII ones (U+212A KELVIN SIGN, U+017F LONG S) is not.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/vocab_keys.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// README.md and generation_config.json above this are refused.
inline constexpr std::uint64_t model_card_max_bytes = 16u << 20;

/// gguf_writer.get_total_parameter_count() of the output tensors: every tensor's element count in
/// `total`, those of expert tensors (names with "_exps") in `expert`, the rest in `shared`, and the
/// architecture's expert count.
struct parameter_counts {
    std::uint64_t total = 0, shared = 0, expert = 0;
    std::uint32_t expert_count = 0;
};

struct metadata_options {
    std::optional<std::string> model_name;  ///< --model-name
};

/// The general.* keys the reference writes before the hyperparameters, in its order. Never prints.
/// @returns codes::bad_model_card (see above; file = README.md or generation_config.json, subject = the
/// key), io_error (README.md unreadable: the reference fails too; an unreadable generation_config.json is
/// ignored as the reference ignores it), out_of_memory.
gguf::result<std::vector<vocab_key>> general_metadata(const std::filesystem::path& model_dir, const hf_config& config,
                                                      const parameter_counts& counts,
                                                      const metadata_options& options) noexcept;

/// gguf.size_label: "125K", "8.0B", "4x20M" (expert models: the count, then shared + expert).
std::string size_label(const parameter_counts& counts);

/// gguf-py's model_weight_count_rounded_notation (min_digits 2): the count scaled to K/M/B/T with at least
/// two significant digits.
std::string rounded_count(std::uint64_t count);

/// Metadata.get_model_id_components: a Hugging Face style id split into its parts (absent: None).
struct model_id_components {
    std::optional<std::string> full_name, organization, basename, finetune, version, size_label;
};
model_id_components get_model_id_components(std::string_view model_id, std::int64_t total_params);

/// Metadata.id_to_title: '-' as ' ', words split on whitespace, an all-lowercase word title cased unless it
/// is a version (v1.2) or starts with a digit.
std::string id_to_title(std::string_view id);

/// gguf.naming_convention: the default file name (without ".gguf") for when --outfile is a directory.
std::string naming_convention(const std::optional<std::string>& model_name, const std::optional<std::string>& base_name,
                              const std::optional<std::string>& finetune, const std::optional<std::string>& version,
                              const std::optional<std::string>& size_label, const std::optional<std::string>& output_type,
                              const std::optional<std::string>& model_type);

/// gguf.fill_templated_filename: {ftype}/{outtype} (and a bare {}) become the output type in lower case,
/// {FTYPE}/{OUTTYPE} in upper case (an absent type: ""). Other braces are returned as an error
/// (Python's str.format would fail on them): codes::bad_model_card with the file name as subject.
gguf::result<std::string> fill_templated_filename(std::string_view filename, const std::optional<std::string>& output_type) noexcept;

/// The metadata keys (what general_metadata would write from the card alone, with no directory name,
/// config or counts), read from README.md's text: for the fuzz target and tests. `file` names errors.
gguf::result<std::vector<vocab_key>> model_card_metadata(std::string_view readme_text, std::string file) noexcept;

}  // namespace minfer::convert
