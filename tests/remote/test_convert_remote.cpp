// toolbox::convert of a checkpoint given by URL (`minfer convert http://…/`), served by the loopback
// server: the output equals the local directory's byte for byte (one file and an index with shards),
// every byte fetched is a small file, a shard's length prefix and header, or a tensor's range, each
// exactly once (the server's log and the client's count agree), a dry run fetches no tensor byte, and a
// missing shard, a cut file, a budget too small, a stalling server and a file that changes end with a
// precise error, no output and no spool left beside it. The checkpoint is written by the test: a tiny
// Qwen3 (bf16 matrices, f32 norms) with tests/convert/data's small byte-level BPE tokenizer.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "loopback_server.hpp"
#include "minfer/toolbox/convert.hpp"
#include "safetensors_bytes.hpp"
#include "../convert/checkpoint_writer.hpp"
#include "scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using minfer::test::answer_head;
using minfer::test::connection;
using minfer::test::http_request;
using minfer::test::loopback_server;
using minfer::test::safetensors_builder;
using minfer::test::serve_bytes;
namespace tb = minfer::toolbox;

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

void spit(const fs::path& p, std::string_view text) {
    std::ofstream f(p, std::ios::binary);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::string as_text(const minfer::test::bytes& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

struct tensor_spec {
    std::string name;
    std::vector<std::uint64_t> shape;
};

// The tiny Qwen3's tensors (2 layers, hidden 64, 4 heads of 16, 2 KV heads, FFN 128, vocabulary 280).
std::vector<tensor_spec> qwen3_tensors() {
    std::vector<tensor_spec> t{{"model.embed_tokens.weight", {280, 64}}, {"model.norm.weight", {64}}, {"lm_head.weight", {280, 64}}};
    for (int l = 0; l < 2; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        t.push_back({p + "input_layernorm.weight", {64}});
        t.push_back({p + "post_attention_layernorm.weight", {64}});
        t.push_back({p + "self_attn.q_proj.weight", {64, 64}});
        t.push_back({p + "self_attn.k_proj.weight", {32, 64}});
        t.push_back({p + "self_attn.v_proj.weight", {32, 64}});
        t.push_back({p + "self_attn.o_proj.weight", {64, 64}});
        t.push_back({p + "self_attn.q_norm.weight", {16}});
        t.push_back({p + "self_attn.k_norm.weight", {16}});
        t.push_back({p + "mlp.gate_proj.weight", {128, 64}});
        t.push_back({p + "mlp.up_proj.weight", {128, 64}});
        t.push_back({p + "mlp.down_proj.weight", {64, 128}});
    }
    return t;
}

// A checkpoint: file name → bytes; with `shards` > 1, an index and that many shards.
struct checkpoint_files {
    std::map<std::string, std::string> files;
    std::uint64_t header_bytes = 0;  // the shards' length prefixes and headers
    std::uint64_t tensor_bytes = 0;  // their data sections
    std::uint64_t small_bytes = 0;   // every other file
};

checkpoint_files make_checkpoint(int shards) {
    checkpoint_files c;
    c.files["config.json"] = R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "num_hidden_layers": 2,
        "vocab_size": 280, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "head_dim": 16,
        "num_key_value_heads": 2, "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 1000000,
        "tie_word_embeddings": false, "bos_token_id": 274, "pad_token_id": 275, "torch_dtype": "bfloat16"})";
    c.files["tokenizer.json"] = slurp(fs::path(MINFER_CONVERT_TEST_DATA) / "bpe_small_gpt2.json");
    c.files["tokenizer_config.json"] = R"({"bos_token": "<s>", "eos_token": {"content": "<|end|>"},
        "add_bos_token": false, "chat_template": "{{ x }}", "clean_up_tokenization_spaces": false})";
    c.files["generation_config.json"] = R"({"do_sample": true, "temperature": 0.6})";
    for (const auto& [name, text] : c.files) c.small_bytes += text.size();

    const std::vector<tensor_spec> specs = qwen3_tensors();
    std::vector<safetensors_builder> builders(static_cast<std::size_t>(shards));
    std::vector<std::string> shard_names;
    for (int s = 0; s < shards; ++s) {
        char name[64];
        std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
        shard_names.push_back(shards == 1 ? std::string("model.safetensors") : std::string(name));
    }
    std::string weight_map;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const std::size_t s = i % builders.size();
        const bool one_d = specs[i].shape.size() == 1;
        builders[s].add(specs[i].name, one_d ? "F32" : "BF16", specs[i].shape, one_d ? 4 : 2);
        weight_map += std::string(weight_map.empty() ? "" : ",") + "\"" + specs[i].name + "\":\"" + shard_names[s] + "\"";
    }
    for (std::size_t s = 0; s < builders.size(); ++s) {
        c.files[shard_names[s]] = as_text(builders[s].file());
        c.header_bytes += 8 + builders[s].header().size();
        c.tensor_bytes += builders[s].data().size();
    }
    if (shards > 1) {
        c.files["model.safetensors.index.json"] = "{\"metadata\": {\"total_size\": " + std::to_string(c.tensor_bytes) +
                                                  "}, \"weight_map\": {" + weight_map + "}}";
        c.small_bytes += c.files["model.safetensors.index.json"].size();
    }
    return c;
}

