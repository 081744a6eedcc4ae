// The sample model as the library sees it: it opens, carries Qwen2's keys with the right types,
// holds all four tensor types, its weights decode to the regenerated source values, it is
// byte-for-byte reproducible, and its split form is the same model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "minfer/gguf/model.hpp"
#include "minfer/gguf/split.hpp"
#include "quant.hpp"
#include "sample_model.hpp"

namespace fs = std::filesystem;
namespace gg = minfer::gguf;
namespace ms = minfer::sample;

namespace {

class SampleModel : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("minfer-sample-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fs::path dir_;
};

std::vector<char> read_all(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

gg::model open_or_fail(const fs::path& p) {
    auto m = gg::model::open(p);
    EXPECT_TRUE(m.has_value()) << (m ? std::string() : m.error().message());
    if (!m) return {};
    return std::move(m).value();
}

// The kvs every sample file's first part must hold, with their types.
const std::vector<std::pair<std::string, gg::value_type>>& expected_keys() {
    using vt = gg::value_type;
    static const std::vector<std::pair<std::string, vt>> keys = {
        {"general.architecture", vt::string},
        {"general.type", vt::string},
        {"general.name", vt::string},
        {"general.size_label", vt::string},
        {"qwen2.block_count", vt::u32},
        {"qwen2.context_length", vt::u32},
        {"qwen2.embedding_length", vt::u32},
        {"qwen2.feed_forward_length", vt::u32},
        {"qwen2.attention.head_count", vt::u32},
        {"qwen2.attention.head_count_kv", vt::u32},
        {"qwen2.rope.freq_base", vt::f32},
        {"qwen2.attention.layer_norm_rms_epsilon", vt::f32},
        {"general.file_type", vt::u32},
        {"tokenizer.ggml.model", vt::string},
        {"tokenizer.ggml.pre", vt::string},
        {"tokenizer.ggml.tokens", vt::array},
        {"tokenizer.ggml.token_type", vt::array},
        {"tokenizer.ggml.merges", vt::array},
        {"tokenizer.ggml.eos_token_id", vt::u32},
        {"tokenizer.ggml.padding_token_id", vt::u32},
        {"tokenizer.ggml.bos_token_id", vt::u32},
        {"tokenizer.ggml.add_bos_token", vt::boolean},
        {"tokenizer.chat_template", vt::string},
        {"general.quantization_version", vt::u32},
    };
    return keys;
}

template <class T>
T get_or_fail(const gg::model& m, std::string_view key) {
    auto r = m.get<T>(key);
    EXPECT_TRUE(r.has_value()) << key << ": " << (r ? std::string() : r.error().message());
    return r ? *r : T{};
}

}  // namespace

TEST_F(SampleModel, WritesOneFileThatOpens) {
    const fs::path out = dir_ / "sample.gguf";
    auto files = ms::make_sample_model(out);
    ASSERT_TRUE(files.has_value()) << files.error().message();
    ASSERT_EQ(files->size(), 1u);
    EXPECT_EQ((*files)[0].path, out);
    EXPECT_EQ((*files)[0].bytes, fs::file_size(out));
    EXPECT_FALSE(fs::exists(dir_ / "sample.gguf.tmp"));

    gg::model m = open_or_fail(out);
    ASSERT_EQ(m.parts().size(), 1u);
    EXPECT_EQ(m.file_bytes(), fs::file_size(out));
    EXPECT_EQ(m.metadata().version(), 3u);
    EXPECT_EQ(m.metadata().alignment(), 32u);
}

TEST_F(SampleModel, HasQwen2Metadata) {
    const fs::path out = dir_ / "sample.gguf";
    ASSERT_TRUE(ms::make_sample_model(out).has_value());
    gg::model m = open_or_fail(out);
    ASSERT_EQ(m.parts().size(), 1u);

    // Exactly the expected keys, in order, with the expected types.
    const auto kvs = m.metadata().metadata();
    ASSERT_EQ(kvs.size(), expected_keys().size());
    for (std::size_t i = 0; i < kvs.size(); ++i) {
        EXPECT_EQ(kvs[i].key, expected_keys()[i].first) << i;
        EXPECT_EQ(kvs[i].type, expected_keys()[i].second) << kvs[i].key;
    }
    EXPECT_EQ(m.find("split.count"), nullptr);

    EXPECT_EQ(get_or_fail<std::string_view>(m, "general.architecture"), "qwen2");
    EXPECT_EQ(get_or_fail<std::string_view>(m, "general.type"), "model");
    EXPECT_FALSE(get_or_fail<std::string_view>(m, "general.name").empty());
    EXPECT_EQ(get_or_fail<std::string_view>(m, "general.size_label"), "140K");
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "general.file_type"), 2u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "general.quantization_version"), 2u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "qwen2.block_count"), 2u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "qwen2.context_length"), ms::n_ctx_train);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "qwen2.embedding_length"), 64u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "qwen2.feed_forward_length"), 128u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "qwen2.attention.head_count"), 4u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "qwen2.attention.head_count_kv"), 2u);
    EXPECT_EQ(get_or_fail<float>(m, "qwen2.rope.freq_base"), 1000000.0f);
    EXPECT_EQ(get_or_fail<float>(m, "qwen2.attention.layer_norm_rms_epsilon"), 1e-6f);
    EXPECT_EQ(get_or_fail<std::string_view>(m, "tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(get_or_fail<std::string_view>(m, "tokenizer.ggml.pre"), "qwen2");
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "tokenizer.ggml.eos_token_id"), 511u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "tokenizer.ggml.padding_token_id"), 509u);
    EXPECT_EQ(get_or_fail<std::uint32_t>(m, "tokenizer.ggml.bos_token_id"), 509u);
    EXPECT_EQ(get_or_fail<bool>(m, "tokenizer.ggml.add_bos_token"), false);
    const auto tmpl = get_or_fail<std::string_view>(m, "tokenizer.chat_template");
    EXPECT_NE(tmpl.find("{% for message in messages %}"), std::string_view::npos);
    EXPECT_NE(tmpl.find("<|im_start|>assistant\n"), std::string_view::npos);
    EXPECT_NE(tmpl.find("add_generation_prompt"), std::string_view::npos);
}

