// minfer::estimate: hyperparameters read with llama.cpp's keys (scalar and per-layer, defaults,
// precise errors for missing and hostile values) and the KV cache llama.cpp allocates, per
// architecture, against numbers computed by hand in each test from llama.cpp's rules:
//   cells      = GGML_PAD(n_ctx, 256) (per stream: GGML_PAD(n_ctx / n_seq_max, 256), one stream per
//                sequence unless unified)
//   swa cells  = GGML_PAD(min(cells per stream, n_swa * (unified ? n_seq_max : 1) + n_ubatch), 256)
//   K per layer = row_size(type_k, key_length * head_count_kv(il)) * cells
//   V per layer = row_size(type_v, value_length * head_count_kv(il)) * cells (0 for MLA; the widest
//                layer's width on every layer without flash attention)
//   mamba      = ((d_conv - 1) * d_inner + d_state * d_inner) * 4 bytes * max(1, n_seq_max) per layer
// row_size(f16, n) = 2n, row_size(q8_0, n) = n / 32 * 34, row_size(q4_0, n) = n / 32 * 18.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "alloc_probe.hpp"
#include "minfer/estimate/estimate.hpp"
#include "minfer/estimate/hparams.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace {

namespace fs = std::filesystem;
using minfer::estimate::arch;
using minfer::estimate::estimate;
using minfer::estimate::flash_attn_mode;
using minfer::estimate::params;
using minfer::estimate::read_hparams;
using minfer::gguf::errc;
using minfer::gguf::model;
using minfer::gguf::tensor_type;
using minfer::gguf::value_type;
using minfer::gguf::writer;

fs::path scratch(const std::string& name) {
    static std::atomic<int> n{0};
    const fs::path dir = fs::temp_directory_path() / (std::string("minfer-estimate-").append(std::to_string(::getpid())));
    fs::create_directories(dir);
    return dir / (std::to_string(n++) + "-" + name + ".gguf");
}

// A writer with the keys every attention architecture needs, a vocabulary of n_vocab tokens and a
// token embedding (n_embd x n_vocab, f16) so weights are non-trivial.
writer base(const std::string& a, std::uint32_t n_layer, std::uint32_t n_embd, std::uint32_t n_ctx_train,
            std::uint32_t n_vocab = 32) {
    writer w;
    w.set_string("general.architecture", a);
    w.set_u32(a + ".block_count", n_layer);
    w.set_u32(a + ".context_length", n_ctx_train);
    w.set_u32(a + ".embedding_length", n_embd);
    w.set_u32(a + ".feed_forward_length", 4 * n_embd);
    std::vector<std::string> toks;
    for (std::uint32_t i = 0; i < n_vocab; ++i) toks.push_back(std::string("t").append(std::to_string(i)));
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
    const std::int64_t ne[2] = {n_embd, n_vocab};
    w.add_zero_tensor("token_embd.weight", tensor_type::f16, ne);
    return w;
}

model open_written(const writer& w, const std::string& name) {
    const fs::path p = scratch(name);
    auto r = w.write(p);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
    auto m = model::open(p);
    EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message());
    return m ? std::move(*m) : model{};
}

params with_ctx(std::uint64_t ctx) {
    params p;
    p.n_ctx = ctx;
    return p;
}

// ---------------------------------------------------------------- hyperparameters

TEST(EstimateHparams, ScalarHeadsAndDefaults) {
    writer w = base("llama", 4, 256, 4096);
    w.set_u32("llama.attention.head_count", 8);
    w.set_u32("llama.attention.head_count_kv", 2);
    const model m = open_written(w, "scalar");
    auto hp = read_hparams(m);
    ASSERT_TRUE(hp) << hp.error().message();
    EXPECT_EQ(hp->kind, arch::llama);
    EXPECT_EQ(hp->n_layer, 4u);
    EXPECT_EQ(hp->n_ctx_train, 4096u);
    EXPECT_EQ(hp->n_vocab, 32u);
    EXPECT_EQ(hp->n_head, (std::vector<std::uint32_t>{8, 8, 8, 8}));
    EXPECT_EQ(hp->n_head_kv, (std::vector<std::uint32_t>{2, 2, 2, 2}));
    EXPECT_EQ(hp->n_embd_head_k, 32u);  // 256 / 8: no key_length
    EXPECT_EQ(hp->n_embd_head_v, 32u);
    EXPECT_EQ(hp->n_embd_k_gqa(0), 64u);
    EXPECT_EQ(hp->n_ff, (std::vector<std::uint32_t>{1024, 1024, 1024, 1024}));
    EXPECT_FALSE(hp->any_swa());
    EXPECT_FALSE(hp->is_mla);
}

