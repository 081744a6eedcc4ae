// convert::build_spm_vocab: the vocabulary convert_hf_to_gguf.py writes for a SentencePiece checkpoint.
//
// Self-contained: checkpoints whose tokenizer.model is built here byte by byte (tests/convert/
// protobuf_bytes.hpp) with a handful of pieces of each type and byte_fallback on, beside
// tokenizer_config.json, added_tokens.json and chat templates written here; each expectation worked
// out by hand from the reference's rules (minfer/convert/spm_vocab.hpp), which the comments name.
// (The checkpoint of AHandBuiltCheckpointByTheReferencesRules, with Tiny-Llama-SPM's weights, and its
// variants with chat_template.jinja + additional_chat_templates/, CRLF lines, add_sep_token, vocab_size
// 49152 and 32016 were also run through the reference converter once: its tokens, scores, types, keys
// and warnings are these.)
//
// Against the reference itself, when MINFER_CONVERT_MODELS names tests/convert/make_models.py's output
// (build/convert-models) and MINFER_CONVERT_REF_OUT a folder of the reference converter's outputs,
// <model>.gguf for each SentencePiece model (docs/CONVERT_REFERENCE.md says how to make them); without
// them those tests skip, saying so.
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "minfer/convert/errors.hpp"
#include "minfer/convert/hf_config.hpp"
#include "minfer/convert/sentencepiece_model.hpp"
#include "minfer/convert/spm_vocab.hpp"
#include "minfer/gguf/model.hpp"
#include "protobuf_bytes.hpp"
#include "safetensors_bytes.hpp"

namespace {

using namespace minfer::test;
namespace cv = minfer::convert;
namespace gg = minfer::gguf;
using minfer::gguf::section;

void write_text(const std::filesystem::path& p, std::string_view text) {
    write_file(p, std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

std::uint64_t at(std::string_view text, std::string_view needle) {
    const std::size_t i = text.find(needle);
    EXPECT_NE(i, std::string_view::npos) << needle;
    return i;
}

// A config.json of the architecture, with `extra` members appended.
std::string config_text(std::uint32_t vocab_size, std::string_view extra = "", std::string_view arch = "LlamaForCausalLM") {
    std::string t = R"({"architectures": [")" + std::string(arch) +
                    R"("], "hidden_size": 64, "intermediate_size": 128, "max_position_embeddings": 4096,
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
        "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "vocab_size": )" +
                    std::to_string(vocab_size);
    if (!extra.empty()) t += ", " + std::string(extra);
    return t + "}";
}

cv::hf_config config_of(const std::string& text) {
    auto c = cv::parse_hf_config(text, "config.json");
    EXPECT_TRUE(c) << c.error().message();
    return *c;
}

// The hand-built tokenizer.model: 264 pieces, byte_fallback on.
//   0 <unk> UNKNOWN, 1 <s> CONTROL, 2 </s> CONTROL, 3..258 <0x00>..<0xFF> BYTE,
//   259 "▁t" -1.5, 260 "he" -2.25 (NORMAL), 261 "<tool>" USER_DEFINED, 262 "[UNUSED]" UNUSED -7,
//   263 "▁the" -0.0 (a negative zero: its bits must survive)
constexpr std::size_t hand_pieces = 264;
std::string hand_model() {
    spm_model_builder b;
    b.piece("<unk>", 0, spm_type::unknown).piece("<s>", 0, spm_type::control).piece("</s>", 0, spm_type::control);
    b.byte_pieces().byte_fallback(true);
    b.piece("\xE2\x96\x81t", -1.5f).piece("he", -2.25f).piece("<tool>", 0, spm_type::user_defined);
    b.piece("[UNUSED]", -7.0f, spm_type::unused).piece("\xE2\x96\x81the", -0.0f);
    return b.bytes();
}

struct checkpoint_dir {
    temp_dir dir;
    std::filesystem::path path() const { return dir.path(); }
    checkpoint_dir& file(const std::string& name, std::string_view text) {
        std::filesystem::create_directories((dir.path() / name).parent_path());
        write_text(dir.path() / name, text);
        return *this;
    }
    checkpoint_dir& model(const std::string& bytes) { return file("tokenizer.model", bytes); }
};

// Every key as "name=value" (arrays by name), in order: what a reader of the GGUF would list.
std::vector<std::string> listed(const std::vector<cv::vocab_key>& keys) {
    std::vector<std::string> out;
    for (const cv::vocab_key& k : keys) {
        std::string v;
        if (const auto* s = std::get_if<std::string>(&k.value)) v = "'" + *s + "'";
        if (const auto* u = std::get_if<std::uint32_t>(&k.value)) v = std::to_string(*u);
        if (const auto* b = std::get_if<bool>(&k.value)) v = *b ? "true" : "false";
        if (const auto* a = std::get_if<cv::vocab_array>(&k.value))
            v = *a == cv::vocab_array::tokens ? "[tokens]" : *a == cv::vocab_array::scores ? "[scores]" : "[token_types]";
        if (const auto* l = std::get_if<std::vector<std::string>>(&k.value)) {
            v = "[";
            for (const std::string& s : *l) v += (v.size() > 1 ? "," : "") + s;
            v += "]";
        }
        out.push_back(k.name + "=" + v);
    }
    return out;
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

constexpr auto normal = static_cast<std::int32_t>(cv::token_type::normal);
constexpr auto unknown = static_cast<std::int32_t>(cv::token_type::unknown);
constexpr auto control = static_cast<std::int32_t>(cv::token_type::control);
constexpr auto user_defined = static_cast<std::int32_t>(cv::token_type::user_defined);
constexpr auto unused = static_cast<std::int32_t>(cv::token_type::unused);
constexpr auto byte = static_cast<std::int32_t>(cv::token_type::byte);

const char* const hand_tokenizer_config = R"({
  "add_bos_token": true,
  "add_eos_token": false,
  "add_prefix_space": false,
  "add_unk_token": true,
  "added_tokens_decoder": {
    "0": {"content": "<unk>", "special": true},
    "262": {"content": "\u2581spaced\u2581word", "special": false},
    "261": {"content": "<unused9>", "special": false},
    "265": {"content": "<extra>"},
    "266": {"content": "<|im_end|>", "special": false},
    "999": {"content": "<far>", "special": true}
  },
  "bos_token": "<s>",
  "chat_template": "{{ messages }}",
  "model_max_length": 1000000000000000019884624838656
})";

