// toolbox::quantize on small models this test writes with gguf::writer: each output opens, each
// tensor has the plan's type, a converted tensor's bytes are quant::quantize_rows of the values the
// test generated (computed here whole, independent of the streaming), a copied tensor is unchanged,
// the metadata is in llama_model_quantize's order; dry-run sizes equal the written sizes for one
// file, keep_split and split limits; every refusal, each with the smallest input that trips it; and
// a failing write leaves nothing behind. Byte identity with llama-quantize itself:
// tests/toolbox/test_quantize_ref.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gguf_bytes.hpp"
#include "minfer/gguf/model.hpp"
#include "minfer/gguf/split.hpp"
#include "minfer/gguf_write/output_path.hpp"
#include "minfer/gguf_write/split_plan.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/quant/dequantize.hpp"
#include "minfer/quant/quantize.hpp"
#include "minfer/toolbox/quantize.hpp"
#include "minfer/toolbox/split_write.hpp"
#include "minfer/gguf_write/errors.hpp"
#include "minfer/quant/errors.hpp"
#include "quantize_internal.hpp"

namespace {

using namespace minfer::test;
namespace q = minfer::quant;
namespace tb = minfer::toolbox;
using gg::errc;
using tt = gg::tensor_type;
namespace fs = std::filesystem;

// ---- inputs -------------------------------------------------------------------------------------

// A tensor of the input: its values (what a quantizer sees) and its bytes in the file.
struct tensor_spec {
    std::string name;
    tt type = tt::f32;
    std::vector<std::int64_t> ne;
    std::vector<float> values;
    bytes data;
};

std::int64_t count_of(const std::vector<std::int64_t>& ne) {
    std::int64_t n = 1;
    for (auto x : ne) n *= x;
    return n;
}

// f32 values in [-1, 1).
tensor_spec f32_tensor(std::string name, std::vector<std::int64_t> ne, std::uint32_t seed) {
    tensor_spec t{std::move(name), tt::f32, std::move(ne), {}, {}};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    t.values.resize(static_cast<std::size_t>(count_of(t.ne)));
    for (float& v : t.values) v = d(rng);
    const auto b = std::as_bytes(std::span<const float>(t.values));
    t.data.assign(b.begin(), b.end());
    return t;
}

// f16 values built from their bits (normal numbers of magnitude 1/8 .. 4), so the f32 values are
// known exactly without any converter: (-1)^s * 2^(e-15) * (1 + m/1024).
tensor_spec f16_tensor(std::string name, std::vector<std::int64_t> ne, std::uint32_t seed) {
    tensor_spec t{std::move(name), tt::f16, std::move(ne), {}, {}};
    std::mt19937 rng(seed);
    const auto n = static_cast<std::size_t>(count_of(t.ne));
    t.values.resize(n);
    t.data.resize(n * 2);
    for (std::size_t i = 0; i < n; ++i) {
        const auto s = static_cast<std::uint32_t>(rng() & 1u), e = static_cast<std::uint32_t>(12 + rng() % 5),
                   m = static_cast<std::uint32_t>(rng() & 1023u);
        const auto bits = static_cast<std::uint16_t>(s << 15 | e << 10 | m);
        std::memcpy(t.data.data() + 2 * i, &bits, 2);
        t.values[i] = (s ? -1.0f : 1.0f) * std::ldexp(1.0f + static_cast<float>(m) / 1024.0f, static_cast<int>(e) - 15);
    }
    return t;
}

// A tensor already quantized to `type` (its values are what dequantizing the bytes gives).
tensor_spec quantized_tensor(std::string name, tt type, std::vector<std::int64_t> ne, std::uint32_t seed) {
    tensor_spec f = f32_tensor(std::move(name), std::move(ne), seed);
    tensor_spec t{f.name, type, f.ne, {}, {}};
    t.data.resize(q::bytes_for(type, f.values.size()));
    EXPECT_TRUE(q::quantize_rows(type, f.values, f.ne[0], {}, t.data).has_value());
    t.values.resize(f.values.size());
    EXPECT_TRUE(q::dequantize(type, t.data, t.values).has_value());
    return t;
}

// The keys every test model has, in this order; split.no / split.count (a set of one) must go.
void put_keys(gg::writer& w, std::uint32_t n_expert = 0) {
    w.set_string("general.architecture", "llama");
    w.set_u32("general.quantization_version", 2);
    w.set_u32("general.file_type", 1);
    w.set_string("general.name", "tiny");
    w.set_u32("llama.block_count", 2);
    w.set_u32("llama.attention.head_count", 2);
    w.set_u32("llama.attention.head_count_kv", 2);
    if (n_expert > 0) w.set_u32("llama.expert_count", n_expert);
    w.set_u16("split.no", 0);
    w.set_u16("split.count", 1);
    w.set_string("tokenizer.ggml.model", "gpt2");
}
const std::vector<std::string> base_keys = {"general.architecture", "general.name", "llama.block_count",
                                            "llama.attention.head_count", "llama.attention.head_count_kv",
                                            "tokenizer.ggml.model"};

void write_model(const fs::path& p, const std::vector<tensor_spec>& ts, std::uint32_t n_expert = 0) {
    gg::writer w;
    put_keys(w, n_expert);
    for (const auto& t : ts) w.add_tensor(t.name, t.type, t.ne, t.data);
    auto r = w.write(p);
    ASSERT_TRUE(r.has_value()) << r.error().message();
}

// Two layers of a llama: quantizable matrices in f32 and f16, 1-D norms (kept), ne0 = 256.
std::vector<tensor_spec> dense_model() {
    std::vector<tensor_spec> ts;
    ts.push_back(f32_tensor("token_embd.weight", {256, 16}, 1));
    for (std::uint32_t l = 0; l < 2; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        ts.push_back(f32_tensor(b + "attn_norm.weight", {256}, 10 + l));
        ts.push_back(f16_tensor(b + "attn_q.weight", {256, 8}, 20 + l));
        ts.push_back(f16_tensor(b + "attn_k.weight", {256, 8}, 30 + l));
        ts.push_back(f32_tensor(b + "attn_v.weight", {256, 8}, 40 + l));
        ts.push_back(f32_tensor(b + "ffn_down.weight", {256, 4}, 50 + l));
    }
    ts.push_back(f32_tensor("output_norm.weight", {256}, 2));
    ts.push_back(f32_tensor("output.weight", {256, 16}, 3));
    return ts;
}

const tensor_spec& spec_of(const std::vector<tensor_spec>& ts, std::string_view name) {
    for (const auto& t : ts)
        if (t.name == name) return t;
    throw std::runtime_error("no tensor " + std::string(name));
}

// quantize_rows of a tensor's values, matrix by matrix with its importance slice: what the output must hold.
bytes expected_bytes(const tensor_spec& t, tt to, const std::vector<float>& importance = {}) {
    const std::int64_t ne0 = t.ne[0], n_mat = t.ne.size() > 2 ? t.ne[2] : 1;
    const std::size_t per_mat = t.values.size() / static_cast<std::size_t>(n_mat);
    const std::uint64_t out_mat = q::bytes_for(to, per_mat) ? q::bytes_for(to, per_mat) : 0;
    bytes out;
    for (std::int64_t i = 0; i < n_mat; ++i) {
        std::span<const float> src(t.values.data() + static_cast<std::size_t>(i) * per_mat, per_mat);
        std::span<const float> imp;
        if (!importance.empty()) imp = std::span<const float>(importance).subspan(static_cast<std::size_t>(i * ne0), static_cast<std::size_t>(ne0));
        bytes m(static_cast<std::size_t>(out_mat));
        auto r = q::quantize_rows(to, src, ne0, imp, m);
        EXPECT_TRUE(r.has_value()) << r.error().message();
        out.insert(out.end(), m.begin(), m.end());
    }
    return out;
}

tb::quantize_request request(const fs::path& in, const fs::path& out, std::string_view type) {
    tb::quantize_request rq;
    rq.input = in;
    rq.output = out;
    rq.type = *q::parse_file_type(type);
    rq.threads = 1;
    return rq;
}

std::vector<std::string> keys_of(const gg::model& m) {
    std::vector<std::string> k;
    for (const gg::kv& e : m.metadata().metadata()) k.emplace_back(e.key);
    return k;
}

bytes data_of(const gg::model& m, std::string_view name) {
    const gg::tensor_ref* r = m.find_tensor(name);
    if (r == nullptr) return {};
    auto s = m.tensor_data(*r);
    return bytes(s.begin(), s.end());
}

// Every tensor of `out` against the plan and the input: type, shape, bytes.
void expect_tensors(const gg::model& out, const tb::quantize_report& rep, const std::vector<tensor_spec>& ts,
                    const std::vector<float>* imatrix_of_moe = nullptr) {
    ASSERT_EQ(out.tensors().size(), rep.plan.tensors.size());
    for (const q::tensor_choice& c : rep.plan.tensors) {
        SCOPED_TRACE(c.name);
        const gg::tensor_ref* r = out.find_tensor(c.name);
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(r->info->type, c.to);
        const tensor_spec& in = spec_of(ts, c.name);
        std::uint32_t dims = 1;
        for (std::uint32_t i = 0; i < in.ne.size(); ++i) {
            EXPECT_EQ(r->info->ne[i], in.ne[i]);
            if (in.ne[i] > 1) dims = i + 1;
        }
        EXPECT_EQ(r->info->n_dims, dims);
        if (c.converted) {
            const bool moe = imatrix_of_moe != nullptr && c.name.find("_exps") != std::string::npos;
            EXPECT_TRUE(data_of(out, c.name) == expected_bytes(in, c.to, moe ? *imatrix_of_moe : std::vector<float>{}));
        } else {
            EXPECT_EQ(c.to, in.type);
            EXPECT_TRUE(data_of(out, c.name) == in.data);
        }
    }
}

gg::model open_ok(const fs::path& p) {
    auto m = gg::model::open(p);
    EXPECT_TRUE(m.has_value()) << (m ? std::string() : m.error().message());
    return m ? std::move(*m) : gg::model{};
}

std::uint32_t u32_of(const gg::model& m, std::string_view key) {
    auto v = m.get<std::uint32_t>(key);
    EXPECT_TRUE(v.has_value()) << key;
    return v ? *v : 0xFFFFFFFFu;
}

std::vector<std::string> files_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// ---- one file ------------------------------------------------------------------------------------

TEST(QuantizeModel, Q4KMOneFileTypesBytesAndMetadataOrder) {
    temp_dir d;
    const auto ts = dense_model();
    write_model(d / "in.gguf", ts);
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q4_K_M");
    std::uint64_t last_done = 0, last_total = 0;
    tb::quantize_events ev;
    ev.progress = [&](std::uint64_t done, std::uint64_t total) {
        EXPECT_GE(done, last_done);
        last_done = done;
        last_total = total;
    };
    auto rep = tb::quantize(rq, ev);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    EXPECT_TRUE(rep->written);
    ASSERT_EQ(rep->outputs.size(), 1u);
    EXPECT_EQ(rep->outputs[0].path, d / "out.gguf");
    EXPECT_EQ(rep->outputs[0].file_size, fs::file_size(d / "out.gguf"));
    EXPECT_EQ(rep->outputs[0].tensor_count, ts.size());
    EXPECT_EQ(last_done, last_total);
    EXPECT_EQ(last_total, fs::file_size(d / "out.gguf"));

    gg::model out = open_ok(d / "out.gguf");
    expect_tensors(out, *rep, ts);
    // Tensors in the plan's order (llama's weights map: names without a layer first, then by layer).
    ASSERT_EQ(out.tensors().size(), rep->plan.tensors.size());
    for (std::size_t i = 0; i < out.tensors().size(); ++i) EXPECT_EQ(out.tensors()[i].info->name, rep->plan.tensors[i].name);
    // Some tensors were converted, some copied (the norms).
    std::size_t converted = 0;
    for (const auto& c : rep->plan.tensors) converted += c.converted;
    EXPECT_GT(converted, 0u);
    EXPECT_LT(converted, ts.size());

    std::vector<std::string> want = base_keys;
    want.push_back("general.quantization_version");
    want.push_back("general.file_type");
    EXPECT_EQ(keys_of(out), want);
    EXPECT_EQ(u32_of(out, "general.file_type"), 15u);
    EXPECT_EQ(u32_of(out, "general.quantization_version"), 2u);

    // Sizes of the report.
    std::uint64_t in_bytes = 0, out_bytes = 0, n = 0;
    for (const auto& t : ts) {
        in_bytes += t.data.size();
        n += t.values.size();
    }
    for (const gg::tensor_ref& t : out.tensors()) out_bytes += t.info->n_bytes;
    EXPECT_EQ(rep->input_tensor_bytes, in_bytes);
    EXPECT_EQ(rep->output_tensor_bytes, out_bytes);
    EXPECT_EQ(rep->n_elements, n);
}

TEST(QuantizeModel, OverridesAfterTheQuantizationKeysInOrder) {
    temp_dir d;
    const auto ts = dense_model();
    write_model(d / "in.gguf", ts);
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q8_0");
    for (const char* text : {"general.name=str:renamed", "x.int=int:-5", "x.float=float:0.5", "x.bool=bool:true"}) {
        auto o = tb::parse_kv_override(text);
        ASSERT_TRUE(o.has_value()) << text;
        rq.kv_overrides.push_back(*o);
    }
    auto rep = tb::quantize(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    gg::model out = open_ok(d / "out.gguf");
    const std::vector<std::string> want = {"general.architecture", "llama.block_count", "llama.attention.head_count",
                                           "llama.attention.head_count_kv", "tokenizer.ggml.model",
                                           "general.quantization_version", "general.file_type", "general.name",
                                           "x.int", "x.float", "x.bool"};
    EXPECT_EQ(keys_of(out), want);
    EXPECT_EQ(*out.get<std::string_view>("general.name"), "renamed");
    EXPECT_EQ(u32_of(out, "x.int"), 5u);  // int overrides are written as u32 of the absolute value
    EXPECT_EQ(*out.get<float>("x.float"), 0.5f);
    EXPECT_EQ(*out.get<bool>("x.bool"), true);
    EXPECT_EQ(u32_of(out, "general.file_type"), 7u);
    expect_tensors(out, *rep, ts);
}

TEST(QuantizeModel, ParseKvOverride) {
    auto i = tb::parse_kv_override("a.b=int:-42");
    ASSERT_TRUE(i.has_value());
    EXPECT_EQ(i->key, "a.b");
    EXPECT_EQ(i->type, tb::kv_override::kind::int_);
    EXPECT_EQ(i->int_value, -42);
    auto f = tb::parse_kv_override("k=float:1.25");
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->float_value, 1.25);
    auto s = tb::parse_kv_override("k=str:a=b:c");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->str_value, "a=b:c");
    auto b = tb::parse_kv_override("k=bool:false");
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->bool_value, false);
    for (const std::string& bad : std::vector<std::string>{"noequals", "=int:1", "k=int:", "k=int:5x", "k=float:x", "k=bool:yes", "k=u32:1",
                                  "k=str:" + std::string(128, 'a'), std::string(128, 'k') + "=int:1"}) {
        auto r = tb::parse_kv_override(bad);
        ASSERT_FALSE(r.has_value()) << bad;
        EXPECT_EQ(r.error().code, errc::bad_value_text) << bad;
    }
    EXPECT_TRUE(tb::parse_kv_override("k=str:" + std::string(127, 'a')).has_value());
    // One leading '+' is a sign; a second sign after it is not a number (atol reads "+-5" as 0):
    // refused, not read as -5 (found by fuzz_quantize_args).
    const auto plus_int = tb::parse_kv_override("k=int:+5");
    ASSERT_TRUE(plus_int.has_value());
    EXPECT_EQ(plus_int->int_value, 5);
    const auto plus_float = tb::parse_kv_override("k=float:+0.5");
    ASSERT_TRUE(plus_float.has_value());
    EXPECT_EQ(plus_float->float_value, 0.5);
    for (const char* bad : {"k=int:+-5", "k=int:++5", "k=float:+-0.5", "k=float:++1", "k=float:+-inf"}) {
        auto r = tb::parse_kv_override(bad);
        EXPECT_FALSE(r.has_value()) << bad << " read as " << (r ? r->int_value : 0) << " / " << (r ? r->float_value : 0);
    }
}

