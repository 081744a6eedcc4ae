// metadata_edit: value text parsing (each refusal with its smallest trigger), edits checked against a
// model (missing keys, arrays, alignment, vocabulary), the diff, and a rewrite through the plan.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "llama_ref/llama_ref.hpp"
#include "minfer/gguf.hpp"
#include "minfer/gguf_write/in_place.hpp"
#include "minfer/gguf_write/metadata_edit.hpp"
#include "minfer/gguf_write/model_source.hpp"
#include "minfer/gguf_write/rewrite.hpp"
#include "minfer/gguf_write/writer.hpp"
#include "minfer/gguf_write/errors.hpp"

using namespace minfer::gguf;
namespace fs = std::filesystem;

namespace {

template <class T>
T decode(const std::vector<std::byte>& b) {
    T v{};
    EXPECT_EQ(b.size(), sizeof v);
    if (b.size() == sizeof v) std::memcpy(&v, b.data(), sizeof v);
    return v;
}

std::string decode_string(const std::vector<std::byte>& b) {
    EXPECT_GE(b.size(), 8u);
    std::uint64_t n = 0;
    std::memcpy(&n, b.data(), 8);
    EXPECT_EQ(n, b.size() - 8);
    return std::string(reinterpret_cast<const char*>(b.data() + 8), b.size() - 8);
}

std::string refusal(value_type t, std::string_view text) {
    auto r = parse_value_text("k", t, text);
    EXPECT_FALSE(r) << "accepted '" << text << "'";
    if (r) return {};
    EXPECT_EQ(r.error().code, errc::bad_value_text);
    EXPECT_EQ(r.error().subject, "k");
    return r.error().detail;
}

TEST(ValueText, IntegersDecimalAndHex) {
    EXPECT_EQ(decode<std::uint8_t>(*parse_value_text("k", value_type::u8, "255")), 255);
    EXPECT_EQ(decode<std::int8_t>(*parse_value_text("k", value_type::i8, "-128")), -128);
    EXPECT_EQ(decode<std::int8_t>(*parse_value_text("k", value_type::i8, "127")), 127);
    EXPECT_EQ(decode<std::uint16_t>(*parse_value_text("k", value_type::u16, "0xFFFF")), 65535);
    EXPECT_EQ(decode<std::int16_t>(*parse_value_text("k", value_type::i16, "-0x8000")), -32768);
    EXPECT_EQ(decode<std::uint32_t>(*parse_value_text("k", value_type::u32, "4294967295")), 4294967295u);
    EXPECT_EQ(decode<std::int32_t>(*parse_value_text("k", value_type::i32, "-2147483648")), INT32_MIN);
    EXPECT_EQ(decode<std::uint64_t>(*parse_value_text("k", value_type::u64, "18446744073709551615")), UINT64_MAX);
    EXPECT_EQ(decode<std::int64_t>(*parse_value_text("k", value_type::i64, "-9223372036854775808")), INT64_MIN);
    EXPECT_EQ(decode<std::int64_t>(*parse_value_text("k", value_type::i64, "9223372036854775807")), INT64_MAX);
    EXPECT_EQ(decode<std::uint32_t>(*parse_value_text("k", value_type::u32, "-0")), 0u);
}

TEST(ValueText, IntegerRefusals) {
    EXPECT_EQ(refusal(value_type::u32, "-1"), "'-1' is not a u32 (0 to 4294967295)");
    EXPECT_EQ(refusal(value_type::u8, "256"), "'256' is not a u8 (0 to 255)");
    EXPECT_EQ(refusal(value_type::i8, "-129"), "'-129' is not an i8 (-128 to 127)");
    EXPECT_EQ(refusal(value_type::i8, "128"), "'128' is not an i8 (-128 to 127)");
    EXPECT_EQ(refusal(value_type::i64, "9223372036854775808"),
              "'9223372036854775808' is not an i64 (-9223372036854775808 to 9223372036854775807)");
    EXPECT_EQ(refusal(value_type::i64, "-9223372036854775809").substr(0, 23), "'-9223372036854775809' ");
    EXPECT_FALSE(parse_value_text("k", value_type::u64, "18446744073709551616"));  // past u64
    EXPECT_FALSE(parse_value_text("k", value_type::u32, "1e3"));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, ""));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, "5x"));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, " 5"));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, "+5"));
    EXPECT_FALSE(parse_value_text("k", value_type::i32, "--5"));
    EXPECT_FALSE(parse_value_text("k", value_type::i32, "-"));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, "0x"));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, "0xg"));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, "0x-1"));
    EXPECT_FALSE(parse_value_text("k", value_type::u8, "0x100"));
    EXPECT_FALSE(parse_value_text("k", value_type::u32, "1.0"));
}