TEST(EstimateHparams, HeadCountKvDefaultsToHeadCount) {
    writer w = base("qwen2", 2, 128, 2048);
    w.set_u32("qwen2.attention.head_count", 4);
    const model m = open_written(w, "kvdefault");
    auto hp = read_hparams(m);
    ASSERT_TRUE(hp) << hp.error().message();
    EXPECT_EQ(hp->n_head_kv, (std::vector<std::uint32_t>{4, 4}));
}

TEST(EstimateHparams, VocabularyFromTheEmbeddingWithoutTokens) {
    writer w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 1);
    w.set_u32("llama.context_length", 256);
    w.set_u32("llama.embedding_length", 64);
    w.set_u32("llama.attention.head_count", 2);
    const std::int64_t ne[2] = {64, 300};
    w.add_zero_tensor("token_embd.weight", tensor_type::f16, ne);
    const model m = open_written(w, "novocab");
    auto hp = read_hparams(m);
    ASSERT_TRUE(hp) << hp.error().message();
    EXPECT_EQ(hp->n_vocab, 300u);
    w.set_u32("llama.vocab_size", 320);
    const model m2 = open_written(w, "vocabsize");
    auto hp2 = read_hparams(m2);
    ASSERT_TRUE(hp2);
    EXPECT_EQ(hp2->n_vocab, 320u);
}

TEST(EstimateHparams, PerLayerHeadCountKv) {
    writer w = base("qwen3", 4, 256, 4096);
    w.set_u32("qwen3.attention.head_count", 8);
    const std::uint32_t kv[4] = {1, 2, 4, 2};
    w.set_array("qwen3.attention.head_count_kv", value_type::u32, std::span<const std::uint32_t>(kv));
    w.set_u32("qwen3.attention.key_length", 128);
    w.set_u32("qwen3.attention.value_length", 64);
    const model m = open_written(w, "perlayer");
    auto hp = read_hparams(m);
    ASSERT_TRUE(hp) << hp.error().message();
    EXPECT_EQ(hp->n_head_kv, (std::vector<std::uint32_t>{1, 2, 4, 2}));
    EXPECT_EQ(hp->n_embd_k_gqa(2), 512u);
    EXPECT_EQ(hp->n_embd_v_gqa(0), 64u);
    EXPECT_EQ(hp->n_embd_v_gqa_max(), 256u);
}

TEST(EstimateHparams, MissingKeysArePreciseErrors) {
    {
        writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.context_length", 4096);
        const model m = open_written(w, "noblocks");
        auto hp = read_hparams(m);
        ASSERT_FALSE(hp);
        EXPECT_EQ(hp.error().code, errc::key_not_found);
        EXPECT_EQ(hp.error().subject, "llama.block_count");
        EXPECT_NE(hp.error().detail.find("llama.block_count"), std::string::npos);
    }
    {
        writer w = base("gemma3", 6, 128, 8192);
        w.set_u32("gemma3.attention.head_count", 4);
        const model m = open_written(w, "nowindow");  // gemma3 needs its sliding window
        auto hp = read_hparams(m);
        ASSERT_FALSE(hp);
        EXPECT_EQ(hp.error().code, errc::key_not_found);
        EXPECT_EQ(hp.error().subject, "gemma3.attention.sliding_window");
    }
    {
        writer w = base("llama", 2, 128, 2048);
        const model m = open_written(w, "noheads");
        auto hp = read_hparams(m);
        ASSERT_FALSE(hp);
        EXPECT_EQ(hp.error().code, errc::key_not_found);
        EXPECT_EQ(hp.error().subject, "llama.attention.head_count");
    }
    {
        writer w = base("mamba", 2, 128, 2048);
        w.set_u32("mamba.ssm.conv_kernel", 4);
        w.set_u32("mamba.ssm.inner_size", 256);
        w.set_u32("mamba.ssm.time_step_rank", 8);
        const model m = open_written(w, "nostate");
        auto hp = read_hparams(m);
        ASSERT_FALSE(hp);
        EXPECT_EQ(hp.error().code, errc::key_not_found);
        EXPECT_EQ(hp.error().subject, "mamba.ssm.state_size");
    }
    {
        writer w;
        const std::int64_t ne[1] = {4};
        w.add_zero_tensor("x", tensor_type::f32, ne);
        const model m = open_written(w, "noarch");
        auto hp = read_hparams(m);
        ASSERT_FALSE(hp);
        EXPECT_EQ(hp.error().code, errc::key_not_found);
        EXPECT_EQ(hp.error().subject, "general.architecture");
    }
}

