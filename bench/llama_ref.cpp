// dlopen wrapper for llama.cpp's gguf reader. See llama_ref.hpp.
#include "llama_ref.hpp"

#include <cstdlib>
#include <dlfcn.h>

namespace minfer::bench {
namespace {
template <class F>
F symbol(void* handle, const char* name) {
    // POSIX guarantees that a data pointer from dlsym converts to a function pointer.
    void* p = ::dlsym(handle, name);
    F f = nullptr;
    static_assert(sizeof f == sizeof p);
    __builtin_memcpy(&f, &p, sizeof f);
    return f;
}
}  // namespace

const llama_gguf& llama_gguf::get() {
    static const llama_gguf instance;
    return instance;
}

llama_gguf::llama_gguf() {
    const char* env = std::getenv("MINFER_LLAMA_LIB");
    if (env == nullptr || *env == '\0') {
        why_ = "MINFER_LLAMA_LIB is not set (run scripts/llama-ref.sh to install llama.cpp's libggml-base.so)";
        return;
    }
    path_ = env;
    handle_ = ::dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
        const char* e = ::dlerror();
        why_ = "dlopen " + path_ + " failed: " + (e != nullptr ? e : "unknown error");
        return;
    }
    auto init = symbol<init_fn>(handle_, "gguf_init_from_file");
    free_ = symbol<free_fn>(handle_, "gguf_free");
    n_kv_ = symbol<count_fn>(handle_, "gguf_get_n_kv");
    n_tensors_ = symbol<count_fn>(handle_, "gguf_get_n_tensors");
    if (init == nullptr || free_ == nullptr || n_kv_ == nullptr || n_tensors_ == nullptr) {
        why_ = path_ + " lacks the gguf_* symbols";
        return;
    }
    init_ = init;  // available() only once every symbol resolved
}

void* llama_gguf::open(const char* path) const noexcept {
    if (init_ == nullptr) return nullptr;
    return init_(path, init_params{true, nullptr});
}

llama_counts llama_gguf::counts(void* ctx) const noexcept {
    if (ctx == nullptr) return {};
    return {true, n_kv_(ctx), n_tensors_(ctx)};
}

void llama_gguf::close(void* ctx) const noexcept {
    if (ctx != nullptr) free_(ctx);
}

llama_counts llama_gguf::open_close(const char* path) const noexcept {
    void* ctx = open(path);
    const llama_counts c = counts(ctx);
    close(ctx);
    return c;
}

}  // namespace minfer::bench