TEST(SpmVocab, AHandBuiltCheckpointByTheReferencesRules) {
    checkpoint_dir d;
    d.model(hand_model())
        .file("tokenizer_config.json", hand_tokenizer_config)
        .file("added_tokens.json", R"({"<|im_start|>": 264, "<extra>": 265, "<far>": 300})")
        .file("special_tokens_map.json", R"({"bos_token": "<nothing read here>"})");
    // V = 268 (vocab_size): pieces 0..263, then ids 264..267 start as padding
    const cv::hf_config cfg = config_of(config_text(
        268, R"("bos_token_id": 1, "eos_token_id": 2, "unk_token_id": 0, "pad_token_id": 0, "cls_token_id": 5,
                "mask_token_id": 400, "sep_token_id": [3])"));
    auto v = cv::build_spm_vocab(d.path(), cfg);
    ASSERT_TRUE(v) << v.error().message();
    ASSERT_EQ(v->tokens.size(), 268u);
    ASSERT_EQ(v->scores.size(), 268u);
    ASSERT_EQ(v->token_types.size(), 268u);
    EXPECT_EQ(v->pieces, hand_pieces);

    struct token {
        std::size_t id;
        std::string text;
        float score;
        std::int32_t type;
    };
    const std::vector<token> expected{
        // added_tokens_decoder "0": special → CONTROL (not UNKNOWN any more), score -1000; same text, no warning
        {0, "<unk>", -1000.0f, control},
        // pieces: text, the file's score, IsControl → CONTROL
        {1, "<s>", 0.0f, control},
        {2, "</s>", 0.0f, control},
        // IsByte → BYTE
        {3, "<0x00>", 0.0f, byte},
        {3 + 0x41, "<0x41>", 0.0f, byte},
        {258, "<0xFF>", 0.0f, byte},
        // NORMAL pieces keep text and score
        {259, "\xE2\x96\x81t", -1.5f, normal},
        {260, "he", -2.25f, normal},
        // "261": special false but "<unused…>" looks special → CONTROL, -1000 (replaces "<tool>": a warning)
        {261, "<unused9>", -1000.0f, control},
        // "262": not special, not special-looking → USER_DEFINED with U+2581 → ' '; the UNUSED piece it
        // replaces gives no warning (the rule compares only ids that are not UNUSED)
        {262, " spaced word", -1000.0f, user_defined},
        // the piece's -0.0 (its sign bit checked below)
        {263, "\xE2\x96\x81the", -0.0f, normal},
        // added_tokens.json: USER_DEFINED, -1000, even for a special-looking text (only the decoder looks)
        {264, "<|im_start|>", -1000.0f, user_defined},
        // added_tokens.json, then the decoder without "special" and not special-looking: USER_DEFINED
        {265, "<extra>", -1000.0f, user_defined},
        // padding "[PAD266]" replaced by the decoder: special-looking "<|…|>" → CONTROL
        {266, "<|im_end|>", -1000.0f, control},
        // untouched padding: "[PAD<id>]", -10000, UNUSED
        {267, "[PAD267]", -10000.0f, unused},
    };
    for (const token& t : expected) {
        EXPECT_EQ(v->tokens[t.id], t.text) << t.id;
        EXPECT_EQ(bits(v->scores[t.id]), bits(t.score)) << t.id << ": " << v->scores[t.id];
        EXPECT_EQ(v->token_types[t.id], t.type) << t.id;
    }
    // a USER_DEFINED piece is NORMAL in the GGUF (the Python API has no IsUserDefined test in the rule)
    // — 261 was one before the decoder replaced it; build one without the decoder to see it
    checkpoint_dir plain;
    plain.model(hand_model());
    auto p = cv::build_spm_vocab(plain.path(), config_of(config_text(264)));
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(p->tokens[261], "<tool>");
    EXPECT_EQ(p->token_types[261], normal);
    EXPECT_EQ(p->token_types[262], unused);  // IsUnused → UNUSED, with the piece's score
    EXPECT_EQ(p->scores[262], -7.0f);
    EXPECT_EQ(p->token_types[0], unknown);   // IsUnknown → UNKNOWN, without the decoder

    // the keys, in the reference's order: add_space_prefix (LlamaModel, before the vocabulary), the
    // vocabulary, SpecialVocab's ids in type order (config.json; cls has no key; mask 400 ≥ V dropped;
    // sep given as a list is ignored), add_bos/add_eos (add_unk has no key), the chat template
    EXPECT_EQ(listed(v->keys),
              (std::vector<std::string>{"tokenizer.ggml.add_space_prefix=false", "tokenizer.ggml.model='llama'",
                                        "tokenizer.ggml.pre='default'", "tokenizer.ggml.tokens=[tokens]",
                                        "tokenizer.ggml.scores=[scores]", "tokenizer.ggml.token_type=[token_types]",
                                        "tokenizer.ggml.bos_token_id=1", "tokenizer.ggml.eos_token_id=2",
                                        "tokenizer.ggml.unknown_token_id=0", "tokenizer.ggml.padding_token_id=0",
                                        "tokenizer.ggml.add_bos_token=true", "tokenizer.ggml.add_eos_token=false",
                                        "tokenizer.chat_template='{{ messages }}'"}));
    // what the reference logs: the ids past V, the replaced token, the dropped special types
    const std::vector<std::string> warnings{
        "ignore token 300: id is out of range, max=267",
        "replacing token 261: '<tool>' -> '<unused9>'",
        "ignore token 999: id is out of range, max=267",
        "Special token type mask, id 400 out of range, must be under 268 - skipping",
        "No handler for special token type cls with id 5 - skipping",
        "No handler for add_unk_token with value True - skipping",
    };
    EXPECT_EQ(v->warnings, warnings);
}

// V below the pieces: the ones past it are dropped (one warning), and what is added past it too.
TEST(SpmVocab, AVocabularySmallerThanThePieces) {
    checkpoint_dir d;
    d.model(hand_model()).file("added_tokens.json", R"({"<x>": 261, "<y>": 262})");
    auto v = cv::build_spm_vocab(d.path(), config_of(config_text(262)));
    ASSERT_TRUE(v) << v.error().message();
    ASSERT_EQ(v->tokens.size(), 262u);
    EXPECT_EQ(v->tokens[260], "he");
    EXPECT_EQ(v->tokens[261], "<x>");
    EXPECT_EQ(v->token_types[261], user_defined);
    EXPECT_EQ(v->warnings, (std::vector<std::string>{"ignore tokens from 262: id is out of range, max=261",
                                                     "ignore token 262: id is out of range, max=261"}));
    // no tokenizer_config.json: no add_* and no chat template; config.json gave no ids
    EXPECT_EQ(listed(v->keys), (std::vector<std::string>{"tokenizer.ggml.model='llama'", "tokenizer.ggml.pre='default'",
                                                         "tokenizer.ggml.tokens=[tokens]", "tokenizer.ggml.scores=[scores]",
                                                         "tokenizer.ggml.token_type=[token_types]"}));
}

// Qwen2Model takes the same path without LlamaModel's additions; Qwen3-MoE never reads tokenizer.model.
TEST(SpmVocab, TheArchitecturesThatReadTokenizerModel) {
    checkpoint_dir d;
    d.model(hand_model()).file("tokenizer_config.json", R"({"add_prefix_space": true, "add_eos_token": true})");
    for (const char* arch : {"Qwen2ForCausalLM", "Qwen3ForCausalLM"}) {
        auto v = cv::build_spm_vocab(d.path(), config_of(config_text(49152, "", arch)));
        ASSERT_TRUE(v) << arch << ": " << v.error().message();
        // no add_space_prefix, no Granite rule for 49152
        EXPECT_EQ(listed(v->keys).front(), "tokenizer.ggml.model='llama'") << arch;
        EXPECT_EQ(listed(v->keys).back(), "tokenizer.ggml.add_eos_token=true") << arch;
    }
    auto v = cv::build_spm_vocab(d.path(), config_of(config_text(300, "", "MistralForCausalLM")));
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(listed(v->keys).front(), "tokenizer.ggml.add_space_prefix=true");
    auto moe = error_of(cv::build_spm_vocab(d.path(), config_of(config_text(300, "", "Qwen3MoeForCausalLM"))));
    EXPECT_TRUE(error_is(moe, {cv::codes::unsupported_tokenizer, section::file, 0, {}, {}, "Qwen3MoeForCausalLM"}));
}

// CodeLlama (vocab_size 32016) and Granite (49152), LlamaModel's own rules after the vocabulary.
TEST(SpmVocab, LlamaModelsSpecialSizes) {
    checkpoint_dir d;
    d.model(hand_model()).file("tokenizer_config.json", R"({"add_bos_token": true, "chat_template": "t"})");
    auto code = cv::build_spm_vocab(d.path(), config_of(config_text(32016)));
    ASSERT_TRUE(code) << code.error().message();
    EXPECT_EQ(listed(code->keys).back(), "tokenizer.ggml.eot_token_id=32010");  // after the chat template
    // the reference's second SpecialVocab: prefix, suffix and middle have no GGUF key
    EXPECT_EQ(code->warnings, (std::vector<std::string>{"No handler for special token type prefix with id 32007 - skipping",
                                                        "No handler for special token type suffix with id 32008 - skipping",
                                                        "No handler for special token type middle with id 32009 - skipping"}));
    auto given = cv::build_spm_vocab(d.path(), config_of(config_text(32016, R"("eot_token_id": 7)")));
    ASSERT_TRUE(given) << given.error().message();
    EXPECT_EQ(listed(given->keys).back(), "tokenizer.ggml.eot_token_id=7");
    auto ignored = cv::build_spm_vocab(d.path(), config_of(config_text(32016, R"("eot_token_id": "7")")));
    ASSERT_TRUE(ignored) << ignored.error().message();
    EXPECT_EQ(listed(ignored->keys).back(), "tokenizer.ggml.eot_token_id=32010");  // not an int: 32010
    const std::string negative = config_text(32016, R"("eot_token_id": -1)");
    EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(d.path(), config_of(negative))),
                         {cv::codes::bad_model_config, section::metadata, at(negative, "-1"), {}, {}, "eot_token_id"}));

    // Granite: add_bos_token false, in the place of the one tokenizer_config.json gave
    auto granite = cv::build_spm_vocab(d.path(), config_of(config_text(49152)));
    ASSERT_TRUE(granite) << granite.error().message();
    const auto keys = listed(granite->keys);
    EXPECT_EQ(keys[keys.size() - 2], "tokenizer.ggml.add_bos_token=false");
    EXPECT_EQ(keys.back(), "tokenizer.chat_template='t'");
    EXPECT_EQ(granite->warnings, (std::vector<std::string>{"Duplicated key name 'tokenizer.ggml.add_bos_token', "
                                                           "overwriting it with new value False of type BOOL"}));
    // and appended when there was none
    checkpoint_dir bare;
    bare.model(hand_model());
    auto appended = cv::build_spm_vocab(bare.path(), config_of(config_text(49152)));
    ASSERT_TRUE(appended) << appended.error().message();
    EXPECT_EQ(listed(appended->keys).back(), "tokenizer.ggml.add_bos_token=false");
    EXPECT_TRUE(appended->warnings.empty());
}

