#pragma once
// Internal: what the commands that rewrite a model's layout (prune, assemble, quantize) read of its
// names and keys the same way: a block tensor's index, a key's value as the dry runs show it, the
// error they build, and llama.cpp's file type of a tensor type.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "minfer/gguf/error.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf/value.hpp"

namespace minfer::toolbox::detail {

/// An error with its code, subject and detail (the commands' refusals).
gguf::error make_error(gguf::errc code, std::string_view subject, std::string detail);

/// N of a block tensor's name "blk.N.rest" (rest set to what follows "blk.N."), or nullopt for a
/// tensor outside the blocks.
std::optional<std::uint32_t> block_of(std::string_view name, std::string_view& rest) noexcept;

/// A string as the dry runs show it: quoted, escaped.
std::string quoted_text(std::string_view v);

/// A key's value as the dry runs show it: a number, a quoted string, "array[u32] of 32".
std::string value_text(const gguf::kv& e);

/// llama_model_loader's llama_ftype for the type most tensors have (its switch in
/// src/llama-model-loader.cpp; a type it does not list is "all f32"), without the GUESSED bit.
std::uint32_t llama_file_type_of(gguf::tensor_type most_common) noexcept;

}  // namespace minfer::toolbox::detail
