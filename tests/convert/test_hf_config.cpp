// convert::hf_config: real-shaped configs of each supported architecture, the reference's key lists
// and defaults, and every refusal with its code, offset and subject.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <string>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/hf_config.hpp"
#include "safetensors_bytes.hpp"

namespace {

using namespace minfer::test;
namespace cv = minfer::convert;
using minfer::gguf::section;

constexpr auto bad = cv::codes::bad_model_config;

// Shaped like meta-llama/Llama-3.2-1B's config.json.
const std::string llama = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "intermediate_size": 8192,
  "max_position_embeddings": 131072,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
})";

// Shaped like Qwen/Qwen3-30B-A3B's.
const std::string qwen3_moe = R"({
  "architectures": ["Qwen3MoeForCausalLM"],
  "bos_token_id": 151643, "eos_token_id": 151645, "decoder_sparse_step": 1, "head_dim": 128,
  "hidden_size": 2048, "intermediate_size": 6144, "max_position_embeddings": 40960, "max_window_layers": 48,
  "mlp_only_layers": [], "model_type": "qwen3_moe", "moe_intermediate_size": 768, "norm_topk_prob": true,
  "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
  "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000.0,
  "sliding_window": null, "tie_word_embeddings": false, "use_sliding_window": false, "vocab_size": 151936
})";

// Shaped like Qwen/Qwen2.5-0.5B's.
const std::string qwen2 = R"({
  "architectures": ["Qwen2ForCausalLM"], "bos_token_id": 151643, "eos_token_id": 151643,
  "hidden_size": 896, "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "use_sliding_window": false, "vocab_size": 151936
})";

minfer::gguf::result<cv::hf_config> parse(std::string_view text) { return cv::parse_hf_config(text, "config.json"); }

// `text` with the first occurrence of `from` replaced by `to`.
std::string with(std::string text, std::string_view from, std::string_view to) {
    const std::size_t i = text.find(from);
    EXPECT_NE(i, std::string::npos) << from;
    if (i != std::string::npos) text.replace(i, from.size(), to);
    return text;
}

std::uint64_t at(std::string_view text, std::string_view needle) {
    const std::size_t i = text.find(needle);
    EXPECT_NE(i, std::string_view::npos) << needle;
    return i;
}

TEST(HfConfig, ALlamaConfig) {
    auto c = parse(llama);
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->file, "config.json");
    EXPECT_EQ(c->architecture_name, "LlamaForCausalLM");
    EXPECT_EQ(c->arch, cv::architecture::llama);
    EXPECT_EQ(cv::gguf_name(c->arch), "llama");
    EXPECT_EQ(c->num_hidden_layers, 16u);
    EXPECT_EQ(c->vocab_size, 128256u);
    EXPECT_EQ(c->hidden_size, 2048u);
    EXPECT_EQ(c->intermediate_size, 8192u);
    EXPECT_EQ(c->num_attention_heads, 32u);
    EXPECT_EQ(c->num_key_value_heads, 8u);
    EXPECT_EQ(c->kv_heads(), 8u);
    EXPECT_EQ(c->max_position_embeddings, 131072u);
    EXPECT_DOUBLE_EQ(c->rms_norm_eps, 1e-5);
    EXPECT_EQ(c->rope_theta, 500000.0);
    EXPECT_EQ(c->rope_type, "llama3");
    EXPECT_EQ(c->head_dim, 64u);
    EXPECT_EQ(c->head_size(), 64u);
    EXPECT_EQ(c->tie_word_embeddings, true);
    EXPECT_EQ(c->torch_dtype, "bfloat16");
    EXPECT_EQ(c->model_type, "llama");
    EXPECT_FALSE(c->name_or_path);
    EXPECT_EQ(c->bos_token_id.single(), 128000);
    EXPECT_TRUE(c->eos_token_id.listed);
    EXPECT_FALSE(c->eos_token_id.single());  // the reference ignores a list
    EXPECT_EQ(c->eos_token_id.ids, (std::vector<std::int64_t>{128001, 128008, 128009}));
    EXPECT_TRUE(c->pad_token_id.ids.empty());
    EXPECT_FALSE(c->num_experts);
    EXPECT_FALSE(c->has_quantization_config);
    // the raw document, for what the struct does not type
    const cv::json_value rope = c->rope_parameters();
    EXPECT_EQ(rope.kind(), cv::json_kind::object);
    EXPECT_EQ(rope.member("factor").as_double(), 32.0);
    EXPECT_EQ(rope.member("original_max_position_embeddings").as_uint(), 8192u);
    EXPECT_EQ(rope.offset(), at(llama, "{\"factor\""));
    EXPECT_EQ(c->raw().member("hidden_act").as_string(), "silu");
    EXPECT_EQ(c->raw().member("attention_bias").as_bool(), false);
    EXPECT_EQ(c->find_hparam({"n_embd", "hidden_size"}).as_uint(), 2048u);
    EXPECT_FALSE(c->find_hparam({"n_embd"}).present());
}

