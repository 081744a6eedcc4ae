#pragma once
#include <cstdlib>
#include <string_view>
// The one binding of llama.cpp's ggml/gguf C library for the tests and the benchmark.
//
// The library (libggml-base.so of the npm package @node-llama-cpp/linux-x64@3.22.1, installed by
// scripts/llama-ref.sh) is loaded at run time with dlopen from $MINFER_LLAMA_LIB, or from the path
// compiled in from the CMake cache variable MINFER_LLAMA_LIB when the environment variable is unset
// or empty. It is never linked. The declarations below are our own, written against ggml.h / gguf.h
// and the symbols the library exports (`nm -D --defined-only`): enums cross the ABI as int, structs
// are passed by value as those headers declare them.
//
// part::llama_model adds llama.cpp's model API from libllama.v0.5.0.so (and ggml_backend_load_all_from_path
// from libggml.v0.5.0.so), both in the folder of libggml-base.so: loading a model and decoding a batch.
// Its structs passed by value (llama_model_params, llama_context_params) are treated as opaque bytes of
// the size this build uses, learned from its *_default_params() (checked at load, see part::llama_model):
// they are only ever obtained from those functions and passed back unchanged, so no field offset is
// assumed; the thread count is set through llama_set_n_threads() instead.
//
// Every symbol is looked up; the ones absent stay nullptr. A user states the parts it needs
// (llama_lib::require) and gets the library only when all of them are there, or a reason to print
// (GTEST_SKIP, a benchmark's skip message). Parts a user can do without are checked with has().
//
//     std::string why;
//     const llama_lib* lib = llama_lib::require(part::gguf_read | part::ggml_types, why);
//     if (lib == nullptr) GTEST_SKIP() << why;
//     lib->api().gguf_init_from_file(path, {true, nullptr});
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace minfer::llama_ref {

// Opaque llama.cpp types.
struct gguf_context;
struct ggml_context;
struct ggml_tensor;
struct llama_model;
struct llama_context;
struct llama_vocab;
struct quantize_state_impl;

// llama.h's parameter structs, opaque: the sizes of this build (llama_model_default_params() writes
// bytes [0, 0x4e), llama_context_default_params() [0, 0xa0); both 8-aligned). Larger than 16 bytes,
// so passed and returned in memory by the x86-64 ABI whatever their fields: only the size matters.
struct llama_model_params {
    alignas(8) unsigned char bytes[80];
};
struct llama_context_params {
    alignas(8) unsigned char bytes[160];
};
// llama.h: typedef struct llama_batch { int32_t n_tokens; llama_token* token; float* embd;
// llama_pos* pos; int32_t* n_seq_id; llama_seq_id** seq_id; int8_t* logits; } (56 bytes; what
// llama_batch_get_one() fills, checked on its code).
struct llama_batch {
    std::int32_t n_tokens;
    std::int32_t* token;
    float* embd;
    std::int32_t* pos;
    std::int32_t* n_seq_id;
    std::int32_t** seq_id;
    std::int8_t* logits;
};

// llama.h: llama_model_quantize_params of this build (64 bytes; llama_model_quantize_default_params()
// writes them, checked by llama_lib::quantize_params_checked()). The last 8 bytes are fields newer
// than the llama.h we read (0 and 2 by default), passed back unchanged.
struct llama_model_quantize_params {
    std::int32_t nthread;
    std::int32_t ftype;                 ///< llama_ftype
    std::int32_t output_tensor_type;    ///< ggml_type; GGML_TYPE_COUNT: not set
    std::int32_t token_embedding_type;  ///< ggml_type; GGML_TYPE_COUNT: not set
    bool allow_requantize;
    bool quantize_output_tensor;
    bool only_copy;
    bool pure;
    bool keep_split;
    bool dry_run;
    const struct llama_model_imatrix_data* imatrix;       ///< ended by a null name
    const struct llama_model_kv_override* kv_overrides;   ///< ended by an empty key (key[0] == 0)
    const struct llama_tensor_type_override* tt_overrides;  ///< ended by a null pattern
    const std::int32_t* prune_layers;
    unsigned char tail[8];
};
// One --tensor-type override as llama_model_quantize reads it (pattern at 0, type at 8, 16 bytes:
// the stride of the loop in llama_quant_init's disassembly).
struct llama_tensor_type_override {
    const char* pattern;
    std::int32_t type;
};
// llama.h: struct llama_model_imatrix_data { const char* name; const float* data; size_t size; } (24
// bytes), one tensor's importance weights (size = ne[0] * ne[2] floats). llama_model_quantize copies
// the array until a null name; its loop in llama_model_quantize_impl's disassembly reads name at 0,
// data at 8, size at 0x10 and steps 0x18.
struct llama_model_imatrix_data {
    const char* name;
    const float* data;
    std::size_t size;
};
// llama.h: enum llama_model_kv_override_type { INT, FLOAT, BOOL, STR } and struct llama_model_kv_override
// { tag; char key[128]; union { int64_t val_i64; double val_f64; bool val_bool; char val_str[128]; }; }
// (264 bytes: tag at 0, key at 4, the 8-aligned union at 136). Checked on llama_model_quantize_impl's
// disassembly: its loop steps 0x108, tests key[0] at +4, the tag at -0x88 and reads the value at
// +0x88 of the union; and by behaviour (tests/toolbox/test_quantize_ref.cpp: each override's value
// reaches the output file).
inline constexpr std::int32_t kv_override_int = 0;
inline constexpr std::int32_t kv_override_float = 1;
inline constexpr std::int32_t kv_override_bool = 2;
inline constexpr std::int32_t kv_override_str = 3;
struct llama_model_kv_override {
    std::int32_t tag;
    char key[128];
    union {
        std::int64_t val_i64;
        double val_f64;
        bool val_bool;
        char val_str[128];
    };
};
static_assert(sizeof(llama_model_imatrix_data) == 24);
static_assert(sizeof(llama_model_kv_override) == 264);
static_assert(offsetof(llama_model_kv_override, key) == 4);
static_assert(offsetof(llama_model_kv_override, val_i64) == 136);
// llama-ext.h: the descriptor of a mock model for the quantizer's type choice (what
// llama_quant_model_from_metadata reads: offsets 0, 8, …, 0x20 in its disassembly).
struct llama_quant_model_desc {
    const char* architecture;
    std::uint32_t n_embd, n_ff, n_layer, n_head, n_head_kv, n_expert, n_embd_head_k, n_embd_head_v;
};

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
// ggml.h: ggml_bf16_t, a struct of one uint16_t, passed and returned by value.
struct ggml_bf16 {
    std::uint16_t bits;
};

using row_quantize = void (*)(const float* src, void* dst, std::int64_t n);
using row_dequantize = void (*)(const void* src, float* dst, std::int64_t n);
using log_callback = void (*)(int level, const char* text, void* user);

// ggml.h: struct ggml_type_traits, what ggml_get_type_traits() points to. Read only through
// llama_lib::type_traits(), which checks the layout on q4_0 first.
struct ggml_type_traits {
    const char* type_name;
    std::int64_t blck_size;
    std::int64_t blck_size_interleave;
    std::size_t type_size;
    bool is_quantized;
    row_dequantize to_float;
    row_quantize from_float_ref;
};

/// The parts of the C API, for require() / has() / missing(): each names a group of symbols.
namespace part {
inline constexpr unsigned gguf_read = 1u << 0;       ///< gguf_init_from_file, gguf_free, gguf_get_* (not _tensor_ne)
inline constexpr unsigned gguf_tensor_ne = 1u << 1;  ///< gguf_get_tensor_ne
inline constexpr unsigned gguf_write = 1u << 2;      ///< gguf_init_empty, gguf_set_*, gguf_remove_key, gguf_add_tensor, gguf_set_tensor_data, gguf_write_to_file
inline constexpr unsigned ggml_tensors = 1u << 3;    ///< ggml_init, ggml_free, ggml_new_tensor, ggml_*_name, ggml_get_*, ggml_nelements, ggml_nbytes, ggml_n_dims, ggml_tensor_overhead
inline constexpr unsigned ggml_types = 1u << 4;      ///< ggml_blck_size, ggml_type_size, ggml_type_name
inline constexpr unsigned log = 1u << 5;             ///< ggml_log_set (installed at load: the log is collected, see take_log)
inline constexpr unsigned f16 = 1u << 6;             ///< ggml_fp32_to_fp16, ggml_fp16_to_fp32
inline constexpr unsigned bf16 = 1u << 7;            ///< ggml_fp32_to_bf16, ggml_bf16_to_fp32
inline constexpr unsigned quant_ref = 1u << 8;       ///< quantize_row_{q4_0,q8_0}_ref, dequantize_row_{q4_0,q8_0}
inline constexpr unsigned type_traits = 1u << 9;     ///< ggml_get_type_traits
inline constexpr unsigned quantize_chunk = 1u << 10; ///< ggml_quantize_chunk, ggml_quantize_requires_imatrix
/// Not a symbol: GGML_TYPE_COUNT learned (llama_lib::type_count() > 0; needs gguf_read and log).
inline constexpr unsigned type_count = 1u << 11;
/// libllama's model API (llama_backend_init, llama_log_set, llama_model_*, llama_context_default_params,
/// llama_init_from_model, llama_free, llama_set_n_threads, llama_n_threads, llama_batch_get_one,
/// llama_decode, llama_get_logits_ith, llama_vocab_n_tokens) and libggml's
/// ggml_backend_load_all_from_path; also requires that the parameter structs have the sizes declared
/// above (nothing written past them by *_default_params()). Requiring it initialises the backend
/// once: llama's log is collected like ggml's (take_log), the CPU backends of the folder are loaded.
inline constexpr unsigned llama_model = 1u << 12;
/// dequantize_row_q8_K, quantize_row_q8_K_ref: exported by ggml, though its type_traits give q8_K no
/// to_float (n a multiple of 256).
inline constexpr unsigned q8_k = 1u << 13;
/// libllama's quantizer type choice (llama-ext.h, C++ symbols): llama_model_quantize_default_params,
/// llama_quant_init/free, llama_quant_model_from_metadata, llama_quant_tensor_allows_quantization,
/// llama_quant_compute_types, llama_ftype_get_default_type, llama_model_quantize; also requires that the default
/// quantize params have the layout declared (quantize_params_checked()). Use with part::llama_model.
inline constexpr unsigned llama_quant = 1u << 14;
}  // namespace part

/// The C API of the loaded library. A pointer is nullptr when the library lacks the symbol.
struct llama_api {
    // gguf.h, reading (part::gguf_read)
    gguf_context* (*gguf_init_from_file)(const char*, gguf_init_params) = nullptr;
    void (*gguf_free)(gguf_context*) = nullptr;
    std::uint32_t (*gguf_get_version)(const gguf_context*) = nullptr;
    std::size_t (*gguf_get_alignment)(const gguf_context*) = nullptr;
    std::size_t (*gguf_get_data_offset)(const gguf_context*) = nullptr;
    std::int64_t (*gguf_get_n_kv)(const gguf_context*) = nullptr;
    const char* (*gguf_get_key)(const gguf_context*, std::int64_t) = nullptr;
    int (*gguf_get_kv_type)(const gguf_context*, std::int64_t) = nullptr;
    int (*gguf_get_arr_type)(const gguf_context*, std::int64_t) = nullptr;
    std::size_t (*gguf_get_arr_n)(const gguf_context*, std::int64_t) = nullptr;
    const void* (*gguf_get_arr_data)(const gguf_context*, std::int64_t) = nullptr;
    const char* (*gguf_get_arr_str)(const gguf_context*, std::int64_t, std::size_t) = nullptr;
    std::uint8_t (*gguf_get_val_u8)(const gguf_context*, std::int64_t) = nullptr;
    std::int8_t (*gguf_get_val_i8)(const gguf_context*, std::int64_t) = nullptr;
    std::uint16_t (*gguf_get_val_u16)(const gguf_context*, std::int64_t) = nullptr;
    std::int16_t (*gguf_get_val_i16)(const gguf_context*, std::int64_t) = nullptr;
    std::uint32_t (*gguf_get_val_u32)(const gguf_context*, std::int64_t) = nullptr;
    std::int32_t (*gguf_get_val_i32)(const gguf_context*, std::int64_t) = nullptr;
    float (*gguf_get_val_f32)(const gguf_context*, std::int64_t) = nullptr;
    std::uint64_t (*gguf_get_val_u64)(const gguf_context*, std::int64_t) = nullptr;
    std::int64_t (*gguf_get_val_i64)(const gguf_context*, std::int64_t) = nullptr;
    double (*gguf_get_val_f64)(const gguf_context*, std::int64_t) = nullptr;
    bool (*gguf_get_val_bool)(const gguf_context*, std::int64_t) = nullptr;
    const char* (*gguf_get_val_str)(const gguf_context*, std::int64_t) = nullptr;
    std::int64_t (*gguf_get_n_tensors)(const gguf_context*) = nullptr;
    const char* (*gguf_get_tensor_name)(const gguf_context*, std::int64_t) = nullptr;
    int (*gguf_get_tensor_type)(const gguf_context*, std::int64_t) = nullptr;
    std::size_t (*gguf_get_tensor_offset)(const gguf_context*, std::int64_t) = nullptr;
    std::size_t (*gguf_get_tensor_size)(const gguf_context*, std::int64_t) = nullptr;
    // part::gguf_tensor_ne: points at the ne[4] of the ggml_tensor the context keeps
    const std::int64_t* (*gguf_get_tensor_ne)(const gguf_context*, std::int64_t) = nullptr;
    // gguf.h, writing (part::gguf_write)
    gguf_context* (*gguf_init_empty)() = nullptr;
    void (*gguf_set_val_u8)(gguf_context*, const char*, std::uint8_t) = nullptr;
    void (*gguf_set_val_i8)(gguf_context*, const char*, std::int8_t) = nullptr;
    void (*gguf_set_val_u16)(gguf_context*, const char*, std::uint16_t) = nullptr;
    void (*gguf_set_val_i16)(gguf_context*, const char*, std::int16_t) = nullptr;
    void (*gguf_set_val_u32)(gguf_context*, const char*, std::uint32_t) = nullptr;
    void (*gguf_set_val_i32)(gguf_context*, const char*, std::int32_t) = nullptr;
    void (*gguf_set_val_f32)(gguf_context*, const char*, float) = nullptr;
    void (*gguf_set_val_u64)(gguf_context*, const char*, std::uint64_t) = nullptr;
    void (*gguf_set_val_i64)(gguf_context*, const char*, std::int64_t) = nullptr;
    void (*gguf_set_val_f64)(gguf_context*, const char*, double) = nullptr;
    void (*gguf_set_val_bool)(gguf_context*, const char*, bool) = nullptr;
    void (*gguf_set_val_str)(gguf_context*, const char*, const char*) = nullptr;
    void (*gguf_set_arr_data)(gguf_context*, const char*, int, const void*, std::size_t) = nullptr;
    void (*gguf_set_arr_str)(gguf_context*, const char*, const char**, std::size_t) = nullptr;
    std::int64_t (*gguf_remove_key)(gguf_context*, const char*) = nullptr;
    void (*gguf_add_tensor)(gguf_context*, const ggml_tensor*) = nullptr;
    void (*gguf_set_tensor_data)(gguf_context*, const char*, const void*) = nullptr;
    bool (*gguf_write_to_file)(const gguf_context*, const char*, bool) = nullptr;
    // ggml.h, contexts and tensors (part::ggml_tensors)
    ggml_context* (*ggml_init)(ggml_init_params) = nullptr;
    void (*ggml_free)(ggml_context*) = nullptr;
    ggml_tensor* (*ggml_new_tensor)(ggml_context*, int, int, const std::int64_t*) = nullptr;
    ggml_tensor* (*ggml_set_name)(ggml_tensor*, const char*) = nullptr;
    const char* (*ggml_get_name)(const ggml_tensor*) = nullptr;
    void* (*ggml_get_data)(const ggml_tensor*) = nullptr;
    ggml_tensor* (*ggml_get_first_tensor)(const ggml_context*) = nullptr;
    ggml_tensor* (*ggml_get_next_tensor)(const ggml_context*, const ggml_tensor*) = nullptr;
    ggml_tensor* (*ggml_get_tensor)(ggml_context*, const char*) = nullptr;
    std::int64_t (*ggml_nelements)(const ggml_tensor*) = nullptr;
    std::size_t (*ggml_nbytes)(const ggml_tensor*) = nullptr;
    int (*ggml_n_dims)(const ggml_tensor*) = nullptr;
    std::size_t (*ggml_tensor_overhead)() = nullptr;
    // ggml.h, types (part::ggml_types). ggml_type_name does not check its argument.
    std::int64_t (*ggml_blck_size)(int) = nullptr;
    std::size_t (*ggml_type_size)(int) = nullptr;
    const char* (*ggml_type_name)(int) = nullptr;
    // part::log
    void (*ggml_log_set)(log_callback, void*) = nullptr;
    // part::f16, part::bf16 (one value; ggml_fp16_t is a uint16_t)
    std::uint16_t (*ggml_fp32_to_fp16)(float) = nullptr;
    float (*ggml_fp16_to_fp32)(std::uint16_t) = nullptr;
    ggml_bf16 (*ggml_fp32_to_bf16)(float) = nullptr;
    float (*ggml_bf16_to_fp32)(ggml_bf16) = nullptr;
    // part::quant_ref: ggml's reference row quantizers and dequantizers (n a multiple of 32)
    row_quantize quantize_row_q4_0_ref = nullptr;
    row_quantize quantize_row_q8_0_ref = nullptr;
    row_dequantize dequantize_row_q4_0 = nullptr;
    row_dequantize dequantize_row_q8_0 = nullptr;
    // part::q8_k
    row_quantize quantize_row_q8_K_ref = nullptr;
    row_dequantize dequantize_row_q8_K = nullptr;
    // part::type_traits: use llama_lib::type_traits(), which checks the struct layout
    const ggml_type_traits* (*ggml_get_type_traits)(int) = nullptr;
    // part::quantize_chunk: (type, src, dst, start, nrows, n_per_row, imatrix) -> bytes written
    std::size_t (*ggml_quantize_chunk)(int, const float*, void*, std::int64_t, std::int64_t, std::int64_t,
                                       const float*) = nullptr;
    // part::quantize_chunk: whether ggml_quantize_chunk asserts (aborts) on a null imatrix for the type
    bool (*ggml_quantize_requires_imatrix)(int) = nullptr;
    // part::quantize_chunk: ggml's check of quantized bytes (llama_model_quantize runs it on every chunk)
    bool (*ggml_validate_row_data)(int, const void*, std::size_t) = nullptr;
    // part::llama_model (libllama; the last one from libggml)
    void (*llama_backend_init)() = nullptr;
    void (*llama_log_set)(log_callback, void*) = nullptr;
    llama_model_params (*llama_model_default_params)() = nullptr;
    llama_model* (*llama_model_load_from_file)(const char*, llama_model_params) = nullptr;
    void (*llama_model_free)(llama_model*) = nullptr;
    std::uint64_t (*llama_model_n_params)(const llama_model*) = nullptr;
    std::uint64_t (*llama_model_size)(const llama_model*) = nullptr;
    /// The model's tokenizer.chat_template (name nullptr) or tokenizer.chat_template.<name>; nullptr if none.
    const char* (*llama_model_chat_template)(const llama_model*, const char*) = nullptr;
    std::int32_t (*llama_model_meta_count)(const llama_model*) = nullptr;
    /// Writes the value as text into buf (snprintf-like); returns its length, -1 when the key is absent.
    std::int32_t (*llama_model_meta_val_str)(const llama_model*, const char*, char*, std::size_t) = nullptr;
    const llama_vocab* (*llama_model_get_vocab)(const llama_model*) = nullptr;
    std::int32_t (*llama_vocab_n_tokens)(const llama_vocab*) = nullptr;
    llama_context_params (*llama_context_default_params)() = nullptr;
    llama_context* (*llama_init_from_model)(llama_model*, llama_context_params) = nullptr;
    void (*llama_free)(llama_context*) = nullptr;
    void (*llama_set_n_threads)(llama_context*, std::int32_t, std::int32_t) = nullptr;
    std::int32_t (*llama_n_threads)(llama_context*) = nullptr;
    llama_batch (*llama_batch_get_one)(std::int32_t*, std::int32_t) = nullptr;
    /// 0 ok, 1 no KV slot, 2 aborted, -1 invalid batch, < -1 error.
    std::int32_t (*llama_decode)(llama_context*, llama_batch) = nullptr;
    /// Logits of the i-th token of the last batch (negative: from the end), n_vocab floats.
    float* (*llama_get_logits_ith)(llama_context*, std::int32_t) = nullptr;
    void (*ggml_backend_load_all_from_path)(const char*) = nullptr;
    // part::llama_quant (libllama; C++ linkage, looked up by their mangled names)
    llama_model_quantize_params (*llama_model_quantize_default_params)() = nullptr;
    quantize_state_impl* (*llama_quant_init)(const llama_model*, const llama_model_quantize_params*) = nullptr;
    void (*llama_quant_free)(quantize_state_impl*) = nullptr;
    /// A model with only the hyperparameters of `desc` (free with llama_model_free).
    llama_model* (*llama_quant_model_from_metadata)(const llama_quant_model_desc*) = nullptr;
    bool (*llama_quant_tensor_allows_quantization)(const quantize_state_impl*, const ggml_tensor*) = nullptr;
    /// (state, ftype, tensors, out types, n): the type of each tensor; counters reset, has_imatrix false.
    void (*llama_quant_compute_types)(quantize_state_impl*, int, ggml_tensor**, int*, std::size_t) = nullptr;
    int (*llama_ftype_get_default_type)(int) = nullptr;
    /// llama.h (C linkage): quantize the model `in` (a file, or part 1 of a split set) into `out` (with
    /// keep_split: the parts "<out>-%05d-of-%05d.gguf"); 0 on success, 1 on failure (the reason is in
    /// the log, take_log()). What llama-quantize calls.
    std::uint32_t (*llama_model_quantize)(const char*, const char*, const llama_model_quantize_params*) = nullptr;
};

/// The loaded library (one per process).
class llama_lib {
public:
    /// The library, loaded on the first call: nullptr when no path is given or dlopen fails, and
    /// then unavailable_reason() says which.
    static const llama_lib* get();
    /// Why get() is nullptr ("" when it is not).
    static const std::string& unavailable_reason();
    /// Whether a path was given ($MINFER_LLAMA_LIB, or the compiled-in default): a user may treat a
    /// library given but unusable as a failure rather than a skip.
    static bool configured();
    /// That path ("" when none is given): for programs the tests run against the same library.
    static std::string configured_library();
    /// The library when it is loaded and has every part of `parts`; otherwise nullptr, and `why`
    /// says why in one line ending in "skipped" (print it with GTEST_SKIP).
    static const llama_lib* require(unsigned parts, std::string& why);

    const llama_api& api() const noexcept { return api_; }
    const std::string& path() const noexcept { return path_; }
    /// Whether every symbol of `parts` resolved (part::type_count: whether type_count() > 0).
    bool has(unsigned parts) const { return missing(parts).empty(); }
    /// The symbols of `parts` the library lacks, comma-separated ("" when none).
    std::string missing(unsigned parts) const;

    /// GGML_TYPE_COUNT of this build (0 when it cannot be learned). ggml_type_name() does not check
    /// its argument, so the count comes from the reader's refusal of a type-1000 tensor, "should be
    /// in [0, N)". Learned on first call: writes and reads a small temporary file.
    std::uint32_t type_count() const;
    /// Whether llama.cpp can store a tensor of this type in a file (id < type_count(), block size > 0).
    bool knows_type(std::uint32_t id) const;
    /// Whether ggml_tensor's ne[4] is followed by nb[4], checked on first call on a q4_0 tensor of
    /// shape (64, 3, 5) (needs part::ggml_tensors); when false, strides cannot be read.
    bool strides_readable() const;
    /// The nb[4] that follows the ne[4] gguf_get_tensor_ne() returned; false (nb untouched) when
    /// !strides_readable().
    bool strides_after_ne(const std::int64_t* ne, std::array<std::uint64_t, 4>& nb) const;
    /// ggml_get_type_traits(id) once its layout is checked on q4_0 ("q4_0", 32, 18); nullptr when
    /// the symbol is absent, the check failed, or id >= type_count().
    const ggml_type_traits* type_traits(std::uint32_t id) const;
    /// Whether llama_model_default_params() and llama_context_default_params() write nothing past the
    /// sizes declared here and reach their last 8 bytes (the declared sizes are this build's).
    bool llama_params_sized() const;
    /// Whether llama_model_quantize_default_params() fills the declared llama_model_quantize_params as
    /// the release we read does (ftype Q8_0, both type overrides GGML_TYPE_COUNT, quantize_output_tensor,
    /// nothing else set, nothing written past 64 bytes).
    bool quantize_params_checked() const;
    /// For part::llama_model: log collection, CPU backends of the library's folder, llama_backend_init(),
    /// once. false when a symbol is missing or the parameter sizes differ.
    bool llama_ready() const;

    /// The log lines llama.cpp printed since the last call (with part::log the callback collects them,
    /// up to 16 KiB, instead of printing to stderr; MINFER_REFERENCE_VERBOSE=1 prints them as well).
    std::string take_log() const;

    llama_lib(const llama_lib&) = delete;
    llama_lib& operator=(const llama_lib&) = delete;
    ~llama_lib();

private:
    llama_lib();
    struct state;  ///< the symbols not found, and the facts learned on first use
    llama_api api_{};
    std::string path_;
    void* handle_ = nullptr;
    void* llama_handle_ = nullptr;  ///< libllama, when found beside libggml-base
    void* ggml_handle_ = nullptr;   ///< libggml (the backend registry)
    std::unique_ptr<state> state_;
};

}  // namespace minfer::llama_ref

