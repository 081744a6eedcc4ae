#pragma once
// convert: a Hugging Face checkpoint directory to GGUF, as convert_hf_to_gguf.py writes it, in one
// streaming pass (minfer::convert plans it and produces each tensor's bytes batch by batch), written
// by the one protocol of model outputs (output_parts.hpp → write_parts): one file or a split set,
// every part complete before any is named, nothing written on any error.
//
// Output types: convert_hf_to_gguf.py's --outtype (f32, f16, bf16, q8_0, auto: the same bytes as
// the reference), or a llama-quantize file type (Q4_K_M, IQ4_XS, …): the file llama-quantize writes
// from the reference's f32 output, without that intermediate file — each tensor's float32 values
// are quantized as they are produced, by toolbox::quantize's plan and kernels.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/toolbox/output_file.hpp"
#include "minfer/toolbox/remote_settings.hpp"

namespace minfer::toolbox {

struct convert_request {
    /// The checkpoint directory, or a URL of one: http(s)://…/ (its files are the URL + their names) or
    /// hf://OWNER/REPO[@REVISION] (the Hub's resolve URLs of that revision, main by default). A URL is
    /// read through a spool directory beside the output (removed once the checkpoint is planned, its
    /// shards kept open): the small files whole, the
    /// shards' headers, then each tensor's byte ranges just before it is converted, given back after it
    /// (docs/CONVERT.md, "Remote checkpoints").
    std::filesystem::path input;
    /// The output file, or the split set's prefix; a directory: the reference's default name in it
    /// (gguf-py's naming convention, e.g. "Qwen3-0.6B-F16.gguf"); {ftype} / {outtype} in the file name
    /// (or {FTYPE}, {OUTTYPE}, {}) are the output type, as the reference fills them.
    std::filesystem::path output;
    /// f32, f16, bf16, q8_0, auto (the reference's), or a llama-quantize type name (any case).
    std::string outtype = "auto";
    std::optional<std::string> model_name;  ///< --model-name
    std::string pre;                        ///< --pre NAME: the BPE pre-tokenizer when its hash is unknown
    bool vocab_only = false;                ///< --vocab-only
    std::optional<std::filesystem::path> imatrix;  ///< --imatrix (llama-quantize types)
    std::optional<std::uint64_t> split_max_bytes;
    std::optional<std::uint64_t> split_max_tensors;
    unsigned threads = 0;  ///< quantizing threads (0: one per hardware thread); the bytes do not depend on it
    bool dry_run = false;
    bool overwrite = false;
    /// For a URL: --max-fetch (unset: no limit but the checkpoint's own: each small file under its
    /// reader's cap, the shards' headers, then exactly the tensor bytes the plan reads), --timeout
    /// (unset: 60 s for the files and headers, then 60 s plus 1 s per MiB of tensors), the Hub token.
    remote_settings remote;
};

struct converted_tensor {
    std::string name;         ///< in the output
    std::string source_name;  ///< the (first) checkpoint tensor it comes from; "" for rope_freqs
    std::string source_dtype; ///< its safetensors dtype
    gguf::tensor_type type = gguf::tensor_type::f32;
    std::vector<std::int64_t> ne;
    std::uint64_t n_bytes = 0;
};

struct convert_report {
    std::string architecture;     ///< the Hugging Face class
    std::string gguf_architecture;
    std::string file_type;        ///< "F16", "Q4_K_M", …
    std::vector<converted_tensor> tensors;
    std::vector<output_file> outputs;
    std::uint64_t input_bytes = 0;   ///< the checkpoint's tensor bytes
    std::uint64_t output_tensor_bytes = 0;
    std::vector<std::string> warnings;
    /// For a URL: what was fetched (head_bytes: the small files and the shards' headers; planned_bytes:
    /// the tensor bytes the plan reads, fetched only when writing).
    fetch_totals fetched;
    bool written = false;
};

struct convert_events {
    /// Bytes written so far and the total (terminal progress); an exception it throws cancels the run.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// Plan and (unless dry_run) write. Everything but the tensor values is checked before an output is
/// created. Errors: minfer::convert's (the input), bad_value_text (outtype; a split limit of 0; a
/// bad URL), the quantizer's, the writer's, io_error; for a URL, minfer::remote's (http_status,
/// transfer_failed, bad_content_range, range_ignored, fetch_budget_exceeded, library_unavailable; file =
/// the URL; the input's errors name the URL of the file too), unsupported_config in a build without
/// minfer::remote.
gguf::result<convert_report> convert(const convert_request& request, const convert_events& events = {});

}  // namespace minfer::toolbox
