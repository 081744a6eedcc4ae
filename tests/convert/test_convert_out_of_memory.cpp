// minfer::convert with every allocation failing in turn (alloc_fail.hpp: its own executable, since it
// replaces operator new): each reader gives its answer or out_of_memory, never an exception, never
// std::terminate (nlohmann allocates inside the parse; the readers build their errors' texts).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "alloc_fail.hpp"
#include "minfer/convert/bpe_tokenizer.hpp"
#include "minfer/convert/bpe_vocab.hpp"
#include "minfer/convert/checkpoint.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/model_metadata.hpp"
#include "minfer/convert/pre_tokenizer.hpp"
#include "minfer/convert/safetensors.hpp"
#include "minfer/convert/sentencepiece_model.hpp"
#include "minfer/convert/spm_vocab.hpp"
#include "protobuf_bytes.hpp"
#include "safetensors_bytes.hpp"

namespace {

using namespace minfer::test;
namespace cv = minfer::convert;
using minfer::gguf::errc;
using minfer::test::alloc_fail::under_pressure;

template <class R>
errc code_of(const R& r) {
    return r ? errc::ok : r.error().code;
}

errc read_bytes(const bytes& b) {
    auto buffer = std::unique_ptr<std::byte[]>(new (std::nothrow) std::byte[b.size()]);
    if (!buffer) return errc::out_of_memory;
    std::copy(b.begin(), b.end(), buffer.get());
    return code_of(cv::safetensors_file::read(minfer::gguf::mapped_file::adopt(std::move(buffer), b.size()), "t.safetensors"));
}

void write_text(const std::filesystem::path& p, std::string_view text) {
    write_file(p, std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

TEST(ConvertOutOfMemory, Safetensors) {
    safetensors_builder b;
    b.metadata("format", "pt").add("model.embed_tokens.weight", "BF16", {4, 2}, 2).add("w", "F8_E4M3", {2}, 1);
    const bytes valid = b.file();
    under_pressure("safetensors_file::read", [&] { return read_bytes(valid); });
    const bytes overlap = safetensors_file_bytes(
        R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
        filler(12));
    under_pressure("safetensors_file::read (overlap)", [&] { return read_bytes(overlap); }, cv::codes::bad_safetensors);
    const bytes not_json = safetensors_file_bytes(R"({"a":{"dtype":"F32",)", filler(4));
    under_pressure("safetensors_file::read (not JSON)", [&] { return read_bytes(not_json); }, cv::codes::bad_safetensors);
    temp_dir dir;
    const std::filesystem::path path = dir / "m.safetensors";
    write_file(path, valid);
    under_pressure("safetensors_file::open", [&] { return code_of(cv::safetensors_file::open(path)); });
    auto opened = cv::safetensors_file::open(path);
    ASSERT_TRUE(opened);
    under_pressure("check_convertible", [&] { return code_of(opened->check_convertible()); }, cv::codes::unsupported_dtype);
}

TEST(ConvertOutOfMemory, Checkpoint) {
    temp_dir dir;
    safetensors_builder first, second;
    first.add("model.b", "F32", {2}, 4).add("model.a", "F16", {3}, 2);
    second.add("model.c", "BF16", {2, 2}, 2);
    write_file(dir / "model-00001-of-00002.safetensors", first.file());
    write_file(dir / "model-00002-of-00002.safetensors", second.file());
    write_text(dir / "model.safetensors.index.json",
               R"({"metadata": {"total_size": 22}, "weight_map": {"model.c": "model-00002-of-00002.safetensors",
                   "model.a": "model-00001-of-00002.safetensors", "model.b": "model-00001-of-00002.safetensors"}})");
    under_pressure("checkpoint::open (index)", [&] { return code_of(cv::checkpoint::open(dir.path())); });
    std::filesystem::remove(dir / "model.safetensors.index.json");
    under_pressure("checkpoint::open (found)", [&] { return code_of(cv::checkpoint::open(dir.path())); });
    write_text(dir / "model.safetensors.index.json", R"({"weight_map": {"model.a": "../x.safetensors"}})");
    under_pressure("checkpoint::open (traversal)", [&] { return code_of(cv::checkpoint::open(dir.path())); },
                   cv::codes::bad_checkpoint_index);
}

TEST(ConvertOutOfMemory, HfConfig) {
    const std::string config = R"({"architectures": ["Qwen3MoeForCausalLM"], "vocab_size": 151936, "hidden_size": 2048,
      "intermediate_size": 6144, "num_attention_heads": 32, "num_key_value_heads": 4, "num_hidden_layers": 48,
      "max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "rope_parameters": {"rope_theta": 1e6, "rope_type": "default"},
      "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "mlp_only_layers": [0, 1],
      "eos_token_id": [1, 2], "torch_dtype": "bfloat16", "extra": {"nested": [1, {"k": "v"}]}})";
    under_pressure("parse_hf_config", [&] { return code_of(cv::parse_hf_config(config, "config.json")); });
    under_pressure("parse_hf_config (duplicate key)",
                   [&] { return code_of(cv::parse_hf_config(R"({"a": 1, "a": 2})", "config.json")); }, cv::codes::bad_model_config);
    under_pressure("parse_hf_config (unsupported)",
                   [&] { return code_of(cv::parse_hf_config(R"({"architectures": ["GPT2LMHeadModel"]})", "config.json")); },
                   cv::codes::unsupported_architecture);
    temp_dir dir;
    const std::filesystem::path present = dir / "config.json", absent = dir / "absent.json";
    write_text(present, config);
    under_pressure("read_hf_config", [&] { return code_of(cv::read_hf_config(present)); });
    under_pressure("read_hf_config (missing)", [&] { return code_of(cv::read_hf_config(absent)); }, cv::codes::bad_model_config);
}