TEST(QuantizeModel, SameBytesWithOneAndTwoThreads) {
    temp_dir d;
    write_model(d / "in.gguf", dense_model());
    auto rq = request(d / "in.gguf", d / "t1.gguf", "Q5_K_M");
    ASSERT_TRUE(tb::quantize(rq).has_value());
    rq.output = d / "t2.gguf";
    rq.threads = 2;
    ASSERT_TRUE(tb::quantize(rq).has_value());
    EXPECT_TRUE(read_file(d / "t1.gguf") == read_file(d / "t2.gguf"));
}

TEST(QuantizeModel, DryRunSizesEqualWrittenSizesAndCreateNothing) {
    temp_dir d;
    write_model(d / "in.gguf", dense_model());
    for (const char* type : {"Q4_0", "Q6_K", "IQ4_XS", "F16", "COPY"}) {
        SCOPED_TRACE(type);
        auto rq = request(d / "in.gguf", d / "out.gguf", type);
        rq.overwrite = true;
        rq.dry_run = true;
        auto dry = tb::quantize(rq);
        ASSERT_TRUE(dry.has_value()) << dry.error().message();
        EXPECT_FALSE(dry->written);
        EXPECT_EQ(files_in(d.path()), std::vector<std::string>{"in.gguf"});
        rq.dry_run = false;
        rq.output = d / "real.gguf";
        auto real = tb::quantize(rq);
        ASSERT_TRUE(real.has_value()) << real.error().message();
        ASSERT_EQ(dry->outputs.size(), 1u);
        EXPECT_EQ(dry->outputs[0].file_size, fs::file_size(d / "real.gguf"));
        EXPECT_EQ(dry->outputs[0].file_size, real->outputs[0].file_size);
        fs::remove(d / "real.gguf");
    }
}

