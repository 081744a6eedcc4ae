#pragma once
// Mutations of valid GGUF files: bit flips and byte overwrites in the header/metadata/tensor-table
// region (weighted towards its length, count, type, n_dims, dimension and offset fields),
// truncations, and u64/u32 fields overwritten with extreme values. The field map comes from a walk
// of the valid file written here (not from the parser under test).
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace minfer::reference {

enum class field_kind : std::uint8_t {
    magic, version, count,  // header: magic, version, n_tensors / n_kv
    length,                 // a u64 string length (key, string value, array string, tensor name)
    value_type,             // a u32 KV type tag or array element type
    array_count,            // an array's u64 element count
    n_dims,                 // a tensor's u32 n_dims
    dim,                    // a tensor's i64 dimension
    tensor_type,            // a tensor's u32 ggml type
    tensor_offset,          // a tensor's u64 data offset
    bytes,                  // key / name / string bytes
    payload,                // fixed-size value bytes
    boolean,                // a bool value byte
};
std::string_view to_string(field_kind k) noexcept;

struct field {
    std::uint64_t offset;
    std::uint32_t size;
    field_kind kind;
};

struct field_map {
    std::vector<field> fields;
    std::uint64_t table_end = 0;    ///< end of the tensor table
    std::uint64_t data_offset = 0;  ///< start of the data section (table_end padded when there are tensors)
};

/// Walk a valid file (as our writer makes it). `alignment` is the file's general.alignment or 32.
field_map map_fields(const std::vector<std::byte>& file, std::uint32_t alignment);

struct mutant {
    std::vector<std::byte> bytes;
    std::string how;  ///< e.g. "u64 at 40 (length) := 2^63-1; truncate to 77"
};

/// One mutant of `file` (1–3 mutations).
mutant mutate(std::mt19937_64& rng, const std::vector<std::byte>& file, const field_map& map);

}  // namespace minfer::reference