TEST(ConvertOutOfMemory, ModelMetadata) {
    const std::string card =
        "---\nlicense: [mit, apache-2.0]\nbase_model:\n- Qwen/Qwen3-0.6B-Base\n- https://huggingface.co/org/M-7B-v1\n"
        "- {name: D, repo_url: u}\ndatasets: a/b-v2\ntags: [x, 'y']\npipeline_tag: text-generation\nlanguage:\n- no\n"
        "version: '2'\ndate: 2024-01-02\nmodel-index: [{name: m, results: [{task: {type: t}}]}]\n---\n# Model\n";
    under_pressure("model_card_metadata", [&] { return code_of(cv::model_card_metadata(card, "README.md")); });
    under_pressure("model_card_metadata (not YAML)",
                   [&] { return code_of(cv::model_card_metadata("---\na: [b\n", "README.md")); }, cv::codes::bad_model_card);
    under_pressure("model_card_metadata (wrong type)",
                   [&] { return code_of(cv::model_card_metadata("---\nname: 3\n", "README.md")); }, cv::codes::bad_model_card);
    temp_dir dir;
    const std::filesystem::path model = dir / "Meta-Llama-3.1-8B-Instruct";
    std::filesystem::create_directories(model);
    write_text(model / "config.json", R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 400, "hidden_size": 64,
      "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
      "max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "_name_or_path": "meta-llama/Llama-2-7b-chat-hf"})");
    write_text(model / "README.md", card);
    write_text(model / "generation_config.json", R"({"temperature": 0.6, "top_p": 0.9, "top_k": 20, "sequence": "kt"})");
    auto config = cv::read_hf_config(model / "config.json");
    ASSERT_TRUE(config);
    under_pressure("general_metadata", [&] {
        return code_of(cv::general_metadata(model, *config, cv::parameter_counts{8'000'000'000, 8'000'000'000, 0, 0}, {}));
    });
}