// ---- COPY ------------------------------------------------------------------------------------------

TEST(QuantizeModel, CopyKeepsEveryTensorAndTheInputFileType) {
    temp_dir d;
    const auto ts = dense_model();
    write_model(d / "in.gguf", ts);
    auto rep = tb::quantize(request(d / "in.gguf", d / "out.gguf", "COPY"));
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    gg::model out = open_ok(d / "out.gguf");
    for (const auto& c : rep->plan.tensors) EXPECT_FALSE(c.converted) << c.name;
    expect_tensors(out, *rep, ts);
    EXPECT_EQ(u32_of(out, "general.file_type"), 1u);  // the input's general.file_type
}

TEST(QuantizeModel, CopyGuessesTheFileTypeAsLlamaLoaderDoes) {
    temp_dir d;
    // No general.file_type: the type most tensors have (f16: 3 of 5), with LLAMA_FTYPE_GUESSED (1024).
    gg::writer w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 1);
    std::vector<tensor_spec> ts = {f16_tensor("a.weight", {256, 2}, 1), f32_tensor("b.weight", {256}, 2),
                                   f16_tensor("c.weight", {256, 2}, 3), f32_tensor("d.weight", {256}, 4),
                                   f16_tensor("e.weight", {256, 2}, 5)};
    for (const auto& t : ts) w.add_tensor(t.name, t.type, t.ne, t.data);
    ASSERT_TRUE(w.write(d / "in.gguf").has_value());
    ASSERT_TRUE(tb::quantize(request(d / "in.gguf", d / "out.gguf", "COPY")).has_value());
    gg::model out = open_ok(d / "out.gguf");
    EXPECT_EQ(u32_of(out, "general.file_type"), 1u | 1024u);
}

