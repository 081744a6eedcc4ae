// convert::bpe_tokenizer and the pre-tokenizer hash: each reader check with a small tokenizer.json
// that trips it; the encoder against Hugging Face tokenizers' Rust core (expected ids recorded in
// tests/convert/data/bpe_expected.jsonl by make_bpe_expected.js: the small tokenizers committed
// beside it always, the real Qwen3 and Llama 3 ones where MINFER_CONVERT_MODELS names the test
// checkpoints); the check-text hashes against convert_hf_to_gguf.py's table.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "minfer/check/digest.hpp"
#include "minfer/convert/bpe_tokenizer.hpp"
#include "minfer/convert/errors.hpp"
#include "minfer/convert/pre_tokenizer.hpp"

namespace {

namespace cv = minfer::convert;
namespace fs = std::filesystem;

const fs::path data_dir = MINFER_CONVERT_TEST_DATA;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The test checkpoints (tests/convert/make_models.py), or empty with the reason to skip.
fs::path models_dir() {
    const char* v = std::getenv("MINFER_CONVERT_MODELS");
    return v != nullptr ? fs::path(v) : fs::path();
}

#define SKIP_WITHOUT_MODELS()                                                                                    \
    if (models_dir().empty())                                                                                    \
    GTEST_SKIP() << "MINFER_CONVERT_MODELS is not set: the real tokenizers (the test checkpoints of "             \
                    "tests/convert/make_models.py, e.g. build/convert-models) are not available"

struct expectation {
    std::string tokenizer;
    bool add_special_tokens = false;
    bool is_decode = false;
    std::string text;
    std::vector<std::uint32_t> ids;
};

const std::vector<expectation>& expectations() {
    static const std::vector<expectation> all = [] {
        std::vector<expectation> out;
        std::ifstream in(data_dir / "bpe_expected.jsonl", std::ios::binary);
        for (std::string line; std::getline(in, line);) {
            if (line.empty()) continue;
            const auto j = nlohmann::json::parse(line);
            expectation e;
            e.tokenizer = j.at("tokenizer").get<std::string>();
            e.text = j.at("text").get<std::string>();
            if (j.contains("decode")) {
                e.is_decode = true;
                e.ids = j.at("decode").get<std::vector<std::uint32_t>>();
            } else {
                e.add_special_tokens = j.at("add_special_tokens").get<bool>();
                e.ids = j.at("ids").get<std::vector<std::uint32_t>>();
            }
            out.push_back(std::move(e));
        }
        return out;
    }();
    return all;
}

cv::bpe_tokenizer must_read(const fs::path& p) {
    auto t = cv::bpe_tokenizer::read(p);
    EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message());
    return t ? *t : cv::bpe_tokenizer();
}

// Every case of one tokenizer; returns {agreed, total}.
std::pair<std::size_t, std::size_t> agree(const cv::bpe_tokenizer& t, std::string_view name) {
    std::size_t agreed = 0, total = 0;
    for (const expectation& e : expectations()) {
        if (e.tokenizer != name) continue;
        ++total;
        if (e.is_decode) {
            auto text = t.decode(e.ids);
            EXPECT_TRUE(text.has_value());
            if (text && *text == e.text) ++agreed;
            else ADD_FAILURE() << name << ": decode differs for " << ::testing::PrintToString(e.ids);
            continue;
        }
        auto ids = t.encode(e.text, e.add_special_tokens);
        EXPECT_TRUE(ids.has_value()) << (ids ? "" : ids.error().message());
        if (ids && *ids == e.ids) ++agreed;
        else
            ADD_FAILURE() << name << " (add_special_tokens " << e.add_special_tokens << "): " << ::testing::PrintToString(e.text)
                          << "\n  expected " << ::testing::PrintToString(e.ids) << "\n  got      "
                          << ::testing::PrintToString(ids ? *ids : std::vector<std::uint32_t>{});
    }
    return {agreed, total};
}

