// minfer-bench-make-model: a large llama-shaped model for the toolbox benchmark
// (scripts/bench-toolbox.sh): metadata like a real model's (architecture, hyperparameters, a chat
// template, a 32000-token vocabulary) and f32 tensors of 64 MiB until the size asked for.
//
//   minfer-bench-make-model OUT MiB [--sparse]
//   minfer-bench-make-model OUT --dump-types      (scripts/bench-dump.sh)
//
// --dump-types: one tensor per type `minfer tensor --dump` converts (f32, f16, bf16, the legacy and
// k-quants, every IQ type, tq1_0, tq2_0, mxfp4), each of shape 4096 x 16384 (64 Mi values) with
// pseudo-random bytes as its blocks: the conversion's speed does not depend on the values, and both
// sides of the benchmark convert the same bytes.
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

// xorshift64* from `seed` into `out`, 8 bytes at a time (a tail under 8 bytes is left as it is).
void xorshift_fill(std::uint64_t seed, std::span<std::byte> out) {
    std::uint64_t x = seed;
    for (std::size_t k = 0; k + 8 <= out.size(); k += 8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        const std::uint64_t v = x * 0x2545F4914F6CDD1Dull;
        std::memcpy(out.data() + k, &v, 8);
    }
}

int dump_types(const char* out) {
    using tt = gg::tensor_type;
    const tt types[] = {tt::f32, tt::f16, tt::bf16, tt::q4_0, tt::q4_1, tt::q5_0, tt::q5_1, tt::q8_0,
                        tt::q2_k, tt::q3_k, tt::q4_k, tt::q5_k, tt::q6_k, tt::iq2_xxs, tt::iq2_xs, tt::iq2_s,
                        tt::iq3_xxs, tt::iq3_s, tt::iq1_s, tt::iq1_m, tt::iq4_nl, tt::iq4_xs, tt::tq1_0,
                        tt::tq2_0, tt::mxfp4};
    gg::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "dump benchmark: one 64 Mi-value tensor per type");
    const std::int64_t ne[] = {4096, 16384};
    std::uint64_t seed = 1;
    for (tt type : types) {
        const gg::type_traits* t = gg::traits(static_cast<std::uint32_t>(type));
        const std::uint64_t bytes = std::uint64_t{4096} * 16384 / t->block_elems * t->block_bytes;
        w.add_tensor(std::string(gg::to_string(type)), type, ne,
                     gg::tensor_source::callback(bytes, [s = seed++](std::uint64_t off, std::span<std::byte> o) {
                         xorshift_fill(s * 0x9E3779B97F4A7C15ull ^ (off + 1), o);
                         return gg::result<void>{};
                     }));
    }
    if (auto r = w.write(out); !r) {
        std::fprintf(stderr, "minfer-bench-make-model: %s\n", r.error().message().c_str());
        return 1;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[2], "--dump-types") == 0) return dump_types(argv[1]);
    if (argc < 3 || argc > 4 || (argc == 4 && std::strcmp(argv[3], "--sparse") != 0)) {
        std::fputs("usage: minfer-bench-make-model OUT MiB [--sparse] | OUT --dump-types\n", stderr);
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
                         xorshift_fill((i + 1) * 0x9E3779B97F4A7C15ull ^ (off + 1), out);
                         return gg::result<void>{};
                     }));
    }
    if (auto r = w.write(argv[1]); !r) {
        std::fprintf(stderr, "minfer-bench-make-model: %s\n", r.error().message().c_str());
        return 1;
    }
    return 0;
}