// ---- experts and importance matrices ------------------------------------------------------------

// llama-imatrix's legacy .dat: i32 n; per entry i32 len, name, i32 ncall, i32 nval, sums; trailer
// i32 chunks, i32 dataset length, dataset. ncall 1: the weights are the sums.
bytes imatrix_dat(const std::vector<std::pair<std::string, std::vector<float>>>& entries, std::int32_t chunks,
                  std::string_view dataset) {
    bytes b;
    auto put = [&b](const void* p, std::size_t n) {
        const auto* c = static_cast<const std::byte*>(p);
        b.insert(b.end(), c, c + n);
    };
    auto i32 = [&put](std::int32_t v) { put(&v, 4); };
    i32(static_cast<std::int32_t>(entries.size()));
    for (const auto& [name, sums] : entries) {
        i32(static_cast<std::int32_t>(name.size()));
        put(name.data(), name.size());
        i32(1);
        i32(static_cast<std::int32_t>(sums.size()));
        put(sums.data(), sums.size() * 4);
    }
    i32(chunks);
    i32(static_cast<std::int32_t>(dataset.size()));
    put(dataset.data(), dataset.size());
    return b;
}

std::vector<float> positive(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(0.1f, 4.0f);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

std::vector<tensor_spec> moe_model() {
    std::vector<tensor_spec> ts;
    ts.push_back(f32_tensor("token_embd.weight", {256, 8}, 1));
    for (std::uint32_t l = 0; l < 2; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        ts.push_back(f32_tensor(b + "attn_q.weight", {256, 4}, 20 + l));
        ts.push_back(f32_tensor(b + "ffn_down_exps.weight", {256, 4, 2}, 30 + l));  // 2 experts
        ts.push_back(f32_tensor(b + "ffn_gate_inp.weight", {256, 2}, 40 + l));
    }
    ts.push_back(f32_tensor("output.weight", {256, 8}, 3));
    return ts;
}

TEST(QuantizeModel, ExpertsQuantizedMatrixByMatrixWithTheirImportanceAndImatrixKeys) {
    temp_dir d;
    const auto ts = moe_model();
    write_model(d / "in.gguf", ts, 2);
    const std::vector<float> exps = positive(512, 7);
    // token_embd's entry has the wrong size: llama-quantize lets it through without weights.
    write_file(d / "im.dat", imatrix_dat({{"blk.0.ffn_down_exps.weight", exps},
                                          {"blk.1.ffn_down_exps.weight", exps},
                                          {"token_embd.weight", positive(100, 8)}},
                                         7, "calib.txt"));
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q4_K_M");
    rq.imatrix = d / "im.dat";
    rq.kv_overrides.push_back(*tb::parse_kv_override("user.key=int:3"));
    auto rep = tb::quantize(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    EXPECT_EQ(rep->imatrix_entries, 3u);
    gg::model out = open_ok(d / "out.gguf");
    expect_tensors(out, *rep, ts, &exps);
    // The imatrix keys are overrides the tool appends after the user's.
    const auto keys = keys_of(out);
    const std::vector<std::string> tail(keys.end() - 7, keys.end());
    const std::vector<std::string> want = {"general.quantization_version", "general.file_type", "user.key",
                                           "quantize.imatrix.file", "quantize.imatrix.dataset",
                                           "quantize.imatrix.entries_count", "quantize.imatrix.chunks_count"};
    EXPECT_EQ(tail, want);
    EXPECT_EQ(*out.get<std::string_view>("quantize.imatrix.file"), (d / "im.dat").string());
    EXPECT_EQ(*out.get<std::string_view>("quantize.imatrix.dataset"), "calib.txt");
    EXPECT_EQ(u32_of(out, "quantize.imatrix.entries_count"), 3u);
    EXPECT_EQ(u32_of(out, "quantize.imatrix.chunks_count"), 7u);
    // Warnings: token_embd's mismatch, and the tensors without an entry.
    bool embd = false, missing = false;
    for (const auto& w : rep->warnings) {
        embd = embd || w.find("token_embd.weight") != std::string::npos;
        missing = missing || (w.find("no importance weights for ") != std::string::npos &&
                              w.find("blk.0.attn_q.weight") != std::string::npos);
    }
    EXPECT_TRUE(embd);
    EXPECT_TRUE(missing);
}

TEST(QuantizeModel, ImatrixEntryOfTheWrongSizeIsRefused) {
    temp_dir d;
    write_model(d / "in.gguf", {f32_tensor("blk.0.attn_q.weight", {256, 2}, 1)});
    write_file(d / "im.dat", imatrix_dat({{"blk.0.attn_q.weight", positive(128, 1)}}, 1, ""));
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q4_K_M");
    rq.imatrix = d / "im.dat";
    auto r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {minfer::quant::codes::imatrix_mismatch, gg::section::file, {}, 256, 128, "blk.0.attn_q.weight"}));
    EXPECT_FALSE(fs::exists(d / "out.gguf"));
}

