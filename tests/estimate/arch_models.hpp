#pragma once
// Synthetic models, one per architecture, that llama.cpp's loader accepts: every hyperparameter key
// and tensor its load_hparams / load_tensors require, small but non-trivial shapes (several layers,
// GQA, per-layer head_count_kv arrays in "llama" (equal values) and "openelm" (1, 2, 2, 4), SWA
// windows smaller than the tested contexts in gemma2 / gemma3, MLA in deepseek2, a recurrent state
// in mamba), the sample model's 512-token BPE vocabulary, and zero weights (f32, written as holes).
// Used by the estimate-vs-llama.cpp tests and the minfer-make-arch-model tool.
#include <filesystem>
#include <string>
#include <vector>

#include "minfer/gguf/result.hpp"

namespace minfer::estimate_test {

/// The architectures generated (the names the tool and the tests take), in table order:
/// llama, llama-moe, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, deepseek2, mamba, openelm (per-layer
/// head counts: llama.cpp's llama loader reads a head_count_kv array but sizes every layer alike).
const std::vector<std::string>& arch_names();

/// Write the model of `arch` to `out`. @returns the writer's error, or invalid_argument-like
/// error (code bad_key) when `arch` is not one of arch_names().
gguf::result<void> make_arch_model(const std::string& arch, const std::filesystem::path& out) noexcept;

}  // namespace minfer::estimate_test
