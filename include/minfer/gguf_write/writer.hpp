#pragma once
// writer: builds a GGUF v3 file from metadata and tensor sources. It keeps the metadata (small) and a
// source per tensor (see source.hpp), never the tensors' bytes, and streams them to the output
// through one fixed chunk buffer: memory stays bounded whatever the model size. Everything the loader
// would refuse is refused by the plan (plan.hpp, the loader's own rules) before the output is
// created, and the output is an atomic_file (atomic_file.hpp), so the target holds the old file or
// the complete new one. Keys keep insertion order; setting a key again replaces its value in place
// (llama.cpp's gguf_set_* moves it to the end instead). The builder calls cannot fail: an allocation
// failure while building is kept and returned by make_plan(), write() and to_bytes().
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf/value.hpp"
#include "minfer/gguf_write/atomic_file.hpp"
#include "minfer/gguf_write/plan.hpp"
#include "minfer/gguf_write/source.hpp"

namespace minfer::gguf {

struct write_options {
    atomic_file_options file{};
    /// Copy file-range sources with copy_file_range (in-kernel, no user buffer; falls back to
    /// pread/pwrite where the kernel refuses). false: always pread/pwrite (for comparisons).
    bool kernel_copy = true;
    /// The one buffer used for callback sources and the pread fallback: the write's memory bound.
    std::size_t chunk_bytes = std::size_t{4} << 20;
    /// write() only: called after the header and after each tensor with the bytes of the file
    /// written so far and the planned file size (a merge of a 70 GB model takes minutes). An
    /// exception it throws ends the write as io_error; the target is untouched.
    std::function<void(std::uint64_t written, std::uint64_t total)> progress;
};

class writer {
public:
    writer& set_u8(std::string_view key, std::uint8_t v) noexcept;
    writer& set_i8(std::string_view key, std::int8_t v) noexcept;
    writer& set_u16(std::string_view key, std::uint16_t v) noexcept;
    writer& set_i16(std::string_view key, std::int16_t v) noexcept;
    writer& set_u32(std::string_view key, std::uint32_t v) noexcept;
    writer& set_i32(std::string_view key, std::int32_t v) noexcept;
    writer& set_f32(std::string_view key, float v) noexcept;
    writer& set_bool(std::string_view key, bool v) noexcept;
    writer& set_u64(std::string_view key, std::uint64_t v) noexcept;
    writer& set_i64(std::string_view key, std::int64_t v) noexcept;
    writer& set_f64(std::string_view key, double v) noexcept;
    writer& set_string(std::string_view key, std::string_view v) noexcept;
    /// A fixed-size array: `elements` holds count * value_size(type) little-endian bytes. A type
    /// without a fixed size (string, array, an unknown tag) is refused as bad_value_type (strings:
    /// set_strings), and bytes that are not whole elements as buffer_size_mismatch (expected = the
    /// element size, found = the bytes given); the refusal is reported by make_plan()/write(), as
    /// every builder failure, and the key is left as it was.
    writer& set_array(std::string_view key, value_type type, std::span<const std::byte> elements) noexcept;
    /// The same from typed elements: T must be the C++ type of `type` (std::uint32_t for u32,
    /// float for f32, bool or std::uint8_t for boolean, …); another type, even one of the same width, is refused as
    /// type_mismatch (expected = `type`, found = T's tag), since its bytes would be read as `type`.
    template <class T>
    writer& set_array(std::string_view key, value_type type, std::span<const T> elements) noexcept {
        constexpr std::optional<value_type> tag = element_tag<T>();
        // Bytes of 0/1 are GGUF's booleans too (a vector<bool> has no span), so u8 elements may
        // fill a boolean array; the plan checks each is 0 or 1.
        const bool bytes_as_bool = type == value_type::boolean && tag == value_type::u8;
        if (!tag || (*tag != type && !bytes_as_bool)) return refuse_array(key, type, tag);
        return set_array(key, type, std::as_bytes(elements));
    }
    writer& set_strings(std::string_view key, std::span<const std::string_view> strings) noexcept;
    writer& set_strings(std::string_view key, std::span<const std::string> strings) noexcept;
    /// A value given as the bytes stored after its type tag (scalars: the little-endian value;
    /// strings: u64 length + bytes; arrays: u32 element tag + u64 count + elements). The bytes are
    /// checked against the tag by make_plan() (truncated, bad_bool, bad_value_type, nested_array).
    writer& set_encoded(std::string_view key, value_type type, std::span<const std::byte> value) noexcept;
    /// A record of a parsed file, copied exactly (type, element type, payload): for edit and merge.
    writer& set(const kv& record) noexcept;
    /// Remove a key if present.
    writer& erase(std::string_view key) noexcept;

