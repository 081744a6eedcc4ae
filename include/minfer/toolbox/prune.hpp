#pragma once
// toolbox::prune: `minfer prune` and minfer.prune() in one function. A quantized model loses blocks
// (layers), MoE experts, its MTP (next-token prediction) layers or tensors named by a pattern, without
// requantizing: every kept tensor's bytes are copied unchanged (a pruned expert tensor is the kept
// experts' slices, each a contiguous range of the source tensor, in order), and the metadata is kept
// consistent so that llama.cpp loads the result:
//   - layers: the kept blocks are renumbered in order (blk.N.* → blk.M.*); {arch}.block_count is the
//     kept count (removed and appended last, as ggml's gguf_set_val_u32 and so llama-quantize's
//     --prune-layers leave it); every per-layer array ({arch}.* array whose length is the block count,
//     except the rope.* arrays, whose length is not about layers) loses the removed blocks' entries;
//     {arch}.leading_dense_block_count drops the removed blocks below it; {arch}.nextn_predict_layers
//     (the last N blocks are MTP layers) drops the removed MTP blocks. Keys whose meaning depends on
//     the layer positions in a way no new value can keep (a period: interleave_moe_layer_step,
//     moe_every_n_layers, full_attention_interval, rescale_every_n_layers, a scalar
//     attention.sliding_window_pattern; attention.shared_kv_layers; a leading dense range cut by
//     an expert's layer) are refused with key_not_adjustable, naming the key.
//   - experts: every *_exps tensor, ffn_gate_inp.weight/.bias and exp_probs_b.bias of a block is
//     sliced along its last dimension (the expert axis, which must be {arch}.expert_count long);
//     {arch}.expert_count is the kept count, {arch}.expert_used_count lowered to it when it exceeds it
//     (a warning); shared experts (*_shexp) are untouched. Grouped routing (expert_group_count > 1)
//     is refused (the groups would no longer divide the experts).
//   - mtp: the last {arch}.nextn_predict_layers blocks and that key go (a trunk-only file); only_mtp:
//     every other block goes (the MTP layers renumbered from 0, the key unchanged), the opposite file.
//   - tensors: tensors whose name the ECMAScript regex finds are removed (a warning names those
//     llama.cpp requires: token_embd, output_norm, a block's weights).
// Provenance: general.base_model.* describes the input (its general.name, organization, version,
// repo_url) and minfer.recipe says what was removed; `provenance = false` leaves them out, and then
// a layer prune of a file whose block count is a scalar is byte for byte what llama_model_quantize
// writes with prune_layers for the input's own file type.
// The output (one file, or a split set within the limits) is written by toolbox::write_parts: every
// part complete before any is named, part 1 last; each part's head re-read by the loader before it
// is named. Nothing is printed.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/toolbox/output_file.hpp"

namespace minfer::toolbox {

/// A list of indices as the CLI and Python give them: "3", "5-7", "0,2,30-31" (ranges inclusive,
/// any order, repeats allowed), each below `count`. Sorted and without repeats. Errors: bad_selection
/// (subject = `what`; expected = count, found = the index out of range; detail = why) for text that
/// does not parse, an index out of range, or a list naming every one of the `count`.
gguf::result<std::vector<std::uint32_t>> parse_index_list(std::string_view text, std::uint32_t count,
                                                          std::string_view what);

struct prune_request {
    std::filesystem::path input;   ///< a GGUF file or part 1 of a split set
    std::filesystem::path output;  ///< the file, or the split set's prefix path (<prefix>-0000N-of-0000M.gguf)
    std::vector<std::uint32_t> layers;   ///< blocks to remove (any order)
    std::vector<std::uint32_t> experts;  ///< experts to remove from every MoE block
    /// The same as lists of text ("3", "5-7", "0,2,30-31"), read by parse_index_list against the
    /// model's block and expert counts and added to the above (the CLI's and Python's way).
    std::optional<std::string> layers_text, experts_text;
    bool mtp = false;                    ///< remove the MTP layers and their keys
    /// keep only the MTP layers (renumbered from 0; {arch}.nextn_predict_layers still counts them),
    /// with the tensors outside the blocks: the opposite file of `mtp`
    bool only_mtp = false;
    std::optional<std::string> tensors;  ///< remove the tensors this ECMAScript regex finds in their names
    bool provenance = true;              ///< general.base_model.* and minfer.recipe
    std::optional<std::uint64_t> split_max_bytes;    ///< write a split set: each part file at most this
    std::optional<std::uint64_t> split_max_tensors;  ///< ... or at most this many tensors per part
    bool dry_run = false;
    bool overwrite = false;
};

/// One tensor of the output.
struct pruned_tensor {
    std::string name;         ///< in the output
    std::string source_name;  ///< in the input
    gguf::tensor_type type = gguf::tensor_type::f32;
    std::vector<std::int64_t> ne;
    std::uint64_t n_bytes = 0;
    bool sliced = false;      ///< experts removed from it
};

/// One metadata change, as shown in a dry run.
struct pruned_key {
    std::string key;
    std::string before;  ///< "" when the key is new
    std::string after;   ///< "" when the key goes
};

using prune_output = output_file;

struct prune_report {
    std::vector<pruned_tensor> tensors;       ///< the output's, in order
    std::vector<std::string> removed;         ///< input tensors left out, in input order
    std::vector<pruned_key> metadata;         ///< the changes, in the order they apply
    std::vector<prune_output> outputs;        ///< in part order
    std::uint32_t blocks_before = 0, blocks_after = 0;
    std::uint32_t experts_before = 0, experts_after = 0;
    std::uint64_t input_tensor_bytes = 0, output_tensor_bytes = 0;
    std::vector<std::string> warnings;
    bool written = false;
};

struct prune_events {
    /// Bytes written so far and the total (terminal progress); an exception it throws cancels the run.
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// Plan and (unless dry_run) write. Everything is checked before an output is created.
/// Errors: the loader's (the input), model_incomplete (a remote or head-only input), bad_selection
/// (nothing to remove, a layer or expert out of range, every layer or expert removed, --experts on a
/// model without experts, --mtp on one without MTP layers; subject = layers / experts / mtp),
/// key_not_adjustable (subject = the key), bad_value_text (subject = tensors: the regex does not
/// compile; split limits of 0), sources_incompatible (an expert tensor whose last dimension is not
/// the expert count), too_many_parts, io_error EINVAL (an output is one of the input's files),
/// output_not_regular / io_error EEXIST without overwrite, the writer's errors, out_of_memory.
gguf::result<prune_report> prune(const prune_request& request, const prune_events& events = {}) noexcept;

}  // namespace minfer::toolbox
