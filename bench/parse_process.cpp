// The two reference processes `minfer info` is timed against as a whole process (scripts/bench-cli.sh):
//   minfer-bench-floor FILE        the map-and-walk floor: open, mmap, one bare walk over the header,
//                                  metadata and tensor table (floor.cpp), print the counts, exit
//   minfer-bench-llama-parse FILE  llama.cpp's parser: dlopen($MINFER_LLAMA_LIB, libggml-base.so),
//                                  gguf_init_from_file(no_alloc), every key and tensor name read,
//                                  print the counts, gguf_free, exit
// Each is as small as a process that does its job can be (no other library, no iostream), so that
// the ratios measure what minfer adds: its start-up, its checks, its output.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef MINFER_BENCH_FLOOR
#include "floor.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: minfer-bench-floor FILE\n");
        return 2;
    }
    const minfer::bench::walk_result r = minfer::bench::floor_open(argv[1]);
    if (!r.ok) {
        std::fprintf(stderr, "minfer-bench-floor: cannot walk %s\n", argv[1]);
        return 1;
    }
    std::printf("%llu keys, %llu tensors (%llu)\n", static_cast<unsigned long long>(r.n_kv),
                static_cast<unsigned long long>(r.n_tensors), static_cast<unsigned long long>(r.checksum));
    return 0;
}
#else
// gguf.h's types as the tests' binding declares them (its header only: the library is loaded here
// with dlopen, nothing of the binding is linked).
#include "llama_ref/llama_ref.hpp"
using minfer::llama_ref::gguf_context;
using minfer::llama_ref::gguf_init_params;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: MINFER_LLAMA_LIB=libggml-base.so minfer-bench-llama-parse FILE\n");
        return 2;
    }
    const char* lib_path = std::getenv("MINFER_LLAMA_LIB");
    void* lib = lib_path != nullptr ? ::dlopen(lib_path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (lib == nullptr) {
        std::fprintf(stderr, "minfer-bench-llama-parse: cannot load $MINFER_LLAMA_LIB: %s\n",
                     lib_path != nullptr ? ::dlerror() : "unset");
        return 3;
    }
    using init_fn = gguf_context* (*)(const char*, gguf_init_params);
    using count_fn = std::int64_t (*)(const gguf_context*);
    using name_fn = const char* (*)(const gguf_context*, std::int64_t);
    using free_fn = void (*)(gguf_context*);
    const auto init = reinterpret_cast<init_fn>(::dlsym(lib, "gguf_init_from_file"));
    const auto n_kv = reinterpret_cast<count_fn>(::dlsym(lib, "gguf_get_n_kv"));
    const auto n_tensors = reinterpret_cast<count_fn>(::dlsym(lib, "gguf_get_n_tensors"));
    const auto key = reinterpret_cast<name_fn>(::dlsym(lib, "gguf_get_key"));
    const auto tensor_name = reinterpret_cast<name_fn>(::dlsym(lib, "gguf_get_tensor_name"));
    const auto release = reinterpret_cast<free_fn>(::dlsym(lib, "gguf_free"));
    if (!init || !n_kv || !n_tensors || !key || !tensor_name || !release) {
        std::fprintf(stderr, "minfer-bench-llama-parse: the library lacks a gguf_* function\n");
        return 3;
    }
    gguf_context* ctx = init(argv[1], {true, nullptr});
    if (ctx == nullptr) {
        std::fprintf(stderr, "minfer-bench-llama-parse: gguf_init_from_file refused %s\n", argv[1]);
        return 1;
    }
    std::size_t names = 0;
    for (std::int64_t i = 0; i < n_kv(ctx); ++i) names += std::strlen(key(ctx, i));
    for (std::int64_t i = 0; i < n_tensors(ctx); ++i) names += std::strlen(tensor_name(ctx, i));
    std::printf("%lld keys, %lld tensors (%zu)\n", static_cast<long long>(n_kv(ctx)),
                static_cast<long long>(n_tensors(ctx)), names);
    release(ctx);
    return 0;
}
#endif