TEST(HfConfig, AQwen3MoeConfig) {
    auto c = parse(qwen3_moe);
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->arch, cv::architecture::qwen3_moe);
    EXPECT_EQ(cv::gguf_name(c->arch), "qwen3moe");
    EXPECT_EQ(c->num_experts, 128u);
    EXPECT_EQ(c->num_experts_per_tok, 8u);
    EXPECT_EQ(c->moe_intermediate_size, 768u);
    EXPECT_EQ(c->norm_topk_prob, true);
    EXPECT_EQ(c->decoder_sparse_step, 1u);
    EXPECT_TRUE(c->mlp_only_layers.empty());
    EXPECT_FALSE(c->shared_expert_intermediate_size);
    EXPECT_EQ(c->rope_theta, 1e6);
    EXPECT_FALSE(c->rope_type);
    EXPECT_FALSE(c->sliding_window);  // null
    EXPECT_EQ(c->use_sliding_window, false);
    EXPECT_EQ(c->eos_token_id.single(), 151645);
    EXPECT_EQ(c->rope_parameters().kind(), cv::json_kind::absent);  // rope_scaling null
}

TEST(HfConfig, AQwen2ConfigWithoutKvHeadsTakesTheHeads) {
    auto c = parse(with(qwen2, R"("num_key_value_heads": 2,)", ""));
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->arch, cv::architecture::qwen2);
    EXPECT_FALSE(c->num_key_value_heads);
    EXPECT_EQ(c->kv_heads(), 14u);
    EXPECT_FALSE(c->head_dim);
    EXPECT_EQ(c->head_size(), 64u);
    EXPECT_EQ(c->sliding_window, 32768u);
}

TEST(HfConfig, MistralAndQwen3AreSupportedAndOthersRefusedByName) {
    auto mistral = parse(with(llama, "LlamaForCausalLM", "MistralForCausalLM"));
    ASSERT_TRUE(mistral) << mistral.error().message();
    EXPECT_EQ(mistral->arch, cv::architecture::mistral);
    EXPECT_EQ(cv::gguf_name(mistral->arch), "llama");
    auto qwen3 = parse(with(qwen2, "Qwen2ForCausalLM", "Qwen3ForCausalLM"));
    ASSERT_TRUE(qwen3) << qwen3.error().message();
    EXPECT_EQ(qwen3->arch, cv::architecture::qwen3);
    for (std::string_view other : {"MixtralForCausalLM", "GPT2LMHeadModel", "LlamaModel", "Qwen2MoeForCausalLM"}) {
        const std::string text = with(llama, "LlamaForCausalLM", other);
        const auto e = error_of(parse(text));
        EXPECT_TRUE(error_is(e, {cv::codes::unsupported_architecture, section::metadata, at(text, other) - 1, {}, {},
                                 std::string(other)}))
            << other;
        EXPECT_EQ(e.detail, "not converted (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
                            "Qwen3ForCausalLM, Qwen3MoeForCausalLM)");
    }
}

TEST(HfConfig, NoArchitecture) {
    for (std::string_view absent : {R"("architectures": ["LlamaForCausalLM"],)", R"("architectures": null,)"}) {
        const std::string text = with(llama, R"("architectures": ["LlamaForCausalLM"],)", absent == R"("architectures": null,)" ? absent : "");
        const auto e = error_of(parse(text));
        EXPECT_TRUE(error_is(e, {bad, section::metadata, {}, {}, {}, "architectures"})) << text.substr(0, 40);
    }
    const std::string empty = with(llama, R"(["LlamaForCausalLM"])", "[]");
    EXPECT_TRUE(error_is(error_of(parse(empty)), {bad, section::metadata, at(empty, "[]"), {}, {}, "architectures"}));
    const std::string number = with(llama, R"(["LlamaForCausalLM"])", "[1]");
    EXPECT_TRUE(error_is(error_of(parse(number)), {bad, section::metadata, at(number, "[1]") + 1, {}, {}, "architectures"}));
}