namespace minfer::llama_ref {
/// MINFER_REQUIRE_REFERENCE set (and not "0"), as .ci/run sets it: a reference test that cannot run
/// fails instead of skipping, so that a green CI run is evidence of the comparisons.
inline bool reference_required() noexcept {
    const char* v = std::getenv("MINFER_REQUIRE_REFERENCE");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}
}  // namespace minfer::llama_ref

/// For GoogleTest users: skip the current test with `why` (a reference that is not there), or fail
/// it when MINFER_REQUIRE_REFERENCE is set.
#define MINFER_SKIP_REFERENCE(why)                                                                  \
    do {                                                                                            \
        if (::minfer::llama_ref::reference_required())                                              \
            FAIL() << "MINFER_REQUIRE_REFERENCE is set and the llama.cpp reference cannot run: " << (why); \
        GTEST_SKIP() << (why);                                                                      \
    } while (0)

/// For GoogleTest users: bind `lib` (const llama_lib*) to the library with every part of `parts`,
/// or skip the current test with the reason (fail it under MINFER_REQUIRE_REFERENCE).
#define MINFER_REQUIRE_LLAMA_PARTS(lib, parts)                                                    \
    std::string lib##_unavailable;                                                                \
    const ::minfer::llama_ref::llama_lib* lib = ::minfer::llama_ref::llama_lib::require((parts), lib##_unavailable); \
    if ((lib) == nullptr) MINFER_SKIP_REFERENCE(lib##_unavailable)
