// `minfer info`: open a model (or list a directory) and hand it to a printer.
#include <cstdio>
#include <filesystem>
#include <new>
#include <system_error>

#include <fmt/format.h>

#include "../common/exit_codes.hpp"
#include "../common/open_model.hpp"
#include "../common/out_buffer.hpp"
#include "../common/run_printing.hpp"
#include "../print/printers.hpp"
#include "commands.hpp"
#include "info_options.hpp"
#include "minfer/gguf/text.hpp"

namespace minfer::cli {
namespace {

info_options opt;  // filled by CLI11 during parsing, read by info_run()
remote_args remote_opt;  // --max-fetch, --timeout, --stats (for a URL)

bool is_directory(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_directory(std::filesystem::path(path), ec);
}

int run(out_buffer& out) {
    if (!is_url(opt.path) && is_directory(opt.path)) return list_directory(std::filesystem::path(opt.path), opt, out);

    const bool text = !opt.json && !opt.has_key;
    if (text) {
        out.print("Loading model: {}\n", gguf::escape(opt.path));
        out.flush();
    }
    auto m = open_model_at(opt.path, opt.no_mmap, remote_opt);
    if (!m) {
        out.flush();
        return report_error(m.error());
    }
    if (opt.has_key) return print_key(*m, opt, out);
    return opt.json ? print_json(*m, opt, out) : print_text(*m, opt, out);
}

}  // namespace

void info_add_options(CLI::App& sub) {
    sub.add_option("model", opt.path,
                   "The .gguf file, or part 1 (<name>-00001-of-0000N.gguf) of a split set; a directory lists "
                   "its .gguf files with each one's verdict; an http(s):// URL or hf://OWNER/REPO/FILE[@REVISION] "
                   "is read from its head (metadata and tensor table) with range requests")
        ->required();
    sub.add_flag("--full", opt.full,
                 "Print every array item, whole strings, and the chat template as text (default: first 8 "
                 "items, strings cut at 60 bytes)");
    auto* json = sub.add_flag("--json", opt.json,
                              "Print one JSON document (streamed; every array item unless --no-arrays)");
    sub.add_flag("--no-arrays", opt.no_arrays, "Show arrays as their type and count only, without items");
    sub.add_flag("--no-tensors", opt.no_tensors, "Leave out the tensor table (the totals stay)");
    sub.add_option("--key", opt.key,
                   "Print the value of one key raw: a string as its bytes, a number plainly, an array one "
                   "item per line (exit 1 if the key is absent)")
        ->excludes(json);
    sub.add_flag("--no-mmap", opt.no_mmap,
                 "Read the file into memory instead of mapping it: slower, but immune to SIGBUS if the file "
                 "is truncated while it is read");
    add_remote_options(sub, remote_opt);
}

int info_run() {
    opt.has_key = !opt.key.empty();
    const int rc = run_printing(run);
    print_fetch_stats(remote_opt);  // after the output, on stderr (a URL only)
    return rc;
}

}  // namespace minfer::cli
