/* print_gguf: one C99 program written against ggml's gguf.h API (ggml's names), built twice:
 *   - against minfer through <minfer/ggml_compat.h> (the default), and
 *   - with -DPRINT_GGUF_GGML against llama.cpp's libggml-base.so, loaded with dlopen from the path
 *     given as the first argument (the declarations below are our own, written from gguf.h's
 *     public prototypes; ggml's header is not copied).
 * Both print everything ggml's reading API says about a file: tests/capi/test_capi.cpp (real files) and test_capi_ggml.cpp
 * runs them on every real fixture and compares the outputs byte for byte.
 *
 *   print_gguf [LIBGGML_BASE (ggml build only)] FILE...         each file, or "refused"; several
 *                                files each start with a "file: PATH" line; exit 1 if any was refused
 *   print_gguf --misuse FILE     (minfer build only) every getter with the wrong type, ids out of
 *                                range, NULL and freed handles: what ggml aborts on; prints the
 *                                neutral results and error names, exits 0 when it gets to the end
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PRINT_GGUF_GGML
#include <dlfcn.h>

/* ggml's gguf.h, the reading part: enums and the params struct as gguf.h declares them. */
enum gguf_type {
    GGUF_TYPE_UINT8 = 0,
    GGUF_TYPE_INT8 = 1,
    GGUF_TYPE_UINT16 = 2,
    GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4,
    GGUF_TYPE_INT32 = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8,
    GGUF_TYPE_ARRAY = 9,
    GGUF_TYPE_UINT64 = 10,
    GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT
};
enum ggml_type { GGML_TYPE_F32 = 0 }; /* the tag only: the program prints type ids as numbers */
struct gguf_context;
struct ggml_context;
struct gguf_init_params {
    bool no_alloc;
    struct ggml_context** ctx;
};

/* Each function as a pointer of ggml's signature under ggml's name, so that the body below is the
 * same text in both builds. */
#define GGUF_FUNCTIONS(X)                                                                           \
    X(struct gguf_context*, gguf_init_from_file, (const char*, struct gguf_init_params))          \
    X(void, gguf_free, (struct gguf_context*))                                                     \
    X(const char*, gguf_type_name, (enum gguf_type))                                                \
    X(uint32_t, gguf_get_version, (const struct gguf_context*))                                     \
    X(size_t, gguf_get_alignment, (const struct gguf_context*))                                     \
    X(size_t, gguf_get_data_offset, (const struct gguf_context*))                                   \
    X(int64_t, gguf_get_n_kv, (const struct gguf_context*))                                         \
    X(int64_t, gguf_find_key, (const struct gguf_context*, const char*))                            \
    X(const char*, gguf_get_key, (const struct gguf_context*, int64_t))                             \
    X(enum gguf_type, gguf_get_kv_type, (const struct gguf_context*, int64_t))                      \
    X(enum gguf_type, gguf_get_arr_type, (const struct gguf_context*, int64_t))                     \
    X(uint8_t, gguf_get_val_u8, (const struct gguf_context*, int64_t))                              \
    X(int8_t, gguf_get_val_i8, (const struct gguf_context*, int64_t))                               \
    X(uint16_t, gguf_get_val_u16, (const struct gguf_context*, int64_t))                            \
    X(int16_t, gguf_get_val_i16, (const struct gguf_context*, int64_t))                             \
    X(uint32_t, gguf_get_val_u32, (const struct gguf_context*, int64_t))                            \
    X(int32_t, gguf_get_val_i32, (const struct gguf_context*, int64_t))                             \
    X(float, gguf_get_val_f32, (const struct gguf_context*, int64_t))                               \
    X(uint64_t, gguf_get_val_u64, (const struct gguf_context*, int64_t))                            \
    X(int64_t, gguf_get_val_i64, (const struct gguf_context*, int64_t))                             \
    X(double, gguf_get_val_f64, (const struct gguf_context*, int64_t))                              \
    X(bool, gguf_get_val_bool, (const struct gguf_context*, int64_t))                               \
    X(const char*, gguf_get_val_str, (const struct gguf_context*, int64_t))                         \
    X(const void*, gguf_get_val_data, (const struct gguf_context*, int64_t))                        \
    X(size_t, gguf_get_arr_n, (const struct gguf_context*, int64_t))                                \
    X(const void*, gguf_get_arr_data, (const struct gguf_context*, int64_t))                        \
    X(const char*, gguf_get_arr_str, (const struct gguf_context*, int64_t, size_t))                 \
    X(int64_t, gguf_get_n_tensors, (const struct gguf_context*))                                    \
    X(int64_t, gguf_find_tensor, (const struct gguf_context*, const char*))                         \
    X(size_t, gguf_get_tensor_offset, (const struct gguf_context*, int64_t))                        \
    X(const char*, gguf_get_tensor_name, (const struct gguf_context*, int64_t))                     \
    X(enum ggml_type, gguf_get_tensor_type, (const struct gguf_context*, int64_t))                  \
    X(size_t, gguf_get_tensor_size, (const struct gguf_context*, int64_t))

