#pragma once
// A SHA-256 given by the user (the CLI's `hash --expect` and `verify --file-sha256`, the Python
// module's expect= and file_sha256=): 64 hex digits in either case, as sha256sum prints them
// (lowercase) or as a web page may show them (uppercase). Every one of them is read here so that all
// accept the same forms. (A manifest's hashes stay exact lowercase, as llama-gguf-hash compares them
// as strings.)
#include <optional>
#include <string>
#include <string_view>

#include "minfer/check/digest.hpp"

namespace minfer::toolbox {

/// The digest `text` spells, or nullopt with `why` (when not null) saying what is wrong.
std::optional<check::digest> parse_sha256(std::string_view text, std::string* why);

/// What the messages say a SHA-256 is.
inline constexpr std::string_view sha256_form = "a SHA-256 is 64 hexadecimal digits, either case";

}  // namespace minfer::toolbox