TEST(ValueText, Floats) {
    EXPECT_EQ(decode<float>(*parse_value_text("k", value_type::f32, "0.1")), 0.1f);
    EXPECT_EQ(decode<double>(*parse_value_text("k", value_type::f64, "1e-05")), 1e-05);
    EXPECT_EQ(decode<double>(*parse_value_text("k", value_type::f64, "-3")), -3.0);
    EXPECT_EQ(refusal(value_type::f32, "abc"), "'abc' is not an f32 (a finite decimal number; nan and inf are refused)");
    EXPECT_FALSE(parse_value_text("k", value_type::f32, "nan"));
    EXPECT_FALSE(parse_value_text("k", value_type::f64, "inf"));
    EXPECT_FALSE(parse_value_text("k", value_type::f64, "-inf"));
    EXPECT_FALSE(parse_value_text("k", value_type::f32, "1e39"));  // beyond f32
    EXPECT_FALSE(parse_value_text("k", value_type::f32, ""));
    EXPECT_FALSE(parse_value_text("k", value_type::f32, "1.5x"));
    EXPECT_FALSE(parse_value_text("k", value_type::f32, "+1"));
}

TEST(ValueText, BoolAndString) {
    EXPECT_EQ(decode<std::uint8_t>(*parse_value_text("k", value_type::boolean, "true")), 1);
    EXPECT_EQ(decode<std::uint8_t>(*parse_value_text("k", value_type::boolean, "false")), 0);
    EXPECT_EQ(refusal(value_type::boolean, "yes"), "'yes' is not a bool (true or false)");
    EXPECT_FALSE(parse_value_text("k", value_type::boolean, "1"));
    EXPECT_FALSE(parse_value_text("k", value_type::boolean, "True"));
    EXPECT_EQ(decode_string(*parse_value_text("k", value_type::string, "h\xc3\xa9llo")), "h\xc3\xa9llo");
    EXPECT_EQ(decode_string(*parse_value_text("k", value_type::string, "")), "");
    EXPECT_EQ(refusal(value_type::string, "ab\xff"), "the text is not valid UTF-8 (byte 2); GGUF strings are UTF-8");
    EXPECT_FALSE(parse_value_text("k", value_type::string, "\xc3"));          // cut short
    EXPECT_FALSE(parse_value_text("k", value_type::string, "\xed\xa0\x80"));  // a surrogate
    EXPECT_EQ(refusal(value_type::array, "1"), "arrays cannot be given as text");
}

TEST(ValueText, LongTextIsCutInTheMessage) {
    const std::string d = refusal(value_type::u32, std::string(1000, '9') + "x");
    EXPECT_LT(d.size(), 120u);
    EXPECT_NE(d.find("…'"), std::string::npos);
}

TEST(ValueText, TypeNames) {
    EXPECT_EQ(value_type_from_name("u8"), value_type::u8);
    EXPECT_EQ(value_type_from_name("f64"), value_type::f64);
    EXPECT_EQ(value_type_from_name("bool"), value_type::boolean);
    EXPECT_EQ(value_type_from_name("str"), value_type::string);
    EXPECT_EQ(value_type_from_name("string"), value_type::string);
    EXPECT_FALSE(value_type_from_name("array"));
    EXPECT_FALSE(value_type_from_name("U32"));
    EXPECT_FALSE(value_type_from_name("u33"));
    EXPECT_FALSE(value_type_from_name(""));
}