// A server of one checkpoint under /hub/Tiny-Qwen3/ (404 for anything else), with a hook to misbehave.
struct checkpoint_server {
    explicit checkpoint_server(checkpoint_files files) : c(std::move(files)) {}

    std::function<bool(const http_request&, connection&, const std::string& name)> misbehave;  // true: answered
    checkpoint_files c;
    loopback_server server{[this](const http_request& rq, connection& conn) { answer(rq, conn); }};

    std::string url() const { return server.url("/hub/Tiny-Qwen3/"); }

    void answer(const http_request& rq, connection& conn) {
        const std::string prefix = "/hub/Tiny-Qwen3/";
        std::string name = rq.target.rfind(prefix, 0) == 0 ? rq.target.substr(prefix.size()) : std::string();
        if (misbehave && misbehave(rq, conn, name)) return;
        const auto it = c.files.find(name);
        if (it == c.files.end()) {
            conn.send(answer_head("404 Not Found", {"Content-Length: 0"}));
            return;
        }
        serve_bytes(rq, conn, it->second);
    }

    // Body bytes the server sent for ranges of existing files, and the ranges of each file.
    struct served {
        std::uint64_t bytes = 0;
        std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> ranges;  // [first, last]
    };
    served tally() const {
        served s;
        for (const http_request& rq : server.log()) {
            const std::string name = rq.target.substr(std::string("/hub/Tiny-Qwen3/").size());
            const auto it = c.files.find(name);
            if (it == c.files.end() || !rq.has_range || rq.first >= it->second.size()) continue;
            const std::uint64_t last = std::min<std::uint64_t>(rq.last.value_or(it->second.size() - 1), it->second.size() - 1);
            s.bytes += last - rq.first + 1;
            s.ranges[name].emplace_back(rq.first, last);
        }
        return s;
    }
};

tb::convert_request request(const std::string& input, const fs::path& out) {
    tb::convert_request rq;
    rq.input = input;
    rq.output = out;
    rq.outtype = "auto";
    rq.pre = "qwen2";  // the small tokenizer's check hash is not a known one
    rq.model_name = "Tiny-Qwen3";
    rq.remote.timeout_s = 20;
    return rq;
}

// The local conversion of the same files (the bytes a URL must give).
std::string convert_locally(const checkpoint_files& c, const fs::path& scratch) {
    const fs::path dir = scratch / "local" / "Tiny-Qwen3";
    fs::create_directories(dir);
    for (const auto& [name, bytes] : c.files) spit(dir / name, bytes);
    const fs::path out = scratch / "local.gguf";
    auto r = tb::convert(request(dir.string(), out));
    EXPECT_TRUE(r) << r.error().message();
    return slurp(out);
}

