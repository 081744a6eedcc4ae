// Metadata: the 13 value types, arrays, typed access and every metadata check of the parser.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "alloc_probe.hpp"
#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

constexpr std::uint64_t vt(value_type t) { return static_cast<std::uint64_t>(t); }

// A file of `n_kv` records built by `body` (no tensors).
template <class F>
gguf_bytes kv_file(std::int64_t n_kv, F&& body) {
    gguf_bytes g;
    g.header(3, 0, n_kv);
    body(g);
    return g;
}

// ---- all scalar types ----------------------------------------------------------------------

class Scalars : public ::testing::Test {
protected:
    void SetUp() override {
        g.header(3, 0, 13)
            .kv_u8("u8", 200)
            .kv_i8("i8", -100)
            .kv_u16("u16", 60000)
            .kv_i16("i16", -30000)
            .kv_u32("u32", 4000000000u)
            .kv_i32("i32", -2000000000)
            .kv_f32("f32", 1.5f)
            .kv_bool("bool", true)
            .kv_str("string", "hello")
            .kv_array_of<std::uint32_t>("array", value_type::u32, {1, 2, 3})
            .kv_u64("u64", (1ull << 63) + 5)
            .kv_i64("i64", -(std::int64_t{1} << 62))
            .kv_f64("f64", 3.25);
        auto r = file_view::parse(g.span());
        ASSERT_TRUE(r) << r.error().message();
        v = std::move(*r);
    }
    gguf_bytes g;
    file_view v;
};

TEST_F(Scalars, EveryTypeReadsBack) {
    ASSERT_EQ(v.metadata().size(), 13u);
    EXPECT_EQ(v.get<std::uint8_t>("u8").value_or(0), 200);
    EXPECT_EQ(v.get<std::int8_t>("i8").value_or(0), -100);
    EXPECT_EQ(v.get<std::uint16_t>("u16").value_or(0), 60000);
    EXPECT_EQ(v.get<std::int16_t>("i16").value_or(0), -30000);
    EXPECT_EQ(v.get<std::uint32_t>("u32").value_or(0), 4000000000u);
    EXPECT_EQ(v.get<std::int32_t>("i32").value_or(0), -2000000000);
    EXPECT_EQ(v.get<float>("f32").value_or(0.f), 1.5f);
    EXPECT_EQ(v.get<bool>("bool").value_or(false), true);
    EXPECT_EQ(v.get<std::string_view>("string").value_or(""), "hello");
    EXPECT_EQ(v.get<std::uint64_t>("u64").value_or(0), (1ull << 63) + 5);
    EXPECT_EQ(v.get<std::int64_t>("i64").value_or(0), -(std::int64_t{1} << 62));
    EXPECT_EQ(v.get<double>("f64").value_or(0.0), 3.25);
    auto a = v.get<array_view>("array");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->element_type(), value_type::u32);
    EXPECT_EQ(a->size(), 3u);
    EXPECT_EQ(a->at<std::uint32_t>(2).value_or(0), 3u);
}

TEST_F(Scalars, RecordsInFileOrderWithTypesAndOffsets) {
    const char* keys[] = {"u8",     "i8",    "u16", "i16", "u32", "i32", "f32",
                          "bool",   "string", "array", "u64", "i64", "f64"};
    const value_type types[] = {value_type::u8,      value_type::i8,     value_type::u16,   value_type::i16,
                                value_type::u32,     value_type::i32,    value_type::f32,   value_type::boolean,
                                value_type::string,  value_type::array,  value_type::u64,   value_type::i64,
                                value_type::f64};
    std::uint64_t off = 24;
    for (std::size_t i = 0; i < 13; ++i) {
        const kv& e = v.metadata()[i];
        SCOPED_TRACE(keys[i]);
        EXPECT_EQ(e.key, keys[i]);
        EXPECT_EQ(e.type, types[i]);
        EXPECT_EQ(e.offset, off);
        EXPECT_EQ(&e, v.find(keys[i]));  // O(1) lookup finds the same record
        EXPECT_EQ(to_string(e.type), keys[i]);  // value type names: "u8", "bool", "string", …
        if (e.type == value_type::array) {
            EXPECT_TRUE(e.is_array());
            EXPECT_EQ(e.element_type, value_type::u32);
            EXPECT_EQ(e.count, 3u);
            EXPECT_EQ(e.payload.size(), 12u);
            off += 8 + e.key.size() + 4 + 4 + 8 + 12;
        } else if (e.type == value_type::string) {
            EXPECT_EQ(e.element_type, value_type::string);
            EXPECT_EQ(e.count, 1u);
            EXPECT_EQ(e.payload.size(), 5u);
            off += 8 + e.key.size() + 4 + 8 + 5;
        } else {
            EXPECT_FALSE(e.is_array());
            EXPECT_EQ(e.element_type, e.type);
            EXPECT_EQ(e.count, 1u);
            EXPECT_EQ(e.payload.size(), value_size(e.type));
            off += 8 + e.key.size() + 4 + value_size(e.type);
        }
        // payloads are views into the parsed bytes: nothing copied
        EXPECT_GE(e.payload.data(), g.b.data());
        EXPECT_LE(e.payload.data() + e.payload.size(), g.b.data() + g.b.size());
        EXPECT_GE(e.key.data(), reinterpret_cast<const char*>(g.b.data()));
    }
    EXPECT_EQ(v.data_offset(), off);  // no tensors: data starts at the end of the table
}