TEST(SetText, Splitting) {
    auto a = parse_set_text("general.name=x=y");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->what, metadata_edit::op::set);
    EXPECT_EQ(a->key, "general.name");
    EXPECT_EQ(a->text, "x=y");
    auto b = parse_set_text("a.b:u32=5");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->what, metadata_edit::op::set_typed);
    EXPECT_EQ(b->key, "a.b");
    EXPECT_EQ(b->type, value_type::u32);
    auto c = parse_set_text("a:b.c=5");  // what follows ':' is no type: the key holds the colon
    ASSERT_TRUE(c);
    EXPECT_EQ(c->what, metadata_edit::op::set);
    EXPECT_EQ(c->key, "a:b.c");
    auto d = parse_set_text("a:b:str=");  // the last ':' starts the type
    ASSERT_TRUE(d);
    EXPECT_EQ(d->key, "a:b");
    EXPECT_EQ(d->type, value_type::string);
    EXPECT_EQ(d->text, "");
    auto e = parse_set_text("novalue");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code, errc::bad_value_text);
}

TEST(SpecialTokenKey, NamesAndKeys) {
    EXPECT_EQ(special_token_key("bos"), "tokenizer.ggml.bos_token_id");
    EXPECT_EQ(special_token_key("unk"), "tokenizer.ggml.unknown_token_id");
    EXPECT_EQ(special_token_key("sep"), "tokenizer.ggml.seperator_token_id");
    EXPECT_EQ(special_token_key("pad"), "tokenizer.ggml.padding_token_id");
    EXPECT_EQ(special_token_key("fim_sep"), "tokenizer.ggml.fim_sep_token_id");
    EXPECT_EQ(special_token_key("tokenizer.ggml.eot_token_id"), "tokenizer.ggml.eot_token_id");
    EXPECT_FALSE(special_token_key("bogus"));
    EXPECT_FALSE(special_token_key("tokenizer.ggml._token_id"));
    EXPECT_FALSE(special_token_key("general.name"));
}

// A small model with every kind of key the edits touch.
class MetadataEdit : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("minfer_metadata_edit." + std::to_string(::getpid()));
        fs::create_directories(dir_);
        writer w;
        w.set_string("general.architecture", "llama");
        w.set_string("general.name", "old");
        w.set_u32("llama.block_count", 2);
        w.set_f32("llama.rope.freq_base", 10000.0f);
        w.set_u32("general.alignment", 32);
        const std::vector<std::string> toks{"<unk>", "<s>", "</s>", "hi", "hi"};
        w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
        w.set_i32("tokenizer.ggml.padding_token_id", -1);
        w.set_string("tokenizer.chat_template", "old");
        w.set_string("tokenizer.chat_template.tool_use", "tools");
        const std::array<std::uint8_t, 3> pad{0, 0, 0};
        w.set_array("minfer.padding", value_type::u8, std::span<const std::uint8_t>(pad));
        const std::array<std::int64_t, 1> ne{8};
        w.add_zero_tensor("a.weight", tensor_type::f32, ne);
        path_ = dir_ / "m.gguf";
        ASSERT_TRUE(w.write(path_));
        no_vocab_ = dir_ / "novocab.gguf";
        writer v;
        v.set_string("general.architecture", "llama");
        ASSERT_TRUE(v.write(no_vocab_));
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }

    static model open(const fs::path& p) {
        auto m = model::open(p);
        EXPECT_TRUE(m) << (m ? "" : m.error().message());
        return std::move(*m);
    }
    static error fails(std::vector<metadata_edit> edits, const fs::path& p = path_) {
        const model m = open(p);
        auto r = plan_metadata_edit(m, edits);
        EXPECT_FALSE(r);
        return r ? error{} : r.error();
    }
    static metadata_edit_plan plans(std::vector<metadata_edit> edits, metadata_edit_options o = {}) {
        m_ = open(path_);
        auto r = plan_metadata_edit(m_, edits, o);
        EXPECT_TRUE(r) << (r ? "" : r.error().message());
        return r ? std::move(*r) : metadata_edit_plan{};
    }

    static inline fs::path dir_, path_, no_vocab_;
    static inline model m_;  // the model the last plans() diff points into
};

