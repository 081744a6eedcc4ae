#include "llama_model_ref.hpp"

#include <algorithm>

namespace minfer_toolbox_test {

using minfer::llama_ref::llama_lib;

std::optional<llama_loaded> llama_loaded::load(const llama_lib& lib, const std::string& path, std::string& why) {
    const auto& a = lib.api();
    (void)lib.take_log();
    // The default parameters, unchanged: CPU only in this build, the mmap default.
    minfer::llama_ref::llama_model* m = a.llama_model_load_from_file(path.c_str(), a.llama_model_default_params());
    if (m == nullptr) {
        why = "llama_model_load_from_file('" + path + "') failed; llama.cpp said:\n" + lib.take_log();
        return std::nullopt;
    }
    (void)lib.take_log();
    return llama_loaded(lib, m);
}

std::uint64_t llama_loaded::n_params() const { return lib_->api().llama_model_n_params(m_.get()); }

std::optional<std::string> llama_loaded::chat_template() const {
    const char* t = lib_->api().llama_model_chat_template(m_.get(), nullptr);
    if (t == nullptr) return std::nullopt;
    return std::string(t);
}

std::optional<std::string> llama_loaded::meta(const std::string& key) const {
    std::string buf(4096, '\0');
    const std::int32_t n = lib_->api().llama_model_meta_val_str(m_.get(), key.c_str(), buf.data(), buf.size());
    if (n < 0) return std::nullopt;
    buf.resize(std::min<std::size_t>(static_cast<std::size_t>(n), buf.size() - 1));
    return buf;
}

std::int32_t llama_loaded::n_vocab() const {
    const auto& a = lib_->api();
    return a.llama_vocab_n_tokens(a.llama_model_get_vocab(m_.get()));
}

std::vector<float> llama_loaded::last_logits(const std::vector<std::int32_t>& tokens, std::string& why) const {
    const auto& a = lib_->api();
    minfer::llama_ref::llama_context* ctx = a.llama_init_from_model(m_.get(), a.llama_context_default_params());
    if (ctx == nullptr) {
        why = "llama_init_from_model failed; llama.cpp said:\n" + lib_->take_log();
        return {};
    }
    struct ctx_free {
        const llama_lib* lib;
        void operator()(minfer::llama_ref::llama_context* c) const { lib->api().llama_free(c); }
    };
    std::unique_ptr<minfer::llama_ref::llama_context, ctx_free> guard(ctx, {lib_});
    // One thread: the same work split the same way every time (set by function, not by a field of
    // llama_context_params, whose layout is not assumed).
    a.llama_set_n_threads(ctx, 1, 1);
    if (a.llama_n_threads(ctx) != 1) {
        why = "llama_set_n_threads(1) did not take";
        return {};
    }
    std::vector<std::int32_t> toks = tokens;
    const std::int32_t rc = a.llama_decode(ctx, a.llama_batch_get_one(toks.data(), static_cast<std::int32_t>(toks.size())));
    if (rc != 0) {
        why = "llama_decode returned " + std::to_string(rc) + "; llama.cpp said:\n" + lib_->take_log();
        return {};
    }
    const float* l = a.llama_get_logits_ith(ctx, -1);
    if (l == nullptr) {
        why = "llama_get_logits_ith(-1) returned null";
        return {};
    }
    const std::int32_t n = n_vocab();
    return std::vector<float>(l, l + n);
}

std::int64_t llama_gguf_tensor_count(const llama_lib& lib, const std::string& path) {
    const auto& a = lib.api();
    minfer::llama_ref::gguf_context* c = a.gguf_init_from_file(path.c_str(), {true, nullptr});
    if (c == nullptr) return -1;
    const std::int64_t n = a.gguf_get_n_tensors(c);
    a.gguf_free(c);
    return n;
}

}  // namespace minfer_toolbox_test