#define DECLARE(ret, name, args) static ret(*name) args;
GGUF_FUNCTIONS(DECLARE)

static int bind_ggml(const char* path) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "print_gguf: cannot load %s: %s\n", path, dlerror());
        return 0;
    }
    /* memcpy, not a cast: ISO C has no conversion from void* to a function pointer. */
#define BIND(ret, name, args)                                                 \
    {                                                                         \
        void* sym = dlsym(lib, #name);                                        \
        if (sym == NULL) {                                                    \
            fprintf(stderr, "print_gguf: %s has no %s\n", path, #name);       \
            return 0;                                                         \
        }                                                                     \
        memcpy(&name, &sym, sizeof name);                                     \
    }
    GGUF_FUNCTIONS(BIND)
    return 1;
}
#else
#include <minfer/ggml_compat.h>
#endif

/* A string as printable ASCII: bytes outside 0x20..0x7e (and the backslash) as \xNN. */
static void print_text(const char* s) {
    if (s == NULL) {
        fputs("(null)", stdout);
        return;
    }
    for (; *s != '\0'; ++s) {
        const unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c > 0x7e || c == '\\') printf("\\x%02x", c);
        else putchar(c);
    }
}

/* Element i of a fixed-size array (or a scalar's value, i = 0) from its raw bytes. */
static void print_element(enum gguf_type t, const void* data, size_t i) {
    const unsigned char* p = (const unsigned char*)data;
    switch (t) {
        case GGUF_TYPE_UINT8: printf("%u", (unsigned)((const uint8_t*)p)[i]); break;
        case GGUF_TYPE_INT8: printf("%d", (int)((const int8_t*)p)[i]); break;
        case GGUF_TYPE_UINT16: printf("%u", (unsigned)((const uint16_t*)p)[i]); break;
        case GGUF_TYPE_INT16: printf("%d", (int)((const int16_t*)p)[i]); break;
        case GGUF_TYPE_UINT32: printf("%" PRIu32, ((const uint32_t*)p)[i]); break;
        case GGUF_TYPE_INT32: printf("%" PRId32, ((const int32_t*)p)[i]); break;
        case GGUF_TYPE_FLOAT32: printf("%.9g", (double)((const float*)p)[i]); break;
        case GGUF_TYPE_BOOL: printf("%d", (int)((const int8_t*)p)[i]); break; /* stored as int8 (gguf.h) */
        case GGUF_TYPE_UINT64: printf("%" PRIu64, ((const uint64_t*)p)[i]); break;
        case GGUF_TYPE_INT64: printf("%" PRId64, ((const int64_t*)p)[i]); break;
        case GGUF_TYPE_FLOAT64: printf("%.17g", ((const double*)p)[i]); break;
        default: printf("?"); break;
    }
}

static void print_scalar(const struct gguf_context* ctx, int64_t id, enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: printf("%u", (unsigned)gguf_get_val_u8(ctx, id)); break;
        case GGUF_TYPE_INT8: printf("%d", (int)gguf_get_val_i8(ctx, id)); break;
        case GGUF_TYPE_UINT16: printf("%u", (unsigned)gguf_get_val_u16(ctx, id)); break;
        case GGUF_TYPE_INT16: printf("%d", (int)gguf_get_val_i16(ctx, id)); break;
        case GGUF_TYPE_UINT32: printf("%" PRIu32, gguf_get_val_u32(ctx, id)); break;
        case GGUF_TYPE_INT32: printf("%" PRId32, gguf_get_val_i32(ctx, id)); break;
        case GGUF_TYPE_FLOAT32: printf("%.9g", (double)gguf_get_val_f32(ctx, id)); break;
        case GGUF_TYPE_BOOL: printf("%s", gguf_get_val_bool(ctx, id) ? "true" : "false"); break;
        case GGUF_TYPE_UINT64: printf("%" PRIu64, gguf_get_val_u64(ctx, id)); break;
        case GGUF_TYPE_INT64: printf("%" PRId64, gguf_get_val_i64(ctx, id)); break;
        case GGUF_TYPE_FLOAT64: printf("%.17g", gguf_get_val_f64(ctx, id)); break;
        case GGUF_TYPE_STRING:
            putchar('"');
            print_text(gguf_get_val_str(ctx, id));
            putchar('"');
            break;
        default: printf("?"); break;
    }
    if (t != GGUF_TYPE_STRING) { /* the same value through its raw bytes */
        printf(" (data ");
        print_element(t, gguf_get_val_data(ctx, id), 0);
        printf(")");
    }
}