TEST(SpmVocab, ChatTemplatesFromEachPlace) {
    // chat_template.jinja read as Python reads text: "\r\n" and "\r" become "\n"
    checkpoint_dir jinja;
    jinja.model(hand_model()).file("tokenizer_config.json", R"({"add_bos_token": true})")
        .file("chat_template.jinja", "a\r\nb\rc\n\xE2\x96\x81");
    auto j = cv::build_spm_vocab(jinja.path(), config_of(config_text(300)));
    ASSERT_TRUE(j) << j.error().message();
    EXPECT_EQ(listed(j->keys).back(), "tokenizer.chat_template='a\nb\nc\n\xE2\x96\x81'");
    // tokenizer_config.json's chat_template wins, even null (then none)
    jinja.file("tokenizer_config.json", R"({"add_bos_token": true, "chat_template": null})");
    auto none = cv::build_spm_vocab(jinja.path(), config_of(config_text(300)));
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_EQ(listed(none->keys).back(), "tokenizer.ggml.add_bos_token=true");
    // an empty tokenizer_config.json ({}): SpecialVocab stops before the template and add_*
    jinja.file("tokenizer_config.json", "{}");
    auto empty = cv::build_spm_vocab(jinja.path(), config_of(config_text(300, R"("bos_token_id": 1)")));
    ASSERT_TRUE(empty) << empty.error().message();
    EXPECT_EQ(listed(empty->keys).back(), "tokenizer.ggml.bos_token_id=1");

    // chat_template.json without a .jinja
    checkpoint_dir json;
    json.model(hand_model()).file("tokenizer_config.json", R"({"x": 1})")
        .file("chat_template.json", R"({"chat_template": "from json"})");
    auto js = cv::build_spm_vocab(json.path(), config_of(config_text(300)));
    ASSERT_TRUE(js) << js.error().message();
    EXPECT_EQ(listed(js->keys).back(), "tokenizer.chat_template='from json'");

    // the list form: additional_chat_templates/*.jinja beside chat_template.jinja (names sorted here)
    checkpoint_dir many;
    many.model(hand_model()).file("tokenizer_config.json", R"({"x": 1})").file("chat_template.jinja", "main")
        .file("additional_chat_templates/tool-use.jinja", "tools")
        .file("additional_chat_templates/rag.jinja", "rag")
        .file("additional_chat_templates/notes.txt", "not a template");
    auto m = cv::build_spm_vocab(many.path(), config_of(config_text(300)));
    ASSERT_TRUE(m) << m.error().message();
    const auto keys = listed(m->keys);
    ASSERT_GE(keys.size(), 4u);
    EXPECT_EQ(std::vector<std::string>(keys.end() - 4, keys.end()),
              (std::vector<std::string>{"tokenizer.chat_template.rag='rag'", "tokenizer.chat_template.tool_use='tools'",
                                        "tokenizer.chat_templates=[rag,tool_use]", "tokenizer.chat_template='main'"}));

    // the list form in tokenizer_config.json: each character of a name outside [A-Za-z0-9] becomes '_'
    // (one per code point: "éé" is "__"), entries without a name or a template skipped, a repeated name
    // written once (its last template)
    checkpoint_dir listed_in_config;
    listed_in_config.model(hand_model()).file("tokenizer_config.json", R"({"chat_template": [
        {"name": "default", "template": "D"}, {"name": "tool use", "template": "T1"}, {"template": "no name"},
        {"name": "rag"}, {"name": "tool\u00e9\u00e9use", "template": "T2"}, {"name": "tool use", "template": "T3"}]})");
    auto l = cv::build_spm_vocab(listed_in_config.path(), config_of(config_text(300)));
    ASSERT_TRUE(l) << l.error().message();
    const auto lk = listed(l->keys);
    EXPECT_EQ(std::vector<std::string>(lk.end() - 4, lk.end()),
              (std::vector<std::string>{"tokenizer.chat_template.tool_use='T3'", "tokenizer.chat_template.tool__use='T2'",
                                        "tokenizer.chat_templates=[tool_use,tool__use]", "tokenizer.chat_template='D'"}));

    // a chat_template of another kind is ignored, with the reference's warning
    checkpoint_dir number;
    number.model(hand_model()).file("tokenizer_config.json", R"({"chat_template": 5})");
    auto n = cv::build_spm_vocab(number.path(), config_of(config_text(300)));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(listed(n->keys).back(), "tokenizer.ggml.token_type=[token_types]");
    ASSERT_EQ(n->warnings.size(), 1u);
    EXPECT_NE(n->warnings[0].find("Bad type for chat_template"), std::string::npos) << n->warnings[0];
}

