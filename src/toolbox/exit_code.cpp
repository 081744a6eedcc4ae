#include "minfer/toolbox/exit_code.hpp"

#include "minfer/gguf_write/errors.hpp"
#include "minfer/quant/errors.hpp"

namespace minfer::toolbox {

bool is_io_failure(gguf::errc code) noexcept {
    // Every code of minfer::remote is a transfer's (range_ignored, bad_content_range, …): named by its
    // domain, since this library does not link remote.
    if (gguf::domain_of(code) == gguf::domains::remote) return true;
    switch (code) {
        case gguf::errc::io_error:
        case gguf::errc::split_part_missing:
        case gguf::errc::out_of_memory:
        // a remote file's transfer: the file may be fine, it could not be read
        case gguf::errc::fetch_budget_exceeded:
        case gguf::errc::http_status:
        case gguf::errc::transfer_failed: return true;
        default: return false;
    }
}

bool is_parse_failure(gguf::errc code) noexcept {
    // The loader's codes come first in its domain (up to split_bad_name); among them, these five are what an
    // accessor returns for a request, not a verdict on the file.
    using gguf::errc;
    return !is_io_failure(code) && gguf::domain_of(code) == gguf::domains::loader &&
           static_cast<int>(code) <= static_cast<int>(errc::split_bad_name) &&
           code != errc::key_not_found && code != errc::type_mismatch && code != errc::tensor_not_found &&
           code != errc::index_out_of_range && code != errc::value_out_of_range;
}

error_kind kind_of(gguf::errc code) noexcept {
    if (is_io_failure(code)) return error_kind::io;
    if (is_parse_failure(code) || code == gguf::errc::bad_hyperparameter || code == quant::codes::bad_imatrix)
        return error_kind::invalid_file;
    return error_kind::request;
}

std::string_view to_string(error_kind kind) noexcept {
    switch (kind) {
        case error_kind::invalid_file: return "invalid";
        case error_kind::request: return "request";
        case error_kind::io: return "io";
    }
    return "request";
}

int exit_code_for(gguf::errc code) noexcept {
    if (is_io_failure(code)) return exit_io;
    if (code == gguf::errc::bad_value_text ||                // the command line's value, not the file
        code == gguf::errc::model_incomplete ||              // a remote model where the file is needed
        code == gguf_write::codes::output_not_regular ||     // an output that names no file to replace
        code == quant::codes::requantize_refused)            // needs the user's explicit --allow-requantize
        return exit_usage;
    return exit_parse;
}

}  // namespace minfer::toolbox
