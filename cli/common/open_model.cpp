#include "open_model.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "quote.hpp"
#include "sigbus_guard.hpp"

namespace minfer::cli {

gguf::result<gguf::model> open_model(const std::string& path, bool no_mmap) {
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

int exit_code_for(const gguf::error& e) noexcept {
    switch (e.code) {
        case gguf::errc::io_error:
        case gguf::errc::split_part_missing:
        case gguf::errc::out_of_memory:
        // a remote file's transfer: the file may be fine, it could not be read
        case gguf::errc::fetch_budget_exceeded:
        case gguf::errc::http_status:
        case gguf::errc::range_ignored:
        case gguf::errc::bad_content_range:
        case gguf::errc::transfer_failed: return exit_io;
        case gguf::errc::bad_value_text: return exit_usage;  // the command line's value, not the file
        default: return exit_parse;
    }
}

namespace {
// Codes that say the input file is not a valid model (what `model::open` returns), as opposed to a
// request the file cannot honour (a key to set that is absent, no room in place, a journal).
bool is_parse_failure(gguf::errc c) noexcept {
    return static_cast<int>(c) <= static_cast<int>(gguf::errc::split_bad_name) && c != gguf::errc::key_not_found &&
           c != gguf::errc::type_mismatch && c != gguf::errc::tensor_not_found &&
           c != gguf::errc::index_out_of_range && c != gguf::errc::value_out_of_range;
}
}  // namespace

int report_error(const gguf::error& e) {
    const int code = exit_code_for(e);
    if (code == exit_parse && is_parse_failure(e.code)) {
        fmt::print(stderr, "Error: failed to parse GGUF: {}\n", e.message());
    } else {
        fmt::print(stderr, "Error: {}\n", e.message());
    }
    std::fflush(stderr);
    return code;
}

}  // namespace minfer::cli