TEST_F(MetadataEdit, UntypedSetKeepsTheType) {
    const auto p = plans({metadata_edit::set("llama.block_count", "7")});
    ASSERT_EQ(p.diff.size(), 2u);  // the change, and minfer.padding dropped
    EXPECT_EQ(p.diff[0].key, "llama.block_count");
    ASSERT_NE(p.diff[0].before, nullptr);
    ASSERT_TRUE(p.diff[0].after);
    EXPECT_EQ(p.diff[0].after->type, value_type::u32);
    EXPECT_EQ(decode<std::uint32_t>(p.diff[0].after->bytes), 7u);
    EXPECT_EQ(p.diff[1].key, "minfer.padding");
    EXPECT_FALSE(p.diff[1].after);
    ASSERT_EQ(p.changes.size(), 2u);
    EXPECT_EQ(p.changes[1].what, metadata_change::op::erase);
    EXPECT_EQ(p.changes[1].key, "minfer.padding");
}

TEST_F(MetadataEdit, InPlaceKeepsThePaddingKey) {
    const auto p = plans({metadata_edit::name("new")}, metadata_edit_options{false});
    ASSERT_EQ(p.changes.size(), 1u);
    ASSERT_EQ(p.diff.size(), 1u);
    EXPECT_EQ(p.diff[0].key, "general.name");
    EXPECT_EQ(p.diff[0].after->view("general.name").get<std::string_view>().value(), "new");
}

TEST_F(MetadataEdit, SameValueIsNoDiff) {
    const auto p = plans({metadata_edit::set("general.name", "old")}, metadata_edit_options{false});
    EXPECT_EQ(p.changes.size(), 1u);
    EXPECT_TRUE(p.diff.empty());
}

TEST_F(MetadataEdit, UntypedSetRefusals) {
    const error missing = fails({metadata_edit::set("no.such", "1")});
    EXPECT_EQ(missing.code, errc::key_not_found);
    EXPECT_EQ(missing.subject, "no.such");
    EXPECT_NE(missing.detail.find("KEY:TYPE=VALUE"), std::string::npos);
    EXPECT_EQ(missing.file, path_.string());

    const error array = fails({metadata_edit::set("tokenizer.ggml.tokens", "x")});
    EXPECT_EQ(array.code, errc::bad_value_text);
    EXPECT_EQ(array.detail, "the key is an array of string (5 items); only scalars and strings can be set");

    const error text = fails({metadata_edit::set("llama.block_count", "-1")});
    EXPECT_EQ(text.code, errc::bad_value_text);
    EXPECT_EQ(text.message(), "the value for key 'llama.block_count' is not valid: '-1' is not a u32 (0 to "
                              "4294967295) [bad_value_text]");

    const error type = fails({metadata_edit::set("a.b:u33", "1")});
    EXPECT_EQ(type.code, errc::bad_value_text);
    EXPECT_NE(type.detail.find("unknown type 'u33'"), std::string::npos);
}

TEST_F(MetadataEdit, TypedSetAddsLastAndChangesType) {
    metadata_edit_options o{false};
    o.allow_type_change = true;
    const auto p = plans({metadata_edit::set_typed("new.key", value_type::u64, "5"),
                          metadata_edit::set_typed("llama.block_count", value_type::string, "two")},
                         o);
    ASSERT_EQ(p.diff.size(), 2u);
    EXPECT_EQ(p.diff[0].key, "llama.block_count");  // the input's keys first, in file order
    EXPECT_EQ(p.diff[0].after->type, value_type::string);
    EXPECT_EQ(p.diff[0].forced_over, "u32");
    EXPECT_EQ(p.diff[1].key, "new.key");
    EXPECT_EQ(p.diff[1].before, nullptr);
    EXPECT_EQ(p.diff[1].forced_over, "");
    EXPECT_EQ(decode<std::uint64_t>(p.diff[1].after->bytes), 5u);
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_EQ(p.warnings[0], "llama.block_count becomes str although llama.cpp reads it as u32: llama.cpp will not "
                             "load the model");
}

