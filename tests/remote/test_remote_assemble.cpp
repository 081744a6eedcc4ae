// `minfer assemble` with models given as URLs, served by the loopback server: the output equals the
// same config run on the local files, byte for byte (passthrough stacks, a recipe's tensors, a linear
// merge, a split set as source), and what is fetched is the heads plus the byte ranges of the tensors
// the output takes, nothing else (every request of the tensor phase lies inside a taken tensor).
// Failures (a budget too small, a server error midway, a file that changed, a stall) leave no output.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "loopback_server.hpp"
#include "minfer/gguf.hpp"
#include "minfer/gguf_write/writer.hpp"

namespace {

namespace fs = std::filesystem;
using minfer::test::answer_head;
using minfer::test::connection;
using minfer::test::http_request;
using minfer::test::loopback_server;
using minfer::test::serve_bytes;

std::string read_all(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

struct outcome {
    int rc = -1;
    std::string out, err;
};

outcome run_minfer(const fs::path& dir, const std::vector<std::string>& args) {
    static int counter = 0;
    const fs::path o = dir / ("out." + std::to_string(counter)), e = dir / ("err." + std::to_string(counter));
    ++counter;
    std::vector<std::string> a{MINFER_EXE};
    a.insert(a.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, o.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, e.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int sp = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    outcome r;
    if (sp != 0) return r;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_all(o);
    r.err = read_all(e);
    return r;
}

// The f16 bits of k/1024 (|k| <= 1024): a normal half, exact.
std::uint16_t half_of(int k) {
    if (k == 0) return 0;
    const unsigned sign = k < 0 ? 0x8000u : 0u;
    const unsigned a = static_cast<unsigned>(k < 0 ? -k : k);
    int e = 0;
    while ((a >> (e + 1)) != 0) ++e;  // a in [2^e, 2^(e+1))
    const unsigned mant = (a << (10 - e)) & 0x3ffu;
    return static_cast<std::uint16_t>(sign | static_cast<unsigned>(e - 10 + 15) << 10 | mant);
}

// A llama-shaped model of 4 blocks, f16 weights of deterministic values (seed), ~5 MB: big enough
// that the blocks a config leaves out weigh more than the 1 MiB the issue allows beyond the taken
// tensors.
void make_model(const fs::path& path, std::uint32_t seed, minfer::gguf::tensor_type ffn_type = minfer::gguf::tensor_type::f16,
                std::size_t n_tokens = 0) {
    using minfer::gguf::tensor_type;
    minfer::gguf::writer w;
    if (n_tokens > 0) {  // a vocabulary: a head of several MiB, read in several ranges
        std::vector<std::string> tokens;
        for (std::size_t i = 0; i < n_tokens; ++i) tokens.push_back("token-" + std::to_string(i * 7919));
        w.set_strings("tokenizer.ggml.tokens", tokens);
    }
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "remote-test-" + std::to_string(seed));
    w.set_u32("llama.block_count", 4);
    w.set_u32("llama.context_length", 128);
    w.set_u32("llama.embedding_length", 256);
    w.set_u32("llama.feed_forward_length", 2048);
    w.set_u32("llama.attention.head_count", 4);
    w.set_u32("general.file_type", 1);
    std::uint32_t state = seed * 2654435761u + 1;
    auto value = [&] {
        state = state * 1664525u + 1013904223u;
        return static_cast<float>(static_cast<std::int32_t>(state >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
    };
    auto add = [&](const std::string& name, tensor_type type, std::vector<std::int64_t> ne) {
        std::uint64_t n = 1;
        for (auto d : ne) n *= static_cast<std::uint64_t>(d);
        std::vector<std::byte> bytes;
        if (type == tensor_type::f32) {
            bytes.resize(n * 4);
            for (std::uint64_t i = 0; i < n; ++i) {
                const float v = value();
                std::memcpy(bytes.data() + i * 4, &v, 4);
            }
        } else {  // f16 of k/1024 for k in [-1024, 1024): exact halves
            bytes.resize(n * 2);
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::uint16_t h = half_of(static_cast<int>(std::lround(value() * 1024)));
                std::memcpy(bytes.data() + i * 2, &h, 2);
            }
        }
        w.add_tensor(name, type, ne, std::span<const std::byte>(bytes));
    };
    add("token_embd.weight", tensor_type::f16, {256, 512});
    for (int b = 0; b < 4; ++b) {
        const std::string p = "blk." + std::to_string(b) + ".";
        add(p + "attn_norm.weight", tensor_type::f32, {256});
        add(p + "attn_q.weight", tensor_type::f16, {256, 256});
        add(p + "ffn_up.weight", ffn_type, {256, 2048});
    }
    add("output_norm.weight", tensor_type::f32, {256});
    auto r = w.write(path);
    if (!r) throw std::runtime_error(r.error().message());
}

struct tensor_span {
    std::string name;
    std::uint64_t first, end;  // absolute offsets in the file
};

std::vector<tensor_span> spans_of(const fs::path& p) {
    auto m = minfer::gguf::model::open(p);
    if (!m) throw std::runtime_error(m.error().message());
    std::vector<tensor_span> out;
    const std::uint64_t data = m->metadata().data_offset();
    for (const auto& t : m->tensors()) out.push_back({std::string(t.info->name), data + t.info->offset, data + t.info->offset + t.info->n_bytes});
    return out;
}

class RemoteAssemble : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/minfer-remote-assemble-XXXXXX";
        dir = ::mkdtemp(tmpl);
        fs::create_directories(dir / "srv");
        make_model(dir / "srv" / "a.gguf", 1);
        make_model(dir / "srv" / "b.gguf", 2);
        make_model(dir / "srv" / "c32.gguf", 3, minfer::gguf::tensor_type::f32);  // another type for the recipe
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    // Serves /NAME from dir/srv, recording every range asked of each file.
    minfer::test::http_handler serve() {
        return [this](const http_request& rq, connection& c) {
            const std::string path = rq.target.substr(0, rq.target.find('?'));
            const fs::path local = dir / "srv" / path.substr(1);
            std::error_code ec;
            if (path.find("..") != std::string::npos || !fs::is_regular_file(local, ec)) {
                c.send(answer_head("404 Not Found", {"Content-Length: 0"}));
                return;
            }
            serve_bytes(rq, c, read_all(local));
        };
    }

    std::string config_file(const std::string& text) {
        static int n = 0;
        const fs::path p = dir / ("config" + std::to_string(n++) + ".yaml");
        std::ofstream(p) << text;
        return p.string();
    }

    // The config run on URLs and on the local copies (same text, base replaced): both succeed and
    // the outputs are the same bytes. @returns the remote run's --json output.
    std::string expect_same_output(loopback_server& srv, const std::string& config_with_base, const std::vector<std::string>& extra = {}) {
        auto subst = [&](std::string base) {
            std::string s = config_with_base;
            for (std::size_t at = s.find("@BASE@"); at != std::string::npos; at = s.find("@BASE@")) s.replace(at, 6, base);
            return s;
        };
        const fs::path remote_out = dir / "remote.gguf", local_out = dir / "local.gguf";
        std::vector<std::string> ra{"assemble", config_file(subst(srv.url("/"))), "-o", remote_out.string(), "--no-provenance", "--json"};
        std::vector<std::string> la{"assemble", config_file(subst((dir / "srv").string() + "/")), "-o", local_out.string(), "--no-provenance"};
        ra.insert(ra.end(), extra.begin(), extra.end());
        la.insert(la.end(), extra.begin(), extra.end());
        const outcome r = run_minfer(dir, ra);
        const outcome l = run_minfer(dir, la);
        EXPECT_EQ(l.rc, 0) << l.err;
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_TRUE(fs::exists(remote_out));
        EXPECT_EQ(read_all(remote_out), read_all(local_out)) << "the remote run's output differs from the local run's";
        return r.out;
    }

    // From a --json output: "fetched": {"head_bytes": H, "tensor_bytes_planned": P, "bytes": B, ...}.
    static std::map<std::string, std::uint64_t> fetched(const std::string& json) {
        std::map<std::string, std::uint64_t> f;
        std::smatch m;
        for (const char* k : {"head_bytes", "tensor_bytes_planned", "bytes", "requests"})
            if (std::regex_search(json, m, std::regex(std::string("\"") + k + "\": ?([0-9]+)"))) f[k] = std::stoull(m[1]);
        return f;
    }

    // The tensor-phase requests (those starting at or past a file's data section) of the log: each
    // inside one tensor of `taken` (name per served file), and their total.
    std::uint64_t check_tensor_requests(const std::vector<http_request>& log, const std::map<std::string, std::vector<std::string>>& taken) {
        std::uint64_t total = 0;
        for (const http_request& rq : log) {
            const std::string file = rq.target.substr(1);
            const auto spans = spans_of(dir / "srv" / file);
            auto m = minfer::gguf::model::open(dir / "srv" / file);
            const std::uint64_t data = m->metadata().data_offset();
            if (!rq.last || rq.first < data) continue;  // a head request
            const std::uint64_t last = *rq.last;
            bool inside = false;
            for (const tensor_span& s : spans) {
                if (rq.first >= s.first && last < s.end) {
                    const auto& names = taken.at(file);
                    inside = std::find(names.begin(), names.end(), s.name) != names.end();
                    EXPECT_TRUE(inside) << file << ": bytes " << rq.first << "-" << last << " of " << s.name << ", which is not taken";
                }
            }
            EXPECT_TRUE(inside) << file << ": bytes " << rq.first << "-" << last << " are not inside one taken tensor";
            total += last - rq.first + 1;
        }
        return total;
    }

    fs::path dir;
};

std::uint64_t tensor_bytes(const fs::path& p, const std::vector<std::string>& names) {
    std::uint64_t n = 0;
    for (const tensor_span& s : spans_of(p))
        if (std::find(names.begin(), names.end(), s.name) != names.end()) n += s.end - s.first;
    return n;
}

std::vector<std::string> block_tensors(int first, int end) {
    std::vector<std::string> v;
    for (int b = first; b < end; ++b)
        for (const char* t : {"attn_norm.weight", "attn_q.weight", "ffn_up.weight"}) v.push_back("blk." + std::to_string(b) + "." + t);
    return v;
}

TEST_F(RemoteAssemble, PassthroughOfUrlsEqualsPassthroughOfTheFilesAndFetchesOnlyTheTakenTensors) {
    loopback_server srv(serve());
    const std::string json = expect_same_output(srv,
                                                "merge_method: passthrough\n"
                                                "slices:\n"
                                                "  - sources:\n"
                                                "      - model: @BASE@a.gguf\n"
                                                "        layer_range: [0, 2]\n"
                                                "  - sources:\n"
                                                "      - model: @BASE@b.gguf\n"
                                                "        layer_range: [3, 4]\n");
    srv.stop();
    std::vector<std::string> from_a = block_tensors(0, 2);
    for (const char* t : {"token_embd.weight", "output_norm.weight"}) from_a.push_back(t);
    const std::vector<std::string> from_b = block_tensors(3, 4);
    const std::uint64_t taken = tensor_bytes(dir / "srv" / "a.gguf", from_a) + tensor_bytes(dir / "srv" / "b.gguf", from_b);
    const std::uint64_t tensor_phase = check_tensor_requests(srv.log(), {{"a.gguf", from_a}, {"b.gguf", from_b}});
    const auto f = fetched(json);
    // the heads' first range reaches into the data (token_embd.weight): those bytes are not asked again
    EXPECT_EQ(tensor_phase, f.at("tensor_bytes_planned"));
    EXPECT_LE(f.at("tensor_bytes_planned"), taken);
    EXPECT_GE(f.at("tensor_bytes_planned") + 2 * (256u << 10), taken);
    EXPECT_EQ(f.at("bytes"), f.at("head_bytes") + f.at("tensor_bytes_planned")) << json;
    const std::uint64_t heads = spans_of(dir / "srv" / "a.gguf").front().first + spans_of(dir / "srv" / "b.gguf").front().first;
    EXPECT_LE(f.at("bytes"), heads + taken + (1u << 20)) << "the issue's bound: heads + taken tensors + 1 MiB";
    EXPECT_LT(f.at("bytes"), fs::file_size(dir / "srv" / "a.gguf") + fs::file_size(dir / "srv" / "b.gguf") - (2u << 20));
    std::printf("passthrough of URLs: %llu bytes fetched (%llu of heads, %llu of tensors taken) of %llu served\n",
                static_cast<unsigned long long>(f.at("bytes")), static_cast<unsigned long long>(f.at("head_bytes")),
                static_cast<unsigned long long>(taken),
                static_cast<unsigned long long>(fs::file_size(dir / "srv" / "a.gguf") + fs::file_size(dir / "srv" / "b.gguf")));
}

// A head of ~4 MiB grows by at most 1 MiB a range (not by doubling): what is read past its end,
// and so the heads' share beyond the bound, stays under 1 MiB.
TEST_F(RemoteAssemble, ALargeHeadIsReadWithLessThanAMebibytePastItsEnd) {
    make_model(dir / "srv" / "vocab.gguf", 4, minfer::gguf::tensor_type::f16, 250000);
    const std::uint64_t head = spans_of(dir / "srv" / "vocab.gguf").front().first;
    ASSERT_GT(head, 3u << 20);
    loopback_server srv(serve());
    const fs::path out = dir / "out.gguf";
    const std::string cfg = config_file("merge_method: passthrough\nslices:\n  - sources:\n      - model: " + srv.url("/vocab.gguf") +
                                        "\n        layer_range: [3, 4]\n");
    const outcome r = run_minfer(dir, {"assemble", cfg, "-o", out.string(), "--json", "--quiet"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto f = fetched(r.out);
    std::vector<std::string> taken = block_tensors(3, 4);
    for (const char* t : {"token_embd.weight", "output_norm.weight"}) taken.push_back(t);
    const std::uint64_t all = tensor_bytes(dir / "srv" / "vocab.gguf", taken);
    EXPECT_GE(f.at("head_bytes"), head);
    EXPECT_LT(f.at("head_bytes"), head + (1u << 20));
    EXPECT_LE(f.at("bytes"), head + all + (1u << 20)) << r.out;
    srv.stop();
    EXPECT_EQ(check_tensor_requests(srv.log(), {{"vocab.gguf", taken}}), f.at("tensor_bytes_planned"));
}

TEST_F(RemoteAssemble, ARecipeFetchesOnlyItsRulesTensors) {
    loopback_server srv(serve());
    // the local a.gguf's layers with two tensors from a remote f32 copy (another type: a recipe)
    const fs::path local_a = dir / "srv" / "a.gguf";
    const std::string cfg = "merge_method: passthrough\n"
                            "slices:\n"
                            "  - sources:\n"
                            "      - model: " + local_a.string() + "\n"
                            "        layer_range: [0, 4]\n"
                            "tensors:\n"
                            "  - name: 'blk\\.[12]\\.ffn_up\\.weight'\n"
                            "    model: @BASE@c32.gguf\n";
    const std::string json = expect_same_output(srv, cfg);
    srv.stop();
    const std::vector<std::string> rule = {"blk.1.ffn_up.weight", "blk.2.ffn_up.weight"};
    const std::uint64_t taken = tensor_bytes(dir / "srv" / "c32.gguf", rule);
    EXPECT_EQ(check_tensor_requests(srv.log(), {{"c32.gguf", rule}}), taken);
    const auto f = fetched(json);
    EXPECT_EQ(f.at("bytes"), f.at("head_bytes") + taken) << json;
    // the rule's tensors are the f32 copy's bytes
    auto out = minfer::gguf::model::open(dir / "remote.gguf");
    auto src = minfer::gguf::model::open(dir / "srv" / "c32.gguf");
    ASSERT_TRUE(out && src);
    for (const std::string& n : rule) {
        const auto* t = out->find_tensor(n);
        const auto* s = src->find_tensor(n);
        ASSERT_TRUE(t && s);
        EXPECT_EQ(t->info->type, minfer::gguf::tensor_type::f32);
        const auto a = out->tensor_data(*t), b = src->tensor_data(*s);
        EXPECT_TRUE(a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin())) << n;
    }
}

TEST_F(RemoteAssemble, ALinearMergeWithAUrlEqualsTheLocalMergeAndFetchesEachInputOnce) {
    loopback_server srv(serve());
    const std::string json = expect_same_output(srv,
                                                "merge_method: linear\n"
                                                "models:\n"
                                                "  - model: @BASE@a.gguf\n"
                                                "    parameters: {weight: 0.25}\n"
                                                "  - model: @BASE@b.gguf\n"
                                                "    parameters: {weight: 0.75}\n");
    srv.stop();
    const std::uint64_t all_a = fs::file_size(dir / "srv" / "a.gguf") - spans_of(dir / "srv" / "a.gguf").front().first;
    const auto f = fetched(json);
    // every tensor of both models once (each spooled, then read by the merge's passes), and the
    // data section's padding is never asked
    EXPECT_LE(f.at("bytes") - f.at("head_bytes"), 2 * all_a);
    EXPECT_EQ(f.at("bytes") - f.at("head_bytes"), f.at("tensor_bytes_planned")) << json;
    // no temporary copy is left beside the output
    for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string().find(".minfer-spool"), std::string::npos);
}

// slerp reads every input twice (its whole-tensor statistics first): the remote input is still
// fetched once, its temporary copy read by both passes.
TEST_F(RemoteAssemble, ASlerpWithAUrlEqualsTheLocalSlerpAndFetchesEachInputOnce) {
    loopback_server srv(serve());
    const std::string json = expect_same_output(srv,
                                                "merge_method: slerp\n"
                                                "base_model: @BASE@a.gguf\n"
                                                "models:\n"
                                                "  - model: @BASE@a.gguf\n"
                                                "  - model: @BASE@b.gguf\n"
                                                "parameters:\n"
                                                "  t: 0.3\n");
    srv.stop();
    const auto f = fetched(json);
    EXPECT_EQ(f.at("bytes") - f.at("head_bytes"), f.at("tensor_bytes_planned")) << json;
    const std::uint64_t data_a = fs::file_size(dir / "srv" / "a.gguf") - spans_of(dir / "srv" / "a.gguf").front().first;
    EXPECT_LE(f.at("tensor_bytes_planned"), 2 * data_a);
}

TEST_F(RemoteAssemble, ASplitSetByUrlEqualsItsLocalCopy) {
    fs::create_directories(dir / "srv" / "set");
    const outcome s = run_minfer(dir, {"split", (dir / "srv" / "a.gguf").string(), (dir / "srv" / "set" / "a").string(),
                                       "--split-max-tensors", "5", "--quiet"});
    ASSERT_EQ(s.rc, 0) << s.err;
    ASSERT_TRUE(fs::exists(dir / "srv" / "set" / "a-00001-of-00003.gguf"));
    loopback_server srv(serve());
    expect_same_output(srv,
                       "merge_method: passthrough\n"
                       "slices:\n"
                       "  - sources:\n"
                       "      - model: @BASE@set/a-00001-of-00003.gguf\n"
                       "        layer_range: [1, 3]\n");
}

TEST_F(RemoteAssemble, DryRunFetchesTheHeadsOnlyAndSaysWhatAWriteWouldFetch) {
    loopback_server srv(serve());
    const fs::path out = dir / "never.gguf";
    const std::string cfg = config_file("merge_method: passthrough\nslices:\n  - sources:\n      - model: " + srv.url("/a.gguf") +
                                        "\n        layer_range: [0, 1]\n");
    const outcome r = run_minfer(dir, {"assemble", cfg, "-o", out.string(), "--dry-run"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_FALSE(fs::exists(out));
    std::vector<std::string> taken = block_tensors(0, 1);
    for (const char* t : {"token_embd.weight", "output_norm.weight"}) taken.push_back(t);
    EXPECT_NE(r.out.find("bytes of tensors to fetch"), std::string::npos) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("([0-9]+) bytes of heads fetched; ([0-9]+) bytes of tensors to fetch"))) << r.out;
    const std::uint64_t head = std::stoull(m[1]), planned = std::stoull(m[2]), all = tensor_bytes(dir / "srv" / "a.gguf", taken);
    EXPECT_LE(planned, all);
    EXPECT_EQ(planned + head - spans_of(dir / "srv" / "a.gguf").front().first, all) << "what the head holds of the data is token_embd's";
    srv.stop();
    EXPECT_EQ(check_tensor_requests(srv.log(), {{"a.gguf", {}}}), 0u);
}

TEST_F(RemoteAssemble, AMaxFetchBelowThePlanIsRefusedBeforeAnyTensorIsFetched) {
    loopback_server srv(serve());
    const fs::path out = dir / "never.gguf";
    const std::string cfg = config_file("merge_method: passthrough\nslices:\n  - sources:\n      - model: " + srv.url("/a.gguf") +
                                        "\n        layer_range: [0, 4]\n");
    const outcome r = run_minfer(dir, {"assemble", cfg, "-o", out.string(), "--max-fetch", "3MiB"});
    EXPECT_EQ(r.rc, 3) << r.err;
    EXPECT_NE(r.err.find("fetch_budget_exceeded"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("tensors taken from remote models"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    srv.stop();
    EXPECT_EQ(check_tensor_requests(srv.log(), {{"a.gguf", {}}}), 0u);
    // and a budget that holds the plan is enough
    loopback_server srv2(serve());
    const std::string cfg2 = config_file("merge_method: passthrough\nslices:\n  - sources:\n      - model: " + srv2.url("/a.gguf") +
                                         "\n        layer_range: [0, 4]\n");
    const outcome ok = run_minfer(dir, {"assemble", cfg2, "-o", out.string(), "--max-fetch", "6MiB", "--quiet"});
    EXPECT_EQ(ok.rc, 0) << ok.err;
}

// A server that answers the heads and then fails: 500 for every tensor range (after the retries),
// a body cut short, or another file size (the file was replaced between the head and the tensors).
TEST_F(RemoteAssemble, AServerThatFailsMidwayLeavesNoOutput) {
    const std::string a = read_all(dir / "srv" / "a.gguf");
    const std::uint64_t data = spans_of(dir / "srv" / "a.gguf").front().first;
    struct failure {
        const char* what;
        const char* expect;
        std::function<void(const http_request&, connection&)> handler;
    };
    const std::vector<failure> failures = {
        {"500 for the tensors", "HTTP 500",
         [&](const http_request& rq, connection& c) {
             if (rq.first >= data) c.send(answer_head("500 Internal Server Error", {"Content-Length: 0"}));
             else serve_bytes(rq, c, a);
         }},
        {"a body cut short", "transfer_failed",
         [&](const http_request& rq, connection& c) {
             if (rq.first < data) return serve_bytes(rq, c, a);
             const std::uint64_t last = *rq.last;
             c.send(answer_head("206 Partial Content", {"Content-Range: bytes " + std::to_string(rq.first) + "-" + std::to_string(last) + "/" +
                                                            std::to_string(a.size()),
                                                        "Content-Length: " + std::to_string(last - rq.first + 1)}));
             c.send(std::string_view(a).substr(rq.first, (last - rq.first + 1) / 2));
         }},
        {"another file size", "bad_content_range",
         [&](const http_request& rq, connection& c) {
             if (rq.first < data) return serve_bytes(rq, c, a);
             serve_bytes(rq, c, a + std::string(4096, 'x'));
         }},
    };
    for (const failure& f : failures) {
        loopback_server srv(f.handler);
        const fs::path out = dir / "never.gguf";
        const std::string cfg = config_file("merge_method: passthrough\nslices:\n  - sources:\n      - model: " + srv.url("/a.gguf") +
                                            "\n        layer_range: [0, 2]\n");
        const outcome r = run_minfer(dir, {"assemble", cfg, "-o", out.string(), "--timeout", "20"});
        EXPECT_EQ(r.rc, 3) << f.what << ": " << r.err;
        EXPECT_NE(r.err.find(f.expect), std::string::npos) << f.what << ": " << r.err;
        EXPECT_FALSE(fs::exists(out)) << f.what;
        for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
    }
}

TEST_F(RemoteAssemble, AStallingServerEndsAtTheDeadline) {
    const std::string a = read_all(dir / "srv" / "a.gguf");
    const std::uint64_t data = spans_of(dir / "srv" / "a.gguf").front().first;
    loopback_server srv([&](const http_request& rq, connection& c) {
        if (rq.first < data) return serve_bytes(rq, c, a);
        c.hold();  // the tensors never come
    });
    const fs::path out = dir / "never.gguf";
    const std::string cfg = config_file("merge_method: passthrough\nslices:\n  - sources:\n      - model: " + srv.url("/a.gguf") +
                                        "\n        layer_range: [0, 2]\n");
    const auto t0 = std::chrono::steady_clock::now();
    const outcome r = run_minfer(dir, {"assemble", cfg, "-o", out.string(), "--timeout", "2"});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.rc, 3) << r.err;
    EXPECT_NE(r.err.find("deadline"), std::string::npos) << r.err;
    EXPECT_LT(s, 8.0);
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(RemoteAssemble, ABadUrlIsAUsageError) {
    const fs::path out = dir / "never.gguf";
    const std::string cfg = config_file("merge_method: passthrough\nslices:\n  - sources:\n      - model: hf://only-an-owner\n"
                                        "        layer_range: [0, 2]\n");
    const outcome r = run_minfer(dir, {"assemble", cfg, "-o", out.string()});
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

}  // namespace