// ---- refusals ---------------------------------------------------------------------------------------

TEST(SpmVocab, CheckpointsThatAreNotSentencePieceOnes) {
    checkpoint_dir none;
    none.file("tokenizer.json", "{}");
    EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(none.path(), config_of(config_text(300)))),
                         {cv::codes::unsupported_tokenizer, section::file, 0, {}, {}, "tokenizer.model"}));
    EXPECT_FALSE(cv::has_sentencepiece_model(none.path()));
    // a folder called tokenizer.model is not a file (Path.is_file())
    std::filesystem::create_directory(none.path() / "tokenizer.model");
    EXPECT_FALSE(cv::has_sentencepiece_model(none.path()));
    EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(none.path(), config_of(config_text(300)))),
                         {cv::codes::unsupported_tokenizer, section::file, 0, {}, {}, "tokenizer.model"}));

    checkpoint_dir both;
    both.model(hand_model()).file("tokenizer.json", "{}");
    EXPECT_TRUE(cv::has_sentencepiece_model(both.path()));
    auto e = error_of(cv::build_spm_vocab(both.path(), config_of(config_text(300))));
    EXPECT_TRUE(error_is(e, {cv::codes::unsupported_tokenizer, section::file, 0, {}, {}, "tokenizer.json"}));
    EXPECT_EQ(e.file, (both.path() / "tokenizer.json").string());

    checkpoint_dir tekken;
    tekken.model(hand_model()).file("tekken.json", "{}");
    EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(tekken.path(), config_of(config_text(300)))),
                         {cv::codes::unsupported_tokenizer, section::file, 0, {}, {}, "tekken.json"}));

    checkpoint_dir dna;
    dna.model(hand_model()).file("tokenizer_config.json", R"({"tokenizer_class": "HybridDNATokenizer"})");
    EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(dna.path(), config_of(config_text(300)))),
                         {cv::codes::unsupported_tokenizer, section::file, 0, {}, {}, "tokenizer_class"}));
}

