/* Compiled with -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only (test capi_c99_headers):
   the public C headers are C99, and ggml_compat.h's names work as ggml's gguf.h's do. */
#include <minfer.h>
#include <minfer/ggml_compat.h>

int uses_the_names(const char* path);

int uses_the_names(const char* path) {
    struct gguf_init_params params = {true, NULL};
    struct gguf_context* ctx = gguf_init_from_file(path, params);
    enum gguf_type t = GGUF_TYPE_COUNT;
    enum ggml_type tt = GGML_TYPE_Q4_K;
    int ok;
    if (ctx == NULL) return minfer_last_error_code();
    if (gguf_get_n_kv(ctx) > 0) t = gguf_get_kv_type(ctx, 0);
    if (gguf_get_n_tensors(ctx) > 0) tt = gguf_get_tensor_type(ctx, 0);
    ok = gguf_type_name(t) != NULL && (int)tt >= 0;
    gguf_free(ctx);
    return ok;
}
