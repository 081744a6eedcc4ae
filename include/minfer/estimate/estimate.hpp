#pragma once
// What llama.cpp allocates for a model: the weights (exact, from the tensor table), the KV cache
// (exact: llama.cpp's padding of the context, per-layer K/V widths, the smaller cache of
// sliding-window layers, MLA's K-only cache, the cache types' row sizes, one stream per sequence
// unless the cache is unified; the recurrent state of mamba in its own figure), and the compute
// buffer (an approximation of ggml's allocation of the worst-case graph: within about 10 % for the
// supported architectures), for CPU only and for full GPU offload (device + host).
// The reference is the llama.cpp of the npm package @node-llama-cpp/linux-x64@3.22.1
// (src/llama-context.cpp, src/llama-kv-cache.cpp, src/llama-kv-cache-iswa.cpp,
// src/llama-memory-recurrent.cpp, src/llama-graph.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "minfer/estimate/hparams.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/result.hpp"
#include "minfer/gguf/types.hpp"

namespace minfer::estimate {

enum class flash_attn_mode : std::uint8_t { automatic, on, off };

/// llama.cpp's LLAMA_MAX_SEQ: n_seq_max above it is refused.
inline constexpr std::uint32_t max_sequences = 256;
/// The largest context accepted: llama.cpp keeps n_ctx in 32 bits and pads it to 256.
inline constexpr std::uint64_t max_context = 0xFFFFFF00u;

/// The context llama.cpp is asked for (llama_context_params; the defaults are llama.cpp's).
struct params {
    std::uint64_t n_ctx = 0;  ///< 0: the training context (llama.cpp's default)
    std::uint32_t n_batch = 2048;
    std::uint32_t n_ubatch = 512;
    gguf::tensor_type type_k = gguf::tensor_type::f16;
    gguf::tensor_type type_v = gguf::tensor_type::f16;
    std::uint32_t n_seq_max = 1;  ///< --parallel
    flash_attn_mode flash_attn = flash_attn_mode::automatic;
    bool kv_unified = false;  ///< llama_context_default_params().kv_unified
};

/// The cache types llama.cpp accepts (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1).
bool is_cache_type(gguf::tensor_type t) noexcept;

/// One layer's cache.
struct kv_layer {
    std::uint32_t layer = 0;
    bool swa = false;
    std::uint64_t cells = 0;  ///< all streams
    std::uint64_t k_bytes = 0;
    std::uint64_t v_bytes = 0;
    std::uint64_t r_bytes = 0;  ///< recurrent conv state (mamba)
    std::uint64_t s_bytes = 0;  ///< recurrent scan state (mamba)
};

struct kv_cache {
    std::uint64_t cells = 0;      ///< cells of the full (non-SWA) cache, all streams; for a recurrent model the state rows
    std::uint64_t swa_cells = 0;  ///< cells of the SWA cache, all streams; 0 without SWA layers
    std::uint64_t k_bytes = 0;
    std::uint64_t v_bytes = 0;
    std::uint64_t recurrent_state_bytes = 0;
    std::vector<kv_layer> layers;
    std::uint64_t total() const noexcept { return k_bytes + v_bytes + recurrent_state_bytes; }
};

/// What one device holds. kv / compute absent for an unknown architecture.
struct device {
    std::uint64_t weights = 0;
    std::optional<std::uint64_t> kv;
    std::optional<std::uint64_t> compute;
    std::uint64_t total() const noexcept { return weights + kv.value_or(0) + compute.value_or(0); }
};

struct figures {
    hparams hp;
    // The context as llama.cpp resolves it.
    std::uint64_t n_ctx = 0;      ///< after padding (cparams.n_ctx)
    std::uint64_t n_ctx_seq = 0;  ///< cells per stream
    std::uint32_t n_batch = 0;
    std::uint32_t n_ubatch = 0;
    std::uint32_t n_seq_max = 1;
    std::uint32_t n_stream = 1;
    bool flash_attn = true;
    bool kv_unified = false;
    gguf::tensor_type type_k = gguf::tensor_type::f16;
    gguf::tensor_type type_v = gguf::tensor_type::f16;

    std::uint64_t weights_bytes = 0;       ///< every tensor of every part
    std::uint64_t token_embd_bytes = 0;    ///< token_embd.weight (stays on the CPU with full offload)
    bool output_tied = false;              ///< no output.weight: llama.cpp copies token_embd to the output's device
    std::optional<kv_cache> kv;            ///< absent for an unknown architecture

    device cpu_only;  ///< everything on the CPU
    device gpu;       ///< full offload: the GPU
    device host;      ///< full offload: host memory (token embeddings, the host compute buffer)
};

/// Estimate for `m` with `p`. Errors: read_hparams' errors (not for an unknown architecture, whose
/// weights are always reported); value_out_of_range with subject "n_ctx" / "n_seq_max" / "n_ubatch"
/// / "cache_type_k" / "cache_type_v" / "flash_attn" and detail in words for what llama.cpp refuses:
/// a cache type outside is_cache_type, a block size that does not divide the head size, a quantized
/// V cache with flash attention off, n_seq_max 0 or above 256, n_ctx above max_context, n_ubatch or
/// n_batch 0, different K and V types for MLA.
gguf::result<figures> estimate(const gguf::model& m, const params& p) noexcept;

}  // namespace minfer::estimate
