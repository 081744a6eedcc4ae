// The API an engine author reaches for (issue 8, §5): integer getters that accept any stored width
// with range checks, get_or, bulk typed copies of numeric arrays, O(1) string-array items
// (string_index), iteration by key prefix, the model's path, and caller-set parse limits.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

gguf_bytes numbers_file() {
    gguf_bytes g;
    g.header(3, 0, 9)
        .kv_u8("n.u8", 200)
        .kv_i32("n.i32", -5)
        .kv_u64("n.u64", 1ull << 40)
        .kv_u32("qwen2.block_count", 24)
        .kv_f32("n.f32", 0.5f)
        .kv_str("general.architecture", "qwen2")
        .kv_array_of<std::uint16_t>("a.u16", value_type::u16, {1, 2, 60000})
        .kv_array_of<std::int32_t>("a.i32", value_type::i32, {-1, 0, 7})
        .kv_array_of<float>("a.f32", value_type::f32, {0.25f, -1.5f});
    return g;
}

TEST(GetAs, AnyStoredIntegerWidthWithRangeChecks) {
    gguf_bytes g = numbers_file();
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(*v->get_as<std::uint32_t>("n.u8"), 200u);
    EXPECT_EQ(*v->get_as<std::int64_t>("n.u8"), 200);
    EXPECT_EQ(*v->get_as<std::int8_t>("n.i32"), -5);
    EXPECT_EQ(*v->get_as<std::uint64_t>("n.u64"), 1ull << 40);
    EXPECT_EQ(*v->get_as<std::uint32_t>("qwen2.block_count"), 24u);
    // does not fit: value_out_of_range with the value and the type's maximum
    const error e = v->get_as<std::int8_t>("n.u8").error();
    EXPECT_TRUE(error_is(e, {.code = errc::value_out_of_range, .where = section::access, .expected = 127, .found = 200,
                             .subject = "n.u8"}));
    EXPECT_EQ(e.description(), "key 'n.u8' = 200 (as stored bits) does not fit the type asked for (at most 127)");
    EXPECT_EQ(v->get_as<std::uint32_t>("n.i32").error().code, errc::value_out_of_range);  // negative
    EXPECT_EQ(v->get_as<std::uint32_t>("n.u64").error().code, errc::value_out_of_range);
    // not an integer: type_mismatch, never a conversion of a float or a string
    EXPECT_EQ(v->get_as<std::int32_t>("n.f32").error().code, errc::type_mismatch);
    EXPECT_EQ(v->get_as<std::int32_t>("general.architecture").error().code, errc::type_mismatch);
    EXPECT_EQ(v->get_as<std::int32_t>("a.i32").error().code, errc::type_mismatch);
    EXPECT_EQ(v->get_as<std::int32_t>("absent").error().code, errc::key_not_found);
    // floats widen exactly
    EXPECT_EQ(*v->get_as<double>("n.f32"), 0.5);
    EXPECT_EQ(*v->get_as<float>("n.f32"), 0.5f);
}

TEST(GetOr, FallbackOnlyWhenAbsent) {
    gguf_bytes g = numbers_file();
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v);
    EXPECT_EQ(*v->get_or<std::uint32_t>("qwen2.context_length", 4096), 4096u);
    EXPECT_EQ(*v->get_or<std::uint32_t>("qwen2.block_count", 1), 24u);
    EXPECT_EQ(*v->get_or<std::string_view>("general.name", "unnamed"), "unnamed");
    EXPECT_EQ(*v->get_or<std::string_view>("general.architecture", "x"), "qwen2");
    // present with the wrong type, or out of range: still an error, not the fallback
    EXPECT_EQ(v->get_or<std::uint32_t>("general.architecture", 1).error().code, errc::type_mismatch);
    EXPECT_EQ(v->get_or<std::uint8_t>("n.u64", 1).error().code, errc::value_out_of_range);
}

TEST(CopyTo, BulkTypedCopyOfNumericArrays) {
    gguf_bytes g = numbers_file();
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v);
    const array_view u16 = *v->get<array_view>("a.u16");
    std::array<std::uint16_t, 3> same{};
    EXPECT_EQ(*u16.copy_to(std::span(same)), 3u);
    EXPECT_EQ(same, (std::array<std::uint16_t, 3>{1, 2, 60000}));
    std::vector<std::int64_t> wide(4, -9);
    EXPECT_EQ(*u16.copy_to(std::span(wide)), 3u);
    EXPECT_EQ(wide, (std::vector<std::int64_t>{1, 2, 60000, -9}));  // room past size() left alone
    std::array<std::int16_t, 3> narrow{};
    const error e = u16.copy_to(std::span(narrow)).error();
    EXPECT_EQ(e.code, errc::value_out_of_range);
    EXPECT_EQ(e.item, 2);
    std::array<std::uint16_t, 2> small{};
    EXPECT_TRUE(error_is(u16.copy_to(std::span(small)).error(),
                         {.code = errc::index_out_of_range, .where = section::access, .expected = 3, .found = 2}));
    std::array<std::uint32_t, 3> neg{};
    EXPECT_EQ(v->get<array_view>("a.i32")->copy_to(std::span(neg)).error().code, errc::value_out_of_range);
    std::array<double, 2> d{};
    EXPECT_EQ(*v->get<array_view>("a.f32")->copy_to(std::span(d)), 2u);
    EXPECT_EQ(d[1], -1.5);
    std::array<std::int32_t, 2> from_float{};
    EXPECT_EQ(v->get<array_view>("a.f32")->copy_to(std::span(from_float)).error().code, errc::type_mismatch);
}