TEST(EstimateHparams, WrongTypeIsTypeMismatch) {
    writer w = base("llama", 2, 128, 2048);
    w.set_string("llama.attention.head_count", "eight");
    const model m = open_written(w, "wrongtype");
    auto hp = read_hparams(m);
    ASSERT_FALSE(hp);
    EXPECT_EQ(hp.error().code, errc::type_mismatch);
    EXPECT_EQ(hp.error().subject, "llama.attention.head_count");
}

TEST(EstimateHparams, HostileValues) {
    struct bad {
        const char* what;
        void (*edit)(writer&);
        const char* subject;
        std::uint64_t expected, found;
    };
    const bad cases[] = {
        {"zero heads", [](writer& w) { w.set_u32("llama.attention.head_count", 0); }, "llama.attention.head_count", 1, 0},
        {"kv not dividing",
         [](writer& w) {
             w.set_u32("llama.attention.head_count", 8);
             w.set_u32("llama.attention.head_count_kv", 3);
         },
         "llama.attention.head_count_kv", 8, 3},
        {"zero kv heads",
         [](writer& w) {
             w.set_u32("llama.attention.head_count", 8);
             w.set_u32("llama.attention.head_count_kv", 0);
         },
         "llama.attention.head_count_kv", 8, 0},
        {"block_count 2^31",
         [](writer& w) {
             w.set_u32("llama.block_count", 0x80000000u);
             w.set_u32("llama.attention.head_count", 8);
         },
         "llama.block_count", 512, 0x80000000u},
        {"block_count 0",
         [](writer& w) {
             w.set_u32("llama.block_count", 0);
             w.set_u32("llama.attention.head_count", 8);
         },
         "llama.block_count", 512, 0},
        {"per-layer array too short",
         [](writer& w) {
             w.set_u32("llama.attention.head_count", 8);
             const std::uint32_t kv[3] = {2, 2, 2};
             w.set_array("llama.attention.head_count_kv", value_type::u32, std::span<const std::uint32_t>(kv));
         },
         "llama.attention.head_count_kv", 4, 3},
        {"experts used > experts",
         [](writer& w) {
             w.set_u32("llama.attention.head_count", 8);
             w.set_u32("llama.expert_count", 4);
             w.set_u32("llama.expert_used_count", 5);
         },
         "llama.expert_used_count", 4, 5},
        {"2^20 experts",
         [](writer& w) {
             w.set_u32("llama.attention.head_count", 8);
             w.set_u32("llama.expert_count", 1u << 20);
             w.set_u32("llama.expert_used_count", 2);
         },
         "llama.expert_count", 512, 1u << 20},
    };
    for (const bad& c : cases) {
        SCOPED_TRACE(c.what);
        writer w = base("llama", 4, 256, 4096);
        c.edit(w);
        const model m = open_written(w, "hostile");
        minfer::test::alloc_probe probe;
        auto hp = read_hparams(m);
        ASSERT_FALSE(hp);
        EXPECT_EQ(hp.error().code, errc::bad_hyperparameter);
        EXPECT_EQ(hp.error().subject, c.subject);
        EXPECT_EQ(hp.error().expected, c.expected);
        EXPECT_EQ(hp.error().found, c.found);
        EXPECT_FALSE(hp.error().detail.empty());
        EXPECT_LT(probe.largest(), std::size_t{1} << 16) << "a hostile count became an allocation";
    }
}