// llama.cpp's loader checks a key's stored type exactly, so a key it reads keeps its type; another
// existing key keeps its own. The detail names the type expected.
TEST_F(MetadataEdit, ExplicitTypeMustBeTheKeysType) {
    const error absent = fails({metadata_edit::set_typed("llama.context_length", value_type::string, "hello")});
    EXPECT_EQ(absent.code, errc::bad_value_text);
    EXPECT_EQ(absent.subject, "llama.context_length");
    EXPECT_EQ(absent.detail, "llama.cpp reads llama.context_length as a u32 and refuses a model that stores another "
                             "type: expected u32, given str; give a u32 value (or leave the type out), or force the "
                             "change with --allow-type-change (Python: allow_type_change=True)");
    EXPECT_NE(fails({metadata_edit::set_typed("llama.block_count", value_type::boolean, "true")})
                  .detail.find("expected u32, given bool"),
              std::string::npos);
    EXPECT_NE(fails({metadata_edit::set_typed("llama.rope.freq_base", value_type::f64, "1")})
                  .detail.find("expected f32, given f64"),
              std::string::npos);
    EXPECT_NE(fails({metadata_edit::set_typed("tokenizer.ggml.bos_token_id", value_type::i32, "1")})
                  .detail.find("expected u32, given i32"),
              std::string::npos);
    EXPECT_NE(fails({metadata_edit::set_typed("general.architecture", value_type::u32, "1")})
                  .detail.find("expected str, given u32"),
              std::string::npos);
    // Another architecture's hyperparameters are not this model's: free keys.
    EXPECT_TRUE(plan_metadata_edit(open(path_), std::vector{metadata_edit::set_typed("qwen2.context_length",
                                                                                     value_type::string, "x")}));
    // A key the table does not know keeps its stored type.
    EXPECT_EQ(fails({metadata_edit::set_typed("tokenizer.chat_template.tool_use", value_type::u8, "1")}).detail,
              "the model stores tokenizer.chat_template.tool_use as a str: expected str, given u8; give a str value "
              "(or leave the type out), or force the change with --allow-type-change (Python: "
              "allow_type_change=True)");
    // The right type passes; a per-layer key takes its scalar form; the i32 padding id stored by
    // another writer is left as it is by an untyped set.
    const auto p = plans({metadata_edit::set_typed("llama.context_length", value_type::u32, "4096"),
                          metadata_edit::set_typed("llama.attention.head_count", value_type::u32, "8"),
                          metadata_edit::set("tokenizer.ggml.padding_token_id", "3")});
    for (const metadata_diff_entry& d : p.diff) EXPECT_EQ(d.forced_over, "") << d.key;
    EXPECT_TRUE(p.warnings.empty());
}

// Only split and merge write the split.* keys, on a single file too.
TEST_F(MetadataEdit, SplitKeysAreRefused) {
    for (const metadata_edit& e : {metadata_edit::set_typed("split.count", value_type::u16, "3"),
                                   metadata_edit::set_typed("split.no", value_type::u16, "0")}) {
        const error x = fails({e});
        EXPECT_EQ(x.code, errc::bad_value_text);
        EXPECT_NE(x.detail.find("only minfer split and minfer merge write them"), std::string::npos) << x.detail;
    }
}

TEST_F(MetadataEdit, LaterEditsSeeEarlierOnes) {
    // An untyped set of a key an earlier edit added takes that type; a delete of it works.
    const auto p = plans({metadata_edit::set_typed("new.key", value_type::i8, "5"), metadata_edit::set("new.key", "-3")},
                         metadata_edit_options{false});
    ASSERT_EQ(p.diff.size(), 1u);
    EXPECT_EQ(decode<std::int8_t>(p.diff[0].after->bytes), -3);
    const auto q = plans({metadata_edit::set_typed("new.key", value_type::i8, "5"), metadata_edit::erase("new.key")},
                         metadata_edit_options{false});
    EXPECT_TRUE(q.diff.empty());
    const error gone = fails({metadata_edit::erase("general.name"), metadata_edit::set("general.name", "x")});
    EXPECT_EQ(gone.code, errc::key_not_found);
}

