#pragma once
// llama.cpp's GGUF reader and writer, loaded at run time from $MINFER_LLAMA_LIB (libggml-base.so of
// the npm package @node-llama-cpp/linux-x64@3.22.1, installed by scripts/llama-ref.sh) with
// dlopen/dlsym: the library is never linked. The declarations below are our own, written against
// the symbols that library exports (`nm -D --defined-only … | grep gguf_`); enums cross the ABI as
// int, structs are passed by value exactly as ggml.h / gguf.h declare them.
//
// Everything the tests read from llama.cpp goes through a `snapshot` (snapshot.hpp), the same
// neutral form our parser's output is turned into, so the two can be compared field by field.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot.hpp"

namespace minfer::reference {

// Opaque llama.cpp types.
struct gguf_context;
struct ggml_context;
struct ggml_tensor;

// ggml.h: struct ggml_init_params { size_t mem_size; void * mem_buffer; bool no_alloc; };
struct ggml_init_params {
    std::size_t mem_size;
    void* mem_buffer;
    bool no_alloc;
};
// gguf.h: struct gguf_init_params { bool no_alloc; struct ggml_context ** ctx; };
struct gguf_init_params {
    bool no_alloc;
    ggml_context** ctx;
};

/// The C API of one loaded libggml-base.so. Obtain it with llama_lib::get(); every pointer is set.
struct llama_api {
    // reading
    gguf_context* (*gguf_init_from_file)(const char*, gguf_init_params);
    void (*gguf_free)(gguf_context*);
    std::uint32_t (*gguf_get_version)(const gguf_context*);
    std::size_t (*gguf_get_alignment)(const gguf_context*);
    std::size_t (*gguf_get_data_offset)(const gguf_context*);
    std::int64_t (*gguf_get_n_kv)(const gguf_context*);
    const char* (*gguf_get_key)(const gguf_context*, std::int64_t);
    int (*gguf_get_kv_type)(const gguf_context*, std::int64_t);
    int (*gguf_get_arr_type)(const gguf_context*, std::int64_t);
    std::size_t (*gguf_get_arr_n)(const gguf_context*, std::int64_t);
    const void* (*gguf_get_arr_data)(const gguf_context*, std::int64_t);
    const char* (*gguf_get_arr_str)(const gguf_context*, std::int64_t, std::size_t);
    std::uint8_t (*gguf_get_val_u8)(const gguf_context*, std::int64_t);
    std::int8_t (*gguf_get_val_i8)(const gguf_context*, std::int64_t);
    std::uint16_t (*gguf_get_val_u16)(const gguf_context*, std::int64_t);
    std::int16_t (*gguf_get_val_i16)(const gguf_context*, std::int64_t);
    std::uint32_t (*gguf_get_val_u32)(const gguf_context*, std::int64_t);
    std::int32_t (*gguf_get_val_i32)(const gguf_context*, std::int64_t);
    float (*gguf_get_val_f32)(const gguf_context*, std::int64_t);
    std::uint64_t (*gguf_get_val_u64)(const gguf_context*, std::int64_t);
    std::int64_t (*gguf_get_val_i64)(const gguf_context*, std::int64_t);
    double (*gguf_get_val_f64)(const gguf_context*, std::int64_t);
    bool (*gguf_get_val_bool)(const gguf_context*, std::int64_t);
    const char* (*gguf_get_val_str)(const gguf_context*, std::int64_t);
    std::int64_t (*gguf_get_n_tensors)(const gguf_context*);
    const char* (*gguf_get_tensor_name)(const gguf_context*, std::int64_t);
    int (*gguf_get_tensor_type)(const gguf_context*, std::int64_t);
    std::size_t (*gguf_get_tensor_offset)(const gguf_context*, std::int64_t);
    std::size_t (*gguf_get_tensor_size)(const gguf_context*, std::int64_t);
    const std::int64_t* (*gguf_get_tensor_ne)(const gguf_context*, std::int64_t);
    // writing
    gguf_context* (*gguf_init_empty)();
    void (*gguf_set_val_u8)(gguf_context*, const char*, std::uint8_t);
    void (*gguf_set_val_i8)(gguf_context*, const char*, std::int8_t);
    void (*gguf_set_val_u16)(gguf_context*, const char*, std::uint16_t);
    void (*gguf_set_val_i16)(gguf_context*, const char*, std::int16_t);
    void (*gguf_set_val_u32)(gguf_context*, const char*, std::uint32_t);
    void (*gguf_set_val_i32)(gguf_context*, const char*, std::int32_t);
    void (*gguf_set_val_f32)(gguf_context*, const char*, float);
    void (*gguf_set_val_u64)(gguf_context*, const char*, std::uint64_t);
    void (*gguf_set_val_i64)(gguf_context*, const char*, std::int64_t);
    void (*gguf_set_val_f64)(gguf_context*, const char*, double);
    void (*gguf_set_val_bool)(gguf_context*, const char*, bool);
    void (*gguf_set_val_str)(gguf_context*, const char*, const char*);
    void (*gguf_set_arr_data)(gguf_context*, const char*, int, const void*, std::size_t);
    void (*gguf_set_arr_str)(gguf_context*, const char*, const char**, std::size_t);
    std::int64_t (*gguf_remove_key)(gguf_context*, const char*);
    void (*gguf_add_tensor)(gguf_context*, const ggml_tensor*);
    void (*gguf_set_tensor_data)(gguf_context*, const char*, const void*);
    bool (*gguf_write_to_file)(const gguf_context*, const char*, bool);
    // ggml
    ggml_context* (*ggml_init)(ggml_init_params);
    void (*ggml_free)(ggml_context*);
    ggml_tensor* (*ggml_new_tensor)(ggml_context*, int, int, const std::int64_t*);
    ggml_tensor* (*ggml_set_name)(ggml_tensor*, const char*);
    const char* (*ggml_get_name)(const ggml_tensor*);
    void* (*ggml_get_data)(const ggml_tensor*);
    ggml_tensor* (*ggml_get_first_tensor)(const ggml_context*);
    ggml_tensor* (*ggml_get_next_tensor)(const ggml_context*, const ggml_tensor*);
    ggml_tensor* (*ggml_get_tensor)(ggml_context*, const char*);
    std::int64_t (*ggml_nelements)(const ggml_tensor*);
    std::size_t (*ggml_nbytes)(const ggml_tensor*);
    int (*ggml_n_dims)(const ggml_tensor*);
    std::int64_t (*ggml_blck_size)(int);
    std::size_t (*ggml_type_size)(int);
    const char* (*ggml_type_name)(int);
    std::size_t (*ggml_tensor_overhead)();
    void (*ggml_log_set)(void (*)(int, const char*, void*), void*);
};

/// The loaded library. get() returns nullptr when $MINFER_LLAMA_LIB is unset, cannot be dlopen'ed,
/// or lacks a symbol; skip_reason() then says why (for GTEST_SKIP).
class llama_lib {
public:
    static const llama_lib* get();
    static const std::string& skip_reason();