TEST_F(SampleModel, VocabularyIsByteLevelBpe) {
    const fs::path out = dir_ / "sample.gguf";
    ASSERT_TRUE(ms::make_sample_model(out).has_value());
    gg::model m = open_or_fail(out);
    ASSERT_EQ(m.parts().size(), 1u);

    const auto tokens_kv = get_or_fail<gg::array_view>(m, "tokenizer.ggml.tokens");
    ASSERT_EQ(tokens_kv.element_type(), gg::value_type::string);
    auto table = tokens_kv.string_table();
    ASSERT_TRUE(table.has_value());
    const std::vector<std::string_view>& tokens = *table;
    ASSERT_EQ(tokens.size(), ms::n_vocab);
    const std::set<std::string_view> unique(tokens.begin(), tokens.end());
    EXPECT_EQ(unique.size(), tokens.size());

    // GPT-2's byte alphabet: '!' is id 0, byte 0 is U+0100 at id 188, space is U+0120 "Ġ", newline "Ċ".
    EXPECT_EQ(tokens[0], "!");
    EXPECT_EQ(tokens[188], "\xc4\x80");
    EXPECT_EQ(ms::byte_to_unicode(' '), "\xc4\xa0");
    EXPECT_EQ(ms::byte_to_unicode('\n'), "\xc4\x8a");
    EXPECT_EQ(ms::byte_to_unicode('a'), "a");
    std::set<std::string> bytes;
    for (unsigned b = 0; b < 256; ++b) bytes.insert(ms::byte_to_unicode(static_cast<std::uint8_t>(b)));
    EXPECT_EQ(bytes.size(), 256u);
    for (std::size_t i = 0; i < 256; ++i) EXPECT_EQ(bytes.count(std::string(tokens[i])), 1u) << i;
    EXPECT_EQ(tokens[509], "<|endoftext|>");
    EXPECT_EQ(tokens[510], "<|im_start|>");
    EXPECT_EQ(tokens[511], "<|im_end|>");

    const auto types = get_or_fail<gg::array_view>(m, "tokenizer.ggml.token_type");
    ASSERT_EQ(types.element_type(), gg::value_type::i32);
    ASSERT_EQ(types.size(), ms::n_vocab);
    for (std::uint64_t i = 0; i < types.size(); ++i) {
        auto t = types.at<std::int32_t>(i);
        ASSERT_TRUE(t.has_value());
        EXPECT_EQ(*t, i >= 509 ? 3 : 1) << i;
    }

    // Every merge "a b" joins two tokens into a token, and every merged token comes from a merge.
    const auto merges = get_or_fail<gg::array_view>(m, "tokenizer.ggml.merges");
    ASSERT_EQ(merges.element_type(), gg::value_type::string);
    EXPECT_GE(merges.size(), 253u);
    std::set<std::string> made;
    for (std::string_view mg : merges.strings()) {
        const std::size_t sp = mg.find(' ');
        ASSERT_NE(sp, std::string_view::npos) << mg;
        ASSERT_EQ(mg.find(' ', sp + 1), std::string_view::npos) << mg;
        const std::string_view a = mg.substr(0, sp), b = mg.substr(sp + 1);
        EXPECT_TRUE(unique.count(a) == 1 && unique.count(b) == 1) << mg;
        const std::string ab = std::string(a) + std::string(b);
        EXPECT_EQ(unique.count(ab), 1u) << mg;
        made.insert(ab);
    }
    for (std::size_t i = 256; i < 509; ++i) EXPECT_EQ(made.count(std::string(tokens[i])), 1u) << tokens[i];
    EXPECT_EQ(made.count("\xc4\xa0the"), 1u);  // " the" is learned from the built-in text
}

