// convert::bpe_vocab: the vocabulary keys as convert_hf_to_gguf.py writes them. Against the
// reference's own outputs item by item where MINFER_CONVERT_MODELS (the test checkpoints) and
// MINFER_CONVERT_REF_OUT (a folder of NAME.gguf written by the reference from them, e.g. by
// build/convert-ref/run_convert.py MODEL --outfile OUT/NAME.gguf) are set; on a checkpoint written
// here otherwise.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "minfer/convert/bpe_vocab.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/gguf.hpp"

namespace {

namespace cv = minfer::convert;
namespace fs = std::filesystem;
namespace gguf = minfer::gguf;

const fs::path data_dir = MINFER_CONVERT_TEST_DATA;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void spit(const fs::path& p, std::string_view text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

fs::path env_dir(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? fs::path(v) : fs::path();
}

std::vector<std::string> keys_of(const std::vector<cv::vocab_key>& kvs) {
    std::vector<std::string> keys;
    for (const auto& kv : kvs) keys.push_back(kv.name);
    return keys;
}

// One value of ours against the reference file's, item by item.
void expect_same(const cv::vocab_key& ours, const gguf::kv& theirs) {
    const std::string& key = ours.name;
    if (const auto* s = std::get_if<std::string>(&ours.value)) {
        auto v = theirs.get<std::string_view>();
        ASSERT_TRUE(v.has_value()) << key;
        EXPECT_EQ(*v, *s) << key;
    } else if (const auto* u = std::get_if<std::uint32_t>(&ours.value)) {
        auto v = theirs.get<std::uint32_t>();
        ASSERT_TRUE(v.has_value()) << key;
        EXPECT_EQ(*v, *u) << key;
    } else if (const auto* b = std::get_if<bool>(&ours.value)) {
        auto v = theirs.get<bool>();
        ASSERT_TRUE(v.has_value()) << key;
        EXPECT_EQ(*v, *b) << key;
    } else if (const auto* strings = std::get_if<std::vector<std::string>>(&ours.value)) {
        auto a = theirs.get<gguf::array_view>();
        ASSERT_TRUE(a.has_value()) << key;
        ASSERT_EQ(a->size(), strings->size()) << key;
        std::size_t i = 0, differ = 0;
        for (std::string_view item : a->strings()) {
            if (item != (*strings)[i] && ++differ <= 5)
                ADD_FAILURE() << key << "[" << i << "]: ours " << ::testing::PrintToString((*strings)[i]) << ", reference "
                              << ::testing::PrintToString(std::string(item));
            ++i;
        }
        EXPECT_EQ(differ, 0u) << key;
    } else if (const auto* ints = std::get_if<std::vector<std::int32_t>>(&ours.value)) {
        auto a = theirs.get<gguf::array_view>();
        ASSERT_TRUE(a.has_value()) << key;
        ASSERT_EQ(a->size(), ints->size()) << key;
        std::vector<std::int32_t> values(ints->size());
        ASSERT_TRUE(a->copy_to(std::span<std::int32_t>(values)).has_value()) << key;
        EXPECT_EQ(values, *ints) << key;
    }
}

TEST(BpeVocab, EqualsTheReferenceOutputs) {
    const fs::path models = env_dir("MINFER_CONVERT_MODELS");
    const fs::path refs = env_dir("MINFER_CONVERT_REF_OUT");
    if (models.empty() || refs.empty())
        GTEST_SKIP() << "MINFER_CONVERT_MODELS and MINFER_CONVERT_REF_OUT are not both set: no reference outputs to "
                        "compare with (the test checkpoints, and NAME.gguf written from each by convert_hf_to_gguf.py)";
    std::size_t compared = 0;
    for (const char* name : {"Tiny-Qwen3", "Tiny-Qwen2.5-Instruct", "Tiny-Qwen3-MoE", "Tiny-Qwen3-BF16",
                             "Tiny-Llama-3-BPE-Instruct", "Tiny-Llama-3.2-BPE"}) {
        const fs::path ref = refs / (std::string(name) + ".gguf");
        if (!fs::exists(ref)) {
            std::printf("[   SKIP   ] %s: no %s\n", name, ref.c_str());
            continue;
        }
        SCOPED_TRACE(name);
        auto config = cv::read_hf_config(models / name / "config.json");
        ASSERT_TRUE(config.has_value()) << config.error().message();
        auto ours = cv::bpe_vocab(models / name, *config);
        ASSERT_TRUE(ours.has_value()) << ours.error().message();
        auto m = gguf::model::open(ref);
        ASSERT_TRUE(m.has_value()) << m.error().message();
        std::vector<std::string> their_keys;
        std::vector<const gguf::kv*> their_values;
        for (const gguf::kv& e : m->with_prefix("tokenizer.")) {
            their_keys.emplace_back(e.key);
            their_values.push_back(&e);
        }
        ASSERT_EQ(keys_of(*ours), their_keys);
        for (std::size_t i = 0; i < ours->size(); ++i) expect_same((*ours)[i], *their_values[i]);
        ++compared;
    }
    std::printf("[   INFO   ] %zu reference outputs compared\n", compared);
    EXPECT_GT(compared, 0u);
}

class BpeVocabDir : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("minfer-bpe-vocab-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        spit(dir_ / "tokenizer.json", slurp(data_dir / "bpe_small_gpt2.json"));
        spit(dir_ / "tokenizer_config.json", R"({"bos_token": "<s>", "eos_token": {"content": "<|end|>"},
            "add_bos_token": true, "chat_template": "{{ x }}", "clean_up_tokenization_spaces": false})");
        write_config("Qwen3ForCausalLM");
    }
    void TearDown() override { fs::remove_all(dir_); }

