#include "number_check.hpp"
#include "open_model.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "plural.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/remote/fetch_options.hpp"
#include "minfer/remote/http_opener.hpp"
#include "minfer/remote/url.hpp"
#include "quote.hpp"
#include "sigbus_guard.hpp"
#include "usage_error.hpp"
#include "minfer/toolbox/size_text.hpp"

namespace minfer::cli {

namespace {
std::optional<remote::fetch_stats> last_fetch;  // what the last remote open fetched

gguf::error usage_value(const std::string& file, std::string why) {
    gguf::error e;
    e.code = gguf::errc::bad_value_text;
    e.file = file;
    e.detail = std::move(why);
    return e;
}

gguf::result<gguf::model> open_local(const std::string& path, bool no_mmap);
}  // namespace

bool is_url(const std::string& location) { return toolbox::names_remote_model(location); }

std::optional<int> read_remote_settings(const remote_args& args, toolbox::remote_settings& out) {
    if (!args.max_fetch.empty()) {
        std::string why;
        const auto n = toolbox::parse_size(args.max_fetch, why);
        if (!n) return usage_error("--max-fetch " + gguf::escape(args.max_fetch) + ": " + why);
        out.max_fetch = *n;
    }
    if (args.timeout > 0) out.timeout_s = args.timeout;
    if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) out.hf_token = token;  // sent to the Hub only
    return std::nullopt;
}

void add_remote_options(CLI::App& sub, remote_args& args, const std::string& max_fetch_default,
                        const std::string& timeout_default) {
    sub.add_option("--max-fetch", args.max_fetch,
                   "For a URL: the most bytes fetched over all parts (SIZE: bytes, K/M/G or KiB/MiB/GiB; default " +
                       (max_fetch_default.empty() ? std::string("64MiB") : max_fetch_default) + ")")
        ->type_name("SIZE");
    sub.add_option("--timeout", args.timeout,
                   "For a URL: the most seconds the whole command may take, every request and retry included "
                   "(default " + (timeout_default.empty() ? std::string("60") : timeout_default) +
                       "); a request with no byte for 20 s ends sooner")
        ->type_name("SECONDS")
        ->check(positive_seconds());
    sub.add_flag("--stats", args.stats,
                 "For a URL: print \"fetched N bytes in K requests from M parts\" on stderr even when it is not a terminal");
}

gguf::result<gguf::model> open_model_at(const std::string& location, bool no_mmap, const remote_args& args) {
    last_fetch.reset();
    remote::fetch_options fo;
    if (!args.max_fetch.empty()) {  // checked for a path too: a wrong option is wrong whatever it is given with
        std::string why;
        const auto n = toolbox::parse_size(args.max_fetch, why);
        if (!n)
            return gguf::unexpected(usage_value(location, std::string("--max-fetch ").append(gguf::escape(args.max_fetch)).append(": ").append(why)));
        fo.max_fetch = *n;
    }
    if (!is_url(location)) return open_local(location, no_mmap);
    auto url = remote::resolve(location);
    if (!url) return gguf::unexpected(std::move(url).error());
    if (args.timeout > 0) fo.timeout_s = args.timeout;  // the whole command's, from when its opener is made
    if (remote::is_hub(*url)) {
        if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) fo.bearer_token = token;
    }
    remote::http_opener opener(fo);
    auto m = gguf::model::open(opener, *url);
    // The statistics are a courtesy line on stderr: without memory for their copy, none is shown.
    if (auto stats = opener.stats()) last_fetch = std::move(*stats);
    return m;
}

void print_fetch_stats(const remote_args& args) {
    if (!last_fetch) return;
    if (!args.stats && ::isatty(STDERR_FILENO) != 1) return;
    const std::size_t parts = last_fetch->parts.size();
    fmt::print(stderr, "fetched {} bytes in {} request{} from {} part{}\n", last_fetch->bytes_received(),
               last_fetch->requests(), last_fetch->requests() == 1 ? "" : "s", parts, parts == 1 ? "" : "s");
    std::fflush(stderr);
}

void print_fetch_totals(const remote_args& args, const toolbox::fetch_totals& f, std::string_view heads) {
    if (f.files == 0 || (!args.stats && ::isatty(STDERR_FILENO) != 1)) return;
    fmt::print(stderr, "fetched {} bytes in {} from {}{}\n", f.bytes, plural(f.requests, "request", "requests"),
               plural(f.files, "remote file", "remote files"),
               heads.empty() ? std::string() : fmt::format(" ({} of {}, {} of tensors)", f.head_bytes, heads, f.bytes - f.head_bytes));
    std::fflush(stderr);
}

gguf::result<gguf::model> open_model(const std::string& path, bool no_mmap) {
    if (is_url(path))
        return gguf::unexpected(usage_value(path, "this command reads tensor data, which is not fetched from a URL; "
                                                  "download the file first (minfer info and minfer estimate read URLs)"));
    return open_local(path, no_mmap);
}

namespace {
gguf::result<gguf::model> open_local(const std::string& path, bool no_mmap) {
    // Armed before the mapping exists: parsing reads the mapping too.
    sigbus_guard_file(path, "(or one of its split parts)");
    gguf::open_options oo;
    oo.mode = no_mmap ? gguf::load_mode::read : gguf::load_mode::map;
    auto m = gguf::model::open(std::filesystem::path(path), oo);
    if (m && m->parts().size() == 1) sigbus_guard_file(path);
    if (m) {
        // An interrupted in-place edit: the file may hold part of a new header. The loader cannot
        // tell (both heads are valid GGUF); the journal beside it can.
        for (const gguf::model_part& part : m->parts()) {
            std::error_code ec;
            const auto journal = gguf::undo_journal_path(part.path);
            if (std::filesystem::exists(journal, ec))
                fmt::print(stderr,
                           "Warning: an interrupted in-place edit left {}; the file may hold a partly written "
                           "header. Run: minfer edit --recover {}\n",
                           cli::quoted(journal.string()), cli::quoted(part.path.string()));
        }
    }
    return m;
}
}  // namespace

int report_error(const gguf::error& e) {
    const int code = exit_code_for(e);
    if (e.code == gguf::errc::bad_value_text && e.subject.empty() && !e.file.empty() &&
        (is_url(e.file) || e.detail.rfind("--max-fetch ", 0) == 0)) {
        // a URL refused, or not a valid URL: say why, without the generic "value is not valid"
        fmt::print(stderr, "Error: {}: {}\n", gguf::escape(e.file), e.detail);
        std::fflush(stderr);
        return code;
    }
    if (code == exit_parse && toolbox::is_parse_failure(e.code)) {
        fmt::print(stderr, "Error: failed to parse GGUF: {}\n", e.message());
    } else {
        fmt::print(stderr, "Error: {}\n", e.message());
    }
    std::fflush(stderr);
    return code;
}

}  // namespace minfer::cli
