#pragma once
// file_view: one GGUF file's bytes, verified once. parse() runs every structural check of the format
// (header, metadata, tensor table, data layout) in a single pass over bytes [0, data_offset) and
// never reads the data section. After a successful parse every accessor is noexcept and every view
// it returns is in bounds of the parsed bytes. A file_view does not own the bytes: it must not
// outlive them (model and mapped_file own them).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "minfer/gguf/attributes.hpp"
#include "minfer/gguf/detail/name_index.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/tensor_info.hpp"
#include "minfer/gguf/value.hpp"

namespace minfer::gguf {

inline constexpr std::uint32_t gguf_version = 3;            ///< the newest version this library reads
inline constexpr std::uint32_t default_alignment = 32;      ///< GGUF_DEFAULT_ALIGNMENT
inline constexpr std::uint64_t max_string_bytes = 1ull << 30;  ///< GGUF_MAX_STRING_LENGTH
inline constexpr std::uint64_t max_array_elems = 1ull << 30;   ///< cap on one array's element count
inline constexpr std::string_view alignment_key = "general.alignment";

class file_view {
public:
    /// Verify `bytes` as a GGUF file. Reads only [0, data_offset).
    /// @returns the first failed check as an error (section, offset, subject set; file left empty),
    /// or out_of_memory.
    static result<file_view> parse(std::span<const std::byte> bytes) noexcept;
    /// A temporary buffer would dangle: refuse it at compile time.
    static result<file_view> parse(std::vector<std::byte>&&) = delete;

    file_view() noexcept = default;

    std::uint32_t version() const noexcept { return version_; }
    std::uint32_t alignment() const noexcept { return alignment_; }
    /// Absolute offset of the data section (the padded end of the tensor table; for a file without
    /// tensors, the end of the table itself).
    std::uint64_t data_offset() const noexcept { return data_offset_; }
    /// Size of the data section: the sum of the tensors' padded sizes.
    std::uint64_t data_size() const noexcept { return data_size_; }
    /// The bytes the view was parsed from.
    std::span<const std::byte> bytes() const noexcept { return bytes_; }

    /// All metadata in file order.
    std::span<const kv> metadata() const noexcept MINFER_LIFETIMEBOUND { return kvs_; }
    /// O(1) lookup; nullptr when absent.
    const kv* find(std::string_view key) const noexcept MINFER_LIFETIMEBOUND;
    /// The value of `key` as T (see kv::get). @returns key_not_found or type_mismatch.
    template <class T>
    result<T> get(std::string_view key) const noexcept;

    /// All tensors in file order.
    std::span<const tensor_info> tensors() const noexcept MINFER_LIFETIMEBOUND { return tensors_; }
    /// O(1) lookup; nullptr when absent.
    const tensor_info* find_tensor(std::string_view name) const noexcept MINFER_LIFETIMEBOUND;
    /// A tensor's bytes: [data_offset + offset, + n_bytes), in bounds by construction.
    std::span<const std::byte> tensor_data(const tensor_info& t) const noexcept MINFER_LIFETIMEBOUND {
        return bytes_.subspan(data_offset_ + t.offset, t.n_bytes);
    }

private:
    friend class parser;
    std::span<const std::byte> bytes_;
    std::uint32_t version_ = 0;
    std::uint32_t alignment_ = default_alignment;
    std::uint64_t data_offset_ = 0;
    std::uint64_t data_size_ = 0;
    std::vector<kv> kvs_;
    std::vector<tensor_info> tensors_;
    detail::name_index kv_index_;
    detail::name_index tensor_index_;
};

error key_not_found_error(std::string_view key);

template <class T>
result<T> file_view::get(std::string_view key) const noexcept {
    const kv* e = find(key);
    if (e == nullptr) return unexpected(key_not_found_error(key));
    return e->get<T>();
}

}  // namespace minfer::gguf
