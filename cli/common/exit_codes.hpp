#pragma once
// Process exit codes, shared by every command (documented in `minfer --help` and docs/CLI.md).
#include "minfer/toolbox/exit_code.hpp"

namespace minfer::cli {

// The codes themselves are minfer::toolbox's, which the Python module's exceptions carry too.
using toolbox::exit_code;
using toolbox::exit_ok;
using toolbox::exit_parse;
using toolbox::exit_usage;
using toolbox::exit_io;

/// The help footer every command shows.
inline constexpr const char* exit_codes_text =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the file is not a valid GGUF model (parse error; the message names file, section, byte and code)\n"
    "  2  usage error: bad option, missing argument, or a directory (its .gguf files are listed)\n"
    "  3  I/O error: a file or split part cannot be opened or read (missing, permission, truncated while\n"
    "     mapped), out of memory\n";

}  // namespace minfer::cli
