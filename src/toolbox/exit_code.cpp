// One row per code that any library names: its kind, its exit code, and whether the CLI says "failed
// to parse GGUF" for it. A table rather than rules about a code's position in its enum: a code
// appended to the loader's list once fell into the wrong class (input_too_large exited 1 from
// quantize --imatrix and 3 from edit). tests/unit/test_toolbox.cpp walks every named code of every
// domain and fails on one without a row, so a new code is classified when it is added.
#include "minfer/toolbox/exit_code.hpp"

#include <array>

#include "minfer/check/errors.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/quant/errors.hpp"
#include "minfer/toolbox/errors.hpp"

namespace minfer::toolbox {
namespace {

using gguf::errc;
constexpr error_kind invalid = error_kind::invalid_file;
constexpr error_kind request = error_kind::request;
constexpr error_kind io = error_kind::io;

// parse: the CLI's "failed to parse GGUF" (what model::open says about a file that is not a valid model).
constexpr classification row(errc c, error_kind k, int exit, bool parse = false) { return {c, k, exit, parse}; }
constexpr classification bad_file(errc c) { return row(c, invalid, exit_parse, true); }

constexpr std::array table{
    // the loader: environment
    row(errc::io_error, io, exit_io),
    row(errc::out_of_memory, io, exit_io),
    // the loader: what model::open says about the file
    bad_file(errc::truncated), bad_file(errc::bad_magic), bad_file(errc::bad_version), bad_file(errc::byte_swapped),
    bad_file(errc::version_unsupported), bad_file(errc::version_too_new), bad_file(errc::negative_count),
    bad_file(errc::count_too_large), bad_file(errc::empty_key), bad_file(errc::duplicate_key),
    bad_file(errc::bad_value_type), bad_file(errc::nested_array), bad_file(errc::string_too_long),
    bad_file(errc::string_exceeds_file), bad_file(errc::array_too_long), bad_file(errc::array_exceeds_file),
    bad_file(errc::bad_bool), bad_file(errc::alignment_wrong_type), bad_file(errc::bad_alignment),
    bad_file(errc::bad_name_length), bad_file(errc::duplicate_tensor), bad_file(errc::bad_n_dims),
    bad_file(errc::bad_dim), bad_file(errc::shape_overflow), bad_file(errc::bad_tensor_type),
    bad_file(errc::removed_tensor_type), bad_file(errc::not_block_multiple), bad_file(errc::size_overflow),
    bad_file(errc::offset_mismatch), bad_file(errc::data_size_overflow), bad_file(errc::data_truncated),
    bad_file(errc::split_not_first), bad_file(errc::split_no_mismatch), bad_file(errc::split_count_mismatch),
    row(errc::split_part_missing, io, exit_io),  // a part that cannot be opened: the set may be fine
    bad_file(errc::split_tensor_count_mismatch), bad_file(errc::split_duplicate_tensor), bad_file(errc::split_bad_key),
    bad_file(errc::nul_in_name), bad_file(errc::split_arch_mismatch), bad_file(errc::split_bad_name),
    // the loader: an accessor's answer to a request, not a verdict on the file
    row(errc::key_not_found, request, exit_parse), row(errc::type_mismatch, request, exit_parse),
    row(errc::tensor_not_found, request, exit_parse), row(errc::index_out_of_range, request, exit_parse),
    row(errc::value_out_of_range, request, exit_parse),
    // shared codes
    row(errc::bad_value_text, request, exit_usage),        // the command line's value, not the file
    row(errc::buffer_size_mismatch, request, exit_parse),
    row(errc::head_incomplete, request, exit_parse),
    row(errc::fetch_budget_exceeded, io, exit_io),         // a remote file's transfer: the file may be fine
    row(errc::http_status, io, exit_io),
    row(errc::transfer_failed, io, exit_io),
    row(errc::bad_hyperparameter, invalid, exit_parse),    // a valid GGUF file llama.cpp cannot load
    row(errc::model_incomplete, request, exit_usage),      // a remote model where the file is needed
    row(errc::input_too_large, io, exit_io),               // a named input beyond its cap (docs/ERRORS.md)
    // gguf_write
    row(gguf::write_codes::token_not_found, request, exit_parse),
    row(gguf::write_codes::no_room_in_place, request, exit_parse),
    row(gguf::write_codes::journal_present, request, exit_parse),
    row(gguf::write_codes::journal_invalid, request, exit_parse),  // the journal, not the model: a request it cannot honour
    row(gguf::write_codes::too_many_parts, request, exit_parse),
    row(gguf::write_codes::output_not_regular, request, exit_usage),  // an output that names no file to replace
    // quant
    row(quant::codes::type_not_convertible, request, exit_parse),
    row(quant::codes::type_not_quantizable, request, exit_parse),
    row(quant::codes::importance_required, request, exit_parse),
    row(quant::codes::quantize_failed, request, exit_parse),
    row(quant::codes::bad_imatrix, invalid, exit_parse),
    row(quant::codes::imatrix_mismatch, request, exit_parse),
    row(quant::codes::requantize_refused, request, exit_usage),  // needs the user's explicit --allow-requantize
    row(quant::codes::non_finite_weight, request, exit_parse),
    row(quant::codes::row_too_long, request, exit_parse),
    // check
    row(check::codes::hash_unavailable, request, exit_parse),
    row(check::codes::manifest_too_large, request, exit_parse),
    row(check::codes::manifest_bad_line, request, exit_parse),
    // toolbox: reshaping models and their configs
    row(toolbox::codes::bad_selection, request, exit_usage),        // the command line's list
    row(toolbox::codes::key_not_adjustable, request, exit_parse),
    row(toolbox::codes::sources_incompatible, request, exit_parse),
    row(toolbox::codes::bad_config, request, exit_usage),           // the user's config, as a command line
    row(toolbox::codes::unsupported_config, request, exit_usage),
    // convert: a Hugging Face checkpoint given to `minfer convert`. A checkpoint that is not what its
    // formats say is an invalid input (exit 1, never "failed to parse GGUF": it is not GGUF); a valid
    // one the converter does not handle (a dtype, an architecture) is a request it cannot honour.
    row(convert::codes::bad_safetensors, invalid, exit_parse),
    row(convert::codes::unsupported_dtype, request, exit_parse),
    row(convert::codes::bad_model_config, invalid, exit_parse),
    row(convert::codes::bad_checkpoint_index, invalid, exit_parse),
    row(convert::codes::unsupported_architecture, request, exit_parse),
    row(convert::codes::no_weights, invalid, exit_parse),
    row(convert::codes::bad_tokenizer, invalid, exit_parse),
    row(convert::codes::unsupported_tokenizer, request, exit_parse),
    row(convert::codes::bad_tensor, invalid, exit_parse),
    row(convert::codes::bad_model_card, invalid, exit_parse),
    // remote (range_ignored, bad_content_range, library_unavailable), by number: this library does
    // not link remote (whose header would register its domain). Every one is a transfer's: the file
    // may be fine, it could not be read (libcurl missing included).
    row(gguf::make_code(gguf::domains::remote, 1), io, exit_io),
    row(gguf::make_code(gguf::domains::remote, 2), io, exit_io),
    row(gguf::make_code(gguf::domains::remote, 3), io, exit_io),
};

// A code no row names: remote's domain is transfers only (a code it adds later is I/O too); any
// other is taken as a request (exit 1) until the table says otherwise.
constexpr classification unnamed_remote{errc::ok, io, exit_io, false};
constexpr classification unnamed{errc::ok, request, exit_parse, false};

}  // namespace

const classification* find_classification(gguf::errc code) noexcept {
    for (const classification& c : table)
        if (c.code == code) return &c;
    return nullptr;
}

namespace {
const classification& classify(errc code) noexcept {
    if (const classification* c = find_classification(code)) return *c;
    return gguf::domain_of(code) == gguf::domains::remote ? unnamed_remote : unnamed;
}
}  // namespace

bool is_io_failure(gguf::errc code) noexcept { return classify(code).kind == error_kind::io; }

bool is_parse_failure(gguf::errc code) noexcept { return classify(code).parse_failure; }

error_kind kind_of(gguf::errc code) noexcept { return classify(code).kind; }

std::string_view to_string(error_kind kind) noexcept {
    switch (kind) {
        case error_kind::invalid_file: return "invalid";
        case error_kind::request: return "request";
        case error_kind::io: return "io";
    }
    return "request";
}

int exit_code_for(gguf::errc code) noexcept { return classify(code).exit; }

}  // namespace minfer::toolbox
