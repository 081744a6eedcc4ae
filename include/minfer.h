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
/* A model being built for writing (minfer_writer_*): opaque. */
struct minfer_gguf_writer;
/* An error as data, for the functions with an error out-parameter (defined with the errors below). */
struct minfer_error;

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

/* ---- opening with an error out-parameter, and the verdict of a file ---- */

/* Flags of minfer_gguf_open and minfer_gguf_check_file. */
#define MINFER_OPEN_SPLIT 1u /* open the split set from part 1, as minfer_gguf_init_from_split */

/* minfer_gguf_init_from_file (flags 0) or minfer_gguf_init_from_split (MINFER_OPEN_SPLIT), with
 * the error also copied to `err` (may be NULL): on success err is "ok" (code 0), on failure the
 * thread's last error (as minfer_last_error). Unknown flag bits: NULL, unsupported_param. */
MINFER_API struct minfer_gguf_context* minfer_gguf_open(const char* fname, unsigned flags, struct minfer_error* err) MINFER_NOEXCEPT;
/* The loader's verdict on a file, which is not kept open: 0 when it accepts the file (the set, with
 * MINFER_OPEN_SPLIT), else the error code (truncated, bad_magic, split_not_first, io_error, …,
 * null_argument, unsupported_param for unknown flag bits), recorded as the last error and copied
 * to `err` when it is not NULL (err is "ok" on success). */
MINFER_API int minfer_gguf_check_file(const char* fname, unsigned flags, struct minfer_error* err) MINFER_NOEXCEPT;

/* ---- quantizing ---- */

/* Quantize n_rows rows of n_per_row floats from `src` into `dst` as ggml's
 * ggml_quantize_chunk(ggml_type, src, dst, 0, n_rows, n_per_row, imatrix) does, byte for byte.
 * `imatrix`: NULL or n_per_row importance weights (one per column, shared by every row). Writes
 * minfer_quantize_dst_size(ggml_type, n_rows, n_per_row) bytes (dst_size may be larger) and returns
 * that count; -1 on error, with dst untouched (the rows are quantized into a scratch buffer of the
 * output's size first): null_argument (src or dst NULL), type_not_quantizable (q8_1, q8_K,
 * integers, ids outside the table), importance_required (imatrix NULL for a type ggml refuses
 * without one: minfer_quantize_requires_imatrix), not_block_multiple (n_per_row not a positive
 * multiple of the type's block), buffer_size_mismatch (n_rows negative; dst_size too small:
 * expected = bytes needed, found = dst_size), size_overflow (n_rows * n_per_row values or their
 * bytes do not fit), quantize_failed (an input on which ggml asserts), out_of_memory. The error is
 * also copied to `err` when it is not NULL ("ok" on success). n_rows 0: returns 0. */
MINFER_API int64_t minfer_quantize(int ggml_type, const float* src, int64_t n_rows, int64_t n_per_row, const float* imatrix, void* dst, size_t dst_size, struct minfer_error* err) MINFER_NOEXCEPT;
/* The bytes minfer_quantize writes for n_rows rows of n_per_row values; 0 for n_rows 0 (not an
 * error) and on error (recorded: type_not_quantizable, not_block_multiple, buffer_size_mismatch for
 * a negative n_rows, size_overflow). */
MINFER_API size_t minfer_quantize_dst_size(int ggml_type, int64_t n_rows, int64_t n_per_row) MINFER_NOEXCEPT;
/* Whether ggml refuses to quantize `ggml_type` without importance weights
 * (ggml_quantize_requires_imatrix: iq2_xxs, iq2_xs, iq1_s); false for any other id. */
MINFER_API bool minfer_quantize_requires_imatrix(int ggml_type) MINFER_NOEXCEPT;

