// minfer-bench-ggml-dump: the reference `minfer tensor FILE NAME --dump -` is timed against
// (scripts/bench-dump.sh): the plain program anyone would write with llama.cpp's library. ggml's
// gguf_init_from_file finds the tensor; the file is read in chunks of 1 Mi values' bytes with fread
// into one buffer, each chunk converted by ggml's own to_float (ggml_get_type_traits) into one f32
// buffer and written to standard output with fwrite. libggml-base.so is dlopen'ed from
// $MINFER_LLAMA_LIB (scripts/llama-ref.sh).
//
//   MINFER_LLAMA_LIB=… minfer-bench-ggml-dump FILE TENSOR > values.f32
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "llama_ref/llama_ref.hpp"

namespace {

// ggml.h / gguf.h's types as the tests' binding declares them (its header only: the library is loaded
// here with dlopen, nothing of the binding is linked).
using minfer::llama_ref::ggml_type_traits;
using minfer::llama_ref::gguf_context;
using minfer::llama_ref::gguf_init_params;

template <typename F>
F sym(void* lib, const char* name) {
    return reinterpret_cast<F>(::dlsym(lib, name));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: MINFER_LLAMA_LIB=libggml-base.so minfer-bench-ggml-dump FILE TENSOR\n");
        return 2;
    }
    const char* lib_path = std::getenv("MINFER_LLAMA_LIB");
    void* lib = lib_path != nullptr ? ::dlopen(lib_path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (lib == nullptr) {
        std::fprintf(stderr, "minfer-bench-ggml-dump: cannot load $MINFER_LLAMA_LIB\n");
        return 3;
    }
    const auto init = sym<gguf_context* (*)(const char*, gguf_init_params)>(lib, "gguf_init_from_file");
    const auto find = sym<std::int64_t (*)(const gguf_context*, const char*)>(lib, "gguf_find_tensor");
    const auto data_offset = sym<std::size_t (*)(const gguf_context*)>(lib, "gguf_get_data_offset");
    const auto tensor_offset = sym<std::size_t (*)(const gguf_context*, std::int64_t)>(lib, "gguf_get_tensor_offset");
    const auto tensor_size = sym<std::size_t (*)(const gguf_context*, std::int64_t)>(lib, "gguf_get_tensor_size");
    const auto tensor_type = sym<int (*)(const gguf_context*, std::int64_t)>(lib, "gguf_get_tensor_type");
    const auto traits_of = sym<const ggml_type_traits* (*)(int)>(lib, "ggml_get_type_traits");
    const auto release = sym<void (*)(gguf_context*)>(lib, "gguf_free");
    if (!init || !find || !data_offset || !tensor_offset || !tensor_size || !tensor_type || !traits_of || !release) {
        std::fprintf(stderr, "minfer-bench-ggml-dump: the library lacks a function\n");
        return 3;
    }
    gguf_context* ctx = init(argv[1], {true, nullptr});
    if (ctx == nullptr) return 1;
    const std::int64_t id = find(ctx, argv[2]);
    if (id < 0) return 1;
    const ggml_type_traits* t = traits_of(tensor_type(ctx, id));
    if (t == nullptr || t->to_float == nullptr || t->blck_size <= 0) return 1;
    const std::uint64_t offset = data_offset(ctx) + tensor_offset(ctx, id);
    const std::uint64_t bytes = tensor_size(ctx, id);
    release(ctx);

    constexpr std::uint64_t chunk_values = std::uint64_t{1} << 20;  // as minfer's stream_values
    const std::uint64_t chunk_bytes = chunk_values / static_cast<std::uint64_t>(t->blck_size) * t->type_size;
    std::vector<unsigned char> in(chunk_bytes);
    std::vector<float> out(chunk_values);
    std::FILE* f = std::fopen(argv[1], "rb");
    if (f == nullptr || std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) return 3;
    for (std::uint64_t done = 0; done < bytes;) {
        const std::uint64_t n = bytes - done < chunk_bytes ? bytes - done : chunk_bytes;
        if (std::fread(in.data(), 1, n, f) != n) return 3;
        const std::int64_t values = static_cast<std::int64_t>(n / t->type_size) * t->blck_size;
        t->to_float(in.data(), out.data(), values);
        if (std::fwrite(out.data(), sizeof(float), static_cast<std::size_t>(values), stdout) != static_cast<std::size_t>(values))
            return 3;
        done += n;
    }
    std::fclose(f);
    return 0;
}