TEST_F(SampleModel, TensorsMatchTheSpecs) {
    const fs::path out = dir_ / "sample.gguf";
    ASSERT_TRUE(ms::make_sample_model(out).has_value());
    gg::model m = open_or_fail(out);
    ASSERT_EQ(m.parts().size(), 1u);

    const std::vector<ms::tensor_spec> specs = ms::sample_tensor_specs();
    ASSERT_EQ(m.tensors().size(), specs.size());
    EXPECT_EQ(specs.size(), 27u);  // 1 + 12 per block + 2
    EXPECT_EQ(specs.size(), ms::tensor_count);
    std::set<gg::tensor_type> types;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const ms::tensor_spec& s = specs[i];
        const gg::tensor_ref& t = m.tensors()[i];
        ASSERT_EQ(t.info->name, s.name);
        EXPECT_EQ(t.info->type, s.type) << s.name;
        EXPECT_EQ(t.info->n_dims, s.ne.size()) << s.name;
        for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(t.info->ne[d], d < s.ne.size() ? s.ne[d] : 1) << s.name;
        const auto data = m.tensor_data(t);
        const std::vector<std::byte> want = ms::sample_tensor_bytes(s);
        ASSERT_EQ(data.size(), want.size()) << s.name;
        EXPECT_TRUE(std::equal(data.begin(), data.end(), want.begin())) << s.name;
        types.insert(s.type);
    }
    EXPECT_EQ(types, (std::set<gg::tensor_type>{gg::tensor_type::f32, gg::tensor_type::f16, gg::tensor_type::q4_0,
                                                gg::tensor_type::q8_0}));

    // Qwen2 shapes.
    auto shape = [&](std::string_view name) {
        const gg::tensor_ref* t = m.find_tensor(name);
        EXPECT_NE(t, nullptr) << name;
        return t == nullptr ? std::array<std::int64_t, 4>{} : t->info->ne;
    };
    using a4 = std::array<std::int64_t, 4>;
    EXPECT_EQ(shape("token_embd.weight"), (a4{64, 512, 1, 1}));
    EXPECT_EQ(shape("output.weight"), (a4{64, 512, 1, 1}));
    EXPECT_EQ(shape("output_norm.weight"), (a4{64, 1, 1, 1}));
    EXPECT_EQ(shape("blk.1.attn_q.weight"), (a4{64, 64, 1, 1}));
    EXPECT_EQ(shape("blk.1.attn_k.weight"), (a4{64, 32, 1, 1}));
    EXPECT_EQ(shape("blk.1.attn_v.bias"), (a4{32, 1, 1, 1}));
    EXPECT_EQ(shape("blk.0.ffn_gate.weight"), (a4{64, 128, 1, 1}));
    EXPECT_EQ(shape("blk.0.ffn_down.weight"), (a4{128, 64, 1, 1}));
    EXPECT_EQ(m.find_tensor("output.weight")->info->type, gg::tensor_type::q8_0);
    EXPECT_EQ(m.find_tensor("blk.0.ffn_down.weight")->info->type, gg::tensor_type::f16);
    EXPECT_EQ(m.find_tensor("blk.0.attn_q.bias")->info->type, gg::tensor_type::f32);
}