/* ---- writing a model ----
 *
 * A writer collects metadata (keys in the order they are first set) and tensors (in the order they
 * are added), then writes them as one GGUF v3 file: byte for byte what ggml's gguf_write_to_file
 * writes for the same content (alignment 32 unless general.alignment says otherwise). Each call
 * checks what it adds with the rules of the loader (a key that is empty; a bool other than 0 or 1; a
 * tensor name of 0 or 64+ bytes; a type, shape or byte size the loader would refuse) and refuses it
 * with that code, leaving the writer as it was; what depends on the whole model (two tensors of one
 * name: duplicate_tensor) is refused by minfer_writer_write. Setting a key that is already set
 * replaces its value where it is (ggml's gguf_set_* moves the key to the end).
 * Every function returns 0, or -1 with the error recorded (null_argument, invalid_handle for a
 * writer that minfer_writer_new did not return or that was freed, out_of_memory, the rules' codes).
 * A writer must not be used by two threads at once. */

/* A new, empty writer; NULL on out_of_memory. Free it with minfer_writer_free. */
MINFER_API struct minfer_gguf_writer* minfer_writer_new(void) MINFER_NOEXCEPT;
/* Free a writer; NULL is ignored, a handle that is not a live writer is refused (invalid_handle,
 * nothing freed). */
MINFER_API void minfer_writer_free(struct minfer_gguf_writer* w) MINFER_NOEXCEPT;

