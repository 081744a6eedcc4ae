#pragma once
// safetensors_file: one .safetensors file, verified completely when opened, then read without checks.
//
// The format (huggingface/safetensors, docs and safetensors/src/tensor.rs):
//
//   u64 little-endian N | N bytes: a JSON object (UTF-8, may end with spaces) | the data section
//
// The object maps each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
// (offsets relative to the data section, end exclusive) and may hold "__metadata__": a map of strings
// to strings. The reference implementation (SafeTensors::read_metadata and Metadata::validate) refuses
// N > 100,000,000 and N past the end of the file, sorts the tensors by data_offsets and requires them
// to tile the data section exactly: the first starts at 0, each starts where the previous ended (end ≥
// begin), the last ends at the end of the file; and each tensor's range is exactly elements × dtype
// size (a whole number of bytes). This reader refuses the same files, and, deliberately, a few more
// (docs/ERRORS.md, "Hugging Face checkpoints", says why):
//   - a key repeated in an object (serde_json keeps the last; a repeated tensor name is ambiguous),
//   - a field of a tensor entry other than dtype, shape and data_offsets (serde ignores them),
//   - a tensor name holding a NUL byte (it would name another tensor for C readers),
//   - a shape of more than 16 dimensions,
//   - a UTF-8 byte order mark before the JSON.
// Zero-size tensors may share an offset, as the reference allows.
//
// Tensors are kept in the header's order, and indexed by offset and by name (convert_hf_to_gguf.py's
// order within a file: safetensors' Python binding sorts the names). Errors are codes::bad_safetensors
// with the absolute offset of the offending JSON value and the tensor's name as subject.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/convert/dtype.hpp"
#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/mapped_file.hpp"
#include "minfer/gguf/result.hpp"

namespace minfer::convert {

/// The reference implementation's cap on the header length (MAX_HEADER_SIZE).
inline constexpr std::uint64_t safetensors_max_header_bytes = 100'000'000;
/// The most dimensions a tensor entry may have here (the format sets none; real tensors have up to 5).
inline constexpr std::size_t safetensors_max_dims = 16;

struct tensor_entry {
    std::string name;
    convert::dtype dtype = convert::dtype::f32;
    std::vector<std::int64_t> shape;   ///< outermost first, as written (row-major: the last varies fastest)
    std::uint64_t n_elements = 0;      ///< the product of shape (1 for a scalar, shape [])
    std::uint64_t data_begin = 0;      ///< [data_begin, data_end): data_offsets, relative to the data section
    std::uint64_t data_end = 0;
    std::uint64_t file_begin = 0;      ///< the same range, absolute in the file
    std::uint64_t file_end = 0;
    std::uint64_t header_offset = 0;   ///< absolute offset of the entry's name in the header (for errors about it)

    std::uint64_t n_bytes() const noexcept { return data_end - data_begin; }
};

class safetensors_file {
public:
    /// Open and verify `path` (mapped, or read into memory with load_mode::read). @returns io_error,
    /// out_of_memory or codes::bad_safetensors.
    static gguf::result<safetensors_file> open(const std::filesystem::path& path,
                                               gguf::load_mode mode = gguf::load_mode::map) noexcept;

    /// Verify bytes already held (a buffer, a mapping); `name` is the file named in errors.
    static gguf::result<safetensors_file> read(gguf::mapped_file bytes, std::string name) noexcept;

    safetensors_file(safetensors_file&&) noexcept = default;
    safetensors_file& operator=(safetensors_file&&) noexcept = default;

    /// The path given to open (or the name given to read).
    const std::string& path() const noexcept { return path_; }

    /// Every tensor, in the header's order.
    std::span<const tensor_entry> tensors() const& noexcept MINFER_LIFETIMEBOUND { return tensors_; }
    /// Indices into tensors(), by data offset (ties, zero-size tensors, by header order).
    std::span<const std::uint32_t> by_offset() const& noexcept MINFER_LIFETIMEBOUND { return by_offset_; }
    /// Indices into tensors(), by name (bytewise, which for UTF-8 is code point order, as Python sorts).
    std::span<const std::uint32_t> by_name() const& noexcept MINFER_LIFETIMEBOUND { return by_name_; }
    /// The tensor called `name`, or nullptr.
    const tensor_entry* find(std::string_view name) const noexcept MINFER_LIFETIMEBOUND;

    /// `__metadata__`, when the header has one (empty otherwise).
    const std::map<std::string, std::string, std::less<>>& metadata() const noexcept MINFER_LIFETIMEBOUND {
        return metadata_;
    }

    /// The header length N (the JSON text's bytes).
    std::uint64_t header_size() const noexcept { return header_size_; }
    /// Where the data section starts: 8 + N.
    std::uint64_t data_offset() const noexcept { return 8 + header_size_; }
    std::uint64_t file_size() const noexcept { return file_.size(); }

    /// The bytes of `t`, a tensor of this file: a view into the mapping, valid while this object lives.
    /// Empty for an entry that is not one of tensors().
    std::span<const std::byte> tensor_data(const tensor_entry& t) const& noexcept MINFER_LIFETIMEBOUND;
    std::span<const std::byte> tensor_data(const tensor_entry& t) const&& = delete;

    /// codes::unsupported_dtype for the first tensor (in the header's order) whose dtype the converter
    /// does not read, naming it and the supported ones; ok when every dtype is convertible.
    gguf::result<void> check_convertible() const noexcept;
    /// The same for one tensor of this file.
    gguf::result<void> check_convertible(const tensor_entry& t) const noexcept;

private:
    safetensors_file() = default;
    friend class safetensors_parser;

    gguf::mapped_file file_;
    std::string path_;
    std::uint64_t header_size_ = 0;
    std::vector<tensor_entry> tensors_;
    std::vector<std::uint32_t> by_offset_;
    std::vector<std::uint32_t> by_name_;
    std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace minfer::convert
