#pragma once
// Loading a model with llama.cpp (llama_model_load_from_file) and decoding a few tokens, through the
// dlopen binding llama_ref (part::llama_model). What the toolbox tests compare between a model and
// what edit / split / merge made of it: the parameter count, the tensor count as llama.cpp's own
// gguf reader sees it, the chat template and the logits of a fixed token sequence.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"

namespace minfer_toolbox_test {

/// A model loaded by llama.cpp, freed with it.
class llama_loaded {
public:
    /// Load `path` (part 1 of a split set loads the others); on failure nullopt and `why` holds the
    /// library's log.
    static std::optional<llama_loaded> load(const minfer::llama_ref::llama_lib& lib, const std::string& path,
                                            std::string& why);

    std::uint64_t n_params() const;
    /// tokenizer.chat_template as llama.cpp returns it (nullopt: none).
    std::optional<std::string> chat_template() const;
    /// A metadata value as text (nullopt: absent).
    std::optional<std::string> meta(const std::string& key) const;
    std::int32_t n_vocab() const;
    /// Decode `tokens` in one batch on a fresh context (one thread) and return the logits of the last
    /// position (n_vocab floats); empty on failure, with `why` saying where.
    std::vector<float> last_logits(const std::vector<std::int32_t>& tokens, std::string& why) const;

private:
    struct model_free {
        const minfer::llama_ref::llama_lib* lib;
        void operator()(minfer::llama_ref::llama_model* m) const { lib->api().llama_model_free(m); }
    };
    llama_loaded(const minfer::llama_ref::llama_lib& lib, minfer::llama_ref::llama_model* m) : lib_(&lib), m_(m, {&lib}) {}
    const minfer::llama_ref::llama_lib* lib_;
    std::unique_ptr<minfer::llama_ref::llama_model, model_free> m_;
};

/// The number of tensors llama.cpp's gguf reader counts in a file (one part), -1 when it refuses it.
std::int64_t llama_gguf_tensor_count(const minfer::llama_ref::llama_lib& lib, const std::string& path);

}  // namespace minfer_toolbox_test
