#pragma once
// llama.cpp's GGUF reader and writer for the differential tests, through the shared binding
// (tests/support/llama_ref/llama_ref.hpp: dlopen of $MINFER_LLAMA_LIB, our own declarations of the C
// API, never linked).
//
// Everything the tests read from llama.cpp goes through a `snapshot` (snapshot.hpp), the same
// neutral form our parser's output is turned into, so the two can be compared field by field.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "snapshot.hpp"

namespace minfer::reference {

using llama_ref::ggml_context;
using llama_ref::ggml_init_params;
using llama_ref::ggml_tensor;
using llama_ref::gguf_context;
using llama_ref::gguf_init_params;
using llama_ref::llama_api;
using llama_ref::llama_lib;

/// What the harness uses of the library: the reader (with tensor shapes), the writer, ggml's tensors
/// and types, the log (llama.cpp's only account of a refusal) and GGML_TYPE_COUNT.
inline constexpr unsigned harness_parts = llama_ref::part::gguf_read | llama_ref::part::gguf_tensor_ne |
                                          llama_ref::part::gguf_write | llama_ref::part::ggml_tensors |
                                          llama_ref::part::ggml_types | llama_ref::part::log |
                                          llama_ref::part::type_count;

/// Skip the current test (GTEST_SKIP) when the library or a part of harness_parts is not available;
/// otherwise bind `lib` (const llama_lib*).
#define MINFER_REQUIRE_LLAMA(lib) MINFER_REQUIRE_LLAMA_PARTS(lib, ::minfer::reference::harness_parts)

/// llama.cpp's verdict on one file.
struct ref_verdict {
    bool accepted = false;
    std::string log;  ///< what it logged (its only account of a refusal)
    snapshot content;  ///< when accepted
    /// With read_data: every tensor's bytes as llama.cpp loaded them (no_alloc = false).
    std::vector<std::vector<std::byte>> data;
    /// Disagreements between the gguf_context and the ggml_context it created ("" when none).
    std::string notes;
};

/// Parse `path` with gguf_init_from_file. Metadata-only (no_alloc = true with a ggml context, as
/// llama.cpp's model loader does) unless read_data, which loads the data blob as well. `lib` must
/// have harness_parts.
ref_verdict ref_read(const llama_lib& lib, const std::filesystem::path& path, bool read_data = false);

}  // namespace minfer::reference
