#pragma once
// toolbox::quantize: `minfer quantize` and minfer.quantize() in one function. A model (a file or a
// split set) becomes a quantized model written exactly as llama.cpp's llama_model_quantize writes it
// for the same input and options (metadata in the same order, the same tensor order, each tensor's
// type from quant::plan_types, its bytes from quant::quantize_rows), so the output's SHA-256 is
// llama-quantize's. Beyond llama-quantize: any architecture (the plan reads names and shapes only),
// an exact dry run (every output file's size, header and padding included), a split set written in
// the same pass (llama.cpp's split keys, each part within the limits), and memory bounded by a few
// chunks whatever the model: each converted tensor is a writer callback source that reads, converts
// and quantizes a batch of rows at a time. Every output is an atomic_file; nothing is printed.
//
//     minfer::toolbox::quantize_request rq;
//     rq.input = "model-f16.gguf";  rq.output = "model-Q4_K_M.gguf";
//     rq.type = *minfer::quant::parse_file_type("Q4_K_M");
//     auto report = minfer::toolbox::quantize(rq);
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/quant/importance.hpp"
#include "minfer/quant/type_plan.hpp"

namespace minfer::toolbox {

/// llama-quantize's --override-kv KEY=TYPE:VALUE, as llama_model_quantize writes it into the output:
/// int as u32 of the absolute value, float as f32, bool, str (at most 127 bytes). Each is set after
/// the copied metadata (an existing key moves to the end, as gguf_set_val_* does).
struct kv_override {
    enum class kind { int_, float_, bool_, str };
    std::string key;  ///< 1..127 bytes
    kind type = kind::int_;
    std::int64_t int_value = 0;
    double float_value = 0;
    bool bool_value = false;
    std::string str_value;
};

/// Parse llama-quantize's override text "KEY=int:5", "KEY=float:0.5", "KEY=bool:true", "KEY=str:text".
/// Error bad_value_text (subject = the text, detail = why).
gguf::result<kv_override> parse_kv_override(std::string_view text);

/// llama-quantize's --tensor-type PATTERN=TYPE: split at the first '=', the pattern lowercased as
/// llama-quantize lowercases it (tensor names are lowercase; it is an ECMAScript regex searched in the
/// name, compiled by plan_types), TYPE a ggml type name in any case. The CLI and Python read it here.
/// Error bad_value_text (subject = the text, detail = why: "expected PATTERN=TYPE …", "the tensor
/// name pattern is empty", "the type is empty", "'q9_9' is not a ggml type name …").
gguf::result<quant::type_override> parse_tensor_type(std::string_view text);
/// The same from the two halves (Python's pairs and mappings).
gguf::result<quant::type_override> make_tensor_type(std::string_view pattern, std::string_view type);

struct quantize_request {
    std::filesystem::path input;   ///< a GGUF file or part 1 of a split set
    /// The output file. With keep_split or a split limit: the parts are "<output without .gguf>-%05d-of-%05d.gguf"
    /// (llama-quantize's naming for --keep-split).
    std::filesystem::path output;
    quant::file_type_name type{"Q8_0", quant::file_type::q8_0, false};  ///< llama-quantize's TYPE
    unsigned threads = 0;  ///< 0: one per hardware thread; the bytes do not depend on it

    // llama-quantize's options
    std::optional<std::filesystem::path> imatrix;  ///< --imatrix (GGUF or legacy .dat)
    quant::importance_filter imatrix_filter;        ///< --include-weights / --exclude-weights
    std::optional<gguf::tensor_type> output_tensor_type;    ///< --output-tensor-type
    std::optional<gguf::tensor_type> token_embedding_type;  ///< --token-embedding-type
    std::vector<quant::type_override> tensor_types;         ///< --tensor-type PATTERN=TYPE, in order
    bool leave_output_tensor = false;  ///< --leave-output-tensor
    bool pure = false;                 ///< --pure
    bool allow_requantize = false;     ///< --allow-requantize (quantized inputs pass through exact dequantization)
    std::vector<kv_override> kv_overrides;  ///< --override-kv, in order
    bool keep_split = false;  ///< --keep-split: one output part per input part, with the input's grouping
    bool dry_run = false;     ///< --dry-run: plan and size everything, write nothing

