/* A C program that uses minfer's C API the way a downstream C user would, built by the package
 * tests from an install prefix with pkg-config and with CMake's find_package(minfer) (minfer::c).
 * It writes a small GGUF file byte by byte (so that it needs nothing but libc and minfer.h), opens it
 * through minfer.h, checks what it reads, dequantizes its f16 tensor, checks that a truncated copy is
 * refused with the loader's error, and prints "c consumer: ok". */
#include <minfer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char buf[256];
static size_t len = 0;

static void put(const void* p, size_t n) { memcpy(buf + len, p, n); len += n; }
static void put_u32(uint32_t v) { for (int i = 0; i < 4; i++) buf[len++] = (unsigned char)(v >> (8 * i)); }
static void put_u64(uint64_t v) { for (int i = 0; i < 8; i++) buf[len++] = (unsigned char)(v >> (8 * i)); }
static void put_str(const char* s) { put_u64(strlen(s)); put(s, strlen(s)); }

static int fail(const char* what) {
    fprintf(stderr, "c consumer: %s (last error %d %s: %s)\n", what, minfer_last_error_code(),
            minfer_last_error_name(), minfer_last_error_message());
    return 1;
}

static int write_file(const char* path, size_t n) {
    FILE* f = fopen(path, "wb");
    if (f == NULL) return 0;
    const int ok = fwrite(buf, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "c_consumer.gguf";
    /* header: magic, version 3, 1 tensor, 2 key-value pairs */
    put("GGUF", 4); put_u32(3); put_u64(1); put_u64(2);
    put_str("general.architecture"); put_u32(8 /* string */); put_str("c_consumer");
    put_str("c_consumer.block_count"); put_u32(4 /* u32 */); put_u32(3);
    /* tensor "w": 1 dimension of 4, f16, at offset 0 of the data section */
    put_str("w"); put_u32(1); put_u64(4); put_u32(1 /* f16 */); put_u64(0);
    while (len % 32 != 0) buf[len++] = 0;
    const size_t data_offset = len;
    put_u32(0x40003C00u); /* f16 1.0, 2.0 */
    put_u32(0x44004200u); /* f16 3.0, 4.0 */
    if (!write_file(path, len)) return fail("cannot write the file");

    struct minfer_gguf_init_params params = {true, NULL};
    struct minfer_gguf_context* ctx = minfer_gguf_init_from_file(path, params);
    if (ctx == NULL) return fail("the file was refused");
    const int64_t key = minfer_gguf_find_key(ctx, "c_consumer.block_count");
    const int64_t t = minfer_gguf_find_tensor(ctx, "w");
    if (minfer_gguf_get_version(ctx) != 3 || minfer_gguf_get_n_kv(ctx) != 2 || key != 1 ||
        minfer_gguf_get_val_u32(ctx, key) != 3 ||
        strcmp(minfer_gguf_get_val_str(ctx, 0), "c_consumer") != 0 || t != 0 ||
        minfer_gguf_get_data_offset(ctx) != data_offset || minfer_gguf_get_tensor_size(ctx, t) != 8)
        return fail("unexpected contents");
    float values[4];
    if (minfer_dequantize(minfer_gguf_get_tensor_type(ctx, t), minfer_gguf_get_tensor_data(ctx, t), 8, values, 4) != 4 ||
        values[0] != 1.0f || values[1] != 2.0f || values[2] != 3.0f || values[3] != 4.0f)
        return fail("unexpected values");
    /* the wrong type's getter: ggml aborts, minfer answers 0 and says why */
    if (minfer_gguf_get_val_u8(ctx, key) != 0 || strcmp(minfer_last_error_name(), "type_mismatch") != 0)
        return fail("a wrong-typed getter was not refused");
    minfer_gguf_free(ctx);

    /* a truncated copy (the last tensor byte missing) is refused with the loader's code */
    if (!write_file(path, len - 1)) return fail("cannot write the truncated file");
    minfer_clear_error();
    if (minfer_gguf_init_from_file(path, params) != NULL || minfer_last_error_code() == 0)
        return fail("a truncated file was accepted");
    printf("refused as expected: %s\n", minfer_last_error_name());
    remove(path);
    printf("c consumer: ok\n");
    return 0;
}