TEST(BpeEncoder, SmallTokenizersAgreeWithTheRustCore) {
    for (std::string_view name : {"gpt2", "llama", "nfc"}) {
        const cv::bpe_tokenizer t = must_read(data_dir / ("bpe_small_" + std::string(name) + ".json"));
        const auto [agreed, total] = agree(t, "small_" + std::string(name));
        EXPECT_GT(total, 60u) << name;
        EXPECT_EQ(agreed, total) << name;
        std::printf("[   INFO   ] small_%s: %zu of %zu agree\n", std::string(name).c_str(), agreed, total);
    }
}

TEST(BpeEncoder, RealTokenizersAgreeWithTheRustCore) {
    SKIP_WITHOUT_MODELS();
    const std::map<std::string, std::string> dirs{
        {"qwen3", "Tiny-Qwen3"}, {"llama3", "Tiny-Llama-3-BPE-Instruct"}, {"llama3.2", "Tiny-Llama-3.2-BPE"}};
    for (const auto& [name, dir] : dirs) {
        const cv::bpe_tokenizer t = must_read(models_dir() / dir / "tokenizer.json");
        const auto [agreed, total] = agree(t, name);
        EXPECT_GT(total, 800u) << name;
        EXPECT_EQ(agreed, total) << name;
        std::printf("[   INFO   ] %s: %zu of %zu agree\n", name.c_str(), agreed, total);
    }
}

// The check text is the reference's, byte for byte (its SHA-256 computed from conversion/base.py).
TEST(PreTokenizer, CheckTextIsTheReferences) {
    const std::string_view text = cv::pre_tokenizer_check_text();
    EXPECT_EQ(text.size(), 431u);
    auto h = minfer::check::hasher::make(minfer::check::hash_kind::sha256);
    ASSERT_TRUE(h.has_value());
    h->update(std::as_bytes(std::span<const char>(text.data(), text.size())));
    EXPECT_EQ(h->finish().text(), "a36179c1e2b1cfcfbfad1dc779addad2ffc778201e4cf0d538bddeafa2c526da");
}

TEST(PreTokenizer, PythonListText) {
    EXPECT_EQ(cv::python_list_text({}), "[]");
    const std::vector<std::uint32_t> ids{128000, 198, 4710};
    EXPECT_EQ(cv::python_list_text(ids), "[128000, 198, 4710]");
    EXPECT_EQ(cv::supported_pre_tokenizer_names(), "llama-bpe, qwen2, smaug-bpe");
}

// The hashes our encoder gives on the real tokenizers are the reference table's entries.
TEST(PreTokenizer, RealTokenizersHashToTheReferenceTable) {
    SKIP_WITHOUT_MODELS();
    const std::map<std::string, std::pair<std::string, std::string>> want{
        {"Tiny-Qwen3", {"qwen2", "e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea"}},
        {"Tiny-Qwen2.5-Instruct", {"qwen2", "e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea"}},
        {"Tiny-Llama-3-BPE-Instruct", {"smaug-bpe", "c136ed14d01c2745d4f60a9596ae66800e2b61fa45643e72436041855ad4089d"}},
        {"Tiny-Llama-3.2-BPE", {"llama-bpe", "0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5"}}};
    for (const auto& [dir, expected] : want) {
        const cv::bpe_tokenizer t = must_read(models_dir() / dir / "tokenizer.json");
        auto hash = cv::pre_tokenizer_hash(t);
        ASSERT_TRUE(hash.has_value()) << hash.error().message();
        EXPECT_EQ(*hash, expected.second) << dir;
        auto name = cv::find_pre_tokenizer(t);
        ASSERT_TRUE(name.has_value()) << name.error().message();
        EXPECT_EQ(*name, expected.first) << dir;
        bool in_table = false;
        for (const cv::known_pre_tokenizer& k : cv::known_pre_tokenizers())
            in_table = in_table || (k.name == expected.first && k.sha256 == *hash);
        EXPECT_TRUE(in_table) << dir;
    }
}

