#pragma once
// The sample model: a tiny Qwen2-shaped GGUF (2 blocks, 64-wide, 512-token byte-level BPE vocabulary)
// with llama.cpp's qwen2 metadata keys and tensor names, whose weights are deterministic
// pseudo-random values quantized with quant.hpp. Everything here is a pure function of the code:
// the same build writes the same bytes every time. Used by the minfer-sample tool and the tests.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace minfer::sample {

// Hyperparameters (the qwen2.* metadata).
inline constexpr std::uint32_t n_layer = 2;
inline constexpr std::uint32_t n_embd = 64;
inline constexpr std::uint32_t n_ff = 128;
inline constexpr std::uint32_t n_head = 4;
inline constexpr std::uint32_t n_head_kv = 2;
inline constexpr std::uint32_t head_dim = n_embd / n_head;  // 16
inline constexpr std::uint32_t n_ctx_train = 4096;
inline constexpr float rope_freq_base = 1000000.0f;
inline constexpr float rms_norm_eps = 1e-6f;
inline constexpr std::uint32_t n_vocab = 512;
inline constexpr std::uint32_t tensor_count = 3 + 12 * n_layer;  // token_embd, 12 per block, output_norm, output
inline constexpr std::uint32_t file_type = 2;  // LLAMA_FTYPE_MOSTLY_Q4_0 (most tensors are Q4_0)

// Special token ids: the last three of the vocabulary, as in Qwen2 (bos = pad = <|endoftext|>).
inline constexpr std::uint32_t token_endoftext = n_vocab - 3;
inline constexpr std::uint32_t token_im_start = n_vocab - 2;
inline constexpr std::uint32_t token_im_end = n_vocab - 1;
inline constexpr std::uint32_t eos_token_id = token_im_end;
inline constexpr std::uint32_t bos_token_id = token_endoftext;
inline constexpr std::uint32_t pad_token_id = token_endoftext;

/// llama.cpp token types (llama_token_type).
inline constexpr std::int32_t token_type_normal = 1;
inline constexpr std::int32_t token_type_control = 3;

/// Qwen2's ChatML template (tokenizer.chat_template).
extern const std::string_view chat_template;

/// The byte-level BPE vocabulary: tokens[0..255] are the 256 single bytes in GPT-2's byte-to-unicode
/// spelling (in GPT-2's id order), then one token per merge learned from a small built-in English
/// text, then the three specials. merges[i] is "a b" with a, b and a+b all tokens.
struct vocabulary {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> token_types;
    std::vector<std::string> merges;
};
/// Deterministic; n_vocab tokens. May throw std::bad_alloc.
vocabulary sample_vocabulary();

/// GPT-2's byte-to-unicode spelling of one byte (UTF-8).
std::string byte_to_unicode(std::uint8_t b);

/// How a tensor's source values are drawn: mean + scale * N(0,1)-ish.
struct tensor_spec {
    std::string name;
    gguf::tensor_type type;
    std::vector<std::int64_t> ne;  ///< ggml order: ne[0] is the row length
    float mean;
    float scale;
    [[nodiscard]] std::size_t n_elements() const noexcept;
};
/// Every tensor of the model, in file order. May throw std::bad_alloc.
std::vector<tensor_spec> sample_tensor_specs();
/// The f32 source values of a tensor (before quantization): a pure function of the spec's name,
/// mean, scale and size. May throw std::bad_alloc.
std::vector<float> sample_values(const tensor_spec& spec);
/// The stored bytes of a tensor: its source values converted to spec.type (F32, F16, Q4_0, Q8_0).
/// May throw std::bad_alloc.
std::vector<std::byte> sample_tensor_bytes(const tensor_spec& spec);

/// Add the full model metadata (general.*, qwen2.*, tokenizer.*) to a writer. May throw std::bad_alloc.
void add_sample_metadata(gguf::writer& w);

/// The writers of the model: one (no split keys) when n_splits == 0, otherwise n_splits parts laid
/// out like llama.cpp's gguf-split (part 1: all metadata then split.no/split.count/
/// split.tensors.count; later parts: the three split keys only; tensors distributed in order, as
/// evenly as possible). @returns out_of_memory, or split_bad_key when n_splits is negative or
/// exceeds the tensor count.
gguf::result<std::vector<gguf::writer>> sample_model_writers(int n_splits) noexcept;

/// The path of each file make_sample_model writes for `out` ("x.gguf" -> "x-00001-of-0000N.gguf"…,
/// or `out` itself when n_splits == 0).
std::vector<std::filesystem::path> sample_model_paths(const std::filesystem::path& out, int n_splits);

struct written_file {
    std::filesystem::path path;
    std::uint64_t bytes;
};
/// Write the sample model to `out` (n_splits == 0), or as n_splits parts beside it.
/// @returns the files written with their sizes, or the first error (io_error, out_of_memory, …).
gguf::result<std::vector<written_file>> make_sample_model(const std::filesystem::path& out, int n_splits = 0) noexcept;

}  // namespace minfer::sample