    // beyond llama-quantize
    std::optional<std::uint64_t> split_max_bytes;    ///< --split-max-size: each part file at most this many bytes
    std::optional<std::uint64_t> split_max_tensors;  ///< --split-max-tensors
    bool overwrite = false;  ///< replace existing outputs (never a directory or special file)
    /// Let an override give a key llama.cpp reads another type than llama.cpp reads it as (as
    /// `minfer edit --allow-type-change`; a warning says llama.cpp will not load the model).
    bool allow_type_change = false;
};

/// One file the quantization writes (or, in a dry run, would write).
struct quantize_output {
    std::filesystem::path path;
    std::uint64_t file_size = 0;     ///< exact: header, metadata, tensor table, padding and data
    std::uint32_t tensor_count = 0;
};

/// What happened (or would happen): the plan, the files, and what the user should be told.
struct quantize_report {
    quant::type_plan plan;                   ///< one choice per tensor, in output order (keep_split: by input part)
    std::vector<quantize_output> outputs;    ///< in part order
    std::uint64_t input_tensor_bytes = 0;    ///< sum of the input tensors' sizes
    std::uint64_t output_tensor_bytes = 0;   ///< sum of the output tensors' sizes (unpadded)
    std::uint64_t n_elements = 0;            ///< values in all tensors (for bits per weight)
    std::uint32_t imatrix_entries = 0;       ///< importance entries after the filter (0: no imatrix used)
    std::vector<std::string> warnings;       ///< requantized tensors, fallbacks, tensors without imatrix entry, …
    bool written = false;                    ///< false for a dry run
};

struct quantize_events {
    /// Bytes of output written so far and the total of all outputs (terminal progress). An exception
    /// it throws cancels the run (an io_error naming the callback): no output is replaced.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// Plan and (unless dry_run) write. Everything that needs no tensor byte is checked before any output
/// is created: the options, the plan, each converted tensor's imatrix entry, requantizing, its shape,
/// then the outputs; a NaN or infinity is found while writing (the parts written are then removed).
///
/// The outputs: one file; with keep_split one per input part ("<output without .gguf>-%05d-of-%05d.gguf"
/// even for one part; split.no, split.count, split.tensors.count appended when there are several,
/// later parts holding only those, as llama_model_quantize writes them); with a split limit, the
/// parts gguf::split_plan would make of the output tensors (its keys and naming, general.alignment
/// on every part, each whole part file within split_max_bytes unless one tensor alone is larger: a
/// part of its own and a warning). Every part is written through toolbox::write_parts: all complete
/// before any is named, part 1 named last (toolbox/split_write.hpp).
///
/// Where this differs from llama_model_quantize on purpose:
///   - an input with general.alignment other than 32: llama.cpp copies the key but pads its output
///     to 32 (a file its loader then reads at the wrong offsets); here the output follows the
///     alignment it declares.
///   - dry_run checks what llama's dry run skips (imatrix entries, requantizing, shapes) and fails
///     on it, but only warns when an imatrix is needed and none is given (sizing before computing
///     one). The outputs are checked in a dry run as in a real one (an existing output without
///     overwrite, a file of the input, a directory); the sizes are exact (header, metadata, table,
///     padding), as the writer plans them.
///   - a 4-D tensor to be converted is refused (bad_n_dims): llama.cpp would quantize its first
///     ne[2] matrices only.
///   - tensors copied unchanged are not inspected for NaN (llama.cpp's loader validates them).
///   - kv overrides change the written metadata only, not the hyperparameters the plan reads.
/// Errors: the loader's (the input), model_incomplete, bad_value_text (subject = the key) for an
/// override of a split.* key or of a key llama.cpp reads as another type (without allow_type_change),
/// bad_value_text (subject = include_weights / exclude_weights) for both filters, or a filter
/// without an imatrix, read_importance's,
/// plan_types' (bad_value_text for an override regex, not_block_multiple, bad_hyperparameter),
/// importance_required (a tensor whose type needs an imatrix and has no entry; subject = the tensor),
/// imatrix_mismatch, requantize_refused, type_not_convertible (an input type with no conversion to
/// f32), bad_n_dims (a 4-D tensor to convert), non_finite_weight (subject = the tensor, index = the
/// value), quantize_failed, bad_value_text (keep_split with a split limit, a limit of 0),
/// too_many_parts, output_not_regular / io_error EEXIST for an output that exists without overwrite,
/// io_error EINVAL (an output is one of the input's files or the imatrix), the writer's errors,
/// out_of_memory. On any error, and on an exception thrown by events.progress (which ends the run:
/// a way to cancel it), every output is as it was: nothing is named until every part is complete.
gguf::result<quantize_report> quantize(const quantize_request& request, const quantize_events& events = {}) noexcept;

}  // namespace minfer::toolbox
