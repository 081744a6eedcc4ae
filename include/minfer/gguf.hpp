#pragma once
// minfer::gguf — a strict, zero-copy GGUF loader. Include this umbrella header or the one you need.
//
// GGUF v3 in one paragraph (all little-endian): "GGUF" magic, u32 version, i64 n_tensors, i64 n_kv;
// n_kv records of (u64-length key, u32 value type, value) where arrays are (u32 element type,
// u64 count, elements) and strings are (u64 length, bytes); n_tensors records of (u64-length name,
// u32 n_dims, i64 ne[n_dims], u32 ggml type, u64 offset); padding to general.alignment (default 32);
// the data section, each tensor at its offset and padded to the alignment.
#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/error.hpp"
#include "minfer/gguf/file_view.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf/rules.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf/text.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf/value.hpp"