    const llama_api& api() const noexcept { return api_; }
    const std::string& path() const noexcept { return path_; }
    /// GGML_TYPE_COUNT of this build: the first id ggml_type_name calls "NONE".
    std::uint32_t type_count() const noexcept { return type_count_; }
    /// Whether llama.cpp can store a tensor of this type in a file (known, block size > 0).
    bool knows_type(std::uint32_t id) const noexcept;
    /// ggml_tensor's ne[4] is followed by nb[4] (checked at load on a known tensor); when false
    /// the strides are not compared.
    bool strides_readable() const noexcept { return strides_readable_; }

    /// The log lines llama.cpp printed since the last clear (the callback collects them instead of
    /// printing to stderr).
    std::string take_log() const;

private:
    llama_lib() = default;
    bool load(const std::string& path, std::string& why);
    llama_api api_{};
    std::string path_;
    void* handle_ = nullptr;
    std::uint32_t type_count_ = 0;
    bool strides_readable_ = false;
};

/// Skip the current test (GTEST_SKIP) when the library is not available; otherwise bind `lib`.
#define MINFER_REQUIRE_LLAMA(lib)                                                   \
    const ::minfer::reference::llama_lib* lib = ::minfer::reference::llama_lib::get(); \
    if ((lib) == nullptr) GTEST_SKIP() << ::minfer::reference::llama_lib::skip_reason()

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
/// llama.cpp's model loader does) unless read_data, which loads the data blob as well.
ref_verdict ref_read(const llama_lib& lib, const std::filesystem::path& path, bool read_data = false);

}  // namespace minfer::reference