TEST(EstimateHparams, ContextLengthBeyond32BitsIsRefused) {
    writer w = base("llama", 4, 256, 4096);
    w.set_u32("llama.attention.head_count", 8);
    w.set_u64("llama.context_length", std::uint64_t{1} << 40);
    const model m = open_written(w, "ctx2e40");
    auto hp = read_hparams(m);
    ASSERT_FALSE(hp);
    EXPECT_EQ(hp.error().code, errc::value_out_of_range);
    EXPECT_EQ(hp.error().subject, "llama.context_length");
    // And through estimate: the same error, no overflow anywhere.
    auto f = estimate(m, params{});
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().subject, "llama.context_length");
}

TEST(EstimateHparams, HugeRequestedContextIsRefusedNotOverflowed) {
    writer w = base("llama", 4, 256, 4096);
    w.set_u32("llama.attention.head_count", 8);
    const model m = open_written(w, "bigctx");
    auto f = estimate(m, with_ctx(std::uint64_t{1} << 40));
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().code, errc::bad_value_text);
    EXPECT_EQ(f.error().subject, "n_ctx");
    // The largest accepted context: 4 layers x 8 heads x 32 K values x 2 bytes x 4294967040 cells, in 64 bits.
    auto ok = estimate(m, with_ctx(minfer::estimate::max_context));
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->kv->cells, 4294967040u);
    EXPECT_EQ(ok->kv->k_bytes, std::uint64_t{4} * 256 * 2 * 4294967040u);
}

// ---------------------------------------------------------------- KV cache per architecture

TEST(EstimateKv, LlamaPadsTheContextTo256) {
    writer w = base("llama", 4, 256, 4096);
    w.set_u32("llama.attention.head_count", 8);
    w.set_u32("llama.attention.head_count_kv", 2);
    const model m = open_written(w, "llama");
    auto f = estimate(m, with_ctx(1000));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->n_ctx, 1024u);
    EXPECT_EQ(f->kv->cells, 1024u);
    EXPECT_EQ(f->kv->k_bytes, 4u * (64 * 2) * 1024);  // 4 layers, 2 heads x 32, f16
    EXPECT_EQ(f->kv->v_bytes, 4u * (64 * 2) * 1024);
    EXPECT_EQ(f->kv->recurrent_state_bytes, 0u);
    EXPECT_TRUE(f->flash_attn);  // auto: on, as llama.cpp resolves it on the CPU

    // Default context: the training context (4096, already a multiple of 256).
    auto d = estimate(m, params{});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->kv->cells, 4096u);
    EXPECT_EQ(d->n_batch, 2048u);
    EXPECT_EQ(d->n_ubatch, 512u);

    // q8_0 K and q4_0 V: 64 values = 2 blocks of 34 / 18 bytes.
    params q = with_ctx(1000);
    q.type_k = tensor_type::q8_0;
    q.type_v = tensor_type::q4_0;
    auto fq = estimate(m, q);
    ASSERT_TRUE(fq) << fq.error().message();
    EXPECT_EQ(fq->kv->k_bytes, 4u * (2 * 34) * 1024);
    EXPECT_EQ(fq->kv->v_bytes, 4u * (2 * 18) * 1024);

    // A context below the ubatch: n_batch and n_ubatch shrink to it.
    auto s = estimate(m, with_ctx(100));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->kv->cells, 256u);
    EXPECT_EQ(s->n_ubatch, 100u);
}

TEST(EstimateKv, ParallelSequencesGetOneStreamEach) {
    writer w = base("qwen2", 2, 128, 32768);
    w.set_u32("qwen2.attention.head_count", 4);
    w.set_u32("qwen2.attention.head_count_kv", 1);
    const model m = open_written(w, "qwen2");
    params p = with_ctx(1000);
    p.n_seq_max = 3;
    auto f = estimate(m, p);
    ASSERT_TRUE(f) << f.error().message();
    // pad(1000) = 1024; 1024 / 3 = 341 -> pad 512 per stream; n_ctx = 3 x 512.
    EXPECT_EQ(f->n_ctx_seq, 512u);
    EXPECT_EQ(f->n_ctx, 1536u);
    EXPECT_EQ(f->kv->cells, 1536u);
    EXPECT_EQ(f->kv->k_bytes, 2u * (32 * 2) * 1536);
    // Unified: one stream of the padded context.
    p.kv_unified = true;
    auto u = estimate(m, p);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->kv->cells, 1024u);
    EXPECT_EQ(u->n_stream, 1u);
}

