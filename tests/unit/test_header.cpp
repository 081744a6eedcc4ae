// Header checks: magic, the four fixed fields, the version screen and the two counts.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>

#include "alloc_probe.hpp"
#include "gguf_bytes.hpp"

using namespace minfer::gguf;
using namespace minfer::test;

namespace {

gguf_bytes header(std::uint32_t version, std::int64_t n_tensors = 0, std::int64_t n_kv = 0) {
    gguf_bytes g;
    g.header(version, n_tensors, n_kv);
    return g;
}

TEST(Header, MinimalV3FileLoads) {
    const auto g = header(3);
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->version(), 3u);
    EXPECT_EQ(r->alignment(), 32u);
    EXPECT_EQ(r->data_offset(), 24u);  // no tensors: the data section starts right after the header
    EXPECT_EQ(r->data_size(), 0u);
    EXPECT_TRUE(r->metadata().empty());
    EXPECT_TRUE(r->tensors().empty());
}

TEST(Header, V2Loads) {
    gguf_bytes g;
    g.header(2, 0, 1).kv_str("general.architecture", "llama");
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->version(), 2u);
    EXPECT_EQ(r->get<std::string_view>("general.architecture").value_or(""), "llama");
}

TEST(Header, BadMagicReportsTheBytes) {
    gguf_bytes g;
    g.raw("GGML").u32(3).i64(0).i64(0);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::bad_magic, .where = section::header, .offset = 0,
                             .expected = 0x46554747u, .found = 0x4C4D4747u}));
    EXPECT_EQ(e.description(), "invalid magic characters: 'GGML', expected 'GGUF'");
}

TEST(Header, BadMagicEscapesNonPrintables) {
    gguf_bytes g;
    g.u8(0x7F).raw("EL").u8(0x00).zeros(20);  // an ELF-ish binary with a NUL
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::bad_magic, .where = section::header, .offset = 0, .found = 0x004C457Fu}));
    EXPECT_EQ(e.description(), "invalid magic characters: '\\x7FEL\\x00', expected 'GGUF'");
    EXPECT_EQ(e.message().find('\0'), std::string::npos);
}

TEST(Header, HtmlPageSavedAsGguf) {
    gguf_bytes g;
    g.raw("<!DOCTYPE html><html><body>Not Found</body></html>\n");
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::bad_magic, .where = section::header, .offset = 0}));
    EXPECT_EQ(e.description(), "invalid magic characters: '<!DO', expected 'GGUF'");
}

TEST(Header, EmptyFile) {
    const error e = parse_error(std::span<const std::byte>{});
    EXPECT_TRUE(error_is(e, {.code = errc::truncated, .where = section::header, .offset = 0, .expected = 4,
                             .found = 0, .detail = "magic"}));
}

// Every length 0..23 is refused as truncated, naming the field the file ends in.
TEST(Header, EveryShortLengthNamesTheField) {
    const auto full = header(3).b;
    ASSERT_EQ(full.size(), 24u);
    struct field {
        const char* name;
        std::uint64_t at, size;
    };
    const field fields[] = {{"magic", 0, 4}, {"version", 4, 4}, {"n_tensors", 8, 8}, {"n_kv", 16, 8}};
    for (std::size_t n = 0; n < full.size(); ++n) {
        SCOPED_TRACE("length " + std::to_string(n));
        const bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        const field* f = nullptr;
        for (const field& x : fields)
            if (n >= x.at && n < x.at + x.size) f = &x;
        ASSERT_NE(f, nullptr);
        const error e = parse_error(cut);
        EXPECT_TRUE(error_is(e, {.code = errc::truncated, .where = section::header, .offset = f->at,
                                 .expected = f->size, .found = n - f->at, .detail = f->name}));
    }
}

TEST(Header, TruncatedMessageNamesField) {
    const auto g = header(3).truncate(12);
    const error e = parse_error(g);
    EXPECT_EQ(e.message(), "header at byte 8: file ends while reading n_tensors: needs 8 bytes, 4 left [truncated]");
}

