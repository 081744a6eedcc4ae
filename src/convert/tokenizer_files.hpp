#pragma once
// The small files of a checkpoint's tokenizer (tokenizer_config.json, added_tokens.json,
// chat_template.json, *.jinja), read as convert_hf_to_gguf.py reads them: only when they are regular
// files (Path.is_file(): a directory or a dangling link of that name counts as absent), as UTF-8, JSON
// through this library's one JSON reader (json_tree.hpp). Internal to minfer::convert.
//
// Failures are thrown as convert_failure (a gguf::error) inside the library's readers and planners
// (the vocabularies, the hyperparameters, the model card, the plan); their public functions turn them
// into results.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "json_tree.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/convert/json_value.hpp"
#include "minfer/gguf/error.hpp"

namespace minfer::convert::detail {

/// A failure thrown inside minfer::convert and caught at its public functions' boundary.
struct convert_failure {
    gguf::error e;
};

/// Throw `code` about `file` at `offset` (section metadata: the content; file: the file as a whole).
[[noreturn]] void fail_file(gguf::errc code, std::string file, std::uint64_t offset, std::string_view subject,
                            std::string detail, gguf::section where = gguf::section::metadata,
                            std::uint64_t expected = 0, std::uint64_t found = 0);

/// Path.is_file(): a regular file, a symbolic link followed. Never throws.
bool is_file(const std::filesystem::path& p) noexcept;
/// Path.is_dir(), likewise.
bool is_directory(const std::filesystem::path& p) noexcept;

/// A JSON file read whole: its path (errors name it) and its tree.
struct json_file {
    std::string path;
    std::shared_ptr<const json_tree> tree;
    json_value root() const noexcept { return json_access::view(tree.get(), 0); }
};

/// `p` when it is a file: read (at most `cap` bytes) and parsed. Absent otherwise. Throws convert_failure
/// (codes::bad_tokenizer: not JSON, too large; io_error) and std::bad_alloc.
std::optional<json_file> read_json_if_file(const std::filesystem::path& p, std::uint64_t cap);

/// `p` when it is a file, as Python's open(p, encoding="utf-8").read() gives it: refused when not
/// UTF-8, "\r\n" and lone "\r" turned into "\n" (universal newlines). Throws as read_json_if_file.
std::optional<std::string> read_text_if_file(const std::filesystem::path& p, std::uint64_t cap,
                                             gguf::errc code = codes::bad_tokenizer);

/// Throw `code` (file = `file`, offset = the byte, section `where`) unless `raw` is UTF-8 as Python's
/// strict decoder takes it.
void require_utf8(std::string_view raw, const std::string& file, gguf::errc code,
                  gguf::section where = gguf::section::metadata);

/// "\r\n" and a lone "\r" turned into "\n", as Python's text mode reads a file (universal newlines).
std::string universal_newlines(std::string_view raw);

/// Whether `s` is UTF-8 as Python's strict decoder takes it (no overlong forms, surrogates, or code
/// points past U+10FFFF).
bool valid_utf8(std::string_view s) noexcept;

}  // namespace minfer::convert::detail
