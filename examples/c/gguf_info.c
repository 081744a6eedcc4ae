/* gguf_info: print a GGUF model the way `minfer info` does (its header, metadata and tensor table),
 * through minfer's C API. A split set is opened from its first part.
 *
 *   cc -std=c99 gguf_info.c $(pkg-config --cflags --libs minfer) -o gguf_info
 *   ./gguf_info MODEL.gguf
 *
 * Exit status: 0 printed, 1 the file was refused (the reason is printed), 2 usage. */
#include <minfer.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* An array's first items, or a scalar's value, in a short form. */
static void print_value(const struct minfer_gguf_context* ctx, int64_t id, enum minfer_gguf_type type, size_t i) {
    switch (type) {
        case MINFER_GGUF_TYPE_UINT8: printf("%u", (unsigned)((const uint8_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_INT8: printf("%d", (int)((const int8_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_UINT16: printf("%u", (unsigned)((const uint16_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_INT16: printf("%d", (int)((const int16_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_UINT32: printf("%" PRIu32, ((const uint32_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_INT32: printf("%" PRId32, ((const int32_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_UINT64: printf("%" PRIu64, ((const uint64_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_INT64: printf("%" PRId64, ((const int64_t*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_FLOAT32: printf("%g", (double)((const float*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_FLOAT64: printf("%g", ((const double*)minfer_gguf_get_arr_data(ctx, id))[i]); break;
        case MINFER_GGUF_TYPE_BOOL: printf("%s", ((const uint8_t*)minfer_gguf_get_arr_data(ctx, id))[i] ? "true" : "false"); break;
        case MINFER_GGUF_TYPE_STRING: {
            const char* s = minfer_gguf_get_arr_str(ctx, id, i);
            printf("\"%.60s%s\"", s, strlen(s) > 60 ? "…" : "");
            break;
        }
        default: printf("?"); break;
    }
}

int main(int argc, char** argv) {
    struct minfer_gguf_init_params params = {true, NULL};
    struct minfer_gguf_context* ctx;
    int64_t i, n_kv, n_tensors;
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]);
        return 2;
    }
    ctx = minfer_gguf_init_from_split(argv[1], params);
    if (ctx == NULL) {
        /* the message names the file, the byte offset and what was wrong there */
        fprintf(stderr, "gguf_info: %s\n", minfer_last_error_message());
        return 1;
    }
    n_kv = minfer_gguf_get_n_kv(ctx);
    n_tensors = minfer_gguf_get_n_tensors(ctx);
    printf("Model: %s in %d part%s\n", argv[1], minfer_gguf_get_n_parts(ctx), minfer_gguf_get_n_parts(ctx) == 1 ? "" : "s");
    printf("GGUF: %" PRId64 " KV, %" PRId64 " tensors\n", n_kv, n_tensors);
    printf("version %" PRIu32 ", alignment %zu, data offset %zu\n\n", minfer_gguf_get_version(ctx),
           minfer_gguf_get_alignment(ctx), minfer_gguf_get_data_offset(ctx));

    printf("metadata (%" PRId64 "):\n", n_kv);
    for (i = 0; i < n_kv; ++i) {
        const enum minfer_gguf_type t = minfer_gguf_get_kv_type(ctx, i);
        printf("  %-40s ", minfer_gguf_get_key(ctx, i));
        if (t == MINFER_GGUF_TYPE_ARRAY) {
            const enum minfer_gguf_type et = minfer_gguf_get_arr_type(ctx, i);
            const size_t n = minfer_gguf_get_arr_n(ctx, i);
            size_t j;
            printf("[%s x %zu] ", minfer_gguf_type_name(et), n);
            for (j = 0; j < n && j < 8; ++j) {
                if (j > 0) printf(", ");
                print_value(ctx, i, et, j);
            }
            if (n > 8) printf(", …");
        } else {
            printf("%-6s ", minfer_gguf_type_name(t));
            print_value(ctx, i, t, 0); /* a scalar is read as an array of one, as in ggml */
        }
        printf("\n");
    }

    printf("\ntensors (%" PRId64 "):\n", n_tensors);
    printf("  name type shape bytes offset\n");
    for (i = 0; i < n_tensors; ++i) {
        int64_t ne[4];
        const int dims = minfer_tensor_shape(ctx, i, ne);
        int d;
        printf("  %s %s [", minfer_gguf_get_tensor_name(ctx, i), minfer_ggml_type_name(minfer_gguf_get_tensor_type(ctx, i)));
        for (d = 0; d < (dims > 0 ? dims : 1); ++d) printf("%s%" PRId64, d > 0 ? ", " : "", ne[d]);
        /* Where its bytes start in the file: for a single file, the data section's start plus the
         * tensor's offset in it; a set's other parts have data sections of their own. */
        if (minfer_gguf_get_n_parts(ctx) == 1)
            printf("] %zu %zu\n", minfer_gguf_get_tensor_size(ctx, i),
                   minfer_gguf_get_data_offset(ctx) + minfer_gguf_get_tensor_offset(ctx, i));
        else
            printf("] %zu part %d +%zu\n", minfer_gguf_get_tensor_size(ctx, i), minfer_gguf_get_tensor_part(ctx, i) + 1,
                   minfer_gguf_get_tensor_offset(ctx, i));
    }
    minfer_gguf_free(ctx);
    return 0;
}
