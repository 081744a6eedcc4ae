#pragma once
// known_keys: the metadata keys llama.cpp reads, with the GGUF type it reads them as. llama.cpp's
// loader checks a key's stored type exactly (llama-model-loader.cpp, GGUFMeta::GKV::get_kv: a u32
// key stored as i32 or str is "wrong type" and the model does not load), so an edit that changes
// such a key's type writes a model llama.cpp refuses. metadata_edit keeps these types unless asked
// explicitly (metadata_edit_options::allow_type_change).
//
// Learned from llama.cpp (src/llama-arch.cpp LLM_KV_NAMES for the names; src/llama-model.cpp
// load_hparams, src/llama-vocab.cpp load and src/llama-model-loader.cpp for the types each is read
// with); our own table, not a copy. Keys llama.cpp reads with a looser check (scores as f32 or i32
// arrays) list the type llama.cpp's converter writes. Arrays cannot be set as text, so for them the
// table only decides that a scalar is refused.
#include <optional>
#include <string>
#include <string_view>

#include "minfer/gguf/types.hpp"

namespace minfer::gguf::known_keys {

struct key_type {
    value_type type = value_type::u32;          ///< the scalar type, or array
    value_type element = value_type::u32;       ///< array only: the element type
    bool per_layer_array = false;               ///< a scalar, or an array of i32/u32 with one item per layer
};

/// The type llama.cpp reads `key` as, for a model whose general.architecture is `arch` (the
/// `{arch}.` hyperparameters are matched under that prefix only). nullopt for a key llama.cpp does
/// not read with a fixed type.
std::optional<key_type> lookup(std::string_view key, std::string_view arch) noexcept;

/// "u32", "str", "array of str", "u32 (or an array of i32/u32 per layer)": for messages.
std::string describe(const key_type& t);

}  // namespace minfer::gguf::known_keys