TEST_F(Scalars, WrongTypeGettersReturnTypeMismatch) {
    const kv* u32 = v.find("u32");
    ASSERT_NE(u32, nullptr);
    // no conversion, no narrowing, no widening
    EXPECT_TRUE(error_is(error_of(v.get<float>("u32")),
                         {.code = errc::type_mismatch, .where = section::access, .offset = u32->offset,
                          .expected = vt(value_type::f32), .found = vt(value_type::u32), .subject = "u32"}));
    EXPECT_TRUE(error_is(error_of(v.get<std::int32_t>("u32")),
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::i32),
                          .found = vt(value_type::u32)}));
    EXPECT_TRUE(error_is(error_of(v.get<std::uint64_t>("u32")),
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::u64),
                          .found = vt(value_type::u32)}));
    EXPECT_TRUE(error_is(error_of(v.get<std::string_view>("array")),
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::string),
                          .found = vt(value_type::array), .subject = "array"}));
    EXPECT_TRUE(error_is(error_of(v.get<array_view>("string")),
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::array),
                          .found = vt(value_type::string)}));
    EXPECT_TRUE(error_is(error_of(v.get<std::uint32_t>("array")),  // an array is not its element type
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::u32),
                          .found = vt(value_type::array)}));
    EXPECT_TRUE(error_is(error_of(v.get<bool>("u8")),
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::boolean),
                          .found = vt(value_type::u8)}));
    EXPECT_TRUE(error_is(error_of(v.get<double>("f32")),
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::f64),
                          .found = vt(value_type::f32)}));
    EXPECT_EQ(error_of(v.get<float>("u32")).description(), "key 'u32' has type u32, expected f32");
    // value_or still works on a mismatch
    EXPECT_EQ(v.get<float>("u32").value_or(-1.f), -1.f);
}

TEST_F(Scalars, KeyNotFound) {
    const error e = error_of(v.get<std::uint32_t>("llama.block_count"));
    EXPECT_TRUE(error_is(e, {.code = errc::key_not_found, .where = section::access, .subject = "llama.block_count"}));
    EXPECT_EQ(e.message(), "key 'llama.block_count' not found [key_not_found]");
    EXPECT_EQ(v.find("llama.block_count"), nullptr);
    EXPECT_EQ(v.find(""), nullptr);
    EXPECT_EQ(v.find("u"), nullptr);  // prefix of a key is not the key
}

TEST_F(Scalars, IntegerWidening) {
    EXPECT_EQ(v.find("u8")->as_i64().value_or(0), 200);
    EXPECT_EQ(v.find("i8")->as_i64().value_or(0), -100);
    EXPECT_EQ(v.find("u16")->as_i64().value_or(0), 60000);
    EXPECT_EQ(v.find("i16")->as_i64().value_or(0), -30000);
    EXPECT_EQ(v.find("u32")->as_i64().value_or(0), 4000000000);
    EXPECT_EQ(v.find("i32")->as_i64().value_or(0), -2000000000);
    EXPECT_EQ(v.find("i64")->as_i64().value_or(0), -(std::int64_t{1} << 62));
    // u64 above INT64_MAX does not fit in int64
    EXPECT_TRUE(error_is(error_of(v.find("u64")->as_i64()),
                         {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::i64),
                          .found = vt(value_type::u64), .subject = "u64"}));
    EXPECT_EQ(v.find("u64")->as_u64().value_or(0), (1ull << 63) + 5);
    EXPECT_EQ(v.find("u32")->as_u64().value_or(0), 4000000000u);
    EXPECT_EQ(v.find("u8")->as_u64().value_or(0), 200u);
    // negatives are not u64
    for (const char* k : {"i8", "i16", "i32", "i64"}) {
        SCOPED_TRACE(k);
        EXPECT_TRUE(error_is(error_of(v.find(k)->as_u64()),
                             {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::u64),
                              .subject = k}));
    }
    // non-integers are neither
    for (const char* k : {"f32", "f64", "bool", "string", "array"}) {
        SCOPED_TRACE(k);
        EXPECT_EQ(error_of(v.find(k)->as_i64()).code, errc::type_mismatch);
        EXPECT_EQ(error_of(v.find(k)->as_u64()).code, errc::type_mismatch);
    }
}

