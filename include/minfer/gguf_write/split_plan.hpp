#pragma once
// split_plan: how a model's tensors are grouped into the parts of a split set, and the writer of
// each part (through rewrite(), the shared engine). Everything is decided from the metadata alone:
// no tensor byte is read to plan, so a dry run of a 70 GB model is instant.
//
// The layout is llama-gguf-split's, so llama.cpp loads the set:
//   * parts are named "<prefix>-%05d-of-%05d.gguf" (split_file_name), the prefix used as given;
//   * every part carries split.no (u16, 0-based), split.tensors.count (i32, the total) and
//     split.count (u16), appended in that order after the copied metadata (llama.cpp's
//     gguf_set_val_* moves a key it sets again to the end, which gives that order);
//   * part 1 holds all of the model's metadata (any split.no / split.count / split.tensors.count
//     of a split set being re-split are replaced); later parts hold only the split keys.
// Two differences, both on purpose:
//   * max_bytes is a hard limit on each part's whole file (header, metadata, tensor table,
//     alignment padding and padded tensor data), computed exactly as plan.hpp lays the file out;
//     llama-gguf-split counts the tensors' bytes only, so its parts overshoot by the header.
//   * a model with general.alignment keeps it in EVERY part: part 1 copies it with the rest of the
//     metadata, and later parts get it too. Each file's padding follows its own declared alignment
//     (llama.cpp's loader reads the alignment per file), so a later part without the key would be
//     padded to 32 and its tensors would no longer sit at the model's alignment. llama-gguf-split
//     pads every part to 32 while part 1 declares the input's alignment: a mismatched file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::gguf {

/// llama-gguf-split's default when no limit is given.
inline constexpr std::uint64_t default_split_max_tensors = 128;
/// split.count is a u16.
inline constexpr std::uint64_t max_split_parts = 65535;

struct split_options {
    /// At most this many tensors per part (>= 1).
    std::optional<std::uint64_t> max_tensors;
    /// At most this many bytes per part file (>= 1), see above. With both limits, a part obeys
    /// both; with neither, max_tensors = default_split_max_tensors.
    std::optional<std::uint64_t> max_bytes;
    /// Part 1 holds the metadata only, no tensor (so it can be read or replaced on its own).
    bool no_tensor_first_split = false;
};

/// One planned part.
struct split_part {
    std::size_t first = 0;  ///< index of its first tensor in model::tensors()
    std::size_t count = 0;  ///< how many tensors, consecutive in model::tensors()
    std::uint64_t file_size = 0;     ///< the exact size of the part file
    std::uint64_t tensor_bytes = 0;  ///< sum of its tensors' sizes (unpadded)
    /// file_size > max_bytes: a single tensor (or, for part 1, the metadata) does not fit in a part
    /// of that size even alone. It still gets a part of its own; the caller should warn.
    bool oversized = false;
};

/// One tensor as the grouping sees it: its record in a part's tensor table and its bytes in the file.
struct grouped_tensor {
    std::uint64_t record_bytes = 0;  ///< name (u64 length + bytes), n_dims, ne[n_dims], type, offset
    std::uint64_t n_bytes = 0;       ///< unpadded; below 2^63
};

/// What the grouping needs besides the tensors: the parts' heads and the limits.
struct part_grouping {
    std::uint64_t first_head_bytes = 0;  ///< part 1's header and metadata (where its table starts)
    std::uint64_t later_head_bytes = 0;  ///< every later part's
    std::uint32_t alignment = 32;        ///< a power of two
    std::uint64_t max_tensors = ~std::uint64_t{0};
    std::uint64_t max_bytes = ~std::uint64_t{0};
    bool no_tensor_first_split = false;  ///< part 1 holds no tensor
};

/// The ONE grouping of tensors into parts (split_plan::make, toolbox::quantize's split outputs):
/// greedily, a tensor joins the current part while the part's whole file (head, table, padding,
/// padded data) stays within both limits, else starts the next part; an empty part takes a tensor
/// whatever its size (oversized then). Every sum is checked. @returns the parts (first, count,
/// exact file_size, tensor_bytes, oversized); data_size_overflow (index = the tensor);
/// too_many_parts (expected 65535, found = parts needed); out_of_memory.
result<std::vector<split_part>> group_into_parts(std::span<const grouped_tensor> tensors,
                                                 const part_grouping& g) noexcept;

class split_plan {
public:
    /// Group `m`'s tensors (model::tensors(), in order) into parts, greedily: a tensor joins the
    /// current part while the part stays within both limits, else starts the next one.
    /// @returns bad_value_text (subject "max_tensors" or "max_bytes") for a limit of 0;
    /// too_many_parts (expected 65535, found = parts needed); value_out_of_range when the model
    /// has more tensors than split.tensors.count (i32) can count; any error of the metadata's
    /// plan (a rule a rewritten file would break); data_size_overflow; out_of_memory.
    static result<split_plan> make(const model& m, const split_options& options) noexcept;

    split_plan() noexcept = default;

    std::span<const split_part> parts() const noexcept { return parts_; }
    std::uint32_t part_count() const noexcept { return static_cast<std::uint32_t>(parts_.size()); }
    std::uint64_t tensor_count() const noexcept { return tensor_count_; }
    /// The alignment of every part (the model's).
    std::uint32_t alignment() const noexcept { return alignment_; }
    /// Sum of the parts' file sizes: what the split writes.
    std::uint64_t total_bytes() const noexcept { return total_bytes_; }
    /// The limit the plan was made with, when there was one.
    std::optional<std::uint64_t> max_bytes() const noexcept { return max_bytes_; }

    /// Part `part`'s tensors (0-based part), a subspan of m.tensors(); `m` is the plan's model.
    std::span<const tensor_ref> tensors_of(const model& m, std::uint32_t part) const noexcept;
    /// Part `part`'s file name: split_file_name(prefix, part, part_count()).
    std::string part_name(std::string_view prefix, std::uint32_t part) const;

    /// The writer of part `part` (0-based): `m` is the model the plan was made from and `src` a
    /// model_source opened on it (it must outlive the writer's write()). Its make_plan().file_size()
    /// equals parts()[part].file_size. @returns out_of_memory, or index_out_of_range for a part
    /// past the end.
    result<writer> part_writer(const model& m, const model_source& src, std::uint32_t part) const noexcept;

private:
    std::vector<split_part> parts_;
    std::uint64_t tensor_count_ = 0;
    std::uint64_t total_bytes_ = 0;
    std::uint32_t alignment_ = 32;
    std::optional<std::uint64_t> max_bytes_;
};

}  // namespace minfer::gguf