TEST(ConvertOutOfMemory, SentencePiece) {
    spm_model_builder b;
    b.piece("<unk>", 0, spm_type::unknown).piece("<s>", 0, spm_type::control).byte_pieces().byte_fallback(true);
    b.piece("\xE2\x96\x81" "a", -1).piece("b", -2, spm_type::user_defined);
    const std::string model = b.bytes();
    const auto parse = [](const std::string& m) {
        return code_of(cv::parse_sentencepiece_model(std::as_bytes(std::span(m.data(), m.size())), "tokenizer.model"));
    };
    under_pressure("parse_sentencepiece_model", [&] { return parse(model); });
    const std::string twice = model + pb_message().message(1, spm_piece("b")).str();
    under_pressure("parse_sentencepiece_model (duplicate)", [&] { return parse(twice); }, cv::codes::bad_tokenizer);
    const std::string wire = model + "\x08\x01";
    under_pressure("parse_sentencepiece_model (wire type)", [&] { return parse(wire); }, cv::codes::bad_tokenizer);

    temp_dir dir;
    const std::filesystem::path model_path = dir / "tokenizer.model";
    write_text(model_path, model);
    under_pressure("read_sentencepiece_model", [&] { return code_of(cv::read_sentencepiece_model(model_path)); });
    write_text(dir / "tokenizer_config.json", R"({"add_bos_token": true, "add_prefix_space": true,
        "added_tokens_decoder": {"260": {"content": "<|x|>", "special": false}, "262": {"content": "\u2581y"}}})");
    write_text(dir / "added_tokens.json", R"({"<z>": 261, "<far>": 999})");
    write_text(dir / "chat_template.jinja", "a\r\nb");
    std::filesystem::create_directory(dir / "additional_chat_templates");
    write_text(dir / "additional_chat_templates" / "rag.jinja", "rag");
    auto config = cv::parse_hf_config(R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 300, "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "bos_token_id": 1, "cls_token_id": 0})", "config.json");
    ASSERT_TRUE(config);
    under_pressure("build_spm_vocab", [&] { return code_of(cv::build_spm_vocab(dir.path(), *config)); });
    write_text(dir / "added_tokens.json", R"({"<z>": -1})");
    under_pressure("build_spm_vocab (negative id)", [&] { return code_of(cv::build_spm_vocab(dir.path(), *config)); },
                   cv::codes::bad_tokenizer);
    write_text(dir / "tokenizer.json", "{}");
    under_pressure("build_spm_vocab (tokenizer.json)", [&] { return code_of(cv::build_spm_vocab(dir.path(), *config)); },
                   cv::codes::unsupported_tokenizer);
}

TEST(ConvertOutOfMemory, BpeTokenizer) {
    std::ifstream in(std::filesystem::path(MINFER_CONVERT_TEST_DATA) / "bpe_small_gpt2.json", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string json = text.str();
    ASSERT_GT(json.size(), 1000u);
    under_pressure("bpe_tokenizer::parse", [&] { return code_of(cv::bpe_tokenizer::parse(json, "tokenizer.json")); });
    under_pressure("bpe_tokenizer::parse (refused)",
                   [&] { return code_of(cv::bpe_tokenizer::parse(R"({"model": {"type": "Unigram"}})", "t.json")); },
                   cv::codes::unsupported_tokenizer);
    auto t = cv::bpe_tokenizer::parse(json, "tokenizer.json");
    ASSERT_TRUE(t);
    under_pressure("encode", [&] { return code_of(t->encode("the hello <s>x [M] y word <sp> \xF0\x9F\x98\x80", true)); });
    const std::vector<std::uint32_t> ids{273, 256, 32, 161};
    under_pressure("decode", [&] { return code_of(t->decode(ids)); });
    under_pressure("find_pre_tokenizer", [&] { return code_of(cv::find_pre_tokenizer(*t)); }, cv::codes::unsupported_tokenizer);
    temp_dir dir;
    write_text(dir / "tokenizer.json", json);
    write_text(dir / "tokenizer_config.json", R"({"bos_token": "<s>", "add_bos_token": true, "chat_template": "x"})");
    write_text(dir / "config.json", R"({"architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 1, "vocab_size": 280,
        "hidden_size": 8, "intermediate_size": 8, "num_attention_heads": 2, "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6, "eos_token_id": 274})");
    auto config = cv::read_hf_config(dir / "config.json");
    ASSERT_TRUE(config);
    cv::bpe_vocab_options options;
    options.pre = "qwen2";
    under_pressure("bpe_vocab", [&] { return code_of(cv::bpe_vocab(dir.path(), *config, options)); });
}

}  // namespace