TEST(Metadata, PositiveSignedWidensToU64) {
    gguf_bytes g = kv_file(2, [](gguf_bytes& b) { b.kv_i32("a", 7).kv_i64("b", 0); });
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->find("a")->as_u64().value_or(1), 7u);
    EXPECT_EQ(r->find("b")->as_u64().value_or(1), 0u);
}

TEST(Metadata, FloatSpecialValuesRoundTrip) {
    gguf_bytes g = kv_file(3, [](gguf_bytes& b) {
        b.kv_f32("nan", std::numeric_limits<float>::quiet_NaN())
            .kv_f64("inf", std::numeric_limits<double>::infinity())
            .kv_f32("neg0", -0.0f);
    });
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(std::isnan(r->get<float>("nan").value_or(0.f)));
    EXPECT_TRUE(std::isinf(r->get<double>("inf").value_or(0.0)));
    EXPECT_TRUE(std::signbit(r->get<float>("neg0").value_or(1.f)));
}

// ---- arrays of every fixed type ------------------------------------------------------------

template <class T>
void check_array(value_type t, std::initializer_list<T> values) {
    SCOPED_TRACE(std::string(to_string(t)));
    gguf_bytes g;
    g.header(3, 0, 2);
    // the odd key length leaves the payload unaligned
    g.kv_array_of<T>("k.odd", t, values).kv_u8("after", 9);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    auto a = r->get<array_view>("k.odd");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->element_type(), t);
    EXPECT_EQ(a->size(), values.size());
    EXPECT_EQ(a->raw().size(), values.size() * sizeof(T));
    std::uint64_t i = 0;
    for (T x : values) {
        auto got = a->at<T>(i++);
        ASSERT_TRUE(got);
        if constexpr (std::is_floating_point_v<T>) {
            EXPECT_EQ(std::memcmp(&*got, &x, sizeof x), 0);
        } else {
            EXPECT_EQ(*got, x);
        }
    }
    EXPECT_TRUE(error_is(error_of(a->at<T>(values.size())),
                         {.code = errc::index_out_of_range, .where = section::access, .expected = values.size(),
                          .found = values.size()}));
    EXPECT_TRUE(error_is(error_of(a->at<T>(~0ull)), {.code = errc::index_out_of_range, .where = section::access,
                                                     .expected = values.size(), .found = ~0ull}));
    // the wrong element type: type_mismatch, never a reinterpretation (an u8 array is not f32)
    if constexpr (std::is_same_v<T, float>) {
        EXPECT_TRUE(error_is(error_of(a->at<std::uint32_t>(0)),
                             {.code = errc::type_mismatch, .where = section::access, .expected = vt(value_type::u32),
                              .found = vt(t)}));
    } else {
        EXPECT_TRUE(error_is(error_of(a->at<float>(0)), {.code = errc::type_mismatch, .where = section::access,
                                                         .expected = vt(value_type::f32), .found = vt(t),}));
    }
    EXPECT_TRUE(a->strings().empty());  // not a string array
    EXPECT_EQ(a->strings().begin(), a->strings().end());
    EXPECT_TRUE(error_is(error_of(a->string_at(0)), {.code = errc::type_mismatch, .where = section::access,
                                                     .expected = vt(value_type::string), .found = vt(t)}));
    EXPECT_TRUE(error_is(error_of(a->string_table()), {.code = errc::type_mismatch, .where = section::access,
                                                       .expected = vt(value_type::string), .found = vt(t)}));
    EXPECT_EQ(r->get<std::uint8_t>("after").value_or(0), 9);
}

TEST(Arrays, EveryFixedType) {
    check_array<std::uint8_t>(value_type::u8, {0, 1, 255});
    check_array<std::int8_t>(value_type::i8, {-128, 0, 127});
    check_array<std::uint16_t>(value_type::u16, {0, 65535, 7});
    check_array<std::int16_t>(value_type::i16, {-32768, 32767});
    check_array<std::uint32_t>(value_type::u32, {0xDEADBEEFu, 1});
    check_array<std::int32_t>(value_type::i32, {-1, std::numeric_limits<std::int32_t>::min()});
    check_array<float>(value_type::f32, {1.0f, -2.5f, 1e-30f});
    check_array<std::uint64_t>(value_type::u64, {~0ull, 0});
    check_array<std::int64_t>(value_type::i64, {std::numeric_limits<std::int64_t>::min(), 42});
    check_array<double>(value_type::f64, {3.141592653589793, -0.0});
}

