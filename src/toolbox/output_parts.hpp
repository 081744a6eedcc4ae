#pragma once
// Internal: the output of a command that writes a model (prune, assemble) laid out as one file or
// as a split set within limits, each part a writer, the targets checked; then written by the one
// protocol (write_parts). One copy of the part grouping (gguf::group_into_parts, the grouping
// split_plan uses), the split keys, and the refusal of an output that is an input file.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/source.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/toolbox/split_write.hpp"

namespace minfer::toolbox::detail {

/// One tensor of the output: its record and where its bytes come from (made when its part's writer
/// is built).
struct output_tensor {
    std::string name;
    gguf::tensor_type type = gguf::tensor_type::f32;
    std::vector<std::int64_t> ne;  ///< n_dims values
    std::uint64_t n_bytes = 0;
    std::function<gguf::tensor_source()> source;
};

/// Part 1's metadata (the model's keys): called for part 0 of every layout, before the split keys.
using put_model_metadata = std::function<void(gguf::writer&)>;

struct output_request {
    std::filesystem::path output;  ///< the file, or the split set's prefix (".gguf" dropped)
    std::optional<std::uint64_t> split_max_bytes, split_max_tensors;
    bool overwrite = false;
    std::optional<std::uint32_t> alignment;  ///< general.alignment of part 1, repeated on later parts
    std::vector<std::filesystem::path> inputs;  ///< files an output may not be (io_error EINVAL)
};

struct laid_out_part {
    std::filesystem::path path;
    std::uint64_t file_size = 0;
    std::uint32_t tensor_count = 0;
};

struct laid_out {
    std::vector<gguf::writer> writers;
    std::vector<std::string> targets;
    std::vector<laid_out_part> parts;
};

/// The parts and their writers (every plan made, so every size is exact), the targets checked (not an
/// input; an existing one only with overwrite). Errors: bad_value_text (a limit of 0), the grouping's
/// (too_many_parts, data_size_overflow), the writers' plans', io_error EINVAL, output_not_regular,
/// io_error EEXIST.
gguf::result<laid_out> lay_out(std::span<const output_tensor> tensors, const put_model_metadata& metadata,
                               const output_request& request);

/// write_parts of a layout, its failure as the error.
gguf::result<void> write_out(const laid_out& layout, bool overwrite,
                             const std::function<void(std::uint64_t, std::uint64_t)>& progress);

}  // namespace minfer::toolbox::detail