static void print_file(const struct gguf_context* ctx) {
    const int64_t n_kv = gguf_get_n_kv(ctx);
    const int64_t n_tensors = gguf_get_n_tensors(ctx);
    int64_t i;
    printf("version: %" PRIu32 "\n", gguf_get_version(ctx));
    printf("alignment: %zu\n", gguf_get_alignment(ctx));
    printf("data_offset: %zu\n", gguf_get_data_offset(ctx));
    printf("n_kv: %" PRId64 "\n", n_kv);
    for (i = 0; i < n_kv; ++i) {
        const char* key = gguf_get_key(ctx, i);
        const enum gguf_type t = gguf_get_kv_type(ctx, i);
        printf("kv %" PRId64 ": ", i);
        print_text(key);
        printf(" [find %" PRId64 "] %s", gguf_find_key(ctx, key), gguf_type_name(t));
        if (t == GGUF_TYPE_ARRAY) {
            const enum gguf_type et = gguf_get_arr_type(ctx, i);
            const size_t n = gguf_get_arr_n(ctx, i);
            size_t j;
            printf("[%s, %zu] =", gguf_type_name(et), n);
            if (et == GGUF_TYPE_STRING) {
                for (j = 0; j < n; ++j) {
                    printf(" \"");
                    print_text(gguf_get_arr_str(ctx, i, j));
                    printf("\"");
                }
            } else {
                const void* data = gguf_get_arr_data(ctx, i);
                for (j = 0; j < n; ++j) {
                    putchar(' ');
                    print_element(et, data, j);
                }
            }
        } else {
            printf(" (n %zu) = ", gguf_get_arr_n(ctx, i));
            print_scalar(ctx, i, t);
        }
        putchar('\n');
    }
    printf("find_key(no.such.key): %" PRId64 "\n", gguf_find_key(ctx, "no.such.key"));
    printf("n_tensors: %" PRId64 "\n", n_tensors);
    for (i = 0; i < n_tensors; ++i) {
        const char* name = gguf_get_tensor_name(ctx, i);
        printf("tensor %" PRId64 ": ", i);
        print_text(name);
        printf(" [find %" PRId64 "] type %d offset %zu size %zu\n", gguf_find_tensor(ctx, name),
               (int)gguf_get_tensor_type(ctx, i), gguf_get_tensor_offset(ctx, i), gguf_get_tensor_size(ctx, i));
    }
    printf("find_tensor(no.such.tensor): %" PRId64 "\n", gguf_find_tensor(ctx, "no.such.tensor"));
}

#ifndef PRINT_GGUF_GGML
/* What ggml aborts on (or reads out of bounds for), each with the neutral result and the error. */
static void said(const char* what) {
    printf("  %s -> %s\n", what, minfer_last_error_name());
    minfer_clear_error();
}