TEST(WithPrefix, IteratesMatchingKeysInFileOrder) {
    gguf_bytes g = numbers_file();
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v);
    std::vector<std::string_view> keys;
    for (const kv& e : v->with_prefix("n.")) keys.push_back(e.key);
    EXPECT_EQ(keys, (std::vector<std::string_view>{"n.u8", "n.i32", "n.u64", "n.f32"}));
    keys.clear();
    for (const kv& e : v->with_prefix("a.")) keys.push_back(e.key);
    EXPECT_EQ(keys, (std::vector<std::string_view>{"a.u16", "a.i32", "a.f32"}));
    EXPECT_EQ(v->with_prefix("zzz").begin(), v->with_prefix("zzz").end());
    std::size_t all = 0;
    for ([[maybe_unused]] const kv& e : v->with_prefix("")) ++all;
    EXPECT_EQ(all, 9u);
}

TEST(ModelApi, PathAndForwardedGetters) {
    temp_dir dir;
    gguf_bytes g = numbers_file();
    write_file(dir / "m.gguf", g.span());
    auto m = model::open(dir / "m.gguf");
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->path(), dir / "m.gguf");
    EXPECT_EQ(*m->get_as<std::uint64_t>("qwen2.block_count"), 24u);
    EXPECT_EQ(*m->get_or<std::uint32_t>("absent", 3), 3u);
    std::size_t n = 0;
    for ([[maybe_unused]] const kv& e : m->with_prefix("a.")) ++n;
    EXPECT_EQ(n, 3u);
}

TEST(Limits, CallerCapsAreEnforcedWithTheirValues) {
    gguf_bytes g = numbers_file();
    limits caps;
    caps.max_array_elems = 2;
    EXPECT_TRUE(error_is(error_of(file_view::parse(g.span(), caps)),
                         {.code = errc::array_too_long, .where = section::metadata, .expected = 2, .found = 3}));
    caps = {};
    caps.max_string_bytes = 4;  // "n.u8" fits, "n.i32" (KV 1) is one byte too long
    EXPECT_TRUE(error_is(error_of(file_view::parse(g.span(), caps)),
                         {.code = errc::string_too_long, .where = section::metadata, .expected = 4, .found = 5, .index = 1}));
    caps = {};
    caps.max_kvs = 8;
    EXPECT_TRUE(error_is(error_of(file_view::parse(g.span(), caps)),
                         {.code = errc::count_too_large, .where = section::header, .expected = 8, .found = 9}));
    caps = {};
    caps.max_tensors = 0;
    EXPECT_TRUE(file_view::parse(g.span(), caps));  // no tensors: fine
    temp_dir dir;
    write_file(dir / "m.gguf", g.span());
    open_options o;
    o.caps.max_array_elems = 1;
    EXPECT_EQ(error_of(model::open(dir / "m.gguf", o)).code, errc::array_too_long);
    EXPECT_TRUE(file_view::parse(g.span()));  // the defaults accept it
}

}  // namespace

namespace {

TEST(StringIndex, ConstantTimeItemsEqualToTheWalk) {
    gguf_bytes g;
    g.header(3, 0, 2).kv_strings("toks", {"a", "", "bcd", "éé", ""}).kv_u8("n", 1);
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v) << v.error().message();
    const array_view a = *v->get<array_view>("toks");
    auto idx = string_index::build(a);
    ASSERT_TRUE(idx) << idx.error().message();
    ASSERT_EQ(idx->size(), 5u);
    std::uint64_t i = 0;
    for (std::string_view s : a.strings()) {
        EXPECT_EQ(*idx->at(i), s) << i;
        EXPECT_EQ(idx->at(i)->data(), s.data()) << "a view into the file, not a copy";
        ++i;
    }
    EXPECT_TRUE(error_is(idx->at(5).error(),
                         {.code = errc::index_out_of_range, .where = section::access, .expected = 5, .found = 5}));
    EXPECT_EQ(string_index::build(*v->get<array_view>("toks")).value().size(), 5u);
    gguf_bytes nums;
    nums.header(3, 0, 1).kv_array_of<std::uint8_t>("u", value_type::u8, {1, 2});
    auto nv = file_view::parse(nums.span());
    ASSERT_TRUE(nv);
    EXPECT_EQ(string_index::build(*nv->get<array_view>("u")).error().code, errc::type_mismatch);
}

TEST(StringIndex, NeverRereadsLengthsAfterTheBuild) {
    gguf_bytes g;
    g.header(3, 0, 1).kv_strings("toks", {"abc", "defg", "hi"});
    auto v = file_view::parse(g.span());
    ASSERT_TRUE(v);
    const array_view a = *v->get<array_view>("toks");
    auto idx = string_index::build(a);
    ASSERT_TRUE(idx);
    const std::size_t first_len_at = 24 + 8 + 4 + 4 + 4 + 8;  // header, key "toks", tag, element tag, count
    patch_u64(g.b, first_len_at, ~std::uint64_t{0});  // the file changes after the build
    EXPECT_EQ(*idx->at(0), "abc");
    EXPECT_EQ(*idx->at(1), "defg");
    EXPECT_EQ(*idx->at(2), "hi");
}

}  // namespace