TEST(PreTokenizer, AnUnknownHashIsRefusedWithTheHashAndTheNames) {
    const cv::bpe_tokenizer t = must_read(data_dir / "bpe_small_gpt2.json");
    auto hash = cv::pre_tokenizer_hash(t);
    ASSERT_TRUE(hash.has_value());
    auto name = cv::find_pre_tokenizer(t);
    ASSERT_FALSE(name.has_value());
    EXPECT_EQ(name.error().code, cv::codes::unsupported_tokenizer);
    EXPECT_EQ(name.error().subject.view(), *hash);
    const std::string m = name.error().message();
    EXPECT_NE(m.find(*hash), std::string::npos) << m;
    EXPECT_NE(m.find("--pre NAME (one of: llama-bpe, qwen2, smaug-bpe)"), std::string::npos) << m;
}

TEST(BpeTokenizer, ReadsTheSmallTokenizers) {
    const cv::bpe_tokenizer gpt2 = must_read(data_dir / "bpe_small_gpt2.json");
    EXPECT_EQ(gpt2.model_tokens().size(), 273u);
    EXPECT_EQ(gpt2.id_count(), 278u);
    EXPECT_EQ(gpt2.added_tokens().size(), 5u);
    EXPECT_EQ(gpt2.token_text(273), "<s>");
    EXPECT_EQ(gpt2.token_text(32), "\xC4\xA0");  // Ġ
    EXPECT_EQ(gpt2.token_text(5000), "");
    EXPECT_FALSE(gpt2.merges_are_pairs());
    EXPECT_EQ(gpt2.gguf_merges().front(), "h e");
    ASSERT_EQ(gpt2.single_template().size(), 2u);
    EXPECT_EQ(gpt2.single_template()[0].special, "<s>");
    const cv::bpe_tokenizer llama = must_read(data_dir / "bpe_small_llama.json");
    EXPECT_TRUE(llama.merges_are_pairs());
    EXPECT_EQ(llama.gguf_merges().front(), "a b");
    ASSERT_EQ(llama.pre_tokenizer().size(), 2u);
    EXPECT_EQ(llama.pre_tokenizer()[0].type, cv::pre_tokenizer_step::kind::split);
    const cv::bpe_tokenizer nfc = must_read(data_dir / "bpe_small_nfc.json");
    EXPECT_TRUE(nfc.normalizes_nfc());
    EXPECT_TRUE(nfc.pre_tokenizer()[1].add_prefix_space);
}

// GPT-2's bytes_to_unicode, computed: the printable bytes stand for themselves, the rest from 256 on.
TEST(BpeTokenizer, ByteLevelAlphabet) {
    EXPECT_EQ(cv::byte_level_char('!'), U'!');
    EXPECT_EQ(cv::byte_level_char(' '), U'\u0120');
    EXPECT_EQ(cv::byte_level_char('\n'), U'\u010A');
    EXPECT_EQ(cv::byte_level_char(0), U'\u0100');
    EXPECT_EQ(cv::byte_level_char(0xAD), U'\u0143');
    for (unsigned b = 0; b < 256; ++b) EXPECT_EQ(cv::byte_level_byte(cv::byte_level_char(static_cast<std::uint8_t>(b))), b);
    EXPECT_FALSE(cv::byte_level_byte(U'\u0144').has_value());
    EXPECT_FALSE(cv::byte_level_byte(U' ').has_value());
}

// A pair's part with a space is written with U+0120, as SpecialVocab does.
TEST(BpeTokenizer, PairMergesWithSpacesAreWrittenWithU0120) {
    std::string text = slurp(data_dir / "bpe_small_llama.json");
    const auto vocab = text.find("\"vocab\": {");
    text.insert(vocab + 10, "\"a b\": 263, \" b\": 264,");
    const auto merges = text.find("\"merges\": [");
    text.insert(merges + 11, "[\"a\", \" b\"],");
    text.replace(text.find("\"id\": 263"), 9, "\"id\": 265");
    auto t = cv::bpe_tokenizer::parse(text, "t.json");
    ASSERT_TRUE(t.has_value()) << t.error().message();
    EXPECT_EQ(t->gguf_merges().front(), "a \xC4\xA0" "b");
}