std::vector<std::string> entries_of(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

class ConvertRemote : public ::testing::TestWithParam<int> {};

TEST_P(ConvertRemote, SameBytesAsTheLocalDirectoryEachByteFetchedOnce) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(GetParam()));
    const std::string local = convert_locally(srv.c, scratch.path());
    ASSERT_FALSE(local.empty());

    const fs::path outdir = scratch / "out";
    fs::create_directories(outdir);
    // the spool's shards, sampled as the output is written: removed from the directory once the
    // checkpoint is planned (nothing there while the tensors are fetched), still open in this process,
    // and their allocated bytes stay near a tensor's inputs (the holes are punched back), never the
    // checkpoint's tensor bytes
    std::uint64_t most_held = 0;
    bool spool_seen = false;
    tb::convert_events ev;
    ev.progress = [&](std::uint64_t, std::uint64_t) {
        for (const auto& e : fs::directory_iterator(outdir)) spool_seen = spool_seen || e.path().filename() != "remote.gguf";
        std::uint64_t held = 0;
        for (const auto& fd : fs::directory_iterator("/proc/self/fd")) {
            std::error_code ec;
            const std::string target = fs::read_symlink(fd.path(), ec).string();
            if (ec || target.find(".minfer-convert-") == std::string::npos || target.find(".safetensors") == std::string::npos) continue;
            struct stat st {};
            if (::stat(fd.path().c_str(), &st) == 0) held += static_cast<std::uint64_t>(st.st_blocks) * 512;
        }
        most_held = std::max(most_held, held);
    };
    auto r = tb::convert(request(srv.url(), outdir / "remote.gguf"), ev);
    ASSERT_TRUE(r) << r.error().message();
    std::printf("the spool's shards held at most %llu bytes (tensor bytes: %llu)\n", static_cast<unsigned long long>(most_held),
                static_cast<unsigned long long>(srv.c.tensor_bytes));
    EXPECT_GT(most_held, 0u);
    EXPECT_FALSE(spool_seen) << "the spool's directory is still there while the tensors are written";
    // the headers' pages, the largest tensor (35,840 bytes) and a page at each end of a range per shard
    EXPECT_LE(most_held, 3 * 4096 + 40960 + 2 * 4096 * static_cast<std::uint64_t>(GetParam()) + 4096 * 4);
    EXPECT_TRUE(r->written);
    EXPECT_TRUE(slurp(outdir / "remote.gguf") == local) << "the URL's output differs from the directory's";
    // the spool is gone: the output alone is left in its directory
    EXPECT_EQ(entries_of(outdir), std::vector<std::string>{"remote.gguf"});

    srv.server.stop();
    const auto served = srv.tally();
    const std::uint64_t needed = srv.c.small_bytes + srv.c.header_bytes + srv.c.tensor_bytes;
    std::printf("fetched %llu bytes in %llu requests: small files %llu + headers %llu + tensors %llu = %llu\n",
                static_cast<unsigned long long>(r->fetched.bytes), static_cast<unsigned long long>(r->fetched.requests),
                static_cast<unsigned long long>(srv.c.small_bytes), static_cast<unsigned long long>(srv.c.header_bytes),
                static_cast<unsigned long long>(srv.c.tensor_bytes), static_cast<unsigned long long>(needed));
    EXPECT_EQ(r->fetched.bytes, needed);
    EXPECT_EQ(served.bytes, needed);
    EXPECT_EQ(r->fetched.head_bytes, srv.c.small_bytes + srv.c.header_bytes);
    EXPECT_EQ(r->fetched.planned_bytes, srv.c.tensor_bytes);
    EXPECT_EQ(r->fetched.requests, static_cast<std::uint64_t>(srv.server.requests()));
    // each file's ranges never overlap and cover it exactly once (every shard byte is needed)
    for (auto [name, ranges] : served.ranges) {
        std::sort(ranges.begin(), ranges.end());
        std::uint64_t next = 0;
        for (const auto& [first, last] : ranges) {
            EXPECT_EQ(first, next) << name << ": a byte fetched twice or a gap";
            next = last + 1;
        }
        EXPECT_EQ(next, srv.c.files[name].size()) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Shards, ConvertRemote, ::testing::Values(1, 3));

// A llama-quantize type from a URL: the one-pass quantization reads the same leased ranges, so the
// output is the local directory's and each byte is fetched once. The checkpoint holds real weights
// (tests/convert/checkpoint_writer.hpp: the filler bytes above are no values a quantizer takes).
TEST(ConvertRemoteQuantize, SameBytesAsTheLocalDirectory) {
    minfer::test_support::temp_dir scratch("convert-remote");
    const fs::path dir = minfer::test::write_llama_checkpoint(scratch / "local" / "Tiny-Llama", false);
    checkpoint_files c;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        c.files[name] = slurp(e.path());
        if (name == "model.safetensors") {
            std::uint64_t n = 0;
            for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(c.files[name][static_cast<std::size_t>(i)]);
            c.header_bytes = 8 + n;
            c.tensor_bytes = c.files[name].size() - c.header_bytes;
        } else {
            c.small_bytes += c.files[name].size();
        }
    }
    checkpoint_server srv(std::move(c));
    auto local_rq = request(dir.string(), scratch / "local.gguf");
    local_rq.outtype = "Q4_K_M";
    local_rq.pre.clear();
    auto local = tb::convert(local_rq);
    ASSERT_TRUE(local) << local.error().message();
    const fs::path outdir = scratch / "out";
    fs::create_directories(outdir);
    auto rq = request(srv.url(), outdir / "remote.gguf");
    rq.outtype = "Q4_K_M";
    rq.pre.clear();
    auto r = tb::convert(rq);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->file_type, "Q4_K_M");
    EXPECT_TRUE(slurp(outdir / "remote.gguf") == slurp(scratch / "local.gguf")) << "the URL's output differs from the directory's";
    EXPECT_EQ(entries_of(outdir), std::vector<std::string>{"remote.gguf"});
    EXPECT_EQ(r->fetched.bytes, srv.c.small_bytes + srv.c.header_bytes + srv.c.tensor_bytes);
}