TEST(Arrays, BoolArray) {
    gguf_bytes g = kv_file(1, [](gguf_bytes& b) {
        b.kv_array("flags", value_type::boolean, 3).u8(1).u8(0).u8(1);
    });
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    auto a = r->get<array_view>("flags");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->at<bool>(0).value_or(false), true);
    EXPECT_EQ(a->at<bool>(1).value_or(true), false);
    EXPECT_EQ(a->at<bool>(2).value_or(false), true);
}

TEST(Arrays, EmptyArrays) {
    gguf_bytes g = kv_file(2, [](gguf_bytes& b) {
        b.kv_array("e.u32", value_type::u32, 0).kv_array("e.str", value_type::string, 0);
    });
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    auto a = r->get<array_view>("e.u32");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->empty());
    EXPECT_EQ(error_of(a->at<std::uint32_t>(0)).code, errc::index_out_of_range);
    auto s = r->get<array_view>("e.str");
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->strings().empty());
    EXPECT_EQ(s->strings().begin(), s->strings().end());
    auto t = s->string_table();
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->empty());
}

TEST(Arrays, StringArray) {
    gguf_bytes g = kv_file(1, [](gguf_bytes& b) {
        b.kv_strings("tokenizer.ggml.tokens", {"<s>", "", "hello", std::string_view("a\0b", 3), "\xE2\x96\x81the"});
    });
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    auto a = r->get<array_view>("tokenizer.ggml.tokens");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->element_type(), value_type::string);
    ASSERT_EQ(a->size(), 5u);
    const std::string_view want[] = {"<s>", "", "hello", std::string_view("a\0b", 3), "\xE2\x96\x81the"};
    std::size_t i = 0;
    for (std::string_view s : a->strings()) {
        ASSERT_LT(i, 5u);
        EXPECT_EQ(s, want[i]);
        // views into the file
        EXPECT_GE(reinterpret_cast<const std::byte*>(s.data()), g.b.data());
        ++i;
    }
    EXPECT_EQ(i, 5u);
    EXPECT_EQ(a->strings().size(), 5u);
    for (std::uint64_t k = 0; k < 5; ++k) EXPECT_EQ(a->string_at(k).value_or("?"), want[k]);
    EXPECT_TRUE(error_is(error_of(a->string_at(5)),
                         {.code = errc::index_out_of_range, .where = section::access, .expected = 5, .found = 5}));
    auto table = a->string_table();
    ASSERT_TRUE(table);
    ASSERT_EQ(table->size(), 5u);
    for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ((*table)[k], want[k]);
    // a string array is not a fixed array
    EXPECT_TRUE(error_is(error_of(a->at<std::uint64_t>(0)), {.code = errc::type_mismatch, .where = section::access,
                                                             .expected = vt(value_type::u64),
                                                             .found = vt(value_type::string)}));
}

TEST(Arrays, LargeStringArray) {
    constexpr std::uint64_t n = 20000;
    gguf_bytes g;
    g.header(3, 0, 1).kv_array("vocab", value_type::string, n);
    for (std::uint64_t i = 0; i < n; ++i) g.str("tok" + std::to_string(i));
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    auto a = r->get<array_view>("vocab");
    ASSERT_TRUE(a);
    auto t = a->string_table();
    ASSERT_TRUE(t);
    ASSERT_EQ(t->size(), n);
    EXPECT_EQ((*t)[0], "tok0");
    EXPECT_EQ((*t)[n - 1], "tok" + std::to_string(n - 1));
    EXPECT_EQ(a->string_at(12345).value_or(""), "tok12345");
}

// file_view::string_item: the marks the parse leaves every string_mark_stride items give every item
// of long arrays (around each mark, the last item, two arrays in one file) exactly as the walk does;
// short arrays, other views' kvs and wrong indexes are answered as string_at answers them.
TEST(Arrays, StringItemFromTheParsesMarks) {
    constexpr std::uint64_t stride = file_view::string_mark_stride;
    const std::uint64_t n = 5 * stride + 7;
    gguf_bytes g;
    g.header(3, 0, 4).kv_array("vocab", value_type::string, n);
    for (std::uint64_t i = 0; i < n; ++i) g.str(std::string(i % 13, 'x') + std::to_string(i));  // lengths vary
    g.kv_array("merges", value_type::string, stride + 1);
    for (std::uint64_t i = 0; i <= stride; ++i) g.str("m" + std::to_string(i));
    g.kv_strings("short", {"a", "bb"});
    g.kv_u32("scalar", 7);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    const kv* vocab = r->find("vocab");
    ASSERT_NE(vocab, nullptr);
    auto walk = vocab->get<array_view>()->string_table();
    ASSERT_TRUE(walk);
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(r->string_item(*vocab, i).value_or("?"), (*walk)[i]) << i;
    EXPECT_EQ(r->string_item(*r->find("merges"), stride).value_or("?"), "m" + std::to_string(stride));
    EXPECT_EQ(r->string_item(*r->find("merges"), stride - 1).value_or("?"), "m" + std::to_string(stride - 1));
    EXPECT_EQ(r->string_item(*r->find("short"), 1).value_or("?"), "bb");
    EXPECT_TRUE(error_is(error_of(r->string_item(*vocab, n)),
                         {.code = errc::index_out_of_range, .where = section::access, .expected = n, .found = n}));
    EXPECT_EQ(error_of(r->string_item(*r->find("scalar"), 0)).code, errc::type_mismatch);
    // a kv of another view (a copy of the record): the walk, same answer
    const kv copy = *vocab;
    EXPECT_EQ(r->string_item(copy, 3 * stride + 5).value_or("?"), (*walk)[3 * stride + 5]);
}

