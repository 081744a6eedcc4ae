/* minfer/ggml_compat.h: ggml's gguf.h reading API, by ggml's names, on minfer (libminfer.so).
 *
 * A C program written for ggml's gguf.h compiles unchanged with
 *     #include <minfer/ggml_compat.h>
 * instead of #include "gguf.h", links -lminfer instead of ggml, and reads every file ggml accepts
 * the same way; where ggml aborts (a wrong-typed getter, an id out of range) it gets a neutral value
 * and minfer_last_error_message() says why. The names are macros onto minfer.h's functions and
 * types, so a ggml symbol is never defined: this header and ggml's own headers must not be used in
 * the same translation unit (the macros would rename ggml's declarations).
 *
 * Not provided: ggml's writing functions (gguf_init_empty, gguf_set_*, gguf_write_to_file, …),
 * gguf_get_tensor_ne and the rest of ggml.h (ggml_type_name: use minfer_ggml_type_name).
 * gguf_init_params.ctx must be NULL (minfer creates no ggml tensors).
 */
#ifndef MINFER_GGML_COMPAT_H
#define MINFER_GGML_COMPAT_H

#include "minfer.h"

#define GGUF_MAGIC "GGUF"
#define GGUF_VERSION 3
#define GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"
#define GGUF_DEFAULT_ALIGNMENT 32

/* Types: `enum gguf_type`, `struct gguf_context`, `struct gguf_init_params`, `enum ggml_type`. */
#define gguf_type minfer_gguf_type
#define gguf_context minfer_gguf_context
#define gguf_init_params minfer_gguf_init_params
#define ggml_type minfer_ggml_type
/* ggml's `struct ggml_context ** ctx` member is minfer's `void ** ctx`: NULL (the only value
 * minfer accepts) reads the same; the tag is declared for programs that name it. */
struct ggml_context;

#define GGUF_TYPE_UINT8 MINFER_GGUF_TYPE_UINT8
#define GGUF_TYPE_INT8 MINFER_GGUF_TYPE_INT8
#define GGUF_TYPE_UINT16 MINFER_GGUF_TYPE_UINT16
#define GGUF_TYPE_INT16 MINFER_GGUF_TYPE_INT16
#define GGUF_TYPE_UINT32 MINFER_GGUF_TYPE_UINT32
#define GGUF_TYPE_INT32 MINFER_GGUF_TYPE_INT32
#define GGUF_TYPE_FLOAT32 MINFER_GGUF_TYPE_FLOAT32
#define GGUF_TYPE_BOOL MINFER_GGUF_TYPE_BOOL
#define GGUF_TYPE_STRING MINFER_GGUF_TYPE_STRING
#define GGUF_TYPE_ARRAY MINFER_GGUF_TYPE_ARRAY
#define GGUF_TYPE_UINT64 MINFER_GGUF_TYPE_UINT64
#define GGUF_TYPE_INT64 MINFER_GGUF_TYPE_INT64
#define GGUF_TYPE_FLOAT64 MINFER_GGUF_TYPE_FLOAT64
#define GGUF_TYPE_COUNT MINFER_GGUF_TYPE_COUNT

