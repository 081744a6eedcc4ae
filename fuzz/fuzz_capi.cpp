// The C API (minfer.h, libminfer.so) on any file: whatever the bytes, every function answers or
// refuses, and ASan/UBSan see no access outside the verified file, the arena or the caller's
// buffers. The input is a GGUF file: when it opens (as one file, and as a split set), every reading
// function of ggml's gguf.h is called with every id, out-of-range ids and every getter type (what ggml
// aborts on), every tensor's bytes are read end to end and dequantized, and a freed handle is used
// again. The input's first bytes are also handed to minfer_dequantize as blocks of every type id.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <vector>

#include "fuzz_common.hpp"
#include "minfer.h"

namespace {

using minfer::fuzz::consume;
using minfer::fuzz::require;

std::uint64_t text_sum(const char* s) {
    if (s == nullptr) return 0;
    std::uint64_t sum = 0;
    for (; *s != '\0'; ++s) sum += static_cast<unsigned char>(*s);  // reads up to the NUL: it must exist
    return sum;
}

std::uint64_t every_getter(const minfer_gguf_context* ctx, std::int64_t id) {
    std::uint64_t s = 0;
    s += minfer_gguf_get_val_u8(ctx, id) + static_cast<std::uint64_t>(minfer_gguf_get_val_i8(ctx, id));
    s += minfer_gguf_get_val_u16(ctx, id) + static_cast<std::uint64_t>(minfer_gguf_get_val_i16(ctx, id));
    s += minfer_gguf_get_val_u32(ctx, id) + static_cast<std::uint64_t>(minfer_gguf_get_val_i32(ctx, id));
    s += minfer_gguf_get_val_u64(ctx, id) + static_cast<std::uint64_t>(minfer_gguf_get_val_i64(ctx, id));
    s += minfer_gguf_get_val_f32(ctx, id) != 0.0f;
    s += minfer_gguf_get_val_f64(ctx, id) != 0.0;
    s += minfer_gguf_get_val_bool(ctx, id);
    s += text_sum(minfer_gguf_get_val_str(ctx, id));
    s += minfer_gguf_get_val_data(ctx, id) != nullptr;
    return s;
}

std::uint64_t element_bytes(enum minfer_gguf_type t) {
    switch (t) {
        case MINFER_GGUF_TYPE_UINT8: case MINFER_GGUF_TYPE_INT8: case MINFER_GGUF_TYPE_BOOL: return 1;
        case MINFER_GGUF_TYPE_UINT16: case MINFER_GGUF_TYPE_INT16: return 2;
        case MINFER_GGUF_TYPE_UINT32: case MINFER_GGUF_TYPE_INT32: case MINFER_GGUF_TYPE_FLOAT32: return 4;
        case MINFER_GGUF_TYPE_UINT64: case MINFER_GGUF_TYPE_INT64: case MINFER_GGUF_TYPE_FLOAT64: return 8;
        default: return 0;
    }
}

void walk(const minfer_gguf_context* ctx) {
    std::uint64_t s = minfer_gguf_get_version(ctx) + minfer_gguf_get_alignment(ctx) + minfer_gguf_get_data_offset(ctx);
    const std::int64_t n_kv = minfer_gguf_get_n_kv(ctx);
    require(n_kv >= 0);
    for (std::int64_t i = 0; i < n_kv; ++i) {
        const char* key = minfer_gguf_get_key(ctx, i);
        require(key != nullptr);
        s += text_sum(key);
        const std::int64_t found = minfer_gguf_find_key(ctx, key);
        require(found >= 0 && found <= i);  // keys are unique in a verified file: the first is i itself
        const enum minfer_gguf_type t = minfer_gguf_get_kv_type(ctx, i);
        s += every_getter(ctx, i);
        const std::size_t n = minfer_gguf_get_arr_n(ctx, i);
        if (t == MINFER_GGUF_TYPE_ARRAY) {
            const enum minfer_gguf_type et = minfer_gguf_get_arr_type(ctx, i);
            if (et == MINFER_GGUF_TYPE_STRING) {
                for (std::size_t j = 0; j < n; ++j) s += text_sum(minfer_gguf_get_arr_str(ctx, i, j));
                require(minfer_gguf_get_arr_data(ctx, i) == nullptr);
            } else {
                const auto* data = static_cast<const unsigned char*>(minfer_gguf_get_arr_data(ctx, i));
                const std::uint64_t bytes = n * element_bytes(et);
                require(data != nullptr || bytes == 0);
                if (bytes > 0) s += data[0] + data[bytes - 1];  // both ends inside the arena
            }
        } else {
            require(minfer_gguf_get_arr_type(ctx, i) == MINFER_GGUF_TYPE_COUNT);
        }
        s += text_sum(minfer_gguf_get_arr_str(ctx, i, n));  // one past the end: refused
    }
    for (std::int64_t bad : {std::int64_t{-1}, n_kv, INT64_MAX, INT64_MIN}) {
        s += text_sum(minfer_gguf_get_key(ctx, bad)) + every_getter(ctx, bad) + minfer_gguf_get_arr_n(ctx, bad);
        s += static_cast<std::uint64_t>(minfer_gguf_get_kv_type(ctx, bad)) + static_cast<std::uint64_t>(minfer_gguf_get_arr_type(ctx, bad));
    }
    const std::int64_t n_tensors = minfer_gguf_get_n_tensors(ctx);
    require(n_tensors >= 0);
    std::vector<float> values;
    for (std::int64_t i = 0; i < n_tensors; ++i) {
        const char* name = minfer_gguf_get_tensor_name(ctx, i);
        require(name != nullptr && minfer_gguf_find_tensor(ctx, name) == i);
        const std::size_t size = minfer_gguf_get_tensor_size(ctx, i);
        const auto* data = static_cast<const unsigned char*>(minfer_gguf_get_tensor_data(ctx, i));
        require(data != nullptr || size == 0);
        for (std::size_t k = 0; k < size; k += 4096) s += data[k];  // every page of the tensor
        if (size > 0) s += data[size - 1];
        std::int64_t ne[4];
        const int dims = minfer_tensor_shape(ctx, i, ne);
        require(dims >= 0 && dims <= 4);  // as stored: ggml accepts n_dims 0 (a scalar, ne all 1)
        const std::int64_t n = minfer_tensor_n_elements(ctx, i);
        require(n == ne[0] * ne[1] * ne[2] * ne[3]);
        s += minfer_gguf_get_tensor_offset(ctx, i) + static_cast<std::uint64_t>(minfer_gguf_get_tensor_part(ctx, i));
        if (n > 0 && n <= (1 << 20)) {
            values.resize(static_cast<std::size_t>(n));
            const std::int64_t got = minfer_dequantize(minfer_gguf_get_tensor_type(ctx, i), data, size, values.data(), n);
            require(got == n || got == -1);  // -1: a type without a conversion (q8_1, removed ids)
        }
    }
    for (std::int64_t bad : {std::int64_t{-1}, n_tensors, INT64_MAX}) {
        s += text_sum(minfer_gguf_get_tensor_name(ctx, bad)) + minfer_gguf_get_tensor_size(ctx, bad);
        require(minfer_gguf_get_tensor_data(ctx, bad) == nullptr && minfer_tensor_n_elements(ctx, bad) == -1);
    }
    consume(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::filesystem::path file = minfer::fuzz::input_file("capi", "input.gguf", data, size);
    if (file.empty()) return 0;
    const minfer_gguf_init_params params{true, nullptr};
    if (minfer_gguf_context* ctx = minfer_gguf_init_from_file(file.c_str(), params)) {
        walk(ctx);
        minfer_gguf_free(ctx);
        // The freed handle: refused, never dereferenced.
        require(minfer_gguf_get_n_kv(ctx) == 0 && minfer_last_error_code() == MINFER_ERROR_INVALID_HANDLE);
        minfer_gguf_free(ctx);
    } else {
        require(minfer_last_error_code() != 0 && text_sum(minfer_last_error_message()) > 0);
    }
    if (minfer_gguf_context* set = minfer_gguf_init_from_split(file.c_str(), params)) {
        walk(set);
        minfer_gguf_free(set);
    }
    // The raw bytes as blocks of every type id (and ids outside the table).
    float out[512];
    for (int type = -1; type <= MINFER_GGML_TYPE_COUNT; ++type) {
        for (std::int64_t n : {std::int64_t{32}, std::int64_t{256}}) {
            const std::size_t need = minfer_dequantize_src_size(type, n);
            if (need == 0 || need > size) continue;
            require(minfer_dequantize(type, data, need, out, n) == n);
        }
        consume(text_sum(minfer_ggml_type_name(type)));
    }
    minfer_clear_error();
    return 0;
}
