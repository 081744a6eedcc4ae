#pragma once
// llama.cpp's GGUF reader (gguf_init_from_file / gguf_free from libggml-base.so), loaded at run
// time with dlopen from the path in $MINFER_LLAMA_LIB, so the benchmark builds without it.
#include <cstdint>
#include <string>

namespace minfer::bench {

struct llama_counts {
    bool ok = false;
    std::int64_t n_kv = 0;
    std::int64_t n_tensors = 0;
};

class llama_gguf {
public:
    /// The process-wide instance; loads the library on first use.
    static const llama_gguf& get();

    bool available() const noexcept { return init_ != nullptr; }
    /// Why the library is unavailable (empty when available()).
    const std::string& why_unavailable() const noexcept { return why_; }
    const std::string& path() const noexcept { return path_; }

    /// gguf_init_from_file(path, {no_alloc = true, ctx = nullptr}), the counts, gguf_free.
    llama_counts open_close(const char* path) const noexcept;
    /// As open_close but returns the context (or nullptr); release it with close().
    void* open(const char* path) const noexcept;
    llama_counts counts(void* ctx) const noexcept;
    void close(void* ctx) const noexcept;

private:
    llama_gguf();
    struct init_params {
        bool no_alloc;
        void** ctx;  // struct ggml_context **
    };
    using init_fn = void* (*)(const char*, init_params);
    using free_fn = void (*)(void*);
    using count_fn = std::int64_t (*)(const void*);
    void* handle_ = nullptr;
    init_fn init_ = nullptr;
    free_fn free_ = nullptr;
    count_fn n_kv_ = nullptr;
    count_fn n_tensors_ = nullptr;
    std::string path_;
    std::string why_;
};

}  // namespace minfer::bench