static void misuse_kv(const struct gguf_context* ctx, int64_t id) {
    const enum gguf_type t = gguf_get_kv_type(ctx, id);
    const bool one = gguf_get_arr_n(ctx, id) == 1;
    enum gguf_type et = t == GGUF_TYPE_ARRAY ? gguf_get_arr_type(ctx, id) : t;
    minfer_clear_error();
    printf("kv %" PRId64 ":\n", id);
    /* every getter of another type (or of an array of other than one element) */
    if (et != GGUF_TYPE_UINT8 || !one) { printf("  u8 %u", (unsigned)gguf_get_val_u8(ctx, id)); said(""); }
    if (et != GGUF_TYPE_INT8 || !one) { printf("  i8 %d", (int)gguf_get_val_i8(ctx, id)); said(""); }
    if (et != GGUF_TYPE_UINT16 || !one) { printf("  u16 %u", (unsigned)gguf_get_val_u16(ctx, id)); said(""); }
    if (et != GGUF_TYPE_INT16 || !one) { printf("  i16 %d", (int)gguf_get_val_i16(ctx, id)); said(""); }
    if (et != GGUF_TYPE_UINT32 || !one) { printf("  u32 %" PRIu32, gguf_get_val_u32(ctx, id)); said(""); }
    if (et != GGUF_TYPE_INT32 || !one) { printf("  i32 %" PRId32, gguf_get_val_i32(ctx, id)); said(""); }
    if (et != GGUF_TYPE_FLOAT32 || !one) { printf("  f32 %g", (double)gguf_get_val_f32(ctx, id)); said(""); }
    if (et != GGUF_TYPE_UINT64 || !one) { printf("  u64 %" PRIu64, gguf_get_val_u64(ctx, id)); said(""); }
    if (et != GGUF_TYPE_INT64 || !one) { printf("  i64 %" PRId64, gguf_get_val_i64(ctx, id)); said(""); }
    if (et != GGUF_TYPE_FLOAT64 || !one) { printf("  f64 %g", gguf_get_val_f64(ctx, id)); said(""); }
    if (et != GGUF_TYPE_BOOL || !one) { printf("  bool %d", (int)gguf_get_val_bool(ctx, id)); said(""); }
    if (et != GGUF_TYPE_STRING || !one) { printf("  str %s", gguf_get_val_str(ctx, id) == NULL ? "NULL" : "?"); said(""); }
    if (et == GGUF_TYPE_STRING || !one) { printf("  val_data %s", gguf_get_val_data(ctx, id) == NULL ? "NULL" : "?"); said(""); }
    if (t != GGUF_TYPE_ARRAY) { printf("  arr_type %d", (int)gguf_get_arr_type(ctx, id)); said(""); }
    if (et == GGUF_TYPE_STRING) {
        printf("  arr_data %s", gguf_get_arr_data(ctx, id) == NULL ? "NULL" : "?");
        said("");
        printf("  arr_str[n] %s", gguf_get_arr_str(ctx, id, gguf_get_arr_n(ctx, id)) == NULL ? "NULL" : "?");
        said("");
        printf("  arr_str[SIZE_MAX] %s", gguf_get_arr_str(ctx, id, SIZE_MAX) == NULL ? "NULL" : "?");
        said("");
    } else {
        printf("  arr_str[0] %s", gguf_get_arr_str(ctx, id, 0) == NULL ? "NULL" : "?");
        said("");
    }
}

static void misuse_ids(const struct gguf_context* ctx) {
    const int64_t bad[] = {-1, gguf_get_n_kv(ctx), gguf_get_n_tensors(ctx), INT64_MAX, INT64_MIN};
    size_t k;
    for (k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        const int64_t id = bad[k];
        if (id >= 0 && id < gguf_get_n_kv(ctx)) continue;
        printf("key id %" PRId64 ":\n", id);
        printf("  key %s", gguf_get_key(ctx, id) == NULL ? "NULL" : "?"); said("");
        printf("  kv_type %d", (int)gguf_get_kv_type(ctx, id)); said("");
        printf("  arr_type %d", (int)gguf_get_arr_type(ctx, id)); said("");
        printf("  u32 %" PRIu32, gguf_get_val_u32(ctx, id)); said("");
        printf("  str %s", gguf_get_val_str(ctx, id) == NULL ? "NULL" : "?"); said("");
        printf("  val_data %s", gguf_get_val_data(ctx, id) == NULL ? "NULL" : "?"); said("");
        printf("  arr_n %zu", gguf_get_arr_n(ctx, id)); said("");
        printf("  arr_data %s", gguf_get_arr_data(ctx, id) == NULL ? "NULL" : "?"); said("");
        printf("  arr_str %s", gguf_get_arr_str(ctx, id, 0) == NULL ? "NULL" : "?"); said("");
    }
    for (k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        const int64_t id = bad[k];
        if (id >= 0 && id < gguf_get_n_tensors(ctx)) continue;
        printf("tensor id %" PRId64 ":\n", id);
        printf("  name %s", gguf_get_tensor_name(ctx, id) == NULL ? "NULL" : "?"); said("");
        printf("  type %d", (int)gguf_get_tensor_type(ctx, id)); said("");
        printf("  offset %zu", gguf_get_tensor_offset(ctx, id)); said("");
        printf("  size %zu", gguf_get_tensor_size(ctx, id)); said("");
        printf("  data %s", minfer_gguf_get_tensor_data(ctx, id) == NULL ? "NULL" : "?"); said("");
        printf("  n_elements %" PRId64, minfer_tensor_n_elements(ctx, id)); said("");
    }
    printf("find_key(NULL) %" PRId64, gguf_find_key(ctx, NULL)); said("");
    printf("find_tensor(NULL) %" PRId64, gguf_find_tensor(ctx, NULL)); said("");
    /* ggml answers NULL here too (no abort): not an error */
    printf("type_name(99) %s\n", gguf_type_name((enum gguf_type)99) == NULL ? "NULL" : "?");
    printf("type_name(-1) %s\n", gguf_type_name((enum gguf_type)-1) == NULL ? "NULL" : "?");
}

