/* gguf_dequantize: one tensor's values as f32, through minfer's C API: prints its type, shape and
 * first values, and with OUT writes every value as raw little-endian f32 in ggml's element order
 * (what `minfer tensor MODEL NAME --dump OUT` writes). The tensor's bytes are read in place from the
 * file's mapping and converted one row at a time, so memory stays one row whatever the tensor.
 *
 *   cc -std=c99 gguf_dequantize.c $(pkg-config --cflags --libs minfer) -o gguf_dequantize
 *   ./gguf_dequantize MODEL.gguf TENSOR [OUT.f32]
 *
 * Exit status: 0 done, 1 refused file, unknown tensor or a type without a conversion, 2 usage,
 * 3 the output could not be written. */
#include <minfer.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* The last error's message names the file or tensor, the byte offset and what was wrong there. */
static int refused(void) {
    fprintf(stderr, "gguf_dequantize: %s\n", minfer_last_error_message());
    return 1;
}

int main(int argc, char** argv) {
    struct minfer_gguf_init_params params = {true, NULL};
    struct minfer_gguf_context* ctx;
    const unsigned char* data;
    int64_t id, ne[4], rows, r, n;
    size_t row_bytes;
    float* row;
    FILE* out = NULL;
    int status = 0, type;
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s MODEL.gguf TENSOR [OUT.f32]\n", argv[0]);
        return 2;
    }
    ctx = minfer_gguf_init_from_split(argv[1], params);
    if (ctx == NULL) return refused();
    id = minfer_gguf_find_tensor(ctx, argv[2]);
    if (id < 0) {
        minfer_gguf_free(ctx);
        return refused();
    }
    type = (int)minfer_gguf_get_tensor_type(ctx, id);
    minfer_tensor_shape(ctx, id, ne);
    n = minfer_tensor_n_elements(ctx, id);
    data = (const unsigned char*)minfer_gguf_get_tensor_data(ctx, id);
    rows = ne[0] > 0 ? n / ne[0] : 0;
    row_bytes = minfer_dequantize_src_size(type, ne[0]);
    printf("%s: %s [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "], %" PRId64 " values\n", argv[2],
           minfer_ggml_type_name(type), ne[0], ne[1], ne[2], ne[3], n);
    if (row_bytes == 0 && n > 0) { /* q8_1, removed ids: no conversion to f32 */
        minfer_gguf_free(ctx);
        return refused();
    }
    row = (float*)malloc((size_t)(ne[0] > 0 ? ne[0] : 1) * sizeof(float));
    if (row == NULL) {
        minfer_gguf_free(ctx);
        fprintf(stderr, "out of memory\n");
        return 3;
    }
    if (argc == 4 && (out = fopen(argv[3], "wb")) == NULL) {
        perror(argv[3]);
        status = 3;
    }
    for (r = 0; r < rows && status == 0; ++r) {
        if (minfer_dequantize(type, data + (size_t)r * row_bytes, row_bytes, row, ne[0]) != ne[0]) {
            status = refused();
            break;
        }
        if (r == 0) {
            int64_t k;
            printf("row 0:");
            for (k = 0; k < ne[0] && k < 8; ++k) printf(" %.8g", (double)row[k]);
            printf("%s\n", ne[0] > 8 ? " …" : "");
        }
        if (out != NULL && fwrite(row, sizeof(float), (size_t)ne[0], out) != (size_t)ne[0]) {
            perror(argv[3]);
            status = 3;
        }
    }
    if (out != NULL && fclose(out) != 0 && status == 0) {
        perror(argv[3]);
        status = 3;
    }
    free(row);
    minfer_gguf_free(ctx);
    return status;
}
