#pragma once
// What llama.cpp itself allocates for a context: the KV cache (and recurrent state) buffer bytes,
// exactly, and the CPU compute buffer bytes, exactly. Read through the dlopen binding
// (tests/support/llama_ref, part::llama_model) with two interposed functions of libggml-base,
// ggml_backend_buffer_get_size and ggml_backend_sched_get_buffer_size, defined in the executable
// (linked with ENABLE_EXPORTS, so libllama binds to them before libggml-base's): each records the
// value it returns, and the log line llama.cpp prints right after ("KV buffer size = 1.23 MiB",
// "compute buffer size = ...") says which buffer it was.
//
// The llama_context_params fields set here (n_ctx, n_batch, n_ubatch, n_seq_max, flash_attn_type,
// type_k, type_v, swa_full) are at the offsets of this build's struct (learned from the machine code of its
// llama_context_default_params, whose defaults 512, 2048, 512, 1, -1, f16, f16, true are checked before
// use), and read back after creation (llama_n_ctx, llama_n_batch, llama_n_ubatch, llama_n_seq_max;
// the types and flash attention from the log).
#include <cstdint>
#include <optional>
#include <string>

#include "llama_ref/llama_ref.hpp"

namespace minfer::estimate_test {

struct llama_memory_request {
    std::uint32_t n_ctx = 4096;
    std::uint32_t n_batch = 2048;
    std::uint32_t n_ubatch = 512;
    std::uint32_t n_seq_max = 1;
    std::string cache_type_k = "f16";  ///< f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl
    std::string cache_type_v = "f16";
    std::string flash_attn = "auto";  ///< auto, on, off
    /// Full-size caches for SWA layers. The library's default is true; llama-server and llama-cli
    /// (common_params) default to false, and so does `minfer estimate`.
    bool swa_full = true;
    bool decode_one = true;           ///< decode one token after creating the context
};

struct llama_memory_figures {
    std::uint32_t n_ctx = 0, n_batch = 0, n_ubatch = 0, n_seq_max = 0;  ///< read back from the context
    std::string flash_attn;                                          ///< "enabled"/"disabled" (log)
    std::uint64_t kv_bytes = 0;       ///< sum of the "KV buffer size" buffers (all caches, e.g. SWA + full)
    std::uint64_t rs_bytes = 0;       ///< sum of the "RS buffer size" buffers (recurrent state)
    std::uint64_t compute_bytes = 0;  ///< the CPU "compute buffer size"
    std::uint64_t cells = 0;          ///< cells of the (last) KV cache ("(N cells, ...)")
    std::uint64_t swa_cells = 0;      ///< cells of the SWA cache when there is one
    double kv_log_mib = 0, rs_log_mib = 0, compute_log_mib = 0;  ///< the log's figures, summed
    double k_log_mib = 0, v_log_mib = 0;                          ///< "K (f16): x MiB, V (f16): y MiB", summed
    std::string k_type, v_type;                                   ///< as the log names them
    int kv_lines = 0, rs_lines = 0, compute_lines = 0;
    bool decoded = false;  ///< one token decoded without error
    std::string log;       ///< llama.cpp's log of the context creation (and decode)
};

/// Load `model_path` with llama.cpp and create a context as `req` asks. nullopt with `why` when the
/// model does not load, the context is refused, or a read-back differs from the request.
std::optional<llama_memory_figures> llama_memory(const minfer::llama_ref::llama_lib& lib, const std::string& model_path,
                                                 const llama_memory_request& req, std::string& why);

/// The figures as one JSON object (one line).
std::string to_json(const llama_memory_figures& f);

}  // namespace minfer::estimate_test