TEST(ConvertRemoteDryRun, FetchesTheHeadsOnly) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(3));
    auto rq = request(srv.url(), scratch / "x.gguf");
    rq.dry_run = true;
    auto r = tb::convert(rq);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->written);
    EXPECT_EQ(r->fetched.bytes, srv.c.small_bytes + srv.c.header_bytes);
    EXPECT_EQ(r->fetched.planned_bytes, srv.c.tensor_bytes);
    EXPECT_TRUE(entries_of(scratch.path()).empty());
}

// A failure: the error, no output and no spool in the output's directory.
minfer::gguf::error failure(checkpoint_server&, const fs::path& outdir, tb::convert_request rq) {
    fs::create_directories(outdir);
    rq.output = outdir / "out.gguf";
    auto r = tb::convert(rq);
    EXPECT_FALSE(r);
    EXPECT_TRUE(entries_of(outdir).empty()) << "left behind: " << (entries_of(outdir).empty() ? "" : entries_of(outdir).front());
    return r ? minfer::gguf::error{} : r.error();
}

TEST(ConvertRemoteFails, AShardTheIndexNamesIsMissing) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(3));
    srv.c.files.erase("model-00002-of-00003.safetensors");
    const auto e = failure(srv, scratch / "out", request(srv.url(), {}));
    EXPECT_EQ(e.code, minfer::gguf::errc::http_status);
    EXPECT_EQ(e.found, 404u);
    EXPECT_EQ(e.file, srv.url() + "model-00002-of-00003.safetensors");
    EXPECT_EQ(e.subject, "model-00002-of-00003.safetensors");
}

TEST(ConvertRemoteFails, AShardCutShortIsRefusedAsTheLocalFileIs) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(1));
    std::string& shard = srv.c.files["model.safetensors"];
    shard.resize(shard.size() - 100);
    const auto e = failure(srv, scratch / "out", request(srv.url(), {}));
    EXPECT_EQ(minfer::gguf::to_string(e.code), "bad_safetensors") << e.message();
    EXPECT_EQ(e.file, srv.url() + "model.safetensors");  // the URL, not the spool's path
    EXPECT_EQ(e.message().find(".minfer-convert"), std::string::npos) << e.message();
}

TEST(ConvertRemoteFails, ABodyCutShortMidTensor) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(1));
    const std::uint64_t data_at = srv.c.header_bytes;
    srv.misbehave = [&](const http_request& rq, connection& conn, const std::string& name) {
        if (name != "model.safetensors" || !rq.has_range || rq.first < data_at + 1000) return false;
        const std::string& f = srv.c.files[name];
        const std::uint64_t last = std::min<std::uint64_t>(rq.last.value_or(f.size() - 1), f.size() - 1);
        conn.send(answer_head("206 Partial Content", {"Content-Range: bytes " + std::to_string(rq.first) + "-" + std::to_string(last) +
                                                          "/" + std::to_string(f.size()),
                                                      "Content-Length: " + std::to_string(last - rq.first + 1)}));
        conn.send(std::string_view(f).substr(rq.first, (last - rq.first + 1) / 2));
        return true;
    };
    auto rq = request(srv.url(), {});
    rq.remote.timeout_s = 5;
    const auto e = failure(srv, scratch / "out", rq);
    EXPECT_EQ(e.code, minfer::gguf::errc::transfer_failed) << e.message();
    EXPECT_EQ(e.file, srv.url() + "model.safetensors");
}

TEST(ConvertRemoteFails, ABudgetTooSmallFetchesNoTensor) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(3));
    auto rq = request(srv.url(), {});
    const std::uint64_t all = srv.c.small_bytes + srv.c.header_bytes + srv.c.tensor_bytes;
    rq.remote.max_fetch = all - 1;
    const auto e = failure(srv, scratch / "out", rq);
    EXPECT_EQ(e.code, minfer::gguf::errc::fetch_budget_exceeded) << e.message();
    EXPECT_EQ(e.expected, all - 1);
    EXPECT_EQ(e.found, all);
    srv.server.stop();
    EXPECT_EQ(srv.tally().bytes, srv.c.small_bytes + srv.c.header_bytes);  // no tensor byte asked
    // exactly enough converts
    rq.remote.max_fetch = all;
    checkpoint_server again(make_checkpoint(3));
    rq.input = again.url();
    rq.output = scratch / "ok.gguf";
    auto ok = tb::convert(rq);
    EXPECT_TRUE(ok) << ok.error().message();
}

