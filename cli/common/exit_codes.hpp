#pragma once
// Process exit codes, shared by every command (documented in `minfer --help` and docs/CLI.md).
namespace minfer::cli {

enum exit_code : int {
    exit_ok = 0,     ///< success
    exit_parse = 1,  ///< the file is not a valid GGUF model (any parse, layout or split error); a --key that is absent
    exit_usage = 2,  ///< bad command line, or a directory was given (nothing chosen)
    exit_io = 3,     ///< a file cannot be opened or read (also SIGBUS while mapped), memory ran out, stdout failed
};

/// The help footer every command shows.
inline constexpr const char* exit_codes_text =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the file is not a valid GGUF model (parse error; the message names file, section, byte and code)\n"
    "  2  usage error: bad option, missing argument, or a directory (its .gguf files are listed)\n"
    "  3  I/O error: a file or split part cannot be opened or read (missing, permission, truncated while\n"
    "     mapped), out of memory\n";

}  // namespace minfer::cli