TEST(HfConfig, AMultimodalOrDraftConfigIsRefused) {
    const std::string text_config = with(qwen2, "\"bos_token_id\"", R"("text_config": {"hidden_size": 8}, "bos_token_id")");
    const auto e = error_of(parse(text_config));
    EXPECT_TRUE(error_is(e, {cv::codes::unsupported_architecture, section::metadata, at(text_config, "{\"hidden_size\": 8"),
                             {}, {}, "Qwen2ForCausalLM"}));
    const std::string eagle = with(with(llama, "\"num_hidden_layers\": 16", "\"num_hidden_layers\": 1"), "\"attention_bias\"",
                                   "\"draft_vocab_size\": 32000, \"attention_bias\"");
    EXPECT_TRUE(error_is(error_of(parse(eagle)), {cv::codes::unsupported_architecture, section::metadata,
                                                  at(eagle, "32000"), {}, {}, "LlamaForCausalLM"}));
}

TEST(HfConfig, AMissingFileIsABadConfigAndOtherIoErrorsStayIo) {
    temp_dir dir;
    auto e = error_of(cv::read_hf_config(dir / "config.json"));
    EXPECT_TRUE(error_is(e, {bad, section::file, 0, {}, {}, {}, {}, "the file is missing"}));
    EXPECT_EQ(e.sys_errno, ENOENT);
    EXPECT_EQ(e.file, (dir / "config.json").string());
    e = error_of(cv::read_hf_config(dir.path()));  // a directory
    EXPECT_EQ(e.code, minfer::gguf::errc::io_error);
    const std::string big(cv::hf_config_max_bytes + 1, ' ');
    write_file(dir / "big.json", std::span(reinterpret_cast<const std::byte*>(big.data()), big.size()));
    e = error_of(cv::read_hf_config(dir / "big.json"));
    EXPECT_TRUE(error_is(e, {bad, section::file, {}, cv::hf_config_max_bytes, cv::hf_config_max_bytes + 1}));
    write_file(dir / "config.json", std::span(reinterpret_cast<const std::byte*>(llama.data()), llama.size()));
    auto c = cv::read_hf_config(dir / "config.json");
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->vocab_size, 128256u);
}

TEST(HfConfig, NotJsonOrNotAnObject) {
    const auto e = error_of(parse(R"({"a": 1,})"));
    EXPECT_TRUE(error_is(e, {bad, section::metadata, 8}));
    EXPECT_EQ(e.detail.substr(0, 15), "not valid JSON:");
    EXPECT_TRUE(error_is(error_of(parse("[]")), {bad, section::metadata, 0, {}, {}, "", {},
                                                 "the config is an array, not a JSON object"}));
    EXPECT_TRUE(error_is(error_of(parse("")), {bad, section::metadata, 0}));
    EXPECT_TRUE(error_is(error_of(parse("\xEF\xBB\xBF{}")), {bad, section::metadata, 0}));
    EXPECT_TRUE(error_is(error_of(parse(R"({"x": NaN})")), {bad, section::metadata, 6}));  // Python would take it
}

TEST(HfConfig, ADuplicateKeyIsRefusedWhereItRepeats) {
    const std::string text = with(llama, "\"vocab_size\": 128256", "\"vocab_size\": 128256, \"vocab_size\": 32000");
    const auto e = error_of(parse(text));
    EXPECT_TRUE(error_is(e, {bad, section::metadata, at(text, "\"vocab_size\": 32000"), {}, {}, "", {},
                             "not valid JSON: duplicate key 'vocab_size'"}));
}