TEST(EstimateKv, Qwen3PerLayerWidthsAndTransposedV) {
    writer w = base("qwen3", 4, 256, 40960);
    w.set_u32("qwen3.attention.head_count", 8);
    const std::uint32_t kv[4] = {1, 2, 4, 2};
    w.set_array("qwen3.attention.head_count_kv", value_type::u32, std::span<const std::uint32_t>(kv));
    w.set_u32("qwen3.attention.key_length", 128);
    w.set_u32("qwen3.attention.value_length", 64);
    const model m = open_written(w, "qwen3");
    auto f = estimate(m, with_ctx(2048));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->kv->k_bytes, (128u * (1 + 2 + 4 + 2)) * 2 * 2048);
    EXPECT_EQ(f->kv->v_bytes, (64u * (1 + 2 + 4 + 2)) * 2 * 2048);
    ASSERT_EQ(f->kv->layers.size(), 4u);
    EXPECT_EQ(f->kv->layers[2].k_bytes, 128u * 4 * 2 * 2048);
    // Without flash attention V is transposed and every layer has the widest layer's width (4 x 64).
    params off = with_ctx(2048);
    off.flash_attn = flash_attn_mode::off;
    auto g = estimate(m, off);
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_FALSE(g->flash_attn);
    EXPECT_EQ(g->kv->v_bytes, 4u * (64 * 4) * 2 * 2048);
    EXPECT_EQ(g->kv->k_bytes, f->kv->k_bytes);
}

TEST(EstimateKv, Qwen3MoeAndMistralStyleMoe) {
    for (const char* a : {"qwen3moe", "llama"}) {
        SCOPED_TRACE(a);
        const std::string s(a);
        writer w = base(s, 3, 128, 8192);
        w.set_u32(s + ".attention.head_count", 4);
        w.set_u32(s + ".attention.head_count_kv", 2);
        w.set_u32(s + ".expert_count", 8);
        w.set_u32(s + ".expert_used_count", 2);
        w.set_u32(s + ".expert_feed_forward_length", 64);
        const model m = open_written(w, s + "-moe");
        auto hp = read_hparams(m);
        ASSERT_TRUE(hp) << hp.error().message();
        EXPECT_EQ(hp->n_expert, 8u);
        EXPECT_EQ(hp->n_expert_used, 2u);
        EXPECT_EQ(hp->n_ff_exp, 64u);
        auto f = estimate(m, with_ctx(4096));
        ASSERT_TRUE(f) << f.error().message();
        EXPECT_EQ(f->kv->k_bytes, 3u * (32 * 2) * 2 * 4096);
        EXPECT_EQ(f->kv->v_bytes, 3u * (32 * 2) * 2 * 4096);
        EXPECT_GT(*f->cpu_only.compute, 0u);
    }
}