TEST(Arrays, TokenIdsFromTheFileAreNotTrustedAsIndices) {
    // CVE-2025-49847 style: a special-token id past the vocabulary. Indexing with it is refused.
    gguf_bytes g = kv_file(3, [](gguf_bytes& b) {
        b.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"})
            .kv_u32("tokenizer.ggml.bos_token_id", 1000000)
            .kv_array_of<float>("tokenizer.ggml.scores", value_type::f32, {0.f, 1.f});
    });
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    auto tokens = r->get<array_view>("tokenizer.ggml.tokens");
    auto scores = r->get<array_view>("tokenizer.ggml.scores");
    const std::uint32_t bos = r->get<std::uint32_t>("tokenizer.ggml.bos_token_id").value_or(0);
    ASSERT_TRUE(tokens);
    ASSERT_TRUE(scores);
    EXPECT_TRUE(error_is(error_of(tokens->string_at(bos)),
                         {.code = errc::index_out_of_range, .where = section::access, .expected = 3, .found = bos}));
    EXPECT_TRUE(error_is(error_of(scores->at<float>(2)),  // fewer scores than tokens
                         {.code = errc::index_out_of_range, .where = section::access, .expected = 2, .found = 2}));
}

// ---- metadata checks -----------------------------------------------------------------------

TEST(MetadataChecks, NestedArray) {
    gguf_bytes g = kv_file(1, [](gguf_bytes& b) {
        b.kv_array("nest", value_type::array, 1).type(value_type::u8).u64(0);
    });
    const std::uint64_t elem_at = 24 + 8 + 4 + 4;
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::nested_array, .where = section::metadata, .offset = elem_at,
                             .subject = "nest", .index = 0}));
    EXPECT_EQ(e.description(), "key 'nest' is an array of arrays, which GGUF does not support");
}

TEST(MetadataChecks, BadValueType) {
    for (std::uint32_t tag : {13u, 100u, 0xFFFFFFFFu}) {
        SCOPED_TRACE(tag);
        gguf_bytes g = kv_file(2, [&](gguf_bytes& b) { b.kv_u8("ok", 1).str("bad").u32(tag).u32(0); });
        const std::uint64_t tag_at = 24 + (8 + 2 + 4 + 1) + 8 + 3;
        const error e = parse_error(g);
        EXPECT_TRUE(error_is(e, {.code = errc::bad_value_type, .where = section::metadata, .offset = tag_at,
                                 .found = tag, .subject = "bad", .index = 1, .detail = "value type"}));
        EXPECT_EQ(e.description(), "key 'bad' has invalid GGUF type " + std::to_string(tag) + " (value type)");
    }
}

TEST(MetadataChecks, BadArrayElementType) {
    for (std::uint32_t tag : {13u, 0xFFFFFFFFu}) {
        SCOPED_TRACE(tag);
        gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.key("arr", value_type::array).u32(tag).u64(1).u32(0); });
        const std::uint64_t tag_at = 24 + 8 + 3 + 4;
        EXPECT_TRUE(error_is(parse_error(g), {.code = errc::bad_value_type, .where = section::metadata,
                                              .offset = tag_at, .found = tag, .subject = "arr",
                                              .detail = "array element type"}));
    }
}

TEST(MetadataChecks, StringTooLong) {
    for (std::uint64_t len : {~0ull, (1ull << 30) + 1, 1ull << 63}) {
        SCOPED_TRACE(len);
        gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.key("s", value_type::string).str_len(len, "abc"); });
        const std::uint64_t len_at = 24 + 8 + 1 + 4;
        alloc_probe probe;
        const error e = parse_error(g);
        EXPECT_LT(probe.largest(), 4096u);
        EXPECT_TRUE(error_is(e, {.code = errc::string_too_long, .where = section::metadata, .offset = len_at,
                                 .expected = 1ull << 30, .found = len, .subject = "s", .detail = "string value"}));
        EXPECT_EQ(e.description(),
                  "string length " + std::to_string(len) + " exceeds maximum 1073741824 (string value of 's')");
    }
}

