#pragma once
// Opening a model for a command, and reporting why it failed, the same way in every command.
#include <string>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/model.hpp"

namespace minfer::cli {

/// Open `path` (mapped, or read into memory with `no_mmap`), with the SIGBUS guard naming the file.
gguf::result<gguf::model> open_model(const std::string& path, bool no_mmap);

/// The exit code an open error maps to: exit_io for io_error, split_part_missing and out_of_memory,
/// exit_parse for everything else.
int exit_code_for(const gguf::error& e) noexcept;

/// Print an open error to stderr ("Error: failed to parse GGUF: …" or "Error: …") and return its exit code.
int report_error(const gguf::error& e);

}  // namespace minfer::cli
