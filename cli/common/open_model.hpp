#pragma once
// Opening a model for a command, and reporting why it failed, the same way in every command.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/toolbox/exit_code.hpp"
#include "minfer/toolbox/remote_settings.hpp"

namespace minfer::cli {

/// Open `path` (mapped, or read into memory with `no_mmap`), with the SIGBUS guard naming the file.
/// For the commands that read tensor data: a URL is refused (bad_value_text, exit 2: download it first).
gguf::result<gguf::model> open_model(const std::string& path, bool no_mmap);

/// The options of the commands that read only metadata and so accept URLs (info, estimate).
struct remote_args {
    std::string max_fetch;  ///< --max-fetch SIZE (size_arg syntax); empty: 64 MiB
    double timeout = 0;     ///< --timeout SECONDS: the whole command's deadline; 0: the default (60 s)
    bool stats = false;     ///< --stats: print the fetched-bytes line even when stderr is not a terminal
};

/// Add --max-fetch, --timeout and --stats to a command that accepts URLs; `max_fetch_default` and
/// `timeout_default` say what the command does without them (empty: info's 64MiB and 60).
void add_remote_options(CLI::App& sub, remote_args& args, const std::string& max_fetch_default = {},
                        const std::string& timeout_default = {});

/// The toolbox's remote settings of a command that reads URLs through the toolbox (assemble,
/// report): --max-fetch parsed, --timeout, $HF_TOKEN (sent to the Hub only). @returns the usage
/// exit code (the message printed) for a bad --max-fetch, nullopt when the settings are made.
std::optional<int> read_remote_settings(const remote_args& args, toolbox::remote_settings& out);

/// Whether `location` is a URL (http://, https://, hf://) rather than a path.
bool is_url(const std::string& location);

/// Open a local model as open_model does, or a remote one (http://, https://, hf://OWNER/REPO/FILE[@REV])
/// through minfer::remote: its head only, with the same checks and verdict. $HF_TOKEN is sent to the
/// Hub (hf://, huggingface.co, hf.co) only. A bad URL or option value is bad_value_text (exit 2).
gguf::result<gguf::model> open_model_at(const std::string& location, bool no_mmap, const remote_args& args);

/// After a command's output: "fetched N bytes in K requests from M parts" on stderr, when the last
/// open_model_at fetched a URL and stderr is a terminal or --stats was given; nothing otherwise.
void print_fetch_stats(const remote_args& args);

/// After a toolbox command that read URLs (assemble, convert, report): "fetched N bytes in K requests
/// from M remote files (A of <heads>, B of tensors)" on stderr when it fetched anything and stderr is a
/// terminal or --stats was given; `heads` empty leaves out the parenthesis.
void print_fetch_totals(const remote_args& args, const toolbox::fetch_totals& f, std::string_view heads = {});

/// The exit code an error maps to (minfer::toolbox's classification, which the Python module uses too).
using toolbox::exit_code_for;

/// Print an open error to stderr ("Error: failed to parse GGUF: …" or "Error: …") and return its exit code.
int report_error(const gguf::error& e);

}  // namespace minfer::cli
