// minfer: the command-line tool. This file only parses the command line (CLI11) and dispatches.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "info.hpp"

#ifndef MINFER_VERSION
#define MINFER_VERSION "unknown"
#endif

namespace {

constexpr const char* exit_codes_text =
    "Exit codes:\n"
    "  0  success\n"
    "  1  the file is not a valid GGUF model (parse error; the message names file, section, byte and code)\n"
    "  2  usage error: bad option, missing argument, or a directory (its .gguf files are listed)\n"
    "  3  I/O error: a file or split part cannot be opened or read (missing, permission), out of memory\n";

}  // namespace

int main(int argc, char** argv) {
    try {
        CLI::App app{"minfer: strict zero-copy GGUF loading", "minfer"};
        app.set_version_flag("--version", std::string("minfer ") + MINFER_VERSION);
        app.require_subcommand(1);
        app.footer(exit_codes_text);

        minfer::cli::info_options opt;
        CLI::App* info = app.add_subcommand(
            "info", "Open a GGUF model (single file or part 1 of a split set), verify it and print its metadata, "
                    "tensor table and totals");
        info->add_option("model", opt.path,
                         "The .gguf file, or part 1 (<name>-00001-of-0000N.gguf) of a split set; a directory lists "
                         "its .gguf files")
            ->required();
        info->add_flag("--full", opt.full, "Print every array item and whole strings (default: first 8 items, "
                                           "strings cut at 60 bytes)");
        info->add_flag("--json", opt.json, "Print one JSON document (always every array item) instead of text");
        info->add_flag("--no-mmap", opt.no_mmap,
                       "Read the file into memory instead of mapping it: slower, but immune to SIGBUS if the file "
                       "is truncated while it is read");
        info->footer(exit_codes_text);

        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            const int rc = app.exit(e);  // prints help/version to stdout, errors to stderr
            return rc == 0 ? minfer::cli::exit_ok : minfer::cli::exit_usage;
        }
        if (info->parsed()) return minfer::cli::run_info(opt);
        return minfer::cli::exit_usage;
    } catch (const std::bad_alloc&) {
        std::fputs("Error: out of memory\n", stderr);
        return minfer::cli::exit_io;
    } catch (const std::exception& e) {
        fmt::print(stderr, "Error: {}\n", e.what());
        return minfer::cli::exit_io;
    }
}