TEST_F(SampleModel, WeightsDecodeToTheSourceValues) {
    const fs::path out = dir_ / "sample.gguf";
    ASSERT_TRUE(ms::make_sample_model(out).has_value());
    gg::model m = open_or_fail(out);
    ASSERT_EQ(m.parts().size(), 1u);

    for (const ms::tensor_spec& s : ms::sample_tensor_specs()) {
        const std::vector<float> src = ms::sample_values(s);
        const gg::tensor_ref* t = m.find_tensor(s.name);
        ASSERT_NE(t, nullptr) << s.name;
        const auto data = m.tensor_data(*t);
        std::vector<float> got(src.size());
        double max_err = 0, se = 0, ss = 0;
        switch (s.type) {
            case gg::tensor_type::f32:
                ASSERT_EQ(data.size(), 4 * got.size());
                std::memcpy(got.data(), data.data(), data.size());
                break;
            case gg::tensor_type::f16:
                for (std::size_t i = 0; i < got.size(); ++i) {
                    std::uint16_t h;
                    std::memcpy(&h, data.data() + 2 * i, 2);
                    got[i] = ms::f16_to_f32(h);
                }
                break;
            case gg::tensor_type::q4_0: ASSERT_TRUE(ms::dequantize_q4_0(data, got)) << s.name; break;
            case gg::tensor_type::q8_0: ASSERT_TRUE(ms::dequantize_q8_0(data, got)) << s.name; break;
            default: FAIL() << s.name;
        }
        for (std::size_t i = 0; i < src.size(); ++i) {
            const double e = std::fabs(static_cast<double>(got[i]) - src[i]);
            max_err = std::max(max_err, e);
            se += e * e;
            ss += static_cast<double>(src[i] - s.mean) * (src[i] - s.mean);
        }
        const double rel_rms = std::sqrt(se / ss);  // error relative to the spread of the values
        switch (s.type) {
            case gg::tensor_type::f32: EXPECT_EQ(max_err, 0.0) << s.name; break;
            case gg::tensor_type::f16: EXPECT_LT(max_err, 0.2 * 0x1p-11) << s.name; break;  // |x| < 0.2
            case gg::tensor_type::q8_0: EXPECT_LT(rel_rms, 0.01) << s.name; break;
            default:
                EXPECT_LT(rel_rms, 0.15) << s.name;
                EXPECT_LT(max_err, 0.02 * 6 / 8) << s.name;  // one step of the largest block scale at most
                break;
        }
        // The source values look like weights: the mean and spread they were asked for.
        double mean = 0;
        for (float v : src) mean += v;
        mean /= static_cast<double>(src.size());
        EXPECT_NEAR(mean, s.mean, 0.01) << s.name;
        EXPECT_NEAR(std::sqrt(ss / static_cast<double>(src.size())), s.scale, 0.006) << s.name;
    }

    // token_embd (Q4_0) specifically: each block's dequantized values are within one quantization
    // step (|d|) of the regenerated source.
    const auto specs = ms::sample_tensor_specs();
    const ms::tensor_spec& embd = specs.front();
    ASSERT_EQ(embd.name, "token_embd.weight");
    const std::vector<float> src = ms::sample_values(embd);
    const auto data = m.tensor_data(*m.find_tensor("token_embd.weight"));
    std::vector<float> got(src.size());
    ASSERT_TRUE(ms::dequantize_q4_0(data, got));
    for (std::size_t b = 0; b < src.size() / 32; ++b) {
        float amax = 0;
        for (std::size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(src[b * 32 + j]));
        for (std::size_t j = 0; j < 32; ++j)
            ASSERT_LE(std::fabs(got[b * 32 + j] - src[b * 32 + j]), amax / 8 * 1.01f) << b << " " << j;
    }
}

