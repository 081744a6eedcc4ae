#pragma once
// The metadata of an open context, for the C API's other files (internal): minfer_writer_set_kv_from
// copies a context's records exactly as the loader verified them (a string holding a NUL byte
// included, which the C getters cut), without knowing the context's layout.
#include "minfer.h"
#include "minfer/gguf/file_view.hpp"

namespace minfer::capi {

/// Part 1's verified view of `ctx` (its kv records in file order); nullptr, with invalid_handle
/// recorded for the call `fn`, when ctx is NULL, freed or foreign. Valid until minfer_gguf_free.
const gguf::file_view* context_metadata(const minfer_gguf_context* ctx, const char* fn) noexcept;

}  // namespace minfer::capi
