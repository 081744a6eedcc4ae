#pragma once
// A Hugging Face checkpoint written by the tests that need one without tests/convert/make_models.py:
// a LlamaForCausalLM of rows that fill K-quant blocks (hidden 256, feed-forward 512, 4 heads of 64,
// 2 KV heads, 2 layers, untied output), weights F32 or BF16 draws of a normal distribution
// (deterministic), norms near 1, and a SentencePiece tokenizer.model of 320 pieces (byte fallback).
// Converted, it is a model llama.cpp loads and decodes.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "protobuf_bytes.hpp"
#include "safetensors_bytes.hpp"

namespace minfer::test {

struct ckpt_tensor {
    std::string name;
    std::vector<std::uint64_t> shape;
    bool norm = false;
};

inline std::vector<ckpt_tensor> llama_ckpt_tensors() {
    std::vector<ckpt_tensor> t{{"model.embed_tokens.weight", {320, 256}}, {"lm_head.weight", {320, 256}},
                               {"model.norm.weight", {256}, true}};
    for (int l = 0; l < 2; ++l) {
        const std::string b = "model.layers." + std::to_string(l) + ".";
        t.push_back({b + "input_layernorm.weight", {256}, true});
        t.push_back({b + "post_attention_layernorm.weight", {256}, true});
        t.push_back({b + "self_attn.q_proj.weight", {256, 256}});
        t.push_back({b + "self_attn.k_proj.weight", {128, 256}});
        t.push_back({b + "self_attn.v_proj.weight", {128, 256}});
        t.push_back({b + "self_attn.o_proj.weight", {256, 256}});
        t.push_back({b + "mlp.gate_proj.weight", {512, 256}});
        t.push_back({b + "mlp.up_proj.weight", {512, 256}});
        t.push_back({b + "mlp.down_proj.weight", {256, 512}});
    }
    return t;
}

inline std::filesystem::path write_llama_checkpoint(const std::filesystem::path& dir, bool bf16) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 320,
  "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
  "num_hidden_layers": 2, "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
  "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": false, "torch_dtype": ")"
                                       << (bf16 ? "bfloat16" : "float32") << R"("})";
    spm_model_builder tok;
    tok.piece("<unk>", 0, spm_type::unknown).piece("<s>", 0, spm_type::control);
    tok.piece("</s>", 0, spm_type::control).byte_pieces().byte_fallback(true);
    for (int i = 0; i < 320 - 259; ++i) tok.piece("\xE2\x96\x81w" + std::to_string(i), -static_cast<float>(i));
    std::ofstream(dir / "tokenizer.model", std::ios::binary) << tok.bytes();

    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    auto uniform = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (static_cast<double>(state >> 11) + 0.5) / 9007199254740992.0;
    };
    std::string header = "{";
    std::vector<std::byte> data;
    for (const ckpt_tensor& t : llama_ckpt_tensors()) {
        std::uint64_t n = 1;
        for (std::uint64_t d : t.shape) n *= d;
        const std::uint64_t begin = data.size();
        for (std::uint64_t i = 0; i < n; ++i) {
            const double g = std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * 3.141592653589793 * uniform());
            const float v = static_cast<float>(t.norm ? 1.0 + 0.05 * g : 0.02 * g);
            std::uint32_t bits;
            std::memcpy(&bits, &v, 4);
            if (bf16) {
                const std::uint16_t h = static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
                data.push_back(static_cast<std::byte>(h & 0xFF));
                data.push_back(static_cast<std::byte>(h >> 8));
            } else {
                for (int k = 0; k < 4; ++k) data.push_back(static_cast<std::byte>((bits >> (8 * k)) & 0xFF));
            }
        }
        if (header.size() > 1) header += ",";
        header += "\"" + t.name + "\":{\"dtype\":\"" + (bf16 ? "BF16" : "F32") + "\",\"shape\":[";
        for (std::size_t i = 0; i < t.shape.size(); ++i) header += (i ? "," : "") + std::to_string(t.shape[i]);
        header += "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
    }
    header += "}";
    while ((8 + header.size()) % 8 != 0) header += ' ';
    const auto file = safetensors_file_bytes(header, data);
    std::ofstream(dir / "model.safetensors", std::ios::binary)
        .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
    return dir;
}

}  // namespace minfer::test
