// minfer-bench-make-model: a large llama-shaped model for the toolbox benchmark
// (scripts/bench-toolbox.sh): metadata like a real model's (architecture, hyperparameters, a chat
// template, a 32000-token vocabulary) and f32 tensors of 64 MiB until the size asked for.
//
//   minfer-bench-make-model OUT MiB [--sparse]
//
// Dense: the tensors hold incompressible pseudo-random bytes (nothing can shortcut copying them).
// --sparse: every tensor is zeros written as holes, so a model of many GB costs no disk; copying it
// measures how a tool treats holes and how much memory it holds, not the disk.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "minfer/gguf_write/writer.hpp"

namespace gg = minfer::gguf;

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4 || (argc == 4 && std::strcmp(argv[3], "--sparse") != 0)) {
        std::fputs("usage: minfer-bench-make-model OUT MiB [--sparse]\n", stderr);
        return 2;
    }
    const bool sparse = argc == 4;
    const std::uint64_t mib = std::strtoull(argv[2], nullptr, 10);
    constexpr std::uint64_t tensor_mib = 64;
    const std::uint64_t n_tensors = (mib + tensor_mib - 1) / tensor_mib;

    gg::writer w;
    w.set_string("general.architecture", "llama");
    // A long name, so that the benchmark's in-place edits (shorter names) fit without a reserve.
    w.set_string("general.name", "toolbox benchmark model, with a name long enough that shorter names can be "
                                 "set in place, padded by the slack");
    w.set_u32("llama.block_count", static_cast<std::uint32_t>(n_tensors));
    w.set_u32("llama.context_length", 4096);
    w.set_u32("llama.embedding_length", 4096);
    w.set_string("tokenizer.ggml.model", "llama");
    std::vector<std::string> vocab;
    std::vector<float> scores;
    for (int i = 0; i < 32000; ++i) {
        vocab.push_back("tok" + std::to_string(i));
        scores.push_back(static_cast<float>(-i));
    }
    w.set_strings("tokenizer.ggml.tokens", vocab);
    w.set_array("tokenizer.ggml.scores", gg::value_type::f32, std::span<const float>(scores));
    w.set_u32("tokenizer.ggml.bos_token_id", 1);
    w.set_string("tokenizer.chat_template",
                 "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}</s>{% endfor %}<|assistant|>");
    const std::int64_t ne[] = {4096, 4096};  // 64 MiB of f32
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        const std::string name = "blk." + std::to_string(i) + ".ffn_up.weight";
        if (sparse) {
            w.add_zero_tensor(name, gg::tensor_type::f32, ne);
            continue;
        }
        w.add_tensor(name, gg::tensor_type::f32, ne,
                     gg::tensor_source::callback(tensor_mib << 20, [i](std::uint64_t off, std::span<std::byte> out) {
                         // xorshift64* seeded by the tensor and the offset: incompressible, reproducible
                         std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (off + 1);
                         for (std::size_t k = 0; k + 8 <= out.size(); k += 8) {
                             x ^= x >> 12;
                             x ^= x << 25;
                             x ^= x >> 27;
                             const std::uint64_t v = x * 0x2545F4914F6CDD1Dull;
                             std::memcpy(out.data() + k, &v, 8);
                         }
                         return gg::result<void>{};
                     }));
    }
    if (auto r = w.write(argv[1]); !r) {
        std::fprintf(stderr, "minfer-bench-make-model: %s\n", r.error().message().c_str());
        return 1;
    }
    return 0;
}
