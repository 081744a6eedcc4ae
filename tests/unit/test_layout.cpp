// Data layout: where the data section starts, the running padded sum of offsets, overflow of that
// sum, and whether the file holds the data.
#include <gtest/gtest.h>

#include <limits>

#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

constexpr std::uint64_t pad(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }
// Absolute offset of the `offset` field of a 1-dimensional tensor record starting at `rec`.
constexpr std::uint64_t offset_field(std::uint64_t rec, std::size_t name_len) { return rec + 8 + name_len + 4 + 8 + 4; }
constexpr std::uint64_t rec1_size(std::size_t name_len) { return 8 + name_len + 4 + 8 + 4 + 8; }

TEST(Layout, DataStartsAtThePaddedEndOfTheTable) {
    gguf_bytes g;
    g.header(3, 2, 1).kv_str("general.name", "odd");
    g.tensor_info("a", {3}, tensor_type::f32, 0).tensor_info("b", {5}, tensor_type::f32, 32);
    const std::uint64_t end_of_table = g.size();
    ASSERT_NE(end_of_table % 32, 0u);
    g.pad(32);
    const std::uint64_t data = g.size();
    const bytes a = random_bytes(12, 1), b = random_bytes(20, 2);
    g.raw(a).zeros(20).raw(b).zeros(12);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->data_offset(), data);
    EXPECT_EQ(r->data_offset(), pad(end_of_table, 32));
    EXPECT_EQ(r->data_size(), 64u);
    const auto da = r->tensor_data(r->tensors()[0]);
    const auto db = r->tensor_data(r->tensors()[1]);
    EXPECT_EQ(da.data(), g.b.data() + data);
    EXPECT_EQ(db.data(), g.b.data() + data + 32);
    EXPECT_TRUE(std::equal(da.begin(), da.end(), a.begin(), a.end()));
    EXPECT_TRUE(std::equal(db.begin(), db.end(), b.begin(), b.end()));
    EXPECT_EQ(r->tensors()[1].info_offset, 24 + 8 + 12 + 4 + 8 + 3 + rec1_size(1));
}

TEST(Layout, FirstOffsetNotZero) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {16}, tensor_type::f32, 64).pad(32).zeros(128);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::offset_mismatch, .where = section::tensor_info,
                             .offset = offset_field(24, 1), .expected = 0, .found = 64, .subject = "w", .index = 0}));
    EXPECT_EQ(e.message(), "tensor_info at byte 49: tensor 'w' has offset 64, expected 0 [offset_mismatch]");
}

TEST(Layout, GapBetweenTensors) {
    gguf_bytes g;
    g.header(3, 2, 0).tensor_info("a", {8}, tensor_type::f32, 0).tensor_info("b", {8}, tensor_type::f32, 64);
    g.pad(32).zeros(128);
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::offset_mismatch, .where = section::tensor_info,
                                          .offset = offset_field(24 + rec1_size(1), 1), .expected = 32, .found = 64,
                                          .subject = "b", .index = 1}));
}

TEST(Layout, OverlappingTensors) {
    gguf_bytes g;
    g.header(3, 2, 0).tensor_info("a", {8}, tensor_type::f32, 0).tensor_info("b", {8}, tensor_type::f32, 16);
    g.pad(32).zeros(128);
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::offset_mismatch, .where = section::tensor_info,
                                          .expected = 32, .found = 16, .subject = "b", .index = 1}));
    // the same offset twice
    gguf_bytes h;
    h.header(3, 2, 0).tensor_info("a", {8}, tensor_type::f32, 0).tensor_info("b", {8}, tensor_type::f32, 0);
    h.pad(32).zeros(128);
    EXPECT_TRUE(error_is(parse_error(h), {.code = errc::offset_mismatch, .where = section::tensor_info,
                                          .expected = 32, .found = 0, .subject = "b"}));
}

TEST(Layout, UnpaddedOffsetIsAMismatch) {
    // 12 bytes of f32 must be padded to 32 before the next tensor
    gguf_bytes g;
    g.header(3, 2, 0).tensor_info("a", {3}, tensor_type::f32, 0).tensor_info("b", {3}, tensor_type::f32, 12);
    g.pad(32).zeros(64);
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::offset_mismatch, .where = section::tensor_info,
                                          .expected = 32, .found = 12, .subject = "b"}));
}

TEST(Layout, PaddingFollowsTheFilesAlignment) {
    gguf_bytes g;
    g.header(3, 2, 1).kv_u32("general.alignment", 8).tensor_info("a", {3}, tensor_type::f32, 0).tensor_info(
        "b", {3}, tensor_type::f32, 16);
    g.pad(8).zeros(28);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->data_size(), 32u);
    EXPECT_EQ(r->tensors()[1].offset, 16u);
}

TEST(Layout, ZeroSizedTensorsTakeNoSpace) {
    gguf_bytes g;
    g.header(3, 3, 0)
        .tensor_info("empty", {0}, tensor_type::f32, 0)
        .tensor_info("also", {32, 0}, tensor_type::q4_0, 0)
        .tensor_info("w", {2}, tensor_type::f32, 0);
    g.pad(32).zeros(8);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->tensors()[0].n_bytes, 0u);
    EXPECT_EQ(r->tensors()[1].n_elements, 0u);
    EXPECT_EQ(r->tensor_data(r->tensors()[0]).size(), 0u);
    EXPECT_EQ(r->data_size(), 32u);
}

