#pragma once
// writer: builds a GGUF v3 file from metadata and tensors. Keys keep insertion order (setting a key
// again replaces its value in place; llama.cpp's gguf_set_* moves it to the end instead); tensors are laid out back to back, each
// padded to general.alignment (32 unless set as a u32). write() goes to "<path>.tmp" and renames it
// into place, so a reader never sees a half-written file.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::gguf {

class writer {
public:
    writer& set_u8(std::string_view key, std::uint8_t v);
    writer& set_i8(std::string_view key, std::int8_t v);
    writer& set_u16(std::string_view key, std::uint16_t v);
    writer& set_i16(std::string_view key, std::int16_t v);
    writer& set_u32(std::string_view key, std::uint32_t v);
    writer& set_i32(std::string_view key, std::int32_t v);
    writer& set_f32(std::string_view key, float v);
    writer& set_bool(std::string_view key, bool v);
    writer& set_u64(std::string_view key, std::uint64_t v);
    writer& set_i64(std::string_view key, std::int64_t v);
    writer& set_f64(std::string_view key, double v);
    writer& set_string(std::string_view key, std::string_view v);
    /// A fixed-size array: `elements` holds count * value_size(type) little-endian bytes.
    writer& set_array(std::string_view key, value_type type, std::span<const std::byte> elements);
    template <class T>
    writer& set_array(std::string_view key, value_type type, std::span<const T> elements) {
        return set_array(key, type, std::as_bytes(elements));
    }
    writer& set_strings(std::string_view key, std::span<const std::string_view> strings);
    writer& set_strings(std::string_view key, std::span<const std::string> strings);
    /// Remove a key if present.
    writer& erase(std::string_view key);

    /// Add a tensor with its bytes (copied into the writer). Checked at write(): name 1..63 bytes and
    /// unique, a known type, a valid shape, and data.size() equal to the shape's byte size.
    writer& add_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne,
                       std::span<const std::byte> data);
    /// Add a tensor whose bytes are all zero, written as a hole (sparse file) so that large fixtures
    /// cost no disk.
    writer& add_zero_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne);

    std::size_t kv_count() const noexcept { return kvs_.size(); }
    std::size_t tensor_count() const noexcept { return tensors_.size(); }

    /// Serialise to a file. @returns io_error, or a tensor_info error for an invalid tensor, or
    /// bad_alignment / alignment_wrong_type for an unusable general.alignment, or empty_key /
    /// nested_array / bad_value_type for metadata the loader would refuse.
    result<void> write(const std::filesystem::path& path) const noexcept;
    /// Serialise to memory (holes become zero bytes). Same errors as write() but io_error.
    result<std::vector<std::byte>> to_bytes() const noexcept;

private:
    struct kv_record {
        std::string key;
        std::vector<std::byte> encoded;  // type tag + value, as on disk
    };
    struct tensor_record {
        std::string name;
        tensor_type type;
        std::vector<std::int64_t> ne;
        std::vector<std::byte> data;  // empty when zero
        bool zero;
    };
    writer& put(std::string_view key, std::vector<std::byte> encoded);
    template <class Sink>
    result<void> emit(Sink& sink) const;

    std::vector<kv_record> kvs_;
    std::unordered_map<std::string, std::size_t> key_index_;  // key -> position in kvs_: O(1) set
    std::vector<tensor_record> tensors_;
};

}  // namespace minfer::gguf