TEST_F(MetadataEdit, KeyRules) {
    EXPECT_EQ(fails({metadata_edit::set_typed("", value_type::u8, "1")}).detail, "a key cannot be empty");
    EXPECT_EQ(fails({metadata_edit::set_typed(std::string("a\0b", 3), value_type::u8, "1")}).detail,
              "a key cannot hold a NUL byte (found at position 1)");
    EXPECT_EQ(fails({metadata_edit::set_typed("a\xff", value_type::u8, "1")}).detail,
              "the key is not valid UTF-8 (byte 1)");
}

TEST_F(MetadataEdit, Alignment) {
    EXPECT_EQ(fails({metadata_edit::set("general.alignment", "3")}).detail,
              "3 is not a power of two above 0, which general.alignment must be");
    EXPECT_EQ(fails({metadata_edit::set("general.alignment", "0")}).code, errc::bad_value_text);
    EXPECT_NE(fails({metadata_edit::set_typed("general.alignment", value_type::u64, "32")})
                  .detail.find("llama.cpp reads general.alignment as a u32"),
              std::string::npos);
    // Forcing the type does not pass the loader's own rule.
    {
        const model m = open(path_);
        metadata_edit_options o;
        o.allow_type_change = true;
        auto r = plan_metadata_edit(m, std::vector{metadata_edit::set_typed("general.alignment", value_type::u64, "32")}, o);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().detail, "general.alignment must be a u32, not u64");
    }
    const auto p = plans({metadata_edit::set("general.alignment", "64")});
    EXPECT_EQ(decode<std::uint32_t>(p.diff[0].after->bytes), 64u);
}

TEST_F(MetadataEdit, Erase) {
    const error e = fails({metadata_edit::erase("no.such")});
    EXPECT_EQ(e.code, errc::key_not_found);
    const auto p = plans({metadata_edit::erase("general.architecture")}, metadata_edit_options{false});
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_NE(p.warnings[0].find("llama.cpp will not load"), std::string::npos);
    ASSERT_EQ(p.diff.size(), 1u);
    EXPECT_FALSE(p.diff[0].after);
}

TEST_F(MetadataEdit, ChatTemplateDropsNamedTemplates) {
    const auto p = plans({metadata_edit::chat_template("new {{ x }}")}, metadata_edit_options{false});
    ASSERT_EQ(p.changes.size(), 2u);
    EXPECT_EQ(p.changes[0].what, metadata_change::op::erase_prefix);
    EXPECT_EQ(p.changes[0].key, "tokenizer.chat_template");
    ASSERT_EQ(p.diff.size(), 2u);
    EXPECT_EQ(p.diff[0].key, "tokenizer.chat_template");
    EXPECT_EQ(decode_string(p.diff[0].after->bytes), "new {{ x }}");
    EXPECT_EQ(p.diff[1].key, "tokenizer.chat_template.tool_use");
    EXPECT_FALSE(p.diff[1].after);
    EXPECT_EQ(fails({metadata_edit::chat_template("\xff")}).code, errc::bad_value_text);
}

TEST_F(MetadataEdit, SpecialTokens) {
    const auto p = plans({metadata_edit::special_token("bos", "1"), metadata_edit::special_token("pad", "</s>"),
                          metadata_edit::special_token("tokenizer.ggml.eot_token_id", "hi")},
                         metadata_edit_options{false});
    ASSERT_EQ(p.diff.size(), 3u);
    EXPECT_EQ(p.diff[0].key, "tokenizer.ggml.padding_token_id");  // i32 -1 becomes u32 2
    EXPECT_EQ(p.diff[0].after->type, value_type::u32);
    EXPECT_EQ(decode<std::uint32_t>(p.diff[0].after->bytes), 2u);
    EXPECT_EQ(p.diff[1].key, "tokenizer.ggml.bos_token_id");
    EXPECT_EQ(decode<std::uint32_t>(p.diff[1].after->bytes), 1u);
    EXPECT_EQ(decode<std::uint32_t>(p.diff[2].after->bytes), 3u);  // the first "hi"
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_NE(p.warnings[0].find("2 tokens are 'hi' (ids 3, 4)"), std::string::npos);

    const error id = fails({metadata_edit::special_token("eos", "5")});  // == vocabulary size
    EXPECT_EQ(id.code, minfer::gguf::write_codes::token_not_found);
    EXPECT_EQ(id.expected, 5u);
    EXPECT_EQ(id.found, 5u);
    EXPECT_EQ(plans({metadata_edit::special_token("eos", "4")}).diff.size(), 2u);  // the last id is fine
}