TEST(EstimateKv, Gemma2EveryOtherLayerSlides) {
    writer w = base("gemma2", 6, 128, 8192);
    w.set_u32("gemma2.attention.head_count", 4);
    w.set_u32("gemma2.attention.head_count_kv", 2);
    w.set_u32("gemma2.attention.key_length", 64);
    w.set_u32("gemma2.attention.value_length", 64);
    w.set_u32("gemma2.attention.sliding_window", 128);
    const model m = open_written(w, "gemma2");
    auto hp = read_hparams(m);
    ASSERT_TRUE(hp);
    EXPECT_EQ(hp->swa_layers, (std::vector<bool>{true, false, true, false, true, false}));
    auto f = estimate(m, with_ctx(4096));
    ASSERT_TRUE(f) << f.error().message();
    // SWA: pad(min(4096, 128 + 512), 256) = 768 cells; full: 4096. Row: 2 heads x 64 x f16 = 256 bytes.
    EXPECT_EQ(f->kv->cells, 4096u);
    EXPECT_EQ(f->kv->swa_cells, 768u);
    EXPECT_EQ(f->kv->k_bytes, 3u * 256 * 768 + 3u * 256 * 4096);
    EXPECT_EQ(f->kv->v_bytes, f->kv->k_bytes);
    EXPECT_EQ(f->kv->layers[0].cells, 768u);
    EXPECT_EQ(f->kv->layers[1].cells, 4096u);

    // Two sequences, not unified: per stream 2048 cells and pad(min(2048, 128 + 512), 256) = 768 SWA cells.
    params p = with_ctx(4096);
    p.n_seq_max = 2;
    auto g = estimate(m, p);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->kv->cells, 4096u);
    EXPECT_EQ(g->kv->swa_cells, 1536u);
    // Unified: the window of every sequence, pad(min(4096, 2 x 128 + 512), 256) = 768, one stream.
    p.kv_unified = true;
    auto u = estimate(m, p);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->kv->swa_cells, 768u);

    // Absent window: llama.cpp's gemma2 default 4096, so the SWA cache is the whole context at 4096.
    writer w2 = base("gemma2", 2, 128, 8192);
    w2.set_u32("gemma2.attention.head_count", 4);
    const model m2 = open_written(w2, "gemma2-default");
    auto hp2 = read_hparams(m2);
    ASSERT_TRUE(hp2);
    EXPECT_EQ(hp2->n_swa, 4096u);
    auto f2 = estimate(m2, with_ctx(8192));
    ASSERT_TRUE(f2);
    EXPECT_EQ(f2->kv->swa_cells, 4608u);  // pad(min(8192, 4096 + 512), 256)
}

TEST(EstimateKv, Gemma3FiveOfSixLayersSlide) {
    writer w = base("gemma3", 12, 128, 131072);
    w.set_u32("gemma3.attention.head_count", 4);
    w.set_u32("gemma3.attention.head_count_kv", 1);
    w.set_u32("gemma3.attention.key_length", 256);
    w.set_u32("gemma3.attention.value_length", 256);
    w.set_u32("gemma3.attention.sliding_window", 1024);
    const model m = open_written(w, "gemma3");
    auto hp = read_hparams(m);
    ASSERT_TRUE(hp);
    for (std::uint32_t il = 0; il < 12; ++il) EXPECT_EQ(hp->is_swa(il), il % 6 != 5) << il;
    auto f = estimate(m, with_ctx(32768));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->kv->swa_cells, 1536u);  // pad(1024 + 512, 256)
    EXPECT_EQ(f->kv->k_bytes, 10u * 512 * 1536 + 2u * 512 * 32768);  // row: 256 x f16 = 512 bytes
    // ctx 256: the ubatch shrinks to 256 and the SWA cache to the context.
    auto s = estimate(m, with_ctx(256));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->kv->swa_cells, 256u);
    EXPECT_EQ(s->kv->k_bytes, 12u * 512 * 256);

    // An explicit per-layer pattern replaces the architecture's.
    writer w2 = base("gemma3", 3, 128, 4096);
    w2.set_u32("gemma3.attention.head_count", 4);
    w2.set_u32("gemma3.attention.sliding_window", 512);
    const bool pat[3] = {false, true, false};
    w2.set_array("gemma3.attention.sliding_window_pattern", value_type::boolean, std::span<const bool>(pat));
    const model m2 = open_written(w2, "gemma3-pattern");
    auto hp2 = read_hparams(m2);
    ASSERT_TRUE(hp2) << hp2.error().message();
    EXPECT_EQ(hp2->swa_layers, (std::vector<bool>{false, true, false}));
}

TEST(EstimateKv, Phi3WindowButNoSwaCache) {
    writer w = base("phi3", 2, 128, 4096);
    w.set_u32("phi3.attention.head_count", 4);
    w.set_u32("phi3.attention.sliding_window", 2047);
    const model m = open_written(w, "phi3");
    auto f = estimate(m, with_ctx(4096));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->kv->swa_cells, 0u);
    EXPECT_EQ(f->kv->k_bytes, 2u * (128 * 2) * 4096);
}

