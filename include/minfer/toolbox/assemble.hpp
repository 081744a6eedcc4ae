#pragma once
// toolbox::assemble: `minfer assemble CONFIG.yaml -o OUT` and minfer.assemble() in one function. A
// mergekit configuration (assemble_config.hpp reads it) run on GGUF models:
//   - merge_method: passthrough with slices: each slice's layers [first, end) of its model, stacked in
//     order and renumbered (blk.N.*); the tensors outside the blocks, the metadata and the tokenizer
//     come from the donor (base_model, else the first model named). Every tensor's bytes are the
//     source's, unchanged (kernel-copied ranges), whatever their types.
//   - merge_method: linear, slerp, task_arithmetic, ties with models: (and base_model) or slices: every
//     output tensor merged from the same tensor of every input of its group (models:, or the slice: a
//     block's tensor from each source's layer at the same offset, a tensor outside the blocks from the
//     first slice's sources before them and the last slice's after), same shape: each dequantized
//     exactly to f32, merged by merge_math (mergekit's formulas, parameters evaluated per tensor by
//     assemble_config's parameter_value: gradients over the layers, filters), and quantized back to
//     the donor tensor's type with minfer::quant (assemble_merge.hpp: a streaming writer source, a
//     batch of rows at a time, statistics passes first for slerp and ties).
//   - tensors: (minfer's extension) a tensor of the output whose name a rule's regex finds is taken
//     whole from the rule's model instead (same name, same shape; its type may differ: per-tensor
//     recipes mixing quantizations).
// The metadata is the donor's with {arch}.block_count set to the stacked count; a per-layer array
// hyperparameter is rebuilt from each output layer's source (a scalar source contributing its value),
// and a head count or feed-forward length that differs between the stacked models becomes such an
// array (llama.cpp reads them per layer); any other {arch}.* scalar that differs is kept from the donor
// with a warning, except embedding_length and expert_count, which must be equal
// (sources_incompatible). Keys that index layers (leading dense blocks, MTP layers, periods) are
// refused in a stack (key_not_adjustable). general.file_type is kept when every source declares the
// same one, else it is the type most tensors have, as llama.cpp's loader guesses it. Provenance:
// general.base_model.* lists the models (name, organization, version, repo_url) and minfer.recipe
// holds the config (as YAML text), unless provenance = false.
// The output (one file or a split set) is written by toolbox::write_parts; nothing is printed.
// Sources are local files, part 1 of local split sets, or URLs (http://, https://, hf://OWNER/REPO/FILE
// [@REVISION]): a remote model's heads are read as `minfer info URL` reads them, then only the byte
// ranges of the tensors the output takes are fetched (remote_models.hpp): a copied tensor a writer
// chunk at a time, a merge input once into a temporary file beside the output.
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

struct assemble_request {
    std::filesystem::path config;             ///< the YAML (or JSON) file, when config_text is empty
    std::optional<std::string> config_text;   ///< the config itself (Python's dict as JSON)
    std::filesystem::path output;             ///< the file, or the split set's prefix path
    bool provenance = true;
    /// An importance matrix (GGUF or legacy .dat, as quantize reads it) for the merged tensors'
    /// re-quantization: each merged tensor's entry (by its output name) weighs its rows as
    /// llama-quantize weighs them; the types that need one (iq2_xxs, iq2_xs, iq1_s) need it.
    std::optional<std::filesystem::path> imatrix;
    std::optional<std::uint64_t> split_max_bytes;
    std::optional<std::uint64_t> split_max_tensors;
    bool dry_run = false;
    bool overwrite = false;
    /// For models given as URLs: the budget, deadline and Hub token.
    remote_settings remote;
};

struct assembled_tensor {
    std::string name;         ///< in the output
    std::string model;        ///< the source as the config names it
    std::string source_name;  ///< in that model
    gguf::tensor_type type = gguf::tensor_type::f32;
    std::vector<std::int64_t> ne;
    std::uint64_t n_bytes = 0;
    bool by_rule = false;     ///< taken by a `tensors:` rule
};

using assemble_output = output_file;

struct assemble_report {
    std::string method;                      ///< mergekit's name: "passthrough", "linear", ...
    std::vector<std::string> models;         ///< every model the output takes bytes from, first use first
    std::vector<assembled_tensor> tensors;   ///< in output order
    std::uint32_t blocks = 0;                ///< the output's block count
    std::vector<std::pair<std::string, std::string>> metadata;  ///< keys set or added: key, value as text
    std::vector<assemble_output> outputs;
    std::uint64_t output_tensor_bytes = 0;
    std::vector<std::string> warnings;
    /// What was fetched from models given as URLs (all zero when every model is local); with
    /// dry_run, the heads only, and the tensor bytes a write would fetch (planned_bytes).
    fetch_totals fetched;
    bool written = false;
};

struct assemble_events {
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// Read the config, plan and (unless dry_run) write. Everything is checked before an output exists.
/// Errors: the config reader's (bad_config, unsupported_config, input_too_large), unsupported_config
/// for a remote source in a build without minfer::remote (subject the source), a remote source's
/// (bad_value_text for a malformed URL, fetch_budget_exceeded (also before writing, when the heads
/// plus the tensors taken exceed remote.max_fetch), transfer_failed, http_status, range_ignored,
/// bad_content_range, library_unavailable), bad_config for a weight or
/// t that no level sets for a tensor, merge_math's refusals (bad_value_text), quantize's (a merged
/// value a type cannot hold: quantize_failed), the loader's for a source, model_incomplete, sources_incompatible (another
/// architecture, a layer range beyond a model's layers, a rule's tensor missing or of another shape,
/// embedding_length or expert_count differing), key_not_adjustable, bad_value_text (split limits of
/// 0), io_error EINVAL (an output is a source's file), output_not_regular / EEXIST without overwrite,
/// the writer's errors, out_of_memory.
gguf::result<assemble_report> assemble(const assemble_request& request, const assemble_events& events = {}) noexcept;

}  // namespace minfer::toolbox
