#include "minfer/toolbox/exit_code.hpp"

namespace minfer::toolbox {

bool is_io_failure(gguf::errc code) noexcept {
    switch (code) {
        case gguf::errc::io_error:
        case gguf::errc::split_part_missing:
        case gguf::errc::out_of_memory:
        // a remote file's transfer: the file may be fine, it could not be read
        case gguf::errc::fetch_budget_exceeded:
        case gguf::errc::http_status:
        case gguf::errc::range_ignored:
        case gguf::errc::bad_content_range:
        case gguf::errc::transfer_failed: return true;
        default: return false;
    }
}

bool is_parse_failure(gguf::errc code) noexcept {
    // The loader's codes come first in errc (up to split_bad_name); among them, these five are what an
    // accessor returns for a request, not a verdict on the file.
    using gguf::errc;
    return !is_io_failure(code) && static_cast<int>(code) <= static_cast<int>(errc::split_bad_name) &&
           code != errc::key_not_found && code != errc::type_mismatch && code != errc::tensor_not_found &&
           code != errc::index_out_of_range && code != errc::value_out_of_range;
}

error_kind kind_of(gguf::errc code) noexcept {
    if (is_io_failure(code)) return error_kind::io;
    if (is_parse_failure(code) || code == gguf::errc::bad_hyperparameter || code == gguf::errc::bad_imatrix)
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
    switch (code) {
        case gguf::errc::bad_value_text:      // the command line's value, not the file
        case gguf::errc::model_incomplete:    // a remote model where the file is needed
        case gguf::errc::output_not_regular:  // an output that names no file to replace
        case gguf::errc::requantize_refused:  // needs the user's explicit --allow-requantize
            return exit_usage;
        default: return exit_parse;
    }
}

}  // namespace minfer::toolbox