// Replace the value of the first member `key` (an array or object, skipped string-aware) by `with`;
// returns where it was.
std::size_t replace_value(std::string& text, const std::string& key, const std::string& with) {
    const std::size_t begin = text.find("\"" + key + "\": ") + key.size() + 4;
    std::size_t i = begin;
    int depth = 0;
    bool in_string = false;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if ((c == ']' || c == '}') && --depth == 0) {
            break;
        }
    }
    text.replace(begin, i + 1 - begin, with);
    return begin;
}

struct refusal {
    const char* name;
    std::string from, to;      // the change to bpe_small_gpt2.json
    minfer::gguf::errc code;
    std::string detail;        // a part of the message
    std::string at;            // the offset is where this text starts in the changed file ("" = not checked)
};

TEST(BpeTokenizer, EachCheckRefusesTheSmallestChangeThatBreaksIt) {
    const std::string base = slurp(data_dir / "bpe_small_gpt2.json");
    const auto bad = cv::codes::bad_tokenizer;
    const auto unsupported = cv::codes::unsupported_tokenizer;
    const std::vector<refusal> cases{
        {"not json", "{", "[", bad, "not valid JSON", ""},
        {"not an object", "", "", bad, "not a JSON object", ""},
        {"unknown top field", "\"version\": \"1.0\"", "\"version\": \"1.0\", \"extra\": 1", unsupported, "'extra' is not read", "1,"},
        {"version not a string", "\"version\": \"1.0\"", "\"version\": 1", bad, "version", "1,\n"},
        {"truncation", "\"truncation\": null", "\"truncation\": {}", unsupported, "changes the ids", "{}"},
        {"padding", "\"padding\": null", "\"padding\": 1", unsupported, "changes the ids", "1,\n \"added"},
        {"no model", "\"model\": {", "\"modl\": {", unsupported, "'modl' is not read", ""},
        {"model type", "\"type\": \"BPE\"", "\"type\": \"WordPiece\"", unsupported, "model type 'WordPiece'", "\"WordPiece\""},
        {"unknown model field", "\"dropout\": null", "\"dropout\": null, \"x\": 1", unsupported, "'x' is not read", ""},
        {"dropout", "\"dropout\": null", "\"dropout\": 0.1", unsupported, "dropout", "0.1"},
        {"prefix", "\"continuing_subword_prefix\": null", "\"continuing_subword_prefix\": \"##\"", unsupported, "affix", "\"##\""},
        {"suffix kind", "\"end_of_word_suffix\": null", "\"end_of_word_suffix\": 3", bad, "not a string", "3,"},
        {"byte fallback", "\"byte_fallback\": false", "\"byte_fallback\": true", unsupported, "byte fallback", "true"},
        {"byte fallback kind", "\"byte_fallback\": false", "\"byte_fallback\": 0", bad, "not a boolean", "0,"},
        {"ignore_merges kind", "\"ignore_merges\": false", "\"ignore_merges\": \"no\"", bad, "not a boolean", "\"no\""},
        {"fuse_unk kind", "\"fuse_unk\": false", "\"fuse_unk\": null", bad, "not a boolean", "null,\n  \"byte"},
        {"vocab kind", "VALUE OF vocab", "[]", bad, "'vocab' is an array", "[]"},
        {"vocab id kind", "\"he\": 256", "\"he\": \"256\"", bad, "not an integer", "\"256\""},
        {"vocab id negative", "\"he\": 256", "\"he\": -1", bad, "not an integer", "-1"},
        {"vocab id out of range", "\"he\": 256", "\"he\": 300", bad, "not below the vocabulary's size", "300"},
        {"vocab id twice", "\"the\": 257", "\"the\": 256", bad, "given to two tokens", ""},
        {"vocab missing a byte", "\"!\": 33", "\"!!\": 33", unsupported, "is not a token: not a byte-level BPE", ""},
        {"unk not a token", "\"unk_token\": null", "\"unk_token\": \"<unk>\"", bad, "not a token", "\"<unk>\""},
        {"merges kind", "VALUE OF merges", "{}", bad, "'merges' is an object", "{}"},
        {"merge not a string", "\"h e\",", "7,", bad, "not a string", "7,"},
        {"merge without space", "\"h e\",", "\"he\",", bad, "not two tokens separated by one space", "\"he\""},
        {"merge with two spaces", "\"h e\",", "\"h e e\",", bad, "not two tokens", "\"h e e\""},
        {"merge part unknown", "\"h e\",", "\"h q9\",", bad, "not a token of the vocabulary", "\"h q9\""},
        {"merge result unknown", "\"h e\",", "\"e h\",", bad, "'eh', which is not a token", "\"e h\""},
        {"merge forms mixed", "\"h e\",", "[\"h\", \"e\"], \"t he\",", bad, "where the first is a pair", "\"t he\""},
        {"merge repeated", "\"t he\",", "\"h e\",", bad, "repeats the pair of merge 0", ""},
        {"added kind", "VALUE OF added_tokens", "{}", bad, "not an array", "{}"},
        {"added entry kind", "\"added_tokens\": [", "\"added_tokens\": [1,", bad, "an entry is a number", "1,"},
        {"added field unknown", "\"content\": \"<s>\",", "\"content\": \"<s>\", \"x\": 0,", unsupported, "'x' is not read", ""},
        {"added field missing", "\"content\": \"<s>\",\n   \"single_word\": false,", "\"content\": \"<s>\",", bad, "no 'single_word'", ""},
        {"added content empty", "\"content\": \"<s>\"", "\"content\": \"\"", bad, "an empty content", ""},
        {"added content twice", "\"content\": \"<|end|>\"", "\"content\": \"<s>\"", bad, "added twice", ""},
        {"added id renumbered", "\"id\": 274", "\"id\": 280", bad, "where the Rust core would give it 274", "280"},
        {"added in vocab with another id", "\"content\": \"<s>\"", "\"content\": \"he\"", bad, "would give it 256 (its vocabulary id)", ""},
        {"normalizer", "\"normalizer\": null", "\"normalizer\": {\"type\": \"NFKC\"}", unsupported, "normalizer 'NFKC'", "\"NFKC\""},
        {"no pre-tokenizer", "\"pre_tokenizer\": {", "\"pre_tokenizer\": null, \"p\": {", unsupported, "'p' is not read", ""},
        {"pre-tokenizer kind", "\"type\": \"ByteLevel\",\n  \"add_prefix_space\": false", "\"type\": \"Metaspace\",\n  \"add_prefix_space\": false",
         unsupported, "pre-tokenizer 'Metaspace'", "\"Metaspace\""},
        {"byte level without prefix flag", "\"add_prefix_space\": false,\n  \"trim_offsets\": true,\n  \"use_regex\": true\n },\n \"post",
         "\"trim_offsets\": true,\n  \"use_regex\": true\n },\n \"post", bad, "no 'add_prefix_space'", ""},
        {"post-processor kind", "\"type\": \"TemplateProcessing\"", "\"type\": \"RobertaProcessing\"", unsupported, "post-processor 'RobertaProcessing'", ""},
        {"template token unknown", "\"id\": \"<s>\",\n     \"type_id\": 0", "\"id\": \"<t>\",\n     \"type_id\": 0", bad, "missing from special_tokens", ""},
        {"decoder kind", "\"decoder\": {\n  \"type\": \"ByteLevel\"", "\"decoder\": {\n  \"type\": \"BPEDecoder\"", unsupported, "decoder 'BPEDecoder'", ""},
        {"no decoder", "\"decoder\": {", "\"decoder\": null, \"d\": {", unsupported, "'d' is not read", ""},
        {"duplicate key", "\"version\": \"1.0\"", "\"version\": \"1.0\", \"version\": \"1.0\"", bad, "duplicate key 'version'", ""},
    };
    for (const refusal& r : cases) {
        std::string text = base;
        std::size_t changed_at = 0;
        if (std::string_view(r.name) == "not an object") {
            text = "[1, 2]";
        } else if (r.from.starts_with("VALUE OF ")) {  // a whole value replaced
            changed_at = replace_value(text, r.from.substr(9), r.to);
        } else {
            changed_at = text.find(r.from);
            ASSERT_NE(changed_at, std::string::npos) << r.name;
            text.replace(changed_at, r.from.size(), r.to);
        }
        auto t = cv::bpe_tokenizer::parse(text, "tokenizer.json");
        ASSERT_FALSE(t.has_value()) << r.name;
        const minfer::gguf::error& e = t.error();
        EXPECT_EQ(e.code, r.code) << r.name << ": " << e.message();
        EXPECT_NE(e.message().find(r.detail), std::string::npos) << r.name << ": " << e.message();
        EXPECT_EQ(e.file, "tokenizer.json") << r.name;
        if (!r.at.empty()) {
            EXPECT_EQ(e.offset, text.find(r.at, changed_at)) << r.name << ": " << e.message();
        }
    }
}