TEST(QuantizeModel, ImportanceRequiredWithoutImatrixButDryRunWarns) {
    temp_dir d;
    write_model(d / "in.gguf", {f32_tensor("blk.0.attn_q.weight", {256, 2}, 1)});
    auto rq = request(d / "in.gguf", d / "out.gguf", "IQ2_XXS");
    auto r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {minfer::quant::codes::importance_required, gg::section::file, {}, {},
                                     static_cast<std::uint64_t>(tt::iq2_xxs), "blk.0.attn_q.weight"}));
    rq.dry_run = true;
    auto dry = tb::quantize(rq);
    ASSERT_TRUE(dry.has_value()) << dry.error().message();
    ASSERT_FALSE(dry->warnings.empty());
    EXPECT_NE(dry->warnings[0].find("importance"), std::string::npos);
    // An imatrix without this tensor's entry: refused too.
    write_file(d / "im.dat", imatrix_dat({{"other.weight", positive(256, 1)}}, 1, ""));
    rq.dry_run = false;
    rq.imatrix = d / "im.dat";
    r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {minfer::quant::codes::importance_required, gg::section::file, {}, {}, {}, "blk.0.attn_q.weight"}));
    EXPECT_FALSE(fs::exists(d / "out.gguf"));
}

// ---- requantizing ------------------------------------------------------------------------------

TEST(QuantizeModel, RequantizingNeedsAllowRequantize) {
    temp_dir d;
    const std::vector<tensor_spec> ts = {quantized_tensor("blk.0.attn_q.weight", tt::q8_0, {256, 2}, 1)};
    write_model(d / "in.gguf", ts);
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q4_0");
    auto r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {minfer::quant::codes::requantize_refused, gg::section::file, {}, {},
                                     static_cast<std::uint64_t>(tt::q8_0), "blk.0.attn_q.weight"}));
    rq.allow_requantize = true;
    auto rep = tb::quantize(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    ASSERT_EQ(rep->warnings.size(), 1u);
    EXPECT_NE(rep->warnings[0].find("requantizing blk.0.attn_q.weight from q8_0"), std::string::npos);
    gg::model out = open_ok(d / "out.gguf");
    expect_tensors(out, *rep, ts);
}

// ---- refusals ------------------------------------------------------------------------------------

TEST(QuantizeModel, FourDimensionalTensorIsRefused) {
    temp_dir d;
    write_model(d / "in.gguf", {f32_tensor("blk.0.attn_q.weight", {256, 1, 1, 2}, 1)});
    auto r = tb::quantize(request(d / "in.gguf", d / "out.gguf", "Q8_0"));
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {errc::bad_n_dims, gg::section::file, {}, 3, 4, "blk.0.attn_q.weight"}));
}