TEST(EstimateKv, Deepseek2MlaCachesKOnly) {
    writer w = base("deepseek2", 3, 256, 163840);
    w.set_u32("deepseek2.attention.head_count", 16);
    w.set_u32("deepseek2.attention.head_count_kv", 1);
    w.set_u32("deepseek2.attention.key_length", 576);  // kv_lora_rank 512 + rope 64
    w.set_u32("deepseek2.attention.value_length", 512);
    w.set_u32("deepseek2.attention.key_length_mla", 192);
    w.set_u32("deepseek2.attention.value_length_mla", 128);
    w.set_u32("deepseek2.attention.kv_lora_rank", 512);
    w.set_u32("deepseek2.attention.q_lora_rank", 384);
    w.set_u32("deepseek2.rope.dimension_count", 64);
    w.set_u32("deepseek2.expert_count", 8);
    w.set_u32("deepseek2.expert_used_count", 2);
    w.set_u32("deepseek2.expert_feed_forward_length", 64);
    w.set_u32("deepseek2.expert_shared_count", 1);
    w.set_u32("deepseek2.leading_dense_block_count", 1);
    const model m = open_written(w, "deepseek2");
    auto hp = read_hparams(m);
    ASSERT_TRUE(hp) << hp.error().message();
    EXPECT_TRUE(hp->is_mla);
    auto f = estimate(m, with_ctx(4096));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->kv->k_bytes, 3u * 576 * 2 * 4096);
    EXPECT_EQ(f->kv->v_bytes, 0u);
    params q = with_ctx(4096);
    q.type_k = q.type_v = tensor_type::q8_0;
    auto g = estimate(m, q);
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(g->kv->k_bytes, 3u * (576 / 32 * 34) * 4096);
    q.type_v = tensor_type::f16;
    auto h = estimate(m, q);
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error().subject, "cache_type_v");

    // Without the MLA keys: a plain cache of head_count_kv heads.
    writer w2 = base("deepseek2", 2, 256, 4096);
    w2.set_u32("deepseek2.attention.head_count", 4);
    w2.set_u32("deepseek2.attention.key_length", 192);
    w2.set_u32("deepseek2.attention.value_length", 128);
    w2.set_u32("deepseek2.attention.kv_lora_rank", 512);
    const model m2 = open_written(w2, "deepseek2-plain");
    auto f2 = estimate(m2, with_ctx(256));
    ASSERT_TRUE(f2) << f2.error().message();
    EXPECT_EQ(f2->kv->k_bytes, 2u * (192 * 4 * 2) * 256);
    EXPECT_EQ(f2->kv->v_bytes, 2u * (128 * 4 * 2) * 256);
}

TEST(EstimateKv, MambaRecurrentState) {
    writer w = base("mamba", 4, 256, 1048576);
    w.set_u32("mamba.feed_forward_length", 0);
    w.set_u32("mamba.ssm.conv_kernel", 4);
    w.set_u32("mamba.ssm.inner_size", 512);
    w.set_u32("mamba.ssm.state_size", 16);
    w.set_u32("mamba.ssm.time_step_rank", 16);
    const model m = open_written(w, "mamba");
    auto f = estimate(m, with_ctx(4096));
    ASSERT_TRUE(f) << f.error().message();
    // Per layer and sequence: conv (4 - 1) x 512 + scan 16 x 512 values, f32.
    EXPECT_EQ(f->kv->recurrent_state_bytes, 4u * (3 * 512 + 16 * 512) * 4);
    EXPECT_EQ(f->kv->k_bytes, 0u);
    EXPECT_EQ(f->kv->v_bytes, 0u);
    EXPECT_EQ(f->kv->cells, 1u);
    params p = with_ctx(4096);
    p.n_seq_max = 3;
    auto g = estimate(m, p);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->kv->recurrent_state_bytes, 3u * 4 * (3 * 512 + 16 * 512) * 4);
    EXPECT_EQ(g->kv->cells, 3u);
}

// ---------------------------------------------------------------- weights, unknown, refusals