TEST(BpeTokenizer, PatternsThatMeanSomethingElseInOnigurumaAreRefused) {
    const std::string base = slurp(data_dir / "bpe_small_llama.json");
    const auto at = base.find("\"Regex\": \"");
    ASSERT_NE(at, std::string::npos);
    const auto end = base.find("\"\n", at + 10);
    for (const char* pattern : {R"(\\w+)", R"(\\b)", R"(\\h)", R"(\\v)", R"(\\R)", R"(\\X)", R"(\\K)", "^a", "a$", "[[:alpha:]]",
                                "[a[b]]", "[a&&b]", R"(\\G)"}) {
        std::string text = base;
        text.replace(at + 10, end - at - 10, pattern);
        auto t = cv::bpe_tokenizer::parse(text, "t.json");
        ASSERT_FALSE(t.has_value()) << pattern;
        EXPECT_EQ(t.error().code, cv::codes::unsupported_tokenizer) << pattern << ": " << t.error().message();
    }
    std::string text = base;
    text.replace(at + 10, end - at - 10, "(a");
    auto t = cv::bpe_tokenizer::parse(text, "t.json");
    ASSERT_FALSE(t.has_value());
    EXPECT_EQ(t.error().code, cv::codes::bad_tokenizer) << t.error().message();
    EXPECT_NE(t.error().message().find("not a valid pattern"), std::string::npos) << t.error().message();
}

