// minfer: the command-line tool. This file is the command table: each command's name, one line of
// help, the function that adds its options, and the function that runs it (cmd/<name>.cpp).
#include <array>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cmd/commands.hpp"
#include "common/exit_codes.hpp"
#include "common/sigbus_guard.hpp"

#ifndef MINFER_VERSION
#define MINFER_VERSION "unknown"
#endif

namespace {

struct command {
    const char* name;
    const char* help;
    void (*add_options)(CLI::App&);
    int (*run)();
};

constexpr std::array commands{
    command{"info",
            "Open a GGUF model (single file or part 1 of a split set), verify it and print its metadata, tensor "
            "table and totals",
            minfer::cli::info_add_options, minfer::cli::info_run},
    command{"edit",
            "Change a model's metadata (set, delete, chat template, special tokens, name) into a new file, or in "
            "place when it fits; --dry-run shows the changes",
            minfer::cli::edit_add_options, minfer::cli::edit_run},
    command{"split",
            "Write a model as a split set (<prefix>-00001-of-0000N.gguf, ...) by tensor count or by a hard size "
            "limit per part file, with llama-gguf-split's split keys",
            minfer::cli::split_add_options, minfer::cli::split_run},
    command{"merge", "Merge a split set (given its part 1) into one .gguf file without split keys",
            minfer::cli::merge_add_options, minfer::cli::merge_run},
    command{"tensor",
            "Print one tensor's type, shape, strides, offsets and first values by row; --stats over all values, "
            "--dump them as raw f32",
            minfer::cli::tensor_add_options, minfer::cli::tensor_run},
    command{"diff",
            "Compare two models: metadata, tensor table, tensor bytes, and with --values the dequantized values "
            "(exit 0 identical, 1 different)",
            minfer::cli::diff_add_options, minfer::cli::diff_run},
    command{"hash",
            "Hash each tensor and the whole model as llama-gguf-hash does (xxh64, xxh3, sha1, sha256, uuid), "
            "check a manifest strictly, or the files' SHA-256",
            minfer::cli::hash_add_options, minfer::cli::hash_run},
    command{"verify",
            "Check a model's values: NaN/Inf in float tensors and quantized scales (--values: every value), "
            "all-zero tensors; --manifest and --file-sha256 check the download in the same pass",
            minfer::cli::verify_add_options, minfer::cli::verify_run},
    command{"estimate",
            "Estimate the memory llama.cpp will allocate for a model: weights, KV cache and compute buffer, CPU only "
            "and with full GPU offload (--json: bytes)",
            minfer::cli::estimate_add_options, minfer::cli::estimate_run},
    command{"quantize",
            "Quantize a model as llama-quantize does (same TYPEs and options, the same bytes) for any architecture; "
            "--dry-run: each tensor's type and the rule, every output file's exact size",
            minfer::cli::quantize_add_options, minfer::cli::quantize_run},
    command{"prune",
            "Remove layers, MoE experts, MTP layers or tensors from a (quantized) model without requantizing: kept "
            "bytes copied unchanged, metadata kept consistent; --dry-run shows the plan",
            minfer::cli::prune_add_options, minfer::cli::prune_run},
    command{"assemble",
            "Build a model from a mergekit config on GGUF files: passthrough stacks of layer slices and per-tensor "
            "recipes (tensors: rules), every byte copied from its source; --dry-run shows the plan",
            minfer::cli::assemble_add_options, minfer::cli::assemble_run},
    command{"convert",
            "Convert a Hugging Face checkpoint (safetensors) to GGUF as convert_hf_to_gguf.py does, without Python: the "
            "same bytes, streamed in bounded memory; --dry-run shows the plan",
            minfer::cli::convert_add_options, minfer::cli::convert_run},
    command{"report",
            "A picture of a model: one offline HTML page (summary, metadata, tensors, layer heatmap, vocabulary; "
            "--values: statistics and histograms); two models: B compared with A tensor by tensor; --json: the data",
            minfer::cli::report_add_options, minfer::cli::report_run},
};

}  // namespace

int main(int argc, char** argv) {
    using namespace minfer::cli;
    install_sigbus_guard();
    try {
        CLI::App app{"minfer: strict zero-copy GGUF loading", "minfer"};
        app.set_version_flag("--version", std::string("minfer ") + MINFER_VERSION);
        app.require_subcommand(1);
        app.footer(exit_codes_text);

        // Start-up is most of a local command's time: when the first argument names a command, only
        // that command's options are built (CLI11 builds a few hundred objects for all of them).
        // Every command is still registered, so `minfer --help`, a misspelled command and the
        // usage text are unchanged; with any other first argument all options are built.
        const std::string_view first = argc > 1 ? std::string_view(argv[1]) : std::string_view();
        bool named = false;
        for (const command& c : commands) named = named || first == c.name;
        std::array<CLI::App*, commands.size()> subs{};
        for (std::size_t i = 0; i < commands.size(); ++i) {
            subs[i] = app.add_subcommand(commands[i].name, commands[i].help);
            if (!named || first == commands[i].name) commands[i].add_options(*subs[i]);
            // A command may say what its exit codes mean for it (edit: a bad value is a usage error).
            if (subs[i]->get_footer().empty()) subs[i]->footer(exit_codes_text);
        }

        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& e) {
            const int rc = app.exit(e);  // prints help/version to stdout, errors to stderr
            return rc == 0 ? exit_ok : exit_usage;
        }
        for (std::size_t i = 0; i < commands.size(); ++i)
            if (subs[i]->parsed()) return commands[i].run();
        return exit_usage;
    } catch (const std::bad_alloc&) {
        std::fputs("Error: out of memory\n", stderr);
        return exit_io;
    } catch (const std::exception& e) {
        fmt::print(stderr, "Error: {}\n", e.what());
        return exit_io;
    }
}