TEST(SpmVocab, ABrokenTokenizerModelNamesItsFile) {
    checkpoint_dir d;
    d.model(std::string("\x0A\x05\x41", 3));
    auto e = error_of(cv::build_spm_vocab(d.path(), config_of(config_text(300))));
    EXPECT_TRUE(error_is(e, {cv::codes::bad_tokenizer, section::metadata, 1, 1, 5, "pieces"}));
    EXPECT_EQ(e.file, (d.path() / "tokenizer.model").string());
}

TEST(SpmVocab, TokenizerFilesOfTheWrongShape) {
    constexpr auto bad = cv::codes::bad_tokenizer;
    const auto refused = [](const std::string& file, const std::string& text, std::uint64_t offset, std::string subject,
                            const std::string& config = config_text(300)) {
        checkpoint_dir d;
        d.model(hand_model()).file(file, text);
        const gg::error e = error_of(cv::build_spm_vocab(d.path(), config_of(config)));
        EXPECT_EQ(e.file, (d.path() / file).string()) << text;
        return error_is(e, {bad, section::metadata, offset, {}, {}, std::move(subject)});
    };
    // not JSON, not an object
    EXPECT_TRUE(refused("tokenizer_config.json", "{\"a\": 1,}", 8, ""));
    EXPECT_TRUE(refused("tokenizer_config.json", " [1]", 1, ""));
    EXPECT_TRUE(refused("added_tokens.json", "[\"<a>\"]", 0, ""));
    // added_tokens.json: ids that are not non-negative integers (a negative one would index from the end)
    for (const char* id : {"-1", "1.5", "true", "\"5\"", "null"}) {
        const std::string text = std::string(R"({"<a>": 260, "<b>": )") + id + "}";
        EXPECT_TRUE(refused("added_tokens.json", text, at(text, id), "<b>")) << id;
    }
    // added_tokens_decoder: keys int() would read differently or not at all, entries without content
    for (const char* key : {"+5", " 5", "-1", "", "5x", "\u0665"}) {
        const std::string text = std::string(R"({"added_tokens_decoder": {")") + key + R"(": {"content": "a"}}})";
        EXPECT_TRUE(refused("tokenizer_config.json", text, at(text, "{\"content"), "added_tokens_decoder")) << key;
    }
    const std::string no_content = R"({"added_tokens_decoder": {"5": {"special": true}}})";
    EXPECT_TRUE(refused("tokenizer_config.json", no_content, at(no_content, "{\"special"), "added_tokens_decoder"));
    const std::string number_content = R"({"added_tokens_decoder": {"5": {"content": 5}}})";
    EXPECT_TRUE(refused("tokenizer_config.json", number_content, at(number_content, "5}"), "added_tokens_decoder"));
    const std::string special_text = R"({"added_tokens_decoder": {"5": {"content": "a", "special": "yes"}}})";
    EXPECT_TRUE(refused("tokenizer_config.json", special_text, at(special_text, "\"yes"), "added_tokens_decoder"));
    const std::string decoder_list = R"({"added_tokens_decoder": []})";
    EXPECT_TRUE(refused("tokenizer_config.json", decoder_list, at(decoder_list, "[]"), "added_tokens_decoder"));
    const std::string entry_list = R"({"added_tokens_decoder": {"5": ["a"]}})";
    EXPECT_TRUE(refused("tokenizer_config.json", entry_list, at(entry_list, "[\"a"), "added_tokens_decoder"));
    // add_prefix_space: Python writes any value's truthiness; a bool only here (Llama's rule)
    const std::string prefix = R"({"add_prefix_space": "false"})";
    EXPECT_TRUE(refused("tokenizer_config.json", prefix, at(prefix, "\"false"), "add_prefix_space"));
    // chat template lists: items are objects of string name and template
    const std::string item = R"({"chat_template": ["t"]})";
    EXPECT_TRUE(refused("tokenizer_config.json", item, at(item, "\"t\""), "chat_template"));
    const std::string name = R"({"chat_template": [{"name": 1, "template": "t"}]})";
    EXPECT_TRUE(refused("tokenizer_config.json", name, at(name, "1,"), "chat_template"));
    const std::string text = R"({"chat_template": [{"name": "a", "template": ["t"]}]})";
    EXPECT_TRUE(refused("tokenizer_config.json", text, at(text, "[\"t\"]"), "chat_template"));
    // chat_template.json must be an object; a .jinja must be UTF-8
    {
        checkpoint_dir d;
        d.model(hand_model()).file("tokenizer_config.json", R"({"x": 1})").file("chat_template.json", "\"t\"");
        EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(d.path(), config_of(config_text(300)))),
                             {bad, section::metadata, 0, {}, {}, ""}));
        d.file("chat_template.jinja", "ok\xFFno");
        const gg::error e = error_of(cv::build_spm_vocab(d.path(), config_of(config_text(300))));
        EXPECT_TRUE(error_is(e, {bad, section::metadata, 2, {}, {}, ""}));
        EXPECT_EQ(e.file, (d.path() / "chat_template.jinja").string());
        // a folder matching additional_chat_templates/*.jinja: the reference fails opening it
        d.file("chat_template.jinja", "ok");
        std::filesystem::create_directories(d.path() / "additional_chat_templates" / "dir.jinja");
        EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(d.path(), config_of(config_text(300)))), {bad, section::file}));
    }
    // a file above the cap (sparse)
    {
        checkpoint_dir d;
        d.model(hand_model()).file("added_tokens.json", "");
        std::filesystem::resize_file(d.path() / "added_tokens.json", cv::tokenizer_file_max_bytes + 1);
        EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(d.path(), config_of(config_text(300)))),
                             {bad, section::file, {}, cv::tokenizer_file_max_bytes, cv::tokenizer_file_max_bytes + 1}));
    }
}

