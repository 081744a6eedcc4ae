#pragma once
// The pieces of toolbox::quantize (quantize.cpp drives them): what the type plan reads of a model,
// the output's metadata as llama_model_quantize builds it (quantize_metadata.cpp), and the streaming
// source of one converted tensor (quantize_source.cpp).
#include <array>
#include <filesystem>
#include <functional>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/source.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/type_plan.hpp"
#include "minfer/toolbox/quantize.hpp"

namespace minfer::toolbox::quantize_detail {

inline constexpr std::string_view key_quantization_version = "general.quantization_version";
inline constexpr std::string_view key_file_type = "general.file_type";
inline constexpr std::string_view key_split_no = "split.no";
inline constexpr std::string_view key_split_count = "split.count";
inline constexpr std::string_view key_split_tensors = "split.tensors.count";
/// GGML_QNT_VERSION, written as general.quantization_version.
inline constexpr std::uint32_t quantization_version = 2;

/// What plan_types reads of `m`: general.architecture, <arch>.block_count, the head counts of layer
/// 0 (<arch>.attention.head_count / head_count_kv, a scalar or a per-layer array; head_count_kv
/// defaults to head_count as in llama.cpp's loader), <arch>.expert_count, and every tensor in file
/// order. Absent keys read as 0 (the rules then take their non-MoE, non-GQA branches); a key of a
/// non-integer type is type_mismatch, one above 32 bits value_out_of_range.
gguf::result<quant::model_facts> model_facts_of(const gguf::model& m) noexcept;

/// llama_model_loader's ftype for a COPY: general.file_type when present, else the type most
/// tensors have (the first to reach the highest count in llama's tensor order, `tensors`) mapped to
/// its llama_ftype, with LLAMA_FTYPE_GUESSED (1024) set.
std::uint32_t loader_file_type(const gguf::model& m, std::span<const quant::tensor_choice> tensors) noexcept;

/// The model's metadata as llama_model_quantize writes it into part 1: `m`'s records in order,
/// general.quantization_version and general.file_type moved to the end, the split keys removed,
/// then `overrides` in order (each moved to the end). Allocation failures are kept by the writer.
void put_quantized_metadata(gguf::writer& w, const gguf::model& m, std::uint32_t file_type,
                            std::span<const kv_override> overrides);

/// The value general.alignment has in put_quantized_metadata's output (an override may set it),
/// nullopt when the key is absent. An override of another type than int is left to the writer's
/// plan (alignment_wrong_type).
std::optional<std::uint32_t> output_alignment(const gguf::model& m, std::span<const kv_override> overrides) noexcept;

/// The longest row a model quantization converts (row_too_long beyond it): 2^22 values, 16 MiB of f32.
/// A batch is 2^20 values or one row when rows are longer, so the conversion holds at most this many
/// f32 values and their quantized bytes at once. Real models' rows are a few thousand to a few tens of
/// thousands of values (n_embd, n_ff).
inline constexpr std::uint64_t max_row_values = std::uint64_t{1} << 22;

/// Where a model's tensor values come from when they are not in its files: a head-only model whose
/// tensors another producer computes (toolbox::convert's llama-quantize types: the f32 conversion
/// of a checkpoint, never written). `raw`: a tensor's bytes as the model's type says (a tensor copied
/// unchanged); `read`: values [first, first + out.size()) as f32, whole rows of one matrix.
struct tensor_values {
    std::function<gguf::result<gguf::tensor_source>(const gguf::tensor_ref&)> raw;
    std::function<gguf::result<void>(const gguf::tensor_ref&, std::uint64_t first, std::span<float> out)> read;
};

/// toolbox::quantize on a model already open: from its files, or with `values` (then the model may
/// be head-only: its tensors' bytes come from `values`, and check_output compares the outputs with
/// `protected_inputs` as well as the model's parts).
gguf::result<quantize_report> quantize_model(const gguf::model& m, const tensor_values* values,
                                             std::span<const std::filesystem::path> protected_inputs,
                                             const quantize_request& rq, const quantize_events& events);

/// One converted tensor: the input tensor `t` of `m`, quantized to `to` matrix by matrix (ne[2]
/// matrices of ne[1] rows) with `importance` (empty, or ne[0] weights per matrix).
struct convert_job {
    const gguf::model* m = nullptr;
    gguf::tensor_ref t{};
    gguf::tensor_type to = gguf::tensor_type::f32;
    std::span<const float> importance;
    const tensor_values* values = nullptr;  ///< when set, the values come from it, not from m's files
    unsigned threads = 0;
    /// Values converted per batch (whole rows, at least one row; never across a matrix).
    std::uint64_t batch_values = std::uint64_t{1} << 20;
};

/// The output bytes of a converted tensor: ne[1] * ne[2] * ne[3] rows of `to`.
std::uint64_t converted_bytes(gguf::tensor_type to, const std::array<std::int64_t, 4>& ne) noexcept;

/// A writer callback source producing the job's bytes batch by batch: each batch's values are read
/// from the mapping (f32) or converted (quant::dequantize_range), checked finite (non_finite_weight,
/// index = the value's position in the tensor) and quantized with quant::quantize_rows_parallel.
/// Memory: one batch of f32 values and its quantized bytes, allocated on the first fill and freed
/// after the last. The job's importance must hold ne[2] * ne[0] weights or none, and ne[3] be 1.
gguf::result<gguf::tensor_source> converted_source(const convert_job& job) noexcept;

}  // namespace minfer::toolbox::quantize_detail
