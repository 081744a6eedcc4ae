#pragma once
// Facts computed from a model for the printers: totals, the per-type summary of tensors and the
// special tokens named by id. Each is computed without copying the file's strings or arrays.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "minfer/gguf/model.hpp"

namespace minfer::cli {

/// Totals over every tensor of every part (or of one type).
struct totals {
    std::uint64_t n_tensors = 0;
    std::uint64_t n_parameters = 0;  ///< sum of n_elements
    std::uint64_t n_bytes = 0;       ///< sum of n_bytes (unpadded)
    /// bytes * 8 / parameters; negative when there are no parameters.
    double bits_per_weight() const noexcept {
        return n_parameters == 0 ? -1.0 : static_cast<double>(n_bytes) * 8.0 / static_cast<double>(n_parameters);
    }
};
totals gather_totals(const gguf::model& m) noexcept;

/// Totals per tensor type, in type-id order, only the types present.
struct type_totals {
    gguf::tensor_type type;
    totals t;
};
std::vector<type_totals> gather_type_totals(const gguf::model& m);

/// A metadata key holding a special token id (tokenizer.ggml.*_token_id, an integer), resolved
/// against tokenizer.ggml.tokens.
struct special_token {
    std::string_view key;
    std::int64_t id = 0;
    std::optional<std::string_view> text;  ///< nullopt when the id is outside the vocabulary
};
struct special_tokens {
    std::vector<special_token> tokens;
    std::uint64_t vocab_size = 0;
    bool has_vocab = false;  ///< tokenizer.ggml.tokens is a string array
    /// The entry for a key, or nullptr.
    const special_token* find(std::string_view key) const noexcept;
};
/// One walk over the vocabulary, however many ids are asked for; nothing is copied.
special_tokens resolve_special_tokens(const gguf::model& m);

/// Whether `key` names a special token id (tokenizer.ggml.bos_token_id, …_eos_…, …_seperator_…).
bool is_special_token_key(std::string_view key) noexcept;

}  // namespace minfer::cli
