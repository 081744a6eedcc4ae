#pragma once
// content: the logical content of a valid GGUF file (KVs in order, tensors with their bytes), a
// seeded random generator of it, and the two writers that serialise it: ours (gguf::writer) and
// llama.cpp's (gguf_init_empty / gguf_set_* / gguf_add_tensor / gguf_write_to_file).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "llama_ref.hpp"
#include "snapshot.hpp"

namespace minfer::reference {

struct tensor_content {
    std::string name;
    std::uint32_t type = 0;
    std::vector<std::int64_t> ne;  ///< n_dims = ne.size(), as our writer stores it
    std::vector<std::byte> data;
};

struct content {
    std::vector<kv_entry> kvs;  ///< in file order; may include general.alignment (u32)
    std::vector<tensor_content> tensors;
    std::uint32_t alignment = 32;  ///< general.alignment if present, else 32
    bool canonical_dims = true;    ///< every tensor's n_dims is ggml_n_dims (no trailing 1s)
};

struct generator_options {
    std::uint32_t max_kvs = 12;
    std::uint32_t max_tensors = 12;
    std::uint32_t max_array = 16;
    std::uint32_t max_string = 40;
    double p_alignment = 0.4;       ///< share of files with general.alignment
    double p_noncanonical = 0.0;    ///< share of tensors written with a trailing 1 dimension
};

/// A random valid file. Tensor types are those both libraries know.
content generate(std::mt19937_64& rng, const llama_lib& lib, const generator_options& opt = {});

/// ggml_n_dims: 1 + the index of the last dimension > 1 (at least 1).
std::uint32_t ggml_n_dims_of(const std::vector<std::int64_t>& ne);

/// Our writer's bytes (to_bytes; the test fails on error).
std::vector<std::byte> write_ours(const content& c);
/// Our writer to a file (writer::write).
bool write_ours(const content& c, const std::filesystem::path& path, std::string& why);

/// llama.cpp's writer. gguf_set_val_u32("general.alignment") does not change the context's
/// alignment (only gguf_init_from_file sets it), so with `alignment_workaround` the context is first
/// made by reading a metadata-only file that holds general.alignment, whose key is then removed
/// again and set at its place in the order like every other key. Without it the file is written
/// exactly as a plain gguf_init_empty() caller would write it.
bool write_llama(const llama_lib& lib, const content& c, const std::filesystem::path& path, bool alignment_workaround,
                 std::string& why);

/// What a correct reader must report for the file our writer makes of `c` (canonical = false) or
/// llama.cpp's (canonical = true: n_dims as ggml_n_dims), computed here from the content alone with
/// llama.cpp's type sizes, independently of both parsers.
snapshot expected_snapshot(const content& c, const llama_lib& lib, bool canonical);

/// The byte size of a tensor by llama.cpp's type table.
std::uint64_t ref_nbytes(const llama_lib& lib, std::uint32_t type, const std::vector<std::int64_t>& ne);

}  // namespace minfer::reference