TEST(QuantizeModel, ANamedTypeThatDoesNotFitTheRowsIsRefusedBeforeWriting) {
    // The rules fall back when a row does not fit; --output-tensor-type is taken as given (llama.cpp
    // fails inside its quantizer): the tensor and the type are named, nothing is created.
    temp_dir d;
    write_model(d / "in.gguf", {f32_tensor("blk.0.attn_q.weight", {256, 4}, 1), f32_tensor("output.weight", {64, 16}, 2)});
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q8_0");
    rq.output_tensor_type = tt::q6_k;
    auto r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {errc::not_block_multiple, gg::section::file, {}, 256, 64, "output.weight"}))
        << r.error().message();
    EXPECT_NE(r.error().detail.find("--output-tensor-type"), std::string::npos) << r.error().detail;
    EXPECT_FALSE(fs::exists(d / "out.gguf"));
}

TEST(QuantizeModel, AnUnknownArchitectureWithoutBlockCountIsPlannedByItsNamedBlocks) {
    // Four blocks: use_more_bits(i, 4) gives ffn_down more bits on layers 2 and 3 only; a layer count
    // of 0 would give it to all four. The unknown architecture without block_count must be planned
    // as the llama model with block_count = 4.
    temp_dir d;
    std::vector<tensor_spec> ts;
    for (std::uint32_t l = 0; l < 4; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        ts.push_back(f32_tensor(b + "attn_v.weight", {256, 4}, 40 + l));
        ts.push_back(f32_tensor(b + "ffn_down.weight", {256, 4}, 50 + l));
    }
    auto write_as = [&](const fs::path& p, std::string_view arch, bool with_block_count) {
        gg::writer w;
        w.set_string("general.architecture", arch);
        if (with_block_count) w.set_u32(std::string(arch) + ".block_count", 4);
        for (const auto& t : ts) w.add_tensor(t.name, t.type, t.ne, t.data);
        auto r = w.write(p);
        ASSERT_TRUE(r.has_value()) << r.error().message();
    };
    write_as(d / "llama.gguf", "llama", true);
    write_as(d / "other.gguf", "someday-arch", false);
    auto known = tb::quantize(request(d / "llama.gguf", d / "a.gguf", "Q4_K_M"));
    auto unknown = tb::quantize(request(d / "other.gguf", d / "b.gguf", "Q4_K_M"));
    ASSERT_TRUE(known.has_value()) << known.error().message();
    ASSERT_TRUE(unknown.has_value()) << unknown.error().message();
    ASSERT_EQ(known->plan.tensors.size(), unknown->plan.tensors.size());
    int more_bits = 0;
    for (std::size_t i = 0; i < known->plan.tensors.size(); ++i) {
        SCOPED_TRACE(known->plan.tensors[i].name);
        EXPECT_EQ(known->plan.tensors[i].to, unknown->plan.tensors[i].to);
        if (known->plan.tensors[i].name.find("ffn_down") != std::string::npos && known->plan.tensors[i].to == tt::q6_k)
            ++more_bits;
    }
    EXPECT_EQ(more_bits, 2);  // layers 2 and 3, not all four
}

TEST(QuantizeModel, KeepSplitWithSplitLimitsIsAUsageError) {
    temp_dir d;
    auto rq = request(d / "missing.gguf", d / "out.gguf", "Q8_0");
    rq.keep_split = true;
    rq.split_max_tensors = 2;
    auto r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::bad_value_text);
    rq.keep_split = false;
    rq.split_max_tensors = 0;
    r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::bad_value_text);
}

TEST(QuantizeModel, OutputsThatMustNotBeWritten) {
    temp_dir d;
    write_model(d / "in.gguf", {f32_tensor("blk.0.attn_q.weight", {256, 2}, 1)});
    const bytes before = read_file(d / "in.gguf");
    // The input itself, even with overwrite.
    auto rq = request(d / "in.gguf", d / "in.gguf", "Q8_0");
    rq.overwrite = true;
    auto r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::io_error);
    EXPECT_FALSE(gg::is_output_exists(r.error()));  // --force would not help
    EXPECT_TRUE(read_file(d / "in.gguf") == before);
    // An existing file without overwrite: EEXIST; with it, replaced.
    write_file(d / "out.gguf", bytes(10));
    rq.output = d / "out.gguf";
    rq.overwrite = false;
    r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(gg::is_output_exists(r.error())) << describe(r.error());
    EXPECT_EQ(fs::file_size(d / "out.gguf"), 10u);
    rq.overwrite = true;
    ASSERT_TRUE(tb::quantize(rq).has_value());
    EXPECT_GT(fs::file_size(d / "out.gguf"), 10u);
    // A directory, even with overwrite.
    fs::create_directory(d / "dir.gguf");
    rq.output = d / "dir.gguf";
    r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, minfer::gguf::write_codes::output_not_regular);
}