TEST(MetadataChecks, StringAtTheCapIsNotTooLongButExceedsFile) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.key("s", value_type::string).str_len(1ull << 30, "abc"); });
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::string_exceeds_file, .where = section::metadata,
                                          .offset = 37, .expected = 3, .found = 1ull << 30}));
}

TEST(MetadataChecks, KeyTooLong) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.str_len(~0ull, "key").zeros(16); });
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::string_too_long, .where = section::metadata, .offset = 24,
                             .expected = 1ull << 30, .found = ~0ull, .subject = "", .index = 0, .detail = "key"}));
    EXPECT_EQ(e.description(), "string length 18446744073709551615 exceeds maximum 1073741824 (key of KV 0)");
}

TEST(MetadataChecks, StringExceedsFile) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.key("s", value_type::string).str_len(100, "0123456789"); });
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::string_exceeds_file, .where = section::metadata, .offset = 37,
                             .expected = 10, .found = 100, .subject = "s", .detail = "string value"}));
    EXPECT_EQ(e.description(), "string length 100 exceeds remaining file size 10 bytes (string value of 's')");
}

TEST(MetadataChecks, KeyExceedsFile) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.str_len(50, "general.").zeros(8); });
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::string_exceeds_file, .where = section::metadata,
                                          .offset = 24, .expected = 16, .found = 50, .index = 0, .detail = "key"}));
}

TEST(MetadataChecks, ArrayTooLong) {
    for (value_type t : {value_type::u8, value_type::f64, value_type::string}) {
        for (std::uint64_t n : {1ull << 62, (1ull << 30) + 1, ~0ull}) {
            SCOPED_TRACE(std::string(to_string(t)) + " " + std::to_string(n));
            gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.kv_array("arr", t, n).zeros(16); });
            const std::uint64_t count_at = 24 + 8 + 3 + 4 + 4;
            alloc_probe probe;
            const error e = parse_error(g);
            EXPECT_LT(probe.largest(), 4096u);
            EXPECT_TRUE(error_is(e, {.code = errc::array_too_long, .where = section::metadata, .offset = count_at,
                                     .expected = 1ull << 30, .found = n, .subject = "arr"}));
        }
    }
}

TEST(MetadataChecks, FixedArrayExceedsFile) {
    // count within the cap, but more elements than the bytes left
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.kv_array("arr", value_type::u32, 10).zeros(8); });
    const std::uint64_t elems_at = 24 + 8 + 3 + 4 + 4 + 8;
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::array_exceeds_file, .where = section::metadata, .offset = elems_at,
                             .expected = 8, .found = 10, .subject = "arr", .detail = "u32"}));
    EXPECT_EQ(e.description(), "key 'arr': array of 10 u32 elements exceeds remaining file size 8 bytes");
    // the cap itself (2^30) with a tiny file
    gguf_bytes h = kv_file(1, [&](gguf_bytes& b) { b.kv_array("arr", value_type::u64, 1ull << 30).zeros(8); });
    alloc_probe probe;
    EXPECT_TRUE(error_is(parse_error(h), {.code = errc::array_exceeds_file, .where = section::metadata,
                                          .offset = elems_at, .expected = 8, .found = 1ull << 30}));
    EXPECT_LT(probe.largest(), 4096u);
}

TEST(MetadataChecks, StringArrayExceedsFile) {
    // every string needs at least its 8-byte length: 5 strings cannot fit in 16 bytes
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.kv_array("toks", value_type::string, 5).zeros(16); });
    const std::uint64_t count_at = 24 + 8 + 4 + 4 + 4;
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::array_exceeds_file, .where = section::metadata, .offset = count_at,
                             .expected = 16, .found = 5, .subject = "toks", .detail = "string"}));
}

TEST(MetadataChecks, StringInArrayExceedsFile) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) {
        b.kv_array("toks", value_type::string, 3).str("a").str_len(1000, "bcdefgh").zeros(8);
    });
    const std::uint64_t second_at = 24 + 8 + 4 + 4 + 4 + 8 + 9;
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::string_exceeds_file, .where = section::metadata, .offset = second_at,
                             .expected = 15, .found = 1000, .subject = "toks", .detail = "array string"}));
    EXPECT_EQ(e.description(), "string length 1000 exceeds remaining file size 15 bytes (item 1 of 'toks')");
}