    /// Add a tensor whose bytes come from `source`. Checked by make_plan(): name 1..63 bytes and
    /// unique, a known type, a valid shape, and source.size() equal to the shape's byte size.
    writer& add_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne,
                       tensor_source source) noexcept;
    /// Add a tensor with its bytes, copied into the writer (small tensors, tests).
    writer& add_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne,
                       std::span<const std::byte> data) noexcept;
    /// Add a tensor whose bytes are all zero, written as a hole (sparse file).
    writer& add_zero_tensor(std::string_view name, tensor_type type, std::span<const std::int64_t> ne) noexcept;

    /// Pad the end of the tensor table to the alignment even when there are no tensors, as ggml's
    /// gguf writer does (gguf_write_to_buf pads unconditionally; the loader puts no padding there
    /// without tensors, and by default neither does this writer). toolbox::quantize sets it: a
    /// vocabulary-only model is then the file llama_model_quantize writes, byte for byte.
    writer& pad_table_without_tensors(bool on = true) noexcept {
        pad_without_tensors_ = on;
        return *this;
    }

    std::size_t kv_count() const noexcept { return kvs_.size(); }
    std::size_t tensor_count() const noexcept { return tensors_.size(); }

    /// The layout of the file write() would produce, without reading any source. @returns the
    /// errors of plan::make, or out_of_memory.
    result<gguf::plan> make_plan() const noexcept;

    /// Serialise to `path` through an atomic_file. @returns the plan's errors (nothing created);
    /// io_error (file = the path concerned: a source, the temporary or the target; detail = the
    /// operation; sys_errno); data_truncated when a file source is shorter than its range; a
    /// callback source's own error; out_of_memory. On any error the target is untouched.
    result<void> write(const std::filesystem::path& path, const write_options& options = {}) const noexcept;
    /// write() without its last step: the whole file is written to the temporary, which is returned
    /// uncommitted (commit() gives it its name; dropping it leaves no trace). For outputs of several
    /// files that must appear together (toolbox::write_parts): every file complete before any is named.
    /// Same errors as write(); the temporary holds two descriptors until it is committed or dropped.
    result<atomic_file> write_uncommitted(const std::filesystem::path& path, const write_options& options = {}) const noexcept;
    /// The bytes before the data section (header, metadata, tensor table, padding: plan's
    /// data_offset() bytes), without reading any source: what an in-place edit writes. @returns the
    /// plan's errors, size_overflow when they cannot be one object in memory, or out_of_memory.
    result<std::vector<std::byte>> head_bytes() const noexcept;
    /// Serialise to memory (holes become zero bytes). Same errors as write(), and size_overflow when
    /// the file cannot be one object in memory.
    result<std::vector<std::byte>> to_bytes(const write_options& options = {}) const noexcept;

private:
    struct kv_record {
        std::string key;
        value_type type;
        std::vector<std::byte> value;  // as stored after the type tag
    };
    struct tensor_record {
        std::string name;
        tensor_type type;
        std::vector<std::int64_t> ne;
        tensor_source source;
    };
    writer& put(std::string_view key, value_type type, std::vector<std::byte> value) noexcept;
    /// put() of the bytes `encode()` returns: a failure while encoding (an allocation) is recorded
    /// with failed(what), like one inside put(). Every setter goes through here.
    template <class Encode>
    writer& put_encoded(std::string_view key, value_type type, Encode&& encode,
                        const char* what = "setting a metadata key") noexcept {
        try {
            return put(key, type, encode());
        } catch (...) {
            failed(what);
            return *this;
        }
    }
    void failed(const char* what) noexcept;
    /// Record `e` as the builder's failure (the first one is kept).
    void failed(error e) noexcept;
    /// set_array<T>'s refusal of elements whose C++ type is not the tag's.
    writer& refuse_array(std::string_view key, value_type type, std::optional<value_type> given) noexcept;
    /// The tag of a C++ element type, if it is one of GGUF's fixed-size scalars.
    template <class T>
    static constexpr std::optional<value_type> element_tag() noexcept {
        using U = std::remove_cv_t<T>;
        if constexpr (std::is_same_v<U, bool>) return value_type::boolean;
        else if constexpr (std::is_same_v<U, std::uint8_t>) return value_type::u8;
        else if constexpr (std::is_same_v<U, std::int8_t>) return value_type::i8;
        else if constexpr (std::is_same_v<U, std::uint16_t>) return value_type::u16;
        else if constexpr (std::is_same_v<U, std::int16_t>) return value_type::i16;
        else if constexpr (std::is_same_v<U, std::uint32_t>) return value_type::u32;
        else if constexpr (std::is_same_v<U, std::int32_t>) return value_type::i32;
        else if constexpr (std::is_same_v<U, std::uint64_t>) return value_type::u64;
        else if constexpr (std::is_same_v<U, std::int64_t>) return value_type::i64;
        else if constexpr (std::is_same_v<U, float>) return value_type::f32;
        else if constexpr (std::is_same_v<U, double>) return value_type::f64;
        else return std::nullopt;
    }
    std::vector<kv_desc> kv_descs() const;

    std::vector<kv_record> kvs_;
    std::unordered_map<std::string, std::size_t> key_index_;  // key -> position in kvs_: O(1) set
    std::vector<tensor_record> tensors_;
    std::optional<error> deferred_;  // the first builder failure (an allocation), reported on use
    bool pad_without_tensors_ = false;
};

}  // namespace minfer::gguf