/* ggml's tensor type ids (GGML_TYPE_COUNT is left out: ggml's own value depends on its version). */
#define GGML_TYPE_F32 MINFER_GGML_TYPE_F32
#define GGML_TYPE_F16 MINFER_GGML_TYPE_F16
#define GGML_TYPE_Q4_0 MINFER_GGML_TYPE_Q4_0
#define GGML_TYPE_Q4_1 MINFER_GGML_TYPE_Q4_1
#define GGML_TYPE_Q5_0 MINFER_GGML_TYPE_Q5_0
#define GGML_TYPE_Q5_1 MINFER_GGML_TYPE_Q5_1
#define GGML_TYPE_Q8_0 MINFER_GGML_TYPE_Q8_0
#define GGML_TYPE_Q8_1 MINFER_GGML_TYPE_Q8_1
#define GGML_TYPE_Q2_K MINFER_GGML_TYPE_Q2_K
#define GGML_TYPE_Q3_K MINFER_GGML_TYPE_Q3_K
#define GGML_TYPE_Q4_K MINFER_GGML_TYPE_Q4_K
#define GGML_TYPE_Q5_K MINFER_GGML_TYPE_Q5_K
#define GGML_TYPE_Q6_K MINFER_GGML_TYPE_Q6_K
#define GGML_TYPE_Q8_K MINFER_GGML_TYPE_Q8_K
#define GGML_TYPE_IQ2_XXS MINFER_GGML_TYPE_IQ2_XXS
#define GGML_TYPE_IQ2_XS MINFER_GGML_TYPE_IQ2_XS
#define GGML_TYPE_IQ3_XXS MINFER_GGML_TYPE_IQ3_XXS
#define GGML_TYPE_IQ1_S MINFER_GGML_TYPE_IQ1_S
#define GGML_TYPE_IQ4_NL MINFER_GGML_TYPE_IQ4_NL
#define GGML_TYPE_IQ3_S MINFER_GGML_TYPE_IQ3_S
#define GGML_TYPE_IQ2_S MINFER_GGML_TYPE_IQ2_S
#define GGML_TYPE_IQ4_XS MINFER_GGML_TYPE_IQ4_XS
#define GGML_TYPE_I8 MINFER_GGML_TYPE_I8
#define GGML_TYPE_I16 MINFER_GGML_TYPE_I16
#define GGML_TYPE_I32 MINFER_GGML_TYPE_I32
#define GGML_TYPE_I64 MINFER_GGML_TYPE_I64
#define GGML_TYPE_F64 MINFER_GGML_TYPE_F64
#define GGML_TYPE_IQ1_M MINFER_GGML_TYPE_IQ1_M
#define GGML_TYPE_BF16 MINFER_GGML_TYPE_BF16
#define GGML_TYPE_TQ1_0 MINFER_GGML_TYPE_TQ1_0
#define GGML_TYPE_TQ2_0 MINFER_GGML_TYPE_TQ2_0
#define GGML_TYPE_MXFP4 MINFER_GGML_TYPE_MXFP4

/* The functions. */
#define gguf_init_from_file minfer_gguf_init_from_file
#define gguf_free minfer_gguf_free
#define gguf_type_name minfer_gguf_type_name
#define gguf_get_version minfer_gguf_get_version
#define gguf_get_alignment minfer_gguf_get_alignment
#define gguf_get_data_offset minfer_gguf_get_data_offset
#define gguf_get_n_kv minfer_gguf_get_n_kv
#define gguf_find_key minfer_gguf_find_key
#define gguf_get_key minfer_gguf_get_key
#define gguf_get_kv_type minfer_gguf_get_kv_type
#define gguf_get_arr_type minfer_gguf_get_arr_type
#define gguf_get_val_u8 minfer_gguf_get_val_u8
#define gguf_get_val_i8 minfer_gguf_get_val_i8
#define gguf_get_val_u16 minfer_gguf_get_val_u16
#define gguf_get_val_i16 minfer_gguf_get_val_i16
#define gguf_get_val_u32 minfer_gguf_get_val_u32
#define gguf_get_val_i32 minfer_gguf_get_val_i32
#define gguf_get_val_f32 minfer_gguf_get_val_f32
#define gguf_get_val_u64 minfer_gguf_get_val_u64
#define gguf_get_val_i64 minfer_gguf_get_val_i64
#define gguf_get_val_f64 minfer_gguf_get_val_f64
#define gguf_get_val_bool minfer_gguf_get_val_bool
#define gguf_get_val_str minfer_gguf_get_val_str
#define gguf_get_val_data minfer_gguf_get_val_data
#define gguf_get_arr_n minfer_gguf_get_arr_n
#define gguf_get_arr_data minfer_gguf_get_arr_data
#define gguf_get_arr_str minfer_gguf_get_arr_str
#define gguf_get_n_tensors minfer_gguf_get_n_tensors
#define gguf_find_tensor minfer_gguf_find_tensor
#define gguf_get_tensor_offset minfer_gguf_get_tensor_offset
#define gguf_get_tensor_name minfer_gguf_get_tensor_name
#define gguf_get_tensor_type minfer_gguf_get_tensor_type
#define gguf_get_tensor_size minfer_gguf_get_tensor_size

#endif /* MINFER_GGML_COMPAT_H */