TEST(SpmVocab, TheVocabularySizeItIsGiven) {
    checkpoint_dir d;
    d.model(hand_model());
    // vocab_size_per_layer_input comes first in the reference's key list: refused when it differs
    const std::string per_layer = config_text(300, R"("vocab_size_per_layer_input": 262)");
    EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(d.path(), config_of(per_layer))),
                         {cv::codes::bad_model_config, section::metadata, at(per_layer, "262"), {}, {},
                          "vocab_size_per_layer_input"}));
    const std::string null_per_layer = config_text(300, R"("vocab_size_per_layer_input": null)");
    EXPECT_FALSE(cv::build_spm_vocab(d.path(), config_of(null_per_layer)));
    EXPECT_TRUE(cv::build_spm_vocab(d.path(), config_of(config_text(300, R"("vocab_size_per_layer_input": 300)"))));
    // the cap
    const std::string huge = config_text(cv::spm_vocab_max_tokens + 1);
    EXPECT_TRUE(error_is(error_of(cv::build_spm_vocab(d.path(), config_of(huge))),
                         {cv::codes::bad_model_config, section::metadata, at(huge, "2097153"), cv::spm_vocab_max_tokens,
                          cv::spm_vocab_max_tokens + 1, "vocab_size"}));
}

// ---- the reference converter's outputs ---------------------------------------------------------------