TEST(Header, Version0IsBad) {
    const error e = parse_error(header(0));
    EXPECT_TRUE(error_is(e, {.code = errc::bad_version, .where = section::header, .offset = 4, .found = 0}));
    EXPECT_EQ(e.description(), "bad GGUF version: 0");
}

TEST(Header, ByteSwappedVersion) {
    const error e = parse_error(header(0x03000000u));
    EXPECT_TRUE(error_is(e, {.code = errc::byte_swapped, .where = section::header, .offset = 4, .expected = 3,
                             .found = 0x03000000u}));
    EXPECT_NE(e.description().find("is there a mismatch between the host and model endianness?"), std::string::npos);
    EXPECT_NE(e.description().find("50331648"), std::string::npos);
    // Any version whose low 16 bits are zero is the byte-swapped pattern.
    EXPECT_EQ(parse_error(header(0x00010000u)).code, errc::byte_swapped);
    EXPECT_EQ(parse_error(header(0x02000000u)).code, errc::byte_swapped);
}

TEST(Header, Version1IsUnsupported) {
    const error e = parse_error(header(1));
    EXPECT_TRUE(error_is(e, {.code = errc::version_unsupported, .where = section::header, .offset = 4, .found = 1}));
    EXPECT_EQ(e.description(), "GGUFv1 is no longer supported, please use a more up-to-date version");
}

TEST(Header, Version4IsTooNew) {
    const error e = parse_error(header(4));
    EXPECT_TRUE(error_is(e, {.code = errc::version_too_new, .where = section::header, .offset = 4, .expected = 3,
                             .found = 4}));
    EXPECT_EQ(e.description(), "this GGUF file is version 4 but this software only supports up to version 3");
    EXPECT_EQ(parse_error(header(0xFFFFFFFFu)).code, errc::version_too_new);
    EXPECT_EQ(parse_error(header(0x0001FFFFu)).code, errc::version_too_new);
}

TEST(Header, VersionCheckedBeforeCounts) {
    // A v4 header with an absurd count still reports the version.
    EXPECT_EQ(parse_error(header(4, -1, -1)).code, errc::version_too_new);
}

TEST(Header, NegativeTensorCount) {
    const error e = parse_error(header(3, -1, 0));
    EXPECT_TRUE(error_is(e, {.code = errc::negative_count, .where = section::header, .offset = 8,
                             .found = static_cast<std::uint64_t>(-1), .subject = "n_tensors"}));
    EXPECT_EQ(e.description(), "n_tensors is negative: -1");
    const error m = parse_error(header(3, std::numeric_limits<std::int64_t>::min(), 0));
    EXPECT_TRUE(error_is(m, {.code = errc::negative_count, .where = section::header, .offset = 8,
                             .found = 0x8000000000000000ull, .subject = "n_tensors"}));
}

TEST(Header, NegativeKvCount) {
    const error e = parse_error(header(3, 0, -5));
    EXPECT_TRUE(error_is(e, {.code = errc::negative_count, .where = section::header, .offset = 16,
                             .found = static_cast<std::uint64_t>(-5), .subject = "n_kv"}));
    EXPECT_EQ(e.description(), "n_kv is negative: -5");
}

// Counts no file of this size could hold fail at once, before anything is reserved.
TEST(Header, HugeCountsFailFastWithoutAllocating) {
    const std::int64_t huge[] = {std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max(), std::int64_t{1} << 32,
                                 1};
    for (std::int64_t n : huge) {
        SCOPED_TRACE(n);
        const auto kv = header(3, 0, n);
        const auto t = header(3, n, 0);
        alloc_probe probe;
        const auto start = std::chrono::steady_clock::now();
        const error ek = parse_error(kv);
        const error et = parse_error(t);
        const auto elapsed = std::chrono::steady_clock::now() - start;
        EXPECT_TRUE(error_is(ek, {.code = errc::count_too_large, .where = section::header, .offset = 16,
                                  .expected = 0, .found = static_cast<std::uint64_t>(n), .subject = "n_kv"}));
        EXPECT_TRUE(error_is(et, {.code = errc::count_too_large, .where = section::header, .offset = 8,
                                  .expected = 0, .found = static_cast<std::uint64_t>(n), .subject = "n_tensors"}));
        EXPECT_LT(probe.largest(), 4096u);
        EXPECT_LT(elapsed, std::chrono::seconds(1));
    }
}