TEST_F(SampleModel, IsReproducible) {
    ASSERT_TRUE(ms::make_sample_model(dir_ / "a.gguf").has_value());
    ASSERT_TRUE(ms::make_sample_model(dir_ / "b.gguf").has_value());
    const std::vector<char> a = read_all(dir_ / "a.gguf"), b = read_all(dir_ / "b.gguf");
    ASSERT_GT(a.size(), 100000u);
    EXPECT_EQ(a, b);
    auto writers = ms::sample_model_writers(0);
    ASSERT_TRUE(writers.has_value());
    ASSERT_EQ(writers->size(), 1u);
    auto mem = (*writers)[0].to_bytes();
    ASSERT_TRUE(mem.has_value());
    ASSERT_EQ(mem->size(), a.size());
    EXPECT_EQ(std::memcmp(mem->data(), a.data(), a.size()), 0);
}

TEST_F(SampleModel, SplitIsTheSameModel) {
    ASSERT_TRUE(ms::make_sample_model(dir_ / "single.gguf").has_value());
    gg::model single = open_or_fail(dir_ / "single.gguf");
    ASSERT_EQ(single.parts().size(), 1u);

    for (int n : {1, 2, 3, 7, 27}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const fs::path out = dir_ / ("split" + std::to_string(n) + ".gguf");
        auto files = ms::make_sample_model(out, n);
        ASSERT_TRUE(files.has_value()) << files.error().message();
        ASSERT_EQ(files->size(), static_cast<std::size_t>(n));
        for (int k = 0; k < n; ++k) {
            const fs::path want = dir_ / gg::split_file_name("split" + std::to_string(n), static_cast<std::uint32_t>(k),
                                                            static_cast<std::uint32_t>(n));
            EXPECT_EQ((*files)[static_cast<std::size_t>(k)].path, want);
            EXPECT_TRUE(fs::exists(want));
        }
        EXPECT_FALSE(fs::exists(out));
        if (n < 10) {
            EXPECT_EQ((*files)[0].path.filename().string(),
                      "split" + std::to_string(n) + "-00001-of-0000" + std::to_string(n) + ".gguf");
        }

        gg::model m = open_or_fail((*files)[0].path);
        ASSERT_EQ(m.parts().size(), static_cast<std::size_t>(n));

        // Part 1: all metadata of the single file, in order, then the three split keys.
        const auto kvs = m.parts()[0].view.metadata();
        const auto single_kvs = single.metadata().metadata();
        ASSERT_EQ(kvs.size(), single_kvs.size() + 3);
        for (std::size_t i = 0; i < single_kvs.size(); ++i) {
            EXPECT_EQ(kvs[i].key, single_kvs[i].key);
            EXPECT_EQ(kvs[i].type, single_kvs[i].type);
            EXPECT_EQ(kvs[i].count, single_kvs[i].count);
            EXPECT_TRUE(std::equal(kvs[i].payload.begin(), kvs[i].payload.end(), single_kvs[i].payload.begin(),
                                   single_kvs[i].payload.end()))
                << kvs[i].key;
        }
        EXPECT_EQ(get_or_fail<std::uint16_t>(m, "split.no"), 0u);
        EXPECT_EQ(get_or_fail<std::uint16_t>(m, "split.count"), static_cast<std::uint16_t>(n));
        EXPECT_EQ(get_or_fail<std::int32_t>(m, "split.tensors.count"), 27);
        // Later parts: only the split keys.
        for (std::size_t p = 1; p < m.parts().size(); ++p) {
            const gg::file_view& v = m.parts()[p].view;
            ASSERT_EQ(v.metadata().size(), 3u);
            auto no = v.get<std::uint16_t>("split.no");
            ASSERT_TRUE(no.has_value());
            EXPECT_EQ(*no, p);
            ASSERT_TRUE(v.get<std::uint16_t>("split.count").has_value());
            ASSERT_TRUE(v.get<std::int32_t>("split.tensors.count").has_value());
            EXPECT_GT(v.tensors().size(), 0u);
        }

        // The same tensors, in the same order, with the same bytes; parts hold consecutive runs.
        ASSERT_EQ(m.tensors().size(), single.tensors().size());
        std::uint32_t last_part = 0;
        std::map<std::uint32_t, std::size_t> per_part;
        for (std::size_t i = 0; i < m.tensors().size(); ++i) {
            const gg::tensor_ref& a = m.tensors()[i];
            const gg::tensor_ref& b = single.tensors()[i];
            EXPECT_EQ(a.info->name, b.info->name);
            EXPECT_EQ(a.info->type, b.info->type);
            EXPECT_EQ(a.info->ne, b.info->ne);
            const auto da = m.tensor_data(a), db = single.tensor_data(b);
            EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end())) << a.info->name;
            EXPECT_GE(a.part, last_part);
            last_part = a.part;
            ++per_part[a.part];
        }
        ASSERT_EQ(per_part.size(), static_cast<std::size_t>(n));
        const auto [lo, hi] = std::minmax_element(per_part.begin(), per_part.end(),
                                                  [](const auto& x, const auto& y) { return x.second < y.second; });
        EXPECT_LE(hi->second - lo->second, 1u);

        // Sizes add up: every part is a whole GGUF file.
        std::uint64_t total = 0;
        for (const ms::written_file& f : *files) total += f.bytes;
        EXPECT_EQ(m.file_bytes(), total);
    }
}