TEST(MetadataChecks, StringInArrayTooLong) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) {
        b.kv_array("toks", value_type::string, 2).str("a").str_len(~0ull);
    });
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::string_too_long, .where = section::metadata,
                                          .offset = 24 + 8 + 4 + 4 + 4 + 8 + 9, .found = ~0ull, .subject = "toks"}));
}

TEST(MetadataChecks, BadBoolScalar) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.key("flag", value_type::boolean).u8(2); });
    const std::uint64_t at = 24 + 8 + 4 + 4;
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::bad_bool, .where = section::metadata, .offset = at, .expected = 1,
                             .found = 2, .subject = "flag"}));
    EXPECT_EQ(e.description(), "key 'flag': bool value 2 is neither 0 nor 1");
    gguf_bytes h = kv_file(1, [&](gguf_bytes& b) { b.key("flag", value_type::boolean).u8(0xFF); });
    EXPECT_EQ(parse_error(h).found, 0xFFu);
}

TEST(MetadataChecks, BadBoolInArray) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) {
        b.kv_array("flags", value_type::boolean, 4).u8(0).u8(1).u8(2).u8(1);
    });
    const std::uint64_t third_at = 24 + 8 + 5 + 4 + 4 + 8 + 2;
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::bad_bool, .where = section::metadata, .offset = third_at,
                                          .expected = 1, .found = 2, .subject = "flags"}));
}

TEST(MetadataChecks, ScalarTruncated) {
    gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.key("x", value_type::u64).u32(7); });
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::truncated, .where = section::metadata, .offset = 37, .expected = 8,
                             .found = 4, .subject = "x", .detail = "u64 value"}));
}

TEST(MetadataChecks, EmptyKey) {
    gguf_bytes g = kv_file(2, [&](gguf_bytes& b) { b.kv_u8("a", 1).kv_u32("", 2); });
    const std::uint64_t second = 24 + 8 + 1 + 4 + 1;
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::empty_key, .where = section::metadata, .offset = second, .index = 1}));
    EXPECT_EQ(e.description(), "key of KV 1 is empty");
}

TEST(MetadataChecks, KeyWithANul) {
    // C readers (strcmp) would take "general.alignment\0x" for the alignment key.
    const std::string key("general.alignment\0x", 19);
    gguf_bytes g = kv_file(2, [&](gguf_bytes& b) { b.kv_u8("a", 1).kv_u32(key, 64); });
    const std::uint64_t second = 24 + 8 + 1 + 4 + 1;
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::nul_in_name, .where = section::metadata, .offset = second + 8 + 17,
                             .found = 17, .subject = key, .index = 1}));
    EXPECT_EQ(e.description(), "key 'general.alignment\\x00x' holds a NUL byte at position 17, so C readers would see "
                               "another name");
    writer w;
    w.set_u32(key, 64);
    EXPECT_EQ(error_of(w.to_bytes()).code, errc::nul_in_name);
}

TEST(MetadataChecks, DuplicateKey) {
    gguf_bytes g = kv_file(4, [&](gguf_bytes& b) {
        b.kv_u32("general.a", 1).kv_u32("b", 2).kv_u32("c", 3).kv_str("general.a", "again");
    });
    const std::uint64_t fourth = 24 + (8 + 9 + 4 + 4) + 2 * (8 + 1 + 4 + 4);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::duplicate_key, .where = section::metadata, .offset = fourth, .expected = 0,
                             .found = 3, .subject = "general.a", .index = 3}));
    EXPECT_EQ(e.description(), "duplicate key 'general.a' for KV 0 and 3");
}

TEST(MetadataChecks, ManyDistinctKeysAreNotDuplicates) {
    // The hash index must not confuse distinct keys (collisions in the open-addressing table).
    gguf_bytes g;
    const int n = 5000;
    g.header(3, 0, n);
    // appended: GCC 12 -O3 reports a false -Wrestrict on `"k" + std::string`
    auto key = [](int i) { std::string k(1, 'k'); k += std::to_string(i); return k; };
    for (int i = 0; i < n; ++i) g.kv_i32(key(i), i);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    for (int i = 0; i < n; i += 97) EXPECT_EQ(r->get<std::int32_t>(key(i)).value_or(-1), i);
    EXPECT_EQ(r->find("k5000"), nullptr);
}

TEST(MetadataChecks, DuplicateFoundInALargeTable) {
    gguf_bytes g;
    const int n = 10000;  // above 4096: sized by the counting pre-pass, inserts through the window
    g.header(3, 0, n + 1);
    for (int i = 0; i < n; ++i) g.kv_u8("key." + std::to_string(i), 0);
    g.kv_u8("key.17", 1);
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::duplicate_key, .where = section::metadata, .expected = 17,
                                          .found = static_cast<std::uint64_t>(n), .subject = "key.17"}));
}