TEST(ConvertRemoteFails, AStallingServerEndsAtTheDeadline) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(1));
    const std::uint64_t data_at = srv.c.header_bytes;
    srv.misbehave = [&](const http_request& rq, connection& conn, const std::string& name) {
        if (name != "model.safetensors" || !rq.has_range || rq.first < data_at) return false;
        conn.hold();  // no answer at all
        return true;
    };
    auto rq = request(srv.url(), {});
    rq.remote.timeout_s = 2;
    const auto start = std::chrono::steady_clock::now();
    const auto e = failure(srv, scratch / "out", rq);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(e.code, minfer::gguf::errc::transfer_failed) << e.message();
    EXPECT_NE(e.detail.find("deadline"), std::string::npos) << e.detail;
    EXPECT_LT(took, 10.0);
}

TEST(ConvertRemoteFails, AFileThatChangesSize) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(1));
    const std::uint64_t data_at = srv.c.header_bytes;
    srv.misbehave = [&](const http_request& rq, connection& conn, const std::string& name) {
        if (name != "model.safetensors" || !rq.has_range || rq.first < data_at) return false;
        std::string grown = srv.c.files[name] + "more";
        serve_bytes(rq, conn, grown);
        return true;
    };
    const auto e = failure(srv, scratch / "out", request(srv.url(), {}));
    EXPECT_EQ(minfer::gguf::to_string(e.code), "bad_content_range") << e.message();
}

TEST(ConvertRemoteFails, NoConfig) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(1));
    srv.c.files.erase("config.json");
    const auto e = failure(srv, scratch / "out", request(srv.url(), {}));
    EXPECT_EQ(e.file, srv.url() + "config.json") << e.message();
}

TEST(ConvertRemoteFails, AServerErrorOnASmallFile) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(1));
    srv.misbehave = [](const http_request&, connection& conn, const std::string& name) {
        if (name != "tokenizer.model") return false;
        conn.send(answer_head("403 Forbidden", {"Content-Length: 0"}));
        return true;
    };
    const auto e = failure(srv, scratch / "out", request(srv.url(), {}));
    EXPECT_EQ(e.code, minfer::gguf::errc::http_status);
    EXPECT_EQ(e.found, 403u);
    EXPECT_EQ(e.file, srv.url() + "tokenizer.model");
}

// `minfer convert URL --stats`: the command's line on stderr, the output, exit 0; a bad --max-fetch is
// a usage error (exit 2).
int run_minfer(const fs::path& dir, std::vector<std::string> args, std::string& err) {
    const fs::path e = dir / "err.txt";
    args.insert(args.begin(), MINFER_EXE);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, e.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (sp != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    err = slurp(e);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ConvertRemoteCli, StatsLine) {
    minfer::test_support::temp_dir scratch("convert-remote");
    checkpoint_server srv(make_checkpoint(3));
    const fs::path out = scratch / "out";
    fs::create_directories(out);
    std::string err;
    const int rc = run_minfer(scratch.path(), {"convert", srv.url(), "-o", (out / "m.gguf").string(), "--pre", "qwen2", "--quiet",
                                               "--stats", "--timeout", "20"},
                              err);
    EXPECT_EQ(rc, 0) << err;
    const std::uint64_t heads = srv.c.small_bytes + srv.c.header_bytes;
    const std::string want = "fetched " + std::to_string(heads + srv.c.tensor_bytes) + " bytes in " +
                             std::to_string(srv.server.requests()) + " requests from " + std::to_string(srv.c.files.size()) + " remote files (" + std::to_string(heads) +
                             " of files and headers, " + std::to_string(srv.c.tensor_bytes) + " of tensors)";
    EXPECT_NE(err.find(want), std::string::npos) << err << "\nwanted: " << want;
    EXPECT_EQ(entries_of(out), std::vector<std::string>{"m.gguf"});
    EXPECT_EQ(run_minfer(scratch.path(), {"convert", srv.url(), "-o", (out / "n.gguf").string(), "--max-fetch", "lots"}, err), 2) << err;
}

}  // namespace