TEST_F(MetadataEdit, SpecialTokenRefusals) {
    const error huge = fails({metadata_edit::special_token("eos", "99999999999999999999999")});
    EXPECT_EQ(huge.code, minfer::gguf::write_codes::token_not_found);
    const error text = fails({metadata_edit::special_token("eos", "<|nope|>")});
    EXPECT_EQ(text.code, minfer::gguf::write_codes::token_not_found);
    EXPECT_EQ(text.detail, "'<|nope|>'");
    EXPECT_EQ(text.subject, "tokenizer.ggml.eos_token_id");
    const error none = fails({metadata_edit::special_token("eos", "x")}, no_vocab_);
    EXPECT_EQ(none.code, minfer::gguf::write_codes::token_not_found);
    EXPECT_NE(none.detail.find("no vocabulary"), std::string::npos);
    const error name = fails({metadata_edit::special_token("bogus", "1")});
    EXPECT_EQ(name.code, errc::bad_value_text);
}

// The plan's changes through rewrite() give a file with the new metadata and the same tensors.
TEST_F(MetadataEdit, RewriteThroughThePlan) {
    const model m = open(path_);
    const std::vector<metadata_edit> edits{metadata_edit::set("llama.rope.freq_base", "500000"),
                                           metadata_edit::set_typed("x.flag", value_type::boolean, "true"),
                                           metadata_edit::chat_template("t")};
    auto plan = plan_metadata_edit(m, edits);
    ASSERT_TRUE(plan);
    auto src = model_source::open(m);
    ASSERT_TRUE(src);
    auto w = rewrite(m, *src, plan->changes, m.tensors());
    ASSERT_TRUE(w);
    const fs::path out = dir_ / "out.gguf";
    ASSERT_TRUE(w->write(out));
    const model o = open(out);
    EXPECT_EQ(o.get<float>("llama.rope.freq_base").value(), 500000.0f);
    EXPECT_EQ(o.get<bool>("x.flag").value(), true);
    EXPECT_EQ(o.get<std::string_view>("tokenizer.chat_template").value(), "t");
    EXPECT_EQ(o.find("tokenizer.chat_template.tool_use"), nullptr);
    EXPECT_EQ(o.find("minfer.padding"), nullptr);
    // Keys keep their order; the new key and the re-added template go last.
    std::vector<std::string_view> keys;
    for (const kv& r : o.metadata().metadata()) keys.push_back(r.key);
    const std::vector<std::string_view> want{"general.architecture", "general.name", "llama.block_count",
                                             "llama.rope.freq_base", "general.alignment", "tokenizer.ggml.tokens",
                                             "tokenizer.ggml.padding_token_id", "x.flag", "tokenizer.chat_template"};
    EXPECT_EQ(keys, want);
    ASSERT_EQ(o.tensors().size(), 1u);
    EXPECT_EQ(o.tensors()[0].info->name, "a.weight");
}

// llama.cpp's own gguf reader reads what an edit writes, as a new file and in place (with the
// padding key): the edited values, the tensors at their offsets, the same data offset in place.
// Skipped when no llama.cpp library is named ($MINFER_LLAMA_LIB, scripts/llama-ref.sh).
namespace lr = minfer::llama_ref;

struct llama_ctx {
    const lr::llama_api& api;
    lr::gguf_context* ctx;
    ~llama_ctx() {
        if (ctx != nullptr) api.gguf_free(ctx);
    }
    std::int64_t key(std::string_view k) const {
        for (std::int64_t i = 0; i < api.gguf_get_n_kv(ctx); ++i)
            if (k == api.gguf_get_key(ctx, i)) return i;
        return -1;
    }
};