struct reference_env {
    std::filesystem::path models, outputs;
};

std::optional<reference_env> reference() {
    const char* models = std::getenv("MINFER_CONVERT_MODELS");
    const char* outputs = std::getenv("MINFER_CONVERT_REF_OUT");
    if (models == nullptr || outputs == nullptr || *models == '\0' || *outputs == '\0') return std::nullopt;
    return reference_env{models, outputs};
}

constexpr const char* skip_reason =
    "MINFER_CONVERT_MODELS and MINFER_CONVERT_REF_OUT are not both set: the vocabularies are not compared with "
    "convert_hf_to_gguf.py's (MINFER_CONVERT_MODELS: build/convert-models from tests/convert/make_models.py; "
    "MINFER_CONVERT_REF_OUT: a folder of <model>.gguf made by build/convert-ref/run_convert.py <models>/<model> "
    "--outfile <folder>/<model>.gguf --outtype f32 --model-name 'minfer convert test')";

// Item by item: every tokenizer.* key of the reference's GGUF, in its order, against the vocabulary's.
void compare_with_reference(const cv::spm_vocab& v, const gg::model& ref, const std::string& model) {
    std::vector<const gg::kv*> ref_keys;
    for (const gg::kv& k : ref.metadata().metadata())
        if (k.key.starts_with("tokenizer.")) ref_keys.push_back(&k);
    ASSERT_EQ(ref_keys.size(), v.keys.size()) << model;
    for (std::size_t i = 0; i < ref_keys.size(); ++i) {
        const gg::kv& r = *ref_keys[i];
        const cv::vocab_key& k = v.keys[i];
        ASSERT_EQ(r.key, k.name) << model << " key " << i;
        if (const auto* s = std::get_if<std::string>(&k.value)) {
            ASSERT_EQ(r.type, gg::value_type::string) << k.name;
            EXPECT_EQ(*r.get<std::string_view>(), *s) << k.name;
        } else if (const auto* u = std::get_if<std::uint32_t>(&k.value)) {
            ASSERT_EQ(r.type, gg::value_type::u32) << k.name;
            EXPECT_EQ(*r.get<std::uint32_t>(), *u) << k.name;
        } else if (const auto* b = std::get_if<bool>(&k.value)) {
            ASSERT_EQ(r.type, gg::value_type::boolean) << k.name;
            EXPECT_EQ(*r.get<bool>(), *b) << k.name;
        } else if (const auto* a = std::get_if<cv::vocab_array>(&k.value)) {
            const gg::array_view arr = *r.get<gg::array_view>();
            ASSERT_EQ(arr.size(), v.tokens.size()) << k.name;
            if (*a == cv::vocab_array::tokens) {
                ASSERT_EQ(arr.element_type(), gg::value_type::string);
                std::size_t id = 0;
                for (std::string_view t : arr.strings()) EXPECT_EQ(t, v.tokens[id++]) << model << " token " << id - 1;
            } else if (*a == cv::vocab_array::scores) {
                ASSERT_EQ(arr.element_type(), gg::value_type::f32);
                for (std::size_t id = 0; id < v.scores.size(); ++id)
                    EXPECT_EQ(bits(*arr.at<float>(id)), bits(v.scores[id])) << model << " score " << id;
            } else {
                ASSERT_EQ(arr.element_type(), gg::value_type::i32);
                for (std::size_t id = 0; id < v.token_types.size(); ++id)
                    EXPECT_EQ(*arr.at<std::int32_t>(id), v.token_types[id]) << model << " type " << id;
            }
        } else {
            const auto& list = std::get<std::vector<std::string>>(k.value);
            const gg::array_view arr = *r.get<gg::array_view>();
            ASSERT_EQ(arr.element_type(), gg::value_type::string);
            std::vector<std::string> got;
            for (std::string_view t : arr.strings()) got.emplace_back(t);
            EXPECT_EQ(got, list) << k.name;
        }
    }
}