TEST(BpeTokenizer, ReadRefusesAMissingOrOversizedFile) {
    auto t = cv::bpe_tokenizer::read(data_dir / "no-such-tokenizer.json");
    ASSERT_FALSE(t.has_value());
    EXPECT_EQ(t.error().code, cv::codes::bad_tokenizer);
    EXPECT_NE(t.error().message().find("missing"), std::string::npos) << t.error().message();
}

TEST(BpeEncoder, RefusesTextThatIsNotUtf8OrTooLong) {
    const cv::bpe_tokenizer t = must_read(data_dir / "bpe_small_gpt2.json");
    auto ids = t.encode("ab\xFF" "c", false);
    ASSERT_FALSE(ids.has_value());
    EXPECT_EQ(ids.error().code, cv::codes::bad_tokenizer);
    EXPECT_EQ(ids.error().offset, 2u);
    auto big = t.encode(std::string(cv::encode_max_bytes + 1, 'a'), false);
    ASSERT_FALSE(big.has_value());
    EXPECT_EQ(big.error().code, minfer::gguf::errc::input_too_large);
    // the largest text is taken, in n log n time (one piece of 1 MiB letters, merged by a heap)
    auto ok = t.encode(std::string(cv::encode_max_bytes, 'a'), false);
    ASSERT_TRUE(ok.has_value()) << ok.error().message();
    EXPECT_EQ(ok->size(), cv::encode_max_bytes);
}

}  // namespace

