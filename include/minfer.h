/* minfer.h: the C API of minfer (libminfer.so.0). Plain C99; see docs/C_API.md.
 *
 * The minfer_gguf_* functions are ggml's gguf.h reading API with a prefix: the same signatures and,
 * on every file ggml accepts, the same answers (kv order and ids, tensor order, offsets relative to
 * the data section, alignment, version; `general.alignment` is an ordinary kv). Where ggml aborts
 * (a NULL or freed handle, an id out of range, the getter of another type) these functions return
 * a neutral value (0, false, NULL or -1) and record the error, which the minfer_last_error_*
 * functions then describe. No function aborts, throws or reads outside the file's verified bytes.
 * minfer/ggml_compat.h maps ggml's own names onto these.
 *
 * The last error is per thread. It is set by a call that fails and left alone by a call that
 * succeeds (as errno): read it right after a call returned a neutral value.
 */
#ifndef MINFER_H
#define MINFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Only the functions marked MINFER_API are exported by libminfer.so (the library is compiled with
 * hidden visibility and linked with a version script: nothing else of the C++ libraries leaks). */
#if defined(__GNUC__) || defined(__clang__)
#define MINFER_API __attribute__((visibility("default")))
#else
#define MINFER_API
#endif

/* C++ callers see the functions as what they are: none throws. */
#ifdef __cplusplus
#define MINFER_NOEXCEPT noexcept
#else
#define MINFER_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's ABI version: the SOVERSION of libminfer.so (libminfer.so.0). */
#define MINFER_C_API_VERSION 0

/* Metadata value types, ggml's GGUF_TYPE_* numbers (as stored on disk). */
enum minfer_gguf_type {
    MINFER_GGUF_TYPE_UINT8 = 0,
    MINFER_GGUF_TYPE_INT8 = 1,
    MINFER_GGUF_TYPE_UINT16 = 2,
    MINFER_GGUF_TYPE_INT16 = 3,
    MINFER_GGUF_TYPE_UINT32 = 4,
    MINFER_GGUF_TYPE_INT32 = 5,
    MINFER_GGUF_TYPE_FLOAT32 = 6,
    MINFER_GGUF_TYPE_BOOL = 7,
    MINFER_GGUF_TYPE_STRING = 8,
    MINFER_GGUF_TYPE_ARRAY = 9,
    MINFER_GGUF_TYPE_UINT64 = 10,
    MINFER_GGUF_TYPE_INT64 = 11,
    MINFER_GGUF_TYPE_FLOAT64 = 12,
    MINFER_GGUF_TYPE_COUNT = 13, /* marks the end of the types */
    /* Not types: they make every int a value of the enum, so that a caller's out-of-range number
     * passed to minfer_gguf_type_name is defined behaviour in the C++ implementation too. */
    MINFER_GGUF_TYPE_INT_MIN_ = -0x7FFFFFFF - 1,
    MINFER_GGUF_TYPE_INT_MAX_ = 0x7FFFFFFF
};

