// `minfer quantize`, through the real binary: every option parses and reaches toolbox::quantize
// (the printed plan, the files written, the output's metadata change as the option says), every
// refusal with its smallest trigger and its exit code, the dry run's sizes against the files a real
// run writes, split outputs within their limit, and outputs that the loader and `minfer verify`
// accept. Whether the bytes are llama-quantize's is toolbox::quantize's test (tests/unit); here the
// models are small, written with gguf::writer: rows of 256 values (whole k-quant blocks) unless a
// test wants a fallback.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "cli_support.hpp"
#include "minfer/quant/type_plan.hpp"

namespace minfer_cli_test {
namespace {

fs::path fresh_dir(const std::string& name) {
    const fs::path d = temp_root() / ("q." + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::set<std::string> listing(const fs::path& d) {
    std::set<std::string> s;
    for (const auto& e : fs::directory_iterator(d)) s.insert(e.path().filename().string());
    return s;
}

// Values in [-1, 1) from a xorshift generator: deterministic, no two tensors alike.
std::vector<std::byte> random_f32(std::size_t n, std::uint32_t seed) {
    std::vector<float> v(n);
    std::uint32_t x = seed * 2654435761u + 12345u;
    for (float& f : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        f = static_cast<float>(x >> 8) / 8388608.0f - 1.0f;
    }
    return bytes_of(v);
}

struct model_spec {
    std::uint32_t n_layer = 2;
    std::int64_t ffn_down_cols = 256;  // ne[0] of ffn_down: not a multiple of 256 forces a fallback
    gguf::tensor_type weight_type = gguf::tensor_type::f32;  // q8_0 makes an already quantized input
    float outlier = 0;  // nonzero: value 300 (row 1) of blk.0.attn_q.weight
};

// A small llama-shaped model: token_embd, output_norm, output, and per layer attn_norm, attn_q/k/v,
// attn_output, ffn_norm, ffn_gate/up/down. Every 2-D row is 256 values (ffn_down's as the spec says).
fs::path make_model(const fs::path& p, const model_spec& spec = {}) {
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "quantize test");
    w.set_u32("llama.block_count", spec.n_layer);
    w.set_u32("llama.context_length", 128);
    w.set_u32("llama.embedding_length", 256);
    w.set_u32("llama.feed_forward_length", 256);
    w.set_u32("llama.attention.head_count", 4);
    w.set_u32("llama.attention.head_count_kv", 4);
    w.set_u32("general.file_type", 0);
    const std::vector<std::string> toks{"<unk>", "<s>", "</s>", "a", "b", "c"};
    w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
    std::uint32_t seed = 1;
    auto add = [&](const std::string& name, std::int64_t ne0, std::int64_t ne1) {
        const std::size_t n = static_cast<std::size_t>(ne0 * ne1);
        if (ne1 == 1) {
            const std::array<std::int64_t, 1> ne{ne0};
            w.add_tensor(name, gguf::tensor_type::f32, ne, random_f32(n, seed++));
            return;
        }
        const std::array<std::int64_t, 2> ne{ne0, ne1};
        if (spec.weight_type == gguf::tensor_type::f32) {
            std::vector<std::byte> bytes = random_f32(n, seed++);
            if (spec.outlier != 0 && name == "blk.0.attn_q.weight") std::memcpy(bytes.data() + 300 * 4, &spec.outlier, 4);
            w.add_tensor(name, gguf::tensor_type::f32, ne, std::move(bytes));
        } else {
            w.add_zero_tensor(name, spec.weight_type, ne);
        }
    };
    add("token_embd.weight", 256, 8);
    add("output_norm.weight", 256, 1);
    add("output.weight", 256, 8);
    for (std::uint32_t i = 0; i < spec.n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        add(b + "attn_norm.weight", 256, 1);
        add(b + "attn_q.weight", 256, 4);
        add(b + "attn_k.weight", 256, 4);
        add(b + "attn_v.weight", 256, 4);
        add(b + "attn_output.weight", 256, 4);
        add(b + "ffn_norm.weight", 256, 1);
        add(b + "ffn_gate.weight", 256, 4);
        add(b + "ffn_up.weight", 256, 4);
        add(b + "ffn_down.weight", spec.ffn_down_cols, 4);
    }
    must_write(w, p);
    return p;
}

// One model per process for the tests that only read it.
const fs::path& model() {
    static const fs::path p = make_model(fresh_dir("shared") / "model-f32.gguf");
    return p;
}

gguf::model open_ok(const fs::path& p) {
    auto m = gguf::model::open(p);
    if (!m) throw std::runtime_error("open failed: " + m.error().message());
    return std::move(*m);
}

run_result quantize(std::vector<std::string> args) {
    args.insert(args.begin(), "quantize");
    return run(args);
}

json parse_json(const run_result& r) {
    json j = json::parse(r.out, nullptr, false);
    if (j.is_discarded()) ADD_FAILURE() << "not JSON: " << r.out;
    return j;
}

// The plan of a dry run: tensor name -> output type (and the rule), from --json.
struct planned {
    std::string to, rule;
};
std::map<std::string, planned> plan_of(const json& j) {
    std::map<std::string, planned> m;
    for (const auto& t : j["tensors"]) m[t["name"].get<std::string>()] = {t["to"], t["rule"]};
    return m;
}

std::map<std::string, planned> dry_plan(const std::vector<std::string>& extra, const std::string& type = "Q4_K_M") {
    const fs::path d = fresh_dir("plan");
    std::vector<std::string> args{model().string(), (d / "out.gguf").string(), type, "--dry-run", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = quantize(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(listing(d), std::set<std::string>{}) << "a dry run writes nothing";
    return plan_of(parse_json(r));
}

// The line of the text plan that starts with the tensor's name, whitespace squeezed.
std::string plan_line(const std::string& out, const std::string& tensor) {
    for (const std::string& l : lines_of(out)) {
        const std::string s = squeeze(l);
        if (s.rfind(tensor + " ", 0) == 0) return s;
    }
    return {};
}

// ---- the plan and the dry run ------------------------------------------------------------------

TEST(CliQuantize, DryRunPrintsThePlanAndTheExactSizes) {
    const fs::path d = fresh_dir("dry");
    const fs::path out = d / "out.gguf";
    const auto dry = quantize({model().string(), out.string(), "q4_k_m", "--dry-run"});
    ASSERT_EQ(dry.rc, 0) << dry.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_NE(dry.out.find("Plan for " + model().string() + " as Q4_K_M (file type 15): 21 tensors"),
              std::string::npos)
        << dry.out;
    // A k-quant tensor: shape, both types, both sizes (256 x 4 f32 = 4096 bytes; 4 q4_K blocks of 144).
    EXPECT_EQ(plan_line(dry.out, "blk.0.attn_q.weight"), "blk.0.attn_q.weight [256, 4] f32 -> q4_K 4096 -> 576 default type of Q4_K_M")
        << dry.out;
    // A norm is kept, with the reason.
    EXPECT_EQ(plan_line(dry.out, "blk.1.ffn_norm.weight"), "blk.1.ffn_norm.weight [256] f32 1024 kept: 1-D tensor") << dry.out;
    EXPECT_TRUE(has_line(dry.out, "dry run: nothing written")) << dry.out;

    const auto wet = quantize({model().string(), out.string(), "q4_k_m"});
    ASSERT_EQ(wet.rc, 0) << wet.err;
    const std::uint64_t size = fs::file_size(out);
    // The dry run's size is the written file's, to the byte.
    EXPECT_NE(dry.out.find("Would write " + out.string() + ": 21 tensors, " + std::to_string(size) + " bytes"),
              std::string::npos)
        << dry.out << "\nfile: " << size;
    EXPECT_NE(wet.out.find("Wrote " + out.string() + ": 21 tensors, " + std::to_string(size) + " bytes"),
              std::string::npos)
        << wet.out;
    EXPECT_NE(wet.out.find("bits per weight"), std::string::npos) << wet.out;
    EXPECT_EQ(wet.err, "") << "piped: no progress line, and this model gives no warning";

    // The written types are the plan's.
    const json j = parse_json(quantize({model().string(), (d / "other.gguf").string(), "Q4_K_M", "--dry-run", "--json"}));
    const gguf::model m = open_ok(out);
    std::uint64_t tensor_bytes = 0;
    for (const auto& t : j["tensors"]) {
        const gguf::tensor_ref* r = m.find_tensor(t["name"].get<std::string>());
        ASSERT_NE(r, nullptr) << t["name"];
        EXPECT_EQ(gguf::to_string(r->info->type), t["to"].get<std::string>()) << t["name"];
        EXPECT_EQ(r->info->n_bytes, t["output_bytes"].get<std::uint64_t>()) << t["name"];
        tensor_bytes += r->info->n_bytes;
    }
    EXPECT_EQ(j["output_tensor_bytes"].get<std::uint64_t>(), tensor_bytes);
    EXPECT_EQ(j["outputs"][0]["file_size"].get<std::uint64_t>(), size);
    EXPECT_EQ(j["total_bytes"].get<std::uint64_t>(), size);
    EXPECT_EQ(j["dry_run"], true);
    EXPECT_EQ(j["type"], "Q4_K_M");
    EXPECT_EQ(j["file_type"], 15);
}

TEST(CliQuantize, OutputLoadsAndVerifies) {
    const fs::path d = fresh_dir("verify");
    for (const char* type : {"Q8_0", "Q4_0", "Q4_K_S", "Q6_K", "IQ4_XS", "F16", "COPY"}) {
        const fs::path out = d / (std::string(type) + ".gguf");
        const auto r = quantize({model().string(), out.string(), type});
        ASSERT_EQ(r.rc, 0) << type << ": " << r.err;
        const gguf::model m = open_ok(out);
        EXPECT_EQ(m.tensors().size(), 21u);
        const auto v = run({"verify", out.string(), "--values"});
        EXPECT_EQ(v.rc, 0) << type << ": " << v.out << v.err;
        if (std::string_view(type) != "COPY") {
            const auto ft = minfer::quant::parse_file_type(type);
            EXPECT_EQ(m.get_as<std::uint32_t>("general.file_type").value_or(9999), static_cast<std::uint32_t>(ft->ftype))
                << type;
        }
    }
}

TEST(CliQuantize, TypeByNumberAndAnyCase) {
    const auto by_name = dry_plan({}, "Q4_K_M");
    EXPECT_EQ(dry_plan({}, "15")["blk.0.attn_q.weight"].to, by_name.at("blk.0.attn_q.weight").to);
    EXPECT_EQ(dry_plan({}, "q4_k_m")["blk.0.attn_q.weight"].to, "q4_K");
    EXPECT_EQ(dry_plan({}, "Q4_K")["blk.0.attn_q.weight"].to, "q4_K");  // llama-quantize's alias
    EXPECT_EQ(dry_plan({}, "q8_0")["blk.0.attn_q.weight"].to, "q8_0");
}

TEST(CliQuantize, TensorTypeChangesThePlan) {
    const auto base = dry_plan({});
    EXPECT_EQ(base.at("blk.0.attn_q.weight").to, "q4_K");
    const auto p = dry_plan({"--tensor-type", "attn_q=q8_0", "--tensor-type", "ffn_up=Q5_K"});
    EXPECT_EQ(p.at("blk.0.attn_q.weight").to, "q8_0");
    EXPECT_EQ(p.at("blk.1.attn_q.weight").to, "q8_0");
    EXPECT_EQ(p.at("blk.0.attn_q.weight").rule, "--tensor-type override");
    EXPECT_EQ(p.at("blk.0.ffn_up.weight").to, "q5_K");  // the type in any case
    EXPECT_EQ(p.at("blk.0.attn_k.weight").to, base.at("blk.0.attn_k.weight").to);
    // The pattern is lowercased as llama-quantize does, and is a regex; the first match wins.
    const auto q = dry_plan({"--tensor-type", "BLK\\.1\\.ATTN_Q=q5_0", "--tensor-type", "attn_q=q8_0"});
    EXPECT_EQ(q.at("blk.1.attn_q.weight").to, "q5_0");
    EXPECT_EQ(q.at("blk.0.attn_q.weight").to, "q8_0");
    // And in the text plan.
    const fs::path d = fresh_dir("tt");
    const auto r = quantize({model().string(), (d / "o.gguf").string(), "Q4_K_M", "--dry-run", "--tensor-type", "attn_q=q8_0"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(plan_line(r.out, "blk.0.attn_q.weight"), "blk.0.attn_q.weight [256, 4] f32 -> q8_0 4096 -> 1088 --tensor-type override")
        << r.out;
}

TEST(CliQuantize, OutputAndEmbeddingTypesLeaveOutputAndPure) {
    const auto base = dry_plan({});
    EXPECT_EQ(base.at("output.weight").to, "q6_K");
    EXPECT_EQ(dry_plan({"--output-tensor-type", "Q8_0"}).at("output.weight").to, "q8_0");
    EXPECT_EQ(dry_plan({"--token-embedding-type", "q5_k"}).at("token_embd.weight").to, "q5_K");
    const auto leave = dry_plan({"--leave-output-tensor"});
    EXPECT_EQ(leave.at("output.weight").to, "f32");
    EXPECT_EQ(leave.at("output.weight").rule, "kept: --leave-output-tensor");
    // --pure: no mixture, TYPE's default type everywhere it may change.
    const auto pure = dry_plan({"--pure"});
    for (const auto& [name, p] : pure) {
        if (p.rule.rfind("kept:", 0) != 0) {
            EXPECT_EQ(p.to, "q4_K") << name << ": " << p.rule;
        }
    }
    bool mixed = false;
    for (const auto& [name, p] : base) mixed = mixed || (p.rule.rfind("kept:", 0) != 0 && p.to != "q4_K");
    EXPECT_TRUE(mixed) << "Q4_K_M without --pure mixes types";
}

TEST(CliQuantize, FallbackIsAWarning) {
    const fs::path d = fresh_dir("fallback");
    model_spec spec;
    spec.ffn_down_cols = 320;  // 320 is not whole q4_K blocks (256): llama.cpp falls back to q5_0
    const fs::path in = make_model(d / "in.gguf", spec);
    const auto r = quantize({in.string(), (d / "out.gguf").string(), "Q4_K_S"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("Warning: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\r'), std::string::npos);
    const gguf::model m = open_ok(d / "out.gguf");
    EXPECT_EQ(m.find_tensor("blk.1.ffn_down.weight")->info->type, gguf::tensor_type::q5_0);
}

// An explicit --output-tensor-type gets no fallback (llama.cpp's rule): a type whose blocks do not
// divide the rows is refused before anything is written, naming the tensor, not as a parse error.
TEST(CliQuantize, ExplicitTypeThatDoesNotFitTheRows) {
    const fs::path d = fresh_dir("nofit");
    model_spec spec;
    spec.ffn_down_cols = 320;
    const fs::path in = make_model(d / "in.gguf", spec);
    const auto r = quantize({in.string(), (d / "out.gguf").string(), "Q8_0", "--tensor-type", "ffn_down=q6_K"});
    ASSERT_EQ(r.rc, 0) << r.err;  // --tensor-type falls back (q6_K -> q8_0)
    const gguf::model out = open_ok(d / "out.gguf");
    EXPECT_EQ(out.find_tensor("blk.0.ffn_down.weight")->info->type, gguf::tensor_type::q8_0);
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    const std::array<std::int64_t, 2> ne{64, 4};
    w.add_tensor("output.weight", gguf::tensor_type::f32, ne, random_f32(256, 9));
    must_write(w, d / "narrow.gguf");
    for (const char* dry : {"--dry-run", "--force"}) {
        const auto bad = quantize({(d / "narrow.gguf").string(), (d / "n.gguf").string(), "Q8_0", "--output-tensor-type",
                                   "q6_K", dry});
        EXPECT_EQ(bad.rc, 1) << bad.err;
        EXPECT_EQ(bad.err.find("failed to parse"), std::string::npos) << bad.err;
        EXPECT_NE(bad.err.find("'output.weight'"), std::string::npos) << bad.err;
        EXPECT_NE(bad.err.find("the type given for it does not fit its rows [not_block_multiple]"), std::string::npos)
            << bad.err;
        EXPECT_FALSE(fs::exists(d / "n.gguf"));
    }
}

// llama.cpp quantizes 3-D tensors at most; a 4-D one is refused before anything is written, as what
// it is (not as a file that failed to parse).
TEST(CliQuantize, FourDimensionalTensorRefused) {
    const fs::path d = fresh_dir("4d");
    gguf::writer w;
    w.set_string("general.architecture", "llama");
    const std::array<std::int64_t, 4> ne{256, 2, 2, 2};
    w.add_tensor("blk.0.mix.weight", gguf::tensor_type::f32, ne, random_f32(2048, 3));
    must_write(w, d / "in.gguf");
    const auto r = quantize({(d / "in.gguf").string(), (d / "out.gguf").string(), "Q8_0"});
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(r.err.rfind("Error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find("failed to parse"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("blk.0.mix.weight"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "out.gguf"));
}

TEST(CliQuantize, ThreadsPositionalOrOptionSameBytes) {
    const fs::path d = fresh_dir("threads");
    ASSERT_EQ(quantize({model().string(), (d / "a.gguf").string(), "Q4_K_M", "1"}).rc, 0);
    ASSERT_EQ(quantize({model().string(), (d / "b.gguf").string(), "Q4_K_M", "-t", "3"}).rc, 0);
    ASSERT_EQ(quantize({model().string(), (d / "c.gguf").string(), "Q4_K_M", "--threads", "0"}).rc, 0);
    EXPECT_EQ(slurp(d / "a.gguf"), slurp(d / "b.gguf"));
    EXPECT_EQ(slurp(d / "a.gguf"), slurp(d / "c.gguf"));
}

// On a terminal the progress line is drawn on stderr and erased at the end; piped, stderr stays
// empty (DryRunPrintsThePlanAndTheExactSizes), and --quiet draws nothing.
TEST(CliQuantize, ProgressOnATerminalOnly) {
    if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux `script` not found";
    const fs::path d = fresh_dir("tty");
    auto under_tty = [&](const std::string& out, const std::string& extra) {
        const std::string inner = std::string("'") + MINFER_EXE + "' quantize '" + model().string() + "' '" +
                                  (d / out).string() + "' Q8_0 " + extra;
        const fs::path log = d / (out + ".tty");
        const std::string cmd = "script -qec \"" + inner + "\" /dev/null > '" + log.string() + "' 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
        return slurp(log);
    };
    const std::string drawn = under_tty("a.gguf", "");
    EXPECT_NE(drawn.find("\rquantizing " + model().string()), std::string::npos) << drawn;
    EXPECT_NE(drawn.find("\r\33[K"), std::string::npos) << "the line is erased at the end";
    EXPECT_NE(drawn.find("Wrote "), std::string::npos) << drawn;
    const std::string quiet = under_tty("b.gguf", "--quiet");
    EXPECT_EQ(quiet, "") << "--quiet: no progress line and no summary";
}

// ---- split outputs -----------------------------------------------------------------------------

// The parts named <dir>/<leaf>-0000i-of-0000N.gguf, in order.
std::vector<fs::path> parts_of(const fs::path& dir, const std::string& leaf) {
    std::vector<fs::path> v;
    for (const auto& e : fs::directory_iterator(dir)) {
        const auto info = gguf::split_file_info(e.path().filename().string());
        if (info && info->prefix == leaf) v.push_back(e.path());
    }
    std::sort(v.begin(), v.end());
    return v;
}

TEST(CliQuantize, SplitMaxSizeEveryPartWithinTheLimit) {
    const fs::path d = fresh_dir("maxsize");
    const std::uint64_t limit = 4000;
    const auto dry = quantize({model().string(), (d / "q.gguf").string(), "Q8_0", "--split-max-size", "4K", "--dry-run",
                               "--json"});
    ASSERT_EQ(dry.rc, 0) << dry.err;
    const json j = parse_json(dry);
    const auto r = quantize({model().string(), (d / "q.gguf").string(), "Q8_0", "--split-max-size", "4K"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto parts = parts_of(d, "q");
    ASSERT_GE(parts.size(), 3u) << r.out;
    ASSERT_EQ(j["outputs"].size(), parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
        EXPECT_LE(fs::file_size(parts[i]), limit) << parts[i];
        EXPECT_EQ(fs::file_size(parts[i]), j["outputs"][i]["file_size"].get<std::uint64_t>()) << parts[i];
        EXPECT_EQ(fs::path(j["outputs"][i]["path"].get<std::string>()), parts[i]);
    }
    EXPECT_NE(r.out.find("Wrote " + std::to_string(parts.size()) + " files, "), std::string::npos) << r.out;
    const gguf::model set = open_ok(parts[0]);
    EXPECT_EQ(set.parts().size(), parts.size());
    EXPECT_EQ(set.tensors().size(), 21u);
    EXPECT_EQ(run({"verify", parts[0].string()}).rc, 0);
}

TEST(CliQuantize, SplitMaxTensors) {
    const fs::path d = fresh_dir("maxtensors");
    const auto r = quantize({model().string(), (d / "q.gguf").string(), "Q8_0", "--split-max-tensors", "8"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto parts = parts_of(d, "q");
    ASSERT_EQ(parts.size(), 3u) << r.out;  // 21 tensors, 8 a part
    const gguf::model set = open_ok(parts[0]);
    EXPECT_EQ(set.parts()[0].view.tensors().size(), 8u);
    EXPECT_EQ(set.parts()[2].view.tensors().size(), 5u);
}

TEST(CliQuantize, KeepSplitNamesThePartsAsTheInput) {
    const fs::path d = fresh_dir("keep");
    const fs::path in = make_model(d / "in.gguf");
    ASSERT_EQ(run({"split", in.string(), (d / "in").string(), "--split-max-tensors", "10"}).rc, 0);
    const fs::path in1 = d / "in-00001-of-00003.gguf";
    ASSERT_TRUE(fs::exists(in1));
    const auto r = quantize({in1.string(), (d / "out.gguf").string(), "Q4_K_M", "--keep-split"});
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char* p : {"out-00001-of-00003.gguf", "out-00002-of-00003.gguf", "out-00003-of-00003.gguf"})
        EXPECT_TRUE(fs::exists(d / p)) << p << "\n" << r.out;
    EXPECT_FALSE(fs::exists(d / "out.gguf"));
    const gguf::model set = open_ok(d / "out-00001-of-00003.gguf");
    const gguf::model src = open_ok(in1);
    ASSERT_EQ(set.parts().size(), 3u);
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(set.parts()[i].view.tensors().size(), src.parts()[i].view.tensors().size()) << i;
}

// ---- metadata and importance -------------------------------------------------------------------

TEST(CliQuantize, OverrideKvShowsInInfo) {
    const fs::path d = fresh_dir("kv");
    const fs::path out = d / "out.gguf";
    const auto r = quantize({model().string(), out.string(), "Q8_0", "--override-kv", "general.name=str:renamed",
                             "--override-kv", "test.flag=bool:true", "--override-kv", "test.scale=float:0.5",
                             "--override-kv", "test.count=int:7"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(run({"info", out.string(), "--key", "general.name"}).out, "renamed");  // a string: its raw bytes
    EXPECT_EQ(run({"info", out.string(), "--key", "test.flag"}).out, "true\n");
    EXPECT_EQ(run({"info", out.string(), "--key", "test.scale"}).out, "0.5\n");
    EXPECT_EQ(run({"info", out.string(), "--key", "test.count"}).out, "7\n");
}

// llama-imatrix's legacy .dat: i32 n_entries; per entry i32 len, name, i32 ncall, i32 nval, nval
// f32; then i32 chunk count, i32 dataset length, dataset.
void write_dat(const fs::path& p, const std::vector<std::string>& names, std::int64_t n) {
    std::string b;
    auto i32 = [&b](std::int32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
    i32(static_cast<std::int32_t>(names.size()));
    for (const std::string& name : names) {
        i32(static_cast<std::int32_t>(name.size()));
        b += name;
        i32(1);
        i32(static_cast<std::int32_t>(n));
        for (std::int64_t k = 0; k < n; ++k) {
            const float v = 0.5f + static_cast<float>(k % 7);
            b.append(reinterpret_cast<const char*>(&v), 4);
        }
    }
    i32(10);
    const std::string dataset = "calibration.txt";
    i32(static_cast<std::int32_t>(dataset.size()));
    b += dataset;
    write_file(p, b);
}

TEST(CliQuantize, ImatrixAndItsFilters) {
    const fs::path d = fresh_dir("imatrix");
    std::vector<std::string> names;
    for (int l = 0; l < 2; ++l)
        for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"})
            names.push_back("blk." + std::to_string(l) + "." + t + ".weight");
    const fs::path dat = d / "imatrix.dat";
    write_dat(dat, names, 256);
    auto entries = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args{model().string(), (d / "out.gguf").string(), "IQ4_XS", "--dry-run", "--json",
                                      "--imatrix", dat.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = quantize(args);
        EXPECT_EQ(r.rc, 0) << r.err;
        return parse_json(r)["imatrix_entries"].get<std::uint32_t>();
    };
    EXPECT_EQ(entries({}), 14u);
    EXPECT_EQ(entries({"--include-weights", "attn_q", "--include-weights", "ffn_up"}), 4u);
    EXPECT_EQ(entries({"--exclude-weights", "blk.0."}), 7u);

    // A type that needs an imatrix: refused without one (exit 1), written with it.
    const auto without = quantize({model().string(), (d / "iq2.gguf").string(), "IQ2_XXS"});
    EXPECT_EQ(without.rc, 1) << without.err;
    EXPECT_NE(without.err.find("imatrix"), std::string::npos) << without.err;
    EXPECT_FALSE(fs::exists(d / "iq2.gguf"));
    const auto with = quantize({model().string(), (d / "iq2.gguf").string(), "IQ2_XXS", "--imatrix", dat.string()});
    EXPECT_EQ(with.rc, 0) << with.err;
    EXPECT_EQ(run({"verify", (d / "iq2.gguf").string()}).rc, 0);
    const auto key = run({"info", (d / "iq2.gguf").string(), "--key", "quantize.imatrix.entries_count"});
    EXPECT_EQ(key.out, "14\n") << key.err;
}

TEST(CliQuantize, RequantizeNeedsTheFlag) {
    const fs::path d = fresh_dir("requant");
    model_spec spec;
    spec.weight_type = gguf::tensor_type::q8_0;
    const fs::path in = make_model(d / "q8.gguf", spec);
    const auto refused = quantize({in.string(), (d / "out.gguf").string(), "Q4_K_M"});
    EXPECT_EQ(refused.rc, 2) << refused.err;
    EXPECT_NE(refused.err.find("--allow-requantize"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(d / "out.gguf"));
    const auto ok = quantize({in.string(), (d / "out.gguf").string(), "Q4_K_M", "--allow-requantize"});
    EXPECT_EQ(ok.rc, 0) << ok.err;
    const gguf::model m = open_ok(d / "out.gguf");
    EXPECT_EQ(m.find_tensor("blk.0.attn_q.weight")->info->type, gguf::tensor_type::q4_k);
}

// ---- refusals ----------------------------------------------------------------------------------

struct usage_case {
    std::vector<std::string> args;  // after "quantize IN OUT"
    std::string message;            // a piece of stderr
};

TEST(CliQuantize, UsageErrorsExit2AndWriteNothing) {
    const fs::path d = fresh_dir("usage");
    const std::vector<usage_case> cases{
        {{"Q9_K"}, "Error: TYPE 'Q9_K': not a quantization type"},
        {{"99"}, "Error: TYPE '99': not a file type number llama.cpp maps to a tensor type"},
        {{""}, "Error: TYPE '': not a quantization type"},
        {{"Q4_K_M", "x"}, "Error: THREADS: 'x' is not a whole number of threads"},
        {{"Q4_K_M", "-t", "-1"}, "--threads: '-1' is not a whole number of threads"},
        {{"Q4_K_M", "2", "-t", "2"}, "the threads are given twice"},
        {{"Q4_K_M", "--tensor-type", "attn_q"}, "Error: --tensor-type 'attn_q': expected PATTERN=TYPE"},
        {{"Q4_K_M", "--tensor-type", "=q8_0"}, "Error: --tensor-type '=q8_0': the tensor name pattern is empty"},
        {{"Q4_K_M", "--tensor-type", "attn_q="}, "Error: --tensor-type 'attn_q=': the type is empty"},
        {{"Q4_K_M", "--tensor-type", "attn_q=q9_9"}, "Error: --tensor-type 'attn_q=q9_9': 'q9_9' is not a ggml type name"},
        {{"Q4_K_M", "--tensor-type", "attn_q(=q8_0"}, "Error: --tensor-type pattern 'attn_q(': not a regular expression"},
        {{"Q4_K_M", "--output-tensor-type", "q7"}, "Error: --output-tensor-type 'q7': not a ggml type name"},
        {{"Q4_K_M", "--token-embedding-type", ""}, "Error: --token-embedding-type '': not a ggml type name"},
        {{"Q4_K_M", "--override-kv", "general.name"}, "Error: --override-kv 'general.name': "},
        {{"Q4_K_M", "--override-kv", "a.b=int:x"}, "Error: --override-kv 'a.b=int:x': "},
        {{"Q4_K_M", "--override-kv", "a.b=blob:1"}, "Error: --override-kv 'a.b=blob:1': "},
        {{"Q4_K_M", "--imatrix", "m.dat", "--include-weights", "a", "--exclude-weights", "b"},
         "Error: --include-weights and --exclude-weights cannot be used together"},
        {{"Q4_K_M", "--include-weights", "a"}, "Error: --include-weights filters the importance matrix: it needs --imatrix FILE"},
        {{"Q4_K_M", "--keep-split", "--split-max-size", "1M"}, "Error: --keep-split writes the input's parts as they are grouped; it cannot be combined with --split-max-size"},
        {{"Q4_K_M", "--keep-split", "--split-max-tensors", "4"}, "cannot be combined with --split-max-tensors"},
        {{"Q4_K_M", "--split-max-size", "10k"}, "Error: --split-max-size: '10k': unknown unit 'k'"},
        {{"Q4_K_M", "--split-max-tensors", "0"}, "Error: --split-max-tensors must be at least 1"},
        {{"Q4_K_M", "--split-max-tensors", "two"}, "Error: --split-max-tensors: 'two' is not a whole number"},
        {{"Q4_K_M", "--no-such-option"}, "--no-such-option"},
    };
    for (const usage_case& c : cases) {
        std::vector<std::string> args{model().string(), (d / "out.gguf").string()};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const auto r = quantize(args);
        std::string what;
        for (const std::string& a : c.args) what += a + " ";
        EXPECT_EQ(r.rc, 2) << what << ": " << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << what << ": " << r.err;
        EXPECT_EQ(r.out, "") << what;
        EXPECT_EQ(listing(d), std::set<std::string>{}) << what;
    }
    EXPECT_EQ(quantize({model().string(), (d / "out.gguf").string()}).rc, 2);  // no TYPE
    EXPECT_EQ(quantize({model().string()}).rc, 2);
}

TEST(CliQuantize, ExistingOutputNeedsForceAndTheInputIsNeverTheOutput) {
    const fs::path d = fresh_dir("force");
    const fs::path in = make_model(d / "in.gguf");
    const fs::path out = d / "out.gguf";
    write_file(out, "old");
    const auto refused = quantize({in.string(), out.string(), "Q8_0"});
    EXPECT_EQ(refused.rc, 2);
    EXPECT_EQ(refused.err, "Error: " + out.string() + " already exists (use --force to replace it)\n");
    EXPECT_EQ(slurp(out), "old");
    const auto forced = quantize({in.string(), out.string(), "Q8_0", "-f"});
    EXPECT_EQ(forced.rc, 0) << forced.err;
    EXPECT_NO_THROW(open_ok(out));

    const std::string before = slurp(in);
    for (const std::vector<std::string>& extra : {std::vector<std::string>{}, std::vector<std::string>{"--force"}}) {
        std::vector<std::string> args{in.string(), in.string(), "Q8_0"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = quantize(args);
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_NE(r.err.find("is the input: quantize never writes over its input"), std::string::npos) << r.err;
    }
    // Another spelling of the same file.
    const auto other = quantize({in.string(), (d / "." / "in.gguf").string(), "Q8_0", "--force"});
    EXPECT_EQ(other.rc, 2) << other.err;
    EXPECT_EQ(slurp(in), before);

    // An existing part of a split output.
    write_file(d / "s-00002-of-00003.gguf", "old");
    const auto part = quantize({in.string(), (d / "s.gguf").string(), "Q8_0", "--split-max-tensors", "8"});
    EXPECT_EQ(part.rc, 2) << part.err;
    EXPECT_NE(part.err.find("s-00002-of-00003.gguf already exists (use --force to replace it)"), std::string::npos)
        << part.err;
    EXPECT_FALSE(fs::exists(d / "s-00001-of-00003.gguf"));
    EXPECT_EQ(slurp(d / "s-00002-of-00003.gguf"), "old");
    // A dry run refuses it too, as the real run would.
    const auto dry = quantize({in.string(), (d / "s.gguf").string(), "Q8_0", "--split-max-tensors", "8", "--dry-run"});
    EXPECT_EQ(dry.rc, 2) << dry.err;
    EXPECT_NE(dry.err.find("s-00002-of-00003.gguf already exists (use --force to replace it)"), std::string::npos)
        << dry.err;
    EXPECT_EQ(dry.out, "");

    // A part of a split output that is the input: refused even with --force, dry or not.
    const fs::path named_like_a_part = d / "p-00002-of-00003.gguf";
    fs::copy_file(in, named_like_a_part);
    for (const char* dry_run : {"--dry-run", "--force"}) {
        const auto r = quantize({named_like_a_part.string(), (d / "p.gguf").string(), "Q8_0", "--split-max-tensors", "8",
                                 "--force", dry_run});
        EXPECT_EQ(r.rc, 2) << dry_run << ": " << r.err;
        EXPECT_NE(r.err.find("is the input: quantize never writes over its input"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(d / "p-00001-of-00003.gguf"));
    }
    EXPECT_EQ(slurp(named_like_a_part), before);

    // Nor over the imatrix.
    const fs::path dat = d / "m.dat";
    write_file(dat, std::string("\0\0\0\0", 4));
    const auto im = quantize({in.string(), dat.string(), "Q8_0", "--imatrix", dat.string(), "--force"});
    EXPECT_EQ(im.rc, 2) << im.err;
    EXPECT_NE(im.err.find("is the --imatrix file"), std::string::npos) << im.err;
}

TEST(CliQuantize, InvalidInputIs1MissingIs3) {
    const fs::path d = fresh_dir("inputs");
    const auto bad = quantize({fx().bad_magic.string(), (d / "o.gguf").string(), "Q8_0"});
    EXPECT_EQ(bad.rc, 1) << bad.err;
    EXPECT_EQ(bad.err.rfind("Error: failed to parse GGUF: ", 0), 0u) << bad.err;
    const auto missing = quantize({(d / "nope.gguf").string(), (d / "o.gguf").string(), "Q8_0"});
    EXPECT_EQ(missing.rc, 3) << missing.err;
    EXPECT_EQ(missing.err.rfind("Error: ", 0), 0u) << missing.err;
    const auto no_imatrix = quantize({model().string(), (d / "o.gguf").string(), "Q8_0", "--imatrix", (d / "none.dat").string()});
    EXPECT_EQ(no_imatrix.rc, 3) << no_imatrix.err;
    const auto split_missing = quantize({fx().split_missing1.string(), (d / "o.gguf").string(), "Q8_0"});
    EXPECT_EQ(split_missing.rc, 3) << split_missing.err;
    EXPECT_EQ(listing(d), std::set<std::string>{});
}

TEST(CliQuantize, Help) {
    const auto h = run({"--help"});
    EXPECT_NE(h.out.find("quantize"), std::string::npos);
    const auto q = run({"quantize", "--help"});
    EXPECT_EQ(q.rc, 0);
    for (const char* o : {"--imatrix", "--include-weights", "--exclude-weights", "--output-tensor-type",
                          "--token-embedding-type", "--tensor-type", "--leave-output-tensor", "--pure",
                          "--allow-requantize", "--override-kv", "--keep-split", "--dry-run", "--split-max-size",
                          "--split-max-tensors", "--force", "--threads", "--json", "Q4_K_M (15)", "IQ2_XXS (19)", "COPY",
                          "  2  usage error"})
        EXPECT_NE(q.out.find(o), std::string::npos) << o;
}

// ---- refusing what llama.cpp refuses, never losing the old output --------------------------------

// A weight of 1e5 is an infinity in f16, and 1e7 an infinite q8_0 block scale (max / 127 above
// 65504): llama.cpp's quantize refuses both ("quantized data validation failed"). So does minfer,
// naming the tensor and the row, and an existing output replaced with --force stays as it was.
TEST(CliQuantize, AWeightBeyondTheTypeIsRefusedAndTheOldOutputKept) {
    const fs::path d = fresh_dir("overflow");
    for (const auto& [outlier, type] : {std::pair{1e5f, "F16"}, std::pair{1e7f, "Q8_0"}}) {
        SCOPED_TRACE(type);
        model_spec spec;
        spec.outlier = outlier;
        const fs::path in = make_model(d / "in.gguf", spec);
        const fs::path out = d / "out.gguf";
        write_file(out, "old model");
        const auto r = quantize({in.string(), out.string(), type, "--force"});
        EXPECT_EQ(r.rc, 1) << r.err;
        EXPECT_NE(r.err.find("tensor 'blk.0.attn_q.weight', row 1"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("quantized data validation failed"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("[quantize_failed]"), std::string::npos) << r.err;
        EXPECT_EQ(slurp(out), "old model");
        EXPECT_EQ(listing(d), (std::set<std::string>{"in.gguf", "out.gguf"}));
        fs::remove(in);
    }
    // The same weight fits Q8_0's scale at 1e5 (1e5 / 127 is a finite f16): written.
    model_spec fits;
    fits.outlier = 1e5f;
    const fs::path in = make_model(d / "fits.gguf", fits);
    const auto ok = quantize({in.string(), (d / "fits-q8.gguf").string(), "Q8_0"});
    EXPECT_EQ(ok.rc, 0) << ok.err;
    EXPECT_EQ(run({"verify", (d / "fits-q8.gguf").string()}).rc, 0);
}

// llama-quantize's command lines: options before IN [OUT] TYPE [THREADS], one value per option. The
// repeatable options once swallowed the positionals after them (with an old out.gguf present, that
// requantized it into a file named Q4_K_M); without OUT the output is ggml-model-TYPE.gguf beside the
// input; a TYPE is never taken as a file name.
TEST(CliQuantize, LlamaQuantizeCommandLines) {
    const fs::path d = fresh_dir("cmdline");
    const fs::path in = d / "in.gguf", out = d / "out.gguf";
    fs::copy_file(model(), in);
    write_file(out, "an older model");
    const auto swallowed = quantize({"--tensor-type", "attn_v=q8_0", in.string(), out.string(), "Q4_K_M", "2"});
    EXPECT_EQ(swallowed.rc, 2) << swallowed.err;  // out.gguf exists: --force is needed, as for any output
    EXPECT_NE(swallowed.err.find("already exists"), std::string::npos) << swallowed.err;
    EXPECT_EQ(slurp(out), "an older model");
    const auto forced = quantize({"--tensor-type", "attn_v=q8_0", "--include-weights", "x", "--imatrix",
                                  (d / "none.dat").string(), in.string(), out.string(), "Q4_K_M", "2", "--force"});
    EXPECT_EQ(forced.rc, 3) << forced.err;  // the imatrix is missing: read as the imatrix, not as a pattern
    const auto written = quantize({"--tensor-type", "attn_v=q8_0", "--tensor-type", "ffn_down=q5_k", in.string(),
                                   out.string(), "Q4_K_M", "2", "--force"});
    ASSERT_EQ(written.rc, 0) << written.err;
    const gguf::model m = open_ok(out);
    EXPECT_EQ(m.find_tensor("blk.0.attn_v.weight")->info->type, gguf::tensor_type::q8_0);
    EXPECT_EQ(m.find_tensor("blk.1.ffn_down.weight")->info->type, gguf::tensor_type::q5_k);
    EXPECT_EQ(listing(d), (std::set<std::string>{"in.gguf", "out.gguf"}));  // no file named Q4_K_M or 2

    // IN TYPE [THREADS]: llama-quantize's default name, beside the input; a number names the first
    // listed TYPE of its file type (15: Q4_K).
    for (const auto& [words, name] :
         std::vector<std::pair<std::vector<std::string>, std::string>>{{{"q8_0"}, "ggml-model-Q8_0.gguf"},
                                                                       {{"Q4_K_M", "2"}, "ggml-model-Q4_K_M.gguf"},
                                                                       {{"15"}, "ggml-model-Q4_K.gguf"},
                                                                       {{"COPY"}, "ggml-model-COPY.gguf"}}) {
        std::vector<std::string> args{in.string()};
        args.insert(args.end(), words.begin(), words.end());
        const auto r = quantize(args);
        EXPECT_EQ(r.rc, 0) << name << ": " << r.err;
        EXPECT_TRUE(fs::exists(d / name)) << name;
        fs::remove(d / name);
    }
    // --keep-split without OUT: the parts of ggml-model-TYPE.
    const auto kept = quantize({"--keep-split", in.string(), "Q8_0"});
    EXPECT_EQ(kept.rc, 0) << kept.err;
    EXPECT_TRUE(fs::exists(d / "ggml-model-Q8_0-00001-of-00001.gguf"));
    fs::remove(d / "ggml-model-Q8_0-00001-of-00001.gguf");

    // THREADS far above the cores: capped (the bytes never depend on it).
    const auto many = quantize({in.string(), (d / "many.gguf").string(), "Q8_0", "100000"});
    EXPECT_EQ(many.rc, 0) << many.err;
    const auto one = quantize({in.string(), (d / "one.gguf").string(), "Q8_0", "1"});
    EXPECT_EQ(one.rc, 0) << one.err;
    EXPECT_EQ(slurp(d / "many.gguf"), slurp(d / "one.gguf"));

    // Words after THREADS, and a TYPE missing after OUT.
    const auto extra = quantize({in.string(), out.string(), "Q8_0", "2", "3", "--force"});
    EXPECT_EQ(extra.rc, 2) << extra.err;
    EXPECT_NE(extra.err.find("unexpected '3' after THREADS"), std::string::npos) << extra.err;
    const auto no_type = quantize({in.string(), (d / "x.gguf").string()});
    EXPECT_EQ(no_type.rc, 2) << no_type.err;
    EXPECT_NE(no_type.err.find("TYPE is missing"), std::string::npos) << no_type.err;
}

// --override-kv by edit's rules: no split.* key (a single file with split.count 3 is a part whose
// other parts do not exist: minfer info refuses it), and a key llama.cpp reads keeps its type unless
// --allow-type-change.
TEST(CliQuantize, OverrideKvFollowsEditsRules) {
    const fs::path d = fresh_dir("kv_rules");
    const fs::path out = d / "out.gguf";
    const auto split = quantize({model().string(), out.string(), "Q8_0", "--override-kv", "split.count=int:3"});
    EXPECT_EQ(split.rc, 2) << split.err;
    EXPECT_NE(split.err.find("Error: --override-kv 'split.count': the split.* keys"), std::string::npos) << split.err;
    const auto typed = quantize({model().string(), out.string(), "Q8_0", "--override-kv", "llama.context_length=float:64"});
    EXPECT_EQ(typed.rc, 2) << typed.err;
    EXPECT_NE(typed.err.find("llama.cpp reads llama.context_length as u32"), std::string::npos) << typed.err;
    EXPECT_EQ(listing(d), std::set<std::string>{});
    const auto fits = quantize({model().string(), out.string(), "Q8_0", "--override-kv", "llama.context_length=int:64"});
    EXPECT_EQ(fits.rc, 0) << fits.err;
    const auto forced = quantize({model().string(), out.string(), "Q8_0", "--override-kv", "llama.context_length=float:64",
                                  "--allow-type-change", "--force"});
    EXPECT_EQ(forced.rc, 0) << forced.err;
    EXPECT_NE(forced.err.find("Warning: llama.context_length becomes f32"), std::string::npos) << forced.err;
    EXPECT_EQ(run({"info", out.string()}).rc, 0);
}

// An --imatrix that is a directory is an imatrix that cannot be read (exit 3), not an output clash;
// a type that needs an imatrix says so once, and what to do depends on whether one was given.
TEST(CliQuantize, ImatrixMessagesSayTheRightThing) {
    const fs::path d = fresh_dir("imatrix_messages");
    const auto dir = quantize({model().string(), (d / "o.gguf").string(), "Q8_0", "--imatrix", d.string()});
    EXPECT_EQ(dir.rc, 3) << dir.err;
    EXPECT_EQ(dir.err.find("is the --imatrix file"), std::string::npos) << dir.err;
    EXPECT_NE(dir.err.find(d.string()), std::string::npos) << dir.err;

    const auto none = quantize({model().string(), (d / "o.gguf").string(), "IQ2_XXS"});
    EXPECT_EQ(none.rc, 1) << none.err;
    EXPECT_NE(none.err.find("give one with --imatrix FILE"), std::string::npos) << none.err;
    const auto count = [](const std::string& s, const std::string& w) {
        std::size_t n = 0;
        for (std::size_t at = s.find(w); at != std::string::npos; at = s.find(w, at + 1)) ++n;
        return n;
    };
    EXPECT_EQ(count(none.err, "needs importance weights"), 1u) << none.err;
    EXPECT_EQ(count(none.err, "imatrix"), 2u) << none.err;  // "(an imatrix)" and "--imatrix FILE"
    // An imatrix without the tensor's entry: not "give one".
    const fs::path dat = d / "other-model.dat";
    write_dat(dat, {"blk.9.attn_q.weight"}, 256);
    const auto other = quantize({model().string(), (d / "o.gguf").string(), "IQ2_XXS", "--imatrix", dat.string()});
    EXPECT_EQ(other.rc, 1) << other.err;
    EXPECT_EQ(other.err.find("give one with --imatrix"), std::string::npos) << other.err;
    EXPECT_NE(other.err.find("has no entry for this tensor"), std::string::npos) << other.err;
    // A type that does not need one, with an imatrix of another model: one summary, not a warning per tensor.
    const auto summary = quantize({model().string(), (d / "o.gguf").string(), "Q4_K_M", "--imatrix", dat.string()});
    EXPECT_EQ(summary.rc, 0) << summary.err;
    EXPECT_EQ(count(summary.err, "Warning: "), 1u) << summary.err;
    EXPECT_NE(summary.err.find("has an entry for none of the"), std::string::npos) << summary.err;
}

// A tensor with a dimension of 0 holds no value. Planned as kept (ggml counts [256, 0] as 1-D), it is
// copied with its own shape (ggml's count would have written [256]: a tensor of 256 values the file
// does not hold, refused as a "truncated download"). Planned for conversion ([256, 0, 4]), it is
// refused before anything is written, naming the tensor and the way out.
TEST(CliQuantize, AZeroRowTensorIsKeptOrRefusedAboutTheTensor) {
    const fs::path d = fresh_dir("zero_rows");
    const fs::path in = d / "in.gguf", in3 = d / "in3.gguf";
    auto write = [](const fs::path& p, std::span<const std::int64_t> empty_ne) {
        gguf::writer w;
        w.set_string("general.architecture", "llama");
        w.set_u32("llama.block_count", 1);
        const std::array<std::int64_t, 2> full{256, 4};
        w.add_tensor("blk.0.ffn_up_exps.weight", gguf::tensor_type::f32, empty_ne, std::vector<std::byte>{});
        w.add_tensor("blk.0.attn_k.weight", gguf::tensor_type::f32, full, random_f32(1024, 7));
        must_write(w, p);
    };
    const std::array<std::int64_t, 2> two{256, 0};
    const std::array<std::int64_t, 3> three{256, 0, 4};
    write(in, two);
    write(in3, three);

    const auto kept = quantize({in.string(), (d / "out.gguf").string(), "Q8_0"});
    ASSERT_EQ(kept.rc, 0) << kept.err;
    const gguf::model m = open_ok(d / "out.gguf");
    EXPECT_EQ(m.find_tensor("blk.0.ffn_up_exps.weight")->info->n_dims, 2u);
    EXPECT_EQ(m.find_tensor("blk.0.ffn_up_exps.weight")->info->ne[1], 0);
    EXPECT_EQ(m.find_tensor("blk.0.attn_k.weight")->info->type, gguf::tensor_type::q8_0);
    EXPECT_EQ(run({"verify", (d / "out.gguf").string()}).rc, 0);

    const auto refused = quantize({in3.string(), (d / "out3.gguf").string(), "Q8_0"});
    EXPECT_EQ(refused.rc, 1) << refused.err;
    EXPECT_NE(refused.err.find("tensor 'blk.0.ffn_up_exps.weight' has invalid number of elements: 0 in dimension 1: "
                               "the tensor has no values"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.err.find("truncated download"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(d / "out3.gguf"));
}

// --force over a split output whose part 1 is a link: the link stays and names the new part (as
// `minfer split --force` and cp), and the set opens whole.
TEST(CliQuantize, ForceOverALinkedSplitPartKeepsTheLink) {
    const fs::path d = fresh_dir("linked_part");
    fs::create_directories(d / "store");
    const auto first = quantize({model().string(), (d / "store" / "s.gguf").string(), "Q8_0", "--split-max-tensors", "8"});
    ASSERT_EQ(first.rc, 0) << first.err;
    const std::vector<std::string> names{"s-00001-of-00003.gguf", "s-00002-of-00003.gguf", "s-00003-of-00003.gguf"};
    fs::create_symlink(d / "store" / names[0], d / names[0]);
    fs::copy_file(d / "store" / names[1], d / names[1]);
    fs::copy_file(d / "store" / names[2], d / names[2]);
    const auto again = quantize({model().string(), (d / "s.gguf").string(), "Q4_0", "--split-max-tensors", "8", "--force"});
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_TRUE(fs::is_symlink(d / names[0]));
    EXPECT_EQ(fs::read_symlink(d / names[0]), d / "store" / names[0]);
    const gguf::model m = open_ok(d / names[0]);
    EXPECT_EQ(m.parts().size(), 3u);
    EXPECT_EQ(m.find_tensor("blk.0.attn_q.weight")->info->type, gguf::tensor_type::q4_0);
    EXPECT_EQ(run({"verify", (d / names[0]).string()}).rc, 0);
}

}  // namespace
}  // namespace minfer_cli_test