TEST(Layout, PaddedSumOverflow) {
    // two i8 tensors of INT64_MAX bytes: the second sits at 2^63, and 2^63 + pad(2^63 - 1) wraps
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    gguf_bytes g;
    g.header(3, 2, 0).tensor_info("a", {max}, tensor_type::i8, 0).tensor_info("b", {max}, tensor_type::i8, 1ull << 63);
    g.pad(32);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::data_size_overflow, .where = section::tensor_info,
                             .offset = offset_field(24 + rec1_size(1), 1), .expected = 1ull << 63,
                             .found = static_cast<std::uint64_t>(max), .subject = "b", .index = 1}));
    EXPECT_EQ(e.description(),
              "tensor 'b' size overflow, cannot accumulate size 9223372036854775808 + 9223372036854775807");
}

TEST(Layout, PaddingOneTensorOverflows) {
    // 2^62 - 1 f32 elements = 2^64 - 4 bytes: padding that to 32 does not fit in 64 bits
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {(1ll << 62) - 1}, tensor_type::f32, 0).pad(32);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::data_size_overflow, .where = section::tensor_info,
                             .offset = offset_field(24, 1), .expected = 0, .found = ~0ull - 3, .subject = "w"}));
}

TEST(Layout, HugeAlignmentPadding) {
    // alignment 2^31 with a 2^63-byte tensor: the padded sum of two of them wraps
    gguf_bytes g;
    g.header(3, 2, 1)
        .kv_u32("general.alignment", 1u << 31)
        .tensor_info("a", {1ll << 61}, tensor_type::f32, 0)
        .tensor_info("b", {1ll << 61}, tensor_type::f32, 1ull << 63);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::data_size_overflow, .where = section::tensor_info, .subject = "b"}));
}

TEST(Layout, DataTruncated) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {64}, tensor_type::f32, 0).pad(32);
    const std::uint64_t data = g.size();
    g.zeros(100);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::data_truncated, .where = section::data, .offset = data,
                             .expected = data + 256, .found = data + 100, .subject = "w", .index = 0}));
    EXPECT_EQ(e.description(),
              "tensor 'w' needs the file to hold " + std::to_string(data + 256) + " bytes, but it has " +
                  std::to_string(data + 100) + ": 156 bytes missing (truncated download?)");
}

TEST(Layout, DataTruncatedNamesTheFirstTensorThatDoesNotFit) {
    gguf_bytes g;
    g.header(3, 3, 0)
        .tensor_info("a", {8}, tensor_type::f32, 0)
        .tensor_info("b", {8}, tensor_type::f32, 32)
        .tensor_info("c", {8}, tensor_type::f32, 64);
    g.pad(32);
    const std::uint64_t data = g.size();
    g.zeros(40);  // a fits, b does not
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::data_truncated, .where = section::data, .offset = data + 32,
                                          .expected = data + 96, .found = data + 40, .subject = "b", .index = 1}));
}

TEST(Layout, DataStartPastEndOfFile) {
    // the table ends at an unaligned byte and the file ends with it: not even the padding is there
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {4}, tensor_type::f32, 0);
    const std::uint64_t size = g.size();
    ASSERT_NE(size % 32, 0u);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::data_truncated, .where = section::data, .offset = size,
                             .expected = pad(size, 32) + 16, .found = size, .subject = "w"}));
    // even a tensor of zero bytes needs the data section to start inside the file
    gguf_bytes z;
    z.header(3, 1, 0).tensor_info("z", {0}, tensor_type::f32, 0);
    EXPECT_TRUE(error_is(parse_error(z), {.code = errc::data_truncated, .where = section::data, .found = z.size(),
                                          .subject = "z"}));
}

TEST(Layout, TensorlessFileMayEndRightAfterItsTable) {
    for (std::uint32_t a : {32u, 4096u}) {
        gguf_bytes g;
        g.header(3, 0, 2).kv_u32("general.alignment", a).kv_str("general.name", "x");
        ASSERT_NE(g.size() % a, 0u);
        auto r = file_view::parse(g.span());
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(r->data_offset(), g.size());
        EXPECT_EQ(r->data_size(), 0u);
        // and trailing padding (or any trailing bytes) is fine too
        g.pad(a);
        EXPECT_TRUE(file_view::parse(g.span()));
    }
}

TEST(Layout, LastTensorWithoutTrailingPadding) {
    gguf_bytes g;
    g.header(3, 2, 0).tensor_info("a", {3}, tensor_type::f32, 0).tensor_info("b", {3}, tensor_type::f32, 32);
    g.pad(32);
    const std::uint64_t data = g.size();
    g.zeros(32 + 12);  // b's 12 bytes and no padding after them
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->data_offset(), data);
    EXPECT_EQ(r->data_size(), 64u);  // the padded size, even though the file stops at 44
    EXPECT_EQ(r->tensor_data(r->tensors()[1]).size(), 12u);
    EXPECT_EQ(r->tensor_data(r->tensors()[1]).data() + 12, g.b.data() + g.b.size());
    // one byte less and b no longer fits
    g.truncate(g.size() - 1);
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::data_truncated, .where = section::data, .subject = "b"}));
}

TEST(Layout, TrailingBytesAfterTheDataAreIgnored) {
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("a", {8}, tensor_type::f32, 0).pad(32).zeros(32).raw("trailing junk");
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->data_size(), 32u);
}

TEST(Layout, OffsetsCheckedBeforeTheFileSize) {
    // a mismatch is reported even when the data would not fit either
    gguf_bytes g;
    g.header(3, 1, 0).tensor_info("w", {8}, tensor_type::f32, 32);
    EXPECT_EQ(parse_error(g).code, errc::offset_mismatch);
}

}  // namespace