/* Tensor types, ggml's GGML_TYPE_* ids (ids that ggml removed are absent, as in ggml.h). */
enum minfer_ggml_type {
    MINFER_GGML_TYPE_F32 = 0,
    MINFER_GGML_TYPE_F16 = 1,
    MINFER_GGML_TYPE_Q4_0 = 2,
    MINFER_GGML_TYPE_Q4_1 = 3,
    MINFER_GGML_TYPE_Q5_0 = 6,
    MINFER_GGML_TYPE_Q5_1 = 7,
    MINFER_GGML_TYPE_Q8_0 = 8,
    MINFER_GGML_TYPE_Q8_1 = 9,
    MINFER_GGML_TYPE_Q2_K = 10,
    MINFER_GGML_TYPE_Q3_K = 11,
    MINFER_GGML_TYPE_Q4_K = 12,
    MINFER_GGML_TYPE_Q5_K = 13,
    MINFER_GGML_TYPE_Q6_K = 14,
    MINFER_GGML_TYPE_Q8_K = 15,
    MINFER_GGML_TYPE_IQ2_XXS = 16,
    MINFER_GGML_TYPE_IQ2_XS = 17,
    MINFER_GGML_TYPE_IQ3_XXS = 18,
    MINFER_GGML_TYPE_IQ1_S = 19,
    MINFER_GGML_TYPE_IQ4_NL = 20,
    MINFER_GGML_TYPE_IQ3_S = 21,
    MINFER_GGML_TYPE_IQ2_S = 22,
    MINFER_GGML_TYPE_IQ4_XS = 23,
    MINFER_GGML_TYPE_I8 = 24,
    MINFER_GGML_TYPE_I16 = 25,
    MINFER_GGML_TYPE_I32 = 26,
    MINFER_GGML_TYPE_I64 = 27,
    MINFER_GGML_TYPE_F64 = 28,
    MINFER_GGML_TYPE_IQ1_M = 29,
    MINFER_GGML_TYPE_BF16 = 30,
    MINFER_GGML_TYPE_TQ1_0 = 34,
    MINFER_GGML_TYPE_TQ2_0 = 35,
    MINFER_GGML_TYPE_MXFP4 = 39,
    MINFER_GGML_TYPE_NVFP4 = 40,
    MINFER_GGML_TYPE_Q1_0 = 41,
    MINFER_GGML_TYPE_Q2_0 = 42,
    MINFER_GGML_TYPE_COUNT = 43 /* the ids minfer knows; ggml's own COUNT depends on its version */
};

/* An open GGUF file: opaque. */
struct minfer_gguf_context;

/* ggml's struct gguf_init_params, same layout. ctx is ggml's `struct ggml_context **`: minfer
 * creates no ggml tensors, so a non-NULL ctx is refused (init returns NULL, the error says why).
 * no_alloc is accepted either way: the tensor bytes stay in the file's mapping. */
struct minfer_gguf_init_params {
    bool no_alloc;
    void** ctx;
};

/* Open and verify one GGUF file (mapped, not read). NULL on any failure (the last error says
 * which: the loader's code, the file and the byte offset). A file of a split set opens as the one
 * file it is, as in ggml; minfer_gguf_init_from_split opens the whole set. */
MINFER_API struct minfer_gguf_context* minfer_gguf_init_from_file(const char* fname, struct minfer_gguf_init_params params) MINFER_NOEXCEPT;
/* Close a context; NULL and handles that are not open are ignored (the latter recorded as
 * invalid_handle). Every pointer the context gave out becomes invalid. */
MINFER_API void minfer_gguf_free(struct minfer_gguf_context* ctx) MINFER_NOEXCEPT;

/* "u8", "i8", …, "str", "arr", …, "f64" (ggml's names); NULL for a value outside the enum. */
MINFER_API const char* minfer_gguf_type_name(enum minfer_gguf_type type) MINFER_NOEXCEPT;

MINFER_API uint32_t minfer_gguf_get_version(const struct minfer_gguf_context* ctx) MINFER_NOEXCEPT;
MINFER_API size_t minfer_gguf_get_alignment(const struct minfer_gguf_context* ctx) MINFER_NOEXCEPT;
MINFER_API size_t minfer_gguf_get_data_offset(const struct minfer_gguf_context* ctx) MINFER_NOEXCEPT;

