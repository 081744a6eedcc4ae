#pragma once
// named_input: a file a user names on the command line for its contents (--chat-template-file and
// every other --*-file option; "-" is standard input), read whole up to a cap with
// gguf::read_capped. The caps are in docs/CLI.md ("Inputs and their caps").
#include <cstdint>
#include <string>

#include "minfer/gguf/result.hpp"

namespace minfer::cli {

/// The cap of a chat template file: 16 MiB. Real templates are a few kB to about 100 kB; a file of
/// more is not a template (a model, a log), and its metadata value would fill the head for nothing.
inline constexpr std::uint64_t max_chat_template_bytes = std::uint64_t{16} << 20;

/// The contents of `path` ("-": standard input), at most `cap` bytes. @returns io_error, or
/// input_too_large with detail = `what` ("a chat template") past the cap.
gguf::result<std::string> read_named_input(const std::string& path, std::uint64_t cap, const std::string& what);

}  // namespace minfer::cli