TEST(SpmVocabReference, EqualsTheReferenceConvertersOutput) {
    const auto env = reference();
    if (!env) GTEST_SKIP() << skip_reason;
    for (const char* model : {"Tiny-Llama-SPM", "Tiny-Llama-SPM-Sharded", "Tiny-Mistral-v0.3-SPM"}) {
        SCOPED_TRACE(model);
        const auto dir = env->models / model;
        auto cfg = cv::read_hf_config(dir / "config.json");
        ASSERT_TRUE(cfg) << cfg.error().message();
        auto v = cv::build_spm_vocab(dir, *cfg);
        ASSERT_TRUE(v) << v.error().message();
        EXPECT_TRUE(v->warnings.empty()) << v->warnings.front();
        auto ref = gg::model::open(env->outputs / (std::string(model) + ".gguf"));
        ASSERT_TRUE(ref) << ref.error().message();
        compare_with_reference(*v, *ref, model);
    }
}

// The BPE checkpoints have no tokenizer.model: refused as not SentencePiece (the reference reads their
// tokenizer.json instead).
TEST(SpmVocabReference, TheBpeCheckpointsAreNotSentencePiece) {
    const auto env = reference();
    if (!env) GTEST_SKIP() << skip_reason;
    for (const char* model : {"Tiny-Llama-3-BPE-Instruct", "Tiny-Llama-3.2-BPE", "Tiny-Qwen2.5-Instruct", "Tiny-Qwen3",
                              "Tiny-Qwen3-BF16", "Tiny-Qwen3-MoE"}) {
        SCOPED_TRACE(model);
        const auto dir = env->models / model;
        auto cfg = cv::read_hf_config(dir / "config.json");
        ASSERT_TRUE(cfg) << cfg.error().message();
        EXPECT_FALSE(cv::has_sentencepiece_model(dir));
        const gg::error e = error_of(cv::build_spm_vocab(dir, *cfg));
        EXPECT_EQ(e.code, cv::codes::unsupported_tokenizer);
        EXPECT_TRUE(e.subject.view() == "tokenizer.model" || e.subject.view() == "Qwen3MoeForCausalLM") << e.message();
    }
}

}  // namespace