/* A NULL context, and a freed one (the handle is checked against the open contexts, never read). */
static void misuse_handle(const struct gguf_context* ctx, const char* what) {
    printf("%s handle:\n", what);
    printf("  version %" PRIu32, gguf_get_version(ctx)); said("");
    printf("  alignment %zu", gguf_get_alignment(ctx)); said("");
    printf("  data_offset %zu", gguf_get_data_offset(ctx)); said("");
    printf("  n_kv %" PRId64, gguf_get_n_kv(ctx)); said("");
    printf("  find_key %" PRId64, gguf_find_key(ctx, "general.architecture")); said("");
    printf("  key %s", gguf_get_key(ctx, 0) == NULL ? "NULL" : "?"); said("");
    printf("  n_tensors %" PRId64, gguf_get_n_tensors(ctx)); said("");
    printf("  tensor_name %s", gguf_get_tensor_name(ctx, 0) == NULL ? "NULL" : "?"); said("");
}

static int misuse(const char* path) {
    struct ggml_context* ggml_ctx = NULL;
    struct gguf_init_params with_ctx;
    struct gguf_init_params params;
    struct gguf_context* ctx;
    int64_t i;
    with_ctx.no_alloc = true;
    with_ctx.ctx = (void**)&ggml_ctx; /* ggml would create tensors: minfer refuses */
    printf("init with ctx %s", gguf_init_from_file(path, with_ctx) == NULL ? "NULL" : "?");
    said("");
    params.no_alloc = true;
    params.ctx = NULL;
    printf("init NULL path %s", gguf_init_from_file(NULL, params) == NULL ? "NULL" : "?");
    said("");
    ctx = gguf_init_from_file(path, params);
    if (ctx == NULL) {
        printf("refused: %s\n", minfer_last_error_name());
    } else {
        for (i = 0; i < gguf_get_n_kv(ctx); ++i) misuse_kv(ctx, i);
        misuse_ids(ctx);
    }
    misuse_handle(NULL, "NULL");
    gguf_free(NULL);
    if (ctx != NULL) {
        const struct gguf_context* freed = ctx;
        gguf_free(ctx);
        misuse_handle(freed, "freed");
        gguf_free(ctx); /* twice: refused as a handle that is not open */
        said("second free");
    }
    printf("misuse: done\n");
    return 0;
}
#endif

/* Prints one file (with a "file: PATH" line first when several are given); 0 when it opened. */
static int print_path(const char* path, bool named) {
    struct gguf_init_params params;
    struct gguf_context* ctx;
    params.no_alloc = true;
    params.ctx = NULL;
    if (named) printf("file: %s\n", path);
    ctx = gguf_init_from_file(path, params);
    if (ctx == NULL) {
        printf("refused\n");
        return 1;
    }
    print_file(ctx);
    gguf_free(ctx);
    return 0;
}

int main(int argc, char** argv) {
    int first, i, status = 0;
#ifdef PRINT_GGUF_GGML
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIBGGML_BASE FILE...\n", argv[0]);
        return 2;
    }
    if (!bind_ggml(argv[1])) return 3;
    first = 2;
#else
    if (argc == 3 && strcmp(argv[1], "--misuse") == 0) return misuse(argv[2]);
    if (argc < 2) {
        fprintf(stderr, "usage: %s [--misuse] FILE...\n", argv[0]);
        return 2;
    }
    first = 1;
#endif
    /* Several files in one process: the tests print hundreds of synthetic and hostile files. */
    for (i = first; i < argc; ++i) status |= print_path(argv[i], argc - first > 1);
    return status;
}