TEST(EstimateWeights, TokenEmbeddingsStayOnTheHost) {
    writer w = base("llama", 2, 64, 2048, 100);  // token_embd: 64 x 100 f16 = 12800 bytes
    w.set_u32("llama.attention.head_count", 4);
    const std::int64_t ne[2] = {64, 64};
    w.add_zero_tensor("blk.0.attn_q.weight", tensor_type::f32, ne);  // 16384 bytes
    const std::int64_t q8[2] = {64, 100};
    w.add_zero_tensor("output.weight", tensor_type::q8_0, q8);  // 100 rows x 68 = 6800 bytes
    const model m = open_written(w, "weights");
    auto f = estimate(m, with_ctx(512));
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->weights_bytes, 12800u + 16384u + 6800u);
    EXPECT_EQ(f->cpu_only.weights, f->weights_bytes);
    EXPECT_EQ(f->host.weights, 12800u);
    EXPECT_EQ(f->gpu.weights, 16384u + 6800u);
    EXPECT_FALSE(f->output_tied);
    EXPECT_EQ(f->cpu_only.total(), f->cpu_only.weights + *f->cpu_only.kv + *f->cpu_only.compute);
}

TEST(EstimateWeights, TiedOutputIsCopiedToTheGpu) {
    writer w = base("llama", 2, 64, 2048, 100);
    w.set_u32("llama.attention.head_count", 4);
    const model m = open_written(w, "tied");
    auto f = estimate(m, with_ctx(512));
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->output_tied);
    EXPECT_EQ(f->host.weights, 12800u);
    EXPECT_EQ(f->gpu.weights, 12800u);
}

TEST(EstimateUnknown, WeightsOnlyNoKvNoCompute) {
    writer w;
    w.set_string("general.architecture", "bert");
    w.set_u32("bert.context_length", 512);
    const std::int64_t ne[2] = {32, 8};
    w.add_zero_tensor("token_embd.weight", tensor_type::f32, ne);
    const model m = open_written(w, "bert");
    auto f = estimate(m, params{});
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_FALSE(f->hp.known());
    EXPECT_EQ(f->hp.architecture, "bert");
    EXPECT_EQ(f->weights_bytes, 32u * 8 * 4);
    EXPECT_FALSE(f->kv.has_value());
    EXPECT_FALSE(f->cpu_only.kv.has_value());
    EXPECT_FALSE(f->cpu_only.compute.has_value());
    EXPECT_FALSE(f->gpu.compute.has_value());
}

TEST(EstimateRefusals, WhatLlamaCppRefuses) {
    writer w = base("llama", 2, 160, 4096);  // head 40: not a multiple of 32
    w.set_u32("llama.attention.head_count", 4);
    const model m = open_written(w, "refuse");
    {
        params p = with_ctx(512);
        p.type_v = tensor_type::q8_0;
        p.flash_attn = flash_attn_mode::off;
        auto f = estimate(m, p);
        ASSERT_FALSE(f);
        EXPECT_EQ(f.error().subject, "flash_attn");
    }
    {
        params p = with_ctx(512);
        p.type_k = tensor_type::q8_0;
        auto f = estimate(m, p);
        ASSERT_FALSE(f);
        EXPECT_EQ(f.error().subject, "cache_type_k");
        EXPECT_EQ(f.error().expected, 32u);
        EXPECT_EQ(f.error().found, 40u);
    }
    {
        params p = with_ctx(512);
        p.type_k = tensor_type::q4_k;
        auto f = estimate(m, p);
        ASSERT_FALSE(f);
        EXPECT_EQ(f.error().subject, "cache_type_k");
    }
    for (std::uint32_t n : {0u, 257u}) {
        params p = with_ctx(512);
        p.n_seq_max = n;
        auto f = estimate(m, p);
        ASSERT_FALSE(f);
        EXPECT_EQ(f.error().subject, "n_seq_max");
    }
    {
        params p = with_ctx(512);
        p.type_k = tensor_type::f32;
        p.type_v = tensor_type::bf16;
        auto f = estimate(m, p);
        ASSERT_TRUE(f) << f.error().message();
        EXPECT_EQ(f->kv->k_bytes, 2u * 160 * 4 * 512);
        EXPECT_EQ(f->kv->v_bytes, 2u * 160 * 2 * 512);
    }
}

}  // namespace
