#pragma once
// What the model-writing commands (prune, assemble) say the same way: their split limits read from
// the command line, a tensor's shape, the files written, and the refusals of an output.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "../print/json_writer.hpp"
#include "minfer/gguf/error.hpp"
#include "minfer/toolbox/output_file.hpp"
#include "out_buffer.hpp"

namespace minfer::cli {

/// --split-max-size and --split-max-tensors (empty: not given) into the request's limits; the exit
/// code of a usage error when one does not read.
std::optional<int> read_split_limits(const std::string& max_size, const std::string& max_tensors,
                                     std::optional<std::uint64_t>& bytes, std::optional<std::uint64_t>& tensors);

/// "[64, 512]"
std::string shape_text(std::span<const std::int64_t> ne);

/// "outputs": [{path, file_size, tensor_count}, ...] inside an open object.
void outputs_json(json_writer& j, std::span<const toolbox::output_file> outputs);

/// "Wrote OUT: N tensors, S bytes (M MiB)" (or "Would write") for each file.
void outputs_text(out_buffer& out, std::span<const toolbox::output_file> outputs, bool written);

/// The usage error of an output that exists without --force, or that is one of the inputs ("the
/// output OUT is " + is_an_input); nullopt for any other error.
std::optional<int> output_refusal(const gguf::error& e, std::string_view is_an_input);

}  // namespace minfer::cli