TEST(Header, AllocProbeSeesTheParsersAllocations) {
    // positive control for the probe: a valid file with 1000 KVs reserves room for 1000 records
    gguf_bytes g;
    g.header(3, 0, 1000);
    for (int i = 0; i < 1000; ++i) {  // appended: GCC 12 -O3 reports a false -Wrestrict on `"k" + std::string`
        std::string key(1, 'k');
        key += std::to_string(i);
        g.kv_u8(key, 1);
    }
    alloc_probe probe;
    auto r = file_view::parse(g.span());
    ASSERT_TRUE(r);
    EXPECT_GE(probe.largest(), 1000 * sizeof(kv));
}

// The count bound is relative to the file size, so in a large file a hostile count still allows
// millions of records; it must not size an allocation (only records actually read may).
TEST(Header, LargeFileWithAHostileCountDoesNotAmplify) {
    bytes b(32u << 20);  // 32 MiB of zeros after the header: room for 2.4 M minimal KVs
    const gguf_bytes kv = header(3, 0, static_cast<std::int64_t>((b.size() - 24) / 14));
    std::copy(kv.b.begin(), kv.b.end(), b.begin());
    {
        alloc_probe probe;
        EXPECT_TRUE(error_is(parse_error(b), {.code = errc::empty_key, .where = section::metadata, .offset = 24}));
        EXPECT_LT(probe.largest(), 1u << 20);
        EXPECT_LT(probe.total(), 2u << 20);
    }
    const gguf_bytes t = header(3, static_cast<std::int64_t>((b.size() - 24) / 25), 0);
    std::copy(t.b.begin(), t.b.end(), b.begin());
    {
        alloc_probe probe;
        EXPECT_TRUE(error_is(parse_error(b), {.code = errc::bad_name_length, .where = section::tensor_info,
                                             .offset = 24, .found = 0}));
        EXPECT_LT(probe.largest(), 1u << 20);
        EXPECT_LT(probe.total(), 2u << 20);
    }
}

TEST(Header, CountsBoundedByRemainingBytes) {
    // A KV record needs at least 14 bytes (8 length + 1 key byte + 4 type + 1 value byte).
    auto g = header(3, 0, 3);
    g.zeros(14 * 3 - 1);  // 41 bytes: room for at most 2
    EXPECT_TRUE(error_is(parse_error(g), {.code = errc::count_too_large, .where = section::header, .offset = 16,
                                          .expected = 2, .found = 3, .subject = "n_kv"}));
    // A tensor record needs at least 25 bytes; the KVs' minimum is taken off first.
    auto t = header(3, 2, 1);
    t.zeros(14 + 25 * 2 - 1);
    EXPECT_TRUE(error_is(parse_error(t), {.code = errc::count_too_large, .where = section::header, .offset = 8,
                                          .expected = 1, .found = 2, .subject = "n_tensors"}));
    EXPECT_EQ(parse_error(t).description(), "n_tensors = 2 is more than the rest of the file can hold (at most 1)");
}

TEST(Header, CountsThatFitGoOnToTheRecords) {
    // Exactly enough bytes for the count bound: the parse proceeds and fails inside the first KV.
    auto g = header(3, 0, 1);
    g.zeros(14);
    const error e = parse_error(g);
    EXPECT_TRUE(error_is(e, {.code = errc::empty_key, .where = section::metadata, .offset = 24, .index = 0}));
}

TEST(Header, ParseOfAnEmbeddedSpan) {
    // The view works on any span, e.g. a GGUF embedded at an odd offset of a larger buffer.
    gguf_bytes g;
    g.raw("xyz").header(3, 0, 1).kv_u32("a", 7);
    const std::span<const std::byte> inner = g.span().subspan(3);
    auto r = file_view::parse(inner);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->get<std::uint32_t>("a").value_or(0), 7u);
    EXPECT_EQ(r->metadata()[0].offset, 24u);  // offsets are relative to the span
}

}  // namespace