TEST(QuantizeModel, NonFiniteWeightLeavesNoOutput) {
    temp_dir d;
    auto ts = dense_model();
    // Plant the NaN in the last converted tensor of the plan (the output's order).
    write_model(d / "probe.gguf", ts);
    auto probe = tb::quantize([&] {
        auto rq = request(d / "probe.gguf", d / "x.gguf", "Q8_0");
        rq.dry_run = true;
        return rq;
    }());
    ASSERT_TRUE(probe.has_value());
    std::string last;
    for (const auto& c : probe->plan.tensors)
        if (c.converted) last = c.name;
    ASSERT_FALSE(last.empty());
    for (auto& t : ts) {
        if (t.name != last) continue;
        ASSERT_EQ(t.type, tt::f32);
        t.values[300] = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(t.data.data() + 300 * 4, &t.values[300], 4);
    }
    write_model(d / "in.gguf", ts);
    auto r = tb::quantize(request(d / "in.gguf", d / "out.gguf", "Q8_0"));
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {minfer::quant::codes::non_finite_weight, gg::section::file, {}, {}, {}, last, 300}));
    EXPECT_EQ(files_in(d.path()), (std::vector<std::string>{"in.gguf", "probe.gguf"}));

    // A split run: parts 2..N are written before part 1 holds the NaN; all are removed again.
    auto rq = request(d / "in.gguf", d / "set.gguf", "Q8_0");
    rq.split_max_tensors = 1;
    // Move the NaN to the first tensor of the plan (part 1, written last).
    auto ts2 = dense_model();
    const std::string first = probe->plan.tensors.front().name;
    for (auto& t : ts2) {
        if (t.name != first) continue;
        t.values[5] = std::numeric_limits<float>::infinity();
        std::memcpy(t.data.data() + 5 * 4, &t.values[5], 4);
    }
    ASSERT_TRUE(probe->plan.tensors.front().converted);
    write_model(d / "in.gguf", ts2);
    r = tb::quantize(rq);
    ASSERT_FALSE(r.has_value());
    EXPECT_TRUE(error_is(r.error(), {minfer::quant::codes::non_finite_weight, gg::section::file, {}, {}, {}, first, 5}));
    EXPECT_EQ(files_in(d.path()), (std::vector<std::string>{"in.gguf", "probe.gguf"}));
}

// ---- split outputs ------------------------------------------------------------------------------