TEST_F(SampleModel, SplitReproducibleAndNamedFromStem) {
    auto a = ms::make_sample_model(dir_ / "m.gguf", 3);
    ASSERT_TRUE(a.has_value());
    const std::vector<char> first = read_all((*a)[1].path);
    auto b = ms::make_sample_model(dir_ / "m.gguf", 3);
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(read_all((*b)[1].path), first);
    EXPECT_EQ((*a)[2].path, dir_ / "m-00003-of-00003.gguf");
    // A name without .gguf is used whole as the prefix.
    const auto paths = ms::sample_model_paths(dir_ / "model", 2);
    ASSERT_EQ(paths.size(), 2u);
    EXPECT_EQ(paths[0], dir_ / "model-00001-of-00002.gguf");
}

TEST_F(SampleModel, RejectsBadSplitCounts) {
    for (int n : {-1, 28, 1000}) {
        auto r = ms::make_sample_model(dir_ / "bad.gguf", n);
        ASSERT_FALSE(r.has_value()) << n;
        EXPECT_EQ(r.error().code, gg::errc::split_bad_key);
    }
    EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SampleModel, ReportsWriteErrors) {
    auto r = ms::make_sample_model(dir_ / "no-such-dir" / "x.gguf");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, gg::errc::io_error);
}