MINFER_API int minfer_writer_set_u8(struct minfer_gguf_writer* w, const char* key, uint8_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_i8(struct minfer_gguf_writer* w, const char* key, int8_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_u16(struct minfer_gguf_writer* w, const char* key, uint16_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_i16(struct minfer_gguf_writer* w, const char* key, int16_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_u32(struct minfer_gguf_writer* w, const char* key, uint32_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_i32(struct minfer_gguf_writer* w, const char* key, int32_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_f32(struct minfer_gguf_writer* w, const char* key, float val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_u64(struct minfer_gguf_writer* w, const char* key, uint64_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_i64(struct minfer_gguf_writer* w, const char* key, int64_t val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_f64(struct minfer_gguf_writer* w, const char* key, double val) MINFER_NOEXCEPT;
MINFER_API int minfer_writer_set_bool(struct minfer_gguf_writer* w, const char* key, bool val) MINFER_NOEXCEPT;
/* A NUL-terminated string (copied). */
MINFER_API int minfer_writer_set_str(struct minfer_gguf_writer* w, const char* key, const char* val) MINFER_NOEXCEPT;
/* An array of n fixed-size elements of `elem_type` (n * the type's size bytes, copied; bools one byte
 * each, 0 or 1). Strings and arrays are not fixed-size: bad_value_type, nested_array. data may be
 * NULL when n is 0. */
MINFER_API int minfer_writer_set_arr_data(struct minfer_gguf_writer* w, const char* key, enum minfer_gguf_type elem_type, const void* data, size_t n) MINFER_NOEXCEPT;
/* An array of n NUL-terminated strings (copied); strs may be NULL when n is 0. */
MINFER_API int minfer_writer_set_arr_str(struct minfer_gguf_writer* w, const char* key, const char* const* strs, size_t n) MINFER_NOEXCEPT;
/* Every kv of an open context, in its order, exactly as stored (ggml's gguf_set_kv; for a split set,
 * part 1's keys, split.* included). */
MINFER_API int minfer_writer_set_kv_from(struct minfer_gguf_writer* w, const struct minfer_gguf_context* src) MINFER_NOEXCEPT;

/* A tensor of ggml type `ggml_type` and shape ne[0..n_dims) whose `size` bytes are at `data`.
 * n_dims (0..4) is stored as given: ggml stores ggml_n_dims (no trailing 1s), so give that for
 * ggml's bytes. size must be the shape's byte size (data_truncated otherwise); data may be NULL when
 * size is 0. The buffer is BORROWED, not copied: it must stay valid and unchanged until the last
 * minfer_writer_write of this writer has returned (or the writer is freed). */
MINFER_API int minfer_writer_add_tensor(struct minfer_gguf_writer* w, const char* name, int ggml_type, int n_dims, const int64_t* ne, const void* data, size_t size) MINFER_NOEXCEPT;
/* Fills dst with the n bytes of the tensor at [offset, offset + n); returns 0, or anything else to
 * abort the write. */
typedef int (*minfer_tensor_read_fn)(void* user, uint64_t offset, void* dst, size_t n);
/* A tensor whose `size` bytes come from `read`, called during each minfer_writer_write with
 * consecutive chunks (offsets increasing from 0 to size, at most 4 MiB each). A non-zero return
 * aborts the write: callback_failed (naming the tensor; found = the value returned) and nothing is
 * left at the path. `user` is passed back as is. */
MINFER_API int minfer_writer_add_tensor_cb(struct minfer_gguf_writer* w, const char* name, int ggml_type, int n_dims, const int64_t* ne, size_t size, minfer_tensor_read_fn read, void* user) MINFER_NOEXCEPT;

/* Flag of minfer_writer_write. */
#define MINFER_WRITE_REPLACE 1u /* replace an existing regular file at the path */

/* Write the model to `path` atomically: into an unnamed temporary (O_TMPFILE) in the same
 * directory, its head read back and verified by the loader, fsync'ed and given the name `path` (then
 * the directory fsync'ed). The path holds the complete new file or what it held before, whatever
 * happens (an error, a full disk, a kill), and no temporary is left (where the filesystem has no
 * O_TMPFILE the temporary is named `<path>.tmp.<random>`: removed on any error, left by a kill).
 * Callbacks run on the calling thread. An existing file is refused (io_error EEXIST) unless flags has
 * MINFER_WRITE_REPLACE; a directory, FIFO or device is never replaced (output_not_regular). Errors:
 * the rules' codes (duplicate_tensor, …), io_error (the operation and errno in the message),
 * callback_failed, out_of_memory, unsupported_param (unknown flag bits). The error is also copied to
 * `err` when it is not NULL ("ok" on success). The writer stays usable: it may be written again. */
MINFER_API int minfer_writer_write(struct minfer_gguf_writer* w, const char* path, unsigned flags, struct minfer_error* err) MINFER_NOEXCEPT;

/* ---- errors (per thread) ---- */

/* Codes of the C API itself (domain 7); the others are the libraries' codes (docs/ERRORS.md). */
#define MINFER_ERROR_OK 0
#define MINFER_ERROR_INVALID_HANDLE 0x0701    /* NULL, freed or foreign context or writer handle */
#define MINFER_ERROR_NULL_ARGUMENT 0x0702     /* a required pointer argument is NULL */
#define MINFER_ERROR_UNSUPPORTED_PARAM 0x0703 /* init params minfer does not support (a ggml ctx), unknown flag bits */
#define MINFER_ERROR_INTERNAL 0x0704          /* an unexpected C++ exception, caught at the boundary */
#define MINFER_ERROR_ID_OUT_OF_RANGE 0x0705   /* a key or tensor id outside [0, count) */
#define MINFER_ERROR_CALLBACK_FAILED 0x0706   /* a tensor's read callback returned non-zero */

/* An error as data: what minfer_last_error copies and the error out-parameters receive. */
struct minfer_error {
    int code;           /* the stable 16-bit code (MINFER_ERROR_OK: none) */
    char name[64];      /* its snake-case name ("truncated", "offset_mismatch"); "ok" when none */
    char domain[16];    /* the library that owns the code: "loader", "gguf_write", "quant", "capi"; "" when none */
    uint64_t offset;    /* the absolute byte offset in the file the error is about (0 when none) */
    uint64_t expected;  /* what the rule wanted: its meaning depends on the code (docs/ERRORS.md) */
    uint64_t found;     /* what was there instead (docs/ERRORS.md) */
    char message[1024]; /* the full message (file, part, section, offset, what), cut to fit, always NUL-terminated */
};

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
/* The thread's last error, copied into *out (code 0 and name "ok" when none); NULL out is ignored. */
MINFER_API void minfer_last_error(struct minfer_error* out) MINFER_NOEXCEPT;
/* The snake-case name of any code the C API can record (its own, the loader's, the writer's and the
 * quantizer's: docs/ERRORS.md), "ok" for 0; NULL for a number no library defines. The text is the
 * thread's, valid until its next call of this function. */
MINFER_API const char* minfer_error_name(int code) MINFER_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* MINFER_H */