TEST(QuantizeModel, KeepSplitWritesOnePartPerInputPart) {
    temp_dir d;
    const auto ts = dense_model();
    write_model(d / "whole.gguf", ts);
    {
        auto m = gg::model::open(d / "whole.gguf");
        ASSERT_TRUE(m.has_value());
        gg::split_options so;
        so.max_tensors = 5;
        auto plan = gg::split_plan::make(*m, so);
        ASSERT_TRUE(plan.has_value());
        std::vector<std::string> targets;
        for (std::uint32_t i = 0; i < plan->part_count(); ++i) targets.push_back(plan->part_name((d / "in").string(), i));
        ASSERT_FALSE(tb::write_split(*m, *plan, targets, {}).has_value());
    }
    const fs::path in = d / "in-00001-of-00003.gguf";
    gg::model input = open_ok(in);
    auto rq = request(in, d / "out.gguf", "Q4_K_M");
    rq.keep_split = true;
    rq.dry_run = true;
    auto dry = tb::quantize(rq);
    ASSERT_TRUE(dry.has_value()) << dry.error().message();
    rq.dry_run = false;
    auto rep = tb::quantize(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    ASSERT_EQ(rep->outputs.size(), 3u);
    for (std::uint32_t i = 0; i < 3; ++i) {
        const fs::path p = d / gg::split_file_name("out", i, 3);
        EXPECT_EQ(rep->outputs[i].path, p);
        EXPECT_EQ(dry->outputs[i].file_size, fs::file_size(p));
        EXPECT_EQ(dry->outputs[i].tensor_count, input.parts()[i].view.tensors().size());
    }
    gg::model out = open_ok(d / "out-00001-of-00003.gguf");
    expect_tensors(out, *rep, ts);
    // The report's plan is in output order: the input's parts, by offset in each.
    ASSERT_EQ(out.tensors().size(), rep->plan.tensors.size());
    for (std::size_t i = 0; i < out.tensors().size(); ++i) EXPECT_EQ(out.tensors()[i].info->name, rep->plan.tensors[i].name);
    // Each output part holds its input part's tensors, sorted by offset.
    for (std::uint32_t i = 0; i < 3; ++i) {
        const auto in_t = input.parts()[i].view.tensors();
        const auto out_t = out.parts()[i].view.tensors();
        ASSERT_EQ(in_t.size(), out_t.size());
        for (std::size_t k = 0; k < in_t.size(); ++k) EXPECT_EQ(in_t[k].name, out_t[k].name);
    }
    // Part 1: the metadata, then the split keys in llama_model_quantize's order; later parts only those.
    std::vector<std::string> want = base_keys;
    for (const char* k : {"general.quantization_version", "general.file_type", "split.no", "split.count", "split.tensors.count"})
        want.emplace_back(k);
    EXPECT_EQ(keys_of(out), want);
    std::vector<std::string> later;
    for (const gg::kv& e : out.parts()[1].view.metadata()) later.emplace_back(e.key);
    EXPECT_EQ(later, (std::vector<std::string>{"split.no", "split.count", "split.tensors.count"}));
}

TEST(QuantizeModel, KeepSplitOfOneFileNamesOnePart) {
    temp_dir d;
    write_model(d / "in.gguf", dense_model());
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q8_0");
    rq.keep_split = true;
    auto rep = tb::quantize(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    EXPECT_EQ(files_in(d.path()), (std::vector<std::string>{"in.gguf", "out-00001-of-00001.gguf"}));
    gg::model out = open_ok(d / "out-00001-of-00001.gguf");
    EXPECT_EQ(out.find("split.count"), nullptr);  // one part: no split keys
}

TEST(QuantizeModel, SplitLimitsEachPartWithinTheLimit) {
    temp_dir d;
    const auto ts = dense_model();
    write_model(d / "in.gguf", ts);
    for (std::uint64_t max_bytes : {6000ull, 9000ull, 20000ull}) {
        SCOPED_TRACE(max_bytes);
        temp_dir o;
        auto rq = request(d / "in.gguf", o / "out.gguf", "Q8_0");
        rq.split_max_bytes = max_bytes;
        rq.dry_run = true;
        auto dry = tb::quantize(rq);
        ASSERT_TRUE(dry.has_value()) << dry.error().message();
        rq.dry_run = false;
        auto rep = tb::quantize(rq);
        ASSERT_TRUE(rep.has_value()) << rep.error().message();
        ASSERT_EQ(dry->outputs.size(), rep->outputs.size());
        const auto n = static_cast<std::uint32_t>(rep->outputs.size());
        EXPECT_GT(n, 1u);
        std::uint32_t tensors = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            const fs::path p = o / gg::split_file_name("out", i, n);
            EXPECT_EQ(rep->outputs[i].path, p);
            EXPECT_EQ(dry->outputs[i].file_size, fs::file_size(p));
            EXPECT_LE(fs::file_size(p), max_bytes);
            tensors += rep->outputs[i].tensor_count;
        }
        EXPECT_EQ(tensors, ts.size());
        gg::model out = open_ok(o / gg::split_file_name("out", 0, n));
        expect_tensors(out, *rep, ts);
        // The tensors in output order across the parts, the keys of gguf::split_plan on every part.
        for (std::size_t i = 0; i < out.tensors().size(); ++i) EXPECT_EQ(out.tensors()[i].info->name, rep->plan.tensors[i].name);
        std::vector<std::string> want = base_keys;
        for (const char* k : {"general.quantization_version", "general.file_type", "split.no", "split.tensors.count", "split.count"})
            want.emplace_back(k);
        EXPECT_EQ(keys_of(out), want);
        std::vector<std::string> later;
        for (const gg::kv& e : out.parts()[n - 1].view.metadata()) later.emplace_back(e.key);
        EXPECT_EQ(later, (std::vector<std::string>{"split.no", "split.tensors.count", "split.count"}));
    }
}

TEST(QuantizeModel, SplitLimitsKeepTheAlignmentOnEveryPart) {
    temp_dir d;
    const auto ts = dense_model();
    gg::writer w;
    put_keys(w);
    w.set_u32("general.alignment", 64);
    for (const auto& t : ts) w.add_tensor(t.name, t.type, t.ne, t.data);
    ASSERT_TRUE(w.write(d / "in.gguf").has_value());
    auto rq = request(d / "in.gguf", d / "out.gguf", "Q4_0");
    rq.split_max_tensors = 4;
    auto rep = tb::quantize(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    const auto n = static_cast<std::uint32_t>(rep->outputs.size());
    ASSERT_EQ(n, 4u);  // 13 tensors: 4 + 4 + 4 + 1
    gg::model out = open_ok(d / gg::split_file_name("out", 0, n));
    for (const gg::model_part& p : out.parts()) {
        EXPECT_EQ(p.view.alignment(), 64u);
        for (const auto& t : p.view.tensors()) EXPECT_EQ(t.offset % 64, 0u);
    }
    expect_tensors(out, *rep, ts);
}

TEST(QuantizeModel, OversizedTensorGetsItsOwnPartAndAWarning) {
    temp_dir d;
    const auto ts = dense_model();
    write_model(d / "in.gguf", ts);
    auto rq = request(d / "in.gguf", d / "out.gguf", "F16");
    rq.split_max_bytes = 1000;  // below every tensor's size
    auto rep = tb::quantize(rq);
    ASSERT_TRUE(rep.has_value()) << rep.error().message();
    EXPECT_EQ(rep->outputs.size(), ts.size());
    EXPECT_FALSE(rep->warnings.empty());
}

// ---- the streaming source itself ----------------------------------------------------------------

TEST(QuantizeModel, StreamingSourceAcrossBatchesAndOddChunks) {
    temp_dir d;
    const tensor_spec t = f16_tensor("blk.0.ffn_down_exps.weight", {256, 5, 3}, 9);
    write_model(d / "in.gguf", {t});
    gg::model m = open_ok(d / "in.gguf");
    const std::vector<float> imp = positive(768, 3);
    for (std::uint64_t batch_rows : {1u, 2u, 4u, 100u}) {
        SCOPED_TRACE(batch_rows);
        tb::quantize_detail::convert_job job;
        job.m = &m;
        job.t = m.tensors()[0];
        job.to = tt::q4_k;
        job.importance = imp;
        job.threads = 2;
        job.batch_values = batch_rows * 256;
        auto src = tb::quantize_detail::converted_source(job);
        ASSERT_TRUE(src.has_value());
        const bytes want = expected_bytes(t, tt::q4_k, imp);
        ASSERT_EQ(src->size(), want.size());
        bytes got(want.size());
        std::uint64_t off = 0;
        for (std::size_t chunk = 1; off < got.size(); chunk = chunk * 3 + 7) {  // 1, 10, 37, 118, … bytes
            const std::size_t n = std::min<std::size_t>(chunk, got.size() - off);
            auto r = src->fill()(off, std::span<std::byte>(got).subspan(off, n));
            ASSERT_TRUE(r.has_value()) << r.error().message();
            off += n;
        }
        EXPECT_TRUE(got == want);
    }
}

}  // namespace