TEST_F(MetadataEdit, LlamaCppReadsEditedFiles) {
    std::string why;
    const lr::llama_lib* lib = lr::llama_lib::require(lr::part::gguf_read, why);
    if (lib == nullptr) {
        if (lr::llama_lib::configured()) FAIL() << why;
        MINFER_SKIP_REFERENCE(why);
    }
    const lr::llama_api& api = lib->api();

    // A model with room to shrink, edited in place, and the same edit written as a new file.
    const fs::path in = dir_ / "ref.gguf";
    {
        writer w;
        w.set_string("general.architecture", "llama");
        w.set_string("general.description", std::string(300, 'd'));
        const std::vector<std::string> toks{"<s>", "</s>", "x"};
        w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(toks));
        std::vector<float> data(64);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
        const std::array<std::int64_t, 1> ne{64};
        w.add_tensor("a.weight", tensor_type::f32, ne, std::as_bytes(std::span<const float>(data)));
        w.add_tensor("b.weight", tensor_type::f32, ne, std::as_bytes(std::span<const float>(data)));
        ASSERT_TRUE(w.write(in));
    }
    const std::vector<metadata_edit> edits{metadata_edit::description("short"),
                                           metadata_edit::special_token("eos", "</s>"),
                                           metadata_edit::set_typed("x.f64", value_type::f64, "0.25")};
    const fs::path out = dir_ / "ref-out.gguf";
    const fs::path ip = dir_ / "ref-ip.gguf";
    std::uint64_t data_offset = 0;
    {
        const model m = open(in);
        data_offset = m.metadata().data_offset();
        auto plan = plan_metadata_edit(m, edits);
        ASSERT_TRUE(plan);
        auto src = model_source::open(m);
        ASSERT_TRUE(src);
        auto w = rewrite(m, *src, plan->changes, m.tensors());
        ASSERT_TRUE(w);
        ASSERT_TRUE(w->write(out));
    }
    fs::copy_file(in, ip, fs::copy_options::overwrite_existing);
    {
        model m = open(ip);
        auto plan = plan_metadata_edit(m, edits, metadata_edit_options{false});
        ASSERT_TRUE(plan);
        auto src = model_source::open(m);
        ASSERT_TRUE(src);
        auto w = rewrite(m, *src, plan->changes, m.tensors());
        ASSERT_TRUE(w);
        auto e = plan_in_place(m, 0, *w);
        ASSERT_TRUE(e) << e.error().message();
        EXPECT_GT(e->padding_bytes, 0u);
        ASSERT_TRUE(apply_in_place(*e, std::move(m)));
    }
    for (const fs::path& p : {out, ip}) {
        SCOPED_TRACE(p.string());
        const llama_ctx c{api, api.gguf_init_from_file(p.c_str(), {true, nullptr})};
        ASSERT_NE(c.ctx, nullptr);
        ASSERT_GE(c.key("general.description"), 0);
        EXPECT_STREQ(api.gguf_get_val_str(c.ctx, c.key("general.description")), "short");
        ASSERT_GE(c.key("tokenizer.ggml.eos_token_id"), 0);
        EXPECT_EQ(api.gguf_get_val_u32(c.ctx, c.key("tokenizer.ggml.eos_token_id")), 1u);
        ASSERT_GE(c.key("x.f64"), 0);
        EXPECT_EQ(api.gguf_get_val_f64(c.ctx, c.key("x.f64")), 0.25);
        EXPECT_EQ(c.key(in_place_padding_key) >= 0, p == ip);
        ASSERT_EQ(api.gguf_get_n_tensors(c.ctx), 2);
        EXPECT_EQ(api.gguf_get_tensor_offset(c.ctx, 1), 256u);
        if (p == ip) {
            EXPECT_EQ(api.gguf_get_data_offset(c.ctx), data_offset);
        }
    }
    // The tensor bytes are the input's.
    const model a = open(in);
    for (const fs::path& p : {out, ip}) {
        const model b = open(p);
        for (std::size_t i = 0; i < a.tensors().size(); ++i) {
            const auto x = a.tensor_data(a.tensors()[i]);
            const auto y = b.tensor_data(b.tensors()[i]);
            ASSERT_EQ(x.size(), y.size());
            EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0);
        }
    }
}

}  // namespace