TEST(HfConfig, NestingAHundredThousandDeepIsCutAt64) {
    const std::string deep = R"({"x": )" + std::string(100'000, '[') + std::string(100'000, ']') + "}";
    const auto e = error_of(parse(deep));
    EXPECT_TRUE(error_is(e, {bad, section::metadata, 6 + 63}));
    EXPECT_EQ(e.detail, "not valid JSON: nested deeper than 64 levels");
}

TEST(HfConfig, ARequiredFieldAbsentOrNull) {
    for (std::string_view field : {"vocab_size", "hidden_size", "intermediate_size", "num_attention_heads",
                                   "num_hidden_layers", "max_position_embeddings", "rms_norm_eps",
                                   "num_key_value_heads"}) {
        const std::size_t begin = llama.find("\"" + std::string(field) + "\"");
        const std::size_t end = llama.find_first_of(",}", llama.find(':', begin));
        std::string text = llama;
        text.replace(begin, end - begin, "\"unrelated\": 0");
        const auto e = error_of(parse(text));
        EXPECT_TRUE(error_is(e, {bad, section::metadata, 0, {}, {}, std::string(field)})) << field;
        EXPECT_EQ(e.detail.substr(0, 6), "absent") << e.detail;
    }
    const std::string null_context = with(llama, "\"max_position_embeddings\": 131072", "\"max_position_embeddings\": null");
    EXPECT_TRUE(error_is(error_of(parse(null_context)), {bad, section::metadata, at(null_context, "null"), {}, {},
                                                          "max_position_embeddings", {}, "null; expected an integer"}));
    const auto layers = error_of(parse(with(llama, "\"num_hidden_layers\": 16,", "")));
    EXPECT_EQ(layers.detail, "absent (looked for n_layers, num_hidden_layers, n_layer, num_layers)");
}

TEST(HfConfig, AFieldOfTheWrongKindOrRange) {
    struct bad_case {
        std::string_view from, to;
        std::string_view value;  // where the offending value starts in `to`
        std::string_view subject;
        std::optional<std::uint64_t> expected{}, found{};
    };
    const std::vector<bad_case> cases{
        {"\"hidden_size\": 2048", "\"hidden_size\": \"2048\"", "\"2048\"", "hidden_size"},
        {"\"hidden_size\": 2048", "\"hidden_size\": 2048.0", "2048.0", "hidden_size"},
        {"\"hidden_size\": 2048", "\"hidden_size\": -2048", "-2048", "hidden_size"},
        {"\"hidden_size\": 2048", "\"hidden_size\": true", "true", "hidden_size"},
        {"\"hidden_size\": 2048", "\"hidden_size\": 4294967296", "4294967296", "hidden_size", 4294967295u, 4294967296u},
        {"\"num_hidden_layers\": 16", "\"num_hidden_layers\": 0", "0", "num_hidden_layers", 1u, 0u},
        {"\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": 0", "0", "rms_norm_eps"},
        {"\"rope_theta\": 500000.0", "\"rope_theta\": \"500000\"", "\"500000\"", "rope_theta"},
        {"\"tie_word_embeddings\": true", "\"tie_word_embeddings\": 1", "1", "tie_word_embeddings"},
        {"\"torch_dtype\": \"bfloat16\"", "\"torch_dtype\": 16", "16", "torch_dtype"},
        {"\"bos_token_id\": 128000", "\"bos_token_id\": -1", "-1", "bos_token_id"},
        {"\"bos_token_id\": 128000", "\"bos_token_id\": \"<s>\"", "\"<s>\"", "bos_token_id"},
        {"[128001, 128008, 128009]", "[128001, false]", "false", "eos_token_id"},
        {"\"head_dim\": 64", "\"head_dim\": 0", "0", "head_dim", 1u, 0u},
        {"\"rope_type\": \"llama3\"", "\"rope_type\": 3", "3", "rope_type"},
        {"\"rope_scaling\": {", "\"rope_scaling\": \"yes\", \"x\": {", "\"yes\"", "rope_scaling"},
    };
    // a number beyond a double is not read as infinity (Python would): the JSON is refused where it starts
    const std::string infinite = with(llama, "\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": 1e999");
    EXPECT_TRUE(error_is(error_of(parse(infinite)), {bad, section::metadata, at(infinite, "1e999"), {}, {}, "", {},
                                                      "not valid JSON: number overflow parsing '1e999'"}));
    for (const bad_case& c : cases) {
        const std::string text = with(llama, c.from, c.to);
        const std::uint64_t offset = at(text, c.to) + c.to.find(c.value);
        EXPECT_TRUE(error_is(error_of(parse(text)), {bad, section::metadata, offset, c.expected, c.found, std::string(c.subject)}))
            << c.to;
    }
}

TEST(HfConfig, TheHeadsMustDivide) {
    const std::string kv = with(llama, "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5");
    EXPECT_TRUE(error_is(error_of(parse(kv)), {bad, section::metadata, at(kv, "5,"), 32, 5, "num_key_value_heads"}));
    // without head_dim, the hidden size must be a multiple of the heads
    const std::string hidden = with(with(llama, "\"head_dim\": 64,", ""), "\"hidden_size\": 2048", "\"hidden_size\": 2050");
    EXPECT_TRUE(error_is(error_of(parse(hidden)), {bad, section::metadata, at(hidden, "2050"), 32, 2050, "hidden_size"}));
    const std::string with_head_dim = with(llama, "\"hidden_size\": 2048", "\"hidden_size\": 2050");
    EXPECT_TRUE(parse(with_head_dim));
    // LlamaModel has no default for the KV heads; Qwen's keys are optional
    EXPECT_TRUE(error_is(error_of(parse(with(llama, "\"num_key_value_heads\": 8,", ""))),
                         {bad, section::metadata, 0, {}, {}, "num_key_value_heads"}));
}

TEST(HfConfig, TheReferencesKeyListsAndTheirAmbiguity) {
    // another key of a list stands in for the usual one
    auto c = parse(with(llama, "\"num_hidden_layers\": 16", "\"n_layer\": 12"));
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->num_hidden_layers, 12u);
    // two keys of one list with the same value: fine; with different values: refused at the second
    EXPECT_TRUE(parse(with(llama, "\"num_attention_heads\": 32", "\"num_attention_heads\": 32, \"n_heads\": 32")));
    const std::string differ = with(llama, "\"num_attention_heads\": 32", "\"num_attention_heads\": 32, \"n_heads\": 16");
    const auto e = error_of(parse(differ));
    EXPECT_TRUE(error_is(e, {bad, section::metadata, at(differ, "16,"), {}, {}, "n_heads"}));
    // a null beside a value disagrees with it too (find_hparam would take whichever comes first)
    const std::string null_beside = with(qwen2, "\"max_position_embeddings\": 32768", "\"max_position_embeddings\": 32768, \"n_ctx\": null");
    EXPECT_TRUE(error_is(error_of(parse(null_beside)), {bad, section::metadata, at(null_beside, "null"), {}, {}, "n_ctx"}));
    // a null optional field is absent, as find_hparam's None
    auto null_kv = parse(with(qwen2, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": null"));
    ASSERT_TRUE(null_kv) << null_kv.error().message();
    EXPECT_FALSE(null_kv->num_key_value_heads);
    EXPECT_EQ(null_kv->kv_heads(), 14u);
}

TEST(HfConfig, RopeParametersAsTheReferencePicksThem) {
    // transformers 5 moved rope_theta into rope_parameters, which then wins over the root's
    auto v5 = parse(with(qwen2, "\"rope_theta\": 1000000.0", "\"rope_theta\": 10.0, \"rope_parameters\": {\"rope_theta\": 20.0, \"rope_type\": \"default\"}"));
    ASSERT_TRUE(v5) << v5.error().message();
    EXPECT_EQ(v5->rope_theta, 20.0);
    EXPECT_EQ(v5->rope_type, "default");
    EXPECT_EQ(v5->rope_parameters().member("rope_theta").as_double(), 20.0);
    // rope_scaling's "type" stands for rope_type
    auto linear = parse(with(qwen2, "\"rope_theta\": 1000000.0", "\"rope_theta\": 1000000.0, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}"));
    ASSERT_TRUE(linear) << linear.error().message();
    EXPECT_EQ(linear->rope_type, "linear");
    EXPECT_EQ(linear->rope_theta, 1e6);
    // rope_parameters: null hides rope_scaling (hparams.get("rope_parameters", ...) or {})
    auto hidden = parse(with(qwen2, "\"rope_theta\": 1000000.0", "\"rope_theta\": 1000000.0, \"rope_parameters\": null, \"rope_scaling\": {\"type\": \"yarn\"}"));
    ASSERT_TRUE(hidden) << hidden.error().message();
    EXPECT_FALSE(hidden->rope_type);
    EXPECT_EQ(hidden->rope_parameters().kind(), cv::json_kind::absent);
    // sections: full_attention's own values, no fallback to the root
    auto sections = parse(with(qwen2, "\"rope_theta\": 1000000.0", "\"rope_theta\": 5.0, \"rope_parameters\": {\"full_attention\": {\"rope_type\": \"default\"}, \"sliding_attention\": {\"rope_theta\": 7.0}}"));
    ASSERT_TRUE(sections) << sections.error().message();
    EXPECT_FALSE(sections->rope_theta);
    EXPECT_EQ(sections->rope_type, "default");
    // no rope_theta anywhere: absent (llama.cpp's default applies)
    auto none = parse(with(qwen2, "\"rope_theta\": 1000000.0,", ""));
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_FALSE(none->rope_theta);
}

TEST(HfConfig, ExpertFields) {
    const std::string no_experts = with(qwen3_moe, "\"num_experts\": 128,", "");
    EXPECT_TRUE(error_is(error_of(parse(no_experts)), {bad, section::metadata, 0, {}, {}, "num_experts"}));
    const std::string too_many = with(qwen3_moe, "\"num_experts_per_tok\": 8", "\"num_experts_per_tok\": 129");
    EXPECT_TRUE(error_is(error_of(parse(too_many)), {bad, section::metadata, at(too_many, "129"), 128, 129, "num_experts_per_tok"}));
    const std::string no_moe_ffn = with(qwen3_moe, "\"moe_intermediate_size\": 768,", "");
    EXPECT_TRUE(error_is(error_of(parse(no_moe_ffn)), {bad, section::metadata, 0, {}, {}, "moe_intermediate_size"}));
    const std::string layer = with(qwen3_moe, "\"mlp_only_layers\": []", "\"mlp_only_layers\": [0, 48]");
    EXPECT_TRUE(error_is(error_of(parse(layer)), {bad, section::metadata, at(layer, "48]"), 48, 48, "mlp_only_layers"}));
    auto dense_layers = parse(with(qwen3_moe, "\"mlp_only_layers\": []", "\"mlp_only_layers\": [0, 47]"));
    ASSERT_TRUE(dense_layers) << dense_layers.error().message();
    EXPECT_EQ(dense_layers->mlp_only_layers, (std::vector<std::uint32_t>{0, 47}));
    // the alias of Mixtral-style configs
    auto local = parse(with(qwen3_moe, "\"num_experts\": 128", "\"num_local_experts\": 128"));
    ASSERT_TRUE(local) << local.error().message();
    EXPECT_EQ(local->num_experts, 128u);
}

TEST(HfConfig, QuantizedCheckpointsAreFlagged) {
    auto c = parse(with(llama, "\"attention_bias\": false", "\"attention_bias\": false, \"quantization_config\": {\"quant_method\": \"fp8\"}"));
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_TRUE(c->has_quantization_config);
    EXPECT_EQ(c->raw().member("quantization_config").member("quant_method").as_string(), "fp8");
}

TEST(HfConfig, JsonValueAccessorsNeverFail) {
    auto c = parse(R"({"architectures": ["Qwen2ForCausalLM"], "vocab_size": 8, "hidden_size": 8, "intermediate_size": 8,
      "num_attention_heads": 2, "num_hidden_layers": 1, "max_position_embeddings": 8, "rms_norm_eps": 1e-6,
      "n": -5, "big": 18446744073709551615, "f": 1.5, "s": "x\u00e9", "a": [1, "two", null], "o": {"k": {"k2": true}}})");
    ASSERT_TRUE(c) << c.error().message();
    const cv::json_value raw = c->raw();
    EXPECT_EQ(raw.member("n").as_int(), -5);
    EXPECT_FALSE(raw.member("n").as_uint());
    EXPECT_EQ(raw.member("big").as_uint(), 18446744073709551615u);
    EXPECT_FALSE(raw.member("big").as_int());
    EXPECT_FALSE(raw.member("f").as_int());
    EXPECT_EQ(raw.member("f").as_double(), 1.5);
    EXPECT_FALSE(raw.member("f").is_integer());
    EXPECT_EQ(raw.member("s").as_string(), "x\xC3\xA9");
    EXPECT_EQ(raw.member("a").size(), 3u);
    EXPECT_EQ(raw.member("a").at(1).as_string(), "two");
    EXPECT_EQ(raw.member("a").at(2).kind(), cv::json_kind::null);
    EXPECT_TRUE(raw.member("a").at(2).is_none());
    EXPECT_FALSE(raw.member("a").at(3).present());
    EXPECT_EQ(raw.member("o").member("k").member("k2").as_bool(), true);
    EXPECT_EQ(raw.member("o").key_at(0), "k");
    EXPECT_EQ(raw.member("o").key_at(1), "");
    // a chain through absent or wrong-kind values stays absent
    EXPECT_FALSE(raw.member("absent").member("k").at(0).as_string());
    EXPECT_FALSE(raw.member("s").member("k").present());
    EXPECT_FALSE(raw.member("a").member("k").present());
    EXPECT_FALSE(raw.member("s").as_double());
    EXPECT_EQ(cv::json_value().kind(), cv::json_kind::absent);
    EXPECT_EQ(cv::json_value().offset(), 0u);
    EXPECT_EQ(cv::describe(cv::json_kind::object), "an object");
    // copies share the document
    const cv::hf_config copy = *c;
    EXPECT_EQ(copy.raw().member("n").as_int(), -5);
}

}  // namespace