// Internal: the Unicode classes the encoder relies on.
#include "../../src/convert/bpe_text.hpp"

namespace {

namespace detail = minfer::convert::detail;

std::string every_code_point() {
    std::string all;
    for (char32_t c = 1; c <= 0x10FFFF; ++c)
        if (c < 0xD800 || c > 0xDFFF) detail::append_utf8(all, c);
    return all;
}

// Oniguruma's \s (what the Rust core's patterns mean) is the White_Space property; PCRE2's \s with
// UCP must be the same set, or the patterns would split differently.
TEST(BpeText, Pcre2WhitespaceIsOnigurumasWhitespace) {
    detail::pattern_failure failure;
    const auto space = detail::regex::compile(R"(\s)", failure);  // as a tokenizer's pattern is compiled
    ASSERT_TRUE(space.has_value()) << failure.detail;
    const std::string all = every_code_point();
    std::vector<std::pair<std::size_t, std::size_t>> matches;
    std::size_t failed_at = 0;
    ASSERT_TRUE(space->find_all(all, matches, failed_at));
    std::vector<char32_t> matched;
    for (const auto& [b, e] : matches) matched.push_back(detail::utf8_at(all, b).c);
    std::vector<char32_t> white;
    for (char32_t c = 1; c <= 0x10FFFF; ++c)
        if (detail::is_white_space(c)) white.push_back(c);
    EXPECT_EQ(matched, white);
    EXPECT_EQ(white.size(), 25u);
}

TEST(BpeText, Utf8LossyReplacesMaximalSubparts) {
    EXPECT_EQ(detail::utf8_lossy("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
    EXPECT_EQ(detail::utf8_lossy("\xE2\x82"), "\xEF\xBF\xBD");               // one cut sequence: one U+FFFD
    EXPECT_EQ(detail::utf8_lossy("\xE0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");   // E0 80 is no prefix: two
    EXPECT_EQ(detail::utf8_lossy("\xF0\x9F\x98"), "\xEF\xBF\xBD");
    EXPECT_EQ(detail::utf8_lossy("\xC3\xA9"), "\xC3\xA9");
}

TEST(BpeText, NfcComposes) {
    std::string out;
    ASSERT_TRUE(detail::nfc("e\xCC\x81", out));
    EXPECT_EQ(out, "\xC3\xA9");
    ASSERT_TRUE(detail::nfc("abc", out));
    EXPECT_EQ(out, "abc");
    ASSERT_TRUE(detail::nfc("\xE2\x84\xAB", out));  // U+212B ANGSTROM SIGN -> U+00C5
    EXPECT_EQ(out, "\xC3\x85");
}

TEST(BpeText, WordCharactersAreRustRegexs) {
    EXPECT_TRUE(detail::is_word_char(U'a'));
    EXPECT_TRUE(detail::is_word_char(U'_'));
    EXPECT_TRUE(detail::is_word_char(U'7'));
    EXPECT_TRUE(detail::is_word_char(U'\u0301'));  // a mark
    EXPECT_TRUE(detail::is_word_char(U'\u200D'));  // Join_Control
    EXPECT_FALSE(detail::is_word_char(U'-'));
    EXPECT_FALSE(detail::is_word_char(U' '));
    EXPECT_FALSE(detail::is_word_char(U'\u00B2'));  // superscript two: No, not Nd
}

}  // namespace