MINFER_API int64_t minfer_gguf_get_n_kv(const struct minfer_gguf_context* ctx) MINFER_NOEXCEPT;
/* The id of `key`, -1 when absent (recorded as key_not_found) or on a bad argument. */
MINFER_API int64_t minfer_gguf_find_key(const struct minfer_gguf_context* ctx, const char* key) MINFER_NOEXCEPT;
MINFER_API const char* minfer_gguf_get_key(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;

/* The value's type; MINFER_GGUF_TYPE_ARRAY for arrays. MINFER_GGUF_TYPE_COUNT on error. */
MINFER_API enum minfer_gguf_type minfer_gguf_get_kv_type(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
/* An array's element type; MINFER_GGUF_TYPE_COUNT on error (not an array: type_mismatch). */
MINFER_API enum minfer_gguf_type minfer_gguf_get_arr_type(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;

/* A scalar of exactly that type (ggml also answers for an array of exactly one element of that
 * type, and so do these). 0 / false / NULL with type_mismatch otherwise. */
MINFER_API uint8_t minfer_gguf_get_val_u8(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API int8_t minfer_gguf_get_val_i8(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API uint16_t minfer_gguf_get_val_u16(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API int16_t minfer_gguf_get_val_i16(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API uint32_t minfer_gguf_get_val_u32(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API int32_t minfer_gguf_get_val_i32(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API float minfer_gguf_get_val_f32(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API uint64_t minfer_gguf_get_val_u64(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API int64_t minfer_gguf_get_val_i64(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API double minfer_gguf_get_val_f64(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
MINFER_API bool minfer_gguf_get_val_bool(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
/* NUL-terminated (a string holding a NUL byte reads as its part before it, as in ggml). */
MINFER_API const char* minfer_gguf_get_val_str(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
/* The bytes of a fixed-size value (8-byte aligned); NULL for strings. */
MINFER_API const void* minfer_gguf_get_val_data(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
/* An array's element count (1 for a scalar, as in ggml); 0 on error. */
MINFER_API size_t minfer_gguf_get_arr_n(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
/* The elements of a fixed-size array (for a scalar: its value), 8-byte aligned; bools as one byte
 * each (0 or 1). NULL for strings (type_mismatch), as ggml aborts there. */
MINFER_API const void* minfer_gguf_get_arr_data(const struct minfer_gguf_context* ctx, int64_t key_id) MINFER_NOEXCEPT;
/* Item i of a string array (i = 0 of a string scalar, as in ggml); NULL when i >= the count
 * (index_out_of_range: ggml reads out of bounds there) or the value is not a string. */
MINFER_API const char* minfer_gguf_get_arr_str(const struct minfer_gguf_context* ctx, int64_t key_id, size_t i) MINFER_NOEXCEPT;

MINFER_API int64_t minfer_gguf_get_n_tensors(const struct minfer_gguf_context* ctx) MINFER_NOEXCEPT;
/* The id of tensor `name`, -1 when absent (recorded as tensor_not_found) or on a bad argument. */
MINFER_API int64_t minfer_gguf_find_tensor(const struct minfer_gguf_context* ctx, const char* name) MINFER_NOEXCEPT;
/* Offset of the tensor's bytes from the start of its file's data section. */
MINFER_API size_t minfer_gguf_get_tensor_offset(const struct minfer_gguf_context* ctx, int64_t tensor_id) MINFER_NOEXCEPT;
MINFER_API const char* minfer_gguf_get_tensor_name(const struct minfer_gguf_context* ctx, int64_t tensor_id) MINFER_NOEXCEPT;
/* MINFER_GGML_TYPE_COUNT on error. */
MINFER_API enum minfer_ggml_type minfer_gguf_get_tensor_type(const struct minfer_gguf_context* ctx, int64_t tensor_id) MINFER_NOEXCEPT;
/* ggml_nbytes of the tensor. */
MINFER_API size_t minfer_gguf_get_tensor_size(const struct minfer_gguf_context* ctx, int64_t tensor_id) MINFER_NOEXCEPT;

/* ---- beyond ggml ---- */

/* Open a model that may be a split set: given part 1 (<prefix>-00001-of-<N>.gguf with split.count
 * N > 1), every part is found beside it, opened and checked; tensor ids then run over all parts, in
 * part order. The metadata (kv ids, version, alignment, data offset) is part 1's. A single file
 * opens as with minfer_gguf_init_from_file; a later part of a set is refused (split_not_first). */
MINFER_API struct minfer_gguf_context* minfer_gguf_init_from_split(const char* fname, struct minfer_gguf_init_params params) MINFER_NOEXCEPT;
/* The number of files of the context (1 but for a set opened by minfer_gguf_init_from_split); 0 on error. */
MINFER_API int minfer_gguf_get_n_parts(const struct minfer_gguf_context* ctx) MINFER_NOEXCEPT;
/* The 0-based part whose file holds the tensor (0 for a single file); -1 on error. */
MINFER_API int minfer_gguf_get_tensor_part(const struct minfer_gguf_context* ctx, int64_t tensor_id) MINFER_NOEXCEPT;
/* The tensor's bytes (minfer_gguf_get_tensor_size of them) inside the file's mapping: valid until
 * minfer_gguf_free. NULL on error, and for a tensor of 0 bytes. */
MINFER_API const void* minfer_gguf_get_tensor_data(const struct minfer_gguf_context* ctx, int64_t tensor_id) MINFER_NOEXCEPT;
/* The tensor's element count (ne[0] * ne[1] * ne[2] * ne[3]); -1 on error. */
MINFER_API int64_t minfer_tensor_n_elements(const struct minfer_gguf_context* ctx, int64_t tensor_id) MINFER_NOEXCEPT;
/* The tensor's shape: ne[0..3] (unused dimensions are 1) into `ne`; its n_dims as stored, or -1 on error. */
MINFER_API int minfer_tensor_shape(const struct minfer_gguf_context* ctx, int64_t tensor_id, int64_t ne[4]) MINFER_NOEXCEPT;

/* Convert n_elements values of tensor type `ggml_type` from `src` (exactly the bytes that many
 * values take, src_size) into dst, bit for bit as ggml's to_float (f32 copied; f64, i8, i16, i32
 * converted as C does; q8_K too). n_elements must be a whole number of blocks. Returns n_elements,
 * or -1 with the error recorded (type_not_convertible, not_block_multiple, buffer_size_mismatch,
 * null_argument); on error dst is left alone. */
MINFER_API int64_t minfer_dequantize(int ggml_type, const void* src, size_t src_size, float* dst, int64_t n_elements) MINFER_NOEXCEPT;
/* Bytes that n_elements values of `ggml_type` take; 0 when the type has no conversion or the count
 * is not a whole number of blocks (recorded). */
MINFER_API size_t minfer_dequantize_src_size(int ggml_type, int64_t n_elements) MINFER_NOEXCEPT;
/* ggml's name of a tensor type ("f32", "q4_K", "iq2_xxs", …); NULL for an id outside the table. */
MINFER_API const char* minfer_ggml_type_name(int ggml_type) MINFER_NOEXCEPT;

/* ---- errors (per thread) ---- */

/* Codes of the C API itself (domain 7); the others are the libraries' codes (docs/ERRORS.md). */
#define MINFER_ERROR_OK 0
#define MINFER_ERROR_INVALID_HANDLE 0x0701    /* NULL, freed or foreign context handle */
#define MINFER_ERROR_NULL_ARGUMENT 0x0702     /* a required pointer argument is NULL */
#define MINFER_ERROR_UNSUPPORTED_PARAM 0x0703 /* init params minfer does not support (a ggml ctx) */
#define MINFER_ERROR_INTERNAL 0x0704          /* an unexpected C++ exception, caught at the boundary */
#define MINFER_ERROR_ID_OUT_OF_RANGE 0x0705   /* a key or tensor id outside [0, count) */

/* The last error's stable 16-bit code (0: none). */
MINFER_API int minfer_last_error_code(void) MINFER_NOEXCEPT;
/* Its snake-case name ("type_mismatch", "offset_mismatch", …); "ok" when none. Never NULL. */
MINFER_API const char* minfer_last_error_name(void) MINFER_NOEXCEPT;
/* Its full message (file, part, section, offset, what); "" when none. Never NULL. Valid until the
 * thread's next failing call or minfer_clear_error. */
MINFER_API const char* minfer_last_error_message(void) MINFER_NOEXCEPT;
/* The absolute byte offset in the file the error is about (0 when none). */
MINFER_API uint64_t minfer_last_error_offset(void) MINFER_NOEXCEPT;
MINFER_API void minfer_clear_error(void) MINFER_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* MINFER_H */
