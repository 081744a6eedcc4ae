#pragma once
// plan: the layout of a GGUF file without its bytes. Writing, splitting (grouping tensors into parts
// by count or size), merging and memory estimates all need the same numbers — the header and table
// size, the alignment, where the data section starts, where each tensor sits and how much padding
// follows it, the total file size — and none of them should have to touch a tensor byte to get them.
// A plan is computed once, with every sum and product of sizes checked for overflow, and every key,
// value tag, name, shape and the alignment checked with the loader's own rules (rules.hpp), so a
// plan that succeeds describes a file the loader accepts. It is a plain value: it owns copies of the
// tensor names and outlives whatever it was made from.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::gguf {

/// One metadata record to plan: its key, its type tag and its value exactly as it will be stored
/// after the tag (scalars: the little-endian value; strings: u64 length + bytes; arrays: u32 element
/// tag + u64 count + elements, strings as length-prefixed records).
struct kv_desc {
    std::string_view key;
    value_type type;
    std::span<const std::byte> value;
};

/// One tensor to plan. `source_bytes`, when set, is the size of the bytes that will be written for
/// it; a value other than the shape's byte size is refused (data_truncated).
struct tensor_desc {
    std::string_view name;
    tensor_type type;
    std::span<const std::int64_t> ne;
    std::optional<std::uint64_t> source_bytes;
};

class plan {
public:
    /// Where one tensor goes.
    struct tensor {
        std::string name;
        tensor_type type;
        std::uint32_t n_dims;            ///< as given (0..4)
        std::array<std::int64_t, 4> ne;  ///< padded with 1s
        std::uint64_t n_bytes;           ///< the tensor's bytes (ggml_nbytes)
        std::uint64_t offset;            ///< from the start of the data section, as stored in the table
        std::uint64_t padded_bytes;      ///< n_bytes rounded up to the alignment: its share of the file
        std::uint64_t info_offset;       ///< absolute offset of its record in the tensor table
    };

    /// Lay out a file. @returns the first failed rule, in order: per key empty_key, nul_in_name,
    /// duplicate_key, bad_value_type, nested_array, string_too_long, array_too_long, bad_bool or
    /// truncated (a value whose bytes disagree with its tag), alignment_wrong_type, bad_alignment;
    /// per tensor bad_name_length, nul_in_name, duplicate_tensor, a shape error of check_shape,
    /// size_overflow (bytes above PTRDIFF_MAX), data_truncated (source_bytes differs); then
    /// data_size_overflow when the file would be larger than INT64_MAX bytes; or out_of_memory.
    /// Errors carry the section, the record's index, its name as subject and its planned offset.
    /// pad_without_tensors: the data section starts at the padded end of the table even when there
    /// are no tensors (ggml's writer; writer::pad_table_without_tensors).
    static result<plan> make(std::span<const kv_desc> kvs, std::span<const tensor_desc> tensors,
                             bool pad_without_tensors = false) noexcept;

    plan() noexcept = default;

    std::uint32_t alignment() const noexcept { return alignment_; }
    std::uint64_t kv_count() const noexcept { return kv_count_; }
    std::uint64_t tensor_count() const noexcept { return tensors_.size(); }
    /// Bytes of the fixed header and the metadata records: where the tensor table starts.
    std::uint64_t metadata_end() const noexcept { return metadata_end_; }
    /// Where the tensor table ends (before padding).
    std::uint64_t table_end() const noexcept { return table_end_; }
    /// Where the data section starts: table_end padded to the alignment (table_end itself when there
    /// are no tensors, as the loader computes it).
    std::uint64_t data_offset() const noexcept { return data_offset_; }
    /// The data section: the sum of the tensors' padded sizes.
    std::uint64_t data_bytes() const noexcept { return data_bytes_; }
    /// data_offset() + data_bytes(): the size of the written file.
    std::uint64_t file_size() const noexcept { return data_offset_ + data_bytes_; }
    std::span<const tensor> tensors() const noexcept { return tensors_; }

private:
    std::uint32_t alignment_ = 32;
    std::uint64_t kv_count_ = 0;
    std::uint64_t metadata_end_ = 0;
    std::uint64_t table_end_ = 0;
    std::uint64_t data_offset_ = 0;
    std::uint64_t data_bytes_ = 0;
    std::vector<tensor> tensors_;
};

}  // namespace minfer::gguf