    void write_config(const std::string& arch) {
        spit(dir_ / "config.json", R"({"architectures": [")" + arch + R"("], "num_hidden_layers": 1, "vocab_size": 280,
            "hidden_size": 8, "intermediate_size": 8, "num_attention_heads": 2, "num_key_value_heads": 1,
            "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "bos_token_id": 274, "pad_token_id": 275})");
    }
    gguf::result<std::vector<cv::vocab_key>> build(std::string pre = "qwen2") {
        auto config = cv::read_hf_config(dir_ / "config.json");
        EXPECT_TRUE(config.has_value()) << config.error().message();
        cv::bpe_vocab_options options;
        options.pre = std::move(pre);
        return cv::bpe_vocab(dir_, *config, options);
    }

    fs::path dir_;
};

TEST_F(BpeVocabDir, KeysInTheReferencesOrder) {
    auto v = build();
    ASSERT_TRUE(v.has_value()) << v.error().message();
    // bos and eos from tokenizer_config (eos through its dict's content), pad from config.json (its
    // bos comes too late); add_bos first set by the template, add_sep by the pair template
    EXPECT_EQ(keys_of(*v), (std::vector<std::string>{
                               "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
                               "tokenizer.ggml.token_type", "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id",
                               "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id",
                               "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_sep_token", "tokenizer.chat_template"}));
    const auto& tokens = std::get<std::vector<std::string>>((*v)[2].value);
    const auto& types = std::get<std::vector<std::int32_t>>((*v)[3].value);
    ASSERT_EQ(tokens.size(), 280u);
    EXPECT_EQ(tokens[32], "\xC4\xA0");
    EXPECT_EQ(tokens[273], "<s>");
    EXPECT_EQ(tokens[279], "[PAD279]");
    EXPECT_EQ(types[0], 1);
    EXPECT_EQ(types[273], 3);  // special
    EXPECT_EQ(types[275], 4);  // "[M]": added, neither special nor looking special
    EXPECT_EQ(types[277], 3);
    EXPECT_EQ(types[278], 5);
    EXPECT_EQ(std::get<std::string>((*v)[1].value), "qwen2");
    EXPECT_EQ(std::get<std::vector<std::string>>((*v)[4].value).size(), 17u);
    EXPECT_EQ(std::get<std::uint32_t>((*v)[5].value), 273u);
    EXPECT_EQ(std::get<std::uint32_t>((*v)[6].value), 274u);
    EXPECT_EQ(std::get<std::uint32_t>((*v)[7].value), 275u);
    EXPECT_EQ(std::get<bool>((*v)[8].value), true);
    EXPECT_EQ(std::get<bool>((*v)[9].value), false);
    EXPECT_EQ(std::get<std::string>((*v)[10].value), "{{ x }}");
}

TEST_F(BpeVocabDir, LlamaWritesAddSpacePrefixFirst) {
    write_config("LlamaForCausalLM");
    spit(dir_ / "tokenizer_config.json", R"({"add_prefix_space": false, "bos_token": "<s>"})");
    spit(dir_ / "chat_template.jinja", "a\r\nb\rc\n");
    auto v = build();
    ASSERT_TRUE(v.has_value()) << v.error().message();
    EXPECT_EQ((*v)[0].name, "tokenizer.ggml.add_space_prefix");
    EXPECT_EQ(v->back().name, "tokenizer.chat_template");
    EXPECT_EQ(std::get<std::string>(v->back().value), "a\nb\nc\n");  // Python's text mode
}

TEST_F(BpeVocabDir, AnUnknownPreTokenizerIsRefusedWithoutPre) {
    auto v = build("");
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error().code, cv::codes::unsupported_tokenizer);
    EXPECT_NE(v.error().message().find("--pre NAME"), std::string::npos) << v.error().message();
    auto named = build("gpt-9");
    ASSERT_FALSE(named.has_value());
    EXPECT_EQ(named.error().code, cv::codes::unsupported_tokenizer);
}

TEST_F(BpeVocabDir, RefusesWhatTheReferenceConvertsAnotherWay) {
    spit(dir_ / "tokenizer.model", "x");
    auto spm = build();
    ASSERT_FALSE(spm.has_value());
    EXPECT_EQ(spm.error().code, cv::codes::unsupported_tokenizer);
    write_config("Qwen3MoeForCausalLM");  // its class never looks for tokenizer.model
    std::string config = slurp(dir_ / "config.json");
    config.insert(config.rfind('}'), R"(, "num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 8)");
    spit(dir_ / "config.json", config);
    EXPECT_TRUE(build().has_value());
    fs::remove(dir_ / "tokenizer.model");
    spit(dir_ / "tokenizer_config.json", R"({"chat_template": [{"name": "default", "template": "x"}]})");
    auto list = build();
    ASSERT_FALSE(list.has_value());
    EXPECT_EQ(list.error().code, cv::codes::unsupported_tokenizer);
    spit(dir_ / "tokenizer_config.json", "[]");
    auto not_object = build();
    ASSERT_FALSE(not_object.has_value());
    EXPECT_EQ(not_object.error().code, cv::codes::bad_tokenizer);
}

TEST_F(BpeVocabDir, VocabSizeBelowTheTokensIsRefused) {
    std::string config = slurp(dir_ / "config.json");
    config.replace(config.find("280"), 3, "270");
    spit(dir_ / "config.json", config);
    auto v = build();
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error().code, cv::codes::bad_tokenizer);
    EXPECT_NE(v.error().message().find("vocab_size 270"), std::string::npos) << v.error().message();
}

}  // namespace
