// `minfer estimate` through the real binary: the table, the JSON contract (keys and exact KV bytes,
// computed by hand here from llama.cpp's rules), every option, the exit codes, a split set giving the
// same figures as its merged model, and an unknown architecture (weights only, null KV and compute).
#include "cli_support.hpp"

namespace minfer_cli_test {
namespace {

// A qwen2-shaped model: 4 layers, n_embd 128, 4 heads of 32, 2 KV heads (K/V row: 64 values),
// vocabulary 64, training context 8192; tensors: token_embd (f16 128 x 64), output (q8_0
// 128 x 64), four blk tensors (f32 128 x 128).
fs::path write_qwen2(const fs::path& dir, const std::string& name, std::uint32_t head_count = 4) {
    gguf::writer w;
    w.set_string("general.architecture", "qwen2");
    w.set_u32("qwen2.block_count", 4);
    w.set_u32("qwen2.context_length", 8192);
    w.set_u32("qwen2.embedding_length", 128);
    w.set_u32("qwen2.feed_forward_length", 256);
    w.set_u32("qwen2.attention.head_count", head_count);
    w.set_u32("qwen2.attention.head_count_kv", 2);
    std::vector<std::string> toks;
    for (int i = 0; i < 64; ++i) toks.push_back(std::string("t").append(std::to_string(i)));
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
    const std::array<std::int64_t, 2> emb{128, 64};
    w.add_zero_tensor("token_embd.weight", gguf::tensor_type::f16, emb);
    w.add_zero_tensor("output.weight", gguf::tensor_type::q8_0, emb);
    const std::array<std::int64_t, 2> sq{128, 128};
    for (int il = 0; il < 4; ++il) w.add_zero_tensor(std::string("blk.").append(std::to_string(il)).append(".attn_q.weight"), gguf::tensor_type::f32, sq);
    const fs::path p = dir / name;
    must_write(w, p);
    return p;
}

constexpr std::uint64_t token_embd_bytes = 128 * 64 * 2;
constexpr std::uint64_t output_bytes = 64 * (128 / 32 * 34);
constexpr std::uint64_t blk_bytes = 4 * 128 * 128 * 4;
constexpr std::uint64_t weights = token_embd_bytes + output_bytes + blk_bytes;

const fs::path& est_dir() {
    static const fs::path d = [] {
        const fs::path p = temp_root() / "estimate";
        fs::create_directories(p);
        return p;
    }();
    return d;
}

const fs::path& qwen2() {
    static const fs::path p = write_qwen2(est_dir(), "qwen2.gguf");
    return p;
}

json run_json(std::vector<std::string> args) {
    args.insert(args.begin(), "estimate");
    args.push_back("--json");
    const run_result r = run(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return json::parse(r.out);
}

TEST(Estimate, TextTable) {
    const run_result r = run({"estimate", qwen2().string(), "--ctx", "1000"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("Architecture: qwen2\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ctx 1024 (training 8192), batch 1000, ubatch 512, parallel 1, cache k f16 v f16, flash attention on (auto)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("KV cache: 4 layers, 1024 cells, K 0.50 MiB, V 0.50 MiB"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("CPU only"), std::string::npos);
    EXPECT_NE(r.out.find("full GPU offload"), std::string::npos);
    for (const char* row : {"weights", "KV cache", "compute buffer", "total"}) {
        bool found = false;
        for (const std::string& l : lines_of(r.out)) found = found || l.rfind(row, 0) == 0;
        EXPECT_TRUE(found) << "no row " << row << " in\n" << r.out;
    }
    // KV row: 1 MiB on the CPU and the GPU, nothing on the host.
    EXPECT_TRUE(has_squeezed_line(r.out, "KV cache 1.00 MiB 1.00 MiB 0.00 MiB")) << r.out;
}

TEST(Estimate, JsonContract) {
    const json j = run_json({qwen2().string(), "--ctx", "1000"});
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"model", "architecture", "architecture_known", "parameters", "weights_bytes",
                                              "kv_cache_bytes", "kv_cache", "cpu_only", "full_gpu_offload"}));
    EXPECT_EQ(j["model"], qwen2().string());
    EXPECT_EQ(j["architecture"], "qwen2");
    EXPECT_EQ(j["architecture_known"], true);
    const json& p = j["parameters"];
    EXPECT_EQ(p["ctx"], 1024);
    EXPECT_EQ(p["ctx_train"], 8192);
    EXPECT_EQ(p["batch"], 1000);  // llama.cpp: min(n_ctx asked, n_batch)
    EXPECT_EQ(p["ubatch"], 512);
    EXPECT_EQ(p["parallel"], 1);
    EXPECT_EQ(p["cache_type_k"], "f16");
    EXPECT_EQ(p["cache_type_v"], "f16");
    EXPECT_EQ(p["flash_attn"], true);
    EXPECT_EQ(j["weights_bytes"], weights);
    // 4 layers x 64 values x 2 bytes x 1024 cells, for K and for V.
    const std::uint64_t k = 4 * 64 * 2 * 1024;
    EXPECT_EQ(j["kv_cache"]["cells"], 1024);
    EXPECT_EQ(j["kv_cache"]["k_bytes"], k);
    EXPECT_EQ(j["kv_cache"]["v_bytes"], k);
    EXPECT_EQ(j["kv_cache"]["recurrent_state_bytes"], 0);
    EXPECT_EQ(j["kv_cache_bytes"], 2 * k);
    const json& cpu = j["cpu_only"]["cpu"];
    EXPECT_EQ(cpu["weights_bytes"], weights);
    EXPECT_EQ(cpu["kv_cache_bytes"], 2 * k);
    ASSERT_TRUE(cpu["compute_buffer_bytes"].is_number_unsigned());
    EXPECT_GT(cpu["compute_buffer_bytes"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(cpu["total_bytes"], weights + 2 * k + cpu["compute_buffer_bytes"].get<std::uint64_t>());
    const json& gpu = j["full_gpu_offload"]["gpu"];
    const json& host = j["full_gpu_offload"]["host"];
    EXPECT_EQ(gpu["weights_bytes"], weights - token_embd_bytes);
    EXPECT_EQ(host["weights_bytes"], token_embd_bytes);
    EXPECT_EQ(gpu["kv_cache_bytes"], 2 * k);
    EXPECT_EQ(host["kv_cache_bytes"], 0);
    for (const json* d : {&gpu, &host})
        EXPECT_EQ((*d)["total_bytes"], (*d)["weights_bytes"].get<std::uint64_t>() + (*d)["kv_cache_bytes"].get<std::uint64_t>() +
                                           (*d)["compute_buffer_bytes"].get<std::uint64_t>());
}

TEST(Estimate, Options) {
    const std::string m = qwen2().string();
    {
        const json j = run_json({m});  // default: the training context
        EXPECT_EQ(j["parameters"]["ctx"], 8192);
        EXPECT_EQ(j["parameters"]["batch"], 2048);
        EXPECT_EQ(j["kv_cache_bytes"], 2 * 4 * 64 * 2 * 8192);
    }
    {
        const json j = run_json({m, "--ctx", "4096", "--cache-type-k", "q8_0", "--cache-type-v", "q4_0"});
        EXPECT_EQ(j["parameters"]["cache_type_k"], "q8_0");
        EXPECT_EQ(j["parameters"]["cache_type_v"], "q4_0");
        EXPECT_EQ(j["kv_cache"]["k_bytes"], 4 * (2 * 34) * 4096);
        EXPECT_EQ(j["kv_cache"]["v_bytes"], 4 * (2 * 18) * 4096);
    }
    {
        const json j = run_json({m, "--ctx", "4096", "--parallel", "3"});
        // pad(4096 / 3 = 1365, 256) = 1536 per sequence, 3 streams.
        EXPECT_EQ(j["parameters"]["parallel"], 3);
        EXPECT_EQ(j["parameters"]["ctx"], 4608);
        EXPECT_EQ(j["kv_cache"]["cells"], 4608);
        EXPECT_EQ(j["kv_cache"]["k_bytes"], 4 * 64 * 2 * 4608);
    }
    {
        const json on = run_json({m, "--ctx", "4096"});
        const json off = run_json({m, "--ctx", "4096", "--flash-attn", "off"});
        EXPECT_EQ(off["parameters"]["flash_attn"], false);
        EXPECT_EQ(off["kv_cache_bytes"], on["kv_cache_bytes"]);
        // Without flash attention the KQ matrix (4096 x 512 x 4 heads, f32) is in the compute buffer.
        EXPECT_GT(off["cpu_only"]["cpu"]["compute_buffer_bytes"].get<std::uint64_t>(), std::uint64_t{4096} * 512 * 4 * 4);
        EXPECT_LT(on["cpu_only"]["cpu"]["compute_buffer_bytes"].get<std::uint64_t>(), std::uint64_t{4096} * 512 * 4 * 4);
    }
    {
        const json j = run_json({m, "--ctx", "4096", "--batch", "1024", "--ubatch", "256"});
        EXPECT_EQ(j["parameters"]["batch"], 1024);
        EXPECT_EQ(j["parameters"]["ubatch"], 256);
    }
    {
        const json j = run_json({m, "--ctx", "100"});
        EXPECT_EQ(j["parameters"]["ctx"], 256);
        EXPECT_EQ(j["parameters"]["ubatch"], 100);
    }
}

TEST(Estimate, ExitCodes) {
    const std::string m = qwen2().string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> usage{
        {{"--ctx", "0"}, "--ctx '0'"},
        {{"--ctx", "abc"}, "--ctx 'abc'"},
        {{"--ctx", "-5"}, "--ctx"},
        {{"--ctx", "1099511627776"}, "--ctx"},
        {{"--batch", "0"}, "--batch '0'"},
        {{"--ubatch", "x"}, "--ubatch 'x'"},
        {{"--batch", "256", "--ubatch", "512"}, "--ubatch 512 is larger than --batch 256"},
        {{"--cache-type-k", "q4_K"}, "--cache-type-k 'q4_K'"},
        {{"--cache-type-v", "f8"}, "--cache-type-v 'f8'"},
        {{"--parallel", "0"}, "--parallel '0'"},
        {{"--parallel", "257"}, "--parallel '257'"},
        {{"--flash-attn", "maybe"}, "--flash-attn 'maybe'"},
        {{"--flash-attn", "off", "--cache-type-v", "q8_0"}, "needs flash attention"},
        {{"--no-such-option"}, ""},
    };
    for (const auto& [args, msg] : usage) {
        std::vector<std::string> a{"estimate", m};
        a.insert(a.end(), args.begin(), args.end());
        const run_result r = run(a);
        EXPECT_EQ(r.rc, 2) << args[0] << " " << r.err;
        EXPECT_NE(r.err.find(msg), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "");
    }
    EXPECT_EQ(run({"estimate"}).rc, 2);
    // A file that is not there: I/O, 3. Not a GGUF file: 1. Hyperparameters llama.cpp cannot use: 1.
    const run_result missing = run({"estimate", (est_dir() / "nope.gguf").string()});
    EXPECT_EQ(missing.rc, 3) << missing.err;
    const fs::path bad = est_dir() / "bad.gguf";
    write_file(bad, std::string("PK\x03\x04") + std::string(60, '\0'));
    EXPECT_EQ(run({"estimate", bad.string()}).rc, 1);
    const fs::path zero_heads = write_qwen2(est_dir(), "zero-heads.gguf", 0);
    const run_result z = run({"estimate", zero_heads.string(), "--json"});
    EXPECT_EQ(z.rc, 1);
    EXPECT_NE(z.err.find("qwen2.attention.head_count"), std::string::npos) << z.err;
    EXPECT_EQ(z.out, "");
    const fs::path odd_heads = write_qwen2(est_dir(), "odd-heads.gguf", 3);  // 2 KV heads do not divide 3
    const run_result o = run({"estimate", odd_heads.string()});
    EXPECT_EQ(o.rc, 1);
    EXPECT_NE(o.err.find("qwen2.attention.head_count_kv"), std::string::npos) << o.err;
}

// Hyperparameters whose products overflow 64 bits (or llama.cpp's uint32 widths) are refused,
// naming a key, with exit 1: never a wrapped figure (a total smaller than its own KV line, exit 0).
TEST(Estimate, OverflowingHyperparametersAreRefused) {
    constexpr std::uint32_t huge = 0xffffffffu;
    const std::array<std::int64_t, 2> emb{64, 32};
    {
        gguf::writer w;
        w.set_string("general.architecture", "mamba");
        w.set_u32("mamba.block_count", 2);
        w.set_u32("mamba.context_length", 1024);
        w.set_u32("mamba.embedding_length", 64);
        for (const char* k : {"mamba.ssm.conv_kernel", "mamba.ssm.inner_size", "mamba.ssm.state_size",
                              "mamba.ssm.time_step_rank"})
            w.set_u32(k, huge);
        w.add_zero_tensor("token_embd.weight", gguf::tensor_type::f32, emb);
        must_write(w, est_dir() / "mamba-huge.gguf");
    }
    {
        gguf::writer w;
        w.set_string("general.architecture", "deepseek2");
        w.set_u32("deepseek2.block_count", 2);
        w.set_u32("deepseek2.context_length", 1024);
        w.set_u32("deepseek2.embedding_length", 64);
        w.set_u32("deepseek2.attention.head_count", 65536);
        w.set_u32("deepseek2.attention.head_count_kv", 1);
        w.set_u32("deepseek2.attention.key_length", 64);
        w.set_u32("deepseek2.attention.value_length", 64);
        w.set_u32("deepseek2.attention.key_length_mla", 64);
        w.set_u32("deepseek2.attention.value_length_mla", 64);
        w.set_u32("deepseek2.attention.kv_lora_rank", huge);
        w.add_zero_tensor("token_embd.weight", gguf::tensor_type::f32, emb);
        must_write(w, est_dir() / "deepseek2-huge.gguf");
    }
    {
        // Every width within the bound, but 2^24 KV heads of 2^24 values: the KV cache of a 2^20
        // context needs 2^69 bytes, which no figure can show.
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.block_count", 2);
        w.set_u32("llama.context_length", 1024);
        w.set_u32("llama.embedding_length", 64);
        w.set_u32("llama.attention.head_count", 1u << 24);
        w.set_u32("llama.attention.head_count_kv", 1u << 24);
        w.set_u32("llama.attention.key_length", 1u << 24);
        w.set_u32("llama.attention.value_length", 1u << 24);
        w.add_zero_tensor("token_embd.weight", gguf::tensor_type::f32, emb);
        must_write(w, est_dir() / "llama-wide.gguf");
    }
    for (const auto& [file, key] : {std::pair{"mamba-huge.gguf", "key mamba.ssm.conv_kernel = 4294967295: more than 16777216"},
                                    std::pair{"deepseek2-huge.gguf", "key deepseek2.attention.kv_lora_rank = 4294967295"},
                                    std::pair{"llama-wide.gguf", "need more than 2^64 bytes"}}) {
        for (const char* json : {"", "--json"}) {
            std::vector<std::string> args{"estimate", (est_dir() / file).string(), "--ctx", "1048576", "--ubatch", "4096",
                                          "--batch", "4096"};
            if (*json) args.push_back(json);
            const run_result r = run(args);
            EXPECT_EQ(r.rc, 1) << file << "\n" << r.out << r.err;
            EXPECT_EQ(r.out, "") << file;
            EXPECT_NE(r.err.find(key), std::string::npos) << file << ": " << r.err;
        }
    }
}

TEST(Estimate, SplitSetEqualsMergedModel) {
    const fs::path d = est_dir() / "split";
    fs::create_directories(d);
    const run_result s = run({"split", qwen2().string(), (d / "q").string(), "--split-max-tensors", "2"});
    ASSERT_EQ(s.rc, 0) << s.err;
    const fs::path part1 = d / "q-00001-of-00003.gguf";
    ASSERT_TRUE(fs::exists(part1));
    json a = run_json({part1.string(), "--ctx", "2048"});
    json b = run_json({qwen2().string(), "--ctx", "2048"});
    a.erase("model");
    b.erase("model");
    EXPECT_EQ(a, b);
    EXPECT_EQ(a["weights_bytes"], weights);
}

TEST(Estimate, UnknownArchitecture) {
    gguf::writer w;
    w.set_string("general.architecture", "bert");
    w.set_u32("bert.context_length", 512);
    const std::array<std::int64_t, 2> ne{32, 8};
    w.add_zero_tensor("token_embd.weight", gguf::tensor_type::f32, ne);
    const fs::path p = est_dir() / "bert.gguf";
    must_write(w, p);
    const run_result t = run({"estimate", p.string()});
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_NE(t.out.find("Architecture: bert (unknown"), std::string::npos) << t.out;
    EXPECT_TRUE(has_squeezed_line(t.out, "KV cache n/a n/a n/a")) << t.out;
    EXPECT_TRUE(has_squeezed_line(t.out, "compute buffer n/a n/a n/a")) << t.out;
    const json j = run_json({p.string()});
    EXPECT_EQ(j["architecture"], "bert");
    EXPECT_EQ(j["architecture_known"], false);
    EXPECT_EQ(j["weights_bytes"], 32 * 8 * 4);
    EXPECT_TRUE(j["kv_cache_bytes"].is_null());
    EXPECT_TRUE(j["kv_cache"].is_null());
    EXPECT_TRUE(j["cpu_only"]["cpu"]["kv_cache_bytes"].is_null());
    EXPECT_TRUE(j["cpu_only"]["cpu"]["compute_buffer_bytes"].is_null());
    EXPECT_TRUE(j["full_gpu_offload"]["gpu"]["compute_buffer_bytes"].is_null());
    EXPECT_EQ(j["cpu_only"]["cpu"]["weights_bytes"], 32 * 8 * 4);
}

}  // namespace
}  // namespace minfer_cli_test
