#pragma once
// The one classification of a library error for the frontends: what kind of failure it is (the file
// is not a valid model, a request the file cannot honour, or I/O) and the minfer tool's exit code for
// it. The CLI exits with the code and prints "failed to parse GGUF" for a parse failure; the Python
// module raises the kind's class (InvalidFileError, RequestError, GGUFIOError) with the same exit_code.
// Both call this, so that they cannot disagree.
#include <string_view>

#include "minfer/gguf/error.hpp"

namespace minfer::toolbox {

/// The minfer tool's process exit codes (documented in `minfer --help` and docs/CLI.md).
enum exit_code : int {
    exit_ok = 0,     ///< success
    exit_parse = 1,  ///< the file is not a valid GGUF model (any parse, layout or split error); a --key that is absent
    exit_usage = 2,  ///< bad command line, or a directory was given (nothing chosen)
    exit_io = 3,     ///< a file cannot be opened or read (also SIGBUS while mapped), memory ran out, stdout failed
};

/// What kind of failure an error is.
enum class error_kind {
    invalid_file,  ///< the file is not a valid model, or holds a hyperparameter llama.cpp cannot use
    request,       ///< a request the file cannot honour (an absent key, no room in place, a bad value text)
    io,            ///< the file could not be read or written (missing part, memory, a remote transfer)
};

/// One code's row in the classification table (src/toolbox/exit_code.cpp): every code a library
/// names has one, which the tests check for every domain.
struct classification {
    gguf::errc code;
    error_kind kind;
    int exit;            ///< the minfer tool's exit code
    bool parse_failure;  ///< the CLI says "failed to parse GGUF" (is_parse_failure)
};

/// The row of `code`, or nullptr for a code the table does not name: classified as a request (exit 1),
/// or in remote's domain as I/O (exit 3).
const classification* find_classification(gguf::errc code) noexcept;

/// Reading or writing failed: the file may be fine (io_error, split_part_missing, out_of_memory, and a
/// remote file's transfer codes).
bool is_io_failure(gguf::errc code) noexcept;

/// The input is not a valid model: what model::open returns besides I/O (the CLI says "failed to parse
/// GGUF"), as opposed to a request the file cannot honour (an absent key or tensor, a wrong type, an
/// index or value out of range).
bool is_parse_failure(gguf::errc code) noexcept;

/// io for is_io_failure; invalid_file for is_parse_failure, bad_hyperparameter (a valid GGUF file
/// whose model llama.cpp cannot load), a malformed imatrix and a malformed Hugging Face checkpoint
/// (minfer::convert's bad_* and no_weights); request otherwise.
error_kind kind_of(gguf::errc code) noexcept;

/// "invalid", "request" or "io": the names minfer.errors uses for the kinds.
std::string_view to_string(error_kind kind) noexcept;

/// The exit code: exit_io for is_io_failure; exit_usage for the command line's own values
/// (bad_value_text), a remote model where the file is needed (model_incomplete), an output that
/// names no file to replace (output_not_regular) and requantizing without allow_requantize;
/// exit_parse otherwise (invalid files and requests, and a code no library names).
int exit_code_for(gguf::errc code) noexcept;
inline int exit_code_for(const gguf::error& e) noexcept { return exit_code_for(e.code); }

}  // namespace minfer::toolbox