// Two repeated keys more than the insert window's depth (16) apart: the first is reported.
TEST(MetadataChecks, TheFirstOfTwoDuplicateKeysFarApartIsReported) {
    gguf_bytes g;
    const int n = 30;
    g.header(3, 0, n);
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) keys.push_back(std::string("k.") + std::to_string(10 + i));
    keys[6] = keys[2];
    keys[20] = keys[9];
    for (int i = 0; i < n; ++i) g.kv_u8(keys[static_cast<std::size_t>(i)], 0);
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::duplicate_key, .where = section::metadata, .expected = 2,
                                          .found = 6, .subject = "k.12"}));
}

TEST(MetadataChecks, KeysWithArbitraryBytesAreKeptRaw) {
    const std::string key = std::string("bad\x1b[31m\n", 9);
    gguf_bytes g = kv_file(2, [&](gguf_bytes& b) { b.kv_u8(key, 1).kv_u8(key, 2); });
    const error e = parse_error(g);
    EXPECT_EQ(e.code, errc::duplicate_key);
    EXPECT_EQ(e.subject, key);  // raw in the error
    EXPECT_EQ(e.description(), "duplicate key 'bad\\x1B[31m\\n' for KV 0 and 1");  // escaped when printed
}

// ---- general.alignment -----------------------------------------------------------------------

TEST(Alignment, WrongType) {
    struct c {
        value_type t;
        std::function<void(gguf_bytes&)> value;
    };
    const c cases[] = {
        {value_type::u64, [](gguf_bytes& b) { b.u64(32); }},
        {value_type::i32, [](gguf_bytes& b) { b.i32(32); }},
        {value_type::u16, [](gguf_bytes& b) { b.u16(32); }},
        {value_type::string, [](gguf_bytes& b) { b.str("32"); }},
        {value_type::array, [](gguf_bytes& b) { b.type(value_type::u32).u64(1).u32(32); }},
    };
    for (const c& x : cases) {
        SCOPED_TRACE(std::string(to_string(x.t)));
        gguf_bytes g = kv_file(2, [&](gguf_bytes& b) {
            b.kv_u8("first", 0).key("general.alignment", x.t);
            x.value(b);
        });
        const error e = parse_error(g);
        EXPECT_TRUE(error_is(e, {.code = errc::alignment_wrong_type, .where = section::metadata,
                                 .offset = 24 + 8 + 5 + 4 + 1, .expected = vt(value_type::u32), .found = vt(x.t),
                                 .subject = "general.alignment", .index = 1}));
        EXPECT_EQ(e.description(), "general.alignment has type " + std::string(to_string(x.t)) + ", expected u32");
    }
}

TEST(Alignment, NotAPowerOfTwo) {
    for (std::uint32_t a : {0u, 48u, 3u, 0xFFFFFFFFu, 96u}) {
        SCOPED_TRACE(a);
        gguf_bytes g = kv_file(1, [&](gguf_bytes& b) { b.kv_u32("general.alignment", a); });
        const error e = parse_error(g);
        EXPECT_TRUE(error_is(e, {.code = errc::bad_alignment, .where = section::metadata, .offset = 24, .found = a,
                                 .subject = "general.alignment"}));
        EXPECT_EQ(e.description(), "general.alignment must be a non-zero power of two, found " + std::to_string(a));
    }
}

// A valid alignment places the data section at the padded end of the tensor table.
TEST(Alignment, HonouredInDataOffset) {
    for (std::uint32_t a : {1u, 2u, 8u, 32u, 64u, 4096u, 1u << 20}) {
        SCOPED_TRACE(a);
        gguf_bytes g;
        g.header(3, 1, 1).kv_u32("general.alignment", a).tensor_info("w", {3}, tensor_type::f32, 0);
        const std::uint64_t end_of_table = g.size();
        const std::uint64_t data = (end_of_table + a - 1) / a * a;
        g.zeros(data - end_of_table).zeros(12);
        auto r = file_view::parse(g.span());
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(r->alignment(), a);
        EXPECT_EQ(r->data_offset(), data);
        EXPECT_EQ(r->data_offset() % a, 0u);
        EXPECT_EQ(r->data_size(), (12 + a - 1) / a * a);
        EXPECT_EQ(r->tensor_data(r->tensors()[0]).data(), g.b.data() + data);
    }
}

TEST(Alignment, OtherKeysNamedLikeAlignmentAreOrdinary) {
    gguf_bytes g = kv_file(2, [&](gguf_bytes& b) {
        b.kv_str("general.alignment.note", "x").kv_u64("alignment", 48);
    });
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->alignment(), 32u);
}

}  // namespace
